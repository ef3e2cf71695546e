//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// The request pipeline's sans-io core (impl/engine/sansio/request_core.hpp):
// events in by plain calls, actions out, on a virtual time point. No
// io_context, no socket, no sleep.

#include <digital_delivery/impl/engine/sansio/request_core.hpp>

#include <boost/asio/error.hpp>

#include <gtest/gtest.h>

namespace dd = digital_delivery;
using namespace std::chrono_literals;
using dd::detail::limiter_step;
using dd::detail::request_action;
using dd::detail::request_core;
using dd::detail::request_setup;
using dd::detail::response_facts;
using kind = request_action::kind;

namespace request_core_tests {

const request_core::time_point t0 = request_core::time_point{} + 1000h;
const dd::error_code ok{};

struct setup_builder
{
    dd::retry_params retry{.initial_backoff = 200ms, .max_backoff = 10s};
    request_setup s;

    setup_builder()
    {
        s.retry = &retry;
        s.cost = 2;
        s.prio = dd::priority::interactive;
        s.idempotent = true;
        s.operation_timeout = 0ms;
        s.timeout = 30s;
        s.jitter = [] { return 0.5; };  // full jitter at half the ceiling
    }
    request_core make() { return request_core(s); }
};

// A core sending its first attempt (started and granted at t0).
request_core sending(setup_builder& b)
{
    auto core = b.make();
    core.started(t0);
    core.granted(ok, t0);
    return core;
}

// A completion with `ec`, after telling the limiter `l`.
void expect_complete(const request_action& a, dd::error_code ec, limiter_step l, bool with_response)
{
    EXPECT_EQ(a.what, kind::complete);
    EXPECT_EQ(a.ec, ec);
    EXPECT_EQ(a.limiter, l);
    EXPECT_EQ(a.with_response, with_response);
}

// What the core writes into the diagnostics.
void expect_recorded(const request_core& core, unsigned attempts, std::chrono::milliseconds waited)
{
    dd::diagnostics d;
    core.record(d);
    EXPECT_EQ(d.attempts, attempts);
    EXPECT_EQ(d.total_wait, waited);
}

response_facts status(unsigned st, std::optional<std::chrono::milliseconds> retry_after = std::nullopt)
{
    response_facts f;
    f.status = st;
    f.retry_after = retry_after;
    return f;
}

const dd::error_code server_error = make_error_code(dd::api_errc::server_error);
const dd::error_code rate_limited = make_error_code(dd::api_errc::rate_limited);

}  // namespace request_core_tests

using namespace request_core_tests;

TEST(request_core, success_at_the_first_attempt)
{
    setup_builder b;
    auto core = b.make();
    auto a = core.started(t0);
    ASSERT_EQ(a.what, kind::acquire);
    EXPECT_TRUE(a.try_now);
    EXPECT_EQ(core.cost(), 2);
    EXPECT_EQ(core.prio(), dd::priority::interactive);
    EXPECT_FALSE(core.deadline());

    a = core.granted(ok, t0 + 40ms);
    ASSERT_EQ(a.what, kind::send);
    EXPECT_EQ(core.attempt(), 1u);
    EXPECT_EQ(core.last_wait(), 40ms);
    EXPECT_EQ(a.duration, 30s);
    EXPECT_FALSE(a.move_request) << "three retries left: the original is kept";

    a = core.responded(ok, ok, status(200), t0 + 100ms);
    EXPECT_EQ(a.what, kind::complete);
    EXPECT_FALSE(a.ec);
    EXPECT_TRUE(a.with_response);
    EXPECT_EQ(a.limiter, limiter_step::observe_response);

    expect_recorded(core, 1, 40ms);
}

