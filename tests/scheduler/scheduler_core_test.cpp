//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// The sans-io scheduler on a virtual clock: ordering, aging, cancellation,
// deadlines, header sync, 429 pauses.

#include <digital_delivery/impl/rate_limit/sansio/scheduler_core.hpp>

#include <gtest/gtest.h>

#include <vector>

using namespace digital_delivery;
using namespace std::chrono_literals;
using detail::scheduler_core;
using status = scheduler_core::acquire_status;

namespace {

const scheduler_core::time_point core_t0 = scheduler_core::time_point{} + 1000h;

detail::scheduler_config cfg(double capacity, std::chrono::duration<double> window, std::chrono::seconds aging = 10s)
{
    detail::scheduler_config c;
    c.capacity = capacity;
    c.window = window;
    c.aging_interval = aging;
    c.max_retry_after = 60s;
    return c;
}

// Drains the bucket at core_t0 with direct grants.
void drain(scheduler_core& s, std::uint64_t& id)
{
    while (s.acquire(id++, 1, priority::interactive, std::nullopt, core_t0) == status::granted)
    {
    }
    ASSERT_TRUE(s.cancel(id - 1));  // the last one queued: take it back
}

std::vector<std::uint64_t> granted(scheduler_core& s, scheduler_core::time_point now)
{
    std::vector<scheduler_core::outcome> out;
    s.poll(now, out);
    std::vector<std::uint64_t> ids;
    for (auto& o : out)
        if (o.granted)
            ids.push_back(o.id);
    return ids;
}

}  // namespace

TEST(token_bucket, refills_linearly_and_caps)
{
    detail::token_bucket b(40, 60s, core_t0);
    EXPECT_DOUBLE_EQ(b.available(core_t0), 40);
    EXPECT_TRUE(b.try_take(40, core_t0));
    EXPECT_FALSE(b.try_take(1, core_t0));
    EXPECT_FALSE(b.try_take(1, core_t0 + 1499ms));
    EXPECT_TRUE(b.try_take(1, core_t0 + 1500ms));
    EXPECT_EQ(b.time_to_reach(2, core_t0 + 1500ms), 3s);
    EXPECT_DOUBLE_EQ(b.available(core_t0 + 1h), 40);  // capped
    EXPECT_FALSE(b.lower_to(41, core_t0 + 1h));
    EXPECT_TRUE(b.lower_to(-2, core_t0 + 1h));
    EXPECT_EQ(b.time_to_reach(1, core_t0 + 1h), 4500ms);
}

TEST(scheduler_core, grants_immediately_while_points_last)
{
    scheduler_core s(cfg(40, 60s), core_t0);
    for (int i = 0; i < 20; ++i)
        EXPECT_EQ(s.acquire(i, 2, priority::normal, std::nullopt, core_t0), status::granted);
    EXPECT_EQ(s.acquire(99, 1, priority::normal, std::nullopt, core_t0), status::queued);
    EXPECT_EQ(s.next_wake(core_t0), core_t0 + 1500ms);
}

TEST(scheduler_core, fifo_within_a_class)
{
    scheduler_core s(cfg(2, 2s), core_t0);  // one point per second
    std::uint64_t id = 0;
    drain(s, id);
    for (std::uint64_t w = 100; w < 104; ++w)
        ASSERT_EQ(s.acquire(w, 1, priority::normal, std::nullopt, core_t0), status::queued);
    EXPECT_TRUE(granted(s, core_t0 + 999ms).empty());
    EXPECT_EQ(granted(s, core_t0 + 1s), std::vector<std::uint64_t>{100});
    EXPECT_EQ(granted(s, core_t0 + 2s), std::vector<std::uint64_t>{101});
    EXPECT_EQ(granted(s, core_t0 + 4s), (std::vector<std::uint64_t>{102, 103}));
}

