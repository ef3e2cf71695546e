//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_DETAIL_BEAST_URL_HPP
#define DIGITAL_DELIVERY_DETAIL_BEAST_URL_HPP

// Included from impl/http/beast_transport.ipp and impl/engine/client_impl.ipp (base_url).
//
// Request URLs may come from a server (upload URLs), so they are validated
// character by character BEFORE Boost.URL sees them: Boost.URL 1.81 hits a
// BOOST_ASSERT on some malformed inputs (e.g. "hps:{") unless NDEBUG is
// defined. Only absolute http/https URLs without userinfo are accepted.

#include <boost/url/parse.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace digital_delivery {
namespace detail {

struct beast_target
{
    bool tls = false;
    std::string host;         // for resolving / SNI / verification: no brackets
    std::string port;         // always set ("80"/"443" by default)
    std::string host_header;  // as written in the URL, default port dropped
    std::string target;       // encoded path + query, byte-exact ("/" if empty)
    std::string pool_key;     // "scheme://host:port"
    bool host_is_ip = false;
};

inline bool url_is_hex(char c) noexcept
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
inline bool url_is_unreserved(char c) noexcept
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_' || c == '~';
}
inline bool url_is_sub_delim(char c) noexcept
{
    switch (c)
    {
    case '!': case '$': case '&': case '\'': case '(': case ')': case '*': case '+': case ',': case ';': case '=':
        return true;
    default: return false;
    }
}

// Validates `s` as a run of characters from `extra` + unreserved + sub-delims +
// percent-encoded triplets.
inline bool url_valid_run(std::string_view s, std::string_view extra) noexcept
{
    for (std::size_t i = 0; i < s.size(); ++i)
    {
        const char c = s[i];
        if (c == '%')
        {
            if (i + 2 >= s.size() || !url_is_hex(s[i + 1]) || !url_is_hex(s[i + 2]))
                return false;
            i += 2;
            continue;
        }
        if (url_is_unreserved(c) || url_is_sub_delim(c) || extra.find(c) != std::string_view::npos)
            continue;
        return false;
    }
    return true;
}

inline bool url_iequals_prefix(std::string_view s, std::string_view prefix) noexcept
{
    if (s.size() < prefix.size())
        return false;
    for (std::size_t i = 0; i < prefix.size(); ++i)
    {
        char c = s[i];
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
        if (c != prefix[i])
            return false;
    }
    return true;
}

/// Validates the part of a URL after its authority (empty, or starting with
/// '/', '?' or '#') and returns the encoded path + query without the fragment
/// in `path_query` (a view into `rest`; may be empty or start with '?', in
/// which case the target is "/" + path_query).
inline bool beast_url_rest(std::string_view rest, std::string_view& path_query) noexcept
{
    const std::size_t hash = rest.find('#');
    if (hash != std::string_view::npos)
    {
        if (!url_valid_run(rest.substr(hash + 1), ":@/?"))
            return false;
        rest = rest.substr(0, hash);
    }
    const std::size_t q = rest.find('?');
    if (!url_valid_run(rest.substr(0, q), ":@/"))
        return false;
    if (q != std::string_view::npos && !url_valid_run(rest.substr(q + 1), ":@/?"))
        return false;
    path_query = rest;
    return true;
}

/// Length of "scheme://authority" at the start of `url` (which starts with
/// http:// or https://, checked by the caller).
inline std::size_t beast_url_origin_length(std::string_view url) noexcept
{
    const std::size_t pos = url_iequals_prefix(url, "https://") ? 8 : 7;
    const std::size_t e = url.find_first_of("/?#", pos);
    return e == std::string_view::npos ? url.size() : e;
}

/// Returns false for anything but a well-formed absolute http(s) URL.
inline bool parse_beast_target(std::string_view url, beast_target& out)
{
    if (url.empty() || url.size() > 64 * 1024)
        return false;
    for (char c : url)
        if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f)
            return false;

    std::size_t pos;
    if (url_iequals_prefix(url, "https://"))
    {
        out.tls = true;
        pos = 8;
    }
    else if (url_iequals_prefix(url, "http://"))
    {
        out.tls = false;
        pos = 7;
    }
    else
        return false;

    const std::size_t auth_end = url.find_first_of("/?#", pos);
    const std::string_view authority = url.substr(pos, auth_end == std::string_view::npos ? url.npos : auth_end - pos);
    if (authority.empty() || authority.find('@') != std::string_view::npos)
        return false;

    std::string_view host, port;
    if (authority.front() == '[')
    {
        const std::size_t close = authority.find(']');
        if (close == std::string_view::npos || close < 3)
            return false;
        host = authority.substr(1, close - 1);
        for (char c : host)
            if (!url_is_hex(c) && c != ':' && c != '.')
                return false;
        const std::string_view rest = authority.substr(close + 1);
        if (!rest.empty())
        {
            if (rest.front() != ':')
                return false;
            port = rest.substr(1);
            if (port.empty())
                return false;
        }
        out.host_is_ip = true;
    }
    else
    {
        const std::size_t colon = authority.find(':');
        host = authority.substr(0, colon);
        if (colon != std::string_view::npos)
        {
            port = authority.substr(colon + 1);
            if (port.empty())
                return false;
        }
        if (host.empty() || !url_valid_run(host, "") || host.find('%') != std::string_view::npos)
            return false;
        bool digits_and_dots = true;
        for (char c : host)
            if (!((c >= '0' && c <= '9') || c == '.'))
                digits_and_dots = false;
        out.host_is_ip = digits_and_dots;
    }
    unsigned port_num = out.tls ? 443u : 80u;
    if (!port.empty())
    {
        if (port.size() > 5)
            return false;
        port_num = 0;
        for (char c : port)
        {
            if (c < '0' || c > '9')
                return false;
            port_num = port_num * 10u + static_cast<unsigned>(c - '0');
        }
        if (port_num == 0 || port_num > 65535)
            return false;
    }

    std::string_view rest = auth_end == std::string_view::npos ? std::string_view{} : url.substr(auth_end);
    std::string_view path_query;
    if (!beast_url_rest(rest, path_query))
        return false;

    // Now a syntactically valid URI: let Boost.URL confirm and split it.
    const std::string_view no_fragment = url.substr(0, (auth_end == std::string_view::npos ? url.size() : auth_end) + path_query.size());
    auto r = boost::urls::parse_uri(no_fragment);
    if (!r)
        return false;
    const boost::urls::url_view& u = *r;

    out.host.assign(host.data(), host.size());
    out.port = std::to_string(port_num);
    const bool default_port = port_num == (out.tls ? 443u : 80u);
    out.host_header.assign(authority.data(), authority.size() - (port.empty() ? 0 : port.size() + 1));
    if (!default_port)
    {
        out.host_header += ':';
        out.host_header += out.port;
    }
    const auto t = u.encoded_target();
    if (t.empty() || t.front() != '/')
    {
        out.target = "/";
        out.target.append(t.data(), t.size());
    }
    else
        out.target.assign(t.data(), t.size());
    out.pool_key = out.tls ? "https://" : "http://";
    out.pool_key += out.host_header;
    if (default_port)
    {
        out.pool_key += ':';
        out.pool_key += out.port;
    }
    for (char& c : out.pool_key)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    return true;
}

}  // namespace detail
}  // namespace digital_delivery

#endif
