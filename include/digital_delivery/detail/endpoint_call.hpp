//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_DETAIL_ENDPOINT_CALL_HPP
#define DIGITAL_DELIVERY_DETAIL_ENDPOINT_CALL_HPP

// How an endpoint descriptor becomes an awaitable request function
// (docs/architecture.md):
//
//   request_fn<D>::operator()(client&, ids..., [payload], [request_options],
//                             [diagnostics&], [token])
//     -> prepare_endpoint<D>: validate + encode the payload, build the URL and
//        headers (non-template client_impl::prepare)            [call site]
//     -> async_initiate<Token, void(error_code, R)>: the user's handler is
//        type-erased into any_completion_handler                [call site]
//     -> launch<D>: wraps it in decoding_handler<D>, calls the non-template
//        client_impl::async_execute (limiter, transport, status mapping)
//     -> decoding_handler<D>: JSON -> D::response -> R, completes the user.

#include <digital_delivery/client.hpp>
#include <digital_delivery/string_ref.hpp>
#include <digital_delivery/detail/client_impl.hpp>
#include <digital_delivery/detail/trailing_args.hpp>
#include <digital_delivery/detail/transparent_handler.hpp>
#include <digital_delivery/diagnostics.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/request_options.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/describe/members.hpp>
#include <boost/mp11/algorithm.hpp>

#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace digital_delivery {

class client;

/// Defaults every endpoint descriptor inherits (docs/architecture.md lists
/// every member a descriptor may set). What can be derived is not set:
/// the cost (GET 1 point, writes 2), idempotence (all but POST, unless the
/// descriptor says otherwise) and the result (the member of a one-member
/// envelope such as `{"order": ...}`, else the response itself).
struct endpoint_defaults
{
    using query = void;                              ///< Query-string type (a described struct of optionals).
    using body = void;                               ///< JSON body type (a described struct).
    static constexpr std::string_view body_root{};   ///< Wrap the body as {"<root>": body} when set.
    static constexpr bool body_optional = false;     ///< The payload may be omitted (sent as {}).
    static constexpr int max_per_page = 0;           ///< Upper bound of per_page for list endpoints.
};

