//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_ENGINE_SANSIO_REQUEST_CORE_HPP
#define DIGITAL_DELIVERY_IMPL_ENGINE_SANSIO_REQUEST_CORE_HPP

// The request pipeline without I/O: one request's rules (the deadline, the
// time limit of each attempt, the rate-limit points and their refund, retry
// or give up, what diagnostics record) in a plain class that takes events
// and answers with the next action. The async_compose driver
// (impl/engine/client_impl.ipp, execute_op) performs the actions with the
// limiter, the transport and a timer, and feeds their results back; the
// tests (tests/core/request_core_test.cpp) feed events by hand with a virtual
// time point.

#include <digital_delivery/detail/clock.hpp>
#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/detail/saturating_time.hpp>
#include <digital_delivery/diagnostics.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/impl/http/sansio/response_facts.hpp>
#include <digital_delivery/impl/retry/retry_state.hpp>
#include <digital_delivery/rate_limit.hpp>
#include <digital_delivery/retry.hpp>

#include <chrono>
#include <memory>
#include <optional>

namespace digital_delivery {
namespace detail {

/// What one request brings to its core (copied where kept).
struct request_setup
{
    /// The retry policy: the request's override, else the client's (copied
    /// by started(); until then it must live).
    const retry_params* retry = nullptr;
    /// The client's retry budget (may be null: no budget).
    std::shared_ptr<retry_budget> budget;
    int cost = 1;                                   ///< Rate-limit points of each attempt.
    priority prio = priority::normal;               ///< Their priority.
    bool idempotent = false;                        ///< Whether a possibly-sent attempt may be resent.
    /// A DELETE of the path's resource: a 404 (the API's own, naming the
    /// resource) answering a retry after an attempt that may have been
    /// processed completes as success, said in the diagnostics.
    bool gone_means_done = false;
    std::optional<clock::time_point> deadline;      ///< request_options::deadline.
    /// client_params::operation_timeout: the deadline when none was given (0: none).
    std::chrono::milliseconds operation_timeout{0};
    /// The configured time limit of one attempt (request_options::timeout,
    /// else client_params::request_timeout; 0: default_request_timeout).
    std::chrono::milliseconds timeout{0};
    /// Set when the request was refused before sending (invalid argument).
    error_code rejected;
    /// Jitter draws for the retry delays (empty: a per-thread generator).
    retry_state::jitter_fn jitter;
};

/// What the limiter is told before the action proper.
enum class limiter_step : unsigned char
{
    none,
    observe_response,  ///< rate_limiter::observe_response(facts): a response arrived.
    attempt_over,      ///< rate_limiter::observe_response({}): no response, the attempt is over.
    refund,            ///< rate_limiter::refund(cost): the attempt provably never reached the server.
};

/// The next thing the driver does.
struct request_action
{
    enum class kind : unsigned char
    {
        acquire,   ///< Acquire `cost` points at `prio`, bounded by deadline(); then granted() (or cancelled()).
        send,      ///< Send attempt attempt() with time limit `duration`; then responded().
        wait,      ///< Wait `duration` (a retry's backoff); then timer_fired() (or cancelled()).
        complete,  ///< Complete the request with `ec`.
    };
    kind what = kind::complete;
    limiter_step limiter = limiter_step::none;  ///< Done first.
    /// acquire: try to take the points at once (rate_limiter::try_acquire)
    /// before queueing; if that succeeds, granted({}, now) at once.
    bool try_now = false;
    /// send: this attempt is the last one possible (retries are off: with
    /// them, a 429 may follow any attempt): it may take the request itself
    /// (moved); otherwise it sends a copy, the original kept for a retry.
    bool move_request = false;
    /// complete: the last response goes to the caller (else an empty one).
    bool with_response = false;
    std::chrono::milliseconds duration{0};  ///< send: the attempt's time limit; wait: the delay.
    error_code ec;                          ///< complete: the request's result.
};

/// One request, start to end, as events in and actions out. Not thread-safe:
/// one operation owns it. Events out of order (e.g. granted() while waiting
/// for a timer) are the driver's bug; the core does not guard against them.
class request_core
{
public:
    using clock = detail::clock;
    using time_point = clock::time_point;

    DIGITAL_DELIVERY_DECL explicit request_core(request_setup s);

    /// The operation starts at `now`: a rejected request completes (the
    /// driver must not complete inline: it posts), else the deadline is fixed
    /// (the given one, else now + operation_timeout) and points are acquired
    /// (try_now unless the deadline has passed: the limiter's queue then
    /// reports it).
    DIGITAL_DELIVERY_DECL request_action started(time_point now);