TEST(scheduler_core, head_of_line_is_not_bypassed_by_cheaper_requests)
{
    scheduler_core s(cfg(2, 2s), core_t0);
    std::uint64_t id = 0;
    drain(s, id);
    ASSERT_EQ(s.acquire(100, 2, priority::normal, std::nullopt, core_t0), status::queued);
    ASSERT_EQ(s.acquire(101, 1, priority::normal, std::nullopt, core_t0), status::queued);
    EXPECT_TRUE(granted(s, core_t0 + 1s).empty());  // one point: not enough for the head
    EXPECT_EQ(granted(s, core_t0 + 2s), std::vector<std::uint64_t>{100});
    EXPECT_EQ(granted(s, core_t0 + 3s), std::vector<std::uint64_t>{101});
}

TEST(scheduler_core, priority_across_classes)
{
    scheduler_core s(cfg(3, 3s), core_t0);
    std::uint64_t id = 0;
    drain(s, id);
    ASSERT_EQ(s.acquire(1, 1, priority::background, std::nullopt, core_t0), status::queued);
    ASSERT_EQ(s.acquire(2, 1, priority::normal, std::nullopt, core_t0), status::queued);
    ASSERT_EQ(s.acquire(3, 1, priority::interactive, std::nullopt, core_t0), status::queued);
    ASSERT_EQ(s.acquire(4, 1, priority::interactive, std::nullopt, core_t0), status::queued);
    EXPECT_EQ(granted(s, core_t0 + 1s), std::vector<std::uint64_t>{3});
    EXPECT_EQ(granted(s, core_t0 + 2s), std::vector<std::uint64_t>{4});
    EXPECT_EQ(granted(s, core_t0 + 3s), std::vector<std::uint64_t>{2});
    EXPECT_EQ(granted(s, core_t0 + 4s), std::vector<std::uint64_t>{1});
}

TEST(scheduler_core, aging_lifts_background_work)
{
    // One point per 100 s; aging 10 s per class: a background request queued
    // at core_t0 ranks like an interactive one queued at core_t0 + 20 s.
    scheduler_core s(cfg(1, 100s, 10s), core_t0);
    std::uint64_t id = 0;
    drain(s, id);
    ASSERT_EQ(s.acquire(1, 1, priority::background, std::nullopt, core_t0), status::queued);
    ASSERT_EQ(s.acquire(2, 1, priority::interactive, std::nullopt, core_t0 + 21s), status::queued);  // after it
    ASSERT_EQ(s.acquire(3, 1, priority::interactive, std::nullopt, core_t0 + 19s), status::queued);  // before it
    ASSERT_EQ(s.acquire(4, 1, priority::normal, std::nullopt, core_t0 + 9s), status::queued);       // core_t0+19 s: before it
    EXPECT_EQ(granted(s, core_t0 + 100s), std::vector<std::uint64_t>{3});
    EXPECT_EQ(granted(s, core_t0 + 200s), std::vector<std::uint64_t>{4});
    EXPECT_EQ(granted(s, core_t0 + 300s), std::vector<std::uint64_t>{1});
    EXPECT_EQ(granted(s, core_t0 + 400s), std::vector<std::uint64_t>{2});
}

TEST(scheduler_core, starved_background_proceeds_under_constant_interactive_load)
{
    scheduler_core s(cfg(1, 1s, 10s), core_t0);
    std::uint64_t id = 0;
    drain(s, id);
    ASSERT_EQ(s.acquire(1000, 1, priority::background, std::nullopt, core_t0), status::queued);
    // A new interactive request every 0.5 s (twice the refill rate).
    std::vector<scheduler_core::outcome> out;
    auto when = core_t0;
    for (int i = 0; i < 200 && s.is_queued(1000); ++i)
    {
        when += 500ms;
        s.acquire(2000 + i, 1, priority::interactive, std::nullopt, when);
        s.poll(when, out);
    }
    EXPECT_FALSE(s.is_queued(1000));
    auto it = std::find_if(out.begin(), out.end(), [](auto& o) { return o.id == 1000; });
    ASSERT_NE(it, out.end());
    EXPECT_TRUE(it->granted);
}

