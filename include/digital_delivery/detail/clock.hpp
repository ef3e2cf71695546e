//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_DETAIL_CLOCK_HPP
#define DIGITAL_DELIVERY_DETAIL_CLOCK_HPP

/// \file
/// The clock of the library's own timers and deadlines (rate limiter, retry
/// backoff, request deadlines, watermark polling, upload stall and deadline):
/// std::chrono::steady_clock, unless a test has paused time with
/// testing::virtual_clock. Socket timeouts inside the Beast transport stay on
/// real time: they guard real I/O.

#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/any_io_executor.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace digital_delivery {
namespace detail {

/// Nanoseconds since steady_clock's epoch while time is paused; 0: real time.
/// One relaxed load per now(): what real time costs beside steady_clock::now().
inline std::atomic<std::int64_t> paused_now_ns{0};
/// While time is paused: system_clock minus steady_clock at the pause, in ns.
inline std::atomic<std::int64_t> paused_system_offset_ns{0};

/// A Clock (its time_point is steady_clock's, as the standard allows for a
/// clock with the same epoch) so that deadlines computed by callers with
/// steady_clock mix freely with the library's.
struct clock
{
    using duration = std::chrono::steady_clock::duration;
    using rep = duration::rep;
    using period = duration::period;
    using time_point = std::chrono::steady_clock::time_point;
    static constexpr bool is_steady = true;

    static time_point now() noexcept
    {
        const std::int64_t paused = paused_now_ns.load(std::memory_order_relaxed);
        if (paused == 0)
            return std::chrono::steady_clock::now();
        return time_point(std::chrono::duration_cast<duration>(std::chrono::nanoseconds(paused)));
    }

    /// Wall-clock time (for server dates: Retry-After, rate-limit resets, URL
    /// expiry), moving with now() while time is paused.
    static std::chrono::system_clock::time_point system_now() noexcept
    {
        const std::int64_t paused = paused_now_ns.load(std::memory_order_relaxed);
        if (paused == 0)
            return std::chrono::system_clock::now();
        const std::int64_t ns = paused + paused_system_offset_ns.load(std::memory_order_relaxed);
        return std::chrono::system_clock::time_point(
            std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::nanoseconds(ns)));
    }
};

/// While time is paused, the reactor sleeps at most 1 ms of real time before it
/// compares the timers with the (virtual) time again, so that an advance is
/// noticed; in real time, exactly what steady_timer does.
struct wait_traits
{
    static clock::duration to_wait_duration(const clock::duration& d)
    {
        if (paused_now_ns.load(std::memory_order_relaxed) == 0)
            return d;
        return (std::min)(d, clock::duration(std::chrono::milliseconds(1)));
    }
    static clock::duration to_wait_duration(const clock::time_point& t)
    {
        const auto now = clock::now();
        // now > 0, so t - now cannot overflow, even for time_point::max().
        return t <= now ? clock::duration::zero() : to_wait_duration(t - now);
    }
};

/// The timer of every library operation.
using timer = boost::asio::basic_waitable_timer<clock, wait_traits, boost::asio::any_io_executor>;

}  // namespace detail
}  // namespace digital_delivery

#endif
