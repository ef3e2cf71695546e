//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_RATE_LIMIT_HPP
#define DIGITAL_DELIVERY_RATE_LIMIT_HPP

/// \file
/// The API's rate-limit headers, as the client last saw them.

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/http_message.hpp>

#include <chrono>
#include <concepts>
#include <cstdint>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace digital_delivery {

/// Where a rate-limit figure comes from.
enum class rate_limit_source
{
    none,      ///< Nothing known (not reported by the client, whose bucket always has an estimate).
    header,    ///< The server's X-RateLimit-* headers.
    estimate,  ///< The client's own token bucket.
};

/// What the shared store of a bucket (rate_limit_params::store) is doing.
enum class rate_limit_store_state
{
    none,           ///< No shared store: the bucket is this process's own.
    serving,        ///< The shared store serves the bucket.
    unavailable,    ///< The store cannot be reached or used: the fallback bucket serves.
    /// The store refuses this configuration (AUTH refused, a user without the
    /// permissions the store needs): the fallback bucket serves until the
    /// configuration is fixed.
    misconfigured,
};

/// The rate-limit state of one (base URL, API key).
struct rate_limit_snapshot
{
    std::optional<std::int64_t> limit{};      ///< X-RateLimit-Limit: points per window.
    std::optional<std::int64_t> remaining{};  ///< X-RateLimit-Remaining: points left.
    std::optional<std::chrono::system_clock::time_point> reset{};  ///< X-RateLimit-Reset.
    rate_limit_source source = rate_limit_source::none;  ///< Where the figures come from.
    std::chrono::system_clock::time_point observed_at{};  ///< When the figures were taken.
    /// The bucket's shared store (client::rate_limit() fills it; parsed
    /// headers leave `none`).
    rate_limit_store_state store = rate_limit_store_state::none;
    /// `unavailable`, `misconfigured`: why, as the last store event said it
    /// (never a password or the API key).
    std::string store_message{};
};

/// Reads X-RateLimit-Limit/Remaining/Reset. Reset is a Unix timestamp; a
/// value below 10^9 is taken as seconds from `now` (some servers send a
/// delta). A reset that is no system_clock::time_point (negative, beyond 64
/// bits, after 2262-04-11 with libstdc++'s nanoseconds, or `now` + delta past
/// the clock's end) is ignored like a malformed one: `reset` stays empty.
/// \param headers A response's header fields.
/// \param now The time the response was received (for a delta reset).
/// \return The figures, or nullopt when none of the three headers is present or parseable.
DIGITAL_DELIVERY_DECL std::optional<rate_limit_snapshot> parse_rate_limit_headers(
    const http_headers& headers,
    std::chrono::system_clock::time_point now
);

/// Reads a Retry-After value: delta seconds (fractional accepted) or an
/// HTTP-date (RFC 9110 IMF-fixdate). Negative or past values give zero, however
/// far in the past; the result saturates at one year (huge delta-seconds, more
/// digits than a double holds, a date like 9999-12-31), which callers then cut
/// to their cap (max_retry_after). Never overflows, whatever `now` and the date.
/// \param value The header's value.
/// \param now The time the response was received (for an HTTP-date).
/// \return The delay, or nullopt when the value is neither form.
DIGITAL_DELIVERY_DECL std::optional<std::chrono::milliseconds> parse_retry_after(
    std::string_view value,
    std::chrono::system_clock::time_point now
);

/// Priority class of a request waiting for rate-limit points. Within a class
/// requests proceed first-in first-out; across classes the higher class goes
/// first, except that every `aging_interval` of waiting lifts a request by one
/// class (so background work is delayed, never starved).
enum class priority : std::uint8_t
{
    interactive = 0,  ///< A user is waiting.
    normal = 1,       ///< Ordinary work (request_options::prio's default).
    background = 2,   ///< Bulk work (synchronisation, exports).
};

