//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
//
#ifndef DIGITAL_DELIVERY_CLIENT_PARAMS_HPP
#define DIGITAL_DELIVERY_CLIENT_PARAMS_HPP

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
};

}  // namespace digital_delivery

#endif
