//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// Issue 16, one key shared by several processes: the GCRA cell (sans-io, on a
// virtual clock: several "processes" are several views of one cell), the
// scheduler over a shared source, the shared-memory segment (owner-only,
// mapped twice = two processes), a process killed mid-acquire (fork), and the
// fallback when the store cannot be used. No test measures time.

#include <digital_delivery/impl/rate_limit/sansio/gcra_store.hpp>
#include <digital_delivery/impl/rate_limit/rate_limiter.hpp>
#include <digital_delivery/shm_rate_limit_store.hpp>
#include <digital_delivery/impl/rate_limit/sansio/scheduler_core.hpp>
#include <digital_delivery/impl/crypto/sha256.hpp>
#include <digital_delivery/impl/rate_limit/shm_store.hpp>
#include <digital_delivery/impl/rate_limit/store_session.hpp>
#include <digital_delivery/testing/virtual_clock.hpp>

#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <csignal>
#include <random>
#include <vector>

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run.hpp"

using namespace digital_delivery;
using namespace digital_delivery::detail;  // the machinery under test is internal
using namespace std::chrono_literals;
namespace asio = boost::asio;
using clk = std::chrono::steady_clock;

namespace {

const clk::time_point store_t0 = clk::time_point{} + 1000h;

// A segment name of this test program (removed at the end of each test).
struct temp_segment
{
    std::string name;
    explicit temp_segment(std::string_view what)
        : name(shm_store_name("https://shared-store-test.example.com/" + std::to_string(::getpid()), what))
    {
        ::shm_unlink(name.c_str());
    }
    ~temp_segment() { ::shm_unlink(name.c_str()); }
};

}  // namespace