namespace detail {
struct store_bucket;   // impl/rate_limit/store_session.hpp
class store_session;   // impl/rate_limit/store_session.hpp

/// What a store of an opt-in header implements: for each bucket (one per
/// base URL and API key), the session the rate limiter takes its points
/// through. Internal: the rate limiter is its only caller.
class rate_limit_store_impl
{
public:
    virtual ~rate_limit_store_impl() = default;
    virtual std::shared_ptr<store_session> open(const store_bucket& bucket) const = 0;
};
}  // namespace detail

/// Where the rate-limit points of one (base URL, API key) are kept: a
/// shared, type-erased store, like any_transport for transports. See
/// docs/rate-limiting.md ("One key, many processes").
///
/// Default-constructed, it is the in-process bucket: one per process, shared
/// by its clients of the key, with no header to include. The stores shared
/// beyond the process come from opt-in headers, which a translation unit that
/// never names them does not parse:
///  - shm_rate_limit_store (<digital_delivery/shm_rate_limit_store.hpp>): one
///    bucket per host, in POSIX shared memory;
///  - redis_rate_limit_store (<digital_delivery/redis_rate_limit_store.hpp>):
///    one bucket for every host that uses the same Redis server.
///
/// \code
/// #include <digital_delivery/redis_rate_limit_store.hpp>
/// params.rate_limit.store = dd::redis_rate_limit_store({.host = "10.0.0.5"});
/// \endcode
class rate_limit_store
{
public:
    /// The in-process bucket (the default).
    rate_limit_store() noexcept = default;

    /// Takes a store of an opt-in header (copied; copies of this object share it).
    /// \param store shm_rate_limit_store or redis_rate_limit_store.
    template <class Store>
        requires(std::derived_from<Store, detail::rate_limit_store_impl> && !std::is_same_v<Store, rate_limit_store>)
    rate_limit_store(Store store)  // NOLINT(google-explicit-constructor)
        : impl_(std::make_shared<const Store>(std::move(store)))
    {
    }

    /// \return True for a store shared beyond the process; false for the in-process bucket.
    bool shared() const noexcept { return impl_ != nullptr; }

    /// Internal (the rate limiter): the store's session for one bucket;
    /// nullptr for the in-process bucket.
    /// \param bucket The bucket's key and settings.
    /// \return The session, or nullptr.
    std::shared_ptr<detail::store_session> open(const detail::store_bucket& bucket) const
    {
        return impl_ ? impl_->open(bucket) : nullptr;
    }

private:
    std::shared_ptr<const detail::rate_limit_store_impl> impl_;
};

struct throttle_event;

/// Rate-limit configuration (part of client_params). Every default matches
/// the API's documented limit (40 points per 60 s per store).
struct rate_limit_params
{
    /// Limit on the client side at all. When false, async_acquire completes at
    /// once (still through a post) and observe_response only records headers.
    /// Default: true.
    bool enabled = true;

    /// Bucket size in points (GET costs 1, POST/PATCH/DELETE 2). Default: 40.
    double capacity = 40;

    /// Time to refill a whole bucket: the refill rate is capacity / window.
    /// Default: 60 s (one point every 1.5 s).
    std::chrono::duration<double> window = std::chrono::seconds(60);

    /// Longest pause a 429's Retry-After can impose; longer values are cut to
    /// this. Default: 60 s.
    std::chrono::milliseconds max_retry_after{60000};

    /// Aging: a waiting request moves up one priority class per interval of
    /// waiting (background work is never starved). Default: 10 s.
    std::chrono::milliseconds aging_interval{10000};

    /// Lower the local estimate from X-RateLimit-Limit/Remaining headers
    /// (never raises it). Default: true.
    bool follow_server_headers = true;

    /// After a request is granted from a full bucket, the bucket does not
    /// refill until a response comes back (or one window passes). The server's
    /// bucket is full too and refills nothing until that request reaches it;
    /// counting refill from our own grant would hand out points the server
    /// never had, and a 429 costs a whole Retry-After pause. Costs at most one
    /// round trip of refill after an idle period. Default: true.
    bool hold_refill_until_response = true;

