//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// Issue 47: the share of the bucket background requests may use
// (rate_limit_params::background_share), on the virtual clock: in one process
// through the rate limiter, and in several "processes" (several schedulers,
// each over its own view of one shared GCRA cell, as shm_rate_limit_store
// maps it), where a background request of one must never take the points a
// foreground request of another is waiting for.

#include <digital_delivery/impl/rate_limit/rate_limiter.hpp>
#include <digital_delivery/impl/rate_limit/sansio/gcra_store.hpp>
#include <digital_delivery/impl/rate_limit/sansio/scheduler_core.hpp>
#include <digital_delivery/rate_limit.hpp>

#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <unordered_map>
#include <vector>

using namespace digital_delivery;
using namespace digital_delivery::detail;  // the machinery under test is internal
using namespace std::chrono_literals;
namespace asio = boost::asio;


namespace {

const std::chrono::steady_clock::time_point share_t0 = std::chrono::steady_clock::time_point{} + 2000h;

void run_ready(asio::io_context& ioc)
{
    ioc.restart();
    ioc.poll();
}

}  // namespace

TEST(background_share, background_requests_leave_the_reserve_to_foreground_ones)
{
    // 40 points per 60 s, the default share (25 %): background requests take
    // the top 10 points; the 30 below stay for interactive/normal requests.
    asio::io_context ioc;
    std::chrono::steady_clock::time_point now = share_t0;
    rate_limit_params p;
    p.hold_refill_until_response = false;
    p.probe_first = false;
    ASSERT_EQ(p.background_share, 0.25) << "the documented default";
    rate_limiter lim(ioc.get_executor(), p, [&] { return now; });
    int bg = 0, fg = 0;
    for (int i = 0; i < 20; ++i)
        lim.async_acquire(1, priority::background, std::nullopt, [&](error_code ec) { bg += !ec; });
    run_ready(ioc);
    EXPECT_EQ(bg, 10) << "background stops at the reserve";
    for (int i = 0; i < 30; ++i)
        lim.async_acquire(1, priority::interactive, std::nullopt, [&](error_code ec) { fg += !ec; });
    run_ready(ioc);
    EXPECT_EQ(fg, 30) << "the reserve is there for the foreground";
    // The bucket is empty; the 10 background waiters are held by the reserve
    // until they have waited one aging_interval (10 s), then go as normal
    // requests: 10 s refilled 6.67 points.
    now += 9999ms;
    lim.wake();
    run_ready(ioc);
    EXPECT_EQ(bg, 10) << "held by the reserve before aging";
    now += 1ms;
    lim.wake();
    run_ready(ioc);
    EXPECT_EQ(bg, 16) << "aged: never starved";
}

TEST(background_share, one_is_no_reserve_and_a_request_above_the_share_fits_a_full_bucket)
{
    asio::io_context ioc;
    std::chrono::steady_clock::time_point now = share_t0;
    rate_limit_params p;
    p.capacity = 4;
    p.hold_refill_until_response = false;
    p.probe_first = false;
    p.background_share = 1;
    rate_limiter all(ioc.get_executor(), p, [&] { return now; });
    int n = 0;
    for (int i = 0; i < 4; ++i)
        all.async_acquire(1, priority::background, std::nullopt, [&](error_code ec) { n += !ec; });
    run_ready(ioc);
    EXPECT_EQ(n, 4) << "share 1: the whole bucket";

    // Share 0.25 of 4 is 1 point; a write costs 2: granted from a full bucket only.
    p.background_share = 0.25;
    rate_limiter lim(ioc.get_executor(), p, [&] { return now; });
    int w = 0;
    lim.async_acquire(2, priority::background, std::nullopt, [&](error_code ec) { w += !ec; });
    lim.async_acquire(2, priority::background, std::nullopt, [&](error_code ec) { w += !ec; });
    run_ready(ioc);
    EXPECT_EQ(w, 1) << "the first from the full bucket; the second would leave less than the reserve";
    // Out-of-range shares are clamped, NaN is the default: nothing hangs.
    for (double s : {-1.0, 2.0, std::nan("")})
    {
        p.background_share = s;
        rate_limiter x(ioc.get_executor(), p, [&] { return now; });
        int k = 0;
        x.async_acquire(1, priority::background, std::nullopt, [&](error_code ec) { k += !ec; });
        run_ready(ioc);
        EXPECT_EQ(k, 1) << s;
    }
}

