//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// Issue 16: N processes (1, 2, 4, 8) on one API key against one sandbox store
// with a time-compressed bucket (40 points per `window` s). Each process runs
// the scheduler_load workload (`requests` coroutines, 3 GETs for each PATCH,
// retries off). Four configurations, in the same run:
//
//   shared_memory       shm_rate_limit_store, capacity 40 (the fix)
//   in_process, 40      each process believes it owns the key (the baseline)
//   in_process, 40/N    a static share per process (the old advice)
//   redis, 2 hosts      redis_rate_limit_store, capacity 40: two groups of N/2
//                       processes standing for two hosts, one redis-server
//                       (started by this program on a free port of 127.0.0.1).
//                       Every process is a Redis client of its own, as it would
//                       be on another host: the groups differ only in name.
//
// Reported: 429 answers, failed requests, PATCHes served, points served, and
// utilisation = points served / points the server's bucket allowed from the
// first request of any process to the last completion of any (capacity + refill).
//
//   multiprocess_bench [requests per process=200] [window_seconds=0.5] [all|redis|shared] [N]
//   (shared: the two shared stores without the baseline rows; N: that number of processes only)
//
// `redis`: the Redis rows only. The workers are this program again:
// `multiprocess_bench --worker URL KEY STORE CAPACITY REQUESTS WINDOW` (STORE: shm, local or
// redis:PORT:PREFIX).
// Results: docs/performance.md ("One key, many processes").
#include <digital_delivery/impl/rate_limit/rate_limiter.hpp>
#include <digital_delivery/redis_rate_limit_store.hpp>
#include <digital_delivery/shm_rate_limit_store.hpp>
#include <digital_delivery/impl/rate_limit/shm_store.hpp>

#include "sandbox_process.hpp"
#include "scheduler_load.hpp"
#include "server_process.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace dd = digital_delivery;

static int worker(char** argv)
{
    const std::string url = argv[2], key = argv[3];
    const std::string kind = argv[4];
    dd::rate_limit_store store;  // in-process
    if (kind == "shm")
        store = dd::shm_rate_limit_store();
    if (kind.rfind("redis:", 0) == 0)
    {
        dd::redis_store_params redis;
        const auto colon = kind.find(':', 6);
        redis.port = static_cast<std::uint16_t>(std::atoi(kind.substr(6, colon - 6).c_str()));
        redis.key_prefix = kind.substr(colon + 1);
        store = dd::redis_rate_limit_store(std::move(redis));
    }
    const double capacity = std::atof(argv[5]);
    const int requests = std::atoi(argv[6]);
    const double window = std::atof(argv[7]);
    const auto r = dd_test::run_scheduler_load(url, key, capacity, window, requests, true,
                                               [](boost::asio::io_context& ioc) { ioc.restart(); ioc.run(); }, std::move(store));
    const auto ns = [](auto t) { return static_cast<long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count()); };
    std::printf("%d %d %d %d %ld %ld %lld %lld\n", r.setup_ok ? 1 : 0, r.ok, r.failed, r.refused_429, r.points,
                r.points_served, ns(r.first), ns(r.last));
    return 0;
}

