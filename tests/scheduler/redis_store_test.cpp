//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// Issue 16, the Redis store. Sans-io first: RESP encoding and decoding (bad
// input included), the script's reply, and the scheduler over redis_points on
// a virtual clock, with the remote bucket modelled by gcra_points (the script
// is gcra_points run inside Redis). Then against a real redis-server started
// once by this program on a free port of 127.0.0.1: the script's semantics,
// two hosts on one key, priorities, cancellation, Redis stopped and
// restarted, AUTH refused, a server that never answers. No test measures time.

#include <digital_delivery/impl/rate_limit/sansio/gcra_store.hpp>
#include <digital_delivery/impl/rate_limit/rate_limiter.hpp>
#include <digital_delivery/redis_rate_limit_store.hpp>
#include <digital_delivery/impl/rate_limit/redis_link.hpp>
#include <digital_delivery/impl/rate_limit/sansio/redis_store.hpp>
#include <digital_delivery/impl/rate_limit/sansio/resp.hpp>
#include <digital_delivery/impl/rate_limit/sansio/scheduler_core.hpp>
#include <digital_delivery/impl/crypto/sha256.hpp>
#include <digital_delivery/client.hpp>
#include <digital_delivery/endpoints.hpp>
#include <digital_delivery/json_logger.hpp>
#include <digital_delivery/metrics.hpp>
#include <digital_delivery/testing/fake_transport.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "fixtures.hpp"
#include "redis_env.hpp"
#include "run.hpp"
#include "server_process.hpp"

using namespace digital_delivery;
using namespace digital_delivery::detail;  // the machinery under test is internal
using namespace std::chrono_literals;
namespace asio = boost::asio;
using clk = std::chrono::steady_clock;

namespace {

const clk::time_point redis_t0 = clk::time_point{} + 1000h;

resp_parser::result parse(std::string_view s) { return resp_parser::parse(s); }

}  // namespace

// ---------------------------------------------------------------- RESP

TEST(redis_store, resp_encodes_commands_as_bulk_string_arrays)
{
    std::string out;
    resp_append_command(out, {"EVALSHA", "ab", "1", std::string_view("k\r\n", 3), ""});
    EXPECT_EQ(out, "*5\r\n$7\r\nEVALSHA\r\n$2\r\nab\r\n$1\r\n1\r\n$3\r\nk\r\n\r\n$0\r\n\r\n");
}

TEST(redis_store, resp_decodes_every_reply_type)
{
    auto r = parse("+OK\r\n");
    ASSERT_EQ(r.st, resp_parser::status::done);
    EXPECT_EQ(r.value.type, resp_value::kind::simple);
    EXPECT_EQ(r.value.str, "OK");
    EXPECT_EQ(r.consumed, 5u);
    r = parse("-NOSCRIPT No matching script\r\n");
    EXPECT_EQ(r.value.type, resp_value::kind::error);
    EXPECT_EQ(r.value.str, "NOSCRIPT No matching script");
    r = parse(":-42\r\n");
    EXPECT_EQ(r.value.type, resp_value::kind::integer);
    EXPECT_EQ(r.value.integer, -42);
    r = parse("$-1\r\n");
    EXPECT_EQ(r.value.type, resp_value::kind::nil);
    r = parse("*-1\r\n");
    EXPECT_EQ(r.value.type, resp_value::kind::nil);
    const std::string reply = "*5\r\n:1\r\n:0\r\n:250\r\n$9\r\n39.000000\r\n:0\r\n+next";
    r = parse(reply);
    ASSERT_EQ(r.st, resp_parser::status::done);
    EXPECT_EQ(r.consumed, reply.size() - 5) << "one reply, the next one left in the buffer";
    ASSERT_EQ(r.value.elements.size(), 5u);
    EXPECT_EQ(r.value.elements[3].str, "39.000000");
    // Every truncation of it needs more, never a wrong value.
    for (std::size_t n = 0; n + 5 < reply.size(); ++n)
        EXPECT_EQ(parse(std::string_view(reply).substr(0, n)).st, resp_parser::status::need_more) << n;
}

TEST(redis_store, resp_refuses_what_is_not_resp)
{
    for (std::string bad : {"?x\r\n", ":12a\r\n", ":\r\n", "$abc\r\n", "$-2\r\n", "$99999999\r\n", "*65\r\n", "*-5\r\n",
                            "$3\r\nabcde\r\n", ":-\r\n", "*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n", ":99999999999999999999\r\n"})
    {
        const auto r = parse(bad);
        EXPECT_EQ(r.st, resp_parser::status::error) << bad;
        EXPECT_FALSE(r.what.empty()) << bad;
    }
    EXPECT_EQ(parse(std::string(70000, 'x')).st, resp_parser::status::error) << "no line ending in 64 KiB";
}

TEST(redis_store, resp_limits_are_the_callers)
{
    // A bulk string of 100 KiB and an array of 100 elements: beyond the
    // defaults, within limits a caller with larger replies passes.
    const std::string big(100 * 1024, 'x');
    const std::string bulk = "$" + std::to_string(big.size()) + "\r\n" + big + "\r\n";
    auto r = parse(bulk);
    EXPECT_EQ(r.st, resp_parser::status::error);
    EXPECT_EQ(r.what, "a RESP bulk length that is no number or above 64 KiB");
    r = resp_parser::parse(bulk, resp_limits{.max_bulk = 8u << 20});
    ASSERT_EQ(r.st, resp_parser::status::done) << r.what;
    EXPECT_EQ(r.value.str, big);
    EXPECT_EQ(r.consumed, bulk.size());
    std::string array = "*100\r\n";
    for (int i = 0; i < 100; ++i)
        array += ":" + std::to_string(i) + "\r\n";
    EXPECT_EQ(parse(array).st, resp_parser::status::error);
    r = resp_parser::parse(array, resp_limits{.max_elements = 1000});
    ASSERT_EQ(r.st, resp_parser::status::done) << r.what;
    ASSERT_EQ(r.value.elements.size(), 100u);
    EXPECT_EQ(r.value.elements[99].integer, 99);
    // Tighter limits are honoured too, with the figure in the message.
    r = resp_parser::parse("$5\r\nabcde\r\n", resp_limits{.max_bulk = 4});
    EXPECT_EQ(r.st, resp_parser::status::error);
    EXPECT_EQ(r.what, "a RESP bulk length that is no number or above 4 bytes");
    r = resp_parser::parse("*1\r\n*1\r\n:1\r\n", resp_limits{.max_depth = 2});
    EXPECT_EQ(r.st, resp_parser::status::error);
    EXPECT_EQ(r.what, "RESP arrays nested deeper than 2");
    // Random bytes: an answer every time, never a crash.
    std::mt19937 rng(16);
    const std::string alphabet = "+-:$*\r\n0123456789-ab";
    for (int i = 0; i < 20000; ++i)
    {
        std::string s;
        for (int n = static_cast<int>(rng() % 24); n > 0; --n)
            s += alphabet[rng() % alphabet.size()];
        const auto r = parse(s);
        if (r.st == resp_parser::status::done)
        {
            EXPECT_LE(r.consumed, s.size());
        }
    }
}

