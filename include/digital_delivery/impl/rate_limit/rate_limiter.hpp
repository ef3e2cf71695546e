//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_INTERNAL_RATE_LIMITER_HPP
#define DIGITAL_DELIVERY_IMPL_INTERNAL_RATE_LIMITER_HPP

/// \file
/// Implementation detail (configured through client_params::rate_limit,
/// observed through client::rate_limit()).
///
/// Client-side rate limiting: a token bucket per (base URL, API key), shared
/// by every client of that key in the process, with an asynchronous FIFO
/// scheduler (three priority classes, aging, deadlines, cancellation) and a
/// pause on 429. Model and settings: docs/rate-limiting.md.
///
/// \par Wiring (one request operation)
/// \code
/// // once per client:
/// auto limiter = shared_rate_limiter(ex, params.base_url, params.api_key, params.rate_limit);
/// auto budget  = std::make_shared<retry_budget>(params.retry);
/// // per request:
/// retry_state rs(retry, budget, clock::now(), deadline);
/// for (;;) {
///     auto t0 = clock::now();
///     co_await limiter->async_acquire(endpoint.cost, prio, deadline, as_tuple(deferred)); // ec: rate_limit_wait_exceeds_deadline / operation_aborted
///     rs.add_rate_limit_wait(clock::now() - t0);
///     rs.on_attempt_start(clock::now());
///     auto [ec, resp] = co_await transport.async_send(req, ...);
///     auto facts = read_response_facts(resp.headers, resp.status, system_clock::now());  // once
///     if (!ec) limiter->observe_response(facts);   // every response, 429 included
///     if (ec && is_request_not_sent(ec)) limiter->refund(endpoint.cost);  // optional: points not spent on the server
///     if (success) break;
///     auto d = rs.on_failure({ec_or_api_error, resp.status, facts.retry_after}, endpoint.idempotent, clock::now());
///     if (!d.retry) { /* rs.stats() into the diagnostics */ fail(d.final_error); }
///     co_await steady_timer(ex, d.delay).async_wait(...);  // then loop: the acquire also honours a 429 pause
/// }
/// \endcode
///
/// \par Thread safety
/// A rate_limiter may be used from any thread; the shared bucket is protected
/// by a mutex. Completions run on each handler's associated executor (the
/// limiter's executor when none), never inline from async_acquire().

#include <digital_delivery/detail/clock.hpp>
#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/impl/http/sansio/response_facts.hpp>
#include <digital_delivery/impl/rate_limit/sansio/scheduler_core.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/http_message.hpp>
#include <digital_delivery/observer.hpp>
#include <digital_delivery/rate_limit.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/deferred.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace digital_delivery {



namespace detail {

struct limiter_state;
struct limiter_driver;

/// A handle on one (shared) rate-limit bucket and its scheduler.
/// What a bucket keeps of the rate_limit_params it was made with: all but the
/// store (the bucket keeps its session of it) and the throttle hook (kept
/// apart, replaceable), so that a bucket per API key stays small (many
/// clients of distinct keys in one process).
struct limiter_settings
{
    explicit limiter_settings(const rate_limit_params& p) noexcept
        : capacity(p.capacity), window(p.window), max_retry_after(p.max_retry_after),
          aging_interval(p.aging_interval), fallback_share(p.fallback_share),
          store_retry_interval(p.store_retry_interval), enabled(p.enabled),
          follow_server_headers(p.follow_server_headers), hold_refill_until_response(p.hold_refill_until_response),
          probe_first(p.probe_first), background_share(p.background_share)
    {
    }

    double capacity;
    std::chrono::duration<double> window;
    std::chrono::milliseconds max_retry_after;
    std::chrono::milliseconds aging_interval;
    double fallback_share;
    std::chrono::milliseconds store_retry_interval;
    bool enabled;
    bool follow_server_headers;
    bool hold_refill_until_response;
    bool probe_first;
    double background_share;
};

class rate_limiter
{
public:
    using executor_type = boost::asio::any_io_executor;
    using clock = detail::clock;
    /// A clock for tests (virtual time); empty: steady_clock::now.
    using clock_fn = std::function<clock::time_point()>;
    using completion_signature = void(error_code);

