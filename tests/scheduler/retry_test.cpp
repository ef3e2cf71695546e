//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// Retry rules per idempotency, backoff bounds with injected jitter, deadline,
// attempts and the retry budget. Virtual clock throughout.

#include <digital_delivery/impl/retry/retry_policy.hpp>
#include <digital_delivery/impl/retry/retry_state.hpp>

#include <boost/asio/error.hpp>

#include <gtest/gtest.h>

using namespace digital_delivery;
using namespace digital_delivery::detail;  // the machinery under test is internal
using namespace std::chrono_literals;
using clk = std::chrono::steady_clock;

namespace {

const clk::time_point t0 = clk::time_point{} + 1000h;

retry_state make(retry_params p = {}, std::shared_ptr<retry_budget> b = nullptr,
                 std::optional<clk::time_point> deadline = std::nullopt, double u = 0.5)
{
    retry_state rs(p, std::move(b), t0, deadline, [u] { return u; });
    rs.on_attempt_start(t0);
    return rs;
}

attempt_failure failure_status(unsigned s, api_errc e = api_errc::server_error)
{
    return {make_error_code(e), s, std::nullopt};
}

attempt_failure transport(error_code ec) { return {ec, 0, std::nullopt}; }

}  // namespace

TEST(retry_classify, rules)
{
    using detail::classify_failure;
    using detail::retry_class;
    EXPECT_EQ(classify_failure(make_error_code(api_errc::rate_limited), 429), retry_class::always);
    EXPECT_EQ(classify_failure(boost::asio::error::connection_refused, 0), retry_class::always);
    EXPECT_EQ(classify_failure(make_error_code(client_errc::connect_timeout), 0), retry_class::always);
    EXPECT_EQ(classify_failure(make_error_code(api_errc::server_error), 503), retry_class::if_idempotent);
    EXPECT_EQ(classify_failure(make_error_code(client_errc::request_timeout), 0), retry_class::if_idempotent);
    EXPECT_EQ(classify_failure(make_error_code(client_errc::connection_closed), 0), retry_class::if_idempotent);
    EXPECT_EQ(classify_failure(boost::asio::error::connection_reset, 0), retry_class::if_idempotent);
    EXPECT_EQ(classify_failure(make_error_code(api_errc::not_found), 404), retry_class::never);
    EXPECT_EQ(classify_failure(make_error_code(api_errc::validation_failed), 422), retry_class::never);
    EXPECT_EQ(classify_failure(make_error_code(client_errc::invalid_argument), 0), retry_class::never);  // not sent, but permanent
    EXPECT_EQ(classify_failure(make_error_code(client_errc::tls_certificate_verify_failed), 0), retry_class::never);
    EXPECT_EQ(classify_failure(make_error_code(client_errc::rate_limit_wait_exceeds_deadline), 0), retry_class::never);
    EXPECT_EQ(classify_failure(boost::asio::error::operation_aborted, 0), retry_class::never);
}

// 501 and 505 say the server will never serve the request: retrying cannot
// help, whatever the method (the other 5xx are retried when idempotent).
TEST(retry_classify, not_implemented_and_version_not_supported_are_final)
{
    using detail::classify_failure;
    using detail::retry_class;
    EXPECT_EQ(classify_failure(make_error_code(api_errc::server_error), 501), retry_class::never);
    EXPECT_EQ(classify_failure(make_error_code(api_errc::server_error), 505), retry_class::never);
    EXPECT_EQ(classify_failure(error_code(), 501), retry_class::never);
    EXPECT_EQ(classify_failure(make_error_code(api_errc::server_error), 500), retry_class::if_idempotent);
    EXPECT_EQ(classify_failure(make_error_code(api_errc::server_error), 504), retry_class::if_idempotent);
    EXPECT_EQ(classify_failure(make_error_code(api_errc::server_error), 599), retry_class::if_idempotent);
    for (unsigned status : {501u, 505u})
    {
        auto rs = make();
        auto d = rs.on_failure(failure_status(status), true, t0);
        EXPECT_FALSE(d.retry) << status;
        EXPECT_EQ(d.reason, retry_reason::not_retryable) << status;
        EXPECT_EQ(d.final_error, make_error_code(api_errc::server_error)) << status;
    }
}

