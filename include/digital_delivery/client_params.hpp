//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
//
#ifndef DIGITAL_DELIVERY_CLIENT_PARAMS_HPP
#define DIGITAL_DELIVERY_CLIENT_PARAMS_HPP

#include <digital_delivery/rate_limit.hpp>
#include <digital_delivery/retry.hpp>

#include <chrono>
#include <string>

namespace digital_delivery {

/// Configuration of a client: a plain aggregate, every default spelled out.
///
/// \code
/// digital_delivery::client_params p{
///     .base_url = "https://dd.example.com/api/v1/external",
///     .api_key = std::getenv("DIGITAL_DELIVERY_API_KEY"),
/// };
/// \endcode
struct client_params
{
    /// Absolute http(s) URL of the API, its path ending in /api/v1/external.
    /// A trailing slash is ignored. Required.
    std::string base_url;

    /// The store's API key, sent as X-Auth-Token. It is never logged and never
    /// appears in diagnostics or error messages. Required.
    std::string api_key;

    /// Sent as User-Agent.
    std::string user_agent = "digital_delivery/0.1";

    /// Time limit of one attempt of one request (connect + send + receive),
    /// passed to the transport as http_request::timeout. Default 30 s.
    std::chrono::milliseconds request_timeout{std::chrono::seconds(30)};

    /// The client-side token bucket (default: the API's 40 points per 60 s).
    /// Every client of the same (base_url, api_key) in the process shares one
    /// bucket (with rate_limit.store = shared_memory: every process of the
    /// host); the first client's settings create it. See docs/rate-limiting.md.
    rate_limit_params rate_limit{};

    /// Retries of transient failures (429, 5xx, timeouts, connection errors):
    /// only for idempotent endpoints, or when the request provably did not
    /// reach the server. See docs/rate-limiting.md.
    retry_params retry{};
};

}  // namespace digital_delivery

#endif
