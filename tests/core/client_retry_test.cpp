// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The client's request operation with the rate limiter and the retry policy:
// 429 handling, idempotency rules, deadlines, cancellation while backing off.
#include "fixtures.hpp"

#include <digital_delivery/beast_transport.hpp>
#include <digital_delivery/testing/virtual_clock.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>

#include <optional>

using namespace fixtures;
using namespace std::chrono_literals;

namespace {

class retry_test : public ::testing::Test
{
protected:
    asio::io_context ioc;
    std::shared_ptr<dd::testing::fake_transport> fake = std::make_shared<dd::testing::fake_transport>(ioc.get_executor());
    dd::diagnostics diag;

    // Each test its own key, hence its own shared bucket.
    dd::client make_client(dd::rate_limit_params rl = {}, dd::retry_params rp = {.initial_backoff = 1ms, .max_backoff = 5ms},
                           std::chrono::milliseconds operation_timeout = 60s)
    {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        return dd::client(fake, {.base_url = base_url,
                                 .api_key = std::string("key-") + info->name(),
                                 .operation_timeout = operation_timeout,
                                 .rate_limit = rl,
                                 .retry = rp});
    }

    /// Sends GET /orders/o1 with a fresh fake transport that answers 429 with
    /// this Retry-After, then 200; `check(vc)` moves virtual time and looks at
    /// the requests; the GET must then succeed.
    template <class Check>
    void get_after_429(const char* retry_after, Check check)
    {
        SCOPED_TRACE(retry_after);
        fake = std::make_shared<dd::testing::fake_transport>(ioc.get_executor());
        // No default deadline: the cap (60 s) would meet it.
        auto c = make_client({}, {.initial_backoff = 1ms, .max_backoff = 5ms}, 0ms);
        fake->expect_any().respond(429, R"({"error":"Rate limit exceeded"})").header("Retry-After", retry_after);
        fake->expect_any().respond(200, ok_order());
        dd::testing::virtual_clock vc;
        auto fut = asio::co_spawn(ioc, dd::async_get_order(c, "o1", diag, asio::as_tuple(asio::use_awaitable)), asio::use_future);
        check(vc);
        auto [ec, o] = dd_test::wait(ioc, fut);
        EXPECT_FALSE(ec) << diag.to_string();
        ioc.restart();
    }

    /// Like run(), with time paused and moved on in steps of 100 ms until the
    /// operation completes (at most 10 min of virtual time).
    template <class F>
    auto run_in_virtual_time(F&& f)
    {
        dd::testing::virtual_clock vc;
        auto fut = asio::co_spawn(ioc, f(asio::as_tuple(asio::use_awaitable)), asio::use_future);
        const bool done = vc.run_until(ioc, [&] { return fut.wait_for(0s) == std::future_status::ready; }, 10min, 100ms);
        EXPECT_TRUE(done) << "not complete after 10 min of virtual time";
        return dd_test::wait(ioc, fut);
    }

    template <class F>
    auto run(F&& f)
    {
        auto fut = asio::co_spawn(ioc, f(asio::as_tuple(asio::use_awaitable)), asio::use_future);
        ioc.restart();
        dd_test::run(ioc);
        return fut.get();
    }

