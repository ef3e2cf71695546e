//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// The lease of a shared feed checkpoint (feed/sansio/feed_lease.hpp), on a
// store modelled in memory with the rules of redis_feed_checkpoint's scripts
// (a lease key with a time to live, a token counter, commits refused unless
// the lease is held with their token) and times given by the test. Two and
// three watchers; the holder crashed at every step of its protocol (a call
// sent, applied by the store, answered): the takeover comes within the
// stated bound, every item is committed exactly once, nothing acknowledged is
// lost. A paused holder's late commit is refused; an outage longer than the
// lease loses it.

#include <digital_delivery/impl/feed/sansio/feed_lease.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using namespace digital_delivery::detail;
using namespace std::chrono_literals;

namespace {

using tp = feed_lease::time_point;
using ms = std::chrono::milliseconds;

// The store, with the scripts' rules.
struct store_model
{
    std::string holder;
    std::int64_t holder_token = 0;
    tp expires{};
    std::int64_t counter = 0;
    std::int64_t fence = 0;
    std::vector<int> items;  // committed, in order

    bool held_by(const std::string& o, std::int64_t t, tp now) const
    {
        return !holder.empty() && now < expires && holder == o && holder_token == t;
    }
    // {true, token} or {false, remaining ms}
    std::pair<bool, std::int64_t> acquire(const std::string& o, ms ttl, tp now)
    {
        if (!holder.empty() && now < expires)
        {
            if (holder == o)
            {
                expires = now + ttl;
                return {true, holder_token};
            }
            return {false, std::chrono::duration_cast<ms>(expires - now).count()};
        }
        holder = o;
        holder_token = ++counter;
        expires = now + ttl;
        return {true, holder_token};
    }
    bool renew(const std::string& o, std::int64_t t, ms ttl, tp now)
    {
        if (!held_by(o, t, now))
            return false;
        expires = now + ttl;
        return true;
    }
    bool commit(const std::string& o, std::int64_t t, int item, tp now)
    {
        if (!held_by(o, t, now) || fence > t)
            return false;
        fence = t;
        items.push_back(item);
        return true;
    }
};

constexpr ms latency{1};  // each way
const feed_lease_timing timing{ms(300), ms(100), ms(50), ms(20)};

struct pending
{
    enum class kind
    {
        acquire,
        renew,
        commit
    } k;
    tp apply_at, reply_at;
    bool applied = false;
    bool ok = false;
    std::int64_t value = 0;
    int item = 0;
    std::int64_t token = 0;
};

struct watcher
{
    std::string name;
    feed_lease lease{timing};
    bool alive = true;
    bool paused = false;
    std::optional<pending> call;    // acquire or renew
    std::optional<pending> commit;  // the one commit in flight
    int next_item = 0;              // 0: not loaded
    std::vector<int> acked;
    int events = 0;
    std::optional<tp> acquired_at;
    std::optional<tp> last_renew_sent;
};

struct run_result
{
    std::vector<int> store_items;
    std::vector<std::vector<int>> acked;
    std::optional<tp> crash_at;
    std::optional<tp> takeover_at;
    std::optional<tp> crashed_last_renew;
    bool crashed = false;
};

// Runs `n` watchers over `items` items, watcher 0 crashing right after its
// `crash_event`-th protocol event (0: never). Returns what happened.
run_result simulate(int n, int items, int crash_event, tp t0 = tp(std::chrono::hours(1)))
{
    store_model st;
    std::vector<watcher> w(n);
    for (int i = 0; i < n; ++i)
        w[i].name = "w" + std::to_string(i);
    run_result res;
    auto event = [&](int i, tp now) {
        if (i == 0 && crash_event > 0 && ++w[0].events == crash_event)
        {
            w[0].alive = false;
            res.crashed = true;
            res.crash_at = now;
            res.crashed_last_renew = w[0].last_renew_sent ? w[0].last_renew_sent : w[0].acquired_at;
        }
    };
    for (tp now = t0; now < t0 + 20s; now += 1ms)
    {
        // The store applies what is on the wire (a dead sender's too).
        for (int i = 0; i < n; ++i)
            for (auto* p : {&w[i].call, &w[i].commit})
                if (*p && !(*p)->applied && now >= (*p)->apply_at)
                {
                    auto& c = **p;
                    c.applied = true;
                    if (c.k == pending::kind::acquire)
                        std::tie(c.ok, c.value) = st.acquire(w[i].name, timing.ttl, now);
                    else if (c.k == pending::kind::renew)
                        c.ok = st.renew(w[i].name, c.token, timing.ttl, now);
                    else
                        c.ok = st.commit(w[i].name, c.token, c.item, now);
                    if (w[i].alive)
                        event(i, now);
                }
        for (int i = 0; i < n; ++i)
        {
            auto& x = w[i];
            if (!x.alive || x.paused)
                continue;
            // Replies.
            if (x.call && x.call->applied && now >= x.call->reply_at)
            {
                const auto c = *x.call;
                x.call.reset();
                if (c.k == pending::kind::acquire)
                {
                    if (c.ok)
                    {
                        x.lease.acquired(c.value, now);
                        x.acquired_at = now;
                        x.next_item = static_cast<int>(st.items.size()) + 1;  // the load
                    }
                    else
                        x.lease.busy(ms(c.value), now);
                }
                else if (c.ok)
                    x.lease.renewed();
                else
                    x.lease.refused();
                event(i, now);
                if (!x.alive)
                    continue;
            }
            if (x.commit && x.commit->applied && now >= x.commit->reply_at)
            {
                const auto c = *x.commit;
                x.commit.reset();
                if (c.ok)
                {
                    x.acked.push_back(c.item);
                    ++x.next_item;
                }
                else
                    x.lease.fenced();
                event(i, now);
                if (!x.alive)
                    continue;
            }
            // Calls due.
            if (const auto c = x.lease.due(now); c != feed_lease::call::none)
            {
                x.lease.sending(c, now);
                if (c == feed_lease::call::renew)
                    x.last_renew_sent = now;
                x.call = pending{c == feed_lease::call::acquire ? pending::kind::acquire : pending::kind::renew,
                                 now + latency, now + 2 * latency};
                x.call->token = x.lease.token();
                event(i, now);
                if (!x.alive)
                    continue;
            }
            // The work: one commit at a time, only while the lease holds.
            if (!x.commit && x.next_item > 0 && x.next_item <= items && x.lease.holds(now))
            {
                x.commit = pending{pending::kind::commit, now + latency, now + 2 * latency};
                x.commit->item = x.next_item;
                x.commit->token = x.lease.token();
                event(i, now);
            }
            if (i > 0 && x.acquired_at && !res.takeover_at && res.crashed)
                res.takeover_at = x.acquired_at;
        }
        bool in_flight = false;
        for (const auto& x : w)
            in_flight = in_flight || (x.alive && x.commit);
        if (static_cast<int>(st.items.size()) == items && !in_flight && (!res.crashed || res.takeover_at))
            break;
    }
    res.store_items = st.items;
    for (auto& x : w)
        res.acked.push_back(x.acked);
    return res;
}

void check_exactly_once(const run_result& r, int items, const std::string& what)
{
    std::vector<int> want;
    for (int i = 1; i <= items; ++i)
        want.push_back(i);
    EXPECT_EQ(r.store_items, want) << what << ": every item committed once, in order";
    std::set<int> committed(r.store_items.begin(), r.store_items.end());
    for (const auto& a : r.acked)
        for (int x : a)
            EXPECT_TRUE(committed.count(x)) << what << ": acknowledged " << x << " but not committed";
}

}  // namespace