TEST(scheduler_core, cancel_releases_the_reservation)
{
    scheduler_core s(cfg(2, 2s), core_t0);  // one point per second
    std::uint64_t id = 0;
    drain(s, id);
    ASSERT_EQ(s.acquire(1, 2, priority::normal, std::nullopt, core_t0), status::queued);
    // With 1 ahead of it, 2 cannot be served before core_t0 + 3 s.
    EXPECT_EQ(s.acquire(2, 1, priority::normal, core_t0 + 2s, core_t0), status::deadline_unreachable);
    ASSERT_EQ(s.acquire(3, 1, priority::normal, std::nullopt, core_t0), status::queued);
    EXPECT_DOUBLE_EQ(s.reserved(), 3);
    EXPECT_TRUE(s.cancel(1));
    EXPECT_FALSE(s.cancel(1));
    EXPECT_DOUBLE_EQ(s.reserved(), 1);
    EXPECT_EQ(s.next_wake(core_t0), core_t0 + 1s);  // 3 moved up
    EXPECT_EQ(granted(s, core_t0 + 1s), std::vector<std::uint64_t>{3});
    // And a deadline that was unreachable is now fine.
    EXPECT_EQ(s.acquire(4, 1, priority::normal, core_t0 + 2s, core_t0 + 1s), status::queued);
}

TEST(scheduler_core, deadline_fails_at_once_when_the_wait_cannot_end_in_time)
{
    scheduler_core s(cfg(40, 60s), core_t0);
    std::uint64_t id = 0;
    drain(s, id);
    // one point needs 1.5 s
    EXPECT_EQ(s.acquire(1, 1, priority::normal, core_t0 + 1499ms, core_t0), status::deadline_unreachable);
    EXPECT_EQ(s.acquire(2, 1, priority::normal, core_t0 + 1500ms, core_t0), status::queued);
    EXPECT_EQ(s.acquire(3, 2, priority::normal, core_t0 + 4499ms, core_t0), status::deadline_unreachable);  // needs 3 pts
    EXPECT_EQ(s.acquire(4, 2, priority::normal, core_t0 + 4500ms, core_t0), status::queued);
    EXPECT_EQ(s.queued(), 2u);
}

TEST(scheduler_core, queued_deadline_fails_when_a_higher_priority_request_overtakes)
{
    scheduler_core s(cfg(2, 2s), core_t0);
    std::uint64_t id = 0;
    drain(s, id);
    ASSERT_EQ(s.acquire(1, 1, priority::background, core_t0 + 1s, core_t0), status::queued);
    ASSERT_EQ(s.acquire(2, 1, priority::interactive, std::nullopt, core_t0), status::queued);
    std::vector<scheduler_core::outcome> out;
    s.poll(core_t0, out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].id, 1u);
    EXPECT_FALSE(out[0].granted);
}

TEST(scheduler_core, queued_deadline_fails_when_a_429_pause_covers_it)
{
    scheduler_core s(cfg(40, 60s), core_t0);
    std::uint64_t id = 0;
    drain(s, id);
    ASSERT_EQ(s.acquire(1, 1, priority::normal, core_t0 + 10s, core_t0), status::queued);
    ASSERT_EQ(s.acquire(2, 1, priority::normal, std::nullopt, core_t0), status::queued);
    ASSERT_TRUE(s.on_rate_limited(30s, core_t0 + 100ms));
    std::vector<scheduler_core::outcome> out;
    s.poll(core_t0 + 100ms, out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].id, 1u);
    EXPECT_FALSE(out[0].granted);
    EXPECT_EQ(s.next_wake(core_t0 + 100ms), core_t0 + 30100ms);
}

