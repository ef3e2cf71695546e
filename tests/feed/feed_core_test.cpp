// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The order feed's sans-io core against a fake orders list (dates read in a
// chosen time zone, newest first, pages of 250), with the in-memory checkpoint
// and times given by the test: bursts, midnight, ties, late orders, refunds,
// crashes at every step of poll -> handle -> acknowledge, dead letters.
#include <digital_delivery/feed_checkpoint.hpp>
#include <digital_delivery/feed_event.hpp>
#include <digital_delivery/impl/feed/sansio/feed_core.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace dd = digital_delivery;
using namespace std::chrono_literals;
using core = dd::detail::feed_core;
using dd::timestamp;

namespace {

timestamp at(int y, unsigned m, unsigned d, int hh = 0, int mm = 0, int ss = 0, int ms = 0)
{
    using namespace std::chrono;
    return timestamp(sys_days(year(y) / month(m) / day(d))) + hours(hh) + minutes(mm) + seconds(ss) + milliseconds(ms);
}

/// The orders list as the service serves it: created_at_min read as a date in
/// the server's time zone (`tz`), newest first (ties: the later-inserted first).
struct fake_server
{
    struct row
    {
        dd::order o;
        int seq;
    };
    std::vector<row> rows;
    std::chrono::minutes tz{0};
    int next = 0;
    int requests = 0;

    dd::order& add(timestamp created, std::string id = {})
    {
        dd::order o;
        o.id = id.empty() ? "o" + std::to_string(next) : id;
        o.name = "#" + std::to_string(1000 + next);
        o.created_at = created;
        o.financial_status = dd::open_enum<dd::financial_status>(dd::financial_status::paid);
        rows.push_back({o, next++});
        return rows.back().o;
    }

    dd::order* find(const std::string& id)
    {
        for (auto& r : rows)
            if (r.o.id == id)
                return &r.o;
        return nullptr;
    }

    dd::order_list list(const dd::order_query& q)
    {
        ++requests;
        std::vector<const row*> hits;
        for (const auto& r : rows)
        {
            const auto local_day = std::chrono::floor<std::chrono::days>(r.o.created_at + tz);
            if (q.created_at_min && local_day < std::chrono::sys_days(*q.created_at_min))
                continue;
            hits.push_back(&r);
        }
        std::sort(hits.begin(), hits.end(), [](const row* a, const row* b) {
            return a->o.created_at != b->o.created_at ? a->o.created_at > b->o.created_at : a->seq > b->seq;
        });
        const int per = q.per_page.value_or(25);
        const int page = q.page.value_or(1);
        dd::order_list l;
        for (std::size_t i = static_cast<std::size_t>((page - 1) * per); i < hits.size() && l.orders.size() < static_cast<std::size_t>(per); ++i)
            l.orders.push_back(hits[i]->o);
        l.pagination.current_page = page;
        l.pagination.per_page = per;
        l.pagination.total_count = static_cast<std::int64_t>(hits.size());
        l.pagination.total_pages = (l.pagination.total_count + per - 1) / per;
        return l;
    }
};

/// One consumer: a core on a checkpoint that outlives it (a crash drops the core).
struct consumer
{
    consumer(fake_server& s, dd::memory_feed_checkpoint& c, dd::order_feed_options o) : srv(s), cp(c), opts(std::move(o)) {}

    fake_server& srv;
    dd::memory_feed_checkpoint& cp;
    dd::order_feed_options opts;
    std::unique_ptr<core> c;
    std::vector<dd::feed_event> handled;       // every handler call
    std::multiset<std::string> acked;          // every durable acknowledgement
    std::vector<std::vector<dd::order_query>> queries;  // per scan

    void boot(timestamp now)
    {
        c = std::make_unique<core>(opts);
        dd::feed_state s;
        ASSERT_FALSE(cp.load(s));
        if (auto first = c->start(s, now))
        {
            ASSERT_FALSE(cp.commit(*first));
            c->committed(*first);
        }
    }