namespace detail {

// ---- compile-time path templates ------------------------------------------------

/// Counts the {placeholders} of a path template, and refuses (at compile time,
/// when used in a constant expression) a template that is not of the form
/// "/literal/{name}/literal": each placeholder a whole segment, names
/// [a-z_], braces balanced.
consteval std::size_t path_arity(std::string_view t)
{
    if (t.empty() || t[0] != '/')
        throw "path template must start with '/'";
    std::size_t n = 0;
    for (std::size_t i = 0; i < t.size(); ++i)
    {
        if (t[i] == '}')
            throw "unbalanced '}' in path template";
        if (t[i] != '{')
            continue;
        if (t[i - 1] != '/')
            throw "a placeholder must be a whole path segment";
        std::size_t j = i + 1;
        while (j < t.size() && ((t[j] >= 'a' && t[j] <= 'z') || t[j] == '_'))
            ++j;
        if (j == i + 1 || j >= t.size() || t[j] != '}')
            throw "placeholder names are [a-z_]+ and end with '}'";
        if (j + 1 < t.size() && t[j + 1] != '/')
            throw "a placeholder must be a whole path segment";
        ++n;
        i = j;
    }
    return n;
}

/// A path id: a view that refuses a temporary string (docs/operations.md#lifetimes-views-in-copies-inside).
template <std::size_t>
using id_arg = string_ref;

template <class D>
using payload_t = std::conditional_t<!std::is_void_v<typename D::body>, typename D::body, typename D::query>;

template <class D>
inline constexpr bool has_payload = !std::is_void_v<payload_t<D>>;

template <class D>
inline constexpr bool payload_omittable =
    !has_payload<D> || (!std::is_void_v<typename D::query> && std::is_void_v<typename D::body>) || D::body_optional;

template <class Envelope, class Member>
Member member_type_of(Member Envelope::*);

/// Rate-limit points of a request: the API charges GET 1, writes 2 (the one
/// home of this rule: endpoints through cost_of, raw requests directly).
constexpr int request_cost(http_method m) noexcept
{
    return m == http_method::get ? 1 : 2;
}

template <class D>
inline constexpr int cost_of = request_cost(D::method);

/// Safe to resend after it may have reached the server: every method but
/// POST, unless the descriptor sets `idempotent`.
template <class D>
consteval bool idempotent_of()
{
    if constexpr (requires { D::idempotent; })
        return D::idempotent;
    else
        return D::method != http_method::post;
}

/// A described struct with exactly one member: `{"order": ...}`.
template <class T>
consteval bool is_envelope()
{
    if constexpr (std::is_class_v<T>)
    {
        if constexpr (boost::describe::has_describe_members<T>::value)
            return boost::mp11::mp_size<boost::describe::describe_members<T, boost::describe::mod_public>>::value == 1;
        else
            return false;
    }
    else
    {
        return false;
    }
}

template <class T, bool = is_envelope<T>()>
struct result_of
{
    using type = T;
};
template <class T>
struct result_of<T, true>
{
    using member = boost::mp11::mp_front<boost::describe::describe_members<T, boost::describe::mod_public>>;
    using type = decltype(member_type_of(member::pointer));
};

/// What the request function completes with: the envelope, or the member the
/// descriptor unwraps; void for responses without content.
template <class D>
using result_t = typename result_of<typename D::response>::type;

template <class R>
struct signature_for
{
    using type = void(error_code, R);
};
template <>
struct signature_for<void>
{
    using type = void(error_code);
};
template <class D>
using signature_t = typename signature_for<result_t<D>>::type;

/// A type nobody can pass: the payload parameter of endpoints without one.
class no_payload
{
    no_payload() = default;
};
template <class D>
using payload_param = std::conditional_t<has_payload<D>, payload_t<D>, no_payload>;

/// The query type of a list endpoint, else `no_payload`.
template <class D>
using query_param = std::conditional_t<!std::is_void_v<typename D::query>, typename D::query, no_payload>;

/// The name of an endpoint of DIGITAL_DELIVERY_ENDPOINTS (endpoints.hpp
/// specializes it from that list, the one place a library endpoint is named).
template <class D>
inline constexpr std::string_view listed_endpoint_name{};

/// The endpoint's name for observers: the library's list, else `D::name` (a
/// descriptor of the user's), else its path template.
template <class D>
consteval std::string_view endpoint_name_of()
{
    if constexpr (!listed_endpoint_name<D>.empty())
        return listed_endpoint_name<D>;
    else if constexpr (requires { std::string_view(D::name); })
        return D::name;
    else
        return D::path;
}

/// A DELETE of the resource its path names, answering nothing: a 404 on a
/// retry after an attempt that may have been processed means that attempt
/// deleted it (docs/ambiguous-writes.md).
template <class D>
consteval bool gone_means_done_of()
{
    return D::method == http_method::delete_ && std::is_void_v<typename D::response>;
}

template <class D>
constexpr endpoint_info endpoint_info_of()
{
    return endpoint_info{D::method, D::path, cost_of<D>, idempotent_of<D>(), endpoint_name_of<D>(), gone_means_done_of<D>()};
}

/// What the library compiles once per endpoint: encoding, decoding and the
/// type-erased launch. Only declared here, so that a call site instantiates
/// none of it: the definitions are in <digital_delivery/impl/engine/endpoint_call.hpp>,
/// included by this header in header-only mode; with separate compilation
/// src.hpp instantiates them for every endpoint of DIGITAL_DELIVERY_ENDPOINTS
/// (a descriptor of your own includes <digital_delivery/custom_endpoint.hpp>).
template <class D>
struct endpoint_ops
{
    using handler_type = boost::asio::any_completion_handler<signature_t<D>>;

    /// Validates and encodes the payload (null: none), then builds the
    /// request with client_impl::prepare.
    static void prepare(
        const client_impl& impl,
        std::span<const std::string_view> ids,
        const payload_param<D>* payload,
        const request_options* opts,
        prepared_request& out
    );

