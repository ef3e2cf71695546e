// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// async_wait_for_downloads on the fake transport, with short intervals.
#include "fixtures.hpp"

#include <digital_delivery/testing/virtual_clock.hpp>
#include <digital_delivery/watermark.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>

using namespace fixtures;
using namespace std::chrono_literals;

namespace {

std::string downloads(const std::string& wm, bool url = true)
{
    std::string d = download_json(false, wm);
    if (!url)
    {
        const std::string from = R"("download_url":"https://storage.example/book.pdf?X-Amz-Signature=abc")";
        d.replace(d.find(from), from.size(), R"("download_url":null)");
    }
    return R"({"order_id":"o1","order_name":"#1001","downloads":[)" + download_json(true) + "," + d + "]}";
}

class watermark_test : public client_test
{
protected:
    std::string path = target("/orders/o1/downloads");
    dd::watermark_wait_options fast{.initial_interval = 5ms, .multiplier = 1.5, .max_interval = 20ms};

    struct outcome
    {
        bool done = false;
        dd::error_code ec;
        dd::order_downloads d;
    };
    auto recorder(outcome& o)
    {
        return [&o](dd::error_code ec, dd::order_downloads d) {
            o.done = true;
            o.ec = ec;
            o.d = std::move(d);
        };
    }

