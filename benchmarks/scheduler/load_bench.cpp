//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// How much of the server's budget the client's rate limiter uses under load:
// N concurrent coroutines (3 GETs for each PATCH) on one client against a
// sandbox store with a time-compressed bucket, with the limiter on, and, as
// the baseline in the same run, off (every request sent at once, the server's
// 429 answers counted). Utilisation = points served / points the bucket allowed
// over the run (capacity + refill during it).
//
//   load_bench [N=1000] [window_seconds=0.5]
//
// Results: docs/performance.md ("Rate limiter under load").
#include "sandbox_process.hpp"
#include "scheduler_load.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv)
{
    const int n = argc > 1 ? std::atoi(argv[1]) : 1000;
    const double window = argc > 2 ? std::atof(argv[2]) : 0.5;
    constexpr double capacity = 40;
    auto& sandbox = dd_test::sandbox_process::shared();
    std::printf("| limiter | requests | points asked | points served | seconds | allowed points | utilisation | 429 answers | failed |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|\n");
    for (const bool limiter : {true, false})
    {
        const auto store = sandbox.create_store({"--rate-limit-points", "40", "--rate-limit-window-seconds",
                                                 std::to_string(window), "--seed-orders", "20"});
        const auto r = dd_test::run_scheduler_load(store.base_url, store.api_key, capacity, window, n, limiter,
                                                   [](boost::asio::io_context& ioc) { ioc.restart(); ioc.run(); });
        if (!r.setup_ok || r.ok + r.failed != n)
        {
            std::fprintf(stderr, "setup failed, or not every request completed\n");
            return 1;
        }
        const double allowed = capacity + capacity / window * r.seconds;
        std::printf("| %s | %d | %ld | %ld | %.2f | %.1f | %.2f%% | %d | %d |\n", limiter ? "on" : "off (baseline)", n,
                    r.points, r.points_served, r.seconds, allowed,
                    100.0 * static_cast<double>(r.points_served) / allowed, r.refused_429, r.failed);
    }
    return 0;
}
