//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_STRING_REF_HPP
#define DIGITAL_DELIVERY_STRING_REF_HPP

/// \file
/// The string fields of the request models, the upload parameters,
/// raw_request and request_options' header fields: a view of the caller's
/// characters that refuses, at compile time, a temporary that owns them.
///
///     dd::new_asset n;
///     n.name = "Key";                   // a literal: fine
///     n.name = label;                   // a named std::string: fine
///     n.name = std::string_view(buf);   // an explicit view: you vouch for buf
///     n.name = std::to_string(7);       // does not compile: the string dies at
///                                       // the ';', before the request is built
///
/// The view is trivially copyable and destructible, so braced payloads inside
/// `co_await` stay safe with g++ 12 (docs/compilers.md).

#include <compare>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace digital_delivery {

namespace detail {

template <class T>
inline constexpr bool refused_temporary_v = false;

/// An object (not a pointer or an array) whose characters a string_view can see.
template <class T>
concept string_object =
    std::is_class_v<std::remove_cvref_t<T>> && std::is_convertible_v<const std::remove_cvref_t<T>&, std::string_view>;

template <class T>
concept view_of_characters = std::is_same_v<std::remove_cvref_t<T>, std::string_view>;

}  // namespace detail

/// A view of characters that outlive the statement: a string literal, a named
/// std::string (or any named object convertible to std::string_view), or an
/// explicit std::string_view. A temporary std::string (a function's result, a
/// concatenation, std::to_string, fmt::format, .substr()) is refused at
/// compile time: name it first.
class string_ref
{
public:
    /// An empty view.
    constexpr string_ref() noexcept = default;

    /// A string literal or a C string.
    /// \param s The characters, null-terminated.
    constexpr string_ref(const char* s) noexcept : sv_(s) {}

    /// An explicit view: the characters it sees must outlive the call.
    /// \param s The characters.
    constexpr string_ref(std::string_view s) noexcept : sv_(s) {}

    /// A named string (lvalue): std::string, boost::json::string, ...
    /// \param s The string.
    template <class T>
        requires(detail::string_object<T> && !detail::view_of_characters<T>)
    constexpr string_ref(T& s) noexcept : sv_(std::string_view(s))
    {
    }

    /// A temporary that owns its characters: refused (see the message).
    template <class T>
        requires(detail::string_object<T> && !detail::view_of_characters<T> && !std::is_lvalue_reference_v<T>)
    string_ref(T&&)
    {
        static_assert(
            detail::refused_temporary_v<T>,
            "dd::string_ref refuses a temporary string: it is destroyed at the end of the statement, before the "
            "request is built, and the request would carry freed memory. Name it first "
            "(const std::string name = ...; then assign name), or pass std::string_view(x) if x is a view whose "
            "characters outlive the call (docs/operations.md#lifetimes-views-in-copies-inside)."
        );
    }

    /// \return The characters.
    constexpr std::string_view view() const noexcept { return sv_; }
    /// \return The characters.
    constexpr operator std::string_view() const noexcept { return sv_; }
    /// \return A pointer to the first character (not null-terminated in general).
    constexpr const char* data() const noexcept { return sv_.data(); }
    /// \return The number of characters.
    constexpr std::size_t size() const noexcept { return sv_.size(); }
    /// \return Whether there is no character.
    constexpr bool empty() const noexcept { return sv_.empty(); }
    /// \return An iterator to the first character.
    constexpr auto begin() const noexcept { return sv_.begin(); }
    /// \return An iterator past the last character.
    constexpr auto end() const noexcept { return sv_.end(); }

    /// Compares the characters with anything a std::string_view can see.
    /// \param a This view.
    /// \param b The other characters.
    /// \return Whether they are equal.
    template <class T>
        requires std::is_convertible_v<const T&, std::string_view>
    friend constexpr bool operator==(const string_ref& a, const T& b) noexcept
    {
        return a.sv_ == std::string_view(b);
    }
    /// Orders the characters against anything a std::string_view can see.
    /// \param a This view.
    /// \param b The other characters.
    /// \return As std::string_view's comparison.
    template <class T>
        requires std::is_convertible_v<const T&, std::string_view>
    friend constexpr std::strong_ordering operator<=>(const string_ref& a, const T& b) noexcept
    {
        return a.sv_ <=> std::string_view(b);
    }

    /// `os << s` for any stream that prints a std::string_view.
    /// \param os The stream.
    /// \param s The view.
    /// \return `os`.
    template <class Ostream>
        requires requires(Ostream& os, std::string_view v) { os << v; }
    friend Ostream& operator<<(Ostream& os, const string_ref& s)
    {
        os << s.sv_;
        return os;
    }

private:
    std::string_view sv_;
};

}  // namespace digital_delivery

#endif