TEST(scheduler_core, header_sync_only_lowers)
{
    scheduler_core s(cfg(40, 60s), core_t0);
    rate_limit_snapshot h;
    h.limit = 40;
    h.remaining = 10;
    EXPECT_TRUE(s.observe(h, core_t0));
    EXPECT_DOUBLE_EQ(s.available(core_t0), 10);
    // A stale response (sent earlier, arriving later) says 35: ignored.
    h.remaining = 35;
    EXPECT_FALSE(s.observe(h, core_t0 + 1s));
    EXPECT_NEAR(s.available(core_t0 + 3s), 12, 1e-9);  // 10 + 3 s of refill
    // A newer, lower one applies.
    h.remaining = 4;
    EXPECT_TRUE(s.observe(h, core_t0 + 3s));
    EXPECT_DOUBLE_EQ(s.available(core_t0 + 3s), 4);
    // Out of order burst: 7, 2, 9 -> ends at 2.
    for (int r : {7, 2, 9})
    {
        h.remaining = r;
        s.observe(h, core_t0 + 3s);
    }
    EXPECT_DOUBLE_EQ(s.available(core_t0 + 3s), 2);
    auto snap = s.snapshot(core_t0 + 3s, std::chrono::system_clock::time_point{} + 1000h);
    EXPECT_EQ(snap.source, rate_limit_source::header);
    EXPECT_EQ(snap.remaining, 2);
    EXPECT_EQ(s.acquire(1, 1, priority::normal, std::nullopt, core_t0 + 3s), status::granted);
    EXPECT_EQ(s.snapshot(core_t0 + 3s, {}).source, rate_limit_source::estimate);
}

TEST(scheduler_core, header_limit_lowers_the_capacity_but_never_raises_it)
{
    scheduler_core s(cfg(40, 60s), core_t0);
    rate_limit_snapshot h;
    h.limit = 80;
    s.observe(h, core_t0);
    EXPECT_DOUBLE_EQ(s.capacity(), 40);
    h.limit = 20;
    s.observe(h, core_t0);
    EXPECT_DOUBLE_EQ(s.capacity(), 20);
    EXPECT_DOUBLE_EQ(s.available(core_t0 + 1h), 20);
}

TEST(scheduler_core, a_429_storm_pauses_once_to_the_latest_end)
{
    scheduler_core s(cfg(40, 60s), core_t0);
    int extended = 0;
    for (int i = 0; i < 10; ++i)
        if (s.on_rate_limited(5s, core_t0 + std::chrono::milliseconds(i)))
            ++extended;
    EXPECT_EQ(extended, 10);  // each ends 1 ms later than the previous one
    EXPECT_EQ(s.paused_until(), core_t0 + 5009ms);  // not 50 s: pauses do not add up
    EXPECT_FALSE(s.on_rate_limited(1s, core_t0 + 10ms));  // shorter: no change
    EXPECT_EQ(s.paused_until(), core_t0 + 5009ms);
    EXPECT_TRUE(s.on_rate_limited(1h, core_t0 + 10ms));   // capped by max_retry_after
    EXPECT_EQ(s.paused_until(), core_t0 + 60010ms);
    // The bucket was emptied; nothing is granted during the pause.
    EXPECT_EQ(s.acquire(1, 1, priority::interactive, std::nullopt, core_t0 + 59s), status::queued);
    EXPECT_FALSE(s.take_resumed(core_t0 + 59s));
    EXPECT_EQ(granted(s, core_t0 + 60010ms), std::vector<std::uint64_t>{1});
    EXPECT_TRUE(s.take_resumed(core_t0 + 60010ms));
    EXPECT_FALSE(s.take_resumed(core_t0 + 60010ms));
}

TEST(scheduler_core, a_429_without_retry_after_empties_the_bucket)
{
    scheduler_core s(cfg(40, 60s), core_t0);
    EXPECT_FALSE(s.on_rate_limited(std::nullopt, core_t0));
    EXPECT_EQ(s.acquire(1, 1, priority::interactive, std::nullopt, core_t0), status::queued);
    EXPECT_EQ(s.next_wake(core_t0), core_t0 + 1500ms);
}

TEST(scheduler_core, refund_and_oversized_cost)
{
    scheduler_core s(cfg(4, 4s), core_t0);
    EXPECT_EQ(s.acquire(1, 4, priority::normal, std::nullopt, core_t0), status::granted);
    s.refund(2, core_t0);
    EXPECT_DOUBLE_EQ(s.available(core_t0), 2);
    s.refund(100, core_t0);
    EXPECT_DOUBLE_EQ(s.available(core_t0), 4);
    // Above the capacity: taken whole from the full bucket, which goes below
    // zero (the points granted over time stay the refill).
    EXPECT_EQ(s.acquire(2, 100, priority::normal, std::nullopt, core_t0), status::granted);
    EXPECT_DOUBLE_EQ(s.available(core_t0), -96);
    EXPECT_EQ(s.acquire(3, 0, priority::normal, std::nullopt, core_t0), status::granted);  // free
    // The next point comes once the balance is back above 1: 97 points at 1 / s.
    EXPECT_EQ(s.acquire(4, 1, priority::normal, core_t0 + 96s, core_t0), status::deadline_unreachable);
    EXPECT_EQ(s.acquire(5, 1, priority::normal, core_t0 + 98s, core_t0), status::queued);
}

