//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// Overhead of the rate limiter per acquire: the sans-io core and the async
// path, uncontended and with 1000 waiters. Virtual clock: only our own code
// is measured, never the refill time.

#include <digital_delivery/impl/retry/retry_policy.hpp>
#include <digital_delivery/impl/rate_limit/sansio/scheduler_core.hpp>
#include <digital_delivery/impl/rate_limit/rate_limiter.hpp>
#include <digital_delivery/redis_rate_limit_store.hpp>
#include <digital_delivery/impl/retry/retry_state.hpp>
#include <digital_delivery/impl/rate_limit/shm_store.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <benchmark/benchmark.h>

#include "server_process.hpp"

#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

using namespace digital_delivery;
using namespace digital_delivery::detail;  // the machinery under test is internal
using namespace std::chrono_literals;
using clk = std::chrono::steady_clock;

namespace {

detail::scheduler_config big()
{
    detail::scheduler_config c;
    c.capacity = 1e15;  // never runs dry
    c.window = std::chrono::seconds(60);
    return c;
}

}  // namespace

// Core, points available: acquire is granted at once.
// Uncontended acquires of one point from `core` (optionally over a points
// source), virtual time moving 1 us per acquire.
static void acquire_loop(benchmark::State& state, std::shared_ptr<detail::points_source> source = {})
{
    auto now = clk::time_point{} + 1000h;
    detail::scheduler_core core(big(), now);
    if (source)
        core.use_source(std::move(source));
    std::uint64_t id = 0;
    for (auto _ : state)
    {
        now += 1us;
        auto r = core.acquire(++id, 1, priority::normal, std::nullopt, now);
        benchmark::DoNotOptimize(r);
    }
    state.SetItemsProcessed(state.iterations());
}

static void core_acquire_uncontended(benchmark::State& state) { acquire_loop(state); }
BENCHMARK(core_acquire_uncontended);

// Core over a shared GCRA cell (heap memory): one acquire of the
// shared-memory store's algorithm, without the mapping.
static void core_acquire_uncontended_gcra(benchmark::State& state)
{
    detail::gcra_cell cell;
    acquire_loop(state, std::make_shared<detail::gcra_points>(cell, 1e15, std::chrono::seconds(60), false));
}
BENCHMARK(core_acquire_uncontended_gcra);

// The same on a POSIX shared-memory segment (shm_rate_limit_store).
static void core_acquire_uncontended_shm(benchmark::State& state)
{
    const std::string name = "/digital_delivery.bench." + std::to_string(::getpid());
    std::string why;
    auto seg = detail::shm_segment::open(name, why);
    if (!seg)
    {
        state.SkipWithError(why.c_str());
        return;
    }
    acquire_loop(state, std::make_shared<detail::shm_points>(seg, 1e15, std::chrono::seconds(60), false));
    ::shm_unlink(name.c_str());
}
BENCHMARK(core_acquire_uncontended_shm);