    std::string ok_order() const { return R"({"order":)" + order_json() + "}"; }
};

TEST_F(retry_test, a_429_is_retried_after_retry_after)
{
    auto c = make_client();
    fake->expect_any().respond(429, R"({"error":"Rate limit exceeded"})").header("Retry-After", "5");
    fake->expect_any().respond(200, ok_order());
    dd::testing::virtual_clock vc;
    auto fut = asio::co_spawn(ioc, dd::async_get_order(c, "o1", diag, asio::as_tuple(asio::use_awaitable)), asio::use_future);
    vc.run_for(ioc, 4990ms, 110ms);
    EXPECT_EQ(fake->requests().size(), 1u) << "resent before Retry-After";
    vc.run_for(ioc, 10ms);
    ASSERT_EQ(fake->requests().size(), 2u) << "not resent when Retry-After ended";
    auto [ec, o] = dd_test::wait(ioc, fut);
    EXPECT_FALSE(ec) << diag.to_string();
    EXPECT_EQ(o.id, "o1");
    EXPECT_EQ(diag.attempts, 2u);
}

TEST_F(retry_test, a_429s_retry_after_is_read_once_for_the_limiter_the_retry_and_the_diagnostics)
{
    // The response's headers are read once (detail::read_response_facts):
    // the limiter's pause, the retry's delay and diagnostics::retry_after are
    // the same figure.
    struct recorder final : dd::observer
    {
        std::vector<std::chrono::milliseconds> paused, delays;
        void on_throttle(const dd::throttle_event& e) override
        {
            if (e.what == dd::throttle_event::kind::paused)
                paused.push_back(e.retry_after);
        }
        void on_retry(const dd::retry_event& e) override { delays.push_back(e.delay); }
    };
    auto rec = std::make_shared<recorder>();
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dd::client c(fake, {.base_url = base_url,
                        .api_key = std::string("key-") + info->name(),
                        .operation_timeout = 0ms,
                        .retry = {.initial_backoff = 1ms, .max_backoff = 5ms, .max_rate_limited_wait = 10s},
                        .observer = rec});
    fake->expect_any().respond(429, R"({"error":"Rate limit exceeded"})").header("Retry-After", "7");
    fake->expect_any().respond(429, R"({"error":"Rate limit exceeded"})").header("Retry-After", "7");
    auto [ec, o] = run_in_virtual_time([&](auto t) { return dd::async_get_order(c, "o1", diag, t); });
    // 7 s waited, 7 more would pass the 10 s of max_rate_limited_wait.
    EXPECT_EQ(ec, dd::client_errc::rate_limited_too_long);
    EXPECT_EQ(fake->requests().size(), 2u);
    EXPECT_EQ(rec->paused, (std::vector<std::chrono::milliseconds>{7000ms, 7000ms}));
    EXPECT_EQ(rec->delays, (std::vector<std::chrono::milliseconds>{7000ms}));
    EXPECT_EQ(diag.retry_after, 7000ms);
    EXPECT_EQ(diag.attempts, 2u);
}

TEST_F(retry_test, a_write_refused_with_429_is_retried_too)
{
    auto c = make_client();
    fake->expect_any().respond(429).header("Retry-After", "0");
    fake->expect_any().respond(201, R"({"asset":)" + asset_json(true, "licence") + "}");
    // The limiter then waits for the refill of the write's 2 points (3 s).
    auto [ec, r] = run_in_virtual_time([&](auto t) { return dd::async_create_asset(c, {.type = dd::asset_type::licence}, diag, t); });
    EXPECT_FALSE(ec) << diag.to_string();
    EXPECT_EQ(fake->requests().size(), 2u);
}

TEST_F(retry_test, idempotent_get_is_retried_on_5xx_and_transport_errors)
{
    auto c = make_client();
    fake->expect_any().respond(503, "<html>busy</html>");
    fake->expect_any().fail(asio::error::connection_reset);
    fake->expect_any().respond(200, ok_order());
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(c, "o1", diag, t); });
    EXPECT_FALSE(ec) << diag.to_string();
    EXPECT_EQ(diag.attempts, 3u);
}

TEST_F(retry_test, a_write_that_may_have_reached_the_server_is_not_retried)
{
    auto c = make_client();
    fake->expect_any().respond(502, "<html>bad gateway</html>");
    auto [ec, r] = run([&](auto t) {
        return dd::async_create_asset(c, {.type = dd::asset_type::external, .external_url = "https://x"}, diag, t);
    });
    EXPECT_EQ(ec, dd::api_errc::server_error);
    EXPECT_EQ(diag.attempts, 1u);
    EXPECT_EQ(diag.http_status, 502u);
    EXPECT_EQ(fake->requests().size(), 1u);
    fake->expect_any().fail(asio::error::connection_reset);
    auto [ec2, r2] = run([&](auto t) { return dd::async_notify_order(c, "o1", diag, t); });
    EXPECT_EQ(ec2, asio::error::connection_reset);
    EXPECT_EQ(fake->requests().size(), 2u);
}

