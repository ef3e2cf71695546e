//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_DETAIL_SATURATING_TIME_HPP
#define DIGITAL_DELIVERY_DETAIL_SATURATING_TIME_HPP

// Time arithmetic that cannot overflow. Numbers and dates a server sends
// (Retry-After, X-RateLimit-Reset, an upload URL's expires_at) can lie far
// outside what a nanosecond time point holds (std::chrono::system_clock with
// libstdc++: about 1678-2262); converting them with duration_cast or mixing
// them with such a time point is signed overflow, i.e. undefined behaviour.
// These helpers clamp to the target type's range instead.

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <ratio>
#include <type_traits>

namespace digital_delivery {
namespace detail {

/// a + b, clamped to [INT64_MIN, INT64_MAX].
constexpr std::int64_t saturating_add(std::int64_t a, std::int64_t b) noexcept
{
    constexpr auto hi = std::numeric_limits<std::int64_t>::max();
    constexpr auto lo = std::numeric_limits<std::int64_t>::min();
    if (b > 0 && a > hi - b)
        return hi;
    if (b < 0 && a < lo - b)
        return lo;
    return a + b;
}

/// duration_cast<To>(d) for integral representations (rounding toward zero,
/// as duration_cast does), clamped to To's range instead of overflowing.
template <class To, class Rep, class Period>
constexpr To saturating_duration_cast(std::chrono::duration<Rep, Period> d) noexcept
{
    static_assert(std::is_integral_v<Rep> && std::is_integral_v<typename To::rep>);
    static_assert(sizeof(Rep) <= sizeof(std::int64_t) && sizeof(typename To::rep) <= sizeof(std::int64_t));
    using ratio = std::ratio_divide<Period, typename To::period>;
    using to_rep = typename To::rep;
    constexpr auto hi = std::numeric_limits<to_rep>::max();
    constexpr auto lo = std::numeric_limits<to_rep>::min();
    const std::int64_t c = static_cast<std::int64_t>(d.count());
    if constexpr (ratio::num == 1)
    {
        const std::int64_t v = c / static_cast<std::int64_t>(ratio::den);  // never grows
        return To(static_cast<to_rep>(v > hi ? hi : v < lo ? lo : v));
    }
    else
    {
        static_assert(ratio::den == 1, "only exact multiples or divisions of a unit");
        constexpr std::int64_t num = static_cast<std::int64_t>(ratio::num);
        if (c > static_cast<std::int64_t>(hi) / num)
            return To(hi);
        if (c < static_cast<std::int64_t>(lo) / num)
            return To(lo);
        return To(static_cast<to_rep>(c * num));
    }
}

/// `t` as a time point of `ToDuration`, clamped to its range.
template <class ToDuration, class Clock, class Duration>
constexpr std::chrono::time_point<Clock, ToDuration> saturating_time_point_cast(
    std::chrono::time_point<Clock, Duration> t
) noexcept
{
    return std::chrono::time_point<Clock, ToDuration>(saturating_duration_cast<ToDuration>(t.time_since_epoch()));
}

/// t + d when the sum is a time point of t's type; nullopt when it is not
/// representable (the caller decides: ignore or clamp).
template <class Clock, class Duration, class Rep, class Period>
constexpr std::optional<std::chrono::time_point<Clock, Duration>> checked_add(
    std::chrono::time_point<Clock, Duration> t,
    std::chrono::duration<Rep, Period> d
) noexcept
{
    using rep = typename Duration::rep;
    const Duration dd = saturating_duration_cast<Duration>(d);
    if (dd.count() == std::numeric_limits<rep>::max() || dd.count() == std::numeric_limits<rep>::min())
        return std::nullopt;
    const std::int64_t a = static_cast<std::int64_t>(t.time_since_epoch().count());
    const std::int64_t b = static_cast<std::int64_t>(dd.count());
    const std::int64_t s = saturating_add(a, b);
    if (s == std::numeric_limits<std::int64_t>::max() || s == std::numeric_limits<std::int64_t>::min() ||
        s > static_cast<std::int64_t>(std::numeric_limits<rep>::max()) ||
        s < static_cast<std::int64_t>(std::numeric_limits<rep>::min()))
        return std::nullopt;
    return std::chrono::time_point<Clock, Duration>(Duration(static_cast<rep>(s)));
}

}  // namespace detail
}  // namespace digital_delivery

#endif