TEST(retry_state, get_is_retried_on_5xx_and_timeouts)
{
    auto rs = make();
    auto d = rs.on_failure(failure_status(503), true, t0);
    EXPECT_TRUE(d.retry);
    EXPECT_EQ(d.reason, retry_reason::retry);
    auto rs2 = make();
    EXPECT_TRUE(rs2.on_failure(transport(make_error_code(client_errc::request_timeout)), true, t0).retry);
    auto rs3 = make();
    EXPECT_TRUE(rs3.on_failure(transport(make_error_code(client_errc::connection_closed)), true, t0).retry);
}

TEST(retry_state, post_is_not_retried_when_it_may_have_reached_the_server)
{
    for (auto f : {failure_status(503), failure_status(500), transport(make_error_code(client_errc::request_timeout)),
                   transport(make_error_code(client_errc::connection_closed)),
                   transport(boost::asio::error::connection_reset)})
    {
        auto rs = make();
        auto d = rs.on_failure(f, false, t0);
        EXPECT_FALSE(d.retry);
        EXPECT_EQ(d.reason, retry_reason::not_idempotent);
        EXPECT_EQ(d.final_error, f.ec);
    }
}

TEST(retry_state, post_is_retried_when_not_sent_or_refused_with_429)
{
    auto rs = make();
    EXPECT_TRUE(rs.on_failure(transport(boost::asio::error::connection_refused), false, t0).retry);
    auto rs2 = make();
    EXPECT_TRUE(rs2.on_failure(transport(make_error_code(client_errc::connect_timeout)), false, t0).retry);
    auto rs3 = make();
    attempt_failure f = failure_status(429, api_errc::rate_limited);
    f.retry_after = 7s;
    auto d = rs3.on_failure(f, false, t0);
    EXPECT_TRUE(d.retry);
    EXPECT_GE(d.delay, 7s);  // at least Retry-After
}

TEST(retry_state, retry_after_is_capped)
{
    retry_params p;
    p.max_retry_after = 30s;
    auto rs = make(p);
    attempt_failure f = failure_status(429, api_errc::rate_limited);
    f.retry_after = 1h;
    auto d = rs.on_failure(f, true, t0);
    EXPECT_TRUE(d.retry);
    EXPECT_EQ(d.delay, 30s);
}

TEST(retry_state, permanent_failures_are_final)
{
    auto rs = make();
    auto d = rs.on_failure(failure_status(404, api_errc::not_found), true, t0);
    EXPECT_FALSE(d.retry);
    EXPECT_EQ(d.reason, retry_reason::not_retryable);
    EXPECT_EQ(d.final_error, make_error_code(api_errc::not_found));
    auto rs2 = make();
    EXPECT_FALSE(rs2.on_failure(transport(boost::asio::error::operation_aborted), true, t0).retry);
    retry_params off;
    off.enabled = false;
    auto rs3 = make(off);
    EXPECT_EQ(rs3.on_failure(failure_status(503), true, t0).reason, retry_reason::disabled);
}

TEST(retry_backoff, ceiling_grows_and_caps)
{
    retry_params p;  // 200 ms, x2, 10 s
    EXPECT_EQ(detail::backoff_ceiling(1, p), 200ms);
    EXPECT_EQ(detail::backoff_ceiling(2, p), 400ms);
    EXPECT_EQ(detail::backoff_ceiling(3, p), 800ms);
    EXPECT_EQ(detail::backoff_ceiling(6, p), 6400ms);
    EXPECT_EQ(detail::backoff_ceiling(7, p), 10s);
    EXPECT_EQ(detail::backoff_ceiling(60, p), 10s);
    EXPECT_EQ(detail::full_jitter(800ms, 0.0), 0ms);
    EXPECT_EQ(detail::full_jitter(800ms, 0.5), 400ms);
    EXPECT_LT(detail::full_jitter(800ms, 0.9999), 800ms);
    EXPECT_EQ(detail::full_jitter(800ms, 7.0), 800ms);  // clamped
}