TEST_F(retry_test, a_write_that_was_never_sent_is_retried)
{
    auto c = make_client();
    fake->expect_any().fail(asio::error::connection_refused);
    fake->expect_any().respond(200, R"({"order":)" + order_json() + R"(,"notified":true,"notified_at":"2024-05-03T10:00:00Z"})");
    auto [ec, r] = run([&](auto t) { return dd::async_notify_order(c, "o1", diag, t); });
    EXPECT_FALSE(ec) << diag.to_string();
    EXPECT_EQ(fake->requests().size(), 2u);
}

// A DELETE whose answer was lost is retried; the retry's 404 says that the
// first attempt deleted it: success, said in the diagnostics. A 404 with no
// earlier attempt that may have been processed stays asset_not_found.
TEST_F(retry_test, a_retried_deletes_404_after_a_lost_answer_is_success)
{
    auto c = make_client();
    const std::string gone = R"({"error":"Asset not found"})";
    fake->expect(dd::http_method::delete_, "/api/v1/external/assets/a1").fail(dd::client_errc::connection_closed);
    fake->expect(dd::http_method::delete_, "/api/v1/external/assets/a1").respond(404, gone);
    auto [ec] = run([&](auto t) { return dd::async_delete_asset(c, "a1", diag, t); });
    EXPECT_FALSE(ec) << ec.message() << " " << diag.to_string();
    EXPECT_EQ(diag.attempts, 2u);
    EXPECT_NE(diag.client_message.find("answered 404 after attempt 1"), std::string::npos) << diag.client_message;
    EXPECT_TRUE(fake->done());

    // After a 5xx too (the server may have done the work), for a digital product.
    fake->expect_any().respond(503, "busy");
    fake->expect_any().respond(404, R"({"error":"Digital product not found"})");
    auto [ec2] = run([&](auto t) { return dd::async_delete_digital_product(c, "d1", diag, t); });
    EXPECT_FALSE(ec2) << ec2.message() << " " << diag.to_string();

    // The first answer is a 404: the asset never existed (or is long gone).
    fake->expect_any().respond(404, gone);
    auto [ec3] = run([&](auto t) { return dd::async_delete_asset(c, "a1", diag, t); });
    EXPECT_EQ(ec3, dd::api_errc::asset_not_found);
    // The first attempt never left (refused connection): the 404 is the answer.
    fake->expect_any().fail(asio::error::connection_refused);
    fake->expect_any().respond(404, gone);
    auto [ec4] = run([&](auto t) { return dd::async_delete_asset(c, "a1", diag, t); });
    EXPECT_EQ(ec4, dd::api_errc::asset_not_found);
    // A DELETE whose path names the order, not what it removes: a 404 is an error.
    fake->expect_any().fail(dd::client_errc::connection_closed);
    fake->expect_any().respond(404, R"({"error":"Order not found"})");
    const std::string ids[] = {"a1"};
    dd::asset_ids_request detach;
    detach.asset_ids = ids;
    auto [ec5, r5] = run([&](auto t) { return dd::async_detach_assets(c, "o1", detach, diag, t); });
    EXPECT_EQ(ec5, dd::api_errc::order_not_found);
    EXPECT_TRUE(fake->done());
}