TEST(request_core, a_503_is_retried_after_the_backoff_and_a_429_after_retry_after)
{
    setup_builder b;
    auto core = sending(b);
    // A 503's Retry-After does not lengthen a request's backoff (only a
    // refusal's does): half of the 200 ms ceiling.
    auto a = core.responded(ok, server_error, status(503, 5s), t0 + 10ms);
    ASSERT_EQ(a.what, kind::wait);
    EXPECT_EQ(a.duration, 100ms);
    EXPECT_EQ(a.limiter, limiter_step::observe_response);

    a = core.timer_fired(ok, t0 + 110ms);
    ASSERT_EQ(a.what, kind::acquire);
    EXPECT_FALSE(a.try_now) << "after a backoff the limiter's queue decides";
    a = core.granted(ok, t0 + 110ms);
    ASSERT_EQ(a.what, kind::send);
    EXPECT_EQ(core.attempt(), 2u);

    // A 429 waits at least its Retry-After.
    a = core.responded(ok, rate_limited, status(429, 5s), t0 + 120ms);
    ASSERT_EQ(a.what, kind::wait);
    EXPECT_EQ(a.duration, 5000ms);

    a = core.timer_fired(ok, t0 + 5120ms);
    a = core.granted(ok, t0 + 5120ms);
    ASSERT_EQ(a.what, kind::send);
    a = core.responded(ok, ok, status(200), t0 + 5200ms);
    EXPECT_EQ(a.what, kind::complete);
    EXPECT_FALSE(a.ec);
    expect_recorded(core, 3, 5100ms);
}

// Only a request that is never resent may give its request to the
// transport: with retries on, even the last attempt the policy allows may be
// refused with 429, which is resent (it spends no attempt).
TEST(request_core, only_a_request_without_retries_takes_the_request)
{
    setup_builder b;
    b.retry.max_attempts = 2;
    auto core = b.make();
    core.started(t0);
    auto a = core.granted(ok, t0);
    EXPECT_FALSE(a.move_request);
    core.responded(ok, server_error, status(503), t0);
    core.timer_fired(ok, t0 + 1s);
    a = core.granted(ok, t0 + 1s);
    ASSERT_EQ(a.what, kind::send);
    EXPECT_FALSE(a.move_request) << "a 429 may follow";
    a = core.responded(ok, server_error, status(503), t0 + 1s);
    EXPECT_EQ(a.what, kind::complete) << "attempts exhausted";
    EXPECT_EQ(a.ec, server_error);
    EXPECT_TRUE(a.with_response);

    setup_builder off;
    off.retry.enabled = false;
    auto once = off.make();
    once.started(t0);
    EXPECT_TRUE(once.granted(ok, t0).move_request);
}

TEST(request_core, the_deadline_reached_while_waiting_for_points)
{
    setup_builder b;
    b.s.deadline = t0 + 1s;
    auto core = b.make();
    auto a = core.started(t0);
    ASSERT_EQ(a.what, kind::acquire);
    EXPECT_TRUE(a.try_now);
    EXPECT_EQ(core.deadline(), t0 + 1s);
    a = core.granted(ok, t0 + 1s);
    // Granted, never spent: the points go back (and a probe's turn passes on).
    expect_complete(a, dd::client_errc::deadline_exceeded, limiter_step::refund, false);
    expect_recorded(core, 0, 1s);
}

TEST(request_core, the_deadline_bounds_attempts_and_retries)
{
    setup_builder b;
    b.s.operation_timeout = 2s;  // no deadline given: now + operation_timeout
    auto core = b.make();
    core.started(t0);
    EXPECT_EQ(core.deadline(), t0 + 2s);
    auto a = core.granted(ok, t0 + 1500ms);
    ASSERT_EQ(a.what, kind::send);
    EXPECT_EQ(a.duration, 500ms) << "the attempt's time limit never passes the deadline";
    // A retry that cannot end before the deadline is not made; the attempt
    // the deadline cut timed out: the operation's deadline passed.
    a = core.responded(make_error_code(dd::client_errc::request_timeout), ok, status(0), t0 + 1990ms);
    EXPECT_EQ(a.what, kind::complete);
    EXPECT_EQ(a.ec, dd::client_errc::deadline_exceeded);
    EXPECT_EQ(a.limiter, limiter_step::attempt_over);
    ASSERT_TRUE(core.retry());
    EXPECT_EQ(core.retry()->stats().last_reason, dd::detail::retry_reason::deadline);

    // Started past its deadline: the limiter's queue reports it.
    setup_builder late;
    late.s.deadline = t0 - 1ms;
    auto l = late.make();
    EXPECT_FALSE(l.started(t0).try_now);
}

