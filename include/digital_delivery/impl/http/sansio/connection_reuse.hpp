//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_INTERNAL_CONNECTION_REUSE_HPP
#define DIGITAL_DELIVERY_IMPL_INTERNAL_CONNECTION_REUSE_HPP

// Only included from impl/http/beast_transport.ipp (and tests): how long a
// keep-alive connection may sit in the pool after a response, decided from
// the response alone (no I/O). docs/transport-beast.md, "Connection reuse".

#include <digital_delivery/http_message.hpp>

#include <chrono>
#include <cstdint>
#include <string_view>

namespace digital_delivery {
namespace detail {

/// Margin kept below a server's announced keep-alive timeout: a request sent
/// that close to the server's limit may cross the server's close on the wire.
inline constexpr std::chrono::milliseconds keep_alive_margin{1000};

/// The `timeout=N` parameter of a Keep-Alive header field value
/// ("timeout=5, max=100"), in seconds; -1 when absent or malformed.
/// Parameter names are case-insensitive; values may be quoted.
inline std::int64_t keep_alive_timeout_param(std::string_view v) noexcept
{
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    while (!v.empty())
    {
        const auto comma = v.find(',');
        std::string_view item = v.substr(0, comma);
        v = comma == std::string_view::npos ? std::string_view{} : v.substr(comma + 1);
        while (!item.empty() && (item.front() == ' ' || item.front() == '\t'))
            item.remove_prefix(1);
        while (!item.empty() && (item.back() == ' ' || item.back() == '\t'))
            item.remove_suffix(1);
        constexpr std::string_view name = "timeout";
        if (item.size() <= name.size() || item[name.size()] != '=')
            continue;
        bool match = true;
        for (std::size_t i = 0; i < name.size(); ++i)
            match = match && lower(item[i]) == name[i];
        if (!match)
            continue;
        std::string_view digits = item.substr(name.size() + 1);
        if (digits.size() >= 2 && digits.front() == '"' && digits.back() == '"')
            digits = digits.substr(1, digits.size() - 2);
        if (digits.empty() || digits.size() > 9)
            return -1;
        std::int64_t n = 0;
        for (char c : digits)
        {
            if (c < '0' || c > '9')
                return -1;
            n = n * 10 + (c - '0');
        }
        return n;
    }
    return -1;
}

/// How long a connection that carried `resp` may be reused: the client's
/// `idle_timeout`, shortened to the server's Keep-Alive timeout less
/// keep_alive_margin when the server announces one. Zero: do not reuse.
inline std::chrono::milliseconds keep_alive_limit(const http_response& resp, std::chrono::milliseconds idle_timeout) noexcept
{
    auto limit = idle_timeout;
    if (const auto ka = resp.headers.find("keep-alive"))
    {
        const std::int64_t s = keep_alive_timeout_param(*ka);
        if (s >= 0)
        {
            const auto server = std::chrono::milliseconds(s * 1000) - keep_alive_margin;
            if (server < limit)
                limit = server;
        }
    }
    return limit.count() > 0 ? limit : std::chrono::milliseconds(0);
}

}  // namespace detail
}  // namespace digital_delivery

#endif
