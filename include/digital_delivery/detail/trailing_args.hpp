//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
//
#ifndef DIGITAL_DELIVERY_DETAIL_TRAILING_ARGS_HPP
#define DIGITAL_DELIVERY_DETAIL_TRAILING_ARGS_HPP

// The optional trailing arguments of the request functions (endpoint
// functions: [options] [diagnostics&] [token]; async_raw_request: [query]
// [body] [options] [diagnostics&] [token]). Each argument type has a kind,
// given by a classifier `KindOf<T>::value` of an enum whose enumerators are
// listed in the order the arguments must come and whose last one is `token`
// (anything not recognised is the completion token).

#include <digital_delivery/diagnostics.hpp>

#include <boost/asio/async_result.hpp>
#include <boost/asio/deferred.hpp>

#include <cstddef>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace digital_delivery {
namespace detail {

/// True when the kinds of `Rest` are strictly increasing: right order, none repeated.
template <template <class> class KindOf, class... Rest>
consteval bool kinds_in_order()
{
    using kind = std::remove_cv_t<decltype(KindOf<void>::value)>;
    constexpr kind kinds[] = {KindOf<Rest>::value..., kind::token};
    for (std::size_t i = 1; i < sizeof...(Rest); ++i)
        if (static_cast<int>(kinds[i]) <= static_cast<int>(kinds[i - 1]))
            return false;
    return true;
}

/// The position of the argument of kind `K` in `Rest`, or sizeof...(Rest).
template <template <class> class KindOf, auto K, class... Rest>
consteval std::size_t index_of_kind()
{
    using kind = decltype(K);
    constexpr kind kinds[] = {KindOf<Rest>::value..., kind::token};
    for (std::size_t i = 0; i < sizeof...(Rest); ++i)
        if (kinds[i] == K)
            return i;
    return sizeof...(Rest);
}

/// Arguments that land in the token position but are mistakes, not tokens: a
/// string (an id, path or query too many) or a diagnostics passed by value.
template <class T>
inline constexpr bool mistaken_token =
    std::is_convertible_v<T, std::string_view> || std::is_same_v<std::remove_cvref_t<T>, diagnostics>;

/// async_initiate with the trailing completion token at position `TI` of
/// `args` (std::forward_as_tuple of the trailing arguments), or
/// boost::asio::deferred when there is none (TI == the tuple's size).
template <class Signature, std::size_t TI, class Initiation, class Args, class... A>
auto initiate_with_trailing_token(Initiation init, Args& args, A&&... a)
{
    if constexpr (TI < std::tuple_size_v<Args>)
    {
        // An rvalue token is passed on as its type, an lvalue one as a reference.
        using element = std::tuple_element_t<TI, Args>;
        using token = std::conditional_t<std::is_rvalue_reference_v<element>, std::remove_reference_t<element>, element>;
        return boost::asio::async_initiate<token, Signature>(init, std::get<TI>(args), std::forward<A>(a)...);
    }
    else
    {
        return boost::asio::async_initiate<const boost::asio::deferred_t&, Signature>(
            init, boost::asio::deferred, std::forward<A>(a)...
        );
    }
}

}  // namespace detail
}  // namespace digital_delivery

#endif
