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
// `redis`: the Redis rows only.
//
// Issue 47, foreground beside background in another process:
//
//   multiprocess_bench priority [bursts=60] [window_seconds=1]
//
// One process sends the foreground: a burst of 10 interactive GETs every
// half window (50 % of the bucket's rate), and reports each request's latency
// (call to completion: the rate-limit wait plus one local round trip) as p50,
// p99 and max. Beside it, either nothing or a background job in another
// process: 4 coroutines sending priority::background GETs back to back for
// the whole run, with rate_limit_params::background_share 0.25 (the default)
// or 1 (no reserve). Both stores (shm, and a redis-server this program
// starts). A 429 would cost a Retry-After pause: counted, never expected.
//
// The workers are this program again:
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

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace dd = digital_delivery;

// The store a worker's STORE argument names: "shm", "redis:PORT:PREFIX", else `other`.
static dd::rate_limit_store store_named(const std::string& kind, dd::rate_limit_store other)
{
    if (kind == "shm")
        return dd::shm_rate_limit_store();
    if (kind.rfind("redis:", 0) == 0)
    {
        dd::redis_store_params redis;
        const auto colon = kind.find(':', 6);
        redis.port = static_cast<std::uint16_t>(std::atoi(kind.substr(6, colon - 6).c_str()));
        redis.key_prefix = kind.substr(colon + 1);
        return dd::redis_rate_limit_store(std::move(redis));
    }
    return other;
}

// `--prio fg|bg URL KEY STORE SHARE BURSTS WINDOW`: a worker of the priority mode.
static int prio_worker(char** argv)
{
    namespace asio = boost::asio;
    const bool fg = std::string(argv[2]) == "fg";
    const std::string url = argv[3], key = argv[4], kind = argv[5];
    const double share = std::atof(argv[6]);
    const int bursts = std::atoi(argv[7]);
    const double window = std::atof(argv[8]);
    dd::rate_limit_store store = store_named(kind, dd::shm_rate_limit_store());
    asio::io_context ioc;
    dd_test::detail::counting_transport transport{dd::beast_transport(ioc.get_executor())};
    dd::client_params params{.base_url = url, .api_key = key};
    params.rate_limit.capacity = 40;
    params.rate_limit.window = std::chrono::duration<double>(window);
    params.rate_limit.store = std::move(store);
    params.rate_limit.background_share = share;
    params.retry.enabled = false;
    params.operation_timeout = std::chrono::milliseconds(0);
    dd::client client(transport, std::move(params));
    using clk = std::chrono::steady_clock;
    const auto period = std::chrono::duration_cast<clk::duration>(std::chrono::duration<double>(window / 2));
    // The background job runs from before the foreground's first burst to after its last.
    const auto run_for = std::chrono::duration_cast<clk::duration>(std::chrono::duration<double>(window * 2)) + period * (bursts + 2);
    std::vector<double> latencies;
    long served = 0;
    int failed = 0;
    std::string order_id;  // outlives the coroutines of the background job
    // Outlives them too (the coroutine that starts them returns at once).
    auto get = [&](dd::priority prio) -> asio::awaitable<void> {
        const auto t0 = clk::now();
        dd::diagnostics diag;
        const dd::request_options ro{.prio = prio};
        auto [ec, o] = co_await dd::async_get_order(client, order_id, ro, diag, asio::as_tuple(asio::use_awaitable));
        if (ec && failed++ == 0)
            std::fprintf(stderr, "%s request failed: %s (%s)\n", fg ? "foreground" : "background", ec.message().c_str(),
                         diag.to_string().c_str());
        if (!ec)
            ++served;
        if (prio != dd::priority::background)
            latencies.push_back(std::chrono::duration<double, std::milli>(clk::now() - t0).count());
    };
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            dd::order_query first{.per_page = 1};
            dd::order_list orders = co_await dd::async_list_orders(client, first);
            order_id = orders.orders.at(0).id;
            asio::steady_timer timer(ioc);
            const auto start = clk::now();
            if (!fg)
            {
                for (int c = 0; c < 4; ++c)
                    asio::co_spawn(
                        ioc,
                        [&, start]() -> asio::awaitable<void> {
                            while (clk::now() - start < run_for)
                                co_await get(dd::priority::background);
                        },
                        asio::detached);
                co_return;
            }
            // Both buckets full, and the background job (started first) under way.
            timer.expires_after(2 * period + period / 2);
            co_await timer.async_wait(asio::use_awaitable);
            const auto t0 = clk::now();
            for (int b = 0; b < bursts; ++b)
            {
                timer.expires_at(t0 + b * period);
                co_await timer.async_wait(asio::use_awaitable);
                for (int i = 0; i < 10; ++i)
                    asio::co_spawn(ioc, get(dd::priority::interactive), asio::detached);
            }
        },
        asio::detached);
    ioc.run();
    std::sort(latencies.begin(), latencies.end());
    const auto pct = [&](double q) {
        return latencies.empty() ? 0.0 : latencies[std::min(latencies.size() - 1, static_cast<std::size_t>(q * static_cast<double>(latencies.size())))];
    };
    std::printf("%ld %d %d %.1f %.1f %.1f\n", served, failed, transport.refused->load(), pct(0.5), pct(0.99),
                latencies.empty() ? 0.0 : latencies.back());
    return 0;
}

