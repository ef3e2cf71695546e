//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
//
#ifndef DIGITAL_DELIVERY_IMPL_RATE_LIMIT_RETRY_AFTER_HPP
#define DIGITAL_DELIVERY_IMPL_RATE_LIMIT_RETRY_AFTER_HPP

#include <digital_delivery/http_message.hpp>
#include <digital_delivery/rate_limit.hpp>

#include <chrono>
#include <optional>

namespace digital_delivery {
namespace detail {
/// The one reading of a response's Retry-After (parse_retry_after of its
/// value, an HTTP-date against `now`): the retry delay of a request and of an
/// upload PUT, a 429's diagnostics and the limiter's pause all take it from here.
inline std::optional<std::chrono::milliseconds> retry_after_of(
    const http_headers& headers,
    std::chrono::system_clock::time_point now
)
{
    if (auto v = headers.find("Retry-After"))
        return parse_retry_after(*v, now);
    return std::nullopt;
}
}  // namespace detail
}  // namespace digital_delivery

#endif