TEST(redis_store, script_reply_is_decoded_or_refused)
{
    std::string why;
    auto v = parse("*5\r\n:0\r\n:1500000\r\n:0\r\n$9\r\n-0.500000\r\n:1\r\n").value;
    auto r = decode_gcra_reply(v, why);
    ASSERT_TRUE(r);
    EXPECT_FALSE(r->granted);
    EXPECT_EQ(r->wait, 1500ms);
    EXPECT_DOUBLE_EQ(r->balance, -0.5);
    EXPECT_TRUE(r->frozen);
    EXPECT_EQ(r->alive, 0u) << "five elements: a script without the fleet's count";
    r = decode_gcra_reply(parse("*6\r\n:1\r\n:0\r\n:0\r\n$9\r\n39.000000\r\n:0\r\n:7\r\n").value, why);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->alive, 7u);
    for (std::string bad : {"*6\r\n:1\r\n:0\r\n:0\r\n$1\r\n1\r\n:0\r\n:-1\r\n",
                            "*6\r\n:1\r\n:0\r\n:0\r\n$1\r\n1\r\n:0\r\n$1\r\n7\r\n",
                            "*7\r\n:1\r\n:0\r\n:0\r\n$1\r\n1\r\n:0\r\n:1\r\n:1\r\n"})
        EXPECT_FALSE(decode_gcra_reply(parse(bad).value, why)) << bad;
    v = parse("-WRONGPASS invalid username-password pair\r\n").value;
    EXPECT_FALSE(decode_gcra_reply(v, why));
    EXPECT_NE(why.find("WRONGPASS"), std::string::npos);
    for (std::string bad : {"*4\r\n:0\r\n:0\r\n:0\r\n:0\r\n", "*5\r\n:2\r\n:0\r\n:0\r\n$1\r\n1\r\n:0\r\n",
                            "*5\r\n:1\r\n:-1\r\n:0\r\n$1\r\n1\r\n:0\r\n", "*5\r\n:1\r\n:0\r\n:0\r\n$3\r\nnan\r\n:0\r\n",
                            "*5\r\n:1\r\n:0\r\n:0\r\n$2\r\n1x\r\n:0\r\n", "+OK\r\n", ":1\r\n"})
    {
        why.clear();
        EXPECT_FALSE(decode_gcra_reply(parse(bad).value, why)) << bad;
        EXPECT_FALSE(why.empty());
    }
    // A huge wait is bounded (a year), never an overflow downstream.
    r = decode_gcra_reply(parse("*5\r\n:0\r\n:999999999999999999\r\n:0\r\n$1\r\n0\r\n:0\r\n").value, why);
    ASSERT_TRUE(r);
    EXPECT_LE(r->wait, std::chrono::hours(24 * 366));
}

TEST(redis_store, script_arguments)
{
    gcra_request q;
    q.take = 2;
    q.lower_to = 3;
    q.pause = 1500ms;
    q.thaw = true;
    const auto a = gcra_arguments(q, 40, 60s, true);
    EXPECT_EQ(a, (std::vector<std::string>{"40.000000", "60000000", "1", "2.000000", "0.000000", "3.000000", "1500000", "1"}));
    EXPECT_EQ(gcra_arguments(gcra_request{}, 40, 60s, false)[5], "") << "no lower bound";
    // A background take's reserve: ARGV[12], the fleet's part '' without a process id.
    gcra_request bg;
    bg.take = 1;
    bg.keep = 30;
    const auto b = gcra_arguments(bg, 40, 60s, false);
    ASSERT_EQ(b.size(), 12u);
    EXPECT_EQ(b[8], "");
    EXPECT_EQ(b[11], "30.000000");
    EXPECT_EQ(gcra_arguments(bg, 40, 60s, false, "p1")[8], "p1");
    bg.take = 0;
    EXPECT_EQ(gcra_arguments(bg, 40, 60s, false).size(), 8u) << "no take, no reserve";
}

// ---------------------------------------------------------------- the source, sans-io

namespace {

// The remote bucket: the script's semantics in C++ (gcra_points on one cell).
struct model_redis
{
    gcra_cell cell;
    int calls = 0;

    gcra_reply exec(const gcra_request& q, double capacity, std::chrono::duration<double> window, bool hold, clk::time_point now)
    {
        ++calls;
        gcra_points g(cell, capacity, window, hold);
        if (q.thaw)
            g.thaw(now);
        if (q.give_back > 0)
            g.give_back(q.give_back, now);
        if (q.lower_to)
            g.lower_to(*q.lower_to, now);
        if (q.pause > 0us)
            g.pause_until(now + q.pause);
        gcra_reply r;
        if (q.take > 0)
        {
            if (now < g.paused_until())
                r.wait = std::chrono::ceil<std::chrono::microseconds>(g.paused_until() - now);
            else if (!(r.granted = g.try_take(q.take, now, q.keep)))
                r.wait = std::chrono::ceil<std::chrono::microseconds>(g.time_to_reach(q.take + q.keep, now));
        }
        if (g.paused_until() > now)
            r.paused = std::chrono::ceil<std::chrono::microseconds>(g.paused_until() - now);
        r.balance = g.available(now);
        r.frozen = cell.frozen_since.load() > 1;
        return r;
    }
};

// One "host": a scheduler over redis_points, driven like the shell does
// (poll, give leftovers back, one exchange at a time), with the exchange's
// reply arriving `latency` after it was sent.
struct host
{
    scheduler_core core;
    std::shared_ptr<redis_points> src;
    model_redis& remote;
    clk::duration latency;
    std::optional<std::pair<gcra_request, clk::time_point>> in_flight;
    std::vector<scheduler_core::waiter_id> granted;
    double points = 0;