TEST(shared_store, sha256_known_vectors)
{
    EXPECT_EQ(sha256::hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(sha256::hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(sha256::hex(std::string(1000, 'a')), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
}

TEST(shared_store, name_is_a_hash_of_url_and_key_never_the_key)
{
    const std::string url = normalise_base_url("https://API.example.com/api/v1/external/");
    EXPECT_EQ(url, "https://api.example.com/api/v1/external");
    const auto a = shm_store_name(url, "secret-key-1");
    EXPECT_EQ(a, shm_store_name(normalise_base_url("https://api.example.com/api/v1/external"), "secret-key-1"))
        << "the same in every process: no per-process salt";
    EXPECT_NE(a, shm_store_name(url, "secret-key-2"));
    EXPECT_NE(a, shm_store_name(normalise_base_url("https://other.example.com/api/v1/external"), "secret-key-1"));
    EXPECT_EQ(a.rfind("/digital_delivery.rl.", 0), 0u);
    EXPECT_EQ(a.size(), std::string("/digital_delivery.rl.").size() + 32);
    EXPECT_EQ(a.find("secret"), std::string::npos);
    EXPECT_EQ(a.find("example"), std::string::npos);
}

TEST(shared_store, gcra_starts_full_and_refills_like_the_token_bucket)
{
    gcra_cell cell;
    gcra_points g(cell, 40, 60s, false);
    EXPECT_NEAR(g.available(store_t0), 40, 1e-6);
    for (int i = 0; i < 40; ++i)
        ASSERT_TRUE(g.try_take(1, store_t0)) << i;
    EXPECT_FALSE(g.try_take(1, store_t0));
    EXPECT_EQ(g.time_to_reach(1, store_t0), 1500ms);
    EXPECT_FALSE(g.try_take(1, store_t0 + 1499ms));
    EXPECT_TRUE(g.try_take(1, store_t0 + 1500ms));
    EXPECT_FALSE(g.try_take(2, store_t0 + 3000ms));
    EXPECT_TRUE(g.try_take(2, store_t0 + 4500ms));
    // Never above capacity, however long idle.
    EXPECT_NEAR(g.available(store_t0 + 10h), 40, 1e-6);
}

TEST(shared_store, gcra_agrees_with_token_bucket_on_random_operations)
{
    // The same seeded sequence of takes, lowers, refunds on both models.
    std::mt19937 rng(16);
    gcra_cell cell;
    gcra_points g(cell, 40, 60s, false);
    token_bucket b(40, 60s, store_t0, false);
    auto now = store_t0;
    for (int i = 0; i < 5000; ++i)
    {
        now += std::chrono::milliseconds(rng() % 3000);
        const double cost = 1 + rng() % 2;
        switch (rng() % 6)
        {
        case 0:
        {
            const double v = static_cast<double>(rng() % 40);
            g.lower_to(v, now);
            b.lower_to(v, now);
            break;
        }
        case 1:
            g.give_back(cost, now);
            b.give_back(cost, now);
            break;
        default:
            ASSERT_EQ(g.try_take(cost, now), b.try_take(cost, now)) << i;
        }
        ASSERT_NEAR(g.available(now), b.available(now), 1e-3) << i;
    }
}

TEST(shared_store, two_processes_share_one_budget)
{
    gcra_cell cell;  // in shared memory in real life
    gcra_points a(cell, 40, 60s, false), b(cell, 40, 60s, false);
    for (int i = 0; i < 30; ++i)
        ASSERT_TRUE(a.try_take(1, store_t0));
    int got = 0;
    while (b.try_take(1, store_t0))
        ++got;
    EXPECT_EQ(got, 10);
    EXPECT_FALSE(a.try_take(1, store_t0));
    EXPECT_TRUE(a.try_take(1, store_t0 + 1500ms));
    EXPECT_FALSE(b.try_take(1, store_t0 + 1500ms));
    EXPECT_EQ(cell.grants.load(), 41u);
}

TEST(shared_store, server_word_is_shared_conservatively)
{
    gcra_cell cell;
    gcra_points a(cell, 40, 60s, false), b(cell, 40, 60s, false);
    // X-RateLimit-Remaining seen by a lowers b's balance, never raises it.
    EXPECT_TRUE(a.lower_to(5, store_t0));
    EXPECT_NEAR(b.available(store_t0), 5, 1e-6);
    EXPECT_FALSE(a.lower_to(20, store_t0));
    EXPECT_NEAR(b.available(store_t0), 5, 1e-6);
    // A 429 pause recorded by a holds b; a shorter one never shortens it.
    a.pause_until(store_t0 + 10s);
    a.pause_until(store_t0 + 3s);
    EXPECT_EQ(b.paused_until(), store_t0 + 10s);
    EXPECT_FALSE(b.try_take(1, store_t0 + 9s));
    EXPECT_TRUE(b.try_take(1, store_t0 + 10s));
    // Refunds never lift the balance above capacity.
    b.give_back(100, store_t0 + 10h);
    EXPECT_NEAR(a.available(store_t0 + 10h), 40, 1e-6);
}

TEST(shared_store, hold_refill_until_a_response_of_any_process)
{
    gcra_cell cell;
    gcra_points a(cell, 40, 60s, true), b(cell, 40, 60s, true);
    ASSERT_TRUE(a.try_take(40, store_t0));  // from full: refill held
    EXPECT_FALSE(b.try_take(1, store_t0 + 30s)) << "no refill before a response";
    EXPECT_TRUE(b.thaw(store_t0 + 30s));  // b's process got a response
    EXPECT_FALSE(a.thaw(store_t0 + 30s));
    EXPECT_FALSE(a.try_take(1, store_t0 + 31s));
    EXPECT_TRUE(a.try_take(1, store_t0 + 31500ms)) << "refill counted from the response";
    // Without a response, the hold ends after one window, crediting nothing.
    gcra_cell cell2;
    gcra_points c(cell2, 40, 60s, true);
    ASSERT_TRUE(c.try_take(40, store_t0));
    EXPECT_FALSE(c.try_take(1, store_t0 + 59s));
    EXPECT_FALSE(c.try_take(1, store_t0 + 60s)) << "hold expired at 60 s: refill starts there";
    EXPECT_TRUE(c.try_take(1, store_t0 + 61500ms));
}

TEST(shared_store, schedulers_of_two_processes_keep_local_priorities)
{
    auto cell = std::make_shared<gcra_cell>();
    scheduler_config cfg;
    cfg.capacity = 2;
    cfg.window = 2s;  // one point per second
    scheduler_core p1(cfg, store_t0), p2(cfg, store_t0);
    p1.use_source(std::make_shared<gcra_points>(*cell, 2, 2s, false));
    p2.use_source(std::make_shared<gcra_points>(*cell, 2, 2s, false));
    EXPECT_EQ(p2.acquire(1, 2, priority::normal, std::nullopt, store_t0), scheduler_core::acquire_status::granted);
    // p1 queues: a background then an interactive request.
    EXPECT_EQ(p1.acquire(1, 1, priority::background, std::nullopt, store_t0), scheduler_core::acquire_status::queued);
    EXPECT_EQ(p1.acquire(2, 1, priority::interactive, std::nullopt, store_t0), scheduler_core::acquire_status::queued);
    EXPECT_EQ(p1.next_wake(store_t0), store_t0 + 1s);
    std::vector<scheduler_core::outcome> out;
    p1.poll(store_t0 + 1s, out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].id, 2u) << "interactive first, as with a local bucket";
    // p2 gets a 429 with Retry-After 10 s: p1 is paused too.
    EXPECT_TRUE(p2.on_rate_limited(10s, store_t0 + 1s));
    out.clear();
    p1.poll(store_t0 + 5s, out);
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(p1.next_wake(store_t0 + 5s), store_t0 + 11s);
    p1.poll(store_t0 + 11s, out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].id, 1u);
    // A deadline inside the other process's pause fails at once.
    p2.on_rate_limited(20s, store_t0 + 11s);
    EXPECT_EQ(p1.acquire(3, 1, priority::normal, store_t0 + 20s, store_t0 + 11s), scheduler_core::acquire_status::deadline_unreachable);
}

TEST(shared_store, segment_is_owner_only_and_shared_between_mappings)
{
    temp_segment ts("segment");
    std::string why;
    auto s1 = shm_segment::open(ts.name, why);
    ASSERT_TRUE(s1) << why;
    auto s2 = shm_segment::open(ts.name, why);  // a second process maps it
    ASSERT_TRUE(s2) << why;
    struct stat st{};
    ASSERT_EQ(::stat(("/dev/shm" + ts.name).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    gcra_points a(s1->cell(), 40, 60s, false), b(s2->cell(), 40, 60s, false);
    EXPECT_TRUE(a.try_take(39, store_t0));
    EXPECT_FALSE(b.try_take(2, store_t0));
    EXPECT_TRUE(b.try_take(1, store_t0));
    // It outlives its users: mapped again later, the state is still there.
    s1.reset();
    s2.reset();
    auto s3 = shm_segment::open(ts.name, why);
    ASSERT_TRUE(s3);
    EXPECT_EQ(s3->cell().grants.load(), 2u);
}

TEST(shared_store, a_segment_open_to_others_is_refused)
{
    temp_segment ts("foreign");
    const int fd = ::shm_open(ts.name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::fchmod(fd, 0644), 0);
    ::close(fd);
    std::string why;
    EXPECT_FALSE(shm_segment::open(ts.name, why));
    EXPECT_NE(why.find("group/others"), std::string::npos) << why;
}

TEST(shared_store, a_process_killed_mid_acquire_leaves_no_lock)
{
    // A child takes points in a tight loop on the real segment; it is killed
    // (SIGKILL) at an arbitrary instant, possibly inside a compare-and-swap.
    // The survivors need no recovery: there is nothing to unlock.
    temp_segment ts("killed");
    std::string why;
    auto seg = shm_segment::open(ts.name, why);
    ASSERT_TRUE(seg) << why;
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0)
    {
        // Never outlives the test: dies with it, and stops on its own after a while.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        gcra_points g(seg->cell(), 1e6, 1s, true);  // plenty of points: it rarely has to wait
        for (long i = 0; i < 2'000'000'000L; ++i)
        {
            const auto now = clk::now();
            if (g.try_take(1, now))
                g.thaw(now);
        }
        ::_exit(0);
    }
    while (seg->cell().grants.load() < 100000)
        ::sched_yield();
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status));
    const auto granted = seg->cell().grants.load();
    gcra_points g(seg->cell(), 1e6, 1s, true);
    const auto now = clk::now();
    EXPECT_TRUE(g.try_take(1, now + 2s)) << "a full window later the whole budget is back";
    EXPECT_EQ(seg->cell().grants.load(), granted + 1);
    EXPECT_LE(seg->cell().frozen_since.load(), (now + 2s).time_since_epoch().count());
}

namespace {

// Puts an object open to others at a store's name: the store refuses it.
bool occupy_with_an_object_open_to_others(const std::string& name)
{
    ::shm_unlink(name.c_str());
    const int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0644);
    if (fd < 0)
        return false;
    ::fchmod(fd, 0644);
    ::close(fd);
    return true;
}

}  // namespace

