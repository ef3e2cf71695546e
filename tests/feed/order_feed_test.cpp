// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The order feed's driver on the fake transport and the virtual clock: what it
// sends, when, and what an acknowledgement, a failed commit and a cancellation do.
#include "fixtures.hpp"

#include <digital_delivery/order_feed.hpp>
#include <digital_delivery/testing/virtual_clock.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>

#include <functional>
#include <string>
#include <vector>

using namespace fixtures;
using namespace std::chrono_literals;

namespace {

std::string order_at(const std::string& id, dd::timestamp t, const std::string& status = "paid")
{
    return R"({"id":")" + id + R"(","name":"#1","email":"a@example.com","phone":null,"financial_status":")" + status +
           R"(","fulfillment_status":null,"total_price":"19.00","currency":"USD","created_at":")" + dd::format_timestamp(t) +
           R"(","download_count":0})";
}

std::string page_of(const std::vector<std::string>& orders)
{
    std::string s = R"({"orders":[)";
    for (std::size_t i = 0; i < orders.size(); ++i)
        s += (i ? "," : "") + orders[i];
    return s + R"(],"pagination":)" + pagination_json(1, 250, static_cast<int>(orders.size()), 1) + "}";
}

class order_feed_test : public client_test
{
protected:
    dd::testing::virtual_clock vc;
    std::shared_ptr<dd::memory_feed_checkpoint> cp = std::make_shared<dd::memory_feed_checkpoint>();
    dd::order_feed_options opts{.min_interval = 10s, .max_interval = 40s, .lookback_interval = 10min};

    dd::timestamp wall() const
    {
        return std::chrono::time_point_cast<std::chrono::microseconds>(vc.system_now());
    }

    struct next_result
    {
        bool done = false;
        dd::error_code ec;
        dd::feed_event e;
    };
};

TEST_F(order_feed_test, polls_newest_first_from_the_checkpoint_and_commits_each_acknowledgement)
{
    dd::order_feed feed(client, cp, opts);
    const dd::timestamp start = wall();
    const dd::timestamp created = start + 2s;
    fake->expect_any().respond(200, page_of({}));  // first poll: nothing
    fake->expect_any().respond(200, page_of({order_at("o9", created)}));
    next_result r;
    feed.async_next([&](dd::error_code ec, dd::feed_event e) { r = {true, ec, std::move(e)}; });
    EXPECT_FALSE(r.done);  // never inline
    ASSERT_TRUE(vc.run_until(ioc, [&] { return r.done; }, 60s, 100ms));
    ASSERT_FALSE(r.ec) << r.ec.message();
    EXPECT_EQ(r.e.order.id, "o9");
    EXPECT_EQ(r.e.kind, dd::feed_event_kind::new_order);
    auto reqs = fake->requests();
    ASSERT_EQ(reqs.size(), 2u);
    // The second poll came min_interval after the first, idle (the delay doubled to 20 s).
    const std::string day_before = dd::format_date(dd::date(std::chrono::floor<std::chrono::days>(start) - std::chrono::days(1)));
    EXPECT_EQ(std::string(fake->target_of(reqs[1].url)),
              target("/orders?created_at_min=" + day_before + "&page=1&per_page=250&sort=created_at_desc"));
    EXPECT_EQ(feed.stats().points, 2u);
    // Acknowledged: the checkpoint holds the order and the watermark.
    bool acked = false;
    feed.async_ack(r.e, [&](dd::error_code ec) {
        EXPECT_FALSE(ec);
        acked = true;
    });
    vc.run_until(ioc, [&] { return acked; }, 1s);
    ASSERT_TRUE(acked);
    EXPECT_EQ(cp->state().orders.count("o9"), 1u);
    EXPECT_EQ(cp->state().watermark, created);
}

TEST_F(order_feed_test, an_order_created_right_after_the_start_is_delivered_at_the_servers_precision)
{
    // The first start falls at hh:mm:ss.500123; the server's created_at has
    // whole seconds (o_s, bought 0.3 s after the start) or milliseconds (o_ms,
    // bought 0.2 ms after it): both read as earlier than the start's microseconds.
    const auto sub = wall().time_since_epoch() % std::chrono::seconds(1);
    vc.advance(std::chrono::seconds(1) - sub + 500ms + 123us);
    const dd::timestamp start = wall();
    const dd::timestamp second = std::chrono::floor<std::chrono::seconds>(start);
    ASSERT_EQ(start - second, 500123us);
    const dd::timestamp ms = std::chrono::floor<std::chrono::milliseconds>(start + 200us);
    dd::order_feed feed(client, cp, opts);
    fake->expect_any().respond(200, page_of({order_at("o_s", second), order_at("o_ms", ms)}));
    std::vector<std::string> seen;
    bool stop = false;
    std::function<void()> loop = [&] {
        feed.async_next([&](dd::error_code ec, dd::feed_event e) {
            ASSERT_FALSE(ec) << ec.message();
            seen.push_back(e.order.id);
            feed.async_ack(e, [&](dd::error_code aec) {
                ASSERT_FALSE(aec);
                if (seen.size() == 2)
                    stop = true;
                else
                    loop();
            });
        });
    };
    loop();
    ASSERT_TRUE(vc.run_until(ioc, [&] { return stop; }, 60s, 100ms)) << seen.size() << " delivered";
    EXPECT_EQ(seen, (std::vector<std::string>{"o_s", "o_ms"}));
    // The recorded start is the whole second: a restart compares the same way.
    EXPECT_EQ(cp->state().horizon, second);
}