// retry_delay: the one schedule of requests (retry_state) and upload PUTs.
TEST(retry_backoff, one_schedule_with_the_servers_wait_as_the_least)
{
    const backoff_schedule upload{500ms, 30s, 2.0};
    EXPECT_EQ(retry_delay(1, upload, 0.5), 250ms);
    EXPECT_EQ(retry_delay(3, upload, 0.5), 1000ms);
    EXPECT_EQ(retry_delay(30, upload, 0.5), 15s);
    EXPECT_EQ(retry_delay(1, upload, 0.0, 10s, 60s), 10s);    // Retry-After: the least wait
    EXPECT_EQ(retry_delay(1, upload, 0.0, 120s, 60s), 60s);   // capped by max_retry_after
    EXPECT_EQ(retry_delay(1, upload, 0.99, 1ms, 60s), 495ms); // a longer jitter stays
    EXPECT_EQ(retry_delay(1, upload, 0.0, -5s, 60s), 0ms);    // never negative
}

// attempt_timeout: the one decision of an attempt's time limit.
TEST(retry_backoff, attempt_timeout_has_one_default_and_never_passes_the_deadline)
{
    const std::optional<clk::time_point> none;
    EXPECT_EQ(attempt_timeout(0ms, none, t0), digital_delivery::default_request_timeout);
    EXPECT_EQ(attempt_timeout(5s, none, t0), 5s);
    EXPECT_EQ(attempt_timeout(5s, std::optional(t0 + 2s), t0), 2s);
    EXPECT_EQ(attempt_timeout(0ms, std::optional(t0 + 2s), t0), 2s);
    EXPECT_EQ(attempt_timeout(5s, std::optional(t0 + 10s), t0), 5s);
    EXPECT_EQ(attempt_timeout(5s, std::optional(t0 - 1s), t0), 1ms);  // never 0: that would be no limit
}

TEST(retry_backoff, delays_stay_within_full_jitter_bounds)
{
    retry_params p;
    p.max_attempts = 8;
    for (double u : {0.0, 0.25, 0.999999})
    {
        retry_state rs(p, nullptr, t0, std::nullopt, [u] { return u; });
        auto now = t0;
        for (int attempt = 1; attempt < 8; ++attempt)
        {
            rs.on_attempt_start(now);
            auto d = rs.on_failure(failure_status(503), true, now);
            ASSERT_TRUE(d.retry) << attempt;
            const auto ceiling = detail::backoff_ceiling(attempt, p);
            EXPECT_GE(d.delay, 0ms);
            EXPECT_LE(d.delay, ceiling);
            EXPECT_EQ(d.delay, detail::full_jitter(ceiling, u));
            now += d.delay;
        }
    }
}

TEST(retry_state, attempts_are_limited_and_recorded)
{
    retry_params p;
    p.max_attempts = 3;
    retry_state rs(p, nullptr, t0, std::nullopt, [] { return 0.5; });
    auto now = t0;
    retry_decision d;
    for (int i = 0; i < 3; ++i)
    {
        rs.on_attempt_start(now);
        now += 100ms;
        d = rs.on_failure(failure_status(502), true, now);
        if (!d.retry)
            break;
        now += d.delay;
    }
    EXPECT_FALSE(d.retry);
    EXPECT_EQ(d.reason, retry_reason::attempts_exhausted);
    EXPECT_EQ(d.final_error, make_error_code(api_errc::server_error));  // the last attempt's error
    EXPECT_EQ(rs.stats().attempts, 3);
    EXPECT_EQ(rs.stats().total_backoff, 100ms + 200ms);  // u=0.5 of 200, 400
    EXPECT_EQ(rs.stats().last_status, 502u);
    rs.add_rate_limit_wait(1500ms);
    EXPECT_EQ(rs.stats().total_rate_limit_wait, 1500ms);
}