// One answer for a passed deadline: an attempt whose time limit the deadline
// cut ends with deadline_exceeded (said in the diagnostics), while an attempt
// that ran out of its own time limit stays request_timeout.
TEST(request_core, a_request_timeout_cut_by_the_deadline_is_deadline_exceeded)
{
    setup_builder b;
    b.retry.enabled = false;
    b.s.deadline = t0 + 5s;  // shorter than the attempt's 30 s
    auto core = sending(b);
    auto a = core.responded(make_error_code(dd::client_errc::request_timeout), ok, status(0), t0 + 5s);
    expect_complete(a, dd::client_errc::deadline_exceeded, limiter_step::attempt_over, true);
    dd::diagnostics d;
    d.client_message = "the transport's explanation";
    core.record(d);
    EXPECT_EQ(d.attempts, 1u);
    EXPECT_NE(d.client_message.find("deadline passed during attempt 1"), std::string::npos) << d.client_message;
    EXPECT_NE(d.client_message.find("5000 ms"), std::string::npos) << d.client_message;
    EXPECT_TRUE(dd::error_code(dd::client_errc::deadline_exceeded) == dd::condition::timeout);

    // The attempt's own limit (2 s, the deadline 60 s away): request_timeout.
    setup_builder own;
    own.retry.enabled = false;
    own.s.timeout = 2s;
    own.s.operation_timeout = 60s;
    auto core2 = sending(own);
    a = core2.responded(make_error_code(dd::client_errc::request_timeout), ok, status(0), t0 + 2s);
    expect_complete(a, dd::client_errc::request_timeout, limiter_step::attempt_over, true);
    dd::diagnostics d2;
    core2.record(d2);
    EXPECT_TRUE(d2.client_message.empty()) << d2.client_message;
}

TEST(request_core, cancellation_during_the_backoff)
{
    setup_builder b;
    auto core = sending(b);
    auto a = core.responded(ok, rate_limited, status(429, 5s), t0);
    ASSERT_EQ(a.what, kind::wait);
    // The cancelled timer's completion ...
    auto aborted = core.timer_fired(boost::asio::error::operation_aborted, t0 + 1s);
    EXPECT_EQ(aborted.what, kind::complete);
    EXPECT_EQ(aborted.ec, boost::asio::error::operation_aborted);
    EXPECT_EQ(aborted.limiter, limiter_step::none) << "no points held while backing off";

    // ... or a cancellation noticed after the timer fired without error.
    auto core2 = sending(b);
    core2.responded(ok, rate_limited, status(429, 5s), t0);
    a = core2.cancelled(t0 + 5s);
    expect_complete(a, boost::asio::error::operation_aborted, limiter_step::none, false);
}

TEST(request_core, cancellation_after_a_grant_refunds_the_points)
{
    setup_builder b;
    auto core = b.make();
    core.started(t0);
    auto a = core.cancelled(t0 + 300ms);
    EXPECT_EQ(a.what, kind::complete);
    EXPECT_EQ(a.ec, boost::asio::error::operation_aborted);
    EXPECT_EQ(a.limiter, limiter_step::refund);
    EXPECT_EQ(core.last_wait(), 300ms);
    EXPECT_EQ(core.attempt(), 0u) << "nothing sent";
}

