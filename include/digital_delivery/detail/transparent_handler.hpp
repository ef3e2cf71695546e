//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_DETAIL_TRANSPARENT_HANDLER_HPP
#define DIGITAL_DELIVERY_DETAIL_TRANSPARENT_HANDLER_HPP

// Our internal handler wrappers (decoding the response before calling the
// user's handler) are transparent to Asio's associators: the executor,
// allocator and cancellation slot are those of the wrapped handler. A wrapper
// opts in with `using inner_handler_type = ...;` and a member `handler`.

#include <boost/asio/associator.hpp>

#include <concepts>

namespace digital_delivery {
namespace detail {

template <class T>
concept transparent_handler = requires(const T& t) {
    typename T::inner_handler_type;
    { t.handler } -> std::convertible_to<const typename T::inner_handler_type&>;
};

}  // namespace detail
}  // namespace digital_delivery

namespace boost {
namespace asio {

template <template <typename, typename> class Associator, class T, class DefaultCandidate>
    requires ::digital_delivery::detail::transparent_handler<T>
struct associator<Associator, T, DefaultCandidate>
{
    using inner = typename T::inner_handler_type;
    using type = typename Associator<inner, DefaultCandidate>::type;
    static type get(const T& h, const DefaultCandidate& c = DefaultCandidate()) noexcept
    {
        return Associator<inner, DefaultCandidate>::get(h.handler, c);
    }
};

}  // namespace asio
}  // namespace boost

#endif
