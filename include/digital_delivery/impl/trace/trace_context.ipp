//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_TRACE_TRACE_CONTEXT_IPP
#define DIGITAL_DELIVERY_IMPL_TRACE_TRACE_CONTEXT_IPP

// W3C Trace Context (https://www.w3.org/TR/trace-context/): traceparent and
// tracestate, read strictly (a bad value is no value) and written as version 00.

#include <digital_delivery/trace_context.hpp>

#include <algorithm>
#include <vector>

namespace digital_delivery {
namespace detail {

inline int lower_hex_digit(char c) noexcept
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

// Reads 2*N lowercase hex digits into `out`; false on any other character
// or when every byte is zero.
template <std::size_t N>
bool read_nonzero_hex(std::string_view s, std::array<std::uint8_t, N>& out) noexcept
{
    bool any = false;
    for (std::size_t i = 0; i < N; ++i)
    {
        const int hi = lower_hex_digit(s[2 * i]), lo = lower_hex_digit(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        out[i] = static_cast<std::uint8_t>(hi * 16 + lo);
        any = any || out[i] != 0;
    }
    return any;
}

inline void append_hex(std::string& out, const std::uint8_t* p, std::size_t n)
{
    static constexpr char hex[] = "0123456789abcdef";
    for (std::size_t i = 0; i < n; ++i)
    {
        out += hex[p[i] >> 4];
        out += hex[p[i] & 15];
    }
}

inline std::string_view trim_spaces(std::string_view s) noexcept
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

inline bool is_key_char(char c) noexcept
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '*' || c == '/';
}

// key = simple-key / multi-tenant-key (W3C tracestate, version 1).
inline bool valid_tracestate_key(std::string_view k) noexcept
{
    const auto at = k.find('@');
    if (at == std::string_view::npos)
        return !k.empty() && k.size() <= 256 && k[0] >= 'a' && k[0] <= 'z' &&
               std::all_of(k.begin(), k.end(), is_key_char);
    const std::string_view tenant = k.substr(0, at), system = k.substr(at + 1);
    return !tenant.empty() && tenant.size() <= 241 &&
           ((tenant[0] >= 'a' && tenant[0] <= 'z') || (tenant[0] >= '0' && tenant[0] <= '9')) &&
           std::all_of(tenant.begin(), tenant.end(), is_key_char) && !system.empty() && system.size() <= 14 &&
           system[0] >= 'a' && system[0] <= 'z' && std::all_of(system.begin(), system.end(), is_key_char);
}

// value = 0*255(chr) nblk-chr; chr = %x20 / nblk-chr; nblk-chr = %x21-2B / %x2D-3C / %x3E-7E
inline bool valid_tracestate_value(std::string_view v) noexcept
{
    if (v.empty() || v.size() > 256 || v.back() == ' ')
        return false;
    return std::all_of(v.begin(), v.end(), [](char c) { return c >= 0x20 && c <= 0x7e && c != ',' && c != '='; });
}

}  // namespace detail

DIGITAL_DELIVERY_DECL std::optional<trace_context> parse_trace_context(std::string_view tp, std::string_view ts)
{
    tp = detail::trim_spaces(tp);
    // version "-" trace-id "-" parent-id "-" trace-flags: 2+1+32+1+16+1+2
    constexpr std::size_t length00 = 55;
    if (tp.size() < length00 || tp[2] != '-' || tp[35] != '-' || tp[52] != '-')
        return std::nullopt;
    const int v1 = detail::lower_hex_digit(tp[0]), v2 = detail::lower_hex_digit(tp[1]);
    if (v1 < 0 || v2 < 0 || (v1 == 15 && v2 == 15))
        return std::nullopt;
    // Version 00 has exactly these fields; a later version may add some,
    // after a '-'.
    if ((v1 == 0 && v2 == 0) ? tp.size() != length00 : tp.size() > length00 && tp[length00] != '-')
        return std::nullopt;
    trace_context c;
    if (!detail::read_nonzero_hex(tp.substr(3, 32), c.trace) || !detail::read_nonzero_hex(tp.substr(36, 16), c.span))
        return std::nullopt;
    const int f1 = detail::lower_hex_digit(tp[53]), f2 = detail::lower_hex_digit(tp[54]);
    if (f1 < 0 || f2 < 0)
        return std::nullopt;
    c.flags = static_cast<std::uint8_t>(f1 * 16 + f2);
    c.trace_state = normalize_tracestate(ts);
    return c;
}

DIGITAL_DELIVERY_DECL std::string normalize_tracestate(std::string_view ts)
{
    constexpr std::size_t max_members = 32, max_chars = 512, long_member = 128;
    std::vector<std::string_view> members;
    std::vector<std::string_view> keys;
    while (!ts.empty())
    {
        const auto comma = ts.find(',');
        const std::string_view m = detail::trim_spaces(ts.substr(0, comma));
        ts = comma == std::string_view::npos ? std::string_view() : ts.substr(comma + 1);
        if (m.empty())
            continue;
        const auto eq = m.find('=');
        if (eq == std::string_view::npos || !detail::valid_tracestate_key(m.substr(0, eq)) ||
            !detail::valid_tracestate_value(m.substr(eq + 1)))
            return {};
        const std::string_view key = m.substr(0, eq);
        if (std::find(keys.begin(), keys.end(), key) != keys.end())
            return {};
        keys.push_back(key);
        members.push_back(m);
    }
    auto joined_size = [&] {
        std::size_t n = members.empty() ? 0 : members.size() - 1;
        for (auto m : members)
            n += m.size();
        return n;
    };
    // Too many members: the last ones go. Too long: the members over 128
    // characters go first, then members from the end.
    if (members.size() > max_members)
        members.resize(max_members);
    if (joined_size() > max_chars)
    {
        std::erase_if(members, [&](std::string_view m) { return m.size() > long_member; });
        while (joined_size() > max_chars)
            members.pop_back();
    }
    std::string out;
    out.reserve(joined_size());
    for (auto m : members)
    {
        if (!out.empty())
            out += ',';
        out += m;
    }
    return out;
}

DIGITAL_DELIVERY_DECL std::string format_traceparent(const trace_id& trace, const span_id& span, std::uint8_t flags)
{
    std::string out;
    out.reserve(55);
    out += "00-";
    detail::append_hex(out, trace.data(), trace.size());
    out += '-';
    detail::append_hex(out, span.data(), span.size());
    out += '-';
    detail::append_hex(out, &flags, 1);
    return out;
}

}  // namespace digital_delivery

#endif
