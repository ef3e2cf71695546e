//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_OPEN_ENUM_HPP
#define DIGITAL_DELIVERY_OPEN_ENUM_HPP

/// \file
/// Closed lists of the API (asset type, financial status, ...) as typed enums
/// that still carry a value the server adds later, as text, instead of
/// failing to decode.

#include <boost/describe/enum.hpp>
#include <boost/describe/enumerators.hpp>
#include <boost/mp11/algorithm.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace digital_delivery {

/// The wire name of a described enumerator ("" for one that is not described, e.g. `unknown`).
/// \param e The enumerator.
/// \return Its name (static storage).
template <class E>
constexpr std::string_view enum_to_string(E e) noexcept
{
    std::string_view r;
    boost::mp11::mp_for_each<boost::describe::describe_enumerators<E>>([&](auto d) {
        if (d.value == e)
            r = d.name;
    });
    return r;
}

/// The enumerator whose wire name is `s`, if any.
/// \param s The wire name.
/// \return The enumerator, or nullopt.
template <class E>
constexpr std::optional<E> enum_from_string(std::string_view s) noexcept
{
    std::optional<E> r;
    boost::mp11::mp_for_each<boost::describe::describe_enumerators<E>>([&](auto d) {
        if (s == d.name)
            r = d.value;
    });
    return r;
}

/// A value of the described enum `E` (whose `E::unknown` is not described) or
/// a server value this version does not know. Compare with enumerators
/// directly: `if (a.type == asset_type::internal)`.
template <class E>
class open_enum
{
public:
    /// E::unknown, with no text.
    open_enum() noexcept = default;
    /// A known value. \param v The enumerator.
    open_enum(E v) noexcept : value_(v) {}  // NOLINT(google-explicit-constructor)

    /// From the wire text; an unknown text gives value() == E::unknown and keeps the text.
    /// \param s The wire text.
    /// \return The value.
    static open_enum from_string(std::string_view s)
    {
        open_enum r;
        if (auto v = enum_from_string<E>(s))
            r.value_ = *v;
        else
        {
            r.value_ = E::unknown;
            r.text_.assign(s.data(), s.size());
        }
        return r;
    }

    /// \return The enumerator (E::unknown for a text this version does not know).
    E value() const noexcept { return value_; }
    /// \return Whether value() is E::unknown.
    bool is_unknown() const noexcept { return value_ == E::unknown; }

    /// \return The wire text (the server's own text for an unknown value).
    std::string_view str() const noexcept { return value_ == E::unknown ? std::string_view(text_) : enum_to_string(value_); }

    /// Equal values; two unknown values are equal when their texts are.
    /// \param a A value. \param b Another. \return Whether they are equal.
    friend bool operator==(const open_enum& a, const open_enum& b) noexcept
    {
        return a.value_ == b.value_ && (a.value_ != E::unknown || a.text_ == b.text_);
    }
    /// \param a A value. \param b An enumerator. \return Whether a.value() is b.
    friend bool operator==(const open_enum& a, E b) noexcept { return a.value_ == b; }

private:
    E value_{E::unknown};
    std::string text_;
};

}  // namespace digital_delivery

#endif
