//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_RAW_REQUEST_HPP
#define DIGITAL_DELIVERY_RAW_REQUEST_HPP

/// \file
/// Requests to paths the library has no descriptor for (new Beta endpoints,
/// undocumented fields), through the same pipeline as every request function:
/// authentication headers, rate limiter and scheduler, retries, status →
/// typed error mapping, rate-limit recording.
///
/// \code
/// dd::raw_request r{.method = dd::http_method::get, .path = "/orders/o1/new_beta"};
/// boost::json::value v = co_await dd::async_raw_request(client, r);
/// auto [ec, notified] = co_await dd::async_raw_request(
///     client, {.method = dd::http_method::post, .path = "/orders/o1/notify", .body = R"({"email":"a@example.com"})"},
///     dd::request_options{.timeout = 5s}, diag, asio::as_tuple(asio::deferred));
/// \endcode
///
/// Call shape (docs/operations.md): `async_raw_request(client, raw_request,
/// [request_options], [diagnostics&], [token])`.
///  - `raw_request::path` is relative to client_params::base_url, sent as
///    given (so percent-encode ids yourself). It must start with '/', contain
///    only RFC 3986 path characters (no '{', '}', '?', '#', spaces or
///    controls; '%' only as %HH) and no "." or ".." segment; otherwise the
///    operation completes with client_errc::invalid_argument without sending
///    anything;
///  - `raw_request::query`: name/value pairs, percent-encoded by the client;
///  - `raw_request::body`: JSON text, sent with Content-Type
///    application/json (empty: no body); text that is not JSON is refused
///    with client_errc::invalid_argument;
///  - completion signature `void(error_code, boost::json::value)`: the
///    parsed response body (null for an empty body). On an API error the
///    error code is typed as for the request functions and the value holds
///    the error body when it is JSON. A 2xx body that is not JSON completes
///    with client_errc::invalid_json.
///
/// Cost 1 point for GET, 2 otherwise; GET, PUT and DELETE are treated as
/// idempotent (retried after the request may have reached the server), POST
/// and PATCH are not.
///
/// Per-operation cancellation: as for the request functions (terminal).

#include <digital_delivery/client.hpp>
#include <digital_delivery/detail/client_impl.hpp>
#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/detail/trailing_args.hpp>
#include <digital_delivery/detail/transparent_handler.hpp>
#include <digital_delivery/diagnostics.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/http_message.hpp>
#include <digital_delivery/list_ref.hpp>
#include <digital_delivery/request_options.hpp>
#include <digital_delivery/string_ref.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace digital_delivery {

/// Query parameters of a raw request: name and unencoded value.
using raw_query = std::vector<std::pair<std::string, std::string>>;

/// What a raw request sends. It only refers to the caller's data: the
/// request is built (and copied) before async_raw_request returns.
struct raw_request
{
    http_method method = http_method::get;  ///< The method.
    /// Relative to the base URL, starting with '/'; see the file comment.
    string_ref path{};
    /// Unencoded name/value pairs, encoded by the client.
    list_ref<std::pair<std::string, std::string>> query{};
    /// JSON text of the body; empty: no body.
    string_ref body{};
};

namespace detail {

using raw_json_handler = boost::asio::any_completion_handler<void(error_code, boost::json::value)>;

/// Checks a caller-supplied path (see the file comment). Returns
/// client_errc::invalid_argument and the reason, or no error.
DIGITAL_DELIVERY_DECL error_code validate_raw_path(std::string_view path, std::string& why);

/// Builds the request through client_impl::prepare (an endpoint_info whose
/// path template is the validated path), or records why it must not be sent.
DIGITAL_DELIVERY_DECL void prepare_raw_request(
    const client_impl& impl,
    const raw_request& r,
    const request_options* opts,
    prepared_request& out
);

/// Sends it through client_impl::async_execute and parses the body.
DIGITAL_DELIVERY_DECL void launch_raw(std::shared_ptr<client_impl> impl, prepared_request p, diagnostics* diag, raw_json_handler h);

/// Wraps the user's handler: http_response -> json::value.
struct raw_decoding_handler
{
    using inner_handler_type = raw_json_handler;
    inner_handler_type handler{};
    diagnostics* diag{};
    DIGITAL_DELIVERY_DECL void operator()(error_code ec, http_response r);
};

struct raw_initiation
{
    template <class Handler>
    void operator()(Handler&& h, diagnostics* diag, std::shared_ptr<client_impl> impl, prepared_request p) const
    {
        launch_raw(std::move(impl), std::move(p), diag, raw_json_handler(std::forward<Handler>(h)));
    }
};

}  // namespace detail

/// A request to any path of the API through the client's pipeline. See the
/// file comment. Completion: `void(error_code, boost::json::value)`.
/// \param c The client.
/// \param r The request.
/// \param rest [request_options], [diagnostics&], [token].
/// \return What the completion token makes of the operation (an awaitable by default).
template <class... Rest>
    requires(detail::trailing<void, Rest...>::template valid<raw_request>())
auto async_raw_request(client& c, const raw_request& r, Rest&&... rest)
{
    auto t = detail::make_trailing<void>(std::forward<Rest>(rest)...);
    const auto& impl = detail::access::impl(c);
    detail::prepared_request p;
    detail::prepare_raw_request(*impl, r, t.options(), p);
    return t.template initiate<void(error_code, boost::json::value)>(detail::raw_initiation{}, impl, std::move(p));
}

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/engine/raw_request.ipp>
#endif

#endif