TEST(feed_lease, one_of_two_and_of_three_holds_and_commits_everything_once)
{
    for (int n : {2, 3})
    {
        auto r = simulate(n, 30, 0);
        check_exactly_once(r, 30, std::to_string(n) + " watchers");
        EXPECT_EQ(r.acked[0].size(), 30u) << "the first to acquire does all the work";
        for (int i = 1; i < n; ++i)
            EXPECT_TRUE(r.acked[i].empty());
    }
}

TEST(feed_lease, the_holder_crashed_at_every_step_is_replaced_within_the_bound)
{
    // Every protocol event of watcher 0 (calls sent, applied, answered;
    // commits sent, applied, answered) up to well into its work.
    const ms bound = timing.ttl + timing.poll_every + 2 * latency;
    int crashes = 0;
    for (int n : {2, 3})
        for (int e = 1; e <= 60; ++e)
        {
            auto r = simulate(n, 20, e);
            const std::string what = std::to_string(n) + " watchers, crash at event " + std::to_string(e);
            ASSERT_TRUE(r.crashed) << what;
            ++crashes;
            check_exactly_once(r, 20, what);
            ASSERT_TRUE(r.takeover_at) << what;
            // From the crashed holder's last renewal (or acquisition) sent:
            // its lease runs out in the store within ttl, and a standby polls.
            const tp from = r.crashed_last_renew ? *r.crashed_last_renew : *r.crash_at;
            EXPECT_LE(*r.takeover_at - from, bound) << what;
            EXPECT_LE(*r.takeover_at - *r.crash_at, bound) << what;
        }
    EXPECT_EQ(crashes, 120);
}