    // One scan; `clock` gives the time of each page (to cross midnight).
    void scan(core::scan_kind k, timestamp now, std::function<timestamp(int)> clock = {})
    {
        auto& qs = queries.emplace_back();
        auto q = c->begin_scan(k, now);
        for (int p = 0;; ++p)
        {
            qs.push_back(q);
            const timestamp t = clock ? clock(p) : now;
            auto n = c->on_page(srv.list(q), t);
            if (!n)
                break;
            q = *n;
        }
        commit_silent();
    }

    void commit_silent()
    {
        auto s = c->take_silent();
        if (!s.empty())
        {
            ASSERT_FALSE(cp.commit(s));
            c->committed(s);
        }
    }

    // Delivers what is queued; the handler succeeds. Stops after `limit` events.
    void drain(timestamp now, int limit = 1 << 30)
    {
        commit_silent();
        for (int i = 0; i < limit && c->has_event(); ++i)
        {
            c->delivering();
            handled.push_back(c->front());
            auto a = c->ack_commit();
            ASSERT_FALSE(cp.commit(a));
            acked.insert(c->front().key);
            c->acknowledged(a);
        }
        (void)now;
    }

    std::vector<std::string> handled_ids() const
    {
        std::vector<std::string> r;
        for (const auto& e : handled)
            r.push_back(e.order.id);
        return r;
    }
};

class feed_core_test : public ::testing::Test
{
protected:
    fake_server srv;
    dd::memory_feed_checkpoint cp;
    consumer feed{srv, cp, {}};
    timestamp t0 = at(2026, 12, 4, 12, 0, 0);
};

TEST_F(feed_core_test, an_idle_poll_costs_one_point_whatever_the_day_holds)
{
    for (int i = 0; i < 1200; ++i)
        srv.add(t0 - 1h + std::chrono::milliseconds(i));
    feed.boot(t0);
    feed.scan(core::scan_kind::new_orders, t0 + 10s);
    EXPECT_EQ(feed.c->stats().points, 1u);
    EXPECT_FALSE(feed.c->has_event());  // orders before the first start are not delivered
    // Idle: the interval doubles up to the maximum.
    EXPECT_EQ(feed.c->poll_delay(), feed.opts.max_interval < 20s ? feed.opts.max_interval : 20s);
}

TEST_F(feed_core_test, a_burst_larger_than_a_page_is_delivered_once_in_creation_order)
{
    feed.boot(t0);
    for (int i = 0; i < 600; ++i)
        srv.add(t0 + 1s + std::chrono::milliseconds(i));
    feed.scan(core::scan_kind::new_orders, t0 + 10s);
    // k = 600: at most 1 + ceil(600/250) = 4 pages.
    EXPECT_LE(feed.c->stats().points, 4u);
    feed.drain(t0 + 10s);
    ASSERT_EQ(feed.handled.size(), 600u);
    for (int i = 0; i < 600; ++i)
        EXPECT_EQ(feed.handled[i].order.id, "o" + std::to_string(i));
    EXPECT_EQ(feed.handled[0].detection_delay, 9000ms);
    // The next poll: nothing new, one point.
    const auto before = feed.c->stats().points;
    feed.scan(core::scan_kind::new_orders, t0 + 20s);
    EXPECT_EQ(feed.c->stats().points - before, 1u);
    EXPECT_FALSE(feed.c->has_event());
}

TEST_F(feed_core_test, new_orders_arriving_between_pages_are_not_lost)
{
    feed.boot(t0);
    for (int i = 0; i < 300; ++i)
        srv.add(t0 + 1s + std::chrono::milliseconds(i));
    auto q = feed.c->begin_scan(core::scan_kind::new_orders, t0 + 5s);
    auto n = feed.c->on_page(srv.list(q), t0 + 5s);
    ASSERT_TRUE(n);
    // 40 more arrive before page 2: the pages shift, page 2 repeats some of page 1.
    for (int i = 0; i < 40; ++i)
        srv.add(t0 + 3s + std::chrono::milliseconds(i));
    while (n)
        n = feed.c->on_page(srv.list(*n), t0 + 5s);
    feed.drain(t0 + 5s);
    feed.scan(core::scan_kind::new_orders, t0 + 15s);
    feed.drain(t0 + 15s);
    const auto all = feed.handled_ids();
    std::set<std::string> ids(all.begin(), all.end());
    EXPECT_EQ(ids.size(), 340u);
    EXPECT_EQ(feed.handled.size(), 340u);
}

// A checkpoint that recorded its start at microseconds (12:00:00.500123), and
// orders of that second whose created_at the server sends with whole seconds:
// after a restart they are delivered once (horizon compared at whole seconds),
// an acknowledged one is not delivered again, and a look-back prunes nothing
// of that second.
TEST_F(feed_core_test, a_checkpoint_with_a_sub_second_start_delivers_the_orders_of_that_second_after_a_restart)
{
    const timestamp start = t0 + 500123us;
    dd::feed_commit first;
    first.initialise = true;
    first.horizon = start;
    first.watermark = start;
    first.last_lookback = start;
    ASSERT_FALSE(cp.commit(first));
    // "acked" was delivered before the restart; "lost" was read as before the start.
    srv.add(t0, "lost");
    srv.add(t0, "acked");
    dd::feed_commit a;
    dd::feed_order_state k;
    k.id = "acked";
    k.created_at = t0;
    k.financial_status = "paid";
    a.upserts.push_back(k);
    ASSERT_FALSE(cp.commit(a));
    feed.boot(t0 + 1min);
    feed.scan(core::scan_kind::new_orders, t0 + 1min);
    feed.drain(t0 + 1min);
    feed.scan(core::scan_kind::lookback, t0 + 11min);
    feed.drain(t0 + 11min);
    auto end = feed.c->end_lookback(t0 + 11min);
    ASSERT_FALSE(cp.commit(end));
    feed.c->committed(end);
    EXPECT_EQ(feed.handled_ids(), (std::vector<std::string>{"lost"}));
    EXPECT_EQ(cp.state().orders.count("lost"), 1u);
    EXPECT_EQ(cp.state().orders.count("acked"), 1u);
    // A new consumer records whole seconds.
    dd::memory_feed_checkpoint cp2;
    consumer other{srv, cp2, {}};
    other.boot(start);
    EXPECT_EQ(cp2.state().horizon, t0);
    EXPECT_EQ(cp2.state().watermark, t0);
}

// Orders at 23:59:59.999 and 00:00:00.000 UTC, the server reading dates in
// UTC, UTC+14 and UTC-12: each delivered once, the feed's result the same.
class feed_midnight_test : public feed_core_test, public ::testing::WithParamInterface<int>
{
};

TEST_P(feed_midnight_test, orders_either_side_of_midnight_are_delivered_once_in_any_time_zone)
{
    srv.tz = std::chrono::minutes(GetParam() * 60);
    const timestamp start = at(2026, 12, 4, 23, 0, 0);
    feed.boot(start);
    srv.add(at(2026, 12, 4, 23, 59, 59, 999), "before");
    feed.scan(core::scan_kind::new_orders, at(2026, 12, 4, 23, 59, 59, 999));
    feed.drain(start);
    srv.add(at(2026, 12, 5, 0, 0, 0, 0), "after");
    srv.add(at(2026, 12, 5, 0, 0, 0, 0), "after2");
    feed.scan(core::scan_kind::new_orders, at(2026, 12, 5, 0, 0, 0, 1));
    feed.drain(start);
    feed.scan(core::scan_kind::new_orders, at(2026, 12, 5, 0, 0, 10, 0));
    feed.drain(start);
    feed.scan(core::scan_kind::lookback, at(2026, 12, 5, 0, 1, 0, 0));
    feed.drain(start);
    EXPECT_EQ(feed.handled_ids(), (std::vector<std::string>{"before", "after", "after2"}));
    // The created_at_min sent is the UTC day before the watermark's.
    EXPECT_EQ(dd::format_date(*feed.queries[1][0].created_at_min), "2026-12-03");
}

INSTANTIATE_TEST_SUITE_P(zones, feed_midnight_test, ::testing::Values(0, 14, -12, 5));

TEST_F(feed_core_test, the_clock_crossing_midnight_during_a_poll_changes_nothing_of_the_poll)
{
    const timestamp start = at(2026, 12, 4, 23, 59, 0);
    feed.boot(start);
    for (int i = 0; i < 400; ++i)
        srv.add(start + 1s + std::chrono::milliseconds(i * 100));
    // Page 1 at 23:59:59.900, page 2 at 00:00:00.100 of the next day.
    feed.scan(core::scan_kind::new_orders, at(2026, 12, 4, 23, 59, 59, 900), [](int p) {
        return p == 0 ? at(2026, 12, 4, 23, 59, 59, 900) : at(2026, 12, 5, 0, 0, 0, 100);
    });
    ASSERT_EQ(feed.queries.back().size(), 2u);
    EXPECT_EQ(feed.queries.back()[0].created_at_min, feed.queries.back()[1].created_at_min);
    feed.drain(start);
    EXPECT_EQ(feed.handled.size(), 400u);
    // An order at 00:00:00.000 after that: found by the next poll.
    srv.add(at(2026, 12, 5, 0, 0, 0, 0), "midnight");
    feed.scan(core::scan_kind::new_orders, at(2026, 12, 5, 0, 0, 10));
    feed.drain(start);
    ASSERT_EQ(feed.handled.size(), 401u);
    EXPECT_EQ(feed.handled.back().order.id, "midnight");
}

TEST_F(feed_core_test, orders_with_the_same_created_at_are_each_delivered_once_across_a_crash)
{
    feed.boot(t0);
    const timestamp same = t0 + 5s;
    for (int i = 0; i < 5; ++i)
        srv.add(same);
    feed.scan(core::scan_kind::new_orders, t0 + 10s);
    feed.drain(t0 + 10s, 2);  // two acknowledged, then the process dies
    feed.boot(t0 + 20s);
    feed.scan(core::scan_kind::new_orders, t0 + 20s);
    feed.drain(t0 + 20s);
    std::vector<std::string> ids = feed.handled_ids();
    std::sort(ids.begin(), ids.end());
    EXPECT_EQ(ids, (std::vector<std::string>{"o0", "o1", "o2", "o3", "o4"}));
    EXPECT_EQ(feed.acked.size(), 5u);
}

TEST_F(feed_core_test, an_order_that_arrives_after_newer_ones_is_delivered_by_the_look_back)
{
    feed.opts.lookback_window = 6h;
    feed.boot(t0);
    for (int i = 0; i < 300; ++i)
        srv.add(t0 + 1min + std::chrono::seconds(i));
    feed.scan(core::scan_kind::new_orders, t0 + 10min);
    feed.drain(t0 + 10min);
    // Created at t0 + 30 s, reaches the service now: 300 newer orders before it.
    srv.add(t0 + 30s, "late");
    const auto before = feed.c->stats().points;
    feed.scan(core::scan_kind::new_orders, t0 + 11min);
    EXPECT_EQ(feed.c->stats().points - before, 1u);
    EXPECT_FALSE(feed.c->has_event());
    feed.scan(core::scan_kind::lookback, t0 + 12min);
    // Look-back: W = 301 orders in the window, ceil(301/250) = 2 pages.
    EXPECT_EQ(feed.c->stats().lookback_pages, 2u);
    feed.drain(t0 + 12min);
    ASSERT_EQ(feed.handled.size(), 301u);
    EXPECT_EQ(feed.handled.back().order.id, "late");
    EXPECT_EQ(feed.handled.back().kind, dd::feed_event_kind::new_order);
    feed.scan(core::scan_kind::lookback, t0 + 20min);
    EXPECT_FALSE(feed.c->has_event());
}

TEST_F(feed_core_test, a_refund_inside_the_look_back_is_an_event_outside_it_is_not)
{
    feed.opts.lookback_window = 2h;
    feed.boot(t0);
    srv.add(t0 + 1min, "old");
    srv.add(t0 + 3h, "recent");
    feed.scan(core::scan_kind::new_orders, t0 + 3h + 1min);
    feed.drain(t0);
    ASSERT_EQ(feed.handled.size(), 2u);
    srv.find("old")->financial_status = dd::open_enum<dd::financial_status>(dd::financial_status::refunded);
    srv.find("recent")->financial_status = dd::open_enum<dd::financial_status>(dd::financial_status::voided);
    srv.find("recent")->download_count = 2;
    feed.scan(core::scan_kind::lookback, t0 + 3h + 30min);
    feed.drain(t0);
    ASSERT_EQ(feed.handled.size(), 4u);
    EXPECT_EQ(feed.handled[2].kind, dd::feed_event_kind::voided);
    EXPECT_EQ(feed.handled[2].order.id, "recent");
    EXPECT_EQ(feed.handled[3].kind, dd::feed_event_kind::download_count_increased);
    EXPECT_EQ(feed.handled[3].previous_download_count, 0);
    EXPECT_EQ(feed.handled[3].detection_delay, 29min);  // last seen unchanged at the poll
    // The look-back read one page: "old" (outside the window) ended it.
    EXPECT_EQ(feed.c->stats().lookback_pages, 1u);
    // Acknowledged: the next look-back finds nothing.
    feed.scan(core::scan_kind::lookback, t0 + 3h + 40min);
    EXPECT_FALSE(feed.c->has_event());
}

TEST_F(feed_core_test, per_order_state_is_pruned_after_the_window_and_a_day)
{
    feed.opts.lookback_window = 1h;
    feed.boot(t0);
    srv.add(t0 + 1min, "a");
    feed.scan(core::scan_kind::new_orders, t0 + 2min);
    feed.drain(t0);
    srv.add(t0 + 30h, "b");
    feed.scan(core::scan_kind::new_orders, t0 + 30h + 1min);
    feed.drain(t0);
    feed.scan(core::scan_kind::lookback, t0 + 30h + 2min);
    auto end = feed.c->end_lookback(t0 + 30h + 2min);
    ASSERT_FALSE(cp.commit(end));
    feed.c->committed(end);
    EXPECT_EQ(cp.state().orders.count("a"), 0u);
    EXPECT_EQ(cp.state().orders.count("b"), 1u);
    EXPECT_EQ(cp.state().horizon, t0 + 30h + 2min - 25h);
    // "a" is never delivered again, even when a list shows it.
    feed.scan(core::scan_kind::lookback, t0 + 30h + 3min);
    EXPECT_FALSE(feed.c->has_event());
}

TEST_F(feed_core_test, the_horizon_never_passes_the_watermark)
{
    feed.opts.lookback_window = 1h;
    feed.boot(t0);
    // Stopped for three days: the next run must still deliver what came.
    srv.add(t0 + 1h, "during");
    feed.boot(t0 + 72h);
    feed.scan(core::scan_kind::lookback, t0 + 72h);
    auto end = feed.c->end_lookback(t0 + 72h);
    ASSERT_FALSE(cp.commit(end));
    feed.c->committed(end);
    feed.scan(core::scan_kind::new_orders, t0 + 72h);
    feed.drain(t0);
    EXPECT_EQ(feed.handled_ids(), (std::vector<std::string>{"during"}));
}

TEST_F(feed_core_test, a_first_run_with_since_delivers_the_past_oldest_first)
{
    feed.opts.since = at(2026, 12, 1);
    srv.add(at(2026, 11, 30, 23, 59, 59, 999), "too-old");
    srv.add(at(2026, 12, 1, 0, 0, 0, 0), "first");
    srv.add(at(2026, 12, 3), "second");
    feed.boot(t0);
    feed.scan(core::scan_kind::new_orders, t0);
    feed.drain(t0);
    EXPECT_EQ(feed.handled_ids(), (std::vector<std::string>{"first", "second"}));
    // since is read only on a first run.
    feed.opts.since = at(2026, 11, 1);
    feed.boot(t0 + 1min);
    feed.scan(core::scan_kind::new_orders, t0 + 1min);
    EXPECT_FALSE(feed.c->has_event());
}

// A crash at every step: after the poll, after the handler ran (before the
// acknowledgement is durable), after the acknowledgement. Every order is
// delivered, each acknowledged once; a handler runs twice only for the event
// whose acknowledgement the crash lost.
TEST_F(feed_core_test, a_crash_at_each_step_loses_nothing_and_repeats_only_the_unacknowledged_event)
{
    for (int crash_at = 0; crash_at <= 2 * 6; ++crash_at)
    {
        SCOPED_TRACE("crash point " + std::to_string(crash_at));
        fake_server s;
        dd::memory_feed_checkpoint c;
        consumer f{s, c, {}};
        f.boot(t0);
        for (int i = 0; i < 6; ++i)
            s.add(t0 + std::chrono::seconds(1 + i));
        int step = 0;
        bool crashed = false;
        f.scan(core::scan_kind::new_orders, t0 + 10s);
        if (step++ == crash_at)
            crashed = true;  // after the poll
        while (!crashed && f.c->has_event())
        {
            f.c->delivering();
            f.handled.push_back(f.c->front());
            if (step++ == crash_at)
            {
                crashed = true;  // handled, not acknowledged
                break;
            }
            auto a = f.c->ack_commit();
            ASSERT_FALSE(c.commit(a));
            f.acked.insert(f.c->front().key);
            f.c->acknowledged(a);
            if (step++ == crash_at)
                crashed = true;  // acknowledged
        }
        const std::size_t before_restart = f.handled.size();
        f.boot(t0 + 20s);
        f.scan(core::scan_kind::new_orders, t0 + 20s);
        f.drain(t0 + 20s);
        const auto all = f.handled_ids();
        std::set<std::string> ids(all.begin(), all.end());
        EXPECT_EQ(ids.size(), 6u);
        for (const auto& k : f.acked)
            EXPECT_EQ(f.acked.count(k), 1u) << k;
        EXPECT_EQ(f.acked.size(), 6u);
        const bool lost_ack = crash_at > 0 && crash_at % 2 == 1;
        EXPECT_EQ(f.handled.size(), lost_ack ? 7u : 6u) << before_restart;
    }
}

TEST_F(feed_core_test, a_handler_that_keeps_failing_backs_off_then_dead_letters_and_replays)
{
    feed.opts.max_attempts = 3;
    feed.opts.retry_initial = 1s;
    feed.boot(t0);
    srv.add(t0 + 1s, "bad");
    srv.add(t0 + 2s, "good");
    feed.scan(core::scan_kind::new_orders, t0 + 10s);
    ASSERT_TRUE(feed.c->has_event());
    EXPECT_EQ(feed.c->front().order.id, "bad");
    auto f1 = feed.c->fail_front("exit status 1", t0 + 10s);
    EXPECT_FALSE(f1.dead);
    EXPECT_EQ(f1.retry_after, 1s);
    EXPECT_EQ(feed.c->front().attempt, 2);
    auto f2 = feed.c->fail_front("exit status 1", t0 + 11s);
    EXPECT_EQ(f2.retry_after, 2s);
    auto f3 = feed.c->fail_front("exit status 7", t0 + 13s);
    ASSERT_TRUE(f3.dead);
    ASSERT_FALSE(cp.commit(*f3.dead));
    feed.c->dead_lettered(*f3.dead);
    // The feed goes on.
    feed.drain(t0 + 13s);
    EXPECT_EQ(feed.handled_ids(), (std::vector<std::string>{"good"}));
    auto st = cp.state();
    ASSERT_EQ(st.dead_letters.size(), 1u);
    EXPECT_EQ(st.dead_letters.begin()->second.error, "exit status 7");
    EXPECT_EQ(st.dead_letters.begin()->second.attempts, 3);
    // Not delivered again by a later poll or a restart.
    feed.boot(t0 + 1min);
    feed.scan(core::scan_kind::new_orders, t0 + 1min);
    feed.scan(core::scan_kind::lookback, t0 + 1min);
    EXPECT_FALSE(feed.c->has_event());
    // Replayed: delivered with replay set; acknowledged, the dead letter goes.
    ASSERT_TRUE(feed.c->replay("new_order:bad"));
    EXPECT_FALSE(feed.c->replay("new_order:nothing"));
    feed.drain(t0 + 2min);
    ASSERT_EQ(feed.handled.size(), 2u);
    EXPECT_TRUE(feed.handled[1].replay);
    EXPECT_EQ(feed.handled[1].order.id, "bad");
    EXPECT_TRUE(cp.state().dead_letters.empty());
}

TEST_F(feed_core_test, download_events_read_only_changed_orders_and_expiry_needs_no_request)
{
    feed.opts.events = dd::feed_events::all;
    feed.boot(t0);
    srv.add(t0 + 1s, "a");
    srv.add(t0 + 2s, "b");
    feed.scan(core::scan_kind::new_orders, t0 + 10s);
    EXPECT_TRUE(feed.c->take_downloads_reads().empty());  // new orders are not read
    feed.drain(t0);
    srv.find("a")->download_count = 1;
    srv.find("a")->financial_status = dd::open_enum<dd::financial_status>(dd::financial_status::refunded);
    feed.scan(core::scan_kind::lookback, t0 + 1h);
    EXPECT_EQ(feed.c->take_downloads_reads(), (std::vector<std::string>{"a"}));
    dd::order_downloads d;
    d.order_id = "a";
    dd::download_entry e;
    e.id = "e1";
    e.download_limit_reached = true;
    e.access_revoked = true;
    e.expires_at = t0 + 2h;
    d.downloads.push_back(e);
    feed.c->on_downloads(d, t0 + 1h);
    feed.drain(t0);
    std::vector<dd::feed_event_kind> kinds;
    for (const auto& ev : feed.handled)
        kinds.push_back(ev.kind);
    EXPECT_EQ(kinds, (std::vector<dd::feed_event_kind>{dd::feed_event_kind::new_order, dd::feed_event_kind::new_order,
                                                        dd::feed_event_kind::refunded, dd::feed_event_kind::download_count_increased,
                                                        dd::feed_event_kind::download_limit_reached,
                                                        dd::feed_event_kind::access_revoked}));
    EXPECT_EQ(feed.c->stats().downloads_reads, 1u);
    // Expiry: computed from the expires_at read, no request.
    feed.c->check_expiry(t0 + 90min);
    EXPECT_FALSE(feed.c->has_event());
    feed.c->check_expiry(t0 + 2h);
    ASSERT_TRUE(feed.c->has_event());
    EXPECT_EQ(feed.c->front().kind, dd::feed_event_kind::downloads_expired);
    feed.drain(t0);
    feed.c->check_expiry(t0 + 3h);
    EXPECT_FALSE(feed.c->has_event());
    EXPECT_EQ(feed.c->stats().downloads_reads, 1u);
}

TEST_F(feed_core_test, malformed_entries_are_ignored_and_a_server_that_never_ends_is_bounded)
{
    feed.boot(t0);
    srv.add(t0 + 1s).id.clear();  // no id
    srv.add(timestamp{}, "epoch");  // no created_at
    feed.scan(core::scan_kind::new_orders, t0 + 10s);
    EXPECT_FALSE(feed.c->has_event());
    // A server that says every page is full and there are more: the newest-first
    // stop rule still ends the scan at the first older order.
    dd::order_list l;
    for (int i = 0; i < 250; ++i)
    {
        dd::order o;
        o.id = "x" + std::to_string(i);
        o.created_at = t0 - 1h;
        l.orders.push_back(o);
    }
    l.pagination = {1, 250, 1000000000, 4000000};
    auto q = feed.c->begin_scan(core::scan_kind::new_orders, t0 + 20s);
    (void)q;
    EXPECT_FALSE(feed.c->on_page(l, t0 + 20s));
}

TEST_F(feed_core_test, an_event_survives_its_json_form)
{
    dd::feed_event e;
    e.key = "download_count:o1:3";
    e.kind = dd::feed_event_kind::download_count_increased;
    e.order.id = "o1";
    e.order.name = "#1001";
    e.order.created_at = at(2026, 12, 4, 23, 59, 59, 999);
    e.order.download_count = 3;
    e.previous_download_count = 1;
    e.detected_at = t0;
    e.detection_delay = 1500ms;
    e.attempt = 2;
    const std::string j = dd::to_json(e);
    auto back = dd::feed_event_from_json(j);
    ASSERT_TRUE(back);
    EXPECT_EQ(dd::to_json(*back), j);
    EXPECT_FALSE(dd::feed_event_from_json("{"));
    EXPECT_FALSE(dd::feed_event_from_json(R"({"key":"k","kind":"nope","order":{}})"));
}

}  // namespace