TEST_F(order_feed_test, a_failed_commit_leaves_the_event_to_be_delivered_again)
{
    dd::order_feed feed(client, cp, opts);
    fake->expect_any().respond(200, page_of({order_at("o1", wall() + 1ms)}));
    next_result r;
    feed.async_next([&](dd::error_code ec, dd::feed_event e) { r = {true, ec, std::move(e)}; });
    ASSERT_TRUE(vc.run_until(ioc, [&] { return r.done; }, 5s));
    ASSERT_FALSE(r.ec);
    cp->fail_commits(1);
    dd::error_code ack_ec;
    bool acked = false;
    feed.async_ack(r.e, [&](dd::error_code ec) {
        ack_ec = ec;
        acked = true;
    });
    vc.run_until(ioc, [&] { return acked; }, 1s);
    ASSERT_TRUE(acked);
    EXPECT_TRUE(ack_ec);
    next_result again;
    feed.async_next([&](dd::error_code ec, dd::feed_event e) { again = {true, ec, std::move(e)}; });
    ASSERT_TRUE(vc.run_until(ioc, [&] { return again.done; }, 1s));
    EXPECT_EQ(again.e.key, r.e.key);  // no request: the same event again
    EXPECT_EQ(fake->requests().size(), 1u);
    // Acknowledging another event than the one handed out is refused.
    dd::feed_event other = again.e;
    other.key = "new_order:zzz";
    feed.async_ack(other, [&](dd::error_code ec) { ack_ec = ec; });
    vc.run_for(ioc, 10ms);
    EXPECT_EQ(ack_ec, dd::client_errc::invalid_argument);
}

TEST_F(order_feed_test, a_failing_handler_is_retried_with_backoff_then_dead_lettered)
{
    opts.max_attempts = 2;
    opts.retry_initial = 3s;
    dd::order_feed feed(client, cp, opts);
    fake->expect_any().respond(200, page_of({order_at("o1", wall() + 1ms), order_at("o2", wall() + 2ms)}));
    std::vector<std::string> seen;
    int dead = 0;
    bool stop = false;
    // A handler that fails every event of o1.
    std::function<void()> loop = [&] {
        feed.async_next([&](dd::error_code ec, dd::feed_event e) {
            if (ec)
                return;
            seen.push_back(e.order.id + "#" + std::to_string(e.attempt));
            if (e.order.id == "o1")
                feed.async_fail(e, "no licence server", [&](dd::error_code, bool d) {
                    dead += d;
                    loop();
                });
            else
                feed.async_ack(e, [&](dd::error_code) { stop = true; });
        });
    };
    loop();
    ASSERT_TRUE(vc.run_until(ioc, [&] { return stop; }, 30s, 100ms));
    EXPECT_EQ(seen, (std::vector<std::string>{"o1#1", "o1#2", "o2#1"}));
    EXPECT_EQ(dead, 1);
    ASSERT_EQ(feed.dead_letters().size(), 1u);
    EXPECT_EQ(feed.dead_letters()[0].error, "no licence server");
    EXPECT_EQ(cp->state().dead_letters.size(), 1u);
}

TEST_F(order_feed_test, a_followed_order_is_read_on_the_waiters_schedule_until_its_watermark_is_ready)
{
    dd::order_feed feed(client, cp, opts);
    feed.follow("o1");
    const std::string processing = R"({"order_id":"o1","order_name":"#1001","downloads":[)" + download_json(false, "processing") + "]}";
    const std::string ready = R"({"order_id":"o1","order_name":"#1001","downloads":[)" + download_json(false, "ready") + "]}";
    fake->expect(dd::http_method::get, target("/orders/o1/downloads")).respond(200, processing);
    fake->expect_any().respond(200, page_of({}));  // the first new-order poll
    fake->expect(dd::http_method::get, target("/orders/o1/downloads")).respond(200, ready);
    next_result r;
    feed.async_next([&](dd::error_code ec, dd::feed_event e) { r = {true, ec, std::move(e)}; });
    ASSERT_TRUE(vc.run_until(ioc, [&] { return r.done; }, 5s, 50ms));
    ASSERT_FALSE(r.ec) << r.ec.message();
    EXPECT_TRUE(fake->done()) << (fake->mismatches().empty() ? "" : fake->mismatches()[0]);
    EXPECT_EQ(r.e.kind, dd::feed_event_kind::watermark_ready);
    EXPECT_EQ(r.e.key, "watermark_ready:o1");
    EXPECT_EQ(feed.stats().downloads_reads, 2u);
    bool acked = false;
    feed.async_ack(r.e, [&](dd::error_code ec) { acked = !ec; });
    vc.run_until(ioc, [&] { return acked; }, 1s);
    EXPECT_TRUE(acked);
    EXPECT_EQ(cp->state().orders.count("o1"), 0u);  // a follow changes nothing of the checkpoint
}

TEST_F(order_feed_test, a_cancelled_wait_ends_with_operation_aborted)
{
    dd::order_feed feed(client, cp, opts);
    fake->expect_any().respond(200, page_of({}));
    asio::cancellation_signal sig;
    next_result r;
    feed.async_next(asio::bind_cancellation_slot(sig.slot(), [&](dd::error_code ec, dd::feed_event e) { r = {true, ec, std::move(e)}; }));
    vc.run_for(ioc, 2s);
    EXPECT_FALSE(r.done);
    sig.emit(asio::cancellation_type::terminal);
    vc.run_for(ioc, 10ms);
    ASSERT_TRUE(r.done);
    EXPECT_EQ(r.ec, asio::error::operation_aborted);
}

}  // namespace
