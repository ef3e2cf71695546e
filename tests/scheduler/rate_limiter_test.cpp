//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// The asynchronous rate_limiter with a real io_context: grants after refill,
// cancellation with refund, deadlines, 429 pauses with every Retry-After
// form, the shared registry, completion tokens.

#include <digital_delivery/impl/rate_limit/rate_limiter.hpp>
#include <digital_delivery/testing/virtual_clock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "run.hpp"

using namespace digital_delivery;
using namespace digital_delivery::detail;  // the machinery under test is internal
using namespace std::chrono_literals;
namespace asio = boost::asio;
using clk = std::chrono::steady_clock;

namespace {

// A virtual clock the test moves by hand.
struct virtual_clock
{
    clk::time_point now = clk::time_point{} + 1000h;
    rate_limiter::clock_fn fn()
    {
        return [this] { return now; };
    }
};

rate_limit_params params(double capacity, std::chrono::duration<double> window)
{
    rate_limit_params p;
    p.capacity = capacity;
    p.window = window;
    p.hold_refill_until_response = false;  // these tests model refill alone (see hold_* tests)
    p.probe_first = false;                 // and grants without responses (see probe_* tests)
    return p;
}

struct result
{
    std::optional<error_code> ec;
    auto handler()
    {
        return [this](error_code e) { ec = e; };
    }
};

// Runs what is ready (restarting the context if it ran out of work before).
void poll(asio::io_context& ioc)
{
    ioc.restart();
    ioc.poll();
}

http_headers headers(std::initializer_list<std::pair<std::string_view, std::string_view>> f)
{
    http_headers h;
    for (auto& [n, v] : f)
        h.add(n, v);
    return h;
}

}  // namespace

TEST(rate_limiter, waiter_completes_after_the_refill_on_its_own_timer)
{
    // The library's clock (no clock_fn, no wake()): the limiter's own timer
    // wakes the waiter when the point has refilled, not before.
    digital_delivery::testing::virtual_clock vc;
    asio::io_context ioc;
    rate_limiter lim(ioc.get_executor(), params(1, 50ms));  // one point per 50 ms
    result a, b;
    lim.async_acquire(1, priority::normal, std::nullopt, a.handler());
    EXPECT_FALSE(a.ec) << "must not complete inline";
    lim.async_acquire(1, priority::normal, std::nullopt, b.handler());
    EXPECT_EQ(lim.waiting(), 1u);
    vc.run_for(ioc, 49ms, 1ms);
    ASSERT_TRUE(a.ec);
    EXPECT_FALSE(*a.ec);
    EXPECT_FALSE(b.ec) << "granted before the point refilled";
    vc.run_for(ioc, 1ms, 1ms);
    ASSERT_TRUE(b.ec) << "not granted when the point had refilled";
    EXPECT_FALSE(*b.ec);
    EXPECT_EQ(lim.waiting(), 0u);
}

TEST(rate_limiter, waiter_completes_after_the_refill_virtual_time)
{
    asio::io_context ioc;
    virtual_clock vc;
    rate_limiter lim(ioc.get_executor(), params(40, 60s), vc.fn());
    std::vector<result> r(41);
    for (auto& x : r)
        lim.async_acquire(1, priority::normal, std::nullopt, x.handler());
    poll(ioc);
    for (int i = 0; i < 40; ++i)
        ASSERT_TRUE(r[i].ec && !*r[i].ec) << i;
    EXPECT_FALSE(r[40].ec);
    vc.now += 1499ms;
    lim.wake();
    poll(ioc);
    EXPECT_FALSE(r[40].ec);
    vc.now += 1ms;
    lim.wake();
    poll(ioc);
    ASSERT_TRUE(r[40].ec);
    EXPECT_FALSE(*r[40].ec);
}

TEST(rate_limiter, cancelled_waiter_completes_aborted_and_refunds)
{
    asio::io_context ioc;
    virtual_clock vc;
    rate_limiter lim(ioc.get_executor(), params(2, 2s), vc.fn());  // one point per second
    result first, a, b;
    lim.async_acquire(2, priority::normal, std::nullopt, first.handler());
    asio::cancellation_signal sig;
    lim.async_acquire(2, priority::normal, std::nullopt, asio::bind_cancellation_slot(sig.slot(), a.handler()));
    lim.async_acquire(1, priority::normal, std::nullopt, b.handler());
    poll(ioc);
    EXPECT_DOUBLE_EQ(lim.reserved(), 3);
    sig.emit(asio::cancellation_type::terminal);
    EXPECT_FALSE(a.ec) << "the cancellation completes through a post";
    EXPECT_DOUBLE_EQ(lim.reserved(), 1);  // its 2 points are released
    poll(ioc);
    ASSERT_TRUE(a.ec);
    EXPECT_EQ(*a.ec, asio::error::operation_aborted);
    // b now needs one point (1 s), not three (3 s).
    vc.now += 1s;
    lim.wake();
    poll(ioc);
    ASSERT_TRUE(b.ec);
    EXPECT_FALSE(*b.ec);
    sig.emit(asio::cancellation_type::terminal);  // late: harmless
    poll(ioc);
}