TEST(request_core, a_write_that_may_have_been_sent_is_not_retried)
{
    setup_builder b;
    b.s.idempotent = false;
    auto core = sending(b);
    auto a = core.responded(boost::asio::error::connection_reset, ok, status(0), t0 + 10ms);
    EXPECT_EQ(a.what, kind::complete);
    EXPECT_EQ(a.ec, boost::asio::error::connection_reset);
    EXPECT_EQ(a.limiter, limiter_step::attempt_over) << "the points may have been spent on the server";
    EXPECT_EQ(core.retry()->stats().last_reason, dd::detail::retry_reason::not_idempotent);

    auto core503 = sending(b);
    a = core503.responded(ok, server_error, status(503), t0 + 10ms);
    EXPECT_EQ(a.what, kind::complete);
    EXPECT_EQ(a.ec, server_error);
    EXPECT_EQ(a.limiter, limiter_step::observe_response);
}

TEST(request_core, a_request_never_sent_gets_its_points_back_and_is_retried)
{
    setup_builder b;
    b.s.idempotent = false;  // never sent: safe to resend even a write
    auto core = sending(b);
    auto a = core.responded(boost::asio::error::connection_refused, ok, status(0), t0 + 10ms);
    ASSERT_EQ(a.what, kind::wait);
    EXPECT_EQ(a.limiter, limiter_step::refund);
    EXPECT_EQ(a.duration, 100ms);

    // A cancelled attempt gives nothing back (the server may be busy with it)
    // and is not retried.
    auto core2 = sending(b);
    a = core2.responded(boost::asio::error::operation_aborted, ok, status(0), t0 + 10ms);
    expect_complete(a, boost::asio::error::operation_aborted, limiter_step::attempt_over, false);
}

TEST(request_core, a_refused_request_completes_without_points)
{
    setup_builder b;
    b.s.rejected = make_error_code(dd::client_errc::invalid_path_parameter);
    auto core = b.make();
    auto a = core.started(t0);
    EXPECT_EQ(a.what, kind::complete);
    EXPECT_EQ(a.ec, dd::client_errc::invalid_path_parameter);
    EXPECT_EQ(a.limiter, limiter_step::none);
    dd::diagnostics d;
    d.attempts = 7;
    core.record(d);
    EXPECT_EQ(d.attempts, 7u) << "nothing recorded for a request that never started";
}

TEST(request_core, a_failed_acquire_completes_with_the_limiters_error)
{
    setup_builder b;
    auto core = b.make();
    core.started(t0);
    auto a = core.granted(make_error_code(dd::client_errc::rate_limit_wait_exceeds_deadline), t0 + 1ms);
    EXPECT_EQ(a.what, kind::complete);
    EXPECT_EQ(a.ec, dd::client_errc::rate_limit_wait_exceeds_deadline);
    EXPECT_EQ(a.limiter, limiter_step::none) << "nothing granted, nothing to give back";
}

// Without a deadline, the wait for points after a 429 is bounded by what is
// left of max_rate_limited_wait: a limiter that cannot grant in time ends the
// request with rate_limited_too_long.
TEST(request_core, the_wait_for_points_after_a_429_is_bounded_by_max_rate_limited_wait)
{
    setup_builder b;
    b.retry.max_rate_limited_wait = 100s;
    auto core = b.make();
    core.started(t0);
    EXPECT_FALSE(core.acquire_deadline()) << "no bound before a 429";
    core.granted(ok, t0);
    auto refused = status(429);
    refused.retry_after = 30s;
    auto a = core.responded(ok, make_error_code(dd::api_errc::rate_limited), refused, t0);
    ASSERT_EQ(a.what, kind::wait);
    EXPECT_EQ(a.duration, 30s);
    a = core.timer_fired(ok, t0 + 30s);
    ASSERT_EQ(a.what, kind::acquire);
    EXPECT_EQ(core.acquire_deadline(), t0 + 100s);
    a = core.granted(make_error_code(dd::client_errc::rate_limit_wait_exceeds_deadline), t0 + 30s);
    EXPECT_EQ(a.what, kind::complete);
    EXPECT_EQ(a.ec, dd::client_errc::rate_limited_too_long);
    dd::diagnostics d;
    core.record(d);
    EXPECT_EQ(d.attempts, 1u);
    EXPECT_NE(d.client_message.find("refused with 429 1 time, waited 30000 ms"), std::string::npos) << d.client_message;
}
