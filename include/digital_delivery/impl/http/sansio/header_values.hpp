//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_HTTP_SANSIO_HEADER_VALUES_HPP
#define DIGITAL_DELIVERY_IMPL_HTTP_SANSIO_HEADER_VALUES_HPP

// Reading header values: optional whitespace, integers, IMF-fixdate.

#include <digital_delivery/detail/saturating_time.hpp>

#include <chrono>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>

namespace digital_delivery {
namespace detail {

inline std::string_view trim_ows(std::string_view s) noexcept
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

inline std::optional<std::int64_t> parse_int64(std::string_view s) noexcept
{
    s = trim_ows(s);
    std::int64_t v{};
    auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec != std::errc{} || r.ptr != s.data() + s.size())
        return std::nullopt;
    return v;
}

// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's algorithm).
inline std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) noexcept
{
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

// "Sun, 06 Nov 1994 08:49:37 GMT", in seconds: any 4-digit year fits (a
// nanosecond system_clock::time_point does not: it ends in 2262).
inline std::optional<std::chrono::sys_seconds> parse_imf_fixdate(std::string_view s) noexcept
{
    s = trim_ows(s);
    if (s.size() != 29 || s[3] != ',' || s.substr(26) != "GMT")
        return std::nullopt;
    static constexpr const char* months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                             "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    unsigned mon = 0;
    for (unsigned i = 0; i < 12; ++i)
        if (s.substr(8, 3) == months[i])
            mon = i + 1;
    auto num = [&](std::size_t pos, std::size_t len) -> std::optional<std::int64_t> {
        return parse_int64(s.substr(pos, len));
    };
    auto day = num(5, 2), year = num(12, 4), hh = num(17, 2), mm = num(20, 2), ss = num(23, 2);
    if (!mon || !day || !year || !hh || !mm || !ss || *day < 1 || *day > 31 || *hh > 23 || *mm > 59 || *ss > 60)
        return std::nullopt;
    const std::int64_t secs = days_from_civil(*year, mon, static_cast<unsigned>(*day)) * 86400 + *hh * 3600 +
                              *mm * 60 + *ss;
    return std::chrono::sys_seconds(std::chrono::seconds(secs));
}

// The longest wait parse_retry_after reports: far beyond any cap a caller
// applies (max_retry_after), far from overflowing any duration it becomes.
inline constexpr std::chrono::milliseconds retry_after_ceiling = std::chrono::hours(24 * 365);

}  // namespace detail


}  // namespace digital_delivery

#endif
