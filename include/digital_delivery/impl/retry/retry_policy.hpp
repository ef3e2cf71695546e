//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_DETAIL_RETRY_POLICY_HPP
#define DIGITAL_DELIVERY_DETAIL_RETRY_POLICY_HPP

/// \file
/// Pure retry rules (no state, no clock): classification and backoff. The
/// stateful parts (attempt counting, budget) live in retry.hpp.

#include <digital_delivery/error.hpp>
#include <digital_delivery/http_message.hpp>

#include <boost/asio/error.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>

namespace digital_delivery {
namespace detail {

/// How a failure may be retried.
enum class retry_class
{
    never,           ///< Permanent, or cancelled by the caller.
    if_idempotent,   ///< Transient, but the request may have been processed.
    always,          ///< The server certainly did not process the request.
};

/// Whether a failure may be retried: `ec` the attempt's error (the transport's,
/// or the API error of the response), `status` the response's HTTP status (0:
/// none). 501 (Not Implemented) and 505 (HTTP Version Not Supported) say the
/// server will never serve the request: final, although api_errc::server_error.
inline retry_class classify_failure(const error_code& ec, unsigned status) noexcept
{
    if (ec == boost::asio::error::operation_aborted)
        return retry_class::never;
    if (status == 429 || ec == make_error_code(api_errc::rate_limited))
        return retry_class::always;
    if (status == 501 || status == 505)
        return retry_class::never;
    if (ec && is_request_not_sent(ec) && is_transient(ec))
        return retry_class::always;
    if ((status >= 500 && status <= 599) || status == 408 || ec == make_error_code(api_errc::server_error))
        return retry_class::if_idempotent;
    if (ec && is_transient(ec))
        return retry_class::if_idempotent;
    return retry_class::never;
}

/// The backoff ceiling before retry number `retry` (1 = first retry):
/// min(max_backoff, initial_backoff * multiplier^(retry-1)).
inline std::chrono::milliseconds backoff_ceiling(
    int retry,
    std::chrono::milliseconds initial_backoff,
    std::chrono::milliseconds max_backoff,
    double multiplier
) noexcept
{
    const double base = static_cast<double>(std::max<std::int64_t>(initial_backoff.count(), 0));
    const double cap = static_cast<double>(std::max<std::int64_t>(max_backoff.count(), 0));
    const double mult = multiplier >= 1.0 ? multiplier : 1.0;
    const double v = base * std::pow(mult, std::max(retry - 1, 0));
    return std::chrono::milliseconds(static_cast<std::int64_t>(std::min(v, cap)));
}

/// Same, from a retry_params (a template so that this header does not need retry.hpp).
template <class Params>
std::chrono::milliseconds backoff_ceiling(int retry, const Params& p) noexcept
{
    return backoff_ceiling(retry, p.initial_backoff, p.max_backoff, p.backoff_multiplier);
}

/// Full jitter: u * ceiling, u in [0, 1) (clamped).
inline std::chrono::milliseconds full_jitter(std::chrono::milliseconds ceiling, double u) noexcept
{
    if (!(u >= 0.0))
        u = 0.0;
    if (u >= 1.0)
        u = 1.0;
    return std::chrono::milliseconds(static_cast<std::int64_t>(static_cast<double>(ceiling.count()) * u));
}

/// The time limit of the attempt about to be sent, decided once, at sending:
/// `configured` (request_options::timeout, else client_params::request_timeout;
/// zero: default_request_timeout), never past the operation's deadline (at
/// least 1 ms: a zero timeout would mean the transport's default).
template <class TimePoint>
std::chrono::milliseconds attempt_timeout(
    std::chrono::milliseconds configured,
    const std::optional<TimePoint>& deadline,
    TimePoint now
) noexcept
{
    auto t = configured.count() > 0 ? configured : default_request_timeout;
    if (deadline)
        t = std::clamp(std::chrono::ceil<std::chrono::milliseconds>(*deadline - now), std::chrono::milliseconds(1), t);
    return t;
}

/// A uniform draw in [0, 1) for full_jitter (one generator per thread).
inline double jitter_unit()
{
    thread_local std::minstd_rand rng{std::random_device{}()};
    return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

/// The shape of a backoff schedule: backoff_ceiling's three numbers.
struct backoff_schedule
{
    std::chrono::milliseconds initial;
    std::chrono::milliseconds max;
    double multiplier = 2.0;
};

/// The delay before retry number `retry` (1 = first retry): the one backoff
/// rule of the library (requests through retry_state, upload PUTs). Full
/// jitter `u` over backoff_ceiling; when the server asked for a wait
/// (Retry-After of a refusal), at least that, capped at max_retry_after.
inline std::chrono::milliseconds retry_delay(
    int retry,
    const backoff_schedule& s,
    double u,
    std::optional<std::chrono::milliseconds> server_wait = std::nullopt,
    std::chrono::milliseconds max_retry_after = std::chrono::milliseconds(0)
) noexcept
{
    auto d = full_jitter(backoff_ceiling(retry, s.initial, s.max, s.multiplier), u);
    if (server_wait)
        d = std::max(d, std::clamp(*server_wait, std::chrono::milliseconds(0), max_retry_after));
    return d;
}

}  // namespace detail
}  // namespace digital_delivery

#endif