TEST(shared_store, fallback_bucket_while_the_store_is_unavailable_then_back)
{
    // The store cannot be used (here: an object open to others sits at its
    // name): a store_unavailable event, a bucket of fallback_share * capacity;
    // once the name is usable, the next retry restores the shared store.
    digital_delivery::testing::virtual_clock vc;
    asio::io_context ioc;
    const std::string url = "https://fallback.example.com/" + std::to_string(::getpid());
    const std::string name = shm_store_name(normalise_base_url(url), "fallback-key");
    ASSERT_TRUE(occupy_with_an_object_open_to_others(name));

    std::vector<throttle_event> events;
    rate_limit_params p;
    p.probe_first = false;  // grants without responses
    p.store = shm_rate_limit_store();
    p.fallback_share = 0.25;
    p.store_retry_interval = 1000ms;
    p.on_throttle = [&](const throttle_event& e) { events.push_back(e); };
    auto lim = shared_rate_limiter(ioc.get_executor(), url, "fallback-key", p);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].what, throttle_event::kind::store_unavailable);
    EXPECT_EQ(events[0].message.find("fallback-key"), std::string::npos);
    EXPECT_EQ(lim->snapshot().limit, 10) << "a quarter of 40";

    // Never a burst: at most the fallback's 10 points now.
    int granted = 0;
    for (int i = 0; i < 20; ++i)
        lim->async_acquire(1, priority::normal, std::nullopt, [&](error_code ec) { granted += !ec; });
    vc.run_for(ioc, 0ms);
    EXPECT_EQ(granted, 10);

    ::shm_unlink(name.c_str());
    vc.run_for(ioc, 1000ms);
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[1].what, throttle_event::kind::store_restored);
    EXPECT_EQ(lim->snapshot().limit, 40);
    EXPECT_EQ(granted, 20) << "the waiters were served from the shared store once it was back";
    lim.reset();
    ::shm_unlink(name.c_str());
}