// Spawns this program with `args`; its standard output is read from the FILE.
static std::pair<pid_t, FILE*> spawn_worker(std::vector<std::string> args)
{
    int fds[2];
    if (::pipe(fds) != 0)
        return {0, nullptr};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    args.insert(args.begin(), "/proc/self/exe");
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int rc = ::posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    if (rc != 0)
    {
        ::close(fds[0]);
        return {0, nullptr};
    }
    return {pid, ::fdopen(fds[0], "r")};
}

// The priority mode (see the file comment).
static int priority_main(int bursts, double window)
{
    auto& sandbox = dd_test::sandbox_process::shared();
    std::unique_ptr<dd_test::redis_server> redis;
    if (dd_test::have_redis_server())
        redis = std::make_unique<dd_test::redis_server>();
    std::printf("| store | background job in another process | foreground p50 (ms) | foreground p99 (ms) | foreground max (ms) | background points | 429 answers | failed |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
    for (const bool use_redis : {false, true})
        for (const int config : {0, 1, 2})  // none; share 0.25; share 1
        {
            if (use_redis && !redis)
                continue;
            const auto store = sandbox.create_store({"--rate-limit-points", "40", "--rate-limit-window-seconds",
                                                     std::to_string(window), "--seed-orders", "5"});
            const std::string shm = dd::detail::shm_store_name(dd::detail::normalise_base_url(store.base_url), store.api_key);
            ::shm_unlink(shm.c_str());
            const std::string kind =
                use_redis ? "redis:" + std::to_string(redis->port()) + ":bench-prio:" + std::to_string(::getpid()) + ":" + std::to_string(config) + ":"
                          : "shm";
            const std::string share = config == 2 ? "1" : "0.25";
            std::pair<pid_t, FILE*> bg{0, nullptr};
            if (config != 0)
                bg = spawn_worker({"--prio", "bg", store.base_url, store.api_key, kind, share, std::to_string(bursts), std::to_string(window)});
            auto fg = spawn_worker({"--prio", "fg", store.base_url, store.api_key, kind, share, std::to_string(bursts), std::to_string(window)});
            long fs = 0, bs = 0;
            int ff = 0, fr = 0, bf = 0, br = 0;
            double p50 = 0, p99 = 0, mx = 0, d1 = 0, d2 = 0, d3 = 0;
            bool ok = fg.second && std::fscanf(fg.second, "%ld %d %d %lf %lf %lf", &fs, &ff, &fr, &p50, &p99, &mx) == 6;
            if (bg.second)
                ok = ok && std::fscanf(bg.second, "%ld %d %d %lf %lf %lf", &bs, &bf, &br, &d1, &d2, &d3) == 6;
            for (auto* p : {&fg, &bg})
                if (p->second)
                {
                    std::fclose(p->second);
                    int status = 0;
                    ::waitpid(p->first, &status, 0);
                    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                    {
                        std::fprintf(stderr, "the %s worker ended with status %d\n", p == &fg ? "foreground" : "background", status);
                        ok = false;
                    }
                }
            ::shm_unlink(shm.c_str());
            if (!ok)
            {
                std::fprintf(stderr, "a worker failed\n");
                return 1;
            }
            const char* label = config == 0 ? "none" : config == 1 ? "yes, background_share 0.25 (default)" : "yes, background_share 1 (no reserve)";
            std::printf("| %s | %s | %.1f | %.1f | %.1f | %ld | %d | %d |\n", use_redis ? "redis" : "shared_memory", label, p50, p99,
                        mx, bs, fr + br, ff + bf);
            std::fflush(stdout);
        }
    return 0;
}

static int worker(char** argv)
{
    const std::string url = argv[2], key = argv[3];
    const std::string kind = argv[4];
    dd::rate_limit_store store = store_named(kind, dd::rate_limit_store());  // default: in-process
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
    if (argc > 8 && std::string(argv[1]) == "--prio")
        return prio_worker(argv);
    if (argc > 1 && std::string(argv[1]) == "priority")
        return priority_main(argc > 2 ? std::atoi(argv[2]) : 60, argc > 3 ? std::atof(argv[3]) : 1.0);
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