// A cost above the capacity queued behind others waits only until the
// bucket is full, then overdraws it: it never blocks the queue.
TEST(scheduler_core, an_oversized_cost_in_the_queue_is_granted_when_the_bucket_is_full)
{
    scheduler_core s(cfg(1.25, 1.25s), core_t0);  // 1 point per second, a fallback smaller than a write
    EXPECT_EQ(s.acquire(1, 1, priority::normal, std::nullopt, core_t0), status::granted);
    EXPECT_EQ(s.acquire(2, 2, priority::normal, std::nullopt, core_t0), status::queued);
    EXPECT_EQ(s.acquire(3, 1, priority::normal, std::nullopt, core_t0), status::queued);
    std::vector<detail::scheduler_core::outcome> out;
    s.poll(core_t0 + 900ms, out);
    EXPECT_TRUE(out.empty()) << "the bucket (0.25 after the first point) is not full yet";
    s.poll(core_t0 + 1s, out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].id, 2u);
    EXPECT_NEAR(s.available(core_t0 + 1s), -0.75, 1e-9);
    EXPECT_EQ(*s.next_wake(core_t0 + 1s), core_t0 + 2750ms) << "the GET behind it waits for -0.75 to reach 1";
}

// ---- probe_first: learn what the server's bucket holds before a burst ----

namespace {

detail::scheduler_config probing(double capacity, std::chrono::duration<double> window)
{
    auto c = cfg(capacity, window);
    c.probe_first = true;
    return c;
}

rate_limit_snapshot remaining(std::int64_t n)
{
    rate_limit_snapshot s;
    s.remaining = n;
    return s;
}

}  // namespace

// A new bucket believes it is full; the server's may be spent by another
// process. One request goes first; its answer's figures decide the rest.
TEST(scheduler_core, a_new_bucket_sends_one_request_and_learns_from_its_answer)
{
    scheduler_core s(probing(40, 60s), core_t0);
    EXPECT_TRUE(s.try_grant(1, priority::normal, core_t0)) << "the probe";
    EXPECT_TRUE(s.probing());
    EXPECT_FALSE(s.try_grant(1, priority::normal, core_t0)) << "a second request before the probe's answer";
    for (std::uint64_t id = 1; id <= 10; ++id)
        EXPECT_EQ(s.acquire(id, 1, priority::normal, std::nullopt, core_t0), status::queued);
    EXPECT_TRUE(granted(s, core_t0 + 1s).empty()) << "nothing before the answer";
    // The answer: 3 points left on the server.
    s.observe(remaining(3), core_t0 + 1s);
    s.on_answer(core_t0 + 1s);
    EXPECT_FALSE(s.probing());
    EXPECT_EQ(granted(s, core_t0 + 1s), (std::vector<std::uint64_t>{1, 2, 3}));
    EXPECT_EQ(granted(s, core_t0 + 2500ms), (std::vector<std::uint64_t>{4})) << "then the refill, 1 point per 1.5 s";
}

TEST(scheduler_core, without_probe_first_a_new_bucket_grants_its_capacity_at_once)
{
    scheduler_core s(cfg(40, 60s), core_t0);
    for (int i = 0; i < 40; ++i)
        EXPECT_TRUE(s.try_grant(1, priority::normal, core_t0));
    EXPECT_FALSE(s.probing());
}

