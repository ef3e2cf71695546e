//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_LIST_REF_HPP
#define DIGITAL_DELIVERY_LIST_REF_HPP

/// \file
/// The lists of the request models (id lists) and of request_options (extra
/// header fields): a view of the caller's elements that refuses, at compile
/// time, a temporary container or a braced list (both are destroyed at the end
/// of the statement, before the request is built).
///
///     const std::string ids[] = {a.id, b.id};   // a named array: fine
///     p.asset_ids = ids;
///     p.asset_ids = owned_ids;                  // a named std::vector: fine
///     p.asset_ids = collect_ids();              // does not compile: name the vector first

#include <cstddef>
#include <iterator>
#include <ranges>
#include <span>
#include <type_traits>

namespace digital_delivery {

namespace detail {

template <class T>
inline constexpr bool refused_temporary_list_v = false;

/// A container (not a span) that holds its T elements contiguously.
template <class R, class T>
concept contiguous_container_of =
    std::is_class_v<std::remove_cvref_t<R>> && std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
    std::is_same_v<std::remove_cv_t<std::ranges::range_value_t<R>>, T>;

template <class R>
concept is_span = requires(const R& r) { []<class E, std::size_t N>(std::span<E, N>) {}(r); };

}  // namespace detail

/// A view of `const T` elements that outlive the statement: a named array, a
/// named container (std::vector, std::array, ...) or an explicit std::span.
template <class T>
class list_ref
{
public:
    using value_type = T;  ///< The element type.

    /// An empty list.
    constexpr list_ref() noexcept = default;

    /// An explicit view: the elements it sees must outlive the call.
    /// \param s The elements.
    constexpr list_ref(std::span<const T> s) noexcept : s_(s) {}

    /// A named array: `const std::string ids[] = {a, b};`.
    /// \param a The array.
    template <std::size_t N>
    constexpr list_ref(const T (&a)[N]) noexcept : s_(a)
    {
    }

    /// A named contiguous container (lvalue).
    /// \param r The container.
    template <class R>
        requires(detail::contiguous_container_of<R, T> && !detail::is_span<std::remove_cvref_t<R>>)
    constexpr list_ref(R& r) noexcept : s_(std::ranges::data(r), std::ranges::size(r))
    {
    }

    /// A temporary container: refused (see the message).
    template <class R>
        requires(detail::contiguous_container_of<R, T> && !detail::is_span<std::remove_cvref_t<R>> &&
                 !std::is_lvalue_reference_v<R>)
    list_ref(R&&)
    {
        static_assert(
            detail::refused_temporary_list_v<R>,
            "dd::list_ref (dd::id_list, request_options::extra_headers) refuses a temporary container: it is "
            "destroyed at the end of the statement, before the request is built. Name it first "
            "(const std::vector<std::string> ids = ...; or const std::string ids[] = {a, b};) and assign the "
            "variable (docs/operations.md#lifetimes-views-in-copies-inside)."
        );
    }

    /// A braced list (a temporary array) or elements written in place: refused
    /// (see the message).
    template <std::size_t N>
    list_ref(T (&&)[N])
    {
        refuse_braced_list<T[N]>();
    }
    /// Elements written in place: refused (see the message).
    /// \param ... The elements.
    template <class... A>
        requires(sizeof...(A) >= 1 && (std::is_convertible_v<A&&, const T&> && ...))
    list_ref(A&&...)
    {
        refuse_braced_list<list_ref(A...)>();
    }

    /// \return The elements as a span.
    constexpr std::span<const T> span() const noexcept { return s_; }
    /// \return An iterator to the first element.
    constexpr auto begin() const noexcept { return s_.begin(); }
    /// \return An iterator past the last element.
    constexpr auto end() const noexcept { return s_.end(); }
    /// \return The number of elements.
    constexpr std::size_t size() const noexcept { return s_.size(); }
    /// \return Whether there is no element.
    constexpr bool empty() const noexcept { return s_.empty(); }
    /// \param i An index, less than size(). \return The i-th element.
    constexpr const T& operator[](std::size_t i) const noexcept { return s_[i]; }

private:
    template <class What>
    static void refuse_braced_list()
    {
        static_assert(
            detail::refused_temporary_list_v<What>,
            "dd::list_ref (dd::id_list, request_options::extra_headers) refuses a braced list: it is a temporary "
            "array, destroyed at the end of the statement, before the request is built. Name the array first "
            "(const std::string ids[] = {a, b};) and assign the variable "
            "(docs/operations.md#lifetimes-views-in-copies-inside)."
        );
    }

    std::span<const T> s_;
};

}  // namespace digital_delivery

#endif
