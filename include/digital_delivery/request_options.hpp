//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
//
#ifndef DIGITAL_DELIVERY_REQUEST_OPTIONS_HPP
#define DIGITAL_DELIVERY_REQUEST_OPTIONS_HPP

#include <digital_delivery/http_message.hpp>

#include <chrono>
#include <optional>

namespace digital_delivery {

/// Per-request options, passed explicitly after the request's arguments:
/// `co_await dd::get_order(client, id, dd::request_options{.timeout = 5s});`
struct request_options
{
    /// Overrides client_params::request_timeout for each attempt.
    std::optional<std::chrono::milliseconds> timeout;

    /// Extra header fields (names must not be X-Auth-Token, Host or
    /// Content-Length; values must not contain CR or LF).
    http_headers extra_headers;
};

}  // namespace digital_delivery

#endif
