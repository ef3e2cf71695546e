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
#include <optional>
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
    std::optional<std::int64_t> limit;      ///< X-RateLimit-Limit: points per window.
    std::optional<std::int64_t> remaining;  ///< X-RateLimit-Remaining: points left.
    std::optional<std::chrono::system_clock::time_point> reset;  ///< X-RateLimit-Reset.
    rate_limit_source source = rate_limit_source::none;
    std::chrono::system_clock::time_point observed_at{};  ///< When the figures were taken.
};

/// Reads X-RateLimit-Limit/Remaining/Reset. Reset is a Unix timestamp; a
/// value below 10^9 is taken as seconds from `now` (some servers send a
/// delta). Returns nullopt when none of the three headers is present or
/// parseable.
DIGITAL_DELIVERY_DECL std::optional<rate_limit_snapshot> parse_rate_limit_headers(
    const http_headers& headers,
    std::chrono::system_clock::time_point now
);

/// Reads a Retry-After value: delta seconds (fractional accepted) or an
/// HTTP-date (RFC 9110 IMF-fixdate). Negative or past values give zero.
DIGITAL_DELIVERY_DECL std::optional<std::chrono::milliseconds> parse_retry_after(
    std::string_view value,
    std::chrono::system_clock::time_point now
);

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/rate_limit.ipp>
#endif

#endif
