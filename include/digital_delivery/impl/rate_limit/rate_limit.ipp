//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_RATE_LIMIT_IPP
#define DIGITAL_DELIVERY_IMPL_RATE_LIMIT_IPP

#include <digital_delivery/detail/saturating_time.hpp>
#include <digital_delivery/rate_limit.hpp>
#include <digital_delivery/impl/http/sansio/header_rules.hpp>
#include <digital_delivery/impl/http/sansio/header_values.hpp>

#include <charconv>
#include <cmath>
#include <cstring>

namespace digital_delivery {

DIGITAL_DELIVERY_DECL std::optional<rate_limit_snapshot> parse_rate_limit_headers(
    const http_headers& headers,
    std::chrono::system_clock::time_point now
)
{
    // One pass over the fields (this runs on every response).
    rate_limit_snapshot snap;
    bool any = false;
    constexpr std::string_view prefix = "x-ratelimit-";
    for (const auto f : headers)
    {
        if (f.name.size() < prefix.size() + 5 || f.name.size() > prefix.size() + 9 ||
            !detail::iequals(f.name.substr(0, prefix.size()), prefix))
            continue;
        const std::string_view which = f.name.substr(prefix.size());
        const auto n = detail::parse_int64(f.value);
        if (!n || *n < 0)
            continue;
        if (detail::iequals(which, "limit") && !snap.limit)
        {
            snap.limit = *n, any = true;
        }
        else if (detail::iequals(which, "remaining") && !snap.remaining)
        {
            snap.remaining = *n, any = true;
        }
        else if (detail::iequals(which, "reset") && !snap.reset)
        {
            // An instant system_clock cannot hold (after 2262 with nanoseconds)
            // is no reset this client can report: ignored, like a malformed one.
            using sys_tp = std::chrono::system_clock::time_point;
            snap.reset = *n < 1000000000 ? detail::checked_add(now, std::chrono::seconds(*n))
                                         : detail::checked_add(sys_tp{}, std::chrono::seconds(*n));
            any = any || snap.reset.has_value();
        }
    }
    if (!any)
        return std::nullopt;
    snap.source = rate_limit_source::header;
    snap.observed_at = now;
    return snap;
}

DIGITAL_DELIVERY_DECL std::optional<std::chrono::milliseconds> parse_retry_after(
    std::string_view value,
    std::chrono::system_clock::time_point now
)
{
    value = detail::trim_ows(value);
    if (value.empty())
        return std::nullopt;
    if ((value[0] >= '0' && value[0] <= '9') || value[0] == '-' || value[0] == '.')
    {
        // delta-seconds, fractional tolerated
        double secs{};
        auto r = std::from_chars(value.data(), value.data() + value.size(), secs);
        if (r.ptr != value.data() + value.size())
            return std::nullopt;
        if (r.ec == std::errc::result_out_of_range)
        {
            // Too many digits for a double: a huge wait if its integer part
            // is not zero, else a tiny or negative one.
            if (value.find_first_of("eE") != std::string_view::npos)
                return std::nullopt;  // no delta-seconds (1*DIGIT) anyway
            const auto int_part = value.substr(0, value.find('.'));
            const bool huge = value[0] != '-' && int_part.find_first_not_of('0') != std::string_view::npos;
            return huge ? detail::retry_after_ceiling : std::chrono::milliseconds(0);
        }
        if (r.ec != std::errc{} || !std::isfinite(secs))
            return std::nullopt;
        if (secs <= 0)
            return std::chrono::milliseconds(0);
        const double ceiling = static_cast<double>(detail::retry_after_ceiling.count()) / 1000.0;
        if (secs > ceiling)
            secs = ceiling;
        return std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(secs * 1000.0)));
    }
    const auto when = detail::parse_imf_fixdate(value);
    if (!when)
        return std::nullopt;
    // In milliseconds: a 4-digit year's seconds times 1000 stays below 2^53,
    // and `now` only loses precision (floor), so nothing overflows.
    const auto when_ms = std::chrono::time_point_cast<std::chrono::milliseconds>(*when).time_since_epoch().count();
    const auto now_ms = std::chrono::floor<std::chrono::milliseconds>(now).time_since_epoch().count();
    if (when_ms <= now_ms)
        return std::chrono::milliseconds(0);
    const std::int64_t wait = detail::saturating_add(when_ms, -now_ms);  // > 0
    return std::min(std::chrono::milliseconds(wait), detail::retry_after_ceiling);
}


}  // namespace digital_delivery

#endif