// A GET is idempotent, and still a 501 or a 505 is sent once: the server
// says it will never serve it.
TEST_F(retry_test, not_implemented_and_version_not_supported_are_not_retried)
{
    auto c = make_client();
    for (unsigned status : {501u, 505u})
    {
        SCOPED_TRACE(status);
        const auto before = fake->requests().size();
        fake->expect_any().respond(status, R"({"error":"no"})");
        fake->expect_any().respond(200, ok_order());  // what a retry would get
        auto [ec, o] = run([&](auto t) { return dd::async_get_order(c, "o1", diag, t); });
        EXPECT_EQ(ec, dd::api_errc::server_error);
        EXPECT_EQ(diag.http_status, status);
        EXPECT_EQ(diag.attempts, 1u);
        EXPECT_EQ(fake->requests().size(), before + 1);
        // The next request takes the unused answer.
        auto [ec2, o2] = run([&](auto t) { return dd::async_get_order(c, "o1", diag, t); });
        EXPECT_FALSE(ec2) << diag.to_string();
    }
}

TEST_F(retry_test, attempts_are_bounded_and_reported)
{
    auto c = make_client({}, {.max_attempts = 3, .initial_backoff = 1ms, .max_backoff = 2ms});
    for (int i = 0; i < 3; ++i)
        fake->expect_any().respond(500, R"({"error":"boom"})");
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(c, "o1", diag, t); });
    EXPECT_EQ(ec, dd::api_errc::server_error);
    EXPECT_EQ(diag.attempts, 3u);
    EXPECT_EQ(diag.server_message, "boom");
    EXPECT_TRUE(fake->done());
}

TEST_F(retry_test, per_request_retry_override)
{
    auto c = make_client();
    fake->expect_any().respond(503);
    dd::request_options opts{.retry = dd::retry_params{.enabled = false}};
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(c, "o1", opts, diag, t); });
    EXPECT_EQ(ec, dd::api_errc::server_error);
    EXPECT_EQ(fake->requests().size(), 1u);
}

TEST_F(retry_test, deadline_bounds_a_hanging_attempt)
{
    auto c = make_client();
    fake->expect_any().hang();
    dd::testing::virtual_clock vc;
    dd::request_options opts{.deadline = vc.now() + 60ms};
    bool done = false;
    dd::error_code ec;
    dd::async_get_order(c, "o1", opts, diag, [&](dd::error_code e, dd::order) { ec = e, done = true; });
    vc.run_for(ioc, 59ms, 1ms);
    EXPECT_FALSE(done) << "gave up before the deadline";
    vc.run_for(ioc, 1ms, 1ms);
    ASSERT_TRUE(done) << "still waiting after the deadline";
    // The deadline cut the attempt in flight: one answer, deadline_exceeded.
    EXPECT_EQ(ec, dd::client_errc::deadline_exceeded) << ec.message();
    EXPECT_EQ(ec, dd::condition::timeout);
    EXPECT_NE(diag.client_message.find("deadline passed during attempt 1"), std::string::npos) << diag.client_message;
    ASSERT_EQ(fake->requests().size(), 1u);
    EXPECT_EQ(fake->requests()[0].timeout, 60ms) << "the attempt gets what is left of the deadline";
}