// A client's observer hears the store too: one added once the store was
// already refused (at the bucket's creation, before any client could add
// one) hears store_unavailable at once, then store_restored. (Observers heard
// neither before: the events went to the rate_limit_params hook alone.)
TEST(shared_store, observers_hear_the_store_lost_and_restored)
{
    struct recorder final : observer
    {
        std::vector<throttle_event> events;
        void on_throttle(const throttle_event& e) override { events.push_back(e); }
    };
    digital_delivery::testing::virtual_clock vc;
    asio::io_context ioc;
    const std::string url = "https://observed-fallback.example.com/" + std::to_string(::getpid());
    const std::string name = shm_store_name(normalise_base_url(url), "observed-key");
    ASSERT_TRUE(occupy_with_an_object_open_to_others(name));

    rate_limit_params p;
    p.store = shm_rate_limit_store();
    p.store_retry_interval = 1000ms;
    p.probe_first = false;  // grants without responses
    auto lim = shared_rate_limiter(ioc.get_executor(), url, "observed-key", p);
    auto a = std::make_shared<recorder>();
    lim->add_throttle_observer(a);
    ASSERT_EQ(a->events.size(), 1u) << "told at once: the fallback serves";
    EXPECT_EQ(a->events[0].what, throttle_event::kind::store_unavailable);
    EXPECT_FALSE(a->events[0].message.empty());
    EXPECT_EQ(a->events[0].message.find("observed-key"), std::string::npos);
    auto b = std::make_shared<recorder>();
    lim->add_throttle_observer(b);
    ASSERT_EQ(b->events.size(), 1u);

    ::shm_unlink(name.c_str());
    int granted = 0;
    lim->async_acquire(1, priority::normal, std::nullopt, [&](error_code ec) { granted += !ec; });
    vc.run_for(ioc, 1000ms);
    lim->async_acquire(1, priority::normal, std::nullopt, [&](error_code ec) { granted += !ec; });
    vc.run_for(ioc, 0ms);
    EXPECT_EQ(granted, 2);
    for (auto* r : {a.get(), b.get()})
    {
        ASSERT_EQ(r->events.size(), 2u);
        EXPECT_EQ(r->events[1].what, throttle_event::kind::store_restored);
    }
    auto late = std::make_shared<recorder>();
    lim->add_throttle_observer(late);
    EXPECT_TRUE(late->events.empty()) << "the store serves: nothing to tell";
    lim.reset();
    ::shm_unlink(name.c_str());
}

