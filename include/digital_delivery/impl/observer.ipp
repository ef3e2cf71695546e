//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
//
#ifndef DIGITAL_DELIVERY_IMPL_OBSERVER_IPP
#define DIGITAL_DELIVERY_IMPL_OBSERVER_IPP

#include <digital_delivery/detail/clock.hpp>
#include <digital_delivery/observer.hpp>

namespace digital_delivery {

DIGITAL_DELIVERY_DECL std::optional<rate_limit_snapshot> response_event::rate_limit() const
{
    if (!headers_)
        return std::nullopt;
    return parse_rate_limit_headers(*headers_, detail::clock::system_now());
}

DIGITAL_DELIVERY_DECL std::string redacted_url(std::string_view url)
{
    url = url.substr(0, url.find_first_of("?#"));
    const auto scheme = url.find("://");
    if (scheme == std::string_view::npos)
        return std::string(url);
    const auto start = scheme + 3;
    const auto path = url.find('/', start);
    const std::string_view authority = url.substr(start, path == std::string_view::npos ? std::string_view::npos : path - start);
    std::string out(url.substr(0, start));
    if (const auto at = authority.rfind('@'); at != std::string_view::npos)
        out += authority.substr(at + 1);
    else
        out += authority;
    if (path != std::string_view::npos)
        out += url.substr(path);
    return out;
}

DIGITAL_DELIVERY_DECL std::string_view to_string(priority p) noexcept
{
    switch (p)
    {
    case priority::interactive: return "interactive";
    case priority::normal: return "normal";
    case priority::background: return "background";
    }
    return "unknown";
}

DIGITAL_DELIVERY_DECL std::string_view to_string(throttle_event::kind k) noexcept
{
    return k == throttle_event::kind::paused ? "paused" : "resumed";
}

}  // namespace digital_delivery

#endif
