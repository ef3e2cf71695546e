//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_INTERNAL_RETRY_STATE_HPP
#define DIGITAL_DELIVERY_IMPL_INTERNAL_RETRY_STATE_HPP

// Implementation detail: the retry policy of one request and the client's
// retry budget (configured through client_params::retry and
// request_options::retry; observed through diagnostics).

#include <digital_delivery/retry.hpp>
#include <digital_delivery/detail/clock.hpp>
#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/detail/saturating_time.hpp>
#include <digital_delivery/error.hpp>
#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

namespace digital_delivery {
namespace detail {

/// Why on_failure() decided what it decided.
enum class retry_reason
{
    retry,               ///< Retry after `delay`.
    disabled,            ///< retry_params::enabled is false.
    not_retryable,       ///< A permanent failure (or cancellation).
    not_idempotent,      ///< Transient, but the request may have reached the server and the endpoint is not idempotent.
    attempts_exhausted,  ///< max_attempts reached.
    deadline,            ///< The retry could not finish before the deadline.
    budget_exhausted,    ///< The client's retry budget is used up.
    rate_limited_too_long,  ///< 429s for longer than retry_params::max_rate_limited_wait (no deadline).
};

/// The answer for one failed attempt.
struct retry_decision
{
    bool retry = false;
    std::chrono::milliseconds delay{0};  ///< Wait this long, then acquire points and resend.
    retry_reason reason = retry_reason::not_retryable;
    /// When giving up: the error of the decision: the last attempt's failure
    /// (not retryable, attempts or budget used up), client_errc::deadline_exceeded
    /// when the next attempt would end after the deadline; for a 429,
    /// client_errc::rate_limit_wait_exceeds_deadline (the deadline) or
    /// rate_limited_too_long (no deadline: the cap). stats() says how many attempts.
    error_code final_error;
};

/// What a request went through; copy it into the final diagnostics.
struct retry_stats
{
    int attempts = 0;                                  ///< Attempts started.
    std::chrono::milliseconds total_backoff{0};        ///< Sum of the retry delays decided.
    std::chrono::milliseconds total_rate_limit_wait{0};///< Time spent waiting for rate-limit points.
    error_code last_error;                             ///< The last attempt's failure.
    unsigned last_status = 0;                          ///< Its HTTP status (0: none).
    retry_reason last_reason = retry_reason::retry;    ///< The last decision.
    int refusals = 0;                                  ///< Attempts refused with 429 (counted apart: not in max_attempts).
    std::chrono::milliseconds rate_limited_wait{0};    ///< From each 429 to the next sending (max_rate_limited_wait).
};

/// One failed attempt as the request operation saw it.
struct attempt_failure
{
    error_code ec;                                     ///< Transport error or the API error for the status.
    unsigned http_status = 0;                          ///< 0 when no response arrived.
    std::optional<std::chrono::milliseconds> retry_after;  ///< From a 429/503 Retry-After (parse_retry_after).
};

/// A token-bucket budget of retries shared by every request of one client
/// (thread-safe). Each first attempt earns `budget_ratio`; the balance also
/// refills at `budget_min_per_minute`; each retry spends 1.
class retry_budget
{
public:
    using clock = detail::clock;

    DIGITAL_DELIVERY_DECL explicit retry_budget(const retry_params& p = {}, clock::time_point now = clock::now());

    /// A request is being sent for the first time.
    DIGITAL_DELIVERY_DECL void on_request(clock::time_point now);

    /// Spends one retry if the balance allows it.
    DIGITAL_DELIVERY_DECL bool try_spend(clock::time_point now);

    /// Current balance.
    DIGITAL_DELIVERY_DECL double balance(clock::time_point now);

private:
    DIGITAL_DELIVERY_DECL void refill(clock::time_point now);
    std::mutex mtx_;
    double ratio_, per_second_, capacity_, balance_;
    clock::time_point last_;
};

/// Per-request retry bookkeeping. Not thread-safe (one request operation owns it).
///
/// \code
/// retry_state rs(params, budget, clock::now(), deadline);
/// for (;;) {
///     rs.on_attempt_start(clock::now());
///     ... acquire points, send ...
///     if (ok) break;
///     auto d = rs.on_failure({ec, status, retry_after}, endpoint_idempotent, clock::now());
///     if (!d.retry) { /* rs.stats() into the diagnostics */ complete(d.final_error); }
///     ... wait d.delay ...
/// }
/// \endcode
class retry_state
{
public:
    using clock = detail::clock;
    /// Returns a number uniform in [0, 1). Empty: a per-thread minstd_rand.
    using jitter_fn = std::function<double()>;

    DIGITAL_DELIVERY_DECL retry_state(
        const retry_params& params,
        std::shared_ptr<retry_budget> budget,
        clock::time_point start,
        std::optional<clock::time_point> deadline = std::nullopt,
        jitter_fn jitter = {}
    );

    /// An attempt begins (the first one earns budget).
    DIGITAL_DELIVERY_DECL void on_attempt_start(clock::time_point now);

    /// The attempt failed: retry or give up?
    DIGITAL_DELIVERY_DECL retry_decision on_failure(const attempt_failure& f, bool idempotent, clock::time_point now);

    /// Without a deadline, after a 429: when the time waited for the server's
    /// rate limit reaches max_rate_limited_wait (the bound of the wait for
    /// points before the next sending); else nullopt (also for a bound past
    /// the clock's range).
    std::optional<clock::time_point> rate_limited_until() const noexcept
    {
        const auto cap = params_.max_rate_limited_wait;
        if (deadline_ || !refused_at_ || cap.count() <= 0)
            return std::nullopt;
        return checked_add(*refused_at_, cap - std::min(stats_.rate_limited_wait, cap));
    }

    /// The request, refused with 429 and waiting for the next sending, gives
    /// up at `now` (rate_limited_until() passed): counts the wait, returns
    /// client_errc::rate_limited_too_long.
    DIGITAL_DELIVERY_DECL error_code give_up_rate_limited(clock::time_point now);

    /// Adds time spent in rate_limiter::async_acquire to the statistics.
    void add_rate_limit_wait(clock::duration d) noexcept
    {
        stats_.total_rate_limit_wait += std::chrono::duration_cast<std::chrono::milliseconds>(d);
    }

    const retry_stats& stats() const noexcept { return stats_; }
    const std::optional<clock::time_point>& deadline() const noexcept { return deadline_; }

private:
    retry_params params_;
    std::shared_ptr<retry_budget> budget_;
    std::optional<clock::time_point> deadline_;
    jitter_fn jitter_;
    clock::time_point attempt_started_;
    clock::duration last_attempt_{};
    std::optional<clock::time_point> refused_at_;  // the last 429, until the next sending
    retry_stats stats_;

    DIGITAL_DELIVERY_DECL void end_refusal(clock::time_point now) noexcept;
    DIGITAL_DELIVERY_DECL retry_decision on_refused(const attempt_failure& f, clock::time_point now);
};

}  // namespace detail
}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/retry/retry.ipp>
#endif

#endif
