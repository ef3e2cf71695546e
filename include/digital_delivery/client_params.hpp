//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_CLIENT_PARAMS_HPP
#define DIGITAL_DELIVERY_CLIENT_PARAMS_HPP

/// \file
/// `client_params`: what a client is configured with (base URL, API key, timeouts,
/// retries, the rate limit, observer and tracer), given to its constructor.

#include <digital_delivery/http_message.hpp>
#include <digital_delivery/observer.hpp>
#include <digital_delivery/trace_context.hpp>
#include <digital_delivery/tracer.hpp>
#include <digital_delivery/rate_limit.hpp>
#include <digital_delivery/retry.hpp>

#include <chrono>
#include <memory>
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
    std::string base_url{};

    /// The store's API key, sent as X-Auth-Token. It is never logged and never
    /// appears in diagnostics or error messages. Required.
    std::string api_key{};

    /// Sent as User-Agent.
    std::string user_agent = default_user_agent;

    /// Time limit of one attempt of one request (connect + send + receive),
    /// passed to the transport as http_request::timeout, and never past the
    /// operation's deadline. Default (and what zero means):
    /// default_request_timeout, 30 s.
    std::chrono::milliseconds request_timeout{default_request_timeout};

    /// The deadline of every request operation that has none of its own
    /// (request_options::deadline), counted from the operation's start: it
    /// covers rate-limit waits, every attempt (each attempt's timeout is cut
    /// to what is left) and the backoff between them. Expiry:
    /// client_errc::deadline_exceeded (also when it cuts an attempt in
    /// flight), or at once client_errc::rate_limit_wait_exceeds_deadline
    /// when the rate-limit points cannot arrive in time; an attempt that runs
    /// out of its own request_timeout first ends with
    /// client_errc::request_timeout. condition::timeout covers all three. Default 60 s: a server that accepts
    /// connections and never answers costs at most this. Zero: no default
    /// deadline (operations then end by their attempts and retries alone).
    /// Work queued for longer on purpose (a bulk job sending hundreds of
    /// requests at once) passes its own deadline. See docs/operations.md.
    std::chrono::milliseconds operation_timeout{std::chrono::seconds(60)};

    /// The client-side token bucket (default: the API's 40 points per 60 s).
    /// Every client of the same (base_url, api_key) in the process shares one
    /// bucket (with rate_limit.store = shm_rate_limit_store(): every process
    /// of the host; with a redis_rate_limit_store: every process of every host
    /// using that Redis server); the first client's settings create it. See
    /// docs/rate-limiting.md.
    rate_limit_params rate_limit{};

    /// Retries of transient failures (429, 5xx, timeouts, connection errors):
    /// only for idempotent endpoints, or when the request provably did not
    /// reach the server. See docs/rate-limiting.md.
    retry_params retry{};

    /// Receives an event at every step of every request: start, response,
    /// retry, rate-limiter wait, throttle, upload progress and refresh, end
    /// (docs/observability.md). Ready-made: json_logger, metrics_observer.
    /// Default: none (then a request pays one null test per step).
    std::shared_ptr<digital_delivery::observer> observer{};

    /// Receives the spans of every operation, attempt and wait
    /// (docs/observability.md, "Traces"). Ready-made: otlp_exporter.
    /// Default: none (then, without a parent or trace.context, no trace
    /// header is sent and a request pays one null test per step).
    std::shared_ptr<digital_delivery::tracer> tracer{};

    /// Trace context settings: the parent of each operation (a provider),
    /// unsampled parents, headers to the object storage.
    trace_params trace{};
};

}  // namespace digital_delivery

#endif