TEST(retry_state, never_schedules_a_retry_past_the_deadline)
{
    // The last attempt took 1 s; the backoff is 100 ms (u = 0.5 of 200 ms).
    retry_state rs({}, nullptr, t0, t0 + 2s, [] { return 0.5; });
    rs.on_attempt_start(t0);
    auto d = rs.on_failure(failure_status(503), true, t0 + 1s);  // 1 s + 100 ms + 1 s > 2 s
    EXPECT_FALSE(d.retry);
    EXPECT_EQ(d.reason, retry_reason::deadline);
    EXPECT_EQ(d.final_error, make_error_code(client_errc::deadline_exceeded));

    retry_state rs2({}, nullptr, t0, t0 + 2s, [] { return 0.5; });
    rs2.on_attempt_start(t0);
    EXPECT_TRUE(rs2.on_failure(failure_status(503), true, t0 + 500ms).retry);  // ends at 1.1 s

    // An attempt that used half the time and timed out, a zero backoff (u = 0):
    // a second attempt could only end exactly at the deadline. Not retried,
    // whatever the jitter draws (a client on every default, on a silent server,
    // used to retry in 1 of 200 runs and cost 60 s instead of 30 s).
    retry_state rs4({}, nullptr, t0, t0 + 60s, [] { return 0.0; });
    rs4.on_attempt_start(t0);
    auto d4 = rs4.on_failure(transport(make_error_code(client_errc::request_timeout)), true, t0 + 30s);
    EXPECT_FALSE(d4.retry);
    EXPECT_EQ(d4.reason, retry_reason::deadline);
    // A millisecond more left and the retry fits.
    retry_state rs5({}, nullptr, t0, t0 + 60s + 1ms, [] { return 0.0; });
    rs5.on_attempt_start(t0);
    EXPECT_TRUE(rs5.on_failure(transport(make_error_code(client_errc::request_timeout)), true, t0 + 30s).retry);

    // A Retry-After longer than what is left: give up now rather than wait in vain.
    retry_state rs3({}, nullptr, t0, t0 + 5s, [] { return 0.5; });
    rs3.on_attempt_start(t0);
    attempt_failure f = failure_status(429, api_errc::rate_limited);
    f.retry_after = 10s;
    EXPECT_EQ(rs3.on_failure(f, true, t0).reason, retry_reason::deadline);
}

TEST(retry_budget, limits_retries_per_client)
{
    retry_params p;
    p.budget_capacity = 2;
    p.budget_ratio = 0.5;
    p.budget_min_per_minute = 0;
    auto budget = std::make_shared<retry_budget>(p, t0);
    auto fail_once = [&](clk::time_point now) {
        retry_state rs(p, budget, now, std::nullopt, [] { return 0.0; });
        rs.on_attempt_start(now);  // earns 0.5 (capped at 2)
        return rs.on_failure(failure_status(503), true, now);
    };
    EXPECT_TRUE(fail_once(t0).retry);   // 2 -> 1
    EXPECT_TRUE(fail_once(t0).retry);   // 1.5 -> 0.5
    auto d = fail_once(t0);             // 1.0 -> 0
    EXPECT_TRUE(d.retry);
    d = fail_once(t0);                  // 0.5: not enough
    EXPECT_FALSE(d.retry);
    EXPECT_EQ(d.reason, retry_reason::budget_exhausted);
    EXPECT_EQ(d.final_error, make_error_code(api_errc::server_error));
    // Two successful requests earn one retry.
    budget->on_request(t0);
    EXPECT_TRUE(budget->try_spend(t0));
    EXPECT_FALSE(budget->try_spend(t0));
}

TEST(retry_budget, minimum_refills_over_time)
{
    retry_params p;
    p.budget_capacity = 5;
    p.budget_ratio = 0;
    p.budget_min_per_minute = 6;  // one per 10 s
    retry_budget b(p, t0);
    for (int i = 0; i < 5; ++i)
        EXPECT_TRUE(b.try_spend(t0));
    EXPECT_FALSE(b.try_spend(t0));
    EXPECT_FALSE(b.try_spend(t0 + 9s));
    EXPECT_TRUE(b.try_spend(t0 + 10s));
    EXPECT_NEAR(b.balance(t0 + 1h), 5, 1e-9);
}

TEST(retry_state, status_only_failures_get_a_matching_final_error)
{
    auto rs = make();
    auto d = rs.on_failure({{}, 404, std::nullopt}, true, t0);
    EXPECT_FALSE(d.retry);
    EXPECT_EQ(d.final_error, make_error_code(client_errc::unexpected_status));
    auto rs2 = make();
    d = rs2.on_failure({{}, 503, std::nullopt}, false, t0);
    EXPECT_EQ(d.reason, retry_reason::not_idempotent);
    EXPECT_EQ(d.final_error, make_error_code(api_errc::server_error));
    auto rs3 = make();
    EXPECT_TRUE(rs3.on_failure({{}, 429, std::nullopt}, false, t0).retry);
}