    host(model_redis& r, const scheduler_config& cfg, clk::duration lat)
        : core(cfg, redis_t0),
          src(std::make_shared<redis_points>(cfg.capacity, cfg.window, cfg.hold_refill_until_response, redis_t0)),
          remote(r),
          latency(lat)
    {
        core.use_source(src);
    }

    void step(clk::time_point now, const scheduler_config& cfg)
    {
        if (in_flight && now >= in_flight->second)
        {
            src->on_reply(remote.exec(in_flight->first, cfg.capacity, cfg.window, cfg.hold_refill_until_response, now), now);
            in_flight.reset();
        }
        std::vector<scheduler_core::outcome> out;
        src->clear_want();
        core.poll(now, out);
        for (auto& o : out)
            if (o.granted)
                granted.push_back(o.id);
        src->return_leftover();
        if (src->wants_exchange(now))
            in_flight.emplace(src->start_exchange(now), now + latency);
    }
};

scheduler_config config(double capacity, clk::duration window)
{
    scheduler_config c;
    c.capacity = capacity;
    c.window = window;
    return c;
}

}  // namespace

TEST(redis_store, two_hosts_on_one_key_never_exceed_the_budget)
{
    // Capacity 10 per 10 s (1 point/s), two hosts each wanting far more, for
    // 60 s of virtual time with 3 ms and 7 ms round trips: at any instant,
    // the points granted so far stay within capacity + elapsed * rate.
    model_redis remote;
    const auto cfg = config(10, 10s);
    host a(remote, cfg, 3ms), b(remote, cfg, 7ms);
    std::uint64_t id = 1;
    for (int i = 0; i < 60; ++i)
        for (host* h : {&a, &b})
        {
            const double cost = 1 + (i % 4 == 3);
            ASSERT_EQ(h->core.acquire(id++, cost, priority::normal, std::nullopt, redis_t0), scheduler_core::acquire_status::queued)
                << "nothing before Redis said so";
        }
    for (auto now = redis_t0; now <= redis_t0 + 60s; now += 1ms)
    {
        a.step(now, cfg);
        b.step(now, cfg);
        double granted = 0;
        for (host* h : {&a, &b})
            for (auto g : h->granted)
                granted += 1 + ((g - 1) / 2 % 4 == 3);
        const double bound = cfg.capacity + std::chrono::duration<double>(now - redis_t0).count() * 1.0;
        ASSERT_LE(granted, bound + 1e-6) << "at +" << std::chrono::duration<double>(now - redis_t0).count() << " s";
    }
    EXPECT_GE(a.granted.size() + b.granted.size(), 40u) << "the budget is used, not lost";
    EXPECT_FALSE(a.granted.empty());
    EXPECT_FALSE(b.granted.empty());
    EXPECT_LT(remote.calls, 400) << "a wait the script named is waited, not polled";
}

TEST(redis_store, a_permit_whose_waiter_left_goes_back)
{
    model_redis remote;
    const auto cfg = config(2, 60s);
    host a(remote, cfg, 5ms);
    ASSERT_EQ(a.core.acquire(1, 2, priority::normal, std::nullopt, redis_t0), scheduler_core::acquire_status::queued);
    a.step(redis_t0, cfg);
    ASSERT_TRUE(a.in_flight);
    EXPECT_TRUE(a.core.cancel(1));  // cancelled while Redis grants it
    a.step(redis_t0 + 5ms, cfg);
    EXPECT_TRUE(a.granted.empty());
    ASSERT_TRUE(a.in_flight) << "the unused permit is on its way back";
    EXPECT_DOUBLE_EQ(a.in_flight->first.give_back, 2);
    a.step(redis_t0 + 10ms, cfg);
    gcra_points view(remote.cell, 2, 60s, false);
    EXPECT_NEAR(view.available(redis_t0 + 10ms), 2, 1e-3) << "the budget is whole again";
}

TEST(redis_store, the_servers_word_reaches_redis_and_every_host)
{
    model_redis remote;
    const auto cfg = config(40, 60s);
    host a(remote, cfg, 1ms), b(remote, cfg, 1ms);
    // a sees a 429 with Retry-After 10 s and, later, X-RateLimit-Remaining: 5.
    a.core.on_rate_limited(10s, redis_t0);
    a.step(redis_t0, cfg);
    ASSERT_TRUE(a.in_flight);
    EXPECT_EQ(a.in_flight->first.pause, 10s);
    EXPECT_EQ(a.in_flight->first.lower_to, 0.0);
    a.step(redis_t0 + 1ms, cfg);
    // b knows nothing yet: its acquire asks Redis, which says wait.
    ASSERT_EQ(b.core.acquire(1, 1, priority::normal, std::nullopt, redis_t0 + 2ms), scheduler_core::acquire_status::queued);
    b.step(redis_t0 + 2ms, cfg);
    b.step(redis_t0 + 3ms, cfg);
    EXPECT_TRUE(b.granted.empty());
    EXPECT_GE(b.core.pause_end(), redis_t0 + 10s) << "the pause is shared";
    for (auto now = redis_t0 + 3ms; now < redis_t0 + 10s; now += 10ms)
        b.step(now, cfg);
    EXPECT_TRUE(b.granted.empty());
    // Once the pause is over, b is served.
    for (auto now = redis_t0 + 10s; now < redis_t0 + 12s; now += 1ms)
        b.step(now, cfg);
    EXPECT_EQ(b.granted.size(), 1u);
    // Remaining headers only ever lower the shared balance.
    model_redis remote2;
    host c(remote2, cfg, 1ms);
    rate_limit_snapshot s;
    s.remaining = 5;
    c.core.observe(s, redis_t0);
    s.remaining = 30;
    c.core.observe(s, redis_t0);
    c.step(redis_t0, cfg);
    ASSERT_TRUE(c.in_flight);
    EXPECT_EQ(c.in_flight->first.lower_to, 5.0);
    c.step(redis_t0 + 1ms, cfg);
    gcra_points view(remote2.cell, 40, 60s, false);
    EXPECT_NEAR(view.available(redis_t0 + 1ms), 5, 0.01);
}

TEST(redis_store, local_priorities_hold_over_the_remote_bucket)
{
    model_redis remote;
    const auto cfg = config(1, 1s);
    host a(remote, cfg, 1ms);
    gcra_points(remote.cell, 1, 1s, false).try_take(1, redis_t0);  // another host took the point
    ASSERT_EQ(a.core.acquire(1, 1, priority::background, std::nullopt, redis_t0), scheduler_core::acquire_status::queued);
    ASSERT_EQ(a.core.acquire(2, 1, priority::normal, std::nullopt, redis_t0), scheduler_core::acquire_status::queued);
    ASSERT_EQ(a.core.acquire(3, 1, priority::interactive, std::nullopt, redis_t0), scheduler_core::acquire_status::queued);
    for (auto now = redis_t0; now < redis_t0 + 3500ms; now += 1ms)
        a.step(now, cfg);
    EXPECT_EQ(a.granted, (std::vector<scheduler_core::waiter_id>{3, 2, 1}));
}