TEST(background_share, a_waiter_held_by_the_reserve_wakes_when_it_fills_or_ages)
{
    scheduler_config cfg;
    cfg.capacity = 4;
    cfg.window = 4s;  // one point per second
    cfg.background_share = 0.25;
    scheduler_core core(cfg, share_t0);
    for (scheduler_core::waiter_id i = 0; i < 4; ++i)
        ASSERT_EQ(core.acquire(i, 1, priority::interactive, std::nullopt, share_t0), scheduler_core::acquire_status::granted);
    ASSERT_EQ(core.acquire(9, 1, priority::background, std::nullopt, share_t0), scheduler_core::acquire_status::queued);
    EXPECT_EQ(core.next_wake(share_t0), share_t0 + 4s) << "4 points (reserve 3 + 1) by refill, before aging (10 s)";
    std::vector<scheduler_core::outcome> out;
    core.poll(share_t0 + 3999ms, out);
    EXPECT_TRUE(out.empty()) << "3.999 points there, but the reserve is 3";
    core.poll(share_t0 + 4s, out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(out[0].granted);

    // 40 points per 60 s: reserve + cost is 31 points, 46.5 s of refill;
    // aging (10 s) comes first and wakes it.
    scheduler_config big;
    big.background_share = 0.25;
    scheduler_core c2(big, share_t0);
    ASSERT_EQ(c2.acquire(1, 40, priority::interactive, std::nullopt, share_t0), scheduler_core::acquire_status::granted);
    ASSERT_EQ(c2.acquire(2, 1, priority::background, std::nullopt, share_t0), scheduler_core::acquire_status::queued);
    EXPECT_EQ(c2.next_wake(share_t0), share_t0 + 10s);
    out.clear();
    c2.poll(share_t0 + 10s, out);
    ASSERT_EQ(out.size(), 1u) << "aged out of the reserve";
    EXPECT_TRUE(out[0].granted);
}

namespace {

// Several processes on one shared cell, each a scheduler over its own
// gcra_points view (as shm_rate_limit_store maps one segment in each
// process). Process 0 sends foreground requests (interactive and normal) at
// random, on average `fg_load` of the bucket's rate; processes 1.. keep
// `backlog` background requests waiting each. Every 10 ms each process polls,
// process 0 first. Records what the test asserts.
struct fleet_run
{
    int bg_below_reserve = 0;      // unaged background grants that left less than the reserve
    int bg_while_fg_waits = 0;     // unaged background grants while a foreground request waited
    int bg_aged = 0;               // background grants after aging (allowed below the reserve)
    double bg_points = 0;
    int fg_waited_steps = 0;       // steps at whose end a foreground request was still waiting
};

fleet_run run_fleet(double share, double fg_load, int processes, int backlog, std::uint32_t seed)
{
    scheduler_config cfg;
    cfg.capacity = 40;
    cfg.window = 60s;
    cfg.background_share = share;
    auto cell = std::make_shared<gcra_cell>();
    std::vector<std::unique_ptr<scheduler_core>> p;
    for (int i = 0; i < processes; ++i)
    {
        p.push_back(std::make_unique<scheduler_core>(cfg, share_t0));
        p.back()->use_source(std::make_shared<gcra_points>(*cell, cfg.capacity, cfg.window, false));
    }
    gcra_points view(*cell, cfg.capacity, cfg.window, false);
    const double reserve = (1 - share) * cfg.capacity;
    std::mt19937 rng(seed);
    // Foreground: a request every 10 ms with probability fg_load * rate * 10 ms / mean cost (1.25).
    std::bernoulli_distribution arrive(fg_load * (40.0 / 60.0) * 0.01 / 1.25);
    std::bernoulli_distribution write(0.25);
    std::bernoulli_distribution interactive(0.5);
    std::unordered_map<scheduler_core::waiter_id, std::pair<std::chrono::steady_clock::time_point, double>> bg_waiting;
    scheduler_core::waiter_id next_id = 1;
    fleet_run r;
    std::vector<scheduler_core::outcome> out;
    for (auto now = share_t0; now < share_t0 + 600s; now += 10ms)
    {
        if (arrive(rng))
        {
            const double cost = write(rng) ? 2 : 1;
            const auto prio = interactive(rng) ? priority::interactive : priority::normal;
            p[0]->acquire(next_id++, cost, prio, std::nullopt, now);
        }
        out.clear();
        p[0]->poll(now, out);
        const bool fg_waits = p[0]->queued() > 0;
        r.fg_waited_steps += fg_waits;
        for (int i = 1; i < processes; ++i)
        {
            while (p[i]->queued() < static_cast<std::size_t>(backlog))
            {
                const double cost = write(rng) ? 2 : 1;
                const auto id = next_id++;
                if (p[i]->acquire(id, cost, priority::background, std::nullopt, now) == scheduler_core::acquire_status::granted)
                {
                    r.bg_points += cost;
                    r.bg_below_reserve += view.available(now) + 1e-6 < reserve;
                    r.bg_while_fg_waits += fg_waits;
                }
                else
                    bg_waiting.emplace(id, std::make_pair(now, cost));
            }
            out.clear();
            p[i]->poll(now, out);
            for (auto& o : out)
            {
                auto it = bg_waiting.find(o.id);
                if (it == bg_waiting.end())
                    continue;
                if (o.granted)
                {
                    r.bg_points += it->second.second;
                    if (now - it->second.first >= cfg.aging_interval)
                        ++r.bg_aged;
                    else
                    {
                        r.bg_below_reserve += view.available(now) + 1e-6 < reserve;
                        r.bg_while_fg_waits += fg_waits;
                    }
                }
                bg_waiting.erase(it);
            }
        }
    }
    return r;
}

}  // namespace

TEST(background_share, background_in_other_processes_never_takes_what_a_foreground_waits_for)
{
    // Three processes on one cell: process 0's foreground at 90 % of the rate
    // (bursty: it often waits), processes 1 and 2 each with 3 background
    // requests always waiting. With the reserve, a background grant (before
    // aging) never leaves the bucket below the reserve and never happens while
    // process 0 has a foreground request waiting; aged requests (10 s of
    // waiting) are the only background grants beyond that.
    for (std::uint32_t seed : {1u, 2u, 3u})
    {
        const fleet_run r = run_fleet(0.25, 0.9, 3, 3, seed);
        EXPECT_EQ(r.bg_below_reserve, 0) << seed;
        EXPECT_EQ(r.bg_while_fg_waits, 0) << seed;
        EXPECT_GT(r.fg_waited_steps, 0) << seed << ": the foreground must have waited for the test to mean anything";
        EXPECT_GT(r.bg_points, 0) << seed << ": background is delayed, never starved";
        // Aged grants are bounded: each background request ages at most once,
        // and at most 6 wait at any time: at most 6 per aging interval.
        EXPECT_LE(r.bg_aged, 6 * 60) << seed;
    }
    // Without a reserve (share 1) the same run has background take the points
    // foreground requests were waiting for: what the reserve prevents.
    const fleet_run none = run_fleet(1.0, 0.9, 3, 3, 1);
    EXPECT_GT(none.bg_while_fg_waits, 0);
}

TEST(background_share, one_shared_cell_keeps_the_reserve_under_racing_views)
{
    // The reserve is checked in the same compare-and-swap as the take: two
    // views (two processes) taking in turn never go below it.
    gcra_cell cell;
    gcra_points a(cell, 40, 60s, false), b(cell, 40, 60s, false);
    int taken = 0;
    for (int i = 0; i < 40; ++i)
        taken += (i % 2 ? a : b).try_take(1, share_t0, 30);
    EXPECT_EQ(taken, 10);
    EXPECT_NEAR(a.available(share_t0), 30, 1e-6);
    EXPECT_TRUE(a.try_take(30, share_t0)) << "no reserve for a foreground take";
    EXPECT_FALSE(b.try_take(1, share_t0 + 45s, 30)) << "30 points back after 45 s: one short of reserve + cost";
    EXPECT_TRUE(b.try_take(1, share_t0 + 46500ms, 30));
}