// A 429 is the server's limit speaking, not a failure: it spends neither an
// attempt nor the retry budget, whatever the method.
TEST(retry_state, a_429_spends_neither_attempts_nor_budget)
{
    retry_params p;
    p.max_attempts = 2;
    p.budget_capacity = 1;
    p.budget_ratio = 0;
    p.budget_min_per_minute = 0;
    auto budget = std::make_shared<retry_budget>(p, t0);
    retry_state rs(p, budget, t0, std::nullopt, [] { return 0.5; });
    clk::time_point now = t0;
    for (int i = 0; i < 20; ++i)
    {
        rs.on_attempt_start(now);
        attempt_failure f = failure_status(429, api_errc::rate_limited);
        f.retry_after = 2s;
        auto d = rs.on_failure(f, false, now);
        ASSERT_TRUE(d.retry) << i;
        EXPECT_EQ(d.delay, 2s);
        now += d.delay;
    }
    EXPECT_EQ(rs.stats().refusals, 20);
    EXPECT_EQ(rs.stats().rate_limited_wait, 38s) << "from each 429 to the next sending";
    EXPECT_DOUBLE_EQ(budget->balance(now), 1.0) << "a 429 spent the budget";
    // Attempts and budget are still whole for a failure of another kind.
    rs.on_attempt_start(now);
    EXPECT_TRUE(rs.on_failure(failure_status(503), true, now).retry);
    rs.on_attempt_start(now);
    auto d = rs.on_failure(failure_status(503), true, now);
    EXPECT_FALSE(d.retry);
    EXPECT_EQ(d.reason, retry_reason::attempts_exhausted);
}

// The bounds of a 429: the deadline (rate_limit_wait_exceeds_deadline), or
// without one max_rate_limited_wait (rate_limited_too_long); zero: no bound.
TEST(retry_state, a_429_ends_at_the_deadline_or_max_rate_limited_wait)
{
    attempt_failure f = failure_status(429, api_errc::rate_limited);
    f.retry_after = 60s;
    auto with_deadline = make({}, nullptr, t0 + 90s);
    EXPECT_TRUE(with_deadline.on_failure(f, false, t0).retry);
    with_deadline.on_attempt_start(t0 + 60s);
    auto d = with_deadline.on_failure(f, false, t0 + 60s);
    EXPECT_FALSE(d.retry);
    EXPECT_EQ(d.reason, retry_reason::deadline);
    EXPECT_EQ(d.final_error, make_error_code(client_errc::rate_limit_wait_exceeds_deadline));

    retry_params p;
    p.max_rate_limited_wait = 100s;
    auto capped = make(p);
    EXPECT_TRUE(capped.on_failure(f, false, t0).retry);
    EXPECT_EQ(capped.rate_limited_until(), t0 + 100s) << "the bound of the wait for points";
    capped.on_attempt_start(t0 + 60s);
    d = capped.on_failure(f, false, t0 + 60s);  // 60 s waited, 60 more would pass 100 s
    EXPECT_FALSE(d.retry);
    EXPECT_EQ(d.reason, retry_reason::rate_limited_too_long);
    EXPECT_EQ(d.final_error, make_error_code(client_errc::rate_limited_too_long));

    p.max_rate_limited_wait = 0ms;
    auto unbounded = make(p);
    for (int i = 0; i < 100; ++i)
    {
        ASSERT_TRUE(unbounded.on_failure(f, false, t0 + i * 60s).retry);
        unbounded.on_attempt_start(t0 + (i + 1) * 60s);
    }
    EXPECT_FALSE(unbounded.rate_limited_until());
}

// A bound too far for the clock is no bound (no overflow).
TEST(retry_state, a_max_rate_limited_wait_past_the_clock_is_no_bound)
{
    retry_params p;
    p.max_rate_limited_wait = std::chrono::milliseconds::max();
    p.max_retry_after = std::chrono::milliseconds::max();
    auto rs = make(p);
    attempt_failure f = failure_status(429, api_errc::rate_limited);
    f.retry_after = 24h * 365;
    EXPECT_TRUE(rs.on_failure(f, false, t0).retry);
    EXPECT_FALSE(rs.rate_limited_until());
}