    /// Validates and encodes a list endpoint's query (pagination encodes it once).
    static void encode_query(const query_param<D>& q, query_params& out, error_code& ec, std::string& why);

    /// Runs the request and completes `h` with the decoded result.
    static void launch(std::shared_ptr<client_impl> impl, prepared_request&& p, diagnostics* diag, handler_type h);

    /// The operation without a token: an awaitable that throws
    /// error_with_diagnostics.
    static boost::asio::awaitable<result_t<D>> await(std::shared_ptr<client_impl> impl, prepared_request&& p, diagnostics* diag);
};

template <class D>
struct endpoint_initiation
{
    template <class Handler>
    void operator()(Handler&& h, diagnostics* diag, std::shared_ptr<client_impl> impl, prepared_request&& p) const
    {
        endpoint_ops<D>::launch(std::move(impl), std::move(p), diag, typename endpoint_ops<D>::handler_type(std::forward<Handler>(h)));
    }
};

}  // namespace detail

/// The request function of endpoint descriptor `D` (docs/operations.md):
///
///     async_<name>(client, id..., [payload], [request_options], [diagnostics&], [token])
///
///  - one `std::string_view` per `{placeholder}` of `D::path`;
///  - the payload (`D::body` or `D::query`), omittable for queries and
///    optional bodies;
///  - completion signature `void(error_code, R)` (`void(error_code)` when the
///    endpoint has no response content); without a token, an awaitable that
///    throws error_with_diagnostics.
///
/// Everything the request needs is built before the call returns (the
/// operation owns it): arguments may be temporaries.
///
/// Per-operation cancellation: terminal cancellation through the token's
/// cancellation slot interrupts the operation at any stage and completes it
/// with boost::asio::error::operation_aborted; the client stays usable.
template <class D, class = std::make_index_sequence<detail::path_arity(D::path)>>
class request_fn;

template <class D, std::size_t... I>
class request_fn<D, std::index_sequence<I...>>
{
public:
    using descriptor = D;
    using payload_type = detail::payload_t<D>;
    using result_type = detail::result_t<D>;
    using signature = detail::signature_t<D>;

    static_assert(
        std::is_void_v<typename D::query> || std::is_void_v<typename D::body>,
        "an endpoint has a query or a body, not both"
    );

    /// With the payload.
    template <class... Rest>
        requires(detail::has_payload<D> && detail::trailing<void, Rest...>::template valid<payload_type>())
    auto operator()(client& c, detail::id_arg<I>... ids, detail::payload_param<D> payload, Rest&&... rest) const
    {
        return dispatch(c, {ids...}, &payload, detail::make_trailing<void>(std::forward<Rest>(rest)...));
    }

    /// Without the payload (endpoints that have none, queries, optional bodies).
    template <class... Rest>
        requires(detail::payload_omittable<D> && detail::trailing<void, Rest...>::template valid<payload_type>())
    auto operator()(client& c, detail::id_arg<I>... ids, Rest&&... rest) const
    {
        return dispatch(c, {ids...}, static_cast<const detail::payload_param<D>*>(nullptr), detail::make_trailing<void>(std::forward<Rest>(rest)...));
    }

private:
    static constexpr std::size_t arity = sizeof...(I);

    template <class Trailing>
    static auto dispatch(client& c, std::array<std::string_view, arity> ids, const detail::payload_param<D>* payload, Trailing t)
    {
        detail::prepared_request p;
        const auto& impl = detail::access::impl(c);
        detail::endpoint_ops<D>::prepare(*impl, std::span<const std::string_view>(ids), payload, t.options(), p);
        if constexpr (Trailing::has_token)
            return t.template initiate<signature>(detail::endpoint_initiation<D>{}, impl, std::move(p));
        else
            return detail::endpoint_ops<D>::await(impl, std::move(p), t.diag());
    }
};

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/engine/endpoint_call.hpp>
#endif

#endif