// A server that accepts the request and never answers: with every setting
// at its default, the operation ends within client_params::operation_timeout
// (60 s), not after max_attempts whole request timeouts (4 x 30 s, 120 s and
// more). Here the first attempt's 30 s timeout ends it: a second attempt
// could not end before the deadline.
TEST_F(retry_test, a_silent_server_costs_the_default_operation_timeout_at_most)
{
    auto c = make_client({}, {});  // every default
    for (int i = 0; i < 8; ++i)
        fake->expect_any().hang();
    dd::testing::virtual_clock vc;
    bool done = false;
    dd::error_code ec;
    dd::async_get_order(c, "o1", diag, [&](dd::error_code e, dd::order) { ec = e, done = true; });
    vc.run_for(ioc, 29'900ms, 100ms);
    EXPECT_FALSE(done) << "gave up before the attempt's timeout";
    vc.run_for(ioc, 30'100ms, 100ms);
    ASSERT_TRUE(done) << "still waiting after the default deadline";
    // The attempt ran out of its own 30 s (the deadline was further away).
    EXPECT_EQ(ec, dd::client_errc::request_timeout) << ec.message();
    EXPECT_EQ(ec, dd::condition::timeout) << ec.message();
    ASSERT_EQ(fake->requests().size(), 1u);
    EXPECT_EQ(fake->requests()[0].timeout, 30s);
}

// The default deadline cuts an attempt's timeout to what is left of it.
TEST_F(retry_test, the_default_deadline_cuts_the_attempt_timeout)
{
    auto c = make_client({}, {}, 10s);
    fake->expect_any().hang();
    auto [ec, o] = run_in_virtual_time([&](auto t) { return dd::async_get_order(c, "o1", diag, t); });
    EXPECT_EQ(ec, dd::client_errc::deadline_exceeded) << ec.message();
    EXPECT_EQ(ec, dd::condition::timeout) << ec.message();
    ASSERT_EQ(fake->requests().size(), 1u);
    EXPECT_EQ(fake->requests()[0].timeout, 10s);
}

// The attempt's timeout has one default, whoever applies it: the client
// (client_params::request_timeout, or zero there) and the Beast transport (an
// http_request without a timeout); a request_options::timeout replaces it.
TEST_F(retry_test, the_attempt_timeout_has_one_default)
{
    EXPECT_EQ(dd::client_params{}.request_timeout, dd::default_request_timeout);
    EXPECT_EQ(dd::beast_transport_params{}.request_timeout, dd::default_request_timeout);
    dd::client c(fake, {.base_url = base_url, .api_key = "key", .request_timeout = 0ms, .operation_timeout = 0ms});
    fake->expect_any().respond(200, ok_order());
    fake->expect_any().respond(200, ok_order());
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(c, "o1", diag, t); });
    ASSERT_FALSE(ec) << ec.message();
    auto [ec2, o2] = run([&](auto t) { return dd::async_get_order(c, "o1", dd::request_options{.timeout = 5s}, diag, t); });
    ASSERT_FALSE(ec2) << ec2.message();
    ASSERT_EQ(fake->requests().size(), 2u);
    EXPECT_EQ(fake->requests()[0].timeout, dd::default_request_timeout) << "zero: the default, not the transport's own";
    EXPECT_EQ(fake->requests()[1].timeout, 5s);
}

// Zero turns the default deadline off: attempts and retries alone end it.
TEST_F(retry_test, operation_timeout_zero_means_no_default_deadline)
{
    auto c = make_client({}, {}, 0ms);
    for (int i = 0; i < 4; ++i)
        fake->expect_any().hang();
    auto [ec, o] = run_in_virtual_time([&](auto t) { return dd::async_get_order(c, "o1", diag, t); });
    EXPECT_EQ(ec, dd::client_errc::request_timeout) << ec.message();
    EXPECT_EQ(fake->requests().size(), 4u);
    for (const auto& r : fake->requests())
        EXPECT_EQ(r.timeout, 30s);
}

TEST_F(retry_test, a_rate_limit_wait_that_cannot_end_in_time_fails_at_once)
{
    // 2 points per 10 s: the third GET would wait ~5 s.
    dd::testing::virtual_clock vc;  // time stands still: nothing refills
    auto c = make_client({.capacity = 2, .window = std::chrono::seconds(10)});
    fake->expect_any().respond(200, ok_order());
    fake->expect_any().respond(200, ok_order());
    run([&](auto t) { return dd::async_get_order(c, "o1", t); });
    run([&](auto t) { return dd::async_get_order(c, "o1", t); });
    dd::request_options opts{.deadline = vc.now() + 100ms};
    // Fails without letting any time pass (run() never advances the clock).
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(c, "o1", opts, diag, t); });
    EXPECT_EQ(ec, dd::client_errc::rate_limit_wait_exceeds_deadline);
    EXPECT_EQ(fake->requests().size(), 2u);  // nothing sent
}

