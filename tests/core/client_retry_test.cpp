// The client's request operation with the rate limiter and the retry policy:
// 429 handling, idempotency rules, deadlines, cancellation while backing off.
#include "fixtures.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>

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
    dd::client make_client(dd::rate_limit_params rl = {}, dd::retry_params rp = {.initial_backoff = 1ms, .max_backoff = 5ms})
    {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        return dd::client(fake, {.base_url = base_url, .api_key = std::string("key-") + info->name(), .rate_limit = rl, .retry = rp});
    }

    template <class F>
    auto run(F&& f)
    {
        auto fut = asio::co_spawn(ioc, f(asio::as_tuple(asio::use_awaitable)), asio::use_future);
        ioc.restart();
        ioc.run();
        return fut.get();
    }

    std::string ok_order() const { return R"({"order":)" + order_json() + "}"; }
};

TEST_F(retry_test, a_429_is_retried_after_retry_after)
{
    auto c = make_client();
    fake->expect_any().respond(429, R"({"error":"Rate limit exceeded"})").header("Retry-After", "0.05");
    fake->expect_any().respond(200, ok_order());
    const auto t0 = std::chrono::steady_clock::now();
    auto [ec, o] = run([&](auto t) { return dd::get_order(c, "o1", diag, t); });
    const auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_FALSE(ec) << diag.to_string();
    EXPECT_EQ(o.id, "o1");
    EXPECT_EQ(diag.attempts, 2u);
    EXPECT_GE(took, 45ms);  // the pause was honoured (a lower bound only)
    EXPECT_EQ(fake->requests().size(), 2u);
}

TEST_F(retry_test, a_write_refused_with_429_is_retried_too)
{
    auto c = make_client();
    fake->expect_any().respond(429).header("Retry-After", "0");
    fake->expect_any().respond(201, R"({"asset":)" + asset_json(true, "licence") + "}");
    auto [ec, r] = run([&](auto t) { return dd::create_asset(c, {.type = dd::asset_type::licence}, diag, t); });
    EXPECT_FALSE(ec) << diag.to_string();
    EXPECT_EQ(fake->requests().size(), 2u);
}

TEST_F(retry_test, idempotent_get_is_retried_on_5xx_and_transport_errors)
{
    auto c = make_client();
    fake->expect_any().respond(503, "<html>busy</html>");
    fake->expect_any().fail(asio::error::connection_reset);
    fake->expect_any().respond(200, ok_order());
    auto [ec, o] = run([&](auto t) { return dd::get_order(c, "o1", diag, t); });
    EXPECT_FALSE(ec) << diag.to_string();
    EXPECT_EQ(diag.attempts, 3u);
}

TEST_F(retry_test, a_write_that_may_have_reached_the_server_is_not_retried)
{
    auto c = make_client();
    fake->expect_any().respond(502, "<html>bad gateway</html>");
    auto [ec, r] = run([&](auto t) {
        return dd::create_asset(c, {.type = dd::asset_type::external, .external_url = "https://x"}, diag, t);
    });
    EXPECT_EQ(ec, dd::api_errc::server_error);
    EXPECT_EQ(diag.attempts, 1u);
    EXPECT_EQ(diag.http_status, 502u);
    EXPECT_EQ(fake->requests().size(), 1u);
    fake->expect_any().fail(asio::error::connection_reset);
    auto [ec2, r2] = run([&](auto t) { return dd::notify_order(c, "o1", diag, t); });
    EXPECT_EQ(ec2, asio::error::connection_reset);
    EXPECT_EQ(fake->requests().size(), 2u);
}

TEST_F(retry_test, a_write_that_was_never_sent_is_retried)
{
    auto c = make_client();
    fake->expect_any().fail(asio::error::connection_refused);
    fake->expect_any().respond(200, R"({"order":)" + order_json() + R"(,"notified":true,"notified_at":"2024-05-03T10:00:00Z"})");
    auto [ec, r] = run([&](auto t) { return dd::notify_order(c, "o1", diag, t); });
    EXPECT_FALSE(ec) << diag.to_string();
    EXPECT_EQ(fake->requests().size(), 2u);
}

