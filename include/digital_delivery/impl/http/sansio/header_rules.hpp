//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_HTTP_SANSIO_HEADER_RULES_HPP
#define DIGITAL_DELIVERY_IMPL_HTTP_SANSIO_HEADER_RULES_HPP

// What a header name or value may be: case-insensitive comparison, the
// characters that would end a header line, the headers a caller may set.

#include <string_view>

namespace digital_delivery {
namespace detail {
inline bool iequals(std::string_view a, std::string_view b) noexcept
{
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i)
    {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z')
            x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z')
            y = static_cast<char>(y - 'A' + 'a');
        if (x != y)
            return false;
    }
    return true;
}

/// CR, LF or NUL: what would end or cut a header line (or a URL) early.
inline bool has_crlf(std::string_view s) noexcept
{
    return s.find_first_of("\r\n") != std::string_view::npos || s.find('\0') != std::string_view::npos;
}

/// The one check of a header a caller adds to a request (request_options::
/// extra_headers, an upload handle's headers): a name of its own (not empty,
/// no space, tab, colon, CR, LF or NUL), a value without CR, LF or NUL, and
/// none of the headers the client owns: X-Auth-Token (the key), Host,
/// Content-Length and Transfer-Encoding (the framing).
inline bool is_settable_header(std::string_view name, std::string_view value) noexcept
{
    return !name.empty() && !has_crlf(name) && !has_crlf(value) && name.find_first_of(" \t:") == std::string_view::npos &&
           !iequals(name, "X-Auth-Token") && !iequals(name, "Host") && !iequals(name, "Content-Length") &&
           !iequals(name, "Transfer-Encoding");
}
}  // namespace detail
}  // namespace digital_delivery

#endif