namespace {

// A store of the test's own, in memory: the limiter knows a store only as a
// rate_limit_store_impl and its store_session (the opt-in shared-memory and
// Redis stores are two of them). Copies share one cell and its counters.
struct cell_store final : detail::rate_limit_store_impl
{
    struct state
    {
        gcra_cell cell;
        int opened = 0;
        int connects = 0;
        bool up = false;
        std::string url;
    };
    struct session final : store_session
    {
        std::shared_ptr<state> s;
        std::shared_ptr<points_source> src;
        session(std::shared_ptr<state> st, const store_bucket& b)
            : s(std::move(st)), src(std::make_shared<gcra_points>(s->cell, b.capacity, b.window, b.hold_refill_until_response))
        {
        }
        std::shared_ptr<points_source> source() const override { return src; }
        std::optional<store_status> connect(time_point, exchange&) override
        {
            ++s->connects;
            return store_status{s->up, s->up ? std::string() : std::string("down for the test")};
        }
    };

    std::shared_ptr<state> s = std::make_shared<state>();

    std::shared_ptr<store_session> open(const store_bucket& b) const override
    {
        ++s->opened;
        s->url = std::string(b.normalised_base_url);
        return std::make_shared<session>(s, b);
    }
};

}  // namespace

TEST(shared_store, any_store_plugs_in_through_rate_limit_params)
{
    digital_delivery::testing::virtual_clock vc;
    asio::io_context ioc;
    cell_store store;
    auto st = store.s;
    EXPECT_FALSE(rate_limit_params().store.shared()) << "the default is the in-process bucket";

    std::vector<throttle_event> events;
    rate_limit_params p;
    p.probe_first = false;  // grants without responses
    p.store = store;
    EXPECT_TRUE(p.store.shared());
    p.capacity = 4;
    p.fallback_share = 0.5;
    p.store_retry_interval = 1000ms;
    p.on_throttle = [&](const throttle_event& e) { events.push_back(e); };

    // Down at creation: the fallback bucket (half of 4) serves, and says why.
    auto a = unshared_rate_limiter(ioc.get_executor(), "https://API.example.com/api/", "plug-key", p);
    EXPECT_EQ(st->opened, 1);
    EXPECT_EQ(st->url, "https://api.example.com/api") << "the store sees the normalised base URL";
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].what, throttle_event::kind::store_unavailable);
    EXPECT_EQ(events[0].message, "down for the test");
    EXPECT_EQ(a->snapshot().limit, 2);

    // Up again: not tried before store_retry_interval, then restored.
    st->up = true;
    EXPECT_TRUE(a->try_acquire(1, priority::normal));
    EXPECT_EQ(st->connects, 1);
    vc.run_for(ioc, 1000ms);
    EXPECT_TRUE(a->try_acquire(1, priority::normal));
    EXPECT_EQ(st->connects, 2);
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[1].what, throttle_event::kind::store_restored);

    // A second bucket of the same store takes its points from the same cell:
    // 1 taken by a, 3 left for both together.
    auto b = unshared_rate_limiter(ioc.get_executor(), "https://api.example.com/api", "plug-key", p);
    EXPECT_EQ(st->opened, 2);
    int granted = 0;
    for (int i = 0; i < 4; ++i)
        granted += b->try_acquire(1, priority::normal) + a->try_acquire(1, priority::normal);
    EXPECT_EQ(granted, 3);
}