TEST(redis_store, a_background_host_leaves_the_reserve_to_a_foreground_host)
{
    // Issue 47: host A sends foreground requests, host B keeps background
    // requests waiting, one Redis (modelled). B's takes carry the reserve
    // (30 of 40 points): B never leaves Redis's bucket below it before its
    // requests age, and the wait Redis named for B's reserve does not hold A.
    model_redis remote;
    auto cfg = config(40, 60s);
    cfg.background_share = 0.25;
    host a(remote, cfg, 1ms), b(remote, cfg, 1ms);
    gcra_points view(remote.cell, 40, 60s, false);
    scheduler_core::waiter_id id = 100;
    for (int i = 0; i < 3; ++i)
        ASSERT_EQ(b.core.acquire(id++, 1, priority::background, std::nullopt, redis_t0), scheduler_core::acquire_status::queued);
    double low = 40;
    auto now = redis_t0;
    for (; now < redis_t0 + 100ms; now += 1ms)
    {
        b.step(now, cfg);
        low = std::min(low, view.available(now));
    }
    EXPECT_EQ(b.granted.size(), 3u) << "10 points above the reserve";
    EXPECT_GE(low, 36.9);
    // A drains the bucket: 36 points at once (the reserve and what is above it).
    for (int i = 0; i < 36; ++i)
        ASSERT_EQ(a.core.acquire(static_cast<scheduler_core::waiter_id>(i), 1, priority::interactive, std::nullopt, now),
                  scheduler_core::acquire_status::queued);
    for (int i = 0; i < 7; ++i)
        ASSERT_EQ(b.core.acquire(id++, 1, priority::background, std::nullopt, now), scheduler_core::acquire_status::queued);
    const auto drained = now;
    for (; now < drained + 9s; now += 1ms)
    {
        a.step(now, cfg);
        const auto before = b.granted.size();
        b.step(now, cfg);
        // Every background grant (none has aged: 10 s) left at least the reserve.
        if (b.granted.size() > before)
        {
            EXPECT_GE(view.available(now), 30 - 1e-6);
        }
    }
    // The two hosts raced for the 37 points: B took the 3 above the
    // reserve, A the 34 below and 2 refilled since.
    EXPECT_EQ(a.granted.size(), 36u) << "the foreground's burst was served";
    EXPECT_EQ(b.granted.size(), 6u) << "3 more above the reserve, none below";
    // A foreground request of B is not held by the wait Redis named for
    // B's background head (the reserve's: about 40 s away).
    ASSERT_EQ(b.core.acquire(99, 1, priority::interactive, std::nullopt, now), scheduler_core::acquire_status::queued);
    const auto asked = now;
    while (std::find(b.granted.begin(), b.granted.end(), 99u) == b.granted.end() && now < asked + 60s)
    {
        a.step(now, cfg);
        b.step(now, cfg);
        now += 1ms;
    }
    EXPECT_LE(now - asked, 1600ms) << "one point's refill (1.5 s), not the reserve's";
}

// ---------------------------------------------------------------- real redis-server

namespace {

dd_test::redis_server& test_redis()
{
    static dd_test::redis_server r;
    return r;
}

class redis_live : public ::testing::Test
{
protected:
    void SetUp() override
    {
        DD_TEST_SKIP_WITHOUT_REDIS();
        test_redis();
    }

    // A link to the test's redis-server, its bucket at a key of its own.
    static std::shared_ptr<redis_link> live_link(asio::io_context& ioc, std::string_view what)
    {
        redis_store_params rp;
        rp.port = test_redis().port();
        return std::make_shared<redis_link>(ioc.get_executor(), rp, "dd-test:" + url(what));
    }

    static std::string url(std::string_view what)
    {
        return "https://redis-store-test.example.com/" + std::to_string(::getpid()) + "/" + std::string(what) + "/" +
               std::to_string(++counter());
    }
    static int& counter()
    {
        static int n = 0;
        return n;
    }

    static rate_limit_params params(unsigned short port, double capacity, std::chrono::duration<double> window)
    {
        rate_limit_params p;
        return params(redis_params(port), capacity, window);
    }
    static redis_store_params redis_params(unsigned short port)
    {
        redis_store_params rp;
        rp.port = port;
        rp.key_prefix = "dd-test:" + std::to_string(::getpid()) + ":";
        return rp;
    }
    static rate_limit_params params(redis_store_params rp, double capacity, std::chrono::duration<double> window)
    {
        rate_limit_params p;
        p.probe_first = false;  // these tests grant without responses
        p.store = redis_rate_limit_store(std::move(rp));
        p.capacity = capacity;
        p.window = window;
        return p;
    }

    // One exchange on a link of its own.
    static redis_exchange_result exchange(asio::io_context& ioc, const std::shared_ptr<redis_link>& l, const gcra_request& q,
                                          double capacity, std::chrono::duration<double> window,
                                          std::string_view process = {})
    {
        redis_exchange_result out;
        l->async_exchange(gcra_arguments(q, capacity, window, false, process),
                          [&](redis_exchange_result r) { out = std::move(r); });
        dd_test::run(ioc);
        return out;
    }
};

// Runs the io_context for `d` of real time (it may have run out of work before).
void run_for(asio::io_context& ioc, std::chrono::milliseconds d)
{
    if (ioc.stopped())
        ioc.restart();
    ioc.run_for(d);
}

struct waiter_set
{
    std::vector<asio::cancellation_signal> signals;
    std::vector<std::optional<error_code>> results;
    explicit waiter_set(std::size_t n) : signals(n), results(n) {}

    void launch(rate_limiter& lim, std::size_t i, int cost, priority prio = priority::normal)
    {
        lim.async_acquire(cost, prio, std::nullopt,
                          asio::bind_cancellation_slot(signals[i].slot(), [this, i](error_code ec) { results[i] = ec; }));
    }
    int granted() const
    {
        int n = 0;
        for (auto& r : results)
            n += r && !*r;
        return n;
    }
    void cancel_all()
    {
        for (std::size_t i = 0; i < signals.size(); ++i)
            if (!results[i])
                signals[i].emit(asio::cancellation_type::terminal);
    }
};

}  // namespace