TEST(rate_limiter, cancellation_with_real_timer)
{
    digital_delivery::testing::virtual_clock vc;  // time stands still: only the cancellation can end the wait
    asio::io_context ioc;
    rate_limiter lim(ioc.get_executor(), params(1, 10s));
    result first, a;
    lim.async_acquire(1, priority::normal, std::nullopt, first.handler());
    asio::cancellation_signal sig;
    lim.async_acquire(1, priority::normal, std::nullopt, asio::bind_cancellation_slot(sig.slot(), a.handler()));
    asio::post(ioc, [&] { sig.emit(asio::cancellation_type::terminal); });
    dd_test::run(ioc);  // returns once nothing is left waiting (no timer outlives the cancellation)
    ASSERT_TRUE(a.ec);
    EXPECT_EQ(*a.ec, asio::error::operation_aborted);
    EXPECT_EQ(lim.waiting(), 0u);
    EXPECT_DOUBLE_EQ(lim.reserved(), 0);
}

TEST(rate_limiter, deadline_that_cannot_be_met_fails_at_once)
{
    asio::io_context ioc;
    virtual_clock vc;
    rate_limiter lim(ioc.get_executor(), params(1, 60s), vc.fn());
    result first, late, ok;
    lim.async_acquire(1, priority::normal, std::nullopt, first.handler());
    lim.async_acquire(1, priority::normal, vc.now + 59s, late.handler());
    lim.async_acquire(1, priority::normal, vc.now + 60s, ok.handler());
    poll(ioc);
    ASSERT_TRUE(late.ec);
    EXPECT_EQ(*late.ec, client_errc::rate_limit_wait_exceeds_deadline);
    EXPECT_EQ(*late.ec, condition::rate_limited);
    EXPECT_FALSE(ok.ec);
    EXPECT_EQ(lim.waiting(), 1u);
}

TEST(rate_limiter, a_429_pauses_everyone_until_retry_after)
{
    asio::io_context ioc;
    virtual_clock vc;
    rate_limiter lim(ioc.get_executor(), params(40, 60s), vc.fn());
    std::vector<throttle_event> events;
    lim.set_throttle_hook([&](const throttle_event& e) { events.push_back(e); });
    const auto sys = std::chrono::system_clock::time_point{} + std::chrono::seconds(1'763'800'000);

    lim.observe_response(headers({{"Retry-After", "2.5"}}), 429, vc.now, sys);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].what, throttle_event::kind::paused);
    EXPECT_EQ(events[0].until, vc.now + 2500ms);
    EXPECT_EQ(events[0].retry_after, 2500ms);

    result r;
    lim.async_acquire(1, priority::interactive, std::nullopt, r.handler());
    poll(ioc);
    EXPECT_FALSE(r.ec);
    vc.now += 2499ms;
    lim.wake();
    poll(ioc);
    EXPECT_FALSE(r.ec);
    vc.now += 1ms;  // the pause ends; 2.5 s of refill is more than one point
    lim.wake();
    poll(ioc);
    ASSERT_TRUE(r.ec);
    EXPECT_FALSE(*r.ec);
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[1].what, throttle_event::kind::resumed);
}

TEST(rate_limiter, retry_after_forms)
{
    asio::io_context ioc;
    virtual_clock vc;
    const auto sys = std::chrono::system_clock::time_point{} + std::chrono::seconds(784111777);  // Sun, 06 Nov 1994 08:49:37 GMT
    struct form
    {
        std::string_view value;
        std::chrono::milliseconds expected;
    };
    for (const form& f : {form{"3", 3000ms}, form{"0.25", 250ms}, form{"Sun, 06 Nov 1994 08:49:47 GMT", 10s},
                          form{"Sun, 06 Nov 1994 08:40:00 GMT", 0ms}, form{"86400", 60s} /* capped */})
    {
        rate_limiter lim(ioc.get_executor(), params(40, 60s), vc.fn());
        std::optional<throttle_event> ev;
        lim.set_throttle_hook([&](const throttle_event& e) { ev = e; });
        lim.observe_response(headers({{"Retry-After", f.value}}), 429, vc.now, sys);
        if (f.expected == 0ms)
        {
            EXPECT_FALSE(ev) << f.value;
            continue;
        }
        ASSERT_TRUE(ev) << f.value;
        EXPECT_EQ(ev->until - vc.now, f.expected) << f.value;
    }
}