// After a 429 pause, the oldest waiter goes alone; the others follow its
// answer. Answers arriving during the pause teach nothing about its end.
TEST(scheduler_core, after_a_429_pause_the_oldest_waiter_goes_alone)
{
    scheduler_core s(probing(40, 2s), core_t0);  // 20 points a second
    ASSERT_TRUE(s.try_grant(1, priority::normal, core_t0));
    s.on_answer(core_t0);  // the first answer: no probe from here
    ASSERT_TRUE(s.try_grant(1, priority::normal, core_t0));
    ASSERT_TRUE(s.try_grant(1, priority::normal, core_t0));
    s.on_rate_limited(2s, core_t0 + 100ms);
    for (std::uint64_t id = 1; id <= 5; ++id)
        EXPECT_EQ(s.acquire(id, 1, priority::normal, std::nullopt, core_t0 + 100ms), status::queued);
    s.on_answer(core_t0 + 200ms);  // a request sent before the 429, answered during the pause
    EXPECT_TRUE(granted(s, core_t0 + 2099ms).empty()) << "granted during the pause";
    EXPECT_EQ(granted(s, core_t0 + 2100ms), (std::vector<std::uint64_t>{1})) << "the oldest waiter, alone";
    EXPECT_TRUE(granted(s, core_t0 + 3s).empty()) << "granted before the probe's answer";
    s.observe(remaining(2), core_t0 + 3s);  // the refill says 20 or more; the server 2
    s.on_answer(core_t0 + 3s);
    EXPECT_EQ(granted(s, core_t0 + 3s), (std::vector<std::uint64_t>{2, 3}));
}

// Never a hang: a probe that ends without an answer (a transport failure, a
// timeout, a cancellation), or whose points come back, lets the next waiter
// go first; an answer without X-RateLimit-* figures ends the probing (the
// server served it: the estimate rules); a probe nobody reports ends after
// one window.
TEST(scheduler_core, a_probe_without_an_answer_passes_its_turn_to_the_next_waiter)
{
    scheduler_core s(probing(40, 60s), core_t0);
    for (std::uint64_t id = 1; id <= 6; ++id)
        s.acquire(id, 1, priority::normal, std::nullopt, core_t0);
    // acquire() granted the first one at once: it is the probe.
    EXPECT_TRUE(s.probing());
    EXPECT_TRUE(granted(s, core_t0).empty());
    s.on_unanswered();  // it failed or timed out
    EXPECT_EQ(granted(s, core_t0 + 1s), (std::vector<std::uint64_t>{2})) << "the next waiter, alone";
    s.refund(1, core_t0 + 2s);  // cancelled after its grant, never sent
    EXPECT_EQ(granted(s, core_t0 + 2s), (std::vector<std::uint64_t>{3}));
    EXPECT_TRUE(granted(s, core_t0 + 3s).empty());
    EXPECT_EQ(s.next_wake(core_t0 + 3s), core_t0 + 2s + 60s) << "the wake that ends a lost probe";
    EXPECT_EQ(granted(s, core_t0 + 62s), (std::vector<std::uint64_t>{4})) << "a probe nobody reported ends after a window";
    s.on_answer(core_t0 + 63s);  // answered, without rate-limit figures
    EXPECT_FALSE(s.probing());
    EXPECT_EQ(granted(s, core_t0 + 63s), (std::vector<std::uint64_t>{5, 6}));
}

TEST(scheduler_core, a_429_answer_to_the_probe_pauses_and_probes_again)
{
    scheduler_core s(probing(40, 2s), core_t0);
    for (std::uint64_t id = 1; id <= 4; ++id)
        s.acquire(id, 1, priority::normal, std::nullopt, core_t0);
    s.on_rate_limited(1s, core_t0 + 50ms);  // the probe's answer: the key is spent
    EXPECT_TRUE(granted(s, core_t0 + 1049ms).empty());
    EXPECT_EQ(granted(s, core_t0 + 1050ms), (std::vector<std::uint64_t>{2})) << "one probe again";
    EXPECT_TRUE(granted(s, core_t0 + 1099ms).empty());
    s.on_answer(core_t0 + 1100ms);
    EXPECT_EQ(granted(s, core_t0 + 1100ms), (std::vector<std::uint64_t>{3, 4}));
}
