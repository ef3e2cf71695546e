// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// 1000 concurrent coroutines on one client against a sandbox store whose
// bucket is time-compressed (40 points per 0.5 s), 3 GETs for each PATCH:
// the client's rate limiter keeps every request under the server's limit.
// The client counts 20 points per 0.275 s: a bucket half the server's, on a
// window 10 % longer (91 % of its pace). On a window this short, requests that wait for
// one of the transport's connections after their grant are worth points, and
// the server absorbs the requests that waited, arriving together, with what
// its bucket holds beyond the client's count: with buckets of one size,
// nothing at the start of the load (docs/rate-limiting.md, "Under load").
// Outcomes only (no 429, every request served exactly once); how much of the
// budget such a run uses is a benchmark figure (benchmarks/scheduler/load_bench.cpp).
#include "run.hpp"
#include "sandbox_process.hpp"
#include "scheduler_load.hpp"

#include <gtest/gtest.h>

namespace {

TEST(scheduler_load, thousand_coroutines_never_see_a_429)
{
    const auto store = dd_test::sandbox_process::shared().create_store(
        {"--rate-limit-points", "40", "--rate-limit-window-seconds", "0.5", "--seed-orders", "20"});
    constexpr int n = 1000;
    const auto r = dd_test::run_scheduler_load(store.base_url, store.api_key, 20, 0.275, n, true,
                                               [](boost::asio::io_context& ioc) { dd_test::run(ioc); });
    ASSERT_TRUE(r.setup_ok);
    EXPECT_EQ(r.ok, n);
    EXPECT_EQ(r.failed, 0);
    EXPECT_EQ(r.refused_429, 0);
    EXPECT_EQ(r.responses, n) << "nothing resent, nothing lost";
}

}  // namespace