int main(int argc, char** argv)
{
    if (argc > 1 && std::string(argv[1]) == "--worker")
        return worker(argv);
    const int requests = argc > 1 ? std::atoi(argv[1]) : 200;
    const double window = argc > 2 ? std::atof(argv[2]) : 0.5;
    // argv[3]: "redis" (Redis rows only), "shared" (the shared stores, no
    // baseline rows) or "all"; argv[4]: one N only (the real window is long).
    const std::string which = argc > 3 ? argv[3] : "all";
    const bool redis_only = which == "redis";
    const bool shared_only = which == "shared";
    const int only_n = argc > 4 ? std::atoi(argv[4]) : 0;
    constexpr double capacity = 40;
    auto& sandbox = dd_test::sandbox_process::shared();
    std::unique_ptr<dd_test::redis_server> redis;
    if (dd_test::have_redis_server())
        redis = std::make_unique<dd_test::redis_server>();
    else
        std::fprintf(stderr, "no %s: no Redis rows\n", dd_test::redis_server_exe);
    std::printf("| store | N | requests | points served | PATCHes served | seconds | allowed points | utilisation | 429 answers | failed |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
    for (const int n : {1, 2, 4, 8})
        for (const int config : {0, 1, 2, 3})
        {
            if (n == 1 && config != 0)
                continue;  // the three are the same with one process
            if ((config == 3 && !redis) || (redis_only && config != 3) || (shared_only && (config == 1 || config == 2)) ||
                (only_n != 0 && n != only_n))
                continue;
            const auto store = sandbox.create_store({"--rate-limit-points", "40", "--rate-limit-window-seconds",
                                                     std::to_string(window), "--seed-orders", "5"});
            const std::string shm = dd::detail::shm_store_name(dd::detail::normalise_base_url(store.base_url), store.api_key);
            ::shm_unlink(shm.c_str());
            const std::string kind = config == 0   ? "shm"
                                     : config == 3 ? "redis:" + std::to_string(redis->port()) + ":bench:" +
                                                         std::to_string(::getpid()) + ":"
                                                   : "local";
            const std::string cap = std::to_string(config == 2 ? capacity / n : capacity);
            const std::string req = std::to_string(requests), win = std::to_string(window);
            std::vector<std::pair<pid_t, FILE*>> workers;
            for (int i = 0; i < n; ++i)
            {
                int fds[2];
                if (::pipe(fds) != 0)
                    return 1;
                posix_spawn_file_actions_t fa;
                posix_spawn_file_actions_init(&fa);
                posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
                posix_spawn_file_actions_addclose(&fa, fds[0]);
                std::string exe = "/proc/self/exe", w = "--worker", u = store.base_url, k = store.api_key, kd = kind, c = cap,
                            r = req, wn = win;
                char* args[] = {exe.data(), w.data(), u.data(), k.data(), kd.data(), c.data(), r.data(), wn.data(), nullptr};
                pid_t pid = 0;
                if (::posix_spawn(&pid, exe.c_str(), &fa, nullptr, args, environ) != 0)
                    return 1;
                posix_spawn_file_actions_destroy(&fa);
                ::close(fds[1]);
                workers.emplace_back(pid, ::fdopen(fds[0], "r"));
            }
            long served = 0;
            int ok = 0, failed = 0, refused = 0, setup = 1;
            long long first = 0, last = 0;
            for (auto& [pid, f] : workers)
            {
                int s = 0, o = 0, fl = 0, rf = 0;
                long pts = 0, sv = 0;
                long long a = 0, b = 0;
                if (std::fscanf(f, "%d %d %d %d %ld %ld %lld %lld", &s, &o, &fl, &rf, &pts, &sv, &a, &b) != 8)
                    s = 0;
                std::fclose(f);
                int status = 0;
                ::waitpid(pid, &status, 0);
                setup &= s;
                ok += o;
                failed += fl;
                refused += rf;
                served += sv;
                first = first == 0 ? a : std::min(first, a);
                last = std::max(last, b);
            }
            ::shm_unlink(shm.c_str());
            if (!setup)
            {
                std::fprintf(stderr, "a worker's setup failed\n");
                return 1;
            }
            const double seconds = static_cast<double>(last - first) / 1e9;
            const double allowed = capacity + capacity / window * seconds;
            const long writes = served - ok;  // a PATCH is 2 points, a GET 1
            const char* label = config == 0   ? "shared_memory"
                                : config == 1 ? "in_process, 40 each (baseline)"
                                : config == 2 ? "in_process, 40/N each"
                                              : "redis, 2 hosts of N/2";
            std::printf("| %s | %d | %d | %ld | %ld | %.2f | %.1f | %.1f%% | %d | %d |\n", label, n, n * requests, served, writes,
                        seconds, allowed, 100.0 * static_cast<double>(served) / allowed, refused, failed);
            std::fflush(stdout);
        }
    return 0;
}
