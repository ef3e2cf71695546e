//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_DETAIL_CLIENT_IMPL_HPP
#define DIGITAL_DELIVERY_DETAIL_CLIENT_IMPL_HPP

// The non-template core of the client, compiled once (src.hpp) or inline in
// header-only mode. Everything behind async_execute works on plain
// http_request/http_response and any_completion_handler: no call site ever
// instantiates it.

#include <digital_delivery/client_params.hpp>
#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/diagnostics.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/http_message.hpp>
#include <digital_delivery/observer.hpp>
#include <digital_delivery/rate_limit.hpp>
#include <digital_delivery/retry.hpp>
#include <digital_delivery/request_options.hpp>
#include <digital_delivery/trace_context.hpp>
#include <digital_delivery/tracer.hpp>
#include <digital_delivery/transport.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace digital_delivery {
namespace detail {

/// Query parameters: name and unencoded value.
using query_params = std::vector<std::pair<std::string_view, std::string>>;

/// A request ready to go, or the reason it must not be sent.
struct prepared_request
{
    http_request request;
    error_code error;           ///< Set when rejected before sending.
    std::string error_message;  ///< Why (goes to diagnostics::client_message).
    http_method method = http_method::get;
    std::string path;           ///< For diagnostics: the path without query string.
    int cost = 1;               ///< Rate-limit points.
    bool idempotent = false;
    bool gone_means_done = false;  ///< endpoint_info::gone_means_done.
    priority prio = priority::normal;
    std::optional<std::chrono::steady_clock::time_point> deadline;
    std::optional<retry_params> retry;  ///< Per-request override.
    std::string_view endpoint;       ///< For observers: the endpoint's name (static storage).
    std::string_view path_template;  ///< For observers: static storage, or empty (raw requests: use path).
    // The trace parent travels in request.headers (`traceparent`,
    // `tracestate`): no member here, so that a request without a trace costs
    // nothing more to build, move and destroy.
};

/// What a request's completion carries into the decoding layer.
using raw_handler = boost::asio::any_completion_handler<void(error_code, http_response)>;

/// Describes one endpoint to the non-template request builder.
struct endpoint_info
{
    http_method method;
    std::string_view path_template;
    int cost;
    bool idempotent;
    /// For observers; static storage. Empty: raw request (the template is not kept).
    std::string_view name{};
    /// A 404 on a retry after a possibly processed attempt completes as
    /// success (detail::gone_means_done_of).
    bool gone_means_done = false;
};

class rate_limiter;  // impl/rate_limit/rate_limiter.hpp
class retry_budget;  // impl/retry/retry_state.hpp

class client_impl
{
public:
    /// Throws error_with_diagnostics(client_errc::invalid_base_url /
    /// invalid_argument) on a bad configuration.
    DIGITAL_DELIVERY_DECL client_impl(any_transport t, client_params p);

    boost::asio::any_io_executor get_executor() const { return transport_.get_executor(); }
    const client_params& params() const noexcept { return params_; }

    /// Builds the request: URL from the base URL, the path template with each
    /// `{placeholder}` replaced by the percent-encoded id, the encoded query,
    /// the headers (X-Auth-Token, Accept, Content-Type for bodies, User-Agent,
    /// the caller's extra headers) and the body. Records an error instead when
    /// an id or an extra header is invalid.
    DIGITAL_DELIVERY_DECL void prepare(
        prepared_request& out,
        const endpoint_info& ep,
        std::span<const std::string_view> ids,
        const query_params* query,
        std::string body,
        const request_options* opts
    ) const;

    /// Sends a prepared request through the transport (or completes with its
    /// recorded error, never inline), records the rate-limit headers, and maps
    /// a non-2xx status to an api_errc with diagnostics. Completes with the
    /// raw response in every case where one was received.
    DIGITAL_DELIVERY_DECL void async_execute(std::shared_ptr<client_impl> self, prepared_request&& p, diagnostics* diag, raw_handler h);

    /// The rate-limit state: the server's latest headers, or the bucket's estimate.
    DIGITAL_DELIVERY_DECL rate_limit_snapshot rate_limit() const;

    any_transport& transport() noexcept { return transport_; }
    rate_limiter& limiter() noexcept { return *limiter_; }
    /// The base URL's host[:port], for diagnostics.
    const std::string& host() const noexcept { return host_; }
    const std::shared_ptr<retry_budget>& budget() const noexcept { return budget_; }
    /// The installed observer, or null (the only test on the hot path).
    observer* obs() const noexcept { return obs_; }
    /// The installed tracer, or null.
    digital_delivery::tracer* tracer() const noexcept { return tracer_; }
    /// The parent an operation started with `opts` joins, by precedence:
    /// request_options::trace_parent; with a tracer or a context provider, a
    /// valid `traceparent` (and `tracestate`) among the extra headers, else
    /// the provider's. None when there is none.
    DIGITAL_DELIVERY_DECL std::optional<trace_context> trace_parent_of(const request_options* opts) const;
    /// The base URL's server.address (host name) and server.port, for spans.
    const std::string& server_address() const noexcept { return server_address_; }
    std::int64_t server_port() const noexcept { return server_port_; }

private:
    any_transport transport_;
    client_params params_;
    std::string base_;  // scheme://authority/base-path, no trailing slash
    std::string host_;  // its authority (host[:port]; a base URL has no user info)
    std::shared_ptr<rate_limiter> limiter_;
    std::shared_ptr<retry_budget> budget_;
    observer* obs_ = nullptr;  // params_.observer.get()
    digital_delivery::tracer* tracer_ = nullptr;  // params_.tracer.get()
    bool tracing_ = false;     // a tracer or a context provider: look for a parent
    std::string server_address_;
    std::int64_t server_port_ = 0;
};

/// Maps a non-2xx response of the API (JSON error bodies of either shape, or
/// anything else, such as a proxy's HTML 502) to an error code and fills the
/// diagnostics' server fields. Returns no error for 2xx.
DIGITAL_DELIVERY_DECL error_code classify_api_response(const http_response& r, diagnostics* diag);

struct response_facts;  // impl/http/sansio/response_facts.hpp

/// Same with the response's headers already read (read_response_facts): the
/// request pipeline's form, which reads them once for the limiter, the retry
/// decision and this (diagnostics::retry_after of a 429).
DIGITAL_DELIVERY_DECL error_code classify_api_response(const http_response& r, const response_facts& facts, diagnostics* diag);

/// Maps a non-2xx response of the object storage (S3-style XML) to an
/// error code; only <Code> and <Message> are kept (never a signature).
DIGITAL_DELIVERY_DECL error_code classify_storage_response(const http_response& r, diagnostics* diag);

/// The host[:port] of an absolute URL, without user info ("" if none).
DIGITAL_DELIVERY_DECL std::string url_host(std::string_view url);

/// Percent-encodes everything but RFC 3986 unreserved characters.
DIGITAL_DELIVERY_DECL void append_pct_encoded(std::string& out, std::string_view s);

}  // namespace detail
}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/engine/client_impl.ipp>
#endif

#endif
