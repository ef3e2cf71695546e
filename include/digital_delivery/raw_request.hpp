//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
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
/// boost::json::value v = co_await dd::async_raw_request(client, dd::http_method::get, "/orders/" + id + "/new_beta");
/// auto [ec, r] = co_await dd::async_raw_request(client, dd::http_method::post, "/orders/x/notify",
///                                               boost::json::value{{"email", "a@example.com"}},
///                                               dd::request_options{.timeout = 5s}, diag,
///                                               asio::as_tuple(asio::deferred));
/// \endcode
///
/// Call shape: `async_raw_request(client, method, path, [raw_query],
/// [body], [request_options], [diagnostics&], [token])`, the optional
/// arguments in this order:
///  - `path` is relative to client_params::base_url, sent as given (so
///    percent-encode ids yourself). It must start with '/', contain only
///    RFC 3986 path characters (no '{', '}', '?', '#', spaces or controls;
///    '%' only as %HH) and no "." or ".." segment; otherwise the operation
///    completes with client_errc::invalid_argument without sending anything;
///  - `raw_query`: name/value pairs, percent-encoded by the client;
///  - the body: a boost::json::value (or json::object / json::array /
///    std::optional<json::value>), serialized with Content-Type
///    application/json;
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
#include <digital_delivery/request_options.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace digital_delivery {

/// Query parameters of a raw request: name and unencoded value.
using raw_query = std::vector<std::pair<std::string, std::string>>;

namespace detail {

using raw_json_handler = boost::asio::any_completion_handler<void(error_code, boost::json::value)>;

/// Checks a caller-supplied path (see the file comment). Returns
/// client_errc::invalid_argument and the reason, or no error.
DIGITAL_DELIVERY_DECL error_code validate_raw_path(std::string_view path, std::string& why);

/// Builds the request through client_impl::prepare (an endpoint_info whose
/// path template is the validated path), or records why it must not be sent.
DIGITAL_DELIVERY_DECL void prepare_raw_request(
    const client_impl& impl,
    http_method method,
    std::string_view path,
    const raw_query* query,
    const boost::json::value* body,
    const request_options* opts,
    prepared_request& out
);

/// Sends it through client_impl::async_execute and parses the body.
DIGITAL_DELIVERY_DECL void launch_raw(std::shared_ptr<client_impl> impl, prepared_request p, diagnostics* diag, raw_json_handler h);

/// Wraps the user's handler: http_response -> json::value.
struct raw_decoding_handler
{
    using inner_handler_type = raw_json_handler;
    inner_handler_type handler;
    diagnostics* diag;
    DIGITAL_DELIVERY_DECL void operator()(error_code ec, http_response r);
};

enum class raw_arg
{
    query,
    body,
    options,
    diag,
    token,
};

template <class T>
struct raw_kind_of
{
    using U = std::remove_cvref_t<T>;
    static constexpr raw_arg value =
        std::is_same_v<U, raw_query> ? raw_arg::query
        : (std::is_same_v<U, boost::json::value> || std::is_same_v<U, boost::json::object> ||
           std::is_same_v<U, boost::json::array> || std::is_same_v<U, std::optional<boost::json::value>>)
            ? raw_arg::body
        : std::is_same_v<U, request_options> ? raw_arg::options
        : std::is_same_v<T, diagnostics&>    ? raw_arg::diag
                                             : raw_arg::token;
};

template <class... Rest>
consteval bool valid_raw_trailing()
{
    return kinds_in_order<raw_kind_of, Rest...>() && ((raw_kind_of<Rest>::value != raw_arg::token || !mistaken_token<Rest>) && ...);
}

template <raw_arg K, class... Rest>
consteval std::size_t raw_index()
{
    return index_of_kind<raw_kind_of, K, Rest...>();
}

struct raw_initiation
{
    template <class Handler>
    void operator()(Handler&& h, std::shared_ptr<client_impl> impl, prepared_request p, diagnostics* diag) const
    {
        launch_raw(std::move(impl), std::move(p), diag, raw_json_handler(std::forward<Handler>(h)));
    }
};

inline const boost::json::value* as_body(const boost::json::value& v, boost::json::value&) { return &v; }
inline const boost::json::value* as_body(const std::optional<boost::json::value>& v, boost::json::value&)
{
    return v ? &*v : nullptr;
}
inline const boost::json::value* as_body(const boost::json::object& o, boost::json::value& store)
{
    store = o;
    return &store;
}
inline const boost::json::value* as_body(const boost::json::array& a, boost::json::value& store)
{
    store = a;
    return &store;
}

}  // namespace detail

/// A request to any path of the API through the client's pipeline. See the
/// file comment for the arguments. Completion: `void(error_code, boost::json::value)`.
/// Everything is built before this returns: a deferred operation does not
/// refer to the arguments.
template <class... Rest>
    requires(detail::valid_raw_trailing<Rest...>())
auto async_raw_request(client& c, http_method method, std::string_view path, Rest&&... rest)
{
    using signature = void(error_code, boost::json::value);
    auto args = std::forward_as_tuple(std::forward<Rest>(rest)...);
    constexpr std::size_t n = sizeof...(Rest);
    constexpr std::size_t qi = detail::raw_index<detail::raw_arg::query, Rest...>();
    constexpr std::size_t bi = detail::raw_index<detail::raw_arg::body, Rest...>();
    constexpr std::size_t oi = detail::raw_index<detail::raw_arg::options, Rest...>();
    constexpr std::size_t di = detail::raw_index<detail::raw_arg::diag, Rest...>();
    constexpr std::size_t ti = detail::raw_index<detail::raw_arg::token, Rest...>();
    const raw_query* query = nullptr;
    const boost::json::value* body = nullptr;
    boost::json::value body_store;
    const request_options* opts = nullptr;
    diagnostics* diag = nullptr;
    if constexpr (qi < n)
        query = &std::get<qi>(args);
    if constexpr (bi < n)
        body = detail::as_body(std::get<bi>(args), body_store);
    if constexpr (oi < n)
        opts = &std::get<oi>(args);
    if constexpr (di < n)
        diag = &std::get<di>(args);

    detail::prepared_request p;
    detail::prepare_raw_request(*c.impl(), method, path, query, body, opts, p);

    return detail::initiate_with_trailing_token<signature, ti>(detail::raw_initiation{}, args, c.impl(), std::move(p), diag);
}

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/raw_request.ipp>
#endif

#endif