TEST_F(retry_test, cancellation_while_backing_off)
{
    // A 429's Retry-After is a lower bound on the wait (a full-jitter backoff
    // may be arbitrarily short). On the virtual clock the request is still
    // backing off 4 s later, and since time then stands still, only the
    // cancellation can complete it.
    auto c = make_client({}, {.initial_backoff = 5s, .max_backoff = 5s});
    fake->expect_any().respond(429, R"({"error":"Rate limit exceeded"})").header("Retry-After", "5");
    asio::cancellation_signal sig;
    dd::error_code got;
    bool called = false;
    dd::async_get_order(c, "o1", diag, asio::bind_cancellation_slot(sig.slot(), [&](dd::error_code ec, dd::order) {
                      got = ec;
                      called = true;
                  }));
    dd::testing::virtual_clock vc;
    vc.run_for(ioc, 4s);
    ASSERT_FALSE(called);
    ASSERT_EQ(fake->requests().size(), 1u);  // backing off
    sig.emit(asio::cancellation_type::terminal);
    dd_test::run(ioc);  // no time passes: only the cancellation can end it
    ASSERT_TRUE(called);
    EXPECT_EQ(got, asio::error::operation_aborted);
    EXPECT_EQ(fake->requests().size(), 1u);  // cancelled in the backoff, nothing resent
    EXPECT_EQ(diag.attempts, 1u);
}

TEST_F(retry_test, snapshot_follows_the_server_headers)
{
    auto c = make_client();
    fake->expect_any()
        .respond(200, ok_order())
        .header("X-RateLimit-Limit", "40")
        .header("X-RateLimit-Remaining", "12")
        .header("X-RateLimit-Reset", "1767225600");
    run([&](auto t) { return dd::async_get_order(c, "o1", t); });
    auto s = c.rate_limit();
    EXPECT_EQ(s.limit, 40);
    ASSERT_TRUE(s.remaining);
    EXPECT_LE(*s.remaining, 12);
}

// Retry-After values outside system_clock's range (about 1678-2262): a date
// far in the future waits the cap (max_retry_after), one far in the past
// waits nothing (retried once the bucket has a point again, 1.5 s), and so
// does a huge delta-seconds. Before: 9999 waited nothing, 0001 the cap.
TEST_F(retry_test, a_retry_after_far_in_the_future_waits_the_cap)
{
    const std::string many_digits(400, '9');  // beyond a double
    for (const char* ra : {"Fri, 31 Dec 9999 23:59:59 GMT", "99999999999999999999", many_digits.c_str()})
        get_after_429(ra, [&](dd::testing::virtual_clock& vc) {
            vc.run_for(ioc, 59900ms, 100ms);
            EXPECT_EQ(fake->requests().size(), 1u) << "resent before the 60 s cap";
            vc.run_for(ioc, 2s, 100ms);
            ASSERT_EQ(fake->requests().size(), 2u) << "not resent after the cap";
        });
}

TEST_F(retry_test, a_retry_after_far_in_the_past_waits_nothing)
{
    for (const char* ra : {"Fri, 01 Jan 1600 00:00:00 GMT", "Mon, 01 Jan 0001 00:00:00 GMT"})
        get_after_429(ra, [&](dd::testing::virtual_clock& vc) {
            vc.run_for(ioc, 3s, 100ms);
            ASSERT_EQ(fake->requests().size(), 2u) << "a past Retry-After date held the retry";
        });
}

// X-RateLimit-Reset values that are no representable instant (beyond 2262,
// negative, huge, not a number) are ignored: the snapshot keeps the server's
// limit and remaining, and its reset is the client's own estimate (now .. now
// + window), never a wrapped-around date. Before: 12795482468 gave a reset in 1791.
TEST_F(retry_test, snapshot_ignores_a_reset_outside_system_clock)
{
    for (const char* reset : {"12795482468", "-1", "99999999999999999999", "later", "9223372036854775807"})
    {
        SCOPED_TRACE(reset);
        fake = std::make_shared<dd::testing::fake_transport>(ioc.get_executor());
        auto c = dd::client(fake, {.base_url = base_url, .api_key = std::string("key-reset-") + reset});
        fake->expect_any()
            .respond(200, ok_order())
            .header("X-RateLimit-Limit", "40")
            .header("X-RateLimit-Remaining", "12")
            .header("X-RateLimit-Reset", reset);
        dd::testing::virtual_clock vc;
        run([&](auto t) { return dd::async_get_order(c, "o1", t); });
        const auto now = vc.system_now();
        auto s = c.rate_limit();
        EXPECT_EQ(s.source, dd::rate_limit_source::header);
        EXPECT_EQ(s.limit, 40);
        EXPECT_EQ(s.remaining, 12);
        ASSERT_TRUE(s.reset);
        EXPECT_GE(*s.reset, now);
        EXPECT_LE(*s.reset, now + 60s);
        ioc.restart();
    }
}

}  // namespace

