//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_INTERNAL_PROXY_HPP
#define DIGITAL_DELIVERY_IMPL_INTERNAL_PROXY_HPP

// HTTP proxy settings of the Beast transport, without Beast (docs/proxies.md):
// parsing a proxy URL (credentials become a Basic Proxy-Authorization value,
// never kept as text elsewhere), the environment (HTTPS_PROXY, HTTP_PROXY,
// NO_PROXY, lowercase first), NO_PROXY matching, and the route of an origin.

#include <digital_delivery/beast_transport.hpp>
#include <digital_delivery/error.hpp>

#include <boost/system/system_error.hpp>

#include <cctype>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace digital_delivery {
namespace detail {

/// One proxy: where to connect, and the Proxy-Authorization value ("" for none).
struct proxy_endpoint
{
    std::string host;           // no brackets
    std::string port;
    std::string authorization;  // "Basic <base64(user:password)>" or ""
};

inline std::string base64_encode(std::string_view in)
{
    static constexpr char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((in.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 2 < in.size(); i += 3)
    {
        const unsigned v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8) |
                           static_cast<unsigned char>(in[i + 2]);
        out += tbl[(v >> 18) & 63];
        out += tbl[(v >> 12) & 63];
        out += tbl[(v >> 6) & 63];
        out += tbl[v & 63];
    }
    if (i < in.size())
    {
        unsigned v = static_cast<unsigned char>(in[i]) << 16;
        if (i + 1 < in.size())
            v |= static_cast<unsigned char>(in[i + 1]) << 8;
        out += tbl[(v >> 18) & 63];
        out += tbl[(v >> 12) & 63];
        out += i + 1 < in.size() ? tbl[(v >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

inline bool pct_decode(std::string_view in, std::string& out)
{
    out.clear();
    for (std::size_t i = 0; i < in.size(); ++i)
    {
        if (in[i] != '%')
        {
            out += in[i];
            continue;
        }
        if (i + 2 >= in.size() || !std::isxdigit(static_cast<unsigned char>(in[i + 1])) ||
            !std::isxdigit(static_cast<unsigned char>(in[i + 2])))
            return false;
        out += static_cast<char>(std::stoi(std::string(in.substr(i + 1, 2)), nullptr, 16));
        i += 2;
    }
    return true;
}

/// Parses "http://[user[:password]@]host[:port][/]" (the scheme may be
/// omitted; the port defaults to 1080, as curl's). `why` never contains the
/// credentials.
inline bool parse_proxy_url(std::string_view url, proxy_endpoint& out, std::string& why)
{
    out = {};
    while (!url.empty() && (url.back() == '/' || std::isspace(static_cast<unsigned char>(url.back()))))
        url.remove_suffix(1);
    while (!url.empty() && std::isspace(static_cast<unsigned char>(url.front())))
        url.remove_prefix(1);
    if (const auto s = url.find("://"); s != std::string_view::npos)
    {
        std::string scheme(url.substr(0, s));
        for (auto& c : scheme)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (scheme != "http")
        {
            why = "proxy scheme '" + scheme.substr(0, 16) + "' is not supported (only http:// proxies)";
            return false;
        }
        url.remove_prefix(s + 3);
    }
    if (url.find_first_of("/?#\r\n\t ") != std::string_view::npos)
    {
        why = "proxy URL must be http://[user:password@]host[:port]";
        return false;
    }
    if (const auto at = url.rfind('@'); at != std::string_view::npos)
    {
        const std::string_view userinfo = url.substr(0, at);
        url.remove_prefix(at + 1);
        const auto colon = userinfo.find(':');
        std::string user, pass;
        if (!pct_decode(userinfo.substr(0, colon), user) ||
            (colon != std::string_view::npos && !pct_decode(userinfo.substr(colon + 1), pass)))
        {
            why = "proxy URL has badly percent-encoded credentials";
            return false;
        }
        out.authorization = "Basic " + base64_encode(user + ":" + pass);
    }
    std::string_view host = url, port = "1080";
    if (!host.empty() && host.front() == '[')
    {
        const auto close = host.find(']');
        if (close == std::string_view::npos)
        {
            why = "proxy URL has an unterminated IPv6 address";
            return false;
        }
        if (close + 1 < host.size())
        {
            if (host[close + 1] != ':')
            {
                why = "proxy URL must be http://[user:password@]host[:port]";
                return false;
            }
            port = host.substr(close + 2);
        }
        host = host.substr(1, close - 1);
    }
    else if (const auto colon = host.rfind(':'); colon != std::string_view::npos)
    {
        port = host.substr(colon + 1);
        host = host.substr(0, colon);
    }
    if (host.empty() || port.empty() || port.size() > 5 ||
        port.find_first_not_of("0123456789") != std::string_view::npos || std::stoul(std::string(port)) > 65535 ||
        std::stoul(std::string(port)) == 0)
    {
        why = "proxy URL needs a host and a port in 1..65535";
        return false;
    }
    out.host = std::string(host);
    out.port = std::string(port);
    return true;
}

/// A plain http:// response through a proxy that is the proxy's refusal of
/// its credentials: 407, or a 401 asking for Basic credentials (tinyproxy
/// answers wrong ones so; the API itself authenticates with X-Auth-Token and
/// never asks for Basic).
inline bool is_proxy_auth_failure(const http_response& r)
{
    if (r.status == 407)
        return true;
    if (r.status != 401)
        return false;
    const auto v = r.headers.find("WWW-Authenticate");
    if (!v || v->size() < 5)
        return false;
    const std::string_view s = *v;
    return (s[0] == 'B' || s[0] == 'b') && (s[1] == 'a' || s[1] == 'A') && (s[2] == 's' || s[2] == 'S') &&
           (s[3] == 'i' || s[3] == 'I') && (s[4] == 'c' || s[4] == 'C');
}

/// The proxies of one transport, decided once (constructor).
struct proxy_config
{
    std::optional<proxy_endpoint> http, https;
    std::vector<std::string> no_proxy;  // lower-case, leading '.' removed
    bool no_proxy_all = false;

    /// The proxy for an origin, or null for a direct connection.
    const proxy_endpoint* route(bool tls, std::string_view host) const
    {
        const auto& p = tls ? https : http;
        if (!p || no_proxy_all || bypass(host))
            return nullptr;
        return &*p;
    }

    bool bypass(std::string_view host) const
    {
        std::string h(host);
        for (auto& c : h)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (!h.empty() && h.back() == '.')
            h.pop_back();
        for (const auto& e : no_proxy)
        {
            if (h == e)
                return true;
            if (h.size() > e.size() && h.compare(h.size() - e.size(), e.size(), e) == 0 && h[h.size() - e.size() - 1] == '.')
                return true;
        }
        return false;
    }
};

/// NO_PROXY syntax (curl's): entries separated by commas or spaces; "*" alone
/// matches every host; "example.com" and ".example.com" match the name and its
/// subdomains; a ":port" suffix and IPv6 brackets are ignored (no CIDR).
inline void parse_no_proxy(std::string_view list, proxy_config& out)
{
    std::size_t i = 0;
    while (i < list.size())
    {
        const auto j = list.find_first_of(", \t", i);
        std::string_view e = list.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i);
        i = j == std::string_view::npos ? list.size() : j + 1;
        if (e.empty())
            continue;
        if (e == "*")
        {
            out.no_proxy_all = true;
            continue;
        }
        if (e.front() == '[')
        {
            const auto close = e.find(']');
            e = e.substr(1, close == std::string_view::npos ? std::string_view::npos : close - 1);
        }
        else if (e.find(':') == e.rfind(':') && e.find(':') != std::string_view::npos)
        {
            e = e.substr(0, e.find(':'));  // host:port (one colon: not IPv6)
        }
        while (!e.empty() && e.front() == '.')
            e.remove_prefix(1);
        std::string s(e);
        for (auto& c : s)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (!s.empty())
            out.no_proxy.push_back(std::move(s));
    }
}

/// The transport's proxies: `p.url` for both schemes, else (when
/// `p.from_environment`) https_proxy/HTTPS_PROXY and http_proxy/HTTP_PROXY,
/// lowercase first; `p.no_proxy`, else no_proxy/NO_PROXY. Throws
/// boost::system::system_error(client_errc::invalid_url) for an unusable URL
/// (its message never contains the credentials).
inline proxy_config make_proxy_config(const beast_proxy_params& p, const std::function<const char*(const char*)>& getenv_fn = {})
{
    auto env = [&](const char* lower, const char* upper) -> std::string {
        auto get = [&](const char* n) -> const char* { return getenv_fn ? getenv_fn(n) : std::getenv(n); };
        if (const char* v = get(lower); v && *v)
            return v;
        if (const char* v = get(upper); v && *v)
            return v;
        return {};
    };
    auto parse = [](const std::string& url, const char* what) {
        proxy_endpoint e;
        std::string why;
        if (!parse_proxy_url(url, e, why))
            throw boost::system::system_error(make_error_code(client_errc::invalid_url), std::string(what) + ": " + why);
        return e;
    };
    proxy_config c;
    if (!p.url.empty())
    {
        c.http = parse(p.url, "beast_proxy_params::url");
        c.https = c.http;
    }
    else if (p.from_environment)
    {
        if (auto v = env("https_proxy", "HTTPS_PROXY"); !v.empty())
            c.https = parse(v, "HTTPS_PROXY");
        if (auto v = env("http_proxy", "HTTP_PROXY"); !v.empty())
            c.http = parse(v, "HTTP_PROXY");
    }
    if (!p.no_proxy.empty())
        parse_no_proxy(p.no_proxy, c);
    else if (p.from_environment)
        parse_no_proxy(env("no_proxy", "NO_PROXY"), c);
    return c;
}

}  // namespace detail
}  // namespace digital_delivery

#endif
