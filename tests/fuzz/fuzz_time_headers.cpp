// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// libFuzzer target: the time values a response carries (docs/reliability.md).
//
// Input: 8 bytes of `now` (a system_clock::time_point, any 64-bit count, so
// the far past and far future too), then lines ('\n'-separated). Every line
// goes through each parser the client applies to a response:
//  - parse_retry_after (Retry-After: delta-seconds or an IMF-fixdate);
//  - parse_timestamp and parse_date (ISO 8601 values of the JSON bodies,
//    also X-RateLimit-Reset's neighbours), re-formatted and parsed again;
//  - detail::keep_alive_timeout_param and keep_alive_limit (Keep-Alive:
//    timeout=N, the Beast transport's connection reuse);
// and the first three lines are X-RateLimit-Limit, -Remaining and -Reset for
// parse_rate_limit_headers (also with lowercase names, and repeated).
// Checked: a Retry-After wait is between zero and one year; a parsed
// timestamp (of the years 0000-9999 in UTC) or date formats to text that
// parses back to the same value; a
// keep-alive timeout is -1 or 0-999999999 s, and the reuse limit between
// zero and the idle timeout; rate-limit figures are never negative.
#include "fuzz_check.hpp"

#include <digital_delivery/http_message.hpp>
#include <digital_delivery/impl/http/sansio/connection_reuse.hpp>
#include <digital_delivery/rate_limit.hpp>
#include <digital_delivery/timestamp.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace dd = digital_delivery;
using namespace std::chrono_literals;

namespace {

void one_value(std::string_view v, std::chrono::system_clock::time_point now)
{
    if (const auto ra = dd::parse_retry_after(v, now))
        DD_FUZZ_CHECK(ra->count() >= 0 && *ra <= std::chrono::hours(24 * 365));

    if (const auto t = dd::parse_timestamp(v))
    {
        // An offset or a leap second can move the instant out of the years
        // 0000-9999 ("9999-12-31T23:59:60Z"): parsed (decoding is tolerant),
        // but formatted with a year of 5 digits or a sign (timestamp.hpp).
        const std::chrono::year y = std::chrono::year_month_day(std::chrono::floor<std::chrono::days>(*t)).year();
        const auto again = dd::parse_timestamp(dd::format_timestamp(*t));
        DD_FUZZ_CHECK((again && *again == *t) || y < std::chrono::year(0) || y > std::chrono::year(9999));
        (void)dd::to_system_time(*t);
    }
    if (const auto d = dd::parse_date(v))
    {
        const auto again = dd::parse_date(dd::format_date(*d));
        DD_FUZZ_CHECK(again && *again == *d);
    }

    const std::int64_t ka = dd::detail::keep_alive_timeout_param(v);
    DD_FUZZ_CHECK(ka >= -1 && ka <= 999999999);
    dd::http_response r;
    r.headers.add("Keep-Alive", v);
    const auto limit = dd::detail::keep_alive_limit(r, 4s);
    DD_FUZZ_CHECK(limit.count() >= 0 && limit <= 4s);
}

void rate_limit(const std::vector<std::string_view>& lines, std::chrono::system_clock::time_point now, bool lower)
{
    dd::http_headers h;
    static constexpr const char* names[2][3] = {{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"},
                                                {"x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"}};
    for (std::size_t i = 0; i < lines.size() && i < 6; ++i)
        h.add(names[lower][i % 3], lines[i]);
    if (const auto snap = dd::parse_rate_limit_headers(h, now))
    {
        DD_FUZZ_CHECK(!snap->limit || *snap->limit >= 0);
        DD_FUZZ_CHECK(!snap->remaining || *snap->remaining >= 0);
        DD_FUZZ_CHECK(snap->observed_at == now);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 8)
        return 0;
    std::int64_t ticks;
    std::memcpy(&ticks, data, sizeof ticks);
    const std::chrono::system_clock::time_point now{std::chrono::system_clock::duration(ticks)};
    const std::vector<std::string_view> lines = fuzz_lines({reinterpret_cast<const char*>(data + 8), size - 8});
    for (const auto v : lines)
        one_value(v, now);
    rate_limit(lines, now, false);
    rate_limit(lines, now, true);
    return 0;
}