TEST_F(retry_test, attempts_are_bounded_and_reported)
{
    auto c = make_client({}, {.max_attempts = 3, .initial_backoff = 1ms, .max_backoff = 2ms});
    for (int i = 0; i < 3; ++i)
        fake->expect_any().respond(500, R"({"error":"boom"})");
    auto [ec, o] = run([&](auto t) { return dd::get_order(c, "o1", diag, t); });
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
    auto [ec, o] = run([&](auto t) { return dd::get_order(c, "o1", opts, diag, t); });
    EXPECT_EQ(ec, dd::api_errc::server_error);
    EXPECT_EQ(fake->requests().size(), 1u);
}

TEST_F(retry_test, deadline_bounds_a_hanging_attempt)
{
    auto c = make_client();
    fake->expect_any().hang();
    dd::request_options opts{.deadline = std::chrono::steady_clock::now() + 60ms};
    auto [ec, o] = run([&](auto t) { return dd::get_order(c, "o1", opts, diag, t); });
    EXPECT_TRUE(ec == dd::client_errc::request_timeout || ec == dd::client_errc::deadline_exceeded) << ec.message();
    EXPECT_EQ(ec, dd::condition::timeout);
    ASSERT_EQ(fake->requests().size(), 1u);
    EXPECT_LE(fake->requests()[0].timeout, 60ms);
}

TEST_F(retry_test, a_rate_limit_wait_that_cannot_end_in_time_fails_at_once)
{
    // 2 points per 10 s: the third GET would wait ~5 s.
    auto c = make_client({.capacity = 2, .window = std::chrono::seconds(10)});
    fake->expect_any().respond(200, ok_order());
    fake->expect_any().respond(200, ok_order());
    run([&](auto t) { return dd::get_order(c, "o1", t); });
    run([&](auto t) { return dd::get_order(c, "o1", t); });
    dd::request_options opts{.deadline = std::chrono::steady_clock::now() + 100ms};
    const auto t0 = std::chrono::steady_clock::now();
    auto [ec, o] = run([&](auto t) { return dd::get_order(c, "o1", opts, diag, t); });
    EXPECT_EQ(ec, dd::client_errc::rate_limit_wait_exceeds_deadline);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);  // did not wait in vain
    EXPECT_EQ(fake->requests().size(), 2u);                // nothing sent
}

TEST_F(retry_test, cancellation_while_backing_off)
{
    // The backoff must outlast the 30 ms before the cancellation whatever the
    // jitter draws: a full-jitter delay u * ceiling can be arbitrarily short
    // (a 503 with a 5 s ceiling retried within 30 ms in 0.6 % of runs), a 429's
    // Retry-After is a lower bound.
    auto c = make_client({}, {.initial_backoff = 5s, .max_backoff = 5s});
    fake->expect_any().respond(429, R"({"error":"Rate limit exceeded"})").header("Retry-After", "5");
    asio::cancellation_signal sig;
    dd::error_code got;
    bool called = false;
    dd::get_order(c, "o1", diag, asio::bind_cancellation_slot(sig.slot(), [&](dd::error_code ec, dd::order) {
                      got = ec;
                      called = true;
                  }));
    asio::steady_timer t(ioc, 30ms);
    t.async_wait([&](dd::error_code) { sig.emit(asio::cancellation_type::terminal); });
    const auto t0 = std::chrono::steady_clock::now();
    ioc.run();
    ASSERT_TRUE(called);
    EXPECT_EQ(got, asio::error::operation_aborted);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
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
    run([&](auto t) { return dd::get_order(c, "o1", t); });
    auto s = c.rate_limit();
    EXPECT_EQ(s.limit, 40);
    ASSERT_TRUE(s.remaining);
    EXPECT_LE(*s.remaining, 12);
}

}  // namespace