    /// Waits with `opts` (whose deadline `vc` set `at` from now) while the
    /// server keeps answering "processing": still waiting 1 ms before the
    /// deadline, done at it. Returns the outcome.
    outcome wait_until_deadline(dd::testing::virtual_clock& vc, std::chrono::milliseconds at)
    {
        for (int i = 0; i < 40; ++i)
            fake->expect(dd::http_method::get, path).respond(200, downloads("processing", false));
        outcome o;
        dd::async_wait_for_downloads(client, "o1", fast, dd::request_options{.deadline = vc.now() + at}, diag, recorder(o));
        vc.run_for(ioc, at - 1ms, 1ms);
        EXPECT_FALSE(o.done) << "gave up before the deadline";
        vc.run_for(ioc, 1ms, 1ms);
        EXPECT_TRUE(o.done) << "still polling after the deadline";
        return o;
    }
};

TEST_F(watermark_test, polls_until_ready)
{
    fake->expect(dd::http_method::get, path).respond(200, downloads("processing", false));
    fake->expect(dd::http_method::get, path).respond(200, downloads("ready", false));  // ready without URL: poll again
    fake->expect(dd::http_method::get, path).respond(200, downloads("ready"));
    auto [ec, d] = run([&](auto tok) { return dd::async_wait_for_downloads(client, "o1", fast, tok); });
    ASSERT_FALSE(ec) << ec.message();
    ASSERT_EQ(d.downloads.size(), 2u);
    EXPECT_TRUE(d.downloads[1].download_url.has_value());
    EXPECT_TRUE(fake->done()) << ::testing::PrintToString(fake->mismatches());
    EXPECT_EQ(dd::detail::active_watermark_polls(), 0u);
}

TEST_F(watermark_test, nothing_to_wait_for_completes_after_one_poll)
{
    fake->expect(dd::http_method::get, path).respond(200, downloads("not_applicable"));
    auto [ec, d] = run([&](auto tok) { return dd::async_wait_for_downloads(client, "o1", tok); });
    EXPECT_FALSE(ec);
    EXPECT_EQ(fake->requests().size(), 1u);
}

TEST_F(watermark_test, deadline_exceeded)
{
    dd::testing::virtual_clock vc;
    const auto o = wait_until_deadline(vc, 60ms);
    EXPECT_EQ(o.ec, dd::client_errc::deadline_exceeded);
    EXPECT_EQ(o.ec, dd::condition::timeout);
    EXPECT_EQ(diag.path, "/orders/o1/downloads");
    EXPECT_FALSE(diag.client_message.empty());
    const auto sent = fake->requests().size();
    EXPECT_GE(sent, 3u);
    EXPECT_LE(sent, 12u) << "backoff grows";
    EXPECT_EQ(dd::detail::active_watermark_polls(), 0u) << "the loop stopped with its last waiter";
}

TEST_F(watermark_test, a_failing_poll_fills_the_callers_diagnostics)
{
    fake->expect(dd::http_method::get, path).respond(404, R"({"error":"Order not found"})");
    auto [ec, d] = run([&](auto tok) { return dd::async_wait_for_downloads(client, "o1", fast, diag, tok); });
    EXPECT_EQ(ec, dd::api_errc::order_not_found);
    EXPECT_EQ(diag.server_message, "Order not found");
    EXPECT_EQ(diag.http_status, 404u);
}

TEST_F(watermark_test, polls_are_background_priority_with_the_callers_headers)
{
    fake->expect(dd::http_method::get, path).respond(200, downloads("ready"));
    const dd::http_headers::field trace[] = {{"X-Trace", "w"}};
    const dd::request_options opts{.extra_headers = trace};
    auto [ec, d] = run([&](auto tok) { return dd::async_wait_for_downloads(client, "o1", fast, opts, tok); });
    EXPECT_FALSE(ec);
    EXPECT_EQ(last_request().headers.find("X-Trace").value_or(""), "w");
}

TEST_F(watermark_test, two_waiters_share_one_poll)
{
    fake->expect(dd::http_method::get, path).respond(200, downloads("processing", false));
    fake->expect(dd::http_method::get, path).respond(200, downloads("processing", false));
    fake->expect(dd::http_method::get, path).respond(200, downloads("ready"));
    outcome a, b;
    dd::async_wait_for_downloads(client, "o1", fast, recorder(a));
    dd::async_wait_for_downloads(client, "o1", fast, recorder(b));
    EXPECT_EQ(dd::detail::active_watermark_polls(), 1u);
    dd_test::run(ioc);
    EXPECT_TRUE(a.done && b.done);
    EXPECT_FALSE(a.ec);
    EXPECT_FALSE(b.ec);
    EXPECT_EQ(a.d.downloads.size(), 2u);
    EXPECT_EQ(b.d.downloads.size(), 2u);
    EXPECT_EQ(fake->requests().size(), 3u) << "one request per poll for both waiters";
    EXPECT_TRUE(fake->done()) << ::testing::PrintToString(fake->mismatches());
}

TEST_F(watermark_test, other_orders_poll_separately)
{
    fake->expect_any().respond(200, downloads("ready"));
    fake->expect_any().respond(200, downloads("ready"));
    outcome a, b;
    dd::async_wait_for_downloads(client, "o1", fast, recorder(a));
    dd::async_wait_for_downloads(client, "o2", fast, recorder(b));
    dd_test::run(ioc);
    EXPECT_TRUE(a.done && b.done);
    EXPECT_EQ(fake->requests().size(), 2u);
}

TEST_F(watermark_test, cancelling_one_waiter_leaves_the_other)
{
    fake->expect(dd::http_method::get, path).respond(200, downloads("processing", false));
    fake->expect(dd::http_method::get, path).delay(20ms).respond(200, downloads("ready"));
    outcome a, b;
    asio::cancellation_signal sig;
    dd::async_wait_for_downloads(client, "o1", fast, asio::bind_cancellation_slot(sig.slot(), recorder(a)));
    dd::async_wait_for_downloads(client, "o1", fast, recorder(b));
    asio::steady_timer t(ioc, 10ms);
    t.async_wait([&](dd::error_code) { sig.emit(asio::cancellation_type::terminal); });
    dd_test::run(ioc);
    EXPECT_EQ(a.ec, asio::error::operation_aborted);
    EXPECT_FALSE(b.ec);
    EXPECT_EQ(b.d.downloads.size(), 2u);
    EXPECT_EQ(fake->requests().size(), 2u);
}

TEST_F(watermark_test, last_waiter_leaving_cancels_the_poll_in_flight)
{
    fake->expect(dd::http_method::get, path).hang();
    outcome a;
    asio::cancellation_signal sig;
    dd::async_wait_for_downloads(client, "o1", fast, asio::bind_cancellation_slot(sig.slot(), recorder(a)));
    for (int i = 0; i < 50 && fake->requests().empty(); ++i)
        ioc.run_one();
    sig.emit(asio::cancellation_type::terminal);
    dd_test::run(ioc);  // returns: the hanging request was cancelled too
    EXPECT_EQ(a.ec, asio::error::operation_aborted);
    EXPECT_EQ(dd::detail::active_watermark_polls(), 0u);
}

TEST_F(watermark_test, poll_error_reaches_every_waiter)
{
    fake->expect(dd::http_method::get, path).respond(404, R"({"error":"Order not found"})");
    outcome a, b;
    dd::async_wait_for_downloads(client, "o1", fast, recorder(a));
    dd::async_wait_for_downloads(client, "o1", fast, recorder(b));
    dd_test::run(ioc);
    EXPECT_EQ(a.ec, dd::api_errc::order_not_found);
    EXPECT_EQ(b.ec, dd::api_errc::order_not_found);
}

TEST_F(watermark_test, a_new_wait_after_completion_polls_again)
{
    fake->expect(dd::http_method::get, path).respond(200, downloads("ready"));
    fake->expect(dd::http_method::get, path).respond(200, downloads("ready"));
    auto [ec1, d1] = run([&](auto tok) { return dd::async_wait_for_downloads(client, "o1", fast, tok); });
    auto [ec2, d2] = run([&](auto tok) { return dd::async_wait_for_downloads(client, "o1", fast, tok); });
    EXPECT_FALSE(ec1);
    EXPECT_FALSE(ec2);
    EXPECT_EQ(fake->requests().size(), 2u);
}

TEST(watermark_backoff, intervals)
{
    dd::watermark_wait_options o;
    std::vector<long> seen;
    std::chrono::milliseconds d = o.initial_interval;
    for (int i = 0; i < 8; ++i)
    {
        seen.push_back(static_cast<long>(d.count()));
        d = dd::detail::next_poll_interval(d, o);
    }
    EXPECT_EQ(seen, (std::vector<long>{1000, 1500, 2250, 3375, 5062, 7593, 10000, 10000}));
}

}  // namespace