TEST(feed_lease, a_paused_holder_loses_its_lease_and_its_late_commit_is_refused)
{
    store_model st;
    const tp t0 = tp(std::chrono::hours(1));
    feed_lease a(timing), b(timing);
    a.sending(feed_lease::call::acquire, t0);
    auto [ok, tok] = st.acquire("a", timing.ttl, t0);
    ASSERT_TRUE(ok);
    a.acquired(tok, t0);
    ASSERT_TRUE(a.holds(t0 + 1ms));
    // a pauses (a stop-the-world pause, a cut link) past its lease.
    tp now = t0;
    b.sending(feed_lease::call::acquire, now);
    auto r = st.acquire("b", timing.ttl, now);
    ASSERT_FALSE(r.first);
    b.busy(ms(r.second), now);
    EXPECT_EQ(b.due(now), feed_lease::call::none);
    now = *b.holder_expiry();
    ASSERT_EQ(b.due(now), feed_lease::call::acquire) << "tried again when the holder's lease runs out";
    b.sending(feed_lease::call::acquire, now);
    r = st.acquire("b", timing.ttl, now);
    ASSERT_TRUE(r.first);
    b.acquired(r.second, now);
    EXPECT_GT(b.token(), a.token());
    // a resumes: locally its lease has run out; a commit it had sent before
    // the pause (with its token) reaches the store now and is refused.
    EXPECT_FALSE(a.holds(now));
    EXPECT_EQ(a.state(), feed_lease::phase::lost);
    EXPECT_FALSE(st.commit("a", a.token(), 7, now));
    EXPECT_TRUE(st.commit("b", b.token(), 1, now));
    EXPECT_EQ(st.items, std::vector<int>{1});
    // And a renewal it sends is refused: still lost.
    a.sending(feed_lease::call::renew, now);
    a.refused();
    EXPECT_EQ(a.state(), feed_lease::phase::lost);
    EXPECT_EQ(a.due(now + 1h), feed_lease::call::none) << "lost is final";
}

TEST(feed_lease, renewals_without_answer_are_retried_and_the_lease_runs_out_when_they_never_come)
{
    const tp t0 = tp(std::chrono::hours(1));
    feed_lease a(timing);
    a.sending(feed_lease::call::acquire, t0);
    a.acquired(1, t0 + 2ms);
    EXPECT_EQ(a.valid_until(), t0 + timing.ttl) << "counted from the send, not the answer";
    tp now = t0 + timing.renew_every;
    ASSERT_EQ(a.due(now - 1ms), feed_lease::call::none);
    ASSERT_EQ(a.due(now), feed_lease::call::renew);
    int retries = 0;
    while (a.holds(now))
    {
        if (a.due(now) == feed_lease::call::renew)
        {
            a.sending(feed_lease::call::renew, now);
            a.failed(now);
            ++retries;
        }
        now = a.wake();
    }
    EXPECT_EQ(a.state(), feed_lease::phase::lost);
    EXPECT_EQ(now, t0 + timing.ttl) << "lost exactly when the lease runs out";
    EXPECT_GE(retries, 5);
    // A renewal answered late (sent before, accepted after the local end)
    // does not bring it back.
    feed_lease b(timing);
    b.sending(feed_lease::call::acquire, t0);
    b.acquired(2, t0);
    b.sending(feed_lease::call::renew, t0 + timing.ttl - 1ms);
    EXPECT_FALSE(b.holds(t0 + timing.ttl));
    b.renewed();
    EXPECT_EQ(b.state(), feed_lease::phase::lost);
}

TEST(feed_lease, a_renewal_answered_in_time_extends_it_from_its_send)
{
    const tp t0 = tp(std::chrono::hours(1));
    feed_lease a(timing);
    a.sending(feed_lease::call::acquire, t0);
    a.acquired(3, t0);
    const tp r = t0 + timing.renew_every;
    a.sending(feed_lease::call::renew, r);
    EXPECT_EQ(a.due(r + 1h), feed_lease::call::none) << "one call at a time";
    a.renewed();
    EXPECT_EQ(a.valid_until(), r + timing.ttl);
    EXPECT_TRUE(a.holds(t0 + timing.ttl + 1ms));
    EXPECT_EQ(a.token(), 3);
    // Odd timings are made sane: a renewal period not below the ttl is ttl/3.
    feed_lease odd({ms(90), ms(500), ms(0), ms(0)});
    EXPECT_EQ(odd.timing().renew_every, ms(30));
    EXPECT_GE(odd.timing().poll_every, ms(1));
}
