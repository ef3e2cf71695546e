//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_RETRY_HPP
#define DIGITAL_DELIVERY_RETRY_HPP

/// \file
/// The retry settings: client_params::retry, or request_options::retry for
/// one request. What a request went through is in its diagnostics (attempts,
/// total_wait). See docs/rate-limiting.md.
///
/// Rules (per attempt):
///  - cancellation (operation_aborted) is never retried;
///  - 429 (api_errc::rate_limited) and failures that provably happened before
///    the request was sent (is_request_not_sent() and is_transient()) are
///    retried for every method: the server did not process the request. A 429
///    spends neither an attempt nor the budget: it is resent until served,
///    within the deadline, else within max_rate_limited_wait;
///  - 5xx (but 501 and 505, final), 408, timeouts and connection failures
///    after sending (a stale pooled connection, a reset) are retried only when
///    the endpoint is idempotent;
///  - anything else (4xx, decoding errors, caller input) is final.
/// Delay: exponential backoff with full jitter, u * min(max_backoff,
/// initial_backoff * multiplier^(attempt-1)) with u uniform in [0,1); a 429
/// with Retry-After waits exactly that (capped by max_retry_after). A retry is never
/// scheduled when its delay plus the duration of the last attempt would end
/// after the deadline. Each retry also spends one unit of a per-client budget
/// (a 429's excepted).

#include <digital_delivery/detail/clock.hpp>
#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/error.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

namespace digital_delivery {

/// Retry configuration (per client; copy and change it for one request).
struct retry_params
{
    /// Retry at all. Default: true.
    bool enabled = true;

    /// Most attempts per request, the first one included. Default: 4.
    int max_attempts = 4;

    /// Backoff ceiling before the first retry. Default: 200 ms.
    std::chrono::milliseconds initial_backoff{200};

    /// Largest backoff ceiling. Default: 10 s.
    std::chrono::milliseconds max_backoff{10000};

    /// Growth of the ceiling per attempt. Default: 2.
    double backoff_multiplier = 2.0;

    /// Longest Retry-After honoured; a longer one (also a date far in the
    /// future, see parse_retry_after) is cut to this. Default: 60 s.
    std::chrono::milliseconds max_retry_after{60000};

    /// Retry budget: retries earned per request sent (first attempts). Default: 0.1 (10 %).
    double budget_ratio = 0.1;

    /// Retry budget: retries earned per minute regardless of traffic (the
    /// minimum that keeps a quiet client able to retry). Default: 10.
    double budget_min_per_minute = 10;

    /// Retry budget: most retries saved up; also the initial balance. Default: 20.
    double budget_capacity = 20;

    /// A request without a deadline (client_params::operation_timeout = 0
    /// and no request_options::deadline) refused with 429 is resent until it
    /// is served, or until it has waited this long for the server's rate
    /// limit in all (from each 429 to its next sending); then it fails with
    /// client_errc::rate_limited_too_long. With a deadline, the deadline
    /// bounds it instead (client_errc::rate_limit_wait_exceeds_deadline).
    /// Zero: no bound. Default: 10 min.
    std::chrono::milliseconds max_rate_limited_wait{600000};
};

}  // namespace digital_delivery


#endif
