//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_TESTING_VIRTUAL_CLOCK_HPP
#define DIGITAL_DELIVERY_TESTING_VIRTUAL_CLOCK_HPP

/// \file
/// Paused time for tests of code that uses the library: while a virtual_clock
/// exists, the library's own timers and deadlines (rate limiter waits, retry
/// backoff and Retry-After pauses, request and operation deadlines, watermark
/// polling, upload stall timeouts and URL refresh decisions) follow a clock
/// that moves only when the test advances it. A test then checks *when*
/// something happens without waiting for it and without depending on the
/// machine's speed:
///
/// \code
/// dd::testing::virtual_clock vc;                 // time stands still from here
/// auto fut = asio::co_spawn(ioc, dd::async_get_order(client, "o1", asio::use_awaitable), asio::use_future);
/// vc.run_for(ioc, 4999ms);                       // a 429 said Retry-After: 5
/// EXPECT_EQ(fake->requests().size(), 1u);        // not resent yet
/// vc.run_for(ioc, 1ms);
/// EXPECT_EQ(fake->requests().size(), 2u);        // resent, exactly on time
/// \endcode
///
/// Process-wide: one virtual_clock at a time (tests of one program run one after
/// another). Timers of the Beast transport's sockets stay on real time, so use
/// it with testing::fake_transport or your own transport.

#include <digital_delivery/detail/clock.hpp>

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <stdexcept>

namespace digital_delivery {
namespace testing {

/// The library's time, paused while this object lives (see the file's
/// comment). Throws std::logic_error when another one exists.
class virtual_clock
{
public:
    using duration = detail::clock::duration;      ///< steady_clock's duration.
    using time_point = detail::clock::time_point;  ///< A steady_clock time point.

    /// Pauses the library's time at the current steady_clock instant.
    virtual_clock()
    {
        using std::chrono::nanoseconds;
        const auto now = std::chrono::duration_cast<nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
        const auto sys = std::chrono::duration_cast<nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
        detail::paused_system_offset_ns.store(sys - now);
        std::int64_t expected = 0;
        if (!detail::paused_now_ns.compare_exchange_strong(expected, now > 0 ? now : 1))
            throw std::logic_error("digital_delivery::testing::virtual_clock: one at a time");
    }
    virtual_clock(const virtual_clock&) = delete;
    virtual_clock& operator=(const virtual_clock&) = delete;

    /// Back to real time.
    ~virtual_clock() { detail::paused_now_ns.store(0); }

    /// \return The library's current (virtual) time.
    static time_point now() noexcept { return detail::clock::now(); }

    /// \return The wall-clock time that goes with now() (server dates, URL expiry).
    static std::chrono::system_clock::time_point system_now() noexcept { return detail::clock::system_now(); }

    /// Moves time forward by `d` (timers that expire are then ready to run).
    /// \param d How far; zero or negative does nothing.
    void advance(duration d) noexcept
    {
        if (d > duration::zero())
            detail::paused_now_ns.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
    }

    /// Runs `ioc` while moving time forward by `d` in steps of at most `step`,
    /// letting every handler that becomes ready at each instant run before time
    /// moves on. Returns with time exactly `d` later.
    /// \param ioc The io_context that runs the operations under test.
    /// \param d How far to move time.
    /// \param step The largest single move.
    void run_for(boost::asio::io_context& ioc, duration d, duration step = std::chrono::milliseconds(10))
    {
        settle(ioc);
        while (d > duration::zero())
        {
            const duration s = d < step ? d : step;
            advance(s);
            d -= s;
            settle(ioc);
        }
    }

    /// Runs `ioc`, moving time forward in steps of `step`, until `done()` is
    /// true or `limit` of virtual time has passed; returns done().
    /// \param ioc The io_context that runs the operations under test.
    /// \param done Called with no argument; true ends the run.
    /// \param limit The most virtual time to let pass.
    /// \param step Each move of time.
    /// \return done() at the end.
    template <class Predicate>
    bool run_until(boost::asio::io_context& ioc, Predicate done, duration limit,
                   duration step = std::chrono::milliseconds(10))
    {
        settle(ioc);
        for (duration passed{}; !done() && passed < limit; passed += step)
        {
            advance(step);
            settle(ioc);
        }
        return done();
    }

private:
    // Runs what is ready at the current instant: handlers, and the timers that
    // have expired (the reactor notices them within 1 ms of real time).
    static void settle(boost::asio::io_context& ioc)
    {
        if (ioc.stopped())
            ioc.restart();
        for (;;)
        {
            const std::size_t ran = ioc.poll() + ioc.run_one_for(std::chrono::milliseconds(2));
            if (ioc.stopped())
                ioc.restart();
            if (ran == 0)
                return;
        }
    }
};

}  // namespace testing
}  // namespace digital_delivery

#endif