    /// The limiter answered (`ec`: rate_limit_wait_exceeds_deadline,
    /// operation_aborted, ...): send, unless the deadline passed meanwhile
    /// (then the points go back). A wait bounded by max_rate_limited_wait
    /// (acquire_deadline()) that cannot end in time is rate_limited_too_long.
    DIGITAL_DELIVERY_DECL request_action granted(error_code ec, time_point now);

    /// The attempt ended: `transport_ec` from the transport (none when a
    /// response arrived), `api_ec` the response's status as an error (none
    /// for 2xx), `facts` read once from its headers. Success, give up, or
    /// wait and retry (retry_state decides). `now` is read for a failure
    /// only: with a success a driver may pass any time point. An attempt
    /// whose time limit the deadline cut (shorter than the configured one)
    /// and that ends with client_errc::request_timeout ended on the deadline:
    /// the request then completes with client_errc::deadline_exceeded.
    /// With request_setup::gone_means_done, the API's 404 naming the resource
    /// after an earlier attempt that may have been processed completes as
    /// success.
    DIGITAL_DELIVERY_DECL request_action responded(
        error_code transport_ec,
        error_code api_ec,
        const response_facts& facts,
        time_point now
    );

    /// The backoff timer fired (`ec`: it was cancelled): acquire again.
    DIGITAL_DELIVERY_DECL request_action timer_fired(error_code ec, time_point now);

    /// Terminal cancellation noticed after a step that completed without an
    /// error (a grant, a retry decision, a timer's expiry): complete with
    /// operation_aborted, giving back points granted and never spent.
    DIGITAL_DELIVERY_DECL request_action cancelled(time_point now);

    /// Writes what the request went through (attempts, time waited for points
    /// and backoff) into `d`; nothing for a request refused before starting.
    /// A request that ended on the rate limit after 429s also gets a
    /// client_message: how many, how long it waited, which bound ended it.
    DIGITAL_DELIVERY_DECL void record(diagnostics& d) const;

    /// Attempts started so far (the observer's attempt number).
    unsigned attempt() const noexcept { return rs_ ? static_cast<unsigned>(rs_->stats().attempts) : 0u; }
    /// The last wait for points (granted() or cancelled() while acquiring).
    clock::duration last_wait() const noexcept { return last_wait_; }
    const std::optional<time_point>& deadline() const noexcept { return deadline_; }
    /// The bound of an acquire: the deadline; without one, after a 429, the
    /// end of retry_params::max_rate_limited_wait.
    std::optional<time_point> acquire_deadline() const noexcept
    {
        return deadline_ || !rs_ ? deadline_ : rs_->rate_limited_until();
    }
    int cost() const noexcept { return setup_.cost; }
    priority prio() const noexcept { return setup_.prio; }
    /// The retry bookkeeping (empty before started() and for a refused request).
    const std::optional<retry_state>& retry() const noexcept { return rs_; }

private:
    enum class phase : unsigned char
    {
        idle,
        acquiring,
        sending,
        backing_off,
        done,
    };

    DIGITAL_DELIVERY_DECL request_action acquire(time_point now, bool try_now);
    DIGITAL_DELIVERY_DECL request_action send(time_point now);
    DIGITAL_DELIVERY_DECL request_action complete(error_code ec, bool with_response = false, limiter_step l = limiter_step::none);

    request_setup setup_;
    std::optional<retry_state> rs_;
    std::optional<time_point> deadline_;
    time_point wait_started_{};
    clock::duration last_wait_{};
    bool retries_ = false;  // the policy retries: every attempt sends a copy (a 429 may follow any)
    phase phase_ = phase::idle;
    error_code result_;     // what complete() was given
    // The last attempt's time limit was cut by the deadline (its configured
    // one, and the limit it got).
    bool attempt_cut_ = false;
    // An attempt ended after it may have been processed (its error), and a
    // later one's 404 was taken as its success.
    error_code maybe_processed_;
    unsigned maybe_processed_attempt_ = 0;
    bool gone_after_retry_ = false;
    std::chrono::milliseconds attempt_limit_{0};
    std::chrono::milliseconds attempt_configured_{0};
    std::chrono::milliseconds rate_limited_cap_{0};  // retry_params::max_rate_limited_wait
};

}  // namespace detail
}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/engine/sansio/request_core.ipp>
#endif

#endif