    /// A private bucket (not in the process-wide registry; always in-process,
    /// whatever params.store says). The executor runs this handle's timer and
    /// completes waiters without an associated executor.
    DIGITAL_DELIVERY_DECL explicit rate_limiter(executor_type ex, const rate_limit_params& params = {}, clock_fn now = {});
    DIGITAL_DELIVERY_DECL ~rate_limiter();
    rate_limiter(const rate_limiter&) = delete;
    rate_limiter& operator=(const rate_limiter&) = delete;

    executor_type get_executor() const noexcept { return ex_; }

    /// Waits for `cost` points.
    ///
    /// Completes with:
    ///  - success: the points are taken, send the request now;
    ///  - client_errc::rate_limit_wait_exceeds_deadline: the earliest possible
    ///    grant is after `deadline` (decided at once, or as soon as a 429 pause,
    ///    a server header or a higher-priority request makes it so);
    ///  - boost::asio::error::operation_aborted: cancelled.
    ///
    /// Never completes inline. Requests of one priority class proceed in
    /// order; `interactive` before `normal` before `background`, with aging.
    ///
    /// \par Per-operation cancellation
    /// terminal, partial and total: the waiter leaves the queue (releasing its
    /// reservation, so requests behind it move earlier) and completes with
    /// operation_aborted. A request already granted is not affected.
    ///
    /// \par Object lifetimes
    /// `*this` must be alive when the operation is initiated (for deferred
    /// tokens: when it is launched); after that the operation keeps what it needs.
    template <class Token = boost::asio::deferred_t>
    auto async_acquire(int cost, priority prio, std::optional<clock::time_point> deadline, Token&& token = {})
    {
        return boost::asio::async_initiate<Token, completion_signature>(
            initiation{this},
            token,
            cost,
            prio,
            deadline
        );
    }

    /// Takes `cost` points now if they can be granted at once (nothing
    /// queued ahead, no 429 pause, points available; always with the limiter
    /// disabled); else changes nothing and returns false (then async_acquire
    /// queues). Lets a caller that is already inside an asynchronous
    /// operation go on without a round trip through the executor.
    DIGITAL_DELIVERY_DECL bool try_acquire(int cost, priority prio);

    /// Feeds a response's headers back (every response, 429 included; a
    /// status of 0 says the attempt ended without one: a probe's turn then
    /// passes to the next waiter, see rate_limit_params::probe_first).
    /// X-RateLimit-Remaining/Limit lower the local estimate (never raise it: a
    /// stale or reordered header cannot add points). A 429 empties the bucket
    /// and, with Retry-After (seconds, fractional, or HTTP-date), pauses every
    /// waiter of this key until then (capped by max_retry_after).
    /// Takes the response's facts, read once (read_response_facts): the
    /// request pipeline and the upload hand the same value to the retry
    /// decision and the diagnostics.
    DIGITAL_DELIVERY_DECL void observe_response(const detail::response_facts& facts);

    /// Same at `now` of the limiter's clock (tests).
    DIGITAL_DELIVERY_DECL void observe_response(const detail::response_facts& facts, clock::time_point now);

    /// Reads the headers (read_response_facts at `sys_now`), then as above (tests).
    DIGITAL_DELIVERY_DECL void observe_response(
        const http_headers& headers,
        unsigned status,
        clock::time_point now,
        std::chrono::system_clock::time_point sys_now
    );

    /// Gives back the points of a request that provably never reached the server.
    DIGITAL_DELIVERY_DECL void refund(int cost);

    /// A request the server refused unprocessed (a 429; observe_response
    /// pauses the bucket): while a shared store's fallback serves, the
    /// fallback does not report its `cost` as debt (the server charged
    /// nothing; the resent request is counted when granted again).
    DIGITAL_DELIVERY_DECL void not_charged(int cost);

    /// The current limit, remaining points and reset time; source `header` when
    /// the server's figures set the estimate and nothing was granted since,
    /// else `estimate`.
    DIGITAL_DELIVERY_DECL rate_limit_snapshot snapshot() const;

    /// Called (outside any lock, on the thread that noticed it) when a 429
    /// pauses the scheduler or a pause ends. One hook per bucket: setting it
    /// on any handle of a shared bucket replaces it for all.
    DIGITAL_DELIVERY_DECL void set_throttle_hook(std::function<void(const throttle_event&)> hook);