TEST_F(redis_live, script_grants_the_capacity_then_names_the_wait)
{
    asio::io_context ioc;
    auto l = live_link(ioc, "script");
    gcra_request take;
    take.take = 1;
    for (int i = 0; i < 4; ++i)
    {
        auto r = exchange(ioc, l, take, 4, 60s);
        ASSERT_TRUE(r.reply) << r.why;
        EXPECT_TRUE(r.reply->granted) << i;
        EXPECT_NEAR(r.reply->balance, 3 - i, 0.01);
    }
    auto r = exchange(ioc, l, take, 4, 60s);
    ASSERT_TRUE(r.reply) << r.why;
    EXPECT_FALSE(r.reply->granted);
    EXPECT_GT(r.reply->wait, 0us);
    EXPECT_LE(r.reply->wait, 15s) << "one point comes back every 15 s";
    // Given back, a point is granted again; a 429 pause holds every caller.
    gcra_request give;
    give.give_back = 1;
    ASSERT_TRUE(exchange(ioc, l, give, 4, 60s).reply);
    r = exchange(ioc, l, take, 4, 60s);
    ASSERT_TRUE(r.reply);
    EXPECT_TRUE(r.reply->granted);
    gcra_request pause;
    pause.pause = 30s;
    ASSERT_TRUE(exchange(ioc, l, pause, 4, 60s).reply);
    redis_store_params rp;
    rp.port = test_redis().port();
    auto l2 = std::make_shared<redis_link>(ioc.get_executor(), rp, l->key());
    r = exchange(ioc, l2, take, 4, 60s);
    ASSERT_TRUE(r.reply) << r.why;
    EXPECT_FALSE(r.reply->granted);
    EXPECT_GT(r.reply->paused, 25s);
    EXPECT_LE(r.reply->paused, 30s);
    // After SCRIPT FLUSH the call falls back to EVAL.
    {
        std::string flush = dd_test::ask_local_server(test_redis().port(), "SCRIPT FLUSH\r\n", false);
        ASSERT_EQ(flush.rfind("+OK", 0), 0u) << flush;
    }
    r = exchange(ioc, l, gcra_request{}, 4, 60s);
    ASSERT_TRUE(r.reply) << r.why;
    // The key expires once idle (PEXPIRE): a TTL is set.
    std::string ttl = dd_test::ask_local_server(test_redis().port(), "PTTL " + l->key() + "\r\n", false);
    ASSERT_EQ(ttl.rfind(":", 0), 0u) << ttl;
    EXPECT_GT(std::stoll(ttl.substr(1)), 0);
}

TEST_F(redis_live, script_keeps_the_reserve_a_take_asks_for)
{
    // ARGV[12]: the points the take must leave (a background request's reserve).
    asio::io_context ioc;
    auto l = live_link(ioc, "reserve");
    gcra_request bg;
    bg.take = 1;
    bg.keep = 3;
    auto r = exchange(ioc, l, bg, 4, 60s);
    ASSERT_TRUE(r.reply) << r.why;
    EXPECT_TRUE(r.reply->granted) << "4 points: 3 stay";
    r = exchange(ioc, l, bg, 4, 60s);
    ASSERT_TRUE(r.reply) << r.why;
    EXPECT_FALSE(r.reply->granted) << "3 points: taking one would leave 2, below the reserve";
    EXPECT_GT(r.reply->wait, 14s) << "one point (15 s) until reserve + cost are there";
    EXPECT_LE(r.reply->wait, 15s);
    gcra_request fg;
    fg.take = 1;
    r = exchange(ioc, l, fg, 4, 60s, "p1");
    ASSERT_TRUE(r.reply) << r.why;
    EXPECT_TRUE(r.reply->granted) << "no reserve for a foreground take";
    EXPECT_NEAR(r.reply->balance, 2, 0.01);
    r = exchange(ioc, l, bg, 4, 60s, "p1");
    ASSERT_TRUE(r.reply) << r.why;
    EXPECT_FALSE(r.reply->granted) << "with the fleet's part too";
}

TEST_F(redis_live, any_command_through_the_link)
{
    // redis_link::async_command: any command on the store's connection
    // (another user of redis_store_params: the feed checkpoint), with the
    // reply's limits the caller's.
    asio::io_context ioc;
    redis_store_params rp;
    rp.port = test_redis().port();
    const std::string key = "dd-test:" + url("command");
    auto l = std::make_shared<redis_link>(ioc.get_executor(), rp, key);
    const auto call = [&](std::vector<std::string> argv, resp_limits limits = {}) {
        redis_command_result out;
        l->async_command(std::move(argv), [&](redis_command_result r) { out = std::move(r); }, limits);
        dd_test::run(ioc);
        return out;
    };
    const std::string big(100 * 1024, 'v');
    auto r = call({"HSET", key, "small", "1", "big", big});
    ASSERT_TRUE(r.reply) << r.why;
    EXPECT_EQ(r.reply->type, resp_value::kind::integer);
    EXPECT_EQ(r.reply->integer, 2);
    r = call({"HGET", key, "big"});
    EXPECT_FALSE(r.reply) << "100 KiB is beyond the default limits";
    EXPECT_NE(r.why.find("above 64 KiB"), std::string::npos) << r.why;
    r = call({"HGET", key, "big"}, resp_limits{.max_bulk = 1u << 20});
    ASSERT_TRUE(r.reply) << r.why;
    EXPECT_EQ(r.reply->str, big);
    r = call({"INCR", key});
    ASSERT_TRUE(r.reply) << "an error reply is a reply, the caller's to map: " << r.why;
    EXPECT_EQ(r.reply->type, resp_value::kind::error);
    EXPECT_EQ(r.reply->str.rfind("WRONGTYPE", 0), 0u) << r.reply->str;
    EXPECT_FALSE(r.misconfigured);
    // A script's error reply (the feed checkpoint's "FENCED ..."): a reply too, run once.
    r = call({"EVAL", "redis.call('INCR', KEYS[1] .. ':runs') return redis.error_reply('FENCED no')", "1", key});
    ASSERT_TRUE(r.reply) << r.why;
    EXPECT_EQ(r.reply->type, resp_value::kind::error);
    EXPECT_EQ(r.reply->str, "FENCED no");
    r = call({"GET", key + ":runs"});
    ASSERT_TRUE(r.reply) << r.why;
    EXPECT_EQ(r.reply->str, "1") << "an error reply is not sent again";
    r = call({"EVAL", "return redis.call('HGET', KEYS[1], 'small')", "1", key});
    ASSERT_TRUE(r.reply) << r.why;
    EXPECT_EQ(r.reply->str, "1");
    // The GCRA exchange still works on the same link.
    gcra_request take;
    take.take = 1;
    ASSERT_TRUE(call({"DEL", key}).reply);
    auto g = exchange(ioc, l, take, 4, 60s);
    ASSERT_TRUE(g.reply) << g.why;
    EXPECT_TRUE(g.reply->granted);
}

