//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
//
#ifndef DIGITAL_DELIVERY_RATE_LIMIT_HPP
#define DIGITAL_DELIVERY_RATE_LIMIT_HPP

/// \file
/// The API's rate-limit headers, as the client last saw them.

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/http_message.hpp>

#include <chrono>
#include <cstdint>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace digital_delivery {

/// Where a rate-limit figure comes from.
enum class rate_limit_source
{
    none,      ///< Nothing known (not reported by the client, whose bucket always has an estimate).
    header,    ///< The server's X-RateLimit-* headers.
    estimate,  ///< The client's own token bucket.
};

/// The rate-limit state of one (base URL, API key).
struct rate_limit_snapshot
{
    std::optional<std::int64_t> limit{};      ///< X-RateLimit-Limit: points per window.
    std::optional<std::int64_t> remaining{};  ///< X-RateLimit-Remaining: points left.
    std::optional<std::chrono::system_clock::time_point> reset{};  ///< X-RateLimit-Reset.
    rate_limit_source source = rate_limit_source::none;
    std::chrono::system_clock::time_point observed_at{};  ///< When the figures were taken.
};

/// Reads X-RateLimit-Limit/Remaining/Reset. Reset is a Unix timestamp; a
/// value below 10^9 is taken as seconds from `now` (some servers send a
/// delta). A reset that is no system_clock::time_point (negative, beyond 64
/// bits, after 2262-04-11 with libstdc++'s nanoseconds, or `now` + delta past
/// the clock's end) is ignored like a malformed one: `reset` stays empty.
/// Returns nullopt when none of the three headers is present or parseable.
DIGITAL_DELIVERY_DECL std::optional<rate_limit_snapshot> parse_rate_limit_headers(
    const http_headers& headers,
    std::chrono::system_clock::time_point now
);

/// Reads a Retry-After value: delta seconds (fractional accepted) or an
/// HTTP-date (RFC 9110 IMF-fixdate). Negative or past values give zero, however
/// far in the past; the result saturates at one year (huge delta-seconds, more
/// digits than a double holds, a date like 9999-12-31), which callers then cut
/// to their cap (max_retry_after). Never overflows, whatever `now` and the date.
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

/// Where the rate-limit points of one (base URL, API key) are kept.
/// See docs/rate-limiting.md ("One key, many processes").
enum class rate_limit_store : std::uint8_t
{
    /// One bucket per process, shared by its clients of the key (default).
    in_process,
    /// One bucket per host, shared by every process of the key that uses this
    /// store: POSIX shared memory, lock-free, owner-only (0600).
    shared_memory,
    /// One bucket for every process of the key on every host that uses this
    /// Redis server (rate_limit_params::redis): one atomic script per grant.
    redis,
};

/// Where the Redis store lives and how to reach it (rate_limit_store::redis).
/// The store's key is `key_prefix` + 32 hex digits of a SHA-256 of the
/// normalised base URL and the API key: the key cannot be read back from it.
struct redis_store_params
{
    /// Host name or IP address of the Redis server. Default: "127.0.0.1".
    std::string host = "127.0.0.1";

    /// TCP port. Default: 6379.
    std::uint16_t port = 6379;

    /// ACL user name sent with AUTH (Redis 6 and later); empty: AUTH with the
    /// password alone (the `default` user). Default: empty.
    std::string username{};

    /// Password sent with AUTH; empty: no AUTH. A secret: never written to
    /// logs, errors or throttle events. Default: empty.
    std::string password{};

    /// Database number selected with SELECT (0 is not selected explicitly).
    /// Default: 0.
    int database = 0;

    /// Prepended to every key the store writes (one hash per base URL and
    /// API key). Default: "digital_delivery:rl:".
    std::string key_prefix = "digital_delivery:rl:";

    /// Longest time one exchange with Redis may take, connecting (with AUTH,
    /// SELECT and loading the script) included; past it, the store counts as
    /// unavailable and the fallback bucket serves. Default: 500 ms.
    std::chrono::milliseconds command_timeout{500};
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

    /// Where the points are kept: this process only, shared with the host's
    /// other processes of the same key, or shared through Redis with every
    /// host (all of them should use the same capacity and window). A 429 seen
    /// by any of them pauses all of them. Default: in_process.
    rate_limit_store store = rate_limit_store::in_process;

    /// The Redis server, with store == rate_limit_store::redis (ignored
    /// otherwise).
    redis_store_params redis{};

    /// While the shared store cannot be used (e.g. shared memory refused,
    /// Redis down, slow past its command_timeout or refusing AUTH),
    /// the process falls back to a bucket of its own holding this share of
    /// `capacity` (a throttle_event store_unavailable reports it), and tries
    /// the store again every `store_retry_interval` (store_restored).
    /// Default: 0.25.
    double fallback_share = 0.25;

    /// Default: 5 s.
    std::chrono::milliseconds store_retry_interval{5000};

    /// Called with each throttle_event of the bucket (a 429 pause and its
    /// end, the shared store lost and restored), outside any lock, on the
    /// thread that noticed it. The first client of a key sets it. Default: none.
    std::function<void(const throttle_event&)> on_throttle{};
};

/// Reported to the throttle hook.
struct throttle_event
{
    enum class kind
    {
        paused,   ///< A 429 paused the whole scheduler until `until`.
        resumed,  ///< A pause ended (reported when the scheduler next runs after it).
        store_unavailable,  ///< The shared store cannot be used: the fallback bucket serves (`message` says why).
        store_restored,     ///< The shared store serves again.
    };
    kind what = kind::paused;
    std::chrono::steady_clock::time_point until{};  ///< paused: end of the pause; resumed: the time it was noticed.
    std::chrono::milliseconds retry_after{0};       ///< paused: the Retry-After honoured (after the cap).
    std::size_t waiting = 0;                        ///< Requests queued at that moment.
    std::string message{};                            ///< store_unavailable: why (never the API key).
};

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/rate_limit/rate_limit.ipp>
#endif

#endif