    /// Also reports throttle events to `o` (observer::on_throttle) while it
    /// lives: every client with an observer adds its own to its bucket. An
    /// observer added while the fallback bucket serves hears a
    /// store_unavailable at once.
    DIGITAL_DELIVERY_DECL void add_throttle_observer(std::weak_ptr<observer> o);

    /// Re-evaluates the queue at the clock's current time (tests with a
    /// virtual clock; never needed with the default clock).
    DIGITAL_DELIVERY_DECL void wake();

    /// Requests waiting, and the points they reserved.
    DIGITAL_DELIVERY_DECL std::size_t waiting() const;
    DIGITAL_DELIVERY_DECL double reserved() const;

    /// The parameters of the bucket (the first creator's for a shared bucket).
    DIGITAL_DELIVERY_DECL const limiter_settings& params() const noexcept;

    /// Internal: a handle on an existing bucket (used by shared_rate_limiter).
    DIGITAL_DELIVERY_DECL rate_limiter(executor_type ex, std::shared_ptr<detail::limiter_state> st);

private:
    struct initiation
    {
        rate_limiter* self;
        template <class Handler>
        void operator()(Handler&& h, int cost, priority prio, std::optional<clock::time_point> deadline) const
        {
            self->acquire_impl(
                cost,
                prio,
                deadline,
                boost::asio::any_completion_handler<completion_signature>(std::forward<Handler>(h))
            );
        }
    };

    DIGITAL_DELIVERY_DECL void acquire_impl(
        int cost,
        priority prio,
        std::optional<clock::time_point> deadline,
        boost::asio::any_completion_handler<completion_signature> handler
    );

    executor_type ex_;
    std::shared_ptr<detail::limiter_state> state_;
    std::shared_ptr<detail::limiter_driver> driver_;
};

/// The process-wide limiter for (base_url, api_key): every call with the same
/// pair returns a handle on the same bucket, so all clients of one key share
/// its 40 points. The registry is keyed by the base URL and a salted hash of
/// the key (the key itself is never stored). The first call's params are
/// used; later calls' params are ignored. The bucket lives as long as a handle
/// does, and removes its registry entry when it dies (construction is O(1)).
/// With a shared params.store (shm_rate_limit_store, redis_rate_limit_store)
/// the bucket takes its points through the store's session of the pair
/// (store_session.hpp; a Redis store's I/O runs on `ex`), or from a fallback
/// bucket while that store cannot be used. Each handle's timer runs on `ex`.
DIGITAL_DELIVERY_DECL std::shared_ptr<rate_limiter> shared_rate_limiter(
    rate_limiter::executor_type ex,
    std::string_view base_url,
    std::string_view api_key,
    const rate_limit_params& params = {}
);

/// A bucket of its own for (base_url, api_key), outside the registry, with
/// params.store attached like shared_rate_limiter's: tests and benchmarks
/// standing for several hosts in one process.
DIGITAL_DELIVERY_DECL std::shared_ptr<rate_limiter> unshared_rate_limiter(
    rate_limiter::executor_type ex,
    std::string_view base_url,
    std::string_view api_key,
    const rate_limit_params& params
);

/// Entries in the process-wide registry (one per live shared bucket: a
/// bucket removes its entry when its last handle goes away). Tests.
DIGITAL_DELIVERY_DECL std::size_t limiter_registry_size();

/// The base URL with scheme and host lower-cased and trailing '/' removed.
DIGITAL_DELIVERY_DECL std::string normalise_base_url(std::string_view base_url);

/// The registry key for (base_url, api_key): 128 bits of a hash, salted per
/// process, of the base URL (scheme and host lower-cased, trailing '/'
/// removed) and the key. Fixed size, so that a bucket and its registry entry
/// hold no string; the key cannot be read back from it.
struct registry_key
{
    std::uint64_t a = 0, b = 0;
    bool operator==(const registry_key&) const = default;
};
DIGITAL_DELIVERY_DECL registry_key rate_limiter_registry_key(std::string_view base_url, std::string_view api_key);

}  // namespace detail
}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/rate_limit/rate_limiter.ipp>
#endif

#endif
