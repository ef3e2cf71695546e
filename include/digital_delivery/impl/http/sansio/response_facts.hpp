//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_HTTP_SANSIO_RESPONSE_FACTS_HPP
#define DIGITAL_DELIVERY_IMPL_HTTP_SANSIO_RESPONSE_FACTS_HPP

// The one reading of a response's headers: what the rate limiter, the retry
// decision and the diagnostics need, read once per response (requests and
// upload PUTs alike) and handed to each of them as a value.

#include <digital_delivery/http_message.hpp>
#include <digital_delivery/rate_limit.hpp>

#include <chrono>
#include <optional>

namespace digital_delivery {
namespace detail {

/// What a response's status line and headers say to the client's machinery.
struct response_facts
{
    /// The HTTP status (0: no response, e.g. a transport failure).
    unsigned status = 0;
    /// Retry-After of a 429 or a 503 (parse_retry_after against the system
    /// clock at reading): the limiter's pause (429), the least retry delay
    /// (429 of a request, 503 of an upload PUT), diagnostics::retry_after (429).
    /// Not read for any other status: nothing takes it there.
    std::optional<std::chrono::milliseconds> retry_after;
    /// X-RateLimit-Limit/Remaining/Reset (parse_rate_limit_headers), when present.
    std::optional<rate_limit_snapshot> rate_limit;

    bool refused() const noexcept { return status == 429; }
};

/// Reads `headers` of a response with `status` once, at system time `sys_now`.
inline response_facts read_response_facts(
    const http_headers& headers,
    unsigned status,
    std::chrono::system_clock::time_point sys_now
)
{
    std::optional<std::chrono::milliseconds> retry_after;
    if (status == 429 || status == 503)
        if (auto v = headers.find("Retry-After"))
            retry_after = parse_retry_after(*v, sys_now);
    return response_facts{status, retry_after, parse_rate_limit_headers(headers, sys_now)};
}

}  // namespace detail
}  // namespace digital_delivery

#endif
