//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_DETAIL_TRAILING_ARGS_HPP
#define DIGITAL_DELIVERY_DETAIL_TRAILING_ARGS_HPP

// The one rule for the trailing arguments of every asynchronous operation
// (docs/operations.md):
//
//   async_<name>(client&, <the operation's own arguments>...,
//             [its own options], [request_options], [diagnostics&], [token])
//
// each optional, in this order. An operation without options of its own
// passes `void` as `OpOptions`. Anything not recognised is the completion
// token; without one, the default token (default_token.hpp) is used.

#include <digital_delivery/detail/default_token.hpp>
#include <digital_delivery/diagnostics.hpp>
#include <digital_delivery/request_options.hpp>

#include <boost/asio/async_result.hpp>

#include <array>
#include <cstddef>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace digital_delivery {
namespace detail {

enum class trailing_kind
{
    op_options,
    options,
    diag,
    token,
};

template <class OpOptions, class T>
inline constexpr trailing_kind trailing_kind_of =
    (!std::is_void_v<OpOptions> && std::is_same_v<std::remove_cvref_t<T>, OpOptions>) ? trailing_kind::op_options
    : std::is_same_v<std::remove_cvref_t<T>, request_options>                          ? trailing_kind::options
    : std::is_same_v<T, diagnostics&>                                                  ? trailing_kind::diag
                                                                                       : trailing_kind::token;

/// Arguments that land in the token position but are mistakes, not tokens: a
/// string (an id or path too many), a diagnostics passed by value (it must be
/// an lvalue), or one of the operation's own argument types `Own...`.
template <class T, class... Own>
inline constexpr bool mistaken_token =
    std::is_convertible_v<T, std::string_view> || std::is_same_v<std::remove_cvref_t<T>, diagnostics> ||
    (std::is_same_v<std::remove_cvref_t<T>, Own> || ...);

/// The trailing arguments `Rest...` of an operation whose own options are
/// `OpOptions` (or void) and whose own argument types are `Own...`.
template <class OpOptions, class... Rest>
struct trailing
{
    static constexpr std::size_t n = sizeof...(Rest);

    static consteval std::array<trailing_kind, n + 1> kinds_of()
    {
        return {trailing_kind_of<OpOptions, Rest>..., trailing_kind::token};
    }

    /// Right order, none repeated, at most one token.
    template <class... Own>
    static consteval bool valid()
    {
        constexpr auto kinds = kinds_of();
        for (std::size_t i = 1; i < n; ++i)
            if (static_cast<int>(kinds[i]) <= static_cast<int>(kinds[i - 1]))
                return false;
        return ((trailing_kind_of<OpOptions, Rest> != trailing_kind::token || !mistaken_token<Rest, Own...>) && ...);
    }

    static consteval std::size_t index(trailing_kind k)
    {
        constexpr auto kinds = kinds_of();
        for (std::size_t i = 0; i < n; ++i)
            if (kinds[i] == k)
                return i;
        return n;
    }
};

/// The trailing arguments, as std::forward_as_tuple of them, with accessors.
template <class OpOptions, class... Rest>
class trailing_args
{
    using info = trailing<OpOptions, Rest...>;
    std::tuple<Rest&&...> args_;

public:
    /// A completion token was passed (else the default token applies).
    static constexpr bool has_token = info::index(trailing_kind::token) < info::n;

    explicit trailing_args(Rest&&... rest) : args_(std::forward<Rest>(rest)...) {}

    /// The operation's own options, or nullptr.
    auto op_options() const
    {
        constexpr std::size_t i = info::index(trailing_kind::op_options);
        if constexpr (i < info::n)
            return static_cast<const OpOptions*>(&std::get<i>(args_));
        else
            return static_cast<const std::conditional_t<std::is_void_v<OpOptions>, int, OpOptions>*>(nullptr);
    }

    const request_options* options() const
    {
        constexpr std::size_t i = info::index(trailing_kind::options);
        if constexpr (i < info::n)
            return &std::get<i>(args_);
        else
            return nullptr;
    }

    diagnostics* diag() const
    {
        constexpr std::size_t i = info::index(trailing_kind::diag);
        if constexpr (i < info::n)
            return &std::get<i>(args_);
        else
            return nullptr;
    }

    /// async_initiate with the trailing token, or the default token when there
    /// is none. `init` is called as init(handler, diagnostics*, a...): the
    /// diagnostics the operation fills (the caller's, or for the default
    /// token its own, from which the exception is built).
    template <class Signature, class Initiation, class... A>
    auto initiate(Initiation init, A&&... a)
    {
        constexpr std::size_t ti = info::index(trailing_kind::token);
        if constexpr (ti < info::n)
        {
            // An rvalue token is passed on as its type, an lvalue one as a reference.
            using element = std::tuple_element_t<ti, std::tuple<Rest&&...>>;
            using token = std::conditional_t<std::is_rvalue_reference_v<element>, std::remove_reference_t<element>, element>;
            return boost::asio::async_initiate<token, Signature>(
                bind_diag_initiation<Initiation>{std::move(init), diag()}, std::get<ti>(args_), std::forward<A>(a)...
            );
        }
        else
        {
            return initiate_default<Signature>(std::move(init), diag(), std::forward<A>(a)...);
        }
    }
};

template <class OpOptions, class... Rest>
trailing_args<OpOptions, Rest...> make_trailing(Rest&&... rest)
{
    return trailing_args<OpOptions, Rest...>(std::forward<Rest>(rest)...);
}

}  // namespace detail
}  // namespace digital_delivery

#endif
