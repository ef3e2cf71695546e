//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_RETRY_IPP
#define DIGITAL_DELIVERY_IMPL_RETRY_IPP

#include <digital_delivery/impl/retry/retry_policy.hpp>
#include <digital_delivery/impl/retry/retry_state.hpp>

#include <random>

namespace digital_delivery {
namespace detail {

DIGITAL_DELIVERY_DECL retry_budget::retry_budget(const retry_params& p, clock::time_point now)
    : ratio_(std::max(p.budget_ratio, 0.0)),
      per_second_(std::max(p.budget_min_per_minute, 0.0) / 60.0),
      capacity_(std::max(p.budget_capacity, 1.0)),
      balance_(capacity_),
      last_(now)
{
}

DIGITAL_DELIVERY_DECL void retry_budget::refill(clock::time_point now)
{
    if (now <= last_)
        return;
    balance_ = std::min(capacity_, balance_ + std::chrono::duration<double>(now - last_).count() * per_second_);
    last_ = now;
}

DIGITAL_DELIVERY_DECL void retry_budget::on_request(clock::time_point now)
{
    std::lock_guard<std::mutex> lk(mtx_);
    refill(now);
    balance_ = std::min(capacity_, balance_ + ratio_);
}

DIGITAL_DELIVERY_DECL bool retry_budget::try_spend(clock::time_point now)
{
    std::lock_guard<std::mutex> lk(mtx_);
    refill(now);
    if (balance_ + 1e-9 < 1.0)
        return false;
    balance_ -= 1.0;
    return true;
}

DIGITAL_DELIVERY_DECL double retry_budget::balance(clock::time_point now)
{
    std::lock_guard<std::mutex> lk(mtx_);
    refill(now);
    return balance_;
}

DIGITAL_DELIVERY_DECL retry_state::retry_state(
    const retry_params& params,
    std::shared_ptr<retry_budget> budget,
    clock::time_point start,
    std::optional<clock::time_point> deadline,
    jitter_fn jitter
)
    : params_(params), budget_(std::move(budget)), deadline_(deadline), jitter_(std::move(jitter)), attempt_started_(start)
{
    if (!jitter_)
        jitter_ = detail::jitter_unit;
}

DIGITAL_DELIVERY_DECL void retry_state::end_refusal(clock::time_point now) noexcept
{
    if (!refused_at_)
        return;
    if (now > *refused_at_)
        stats_.rate_limited_wait += std::chrono::duration_cast<std::chrono::milliseconds>(now - *refused_at_);
    refused_at_.reset();
}

DIGITAL_DELIVERY_DECL error_code retry_state::give_up_rate_limited(clock::time_point now)
{
    end_refusal(now);
    stats_.last_reason = retry_reason::rate_limited_too_long;
    return client_errc::rate_limited_too_long;
}

DIGITAL_DELIVERY_DECL void retry_state::on_attempt_start(clock::time_point now)
{
    end_refusal(now);
    attempt_started_ = now;
    if (++stats_.attempts == 1 && budget_)
        budget_->on_request(now);
}

DIGITAL_DELIVERY_DECL retry_decision retry_state::on_failure(const attempt_failure& f, bool idempotent, clock::time_point now)
{
    using std::chrono::milliseconds;
    retry_decision d;
    stats_.last_error = f.ec;
    stats_.last_status = f.http_status;
    if (now > attempt_started_)
        last_attempt_ = now - attempt_started_;
    auto give_up = [&](retry_reason r, error_code final_ec) {
        d.retry = false;
        d.reason = r;
        d.final_error = final_ec;
        stats_.last_reason = r;
        return d;
    };
    // The error to report when giving up on a non-retryable failure: the
    // caller's code, else one derived from the status.
    const error_code failure = f.ec                  ? f.ec
                               : f.http_status == 429 ? make_error_code(api_errc::rate_limited)
                               : f.http_status >= 500 ? make_error_code(api_errc::server_error)
                                                      : make_error_code(client_errc::unexpected_status);
    if (!params_.enabled)
        return give_up(retry_reason::disabled, failure);
    const auto cls = detail::classify_failure(f.ec, f.http_status);
    if (cls == detail::retry_class::never)
        return give_up(retry_reason::not_retryable, failure);
    if (cls == detail::retry_class::if_idempotent && !idempotent)
        return give_up(retry_reason::not_idempotent, failure);
    if (f.http_status == 429 || f.ec == make_error_code(api_errc::rate_limited))
        return on_refused(f, now);
    if (stats_.attempts - stats_.refusals >= params_.max_attempts)
        return give_up(retry_reason::attempts_exhausted, failure);

    const milliseconds delay = detail::retry_delay(
        stats_.attempts - stats_.refusals,
        {params_.initial_backoff, params_.max_backoff, params_.backoff_multiplier},
        jitter_()
    );
    // A retry that could only end exactly at the deadline, if it took as long
    // as the attempt that just failed, is not made: the last attempt may have
    // been cut off by its timeout, and a second one with no more time would
    // fail the same way.
    if (deadline_ && now + delay + last_attempt_ >= *deadline_)
        return give_up(retry_reason::deadline, make_error_code(client_errc::deadline_exceeded));
    if (budget_ && !budget_->try_spend(now))
        return give_up(retry_reason::budget_exhausted, failure);

    d.retry = true;
    d.delay = delay;
    d.reason = retry_reason::retry;
    stats_.total_backoff += delay;
    stats_.last_reason = retry_reason::retry;
    return d;
}

// A 429: the server refused the request unprocessed. It is the limit
// speaking, not a failure: no attempt and no budget spent (the budget stops
// retry storms against a failing server; the limiter paces these). Resent
// until served, unless the deadline (or, without one, max_rate_limited_wait)
// cannot be met.
DIGITAL_DELIVERY_DECL retry_decision retry_state::on_refused(const attempt_failure& f, clock::time_point now)
{
    using std::chrono::milliseconds;
    ++stats_.refusals;
    retry_decision d;
    // The server's Retry-After when it gave one (the limiter then holds
    // every request of the key until it ends, and lets one go first: no
    // backoff on top); else the backoff schedule, counted in 429s.
    const milliseconds delay = detail::retry_delay(
        stats_.refusals,
        {params_.initial_backoff, params_.max_backoff, params_.backoff_multiplier},
        f.retry_after ? 0.0 : jitter_(),
        f.retry_after,
        params_.max_retry_after
    );
    retry_reason r = retry_reason::retry;
    if (deadline_ && now + delay + last_attempt_ >= *deadline_)
        r = retry_reason::deadline;
    else if (const auto cap = params_.max_rate_limited_wait;
             !deadline_ && cap.count() > 0 && delay > cap - std::min(stats_.rate_limited_wait, cap))
        r = retry_reason::rate_limited_too_long;
    stats_.last_reason = r;
    if (r != retry_reason::retry)
    {
        d.reason = r;
        d.final_error = r == retry_reason::deadline ? make_error_code(client_errc::rate_limit_wait_exceeds_deadline)
                                                    : make_error_code(client_errc::rate_limited_too_long);
        return d;
    }
    refused_at_ = now;
    d.retry = true;
    d.delay = delay;
    d.reason = retry_reason::retry;
    stats_.total_backoff += delay;
    return d;
}

}  // namespace detail
}  // namespace digital_delivery

#endif
