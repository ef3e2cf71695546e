// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Running asynchronous tests with a hang guard. Every test that runs an
// io_context goes through these helpers: an operation that never completes
// fails the test, with its name, after a limit of real time (a guard, not a
// measurement: the limit is far above what any test needs), instead of
// blocking the program until ctest's TIMEOUT.
//
//   dd_test::run(ioc);                                  // ioc.run(), guarded
//   auto r = dd_test::run_awaitable(ioc, some_awaitable());
//   auto v = dd_test::wait(ioc, future);                // until the future is ready
//   dd_test::run_until(ioc, [&] { return done; });
#ifndef DIGITAL_DELIVERY_TESTS_COMMON_RUN_HPP
#define DIGITAL_DELIVERY_TESTS_COMMON_RUN_HPP

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <stdexcept>
#include <string>

namespace dd_test {

/// "Suite.name" of the running test.
inline std::string current_test()
{
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    return info ? std::string(info->test_suite_name()) + "." + info->name() : std::string("(no test)");
}

/// How long one operation may run before it counts as hung: 60 s, or
/// DD_TEST_OP_SECONDS (sanitizer builds are slower).
inline std::chrono::seconds hang_limit()
{
    if (const char* e = std::getenv("DD_TEST_OP_SECONDS"))
        if (const long s = std::strtol(e, nullptr, 10); s > 0)
            return std::chrono::seconds(s);
    return std::chrono::seconds(60);
}

/// Thrown (and reported as a failure of the current test) when an operation hangs.
struct hang_error : std::runtime_error
{
    using std::runtime_error::runtime_error;
};

[[noreturn]] inline void fail_hung(const char* what, std::chrono::seconds limit)
{
    const std::string msg =
        "HANG in " + current_test() + ": " + what + " did not complete within " + std::to_string(limit.count()) + " s";
    ADD_FAILURE() << msg;
    throw hang_error(msg);
}

/// ioc.run() until it runs out of work; fails the test if work remains after `limit`.
inline void run(boost::asio::io_context& ioc, std::chrono::seconds limit = hang_limit())
{
    if (ioc.stopped())
        ioc.restart();
    ioc.run_for(limit);
    if (!ioc.stopped())
    {
        ioc.stop();
        fail_hung("the io_context's work", limit);
    }
}

/// Runs `ioc` until `done()`; fails the test if that takes longer than `limit`.
template <class Predicate>
void run_until(boost::asio::io_context& ioc, Predicate done, std::chrono::seconds limit = hang_limit())
{
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done())
    {
        if (std::chrono::steady_clock::now() >= deadline)
            fail_hung("the awaited condition", limit);
        if (ioc.stopped())
            ioc.restart();
        ioc.run_one_for(std::chrono::milliseconds(50));
    }
}

/// Runs `ioc` until `fut` is ready and returns its value (or rethrows).
template <class T>
T wait(boost::asio::io_context& ioc, std::future<T>& fut, std::chrono::seconds limit = hang_limit())
{
    run_until(ioc, [&] { return fut.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }, limit);
    return fut.get();
}

/// co_spawns `aw` on `ioc`, runs until it completes and returns its result.
template <class Awaitable>
auto run_awaitable(boost::asio::io_context& ioc, Awaitable aw, std::chrono::seconds limit = hang_limit())
{
    auto fut = boost::asio::co_spawn(ioc, std::move(aw), boost::asio::use_future);
    return wait(ioc, fut, limit);
}

}  // namespace dd_test

#endif