TEST(rate_limiter, headers_lower_the_estimate_and_show_in_snapshot)
{
    asio::io_context ioc;
    virtual_clock vc;
    rate_limiter lim(ioc.get_executor(), {}, vc.fn());
    const auto sys = std::chrono::system_clock::now();
    lim.observe_response(
        headers({{"X-RateLimit-Limit", "40"}, {"X-RateLimit-Remaining", "3"}, {"X-RateLimit-Reset", "1900000000"}}),
        200, vc.now, sys);
    auto s = lim.snapshot();
    EXPECT_EQ(s.source, rate_limit_source::header);
    EXPECT_EQ(s.remaining, 3);
    EXPECT_EQ(s.limit, 40);
    // A stale, higher figure arriving later adds nothing.
    lim.observe_response(headers({{"X-RateLimit-Remaining", "39"}}), 200, vc.now, sys);
    EXPECT_EQ(lim.snapshot().remaining, 3);
    std::vector<result> r(4);
    for (auto& x : r)
        lim.async_acquire(1, priority::normal, std::nullopt, x.handler());
    poll(ioc);
    EXPECT_TRUE(r[2].ec);
    EXPECT_FALSE(r[3].ec);
    EXPECT_EQ(lim.snapshot().source, rate_limit_source::estimate);
    EXPECT_EQ(lim.snapshot().remaining, 0);
}

TEST(rate_limiter, priorities_through_the_async_layer)
{
    asio::io_context ioc;
    virtual_clock vc;
    rate_limiter lim(ioc.get_executor(), params(1, 1s), vc.fn());
    std::vector<int> order;
    lim.async_acquire(1, priority::normal, std::nullopt, [&](error_code) { order.push_back(0); });
    lim.async_acquire(1, priority::background, std::nullopt, [&](error_code) { order.push_back(3); });
    lim.async_acquire(1, priority::normal, std::nullopt, [&](error_code) { order.push_back(2); });
    lim.async_acquire(1, priority::interactive, std::nullopt, [&](error_code) { order.push_back(1); });
    for (int i = 0; i < 4; ++i)
    {
        poll(ioc);
        vc.now += 1s;
        lim.wake();
    }
    poll(ioc);
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
}

TEST(rate_limiter, completes_on_the_handlers_executor)
{
    asio::io_context ioc;
    auto strand = asio::make_strand(ioc);
    rate_limiter lim(ioc.get_executor(), params(40, 60s));
    bool in_strand = false;
    lim.async_acquire(1, priority::normal, std::nullopt,
                      asio::bind_executor(strand, [&](error_code) { in_strand = strand.running_in_this_thread(); }));
    dd_test::run(ioc);
    EXPECT_TRUE(in_strand);
}

TEST(rate_limiter, default_deferred_token_and_awaitable)
{
    asio::io_context ioc;
    rate_limiter lim(ioc.get_executor(), params(40, 60s));
    bool done = false;
    auto op = lim.async_acquire(1, priority::normal, std::nullopt);  // deferred: nothing happens yet
    EXPECT_EQ(lim.snapshot().remaining, 40);
    std::move(op)([&](error_code ec) { done = !ec; });
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            co_await lim.async_acquire(2, priority::interactive, std::nullopt);  // deferred, awaited
            auto [ec] = co_await lim.async_acquire(1, priority::normal, std::nullopt, asio::as_tuple(asio::use_awaitable));
            EXPECT_FALSE(ec);
        },
        asio::detached);
    dd_test::run(ioc);
    EXPECT_TRUE(done);
    EXPECT_EQ(lim.snapshot().remaining, 36);
}

TEST(rate_limiter, disabled_limiter_lets_everything_through)
{
    asio::io_context ioc;
    rate_limit_params p = params(1, 60s);
    p.enabled = false;
    rate_limiter lim(ioc.get_executor(), p);
    int n = 0;
    for (int i = 0; i < 10; ++i)
        lim.async_acquire(2, priority::normal, std::nullopt, [&](error_code ec) { n += !ec; });
    EXPECT_EQ(n, 0);
    dd_test::run(ioc);
    EXPECT_EQ(n, 10);
}