// Two threads hammering one shared cell (two processes on one key, at most
// contention): the compare-and-swap retries under contention.
static void gcra_acquire_contended(benchmark::State& state)
{
    static detail::gcra_cell cell;
    detail::gcra_points g(cell, 1e15, std::chrono::seconds(60), false);
    auto now = clk::time_point{} + 1000h;
    for (auto _ : state)
    {
        now += 1us;
        benchmark::DoNotOptimize(g.try_take(1, now));
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(gcra_acquire_contended)->Threads(1)->Threads(2);

// Core, 1000 waiters queued behind an empty bucket (mixed priorities, every
// tenth with a deadline), then served one refill at a time.
static void core_1000_waiters(benchmark::State& state)
{
    detail::scheduler_config c;
    c.capacity = 1000;
    c.window = std::chrono::seconds(1000);  // one point per second
    std::vector<detail::scheduler_core::outcome> out;
    out.reserve(1000);
    for (auto _ : state)
    {
        auto now = clk::time_point{} + 1000h;
        detail::scheduler_core core(c, now);
        core.on_rate_limited(std::nullopt, now);  // empty
        for (std::uint64_t i = 0; i < 1000; ++i)
        {
            std::optional<clk::time_point> dl;
            if (i % 10 == 0)
                dl = now + 1h;
            core.acquire(i, 1, static_cast<priority>(i % 3), dl, now);
        }
        std::size_t served = 0;
        while (served < 1000)
        {
            now = *core.next_wake(now);
            out.clear();
            core.poll(now, out);
            served += out.size();
        }
        benchmark::DoNotOptimize(served);
    }
    state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(core_1000_waiters)->Unit(benchmark::kMicrosecond);

// Async, points available: async_acquire + post + handler through io_context::poll.
static void async_acquire_uncontended(benchmark::State& state)
{
    boost::asio::io_context ioc;
    rate_limit_params p;
    p.capacity = 1e15;
    rate_limiter lim(ioc.get_executor(), p);
    std::size_t done = 0;
    for (auto _ : state)
    {
        lim.async_acquire(1, priority::normal, std::nullopt, [&](error_code) { ++done; });
        ioc.restart();
        ioc.poll();
    }
    benchmark::DoNotOptimize(done);
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(async_acquire_uncontended);

// Baseline for the async rows: one asio::post of a trivial handler + poll,
// which every completion costs anyway (the limiter never completes inline).
// The timer only makes the context start its reactor, as the limiter's timer
// does, so that poll() costs the same epoll_wait in both rows.
static void baseline_post_and_poll(benchmark::State& state)
{
    boost::asio::io_context ioc;
    boost::asio::steady_timer reactor_on(ioc);
    std::size_t done = 0;
    for (auto _ : state)
    {
        boost::asio::post(ioc, [&] { ++done; });
        ioc.restart();
        ioc.poll();
    }
    benchmark::DoNotOptimize(done);
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(baseline_post_and_poll);

// One acquire on the Redis store, points available: async_acquire, one
// script call to a local redis-server (started here on a free port of
// 127.0.0.1) and its reply, then the completion. Real time: a round trip.
static void async_acquire_redis_round_trip(benchmark::State& state)
{
    if (!dd_test::have_redis_server())
    {
        state.SkipWithError("redis-server is not installed");
        return;
    }
    static dd_test::redis_server redis;
    boost::asio::io_context ioc;
    rate_limit_params p;
    p.capacity = 1e15;
    p.store = redis_rate_limit_store({.port = redis.port(), .key_prefix = "bench:" + std::to_string(::getpid()) + ":"});
    auto lim = unshared_rate_limiter(ioc.get_executor(), "https://bench.example.com", "key", p);
    std::size_t done = 0, failed = 0;
    for (auto _ : state)
    {
        const std::size_t before = done;
        lim->async_acquire(1, priority::normal, std::nullopt, [&](error_code ec) { ++done; failed += !!ec; });
        ioc.restart();
        while (done == before && ioc.run_one())
        {
        }
    }
    if (failed)
        state.SkipWithError("an acquire failed");
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(async_acquire_redis_round_trip)->UseRealTime();

// Async, 1000 waiters queued (each with its handler and timer bookkeeping),
// then one virtual refill of 1000 points grants them all.
static void async_1000_waiters(benchmark::State& state)
{
    boost::asio::io_context ioc;
    auto now = clk::time_point{} + 1000h;
    rate_limit_params p;
    p.capacity = 1000;
    p.window = std::chrono::seconds(1000);
    std::size_t done = 0;
    for (auto _ : state)
    {
        rate_limiter lim(ioc.get_executor(), p, [&] { return now; });
        http_headers h;
        lim.observe_response(h, 429, now, std::chrono::system_clock::now());  // empty bucket
        for (int i = 0; i < 1000; ++i)
            lim.async_acquire(1, static_cast<priority>(i % 3), std::nullopt, [&](error_code) { ++done; });
        ioc.restart();
        ioc.poll();
        now += 1000s;
        lim.wake();
        ioc.restart();
        ioc.poll();
    }
    if (done != 1000 * static_cast<std::size_t>(state.iterations()))
        state.SkipWithError("not every waiter was served");
    state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(async_1000_waiters)->Unit(benchmark::kMicrosecond);

// One retry decision (classification, backoff, budget).
static void retry_on_failure(benchmark::State& state)
{
    auto now = clk::time_point{} + 1000h;
    retry_params rp;
    rp.max_attempts = 1 << 30;
    rp.budget_capacity = 1e15;
    auto budget = std::make_shared<retry_budget>(rp, now);
    retry_state rs(rp, budget, now, std::nullopt, [] { return 0.5; });
    rs.on_attempt_start(now);
    attempt_failure f{make_error_code(api_errc::server_error), 503, std::nullopt};
    for (auto _ : state)
    {
        auto d = rs.on_failure(f, true, now);
        benchmark::DoNotOptimize(d);
    }
}
BENCHMARK(retry_on_failure);

BENCHMARK_MAIN();
