//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
//
#ifndef DIGITAL_DELIVERY_REQUEST_OPTIONS_HPP
#define DIGITAL_DELIVERY_REQUEST_OPTIONS_HPP

#include <digital_delivery/detail/scheduler_core.hpp>
#include <digital_delivery/http_message.hpp>
#include <digital_delivery/retry.hpp>

#include <chrono>
#include <optional>

namespace digital_delivery {

/// Per-request options, passed explicitly after the request's arguments:
/// `co_await dd::async_get_order(client, id, dd::request_options{.timeout = 5s});`
struct request_options
{
    /// Overrides client_params::request_timeout for each attempt.
    std::optional<std::chrono::milliseconds> timeout;

    /// One deadline for the whole operation: rate-limit waits, retry backoff
    /// and every attempt. Expiry: client_errc::deadline_exceeded, or
    /// client_errc::rate_limit_wait_exceeds_deadline when the points cannot
    /// arrive in time (known at once, nothing is sent).
    std::optional<std::chrono::steady_clock::time_point> deadline;

    /// Scheduling class when waiting for rate-limit points.
    priority prio = priority::normal;

    /// Overrides client_params::retry for this request.
    std::optional<retry_params> retry;

    /// Extra header fields (names must not be X-Auth-Token, Host or
    /// Content-Length; values must not contain CR or LF).
    http_headers extra_headers;
};

}  // namespace digital_delivery

#endif