TEST(shared_rate_limiter, one_bucket_per_base_url_and_key)
{
    asio::io_context ioc;
    rate_limit_params p;
    p.probe_first = false;  // grants without responses
    auto a = shared_rate_limiter(ioc.get_executor(), "https://API.example.com/api/v1/external/", "secret-key-1", p);
    auto b = shared_rate_limiter(ioc.get_executor(), "https://api.example.com/api/v1/external", "secret-key-1");
    auto c = shared_rate_limiter(ioc.get_executor(), "https://api.example.com/api/v1/external", "secret-key-2");
    int n = 0;
    for (int i = 0; i < 10; ++i)
        a->async_acquire(2, priority::normal, std::nullopt, [&](error_code) { ++n; });
    dd_test::run(ioc);
    EXPECT_EQ(n, 10);
    EXPECT_EQ(b->snapshot().remaining, 20);
    EXPECT_EQ(c->snapshot().remaining, 40);

    const auto key = rate_limiter_registry_key("https://api.example.com/", "secret-key-1");
    EXPECT_TRUE(key == rate_limiter_registry_key("https://API.EXAMPLE.com", "secret-key-1"));
    EXPECT_FALSE(key == rate_limiter_registry_key("https://api.example.com", "secret-key-2"));
    EXPECT_FALSE(key == rate_limiter_registry_key("https://api.example.com/v2", "secret-key-1"));
    // The URL and the key do not run into each other.
    EXPECT_FALSE(rate_limiter_registry_key("https://a.example/x", "y") == rate_limiter_registry_key("https://a.example/", "xy"));
}

TEST(shared_rate_limiter, the_registry_holds_no_dead_entries)
{
    // Issue 16: constructing a client must not sweep the whole registry (that
    // was quadratic in the number of clients). A bucket removes its own entry
    // when its last handle goes away. Counts only: no timing is asserted.
    asio::io_context ioc;
    const std::size_t before = limiter_registry_size();
    std::vector<std::shared_ptr<rate_limiter>> handles;
    for (int i = 0; i < 1000; ++i)
        handles.push_back(shared_rate_limiter(ioc.get_executor(), "https://many.example.com", "key-" + std::to_string(i)));
    handles.push_back(shared_rate_limiter(ioc.get_executor(), "https://many.example.com", "key-0"));  // shares key-0's bucket
    EXPECT_EQ(limiter_registry_size(), before + 1000);
    handles.erase(handles.begin());  // key-0 is still held by the last handle
    EXPECT_EQ(limiter_registry_size(), before + 1000);
    handles.resize(500);
    EXPECT_EQ(limiter_registry_size(), before + 500);
    handles.clear();
    EXPECT_EQ(limiter_registry_size(), before);

    // Every handle of a key gone: its entry goes too.
    {
        auto h1 = shared_rate_limiter(ioc.get_executor(), "https://many.example.com", "k");
        auto h2 = shared_rate_limiter(ioc.get_executor(), "https://many.example.com", "k");
        EXPECT_EQ(limiter_registry_size(), before + 1);
    }
    EXPECT_EQ(limiter_registry_size(), before);

    // A new bucket of a key whose old bucket died is registered afresh.
    auto again = shared_rate_limiter(ioc.get_executor(), "https://many.example.com", "k");
    EXPECT_EQ(limiter_registry_size(), before + 1);
}

TEST(shared_rate_limiter, waiters_of_several_handles_are_served_in_order)
{
    asio::io_context ioc;
    auto a = shared_rate_limiter(ioc.get_executor(), "https://order.example.com", "k", params(1, 40ms));
    auto b = shared_rate_limiter(ioc.get_executor(), "https://order.example.com", "k");
    std::vector<char> order;
    a->async_acquire(1, priority::normal, std::nullopt, [&](error_code) { order.push_back('0'); });
    b->async_acquire(1, priority::normal, std::nullopt, [&](error_code) { order.push_back('b'); });
    a->async_acquire(1, priority::normal, std::nullopt, [&](error_code) { order.push_back('a'); });
    b.reset();  // its waiter keeps what it needs
    dd_test::run(ioc);
    EXPECT_EQ(order, (std::vector<char>{'0', 'b', 'a'}));
}

