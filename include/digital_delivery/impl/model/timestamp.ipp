//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_TIMESTAMP_IPP
#define DIGITAL_DELIVERY_IMPL_TIMESTAMP_IPP

#include <digital_delivery/timestamp.hpp>

#include <cstdio>

namespace digital_delivery {
namespace detail {

inline bool read_digits(std::string_view s, std::size_t pos, std::size_t n, int& out) noexcept
{
    if (pos + n > s.size())
        return false;
    int v = 0;
    for (std::size_t i = pos; i < pos + n; ++i)
    {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    out = v;
    return true;
}

inline std::optional<date> parse_date_prefix(std::string_view s) noexcept
{
    int y, m, d;
    if (s.size() < 10 || !read_digits(s, 0, 4, y) || s[4] != '-' || !read_digits(s, 5, 2, m) || s[7] != '-' ||
        !read_digits(s, 8, 2, d))
        return std::nullopt;
    date ymd{std::chrono::year(y), std::chrono::month(static_cast<unsigned>(m)), std::chrono::day(static_cast<unsigned>(d))};
    if (!ymd.ok())
        return std::nullopt;
    return ymd;
}

}  // namespace detail

DIGITAL_DELIVERY_DECL std::optional<date> parse_date(std::string_view s) noexcept
{
    if (s.size() != 10)
        return std::nullopt;
    return detail::parse_date_prefix(s);
}

DIGITAL_DELIVERY_DECL std::optional<timestamp> parse_timestamp(std::string_view s) noexcept
{
    using namespace std::chrono;
    auto d = detail::parse_date_prefix(s);
    if (!d || s.size() < 19)
        return std::nullopt;
    if (s[10] != 'T' && s[10] != 't' && s[10] != ' ')
        return std::nullopt;
    int hh, mm, ss;
    if (!detail::read_digits(s, 11, 2, hh) || s[13] != ':' || !detail::read_digits(s, 14, 2, mm) || s[16] != ':' ||
        !detail::read_digits(s, 17, 2, ss) || hh > 23 || mm > 59 || ss > 60)
        return std::nullopt;
    std::size_t pos = 19;
    std::int64_t micros = 0;
    if (pos < s.size() && (s[pos] == '.' || s[pos] == ','))
    {
        ++pos;
        std::size_t digits = 0;
        while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9')
        {
            if (digits < 6)
                micros = micros * 10 + (s[pos] - '0');
            ++digits;
            ++pos;
        }
        if (digits == 0)
            return std::nullopt;
        for (std::size_t i = digits; i < 6; ++i)
            micros *= 10;
    }
    if (pos >= s.size())
        return std::nullopt;  // offset required
    int offset_minutes = 0;
    if (s[pos] == 'Z' || s[pos] == 'z')
    {
        ++pos;
    }
    else if (s[pos] == '+' || s[pos] == '-')
    {
        const int sign = s[pos] == '-' ? -1 : 1;
        int oh, om;
        if (!detail::read_digits(s, pos + 1, 2, oh))
            return std::nullopt;
        std::size_t p = pos + 3;
        if (p < s.size() && s[p] == ':')
            ++p;
        if (!detail::read_digits(s, p, 2, om) || oh > 23 || om > 59)
            return std::nullopt;
        pos = p + 2;
        offset_minutes = sign * (oh * 60 + om);
    }
    else
    {
        return std::nullopt;
    }
    if (pos != s.size())
        return std::nullopt;
    const sys_days day = *d;
    return time_point_cast<microseconds>(day) + hours(hh) + minutes(mm) + seconds(ss) + microseconds(micros) -
           minutes(offset_minutes);
}

DIGITAL_DELIVERY_DECL std::string format_timestamp(timestamp t)
{
    using namespace std::chrono;
    const auto day = floor<days>(t);
    const year_month_day ymd{day};
    const hh_mm_ss<microseconds> tod{t - day};
    char buf[48];
    const auto us = tod.subseconds().count();
    if (us)
        std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%06lldZ", static_cast<int>(ymd.year()),
                      static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                      static_cast<int>(tod.hours().count()), static_cast<int>(tod.minutes().count()),
                      static_cast<int>(tod.seconds().count()), static_cast<long long>(us));
    else
        std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(ymd.year()),
                      static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                      static_cast<int>(tod.hours().count()), static_cast<int>(tod.minutes().count()),
                      static_cast<int>(tod.seconds().count()));
    return buf;
}

DIGITAL_DELIVERY_DECL std::string format_date(date d)
{
    char buf[16];
    std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", static_cast<int>(d.year()), static_cast<unsigned>(d.month()),
                  static_cast<unsigned>(d.day()));
    return buf;
}

}  // namespace digital_delivery

#endif
