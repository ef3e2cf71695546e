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

#include <cstddef>
#include <string_view>
#include <type_traits>

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

}  // namespace detail
}  // namespace digital_delivery

#endif