// Points available at once are taken during the initiation: the request
// reaches the transport without a round trip through the executor (the
// limiter's posted grant cost ~9k instructions per request). Once a request
// waits, a later one of the same priority queues behind it.
TEST_F(retry_test, points_available_at_once_are_taken_without_a_trip_through_the_executor)
{
    dd::testing::virtual_clock vc;
    // A point per 10 s; no probe first (the second request would wait for the first's answer).
    auto c = make_client({.capacity = 2, .window = std::chrono::seconds(20), .probe_first = false});
    for (int i = 0; i < 3; ++i)
        fake->expect_any().respond(200, ok_order());
    int completed = 0;
    auto count = [&](dd::error_code ec, dd::order) { EXPECT_FALSE(ec) << ec.message(); ++completed; };
    dd::async_get_order(c, "o1", count);
    EXPECT_EQ(fake->requests().size(), 1u) << "the grant went through the executor";
    EXPECT_EQ(completed, 0) << "completed inline";
    dd::async_get_order(c, "o2", count);
    EXPECT_EQ(fake->requests().size(), 2u);
    dd::async_get_order(c, "o3", count);  // no point left: queued
    EXPECT_EQ(fake->requests().size(), 2u);
    vc.run_for(ioc, 9s, 1s);
    EXPECT_EQ(completed, 2);
    EXPECT_EQ(fake->requests().size(), 2u) << "granted before the refill";
    vc.run_for(ioc, 2s, 1s);
    EXPECT_EQ(completed, 3);
}

TEST_F(retry_test, cancelled_after_the_limiters_grant_sends_nothing)
{
    // The cancellation arrives after the limiter granted the points (its
    // completion is queued) and before the operation resumes: nothing may be
    // sent, and the points go back to the bucket.
    dd::testing::virtual_clock vc;
    auto c = make_client({.capacity = 1, .window = std::chrono::seconds(10)});
    fake->expect_any().respond(200, ok_order());
    run([&](auto t) { return dd::async_get_order(c, "o1", t); });  // the bucket is empty now
    ASSERT_EQ(fake->requests().size(), 1u);

    asio::cancellation_signal sig;
    std::optional<dd::error_code> got;
    dd::async_get_order(c, "o2", diag, asio::bind_cancellation_slot(sig.slot(), [&](dd::error_code ec, dd::order) { got = ec; }));
    vc.run_for(ioc, 9s, 1s);
    ASSERT_FALSE(got) << "waiting for the refill";
    vc.advance(1s);
    // Runs the limiter's timer alone: it grants and queues the completion.
    ASSERT_EQ(ioc.run_one_for(std::chrono::seconds(5)), 1u);
    ASSERT_FALSE(got);
    sig.emit(asio::cancellation_type::terminal);
    dd_test::run(ioc);
    ASSERT_TRUE(got);
    EXPECT_EQ(*got, asio::error::operation_aborted);
    EXPECT_EQ(fake->requests().size(), 1u) << "a cancelled request was sent";
    // The granted point went back to the bucket: the next request goes out
    // without time passing.
    fake->expect_any().respond(200, ok_order());
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(c, "o3", diag, t); });
    EXPECT_FALSE(ec) << ec.message() << " " << diag.to_string();
    EXPECT_EQ(fake->requests().size(), 2u);
}