// The fleet's part of the key's hash: m:ID per process (counted while seen
// within two windows), d:ID per process that paid debt; debt applied once per
// running total, never below -capacity; stale processes trimmed with their
// d:ID; the hash keeps a TTL. (Trimming waits out two windows of 100 ms of
// real time: a wait, never a measurement.)
TEST_F(redis_live, fleet_count_and_debt_fields_stay_bounded)
{
    asio::io_context ioc;
    const auto port = test_redis().port();
    const auto ask = [&](const std::string& cmd) { return dd_test::ask_local_server(port, cmd + "\r\n", false); };
    auto l = live_link(ioc, "fleet");
    auto r = exchange(ioc, l, gcra_request{}, 40, 600s, "aaaa");
    ASSERT_TRUE(r.reply) << r.why;
    EXPECT_EQ(r.reply->alive, 1u);
    EXPECT_NEAR(r.reply->balance, 40, 0.01);
    gcra_request debt;
    debt.fallback_spent = 5;
    r = exchange(ioc, l, debt, 40, 600s, "bbbb");
    ASSERT_TRUE(r.reply) << r.why;
    EXPECT_EQ(r.reply->alive, 2u);
    EXPECT_NEAR(r.reply->balance, 35, 0.01);
    r = exchange(ioc, l, debt, 40, 600s, "bbbb");  // the same total again (its reply was lost)
    ASSERT_TRUE(r.reply);
    EXPECT_NEAR(r.reply->balance, 35, 0.01) << "applied once";
    debt.fallback_spent = 8;
    r = exchange(ioc, l, debt, 40, 600s, "bbbb");
    ASSERT_TRUE(r.reply);
    EXPECT_NEAR(r.reply->balance, 32, 0.01) << "only the 3 points not applied yet";
    debt.fallback_spent = 1000;
    r = exchange(ioc, l, debt, 40, 600s, "cccc");
    ASSERT_TRUE(r.reply);
    EXPECT_EQ(r.reply->alive, 3u);
    EXPECT_NEAR(r.reply->balance, -40, 0.01) << "never below -capacity";
    EXPECT_EQ(ask("HLEN " + l->key()), ":8\r\n") << "tat, frozen, paused, m:aaaa/bbbb/cccc, d:bbbb/cccc";
    std::string ttl = ask("PTTL " + l->key());
    ASSERT_EQ(ttl.rfind(":", 0), 0u) << ttl;
    EXPECT_GT(std::stoll(ttl.substr(1)), 1200000) << "two windows at least: the count outlives a full bucket";
    EXPECT_LE(std::stoll(ttl.substr(1)), 1801000) << "the debt's two windows, then the hash's own";
    // A call without a process id neither counts nor trims.
    r = exchange(ioc, l, gcra_request{}, 40, 600s);
    ASSERT_TRUE(r.reply);
    EXPECT_EQ(r.reply->alive, 0u);

    // Window 100 ms: processes unseen for 200 ms are trimmed, d:ID with them.
    auto l2 = live_link(ioc, "fleet-trim");
    ASSERT_TRUE(exchange(ioc, l2, gcra_request{}, 4, 100ms, "aaaa").reply);
    debt.fallback_spent = 1;
    ASSERT_TRUE(exchange(ioc, l2, debt, 4, 100ms, "bbbb").reply);
    EXPECT_EQ(ask("HLEN " + l2->key()), ":6\r\n");
    std::this_thread::sleep_for(300ms);
    r = exchange(ioc, l2, gcra_request{}, 4, 100ms, "cccc");
    ASSERT_TRUE(r.reply) << r.why;
    EXPECT_EQ(r.reply->alive, 1u);
    EXPECT_EQ(ask("HLEN " + l2->key()), ":4\r\n") << "tat, frozen, paused, m:cccc";
    EXPECT_EQ(ask("HEXISTS " + l2->key() + " d:bbbb"), ":0\r\n");
    ttl = ask("PTTL " + l2->key());
    ASSERT_EQ(ttl.rfind(":", 0), 0u) << ttl;
    EXPECT_GT(std::stoll(ttl.substr(1)), 0);
    EXPECT_LE(std::stoll(ttl.substr(1)), 1300) << "the hash expires two windows (and a second) after the last call";
}

TEST_F(redis_live, two_hosts_on_one_key_share_the_budget)
{
    // Two buckets of one key (two hosts), 6 points per 60 s, 20 requests
    // each: 6 granted in all; the others wait and are cancelled.
    asio::io_context ioc;
    const auto u = url("hosts");
    const auto p = params(test_redis().port(), 6, 60s);
    auto a = unshared_rate_limiter(ioc.get_executor(), u, "key", p);
    auto b = unshared_rate_limiter(ioc.get_executor(), u, "key", p);
    waiter_set wa(20), wb(20);
    for (std::size_t i = 0; i < 20; ++i)
    {
        wa.launch(*a, i, 1);
        wb.launch(*b, i, 1);
    }
    for (int i = 0; i < 200 && wa.granted() + wb.granted() < 6; ++i)
        run_for(ioc, 10ms);
    run_for(ioc, 100ms);  // a chance to over-grant, if it could
    EXPECT_EQ(wa.granted() + wb.granted(), 6);
    EXPECT_EQ(a->waiting() + b->waiting(), 34u);
    // Cancellation: every waiter leaves with operation_aborted.
    wa.cancel_all();
    wb.cancel_all();
    dd_test::run(ioc);
    for (auto* w : {&wa, &wb})
        for (auto& r : w->results)
        {
            ASSERT_TRUE(r);
            EXPECT_TRUE(!*r || *r == asio::error::operation_aborted) << r->message();
        }
    EXPECT_EQ(a->waiting() + b->waiting(), 0u);
}