TEST(rate_limiter, many_threads_many_handles)
{
    // Two threads run the context; waiters from two handles on separate strands,
    // a third of them cancelled. Everyone completes exactly once.
    asio::io_context ioc;
    auto a = shared_rate_limiter(ioc.get_executor(), "https://threads.example.com", "k", params(20, 20ms));
    auto b = shared_rate_limiter(ioc.get_executor(), "https://threads.example.com", "k");
    constexpr int n = 120;
    std::atomic<int> ok{0}, aborted{0}, other{0};
    std::vector<std::unique_ptr<asio::cancellation_signal>> sigs;
    for (int i = 0; i < n; ++i)
        sigs.push_back(std::make_unique<asio::cancellation_signal>());
    auto s1 = asio::make_strand(ioc), s2 = asio::make_strand(ioc);
    for (int i = 0; i < n; ++i)
    {
        auto& lim = i % 2 ? *a : *b;
        auto strand = i % 2 ? s1 : s2;
        asio::post(strand, [&, i, strand] {
            lim.async_acquire(1 + i % 2, static_cast<priority>(i % 3), std::nullopt,
                              asio::bind_cancellation_slot(sigs[i]->slot(), asio::bind_executor(strand, [&](error_code ec) {
                                  if (!ec)
                                      ++ok;
                                  else if (ec == asio::error::operation_aborted)
                                      ++aborted;
                                  else
                                      ++other;
                              })));
            if (i % 3 == 0)
                asio::post(strand, [&, i] { sigs[i]->emit(asio::cancellation_type::terminal); });
        });
    }
    std::thread t([&] { dd_test::run(ioc); });
    dd_test::run(ioc);
    t.join();
    EXPECT_EQ(ok + aborted, n);
    EXPECT_EQ(other, 0);
    EXPECT_EQ(a->waiting(), 0u);
}

TEST(rate_limiter, awaitable_or_with_a_timer_cancels_the_waiter)
{
    using namespace boost::asio::experimental::awaitable_operators;
    asio::io_context ioc;
    rate_limiter lim(ioc.get_executor(), params(1, 60s));
    bool timer_won = false;
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            co_await lim.async_acquire(1, priority::normal, std::nullopt);  // empties the bucket
            asio::steady_timer t(ioc, 10ms);
            auto r = co_await (lim.async_acquire(1, priority::normal, std::nullopt, asio::use_awaitable) ||
                               t.async_wait(asio::use_awaitable));
            timer_won = r.index() == 1;
        },
        asio::detached);
    dd_test::run(ioc);  // returns: the cancelled waiter left nothing behind
    EXPECT_TRUE(timer_won);
    EXPECT_EQ(lim.waiting(), 0u);
    EXPECT_DOUBLE_EQ(lim.reserved(), 0);
}

namespace {

// A take from a full bucket holds the refill until a response comes back:
// the server's bucket was full too and refilled nothing before our request
// arrived (tests/integration/test_scheduler_load.cpp measures the effect).
TEST(token_bucket, take_from_full_holds_refill_until_thaw)
{
    using clk = std::chrono::steady_clock;
    const auto t0 = clk::time_point{} + std::chrono::hours(1);
    digital_delivery::detail::token_bucket b(2, std::chrono::seconds(2), t0, true);  // 1 point/s
    EXPECT_TRUE(b.try_take(2, t0));
    EXPECT_TRUE(b.frozen());
    EXPECT_NEAR(b.available(t0 + std::chrono::milliseconds(900)), 0.0, 1e-9);  // no refill while frozen
    EXPECT_TRUE(b.thaw(t0 + std::chrono::milliseconds(900)));
    EXPECT_NEAR(b.available(t0 + std::chrono::milliseconds(1400)), 0.5, 1e-9);  // refill from the thaw
    // Not full: no hold.
    EXPECT_TRUE(b.try_take(0.5, t0 + std::chrono::milliseconds(1400)));
    EXPECT_FALSE(b.frozen());
}

TEST(token_bucket, hold_ends_after_one_window_without_a_response)
{
    using clk = std::chrono::steady_clock;
    const auto t0 = clk::time_point{} + std::chrono::hours(1);
    digital_delivery::detail::token_bucket b(2, std::chrono::seconds(2), t0, true);
    EXPECT_TRUE(b.try_take(1, t0));
    EXPECT_NEAR(b.available(t0 + std::chrono::milliseconds(1999)), 1.0, 1e-9);
    b.available(t0 + std::chrono::seconds(2));  // the hold lapses here, uncredited
    EXPECT_FALSE(b.frozen());
    EXPECT_NEAR(b.available(t0 + std::chrono::seconds(3)), 2.0, 1e-9);
}

TEST(token_bucket, without_hold_refill_starts_at_the_take)
{
    using clk = std::chrono::steady_clock;
    const auto t0 = clk::time_point{} + std::chrono::hours(1);
    digital_delivery::detail::token_bucket b(2, std::chrono::seconds(2), t0, false);
    EXPECT_TRUE(b.try_take(2, t0));
    EXPECT_FALSE(b.frozen());
    EXPECT_NEAR(b.available(t0 + std::chrono::milliseconds(500)), 0.5, 1e-9);
}

}  // namespace