    /// When the server's bucket is unknown (the bucket's first request, and
    /// the end of each 429: its pause, or its refill without Retry-After),
    /// one request goes first and the others wait until its answer's
    /// X-RateLimit-* figures are known (any answer but a 429 ends the wait;
    /// a failure or a cancellation without an answer lets the next waiter go
    /// first instead). A key another process has spent then costs one 429,
    /// not a burst of them. Costs one round trip of latency at the start and
    /// after each 429. Default: true.
    bool probe_first = true;

    /// The share of the bucket that requests of priority::background (the
    /// order feed's, the watermark waiter's polls, any
    /// request_options::prio = background) may use: a background request is granted only while the
    /// bucket keeps at least (1 - background_share) x `capacity` points after
    /// its take, a reserve left to interactive and normal requests. The
    /// reserve holds in every process of a shared `store` (it is checked in
    /// the store, atomically with the take), so a background job in one
    /// process never takes points a foreground request of another process
    /// is waiting for. A background request that has waited one
    /// `aging_interval` is a normal one (never starved) and the reserve no
    /// longer applies to it. Never more than a full bucket holds: a request
    /// costing more than the share is granted from a full bucket.
    /// 1: no reserve; 0: background requests wait for a full bucket; values
    /// outside [0, 1] are clamped, NaN is the default. Default: 0.25
    /// (docs/rate-limiting.md, "Background work beside foreground calls").
    double background_share = 0.25;

    /// Where the points are kept: this process only (the default), or a
    /// store of an opt-in header, shared with the host's other processes of
    /// the same key (shm_rate_limit_store) or through Redis with every host
    /// (redis_rate_limit_store); all of them should use the same capacity and
    /// window. A 429 seen by any of them pauses all of them. Default: the
    /// in-process bucket.
    rate_limit_store store{};

    /// While the shared store cannot be used (e.g. shared memory refused,
    /// Redis down, slow past its command_timeout or refusing AUTH),
    /// the process falls back to a bucket of its own holding at most this
    /// share of `capacity` (a throttle_event store_unavailable reports it),
    /// and tries the store again every `store_retry_interval`
    /// (store_restored). With Redis the share is also at most 1 / (the
    /// processes of the key Redis counted at its last reply), and what the
    /// fallback granted is taken from the shared bucket when Redis is back
    /// (docs/rate-limiting.md, "A fleet while Redis is away"); a process that
    /// never reached Redis uses this share. Default: 0.25.
    double fallback_share = 0.25;

    /// How often a process on its fallback bucket tries the shared store
    /// again. Default: 5 s.
    std::chrono::milliseconds store_retry_interval{5000};

    /// Called with each throttle_event of the bucket (a 429 pause and its
    /// end, the shared store lost and restored), outside any lock, on the
    /// thread that noticed it. The first client of a key sets it. Default: none.
    std::function<void(const throttle_event&)> on_throttle{};
};

/// Reported to the throttle hook.
struct throttle_event
{
    /// What happened.
    enum class kind
    {
        paused,   ///< A 429 paused the whole scheduler until `until`.
        resumed,  ///< A pause ended (reported when the scheduler next runs after it).
        store_unavailable,  ///< The shared store cannot be used: the fallback bucket serves (`message` says why).
        store_restored,     ///< The shared store serves again.
        /// The shared store refuses this configuration (AUTH refused, missing
        /// permissions): the fallback bucket serves (`message` says why).
        /// Reported again at each retry (at most every store_retry_interval)
        /// while the store keeps refusing.
        store_misconfigured,
    };
    kind what = kind::paused;  ///< What happened.
    std::chrono::steady_clock::time_point until{};  ///< paused: end of the pause; resumed: the time it was noticed.
    std::chrono::milliseconds retry_after{0};       ///< paused: the Retry-After honoured (after the cap).
    std::size_t waiting = 0;                        ///< Requests queued at that moment.
    std::string message{};  ///< store_unavailable, store_misconfigured: why (never the API key or a password).
};

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/rate_limit/rate_limit.ipp>
#endif

#endif
