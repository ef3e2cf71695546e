//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_INTERNAL_JSON_MAPPING_HPP
#define DIGITAL_DELIVERY_IMPL_INTERNAL_JSON_MAPPING_HPP

// Describe-driven model -> JSON encoding (request bodies) and query strings,
// and the traits the decoder shares (decoding: impl/json/json_decode.hpp).
// Encoding writes only the optional members that are set (PATCH semantics).

#include <digital_delivery/id_list.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/http_message.hpp>
#include <digital_delivery/open_enum.hpp>
#include <digital_delivery/string_ref.hpp>
#include <digital_delivery/timestamp.hpp>

#include <boost/describe/members.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/string.hpp>
#include <boost/json/value.hpp>
#include <boost/mp11/algorithm.hpp>

#include <chrono>
#include <concepts>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace digital_delivery {
namespace detail {

template <class T>
struct is_optional : std::false_type
{
};
template <class T>
struct is_optional<std::optional<T>> : std::true_type
{
};

template <class T>
struct is_open_enum : std::false_type
{
};
template <class E>
struct is_open_enum<open_enum<E>> : std::true_type
{
};

template <class T>
concept described_struct = boost::describe::has_describe_members<T>::value && std::is_class_v<T>;

template <class T>
concept described_enum = boost::describe::has_describe_enumerators<T>::value;

template <class T>
concept json_integer = std::integral<T> && !std::same_as<T, bool> && !std::same_as<T, char>;

// ---- encoding (request bodies) ----------------------------------------------

template <class S>
    requires std::is_convertible_v<const S&, std::string_view>
void encode_value(boost::json::value& out, const S& s)
{
    out = boost::json::string(std::string_view(s));
}
inline void encode_value(boost::json::value& out, bool b) { out = b; }
template <json_integer I>
void encode_value(boost::json::value& out, I i)
{
    if constexpr (std::is_signed_v<I>)
        out = static_cast<std::int64_t>(i);
    else
        out = static_cast<std::uint64_t>(i);
}
inline void encode_value(boost::json::value& out, timestamp t) { out = boost::json::string(format_timestamp(t)); }
inline void encode_value(boost::json::value& out, const date& d) { out = boost::json::string(format_date(d)); }
template <described_enum E>
void encode_value(boost::json::value& out, E e)
{
    out = boost::json::string(enum_to_string(e));
}
template <class E>
void encode_value(boost::json::value& out, const open_enum<E>& e)
{
    out = boost::json::string(e.str());
}
template <class T>
void encode_value(boost::json::value& out, std::span<const T> v);
template <class T>
void encode_value(boost::json::value& out, const std::vector<T>& v)
{
    encode_value(out, std::span<const T>(v));
}
template <class T>
void encode_value(boost::json::value& out, const list_ref<T>& v);
template <described_struct T>
void encode_value(boost::json::value& out, const T& t);

template <class T>
void encode_value(boost::json::value& out, std::span<const T> v)
{
    auto& a = out.emplace_array();
    a.reserve(v.size());
    for (const auto& e : v)
    {
        boost::json::value x;
        encode_value(x, e);
        a.push_back(std::move(x));
    }
}

template <class T>
void encode_value(boost::json::value& out, const list_ref<T>& v)
{
    encode_value(out, v.span());
}

template <described_struct T>
void encode_value(boost::json::value& out, const T& t)
{
    auto& o = out.emplace_object();
    using members = boost::describe::describe_members<T, boost::describe::mod_public>;
    boost::mp11::mp_for_each<members>([&](auto d) {
        const auto& m = t.*d.pointer;
        using member_t = std::remove_cvref_t<decltype(m)>;
        if constexpr (is_optional<member_t>::value)
        {
            if (!m)
                return;  // PATCH semantics: unset fields are not sent
            encode_value(o[d.name], *m);
        }
        else
        {
            encode_value(o[d.name], m);
        }
    });
}

// ---- query strings ------------------------------------------------------------

/// Query parameters in declaration order: name and unencoded value.
using query_params = std::vector<std::pair<std::string_view, std::string>>;

template <class S>
    requires std::is_convertible_v<const S&, std::string_view>
std::string to_query_value(const S& s)
{
    return std::string(std::string_view(s));
}
inline std::string to_query_value(bool b) { return b ? "true" : "false"; }
template <json_integer I>
std::string to_query_value(I i)
{
    return std::to_string(i);
}
inline std::string to_query_value(const date& d) { return format_date(d); }
template <described_enum E>
std::string to_query_value(E e)
{
    return std::string(enum_to_string(e));
}

template <described_struct Q>
void encode_query(const Q& q, query_params& out)
{
    using members = boost::describe::describe_members<Q, boost::describe::mod_public>;
    boost::mp11::mp_for_each<members>([&](auto d) {
        const auto& m = q.*d.pointer;
        using member_t = std::remove_cvref_t<decltype(m)>;
        if constexpr (is_optional<member_t>::value)
        {
            if (m)
                out.emplace_back(std::string_view(d.name), to_query_value(*m));
        }
        else
        {
            out.emplace_back(std::string_view(d.name), to_query_value(m));
        }
    });
}

}  // namespace detail
}  // namespace digital_delivery

#endif
