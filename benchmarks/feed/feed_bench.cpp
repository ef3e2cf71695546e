// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The order feed against the naive loop, on a sandbox of its own at the real
// 40 points per 60 s (docs/performance.md, "Order feed"):
//
//   feed_bench feed|naive idle|rate1|burst SECONDS
//
// Purchases: none (idle), one per second (rate1), or 300 at once 30 s in
// (burst). Half-way the consumer is stopped for 30 s and started again (the
// feed from its checkpoint; the naive loop with its ids lost: its first page
// after a start is its baseline). Prints one Markdown table row: purchases
// counted (made up to 70 s before the end), delivered, missed, delivered more
// than once, purchase-to-event p50 and p99, points spent and points per hour.
#include <digital_delivery.hpp>
#include <digital_delivery/beast_transport.hpp>
#include <digital_delivery/order_feed.hpp>
#include <digital_delivery/testing/sandbox.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace dd = digital_delivery;
namespace asio = boost::asio;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

struct results
{
    std::mutex mtx;
    std::map<std::string, dd::timestamp> purchased;  // id -> created_at
    std::map<std::string, int> delivered;
    std::vector<double> delays_ms;
    std::uint64_t points = 0;
};

dd::timestamp wall()
{
    return std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now());
}

void record(results& r, const dd::order& o)
{
    std::lock_guard<std::mutex> lk(r.mtx);
    if (++r.delivered[o.id] == 1)
        r.delays_ms.push_back(std::chrono::duration<double, std::milli>(wall() - o.created_at).count());
}

asio::awaitable<void> sleep_for(std::chrono::milliseconds d)
{
    asio::steady_timer t(co_await asio::this_coro::executor);
    t.expires_after(d);
    co_await t.async_wait(asio::use_awaitable);
}

asio::awaitable<void> run_feed(dd::client& c, std::shared_ptr<dd::memory_feed_checkpoint> cp, results& r,
                               steady::time_point until)
{
    dd::order_feed feed(c, cp, {});
    asio::steady_timer stop(co_await asio::this_coro::executor);
    stop.expires_at(until);
    for (;;)
    {
        asio::cancellation_signal sig;
        stop.async_wait([&](boost::system::error_code ec) {
            if (!ec)
                sig.emit(asio::cancellation_type::terminal);
        });
        auto [ec, e] = co_await feed.async_next(asio::bind_cancellation_slot(sig.slot(), asio::as_tuple(asio::use_awaitable)));
        stop.cancel();
        if (ec)
            break;
        if (e.kind == dd::feed_event_kind::new_order)
            record(r, e.order);
        co_await feed.async_ack(e, asio::use_awaitable);
        if (steady::now() >= until)
            break;
    }
    std::lock_guard<std::mutex> lk(r.mtx);
    r.points += feed.stats().points;
}

asio::awaitable<void> run_naive(dd::client& c, results& r, steady::time_point until, std::chrono::seconds every)
{
    std::set<std::string> ids;
    bool baseline = true;
    while (steady::now() < until)
    {
        auto [ec, l] = co_await dd::async_list_orders(c, dd::order_query{.per_page = 250}, asio::as_tuple(asio::use_awaitable));
        {
            std::lock_guard<std::mutex> lk(r.mtx);
            ++r.points;
        }
        if (!ec)
            for (const auto& o : l.orders)
                if (ids.insert(o.id).second && !baseline)
                    record(r, o);
        baseline = false;
        co_await sleep_for(every);
    }
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 4)
    {
        std::fprintf(stderr, "usage: feed_bench feed|naive idle|rate1|burst SECONDS\n");
        return 2;
    }
    const std::string mode = argv[1], kase = argv[2];
    const auto total = std::chrono::seconds(std::atoi(argv[3]));
    dd::testing::sandbox sb({"--seed-orders", "1000"});
    asio::io_context ioc;
    dd::client client(dd::beast_transport(ioc.get_executor(), {}), dd::client_params{.base_url = sb.base_url(), .api_key = sb.api_key()});
    results r;
    const auto t0 = steady::now();
    const auto end = t0 + total;
    const auto half = t0 + total / 2;
    const auto downtime = 30s;
    std::atomic<bool> stop{false};
    std::thread buyer([&] {
        auto buy = [&](int n) {
            auto resp = sb.request("POST", "/sandbox/purchases",
                                   R"({"store_product_id": 7500000001111, "count": )" + std::to_string(n) + "}");
            if (resp.status != 201)
                return;
            auto v = boost::json::parse(resp.body);
            std::lock_guard<std::mutex> lk(r.mtx);
            for (const auto& o : v.at("orders").as_array())
                if (steady::now() < end - 70s)
                    r.purchased[std::string(o.at("id").as_string())] = *dd::parse_timestamp(o.at("created_at").as_string());
        };
        if (kase == "burst")
        {
            std::this_thread::sleep_until(t0 + 30s);
            buy(300);
            return;
        }
        if (kase == "rate1")
            for (auto next = t0 + 5s; !stop && next < end; next += 1s)
            {
                std::this_thread::sleep_until(next);
                buy(1);
            }
    });
    auto cp = std::make_shared<dd::memory_feed_checkpoint>();
    auto run = [&]() -> asio::awaitable<void> {
        for (int part = 0; part < 2; ++part)
        {
            const auto until = part == 0 ? half : end;
            if (mode == "feed")
                co_await run_feed(client, cp, r, until);
            else
                co_await run_naive(client, r, until, 10s);
            if (part == 0)
                co_await sleep_for(downtime);  // stopped: a deploy, a crash
        }
    };
    asio::co_spawn(ioc, run(), [&](std::exception_ptr e) {
        if (e)
            std::fprintf(stderr, "feed_bench: the run failed\n");
        ioc.stop();
    });
    ioc.run();
    stop = true;
    buyer.join();
    std::lock_guard<std::mutex> lk(r.mtx);
    std::size_t missed = 0, twice = 0;
    for (const auto& [id, t] : r.purchased)
    {
        auto it = r.delivered.find(id);
        if (it == r.delivered.end())
            ++missed;
        else if (it->second > 1)
            ++twice;
    }
    std::sort(r.delays_ms.begin(), r.delays_ms.end());
    auto pct = [&](double p) {
        if (r.delays_ms.empty())
            return std::string("-");
        const auto i = std::min(r.delays_ms.size() - 1, static_cast<std::size_t>(p * static_cast<double>(r.delays_ms.size())));
        char b[32];
        std::snprintf(b, sizeof b, "%.1f s", r.delays_ms[i] / 1000.0);
        return std::string(b);
    };
    const double secs = std::chrono::duration<double>(total).count();
    std::printf("| %s | %s | %zu | %zu | %zu | %zu | %s | %s | %llu | %.0f |\n", kase.c_str(), mode.c_str(),
                r.purchased.size(), r.delivered.size(), missed, twice, pct(0.5).c_str(), pct(0.99).c_str(),
                static_cast<unsigned long long>(r.points), static_cast<double>(r.points) / (secs - 30.0) * 3600.0);
    return 0;
}
