//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_JSON_JSON_TEXT_HPP
#define DIGITAL_DELIVERY_IMPL_JSON_JSON_TEXT_HPP

// JSON text written by hand, where a value tree would cost more than the text:
// the JSON logger's lines, the OTLP exporter's requests.

#include <string>
#include <string_view>

namespace digital_delivery {
namespace detail {

/// Appends `v` to `out` escaped for the inside of a JSON string (no quotes):
/// '"', '\\' and control characters escaped, everything else byte for byte.
inline void append_json_escaped(std::string& out, std::string_view v)
{
    static constexpr char hex[] = "0123456789abcdef";
    // Runs of bytes that need no escape go in one append.
    std::size_t run = 0;
    for (std::size_t i = 0; i < v.size(); ++i)
    {
        const auto c = static_cast<unsigned char>(v[i]);
        if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)
            continue;
        out.append(v.data() + run, i - run);
        run = i + 1;
        switch (c)
        {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            out += "\\u00";
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    out.append(v.data() + run, v.size() - run);
}

/// Appends `v` to `out` as a JSON string, quotes included.
inline void append_json_string(std::string& out, std::string_view v)
{
    out += '"';
    append_json_escaped(out, v);
    out += '"';
}

}  // namespace detail
}  // namespace digital_delivery

#endif