// A deadline holds on the Redis store too: another host took the key's one
// point of a 600 s window, so a waiter with a deadline 300 ms away fails with
// rate_limit_wait_exceeds_deadline once Redis has answered, instead of waiting
// for the window (it waited until cancelled before).
TEST_F(redis_live, a_deadline_the_remote_bucket_cannot_meet_fails_the_waiter)
{
    asio::io_context ioc;
    const auto u = url("deadline");
    const auto p = params(test_redis().port(), 1, 600s);
    auto a = unshared_rate_limiter(ioc.get_executor(), u, "key", p);
    auto b = unshared_rate_limiter(ioc.get_executor(), u, "key", p);
    waiter_set wa(1);
    wa.launch(*a, 0, 1);
    for (int i = 0; i < 200 && wa.granted() < 1; ++i)
        run_for(ioc, 10ms);
    ASSERT_EQ(wa.granted(), 1);
    std::optional<error_code> late;
    asio::cancellation_signal sig;
    b->async_acquire(1, priority::normal, std::chrono::steady_clock::now() + 300ms,
                     asio::bind_cancellation_slot(sig.slot(), [&](error_code ec) { late = ec; }));
    for (int i = 0; i < 300 && !late; ++i)
        run_for(ioc, 10ms);
    if (!late)
    {
        sig.emit(asio::cancellation_type::terminal);
        dd_test::run(ioc);
    }
    ASSERT_TRUE(late);
    EXPECT_EQ(*late, client_errc::rate_limit_wait_exceeds_deadline) << late->message();
    EXPECT_EQ(b->waiting(), 0u);
}

TEST_F(redis_live, priorities_and_cancellation_keep_working)
{
    asio::io_context ioc;
    const auto u = url("prio");
    auto p = params(test_redis().port(), 2, 200ms);  // one point every 0.1 s
    auto a = unshared_rate_limiter(ioc.get_executor(), u, "key", p);
    std::vector<int> order;
    waiter_set w(5);
    // Empty the bucket, then queue background, normal, interactive, and one
    // interactive that is cancelled.
    w.launch(*a, 0, 2);
    for (int i = 0; i < 200 && !w.results[0]; ++i)
        run_for(ioc, 5ms);
    ASSERT_TRUE(w.results[0] && !*w.results[0]);
    auto record = [&](int tag) { return [&order, tag](error_code ec) { if (!ec) order.push_back(tag); }; };
    asio::cancellation_signal cancel_me;
    std::optional<error_code> cancelled;
    a->async_acquire(1, priority::background, std::nullopt, record(3));
    a->async_acquire(1, priority::normal, std::nullopt, record(2));
    a->async_acquire(1, priority::interactive, std::nullopt,
                     asio::bind_cancellation_slot(cancel_me.slot(), [&](error_code ec) { cancelled = ec; }));
    a->async_acquire(1, priority::interactive, std::nullopt, record(1));
    cancel_me.emit(asio::cancellation_type::terminal);
    dd_test::run(ioc);
    ASSERT_TRUE(cancelled);
    EXPECT_EQ(*cancelled, asio::error::operation_aborted);
    EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST_F(redis_live, redis_stopped_mid_run_falls_back_then_is_restored)
{
    // A Redis of this test alone (stopped and restarted).
    dd_test::redis_server own;
    asio::io_context ioc;
    auto p = params(own.port(), 8, 60s);
    p.fallback_share = 0.25;  // 2 points
    p.store_retry_interval = 50ms;
    std::vector<throttle_event> events;
    p.on_throttle = [&](const throttle_event& e) { events.push_back(e); };
    auto lim = unshared_rate_limiter(ioc.get_executor(), url("restart"), "the-api-key", p);
    waiter_set w(14);
    w.launch(*lim, 0, 1);
    w.launch(*lim, 1, 1);
    for (int i = 0; i < 200 && w.granted() < 2; ++i)
        run_for(ioc, 5ms);
    ASSERT_EQ(w.granted(), 2);
    EXPECT_TRUE(events.empty());

    own.stop();
    for (std::size_t i = 2; i < 14; ++i)
        w.launch(*lim, i, 1);
    for (int i = 0; i < 400 && events.empty(); ++i)
        run_for(ioc, 5ms);
    run_for(ioc, 50ms);
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events[0].what, throttle_event::kind::store_unavailable);
    EXPECT_NE(events[0].message.find("Redis 127.0.0.1"), std::string::npos) << events[0].message;
    EXPECT_EQ(events[0].message.find("the-api-key"), std::string::npos);
    EXPECT_EQ(w.granted(), 4) << "the fallback bucket: a quarter of 8, never a burst";

    ASSERT_TRUE(own.restart());
    for (int i = 0; i < 400 && events.size() < 2; ++i)
        run_for(ioc, 5ms);
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[1].what, throttle_event::kind::store_restored);
    for (int i = 0; i < 400 && w.granted() < 10; ++i)
        run_for(ioc, 5ms);
    EXPECT_EQ(w.granted(), 10)
        << "2 before, 2 from the fallback, 6 from the restarted (empty) Redis store: the fallback's 2 came back as debt";
    run_for(ioc, 50ms);
    EXPECT_EQ(w.granted(), 10) << "and no more";
    w.cancel_all();
    dd_test::run(ioc);
}

// The store's outage and return reach a client's observer, not only the
// rate_limit_params hook: the JSON logger writes ratelimit.store_unavailable
// and ratelimit.store_restored, metrics_observer shows the fallback serving
// and counts the points it granted. (Before, the events went to the hook
// alone: this test saw no line and a zero gauge.)
TEST_F(redis_live, store_outage_and_return_reach_a_clients_observers)
{
    dd_test::redis_server own({"--requirepass", "redis-secret-5d1c"});
    own.stop();
    asio::io_context ioc;
    auto fake = std::make_shared<digital_delivery::testing::fake_transport>(ioc.get_executor());
    std::vector<std::string> lines;
    auto logger = std::make_shared<json_logger>([&](log_level, std::string_view l) { lines.emplace_back(l); }, log_level::info);
    auto metrics = std::make_shared<metrics_observer>();
    auto rp = redis_params(own.port());
    rp.password = "redis-secret-5d1c";
    auto p = params(std::move(rp), 400, 60s);  // the fallback: 100 points
    p.store_retry_interval = 50ms;
    client c(fake, {.base_url = url("observers"),
                    .api_key = "the-api-key",
                    .rate_limit = p,
                    .observer = std::make_shared<fan_out_observer>(std::vector<std::shared_ptr<observer>>{logger, metrics})});
    auto find = [&](std::string_view event) {
        return std::count_if(lines.begin(), lines.end(),
                             [&](const std::string& l) { return l.find("\"event\":\"" + std::string(event) + "\"") != std::string::npos; });
    };
    int done = 0;
    auto get = [&] {
        fake->expect_any().respond(200, R"({"order":)" + fixtures::order_json() + "}");
        async_get_order(c, "o1", [&](error_code ec, auto&&...) {
            EXPECT_FALSE(ec) << ec.message();
            ++done;
        });
    };
    // Redis is down: the first request's exchange fails, the fallback serves.
    get();
    for (int i = 0; i < 400 && (done < 1 || find("ratelimit.store_unavailable") == 0); ++i)
        run_for(ioc, 5ms);
    ASSERT_EQ(find("ratelimit.store_unavailable"), 1) << lines.size();
    get();
    for (int i = 0; i < 400 && done < 2; ++i)
        run_for(ioc, 5ms);
    ASSERT_EQ(done, 2);
    auto s = metrics->snapshot();
    EXPECT_TRUE(s.store_fallback);
    EXPECT_GE(s.fallback_points, 1u);
    EXPECT_NE(metrics->prometheus().find("dd_client_rate_limit_store_fallback 1"), std::string::npos) << metrics->prometheus();

    // Redis is back: the next request after store_retry_interval reconnects.
    ASSERT_TRUE(own.restart());
    for (int i = 0; i < 400 && find("ratelimit.store_restored") == 0; ++i)
    {
        get();
        for (int j = 0; j < 20 && done < 3 + i; ++j)
            run_for(ioc, 5ms);
    }
    ASSERT_EQ(find("ratelimit.store_restored"), 1);
    s = metrics->snapshot();
    EXPECT_FALSE(s.store_fallback);
    const auto served_by_fallback = s.fallback_points;
    get();
    const int before = done;
    for (int i = 0; i < 400 && done == before; ++i)
        run_for(ioc, 5ms);
    EXPECT_EQ(metrics->snapshot().fallback_points, served_by_fallback) << "Redis served it";
    for (const auto& l : lines)
    {
        EXPECT_EQ(l.find("secret"), std::string::npos) << l;
        EXPECT_EQ(l.find("the-api-key"), std::string::npos) << l;
    }
}

// A wrong password, none where one is required, one where none is set, a
// user without the permissions the store needs: configuration errors, not
// outages. Each is reported as store_misconfigured (the fallback serves),
// again at every retry, and client::rate_limit() says why; never the
// password. (They were reported once, as store_unavailable, before.)
TEST_F(redis_live, a_refused_configuration_is_reported_at_each_retry_without_the_password)
{
    dd_test::redis_server locked({"--requirepass", "right-secret-7f3a", "--user", "limited", "on", ">limited-secret-2b8d",
                                  "~*", "+@all", "-@scripting"});
    asio::io_context ioc;
    struct refusal
    {
        unsigned short port;
        std::string user, password, says;
    };
    for (const auto& r : {refusal{locked.port(), "", "wrong-secret-9c1e", "WRONGPASS"},
                          refusal{locked.port(), "", "", "NOAUTH"},
                          refusal{locked.port(), "limited", "limited-secret-2b8d", "NOPERM"},
                          refusal{test_redis().port(), "", "unneeded-secret-4e6a", "AUTH refused"}})
    {
        SCOPED_TRACE(r.says);
        auto rp = redis_params(r.port);
        rp.username = r.user;
        rp.password = r.password;
        auto p = params(std::move(rp), 400, 60s);  // the fallback: 100 points, one per waiter
        p.store_retry_interval = 20ms;
        std::vector<throttle_event> events;
        p.on_throttle = [&](const throttle_event& e) { events.push_back(e); };
        auto lim = unshared_rate_limiter(ioc.get_executor(), url("auth"), "the-api-key", p);
        waiter_set w(100);
        w.launch(*lim, 0, 1);
        dd_test::run(ioc);
        ASSERT_EQ(events.size(), 1u);
        EXPECT_EQ(events[0].what, throttle_event::kind::store_misconfigured);
        EXPECT_EQ(w.granted(), 1) << "served by the fallback bucket";
        const auto snap = lim->snapshot();
        EXPECT_EQ(snap.store, rate_limit_store_state::misconfigured);
        EXPECT_EQ(snap.store_message, events[0].message);
        // Said again at the next retry, not once for ever.
        for (std::size_t i = 1; i < 100 && events.size() < 2; ++i)
        {
            std::this_thread::sleep_for(10ms);  // toward the next retry (the loop counts no time)
            w.launch(*lim, i, 1);
            dd_test::run(ioc);
        }
        ASSERT_GE(events.size(), 2u);
        EXPECT_EQ(events[1].what, throttle_event::kind::store_misconfigured);
        for (const auto& e : events)
        {
            const auto& m = e.message;
            EXPECT_NE(m.find(r.says), std::string::npos) << m;
            EXPECT_EQ(m.find("secret"), std::string::npos) << m;
            EXPECT_EQ(m.find("the-api-key"), std::string::npos) << m;
        }
    }
    // The right password: served by Redis.
    auto rp = redis_params(locked.port());
    rp.password = "right-secret-7f3a";
    auto p = params(std::move(rp), 8, 60s);
    int events = 0;
    p.on_throttle = [&](const throttle_event&) { ++events; };
    auto lim = unshared_rate_limiter(ioc.get_executor(), url("auth"), "the-api-key", p);
    waiter_set w(1);
    w.launch(*lim, 0, 1);
    dd_test::run(ioc);
    EXPECT_EQ(events, 0);
    EXPECT_EQ(w.granted(), 1);
    EXPECT_EQ(lim->snapshot().store, rate_limit_store_state::serving);
    EXPECT_TRUE(lim->snapshot().store_message.empty());
}

TEST_F(redis_live, a_server_that_never_answers_costs_one_command_timeout)
{
    // Accepts connections (the kernel does), never answers: the exchange
    // ends at command_timeout, never a hang.
    dd_test::bound_listener silent;
    asio::io_context ioc;
    auto rp = redis_params(silent.port());
    rp.command_timeout = 100ms;
    auto p = params(std::move(rp), 8, 60s);
    std::vector<throttle_event> events;
    p.on_throttle = [&](const throttle_event& e) { events.push_back(e); };
    auto lim = unshared_rate_limiter(ioc.get_executor(), url("silent"), "key", p);
    waiter_set w(1);
    w.launch(*lim, 0, 1);
    dd_test::run(ioc);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_NE(events[0].message.find("command_timeout"), std::string::npos) << events[0].message;
    EXPECT_EQ(w.granted(), 1);
}
