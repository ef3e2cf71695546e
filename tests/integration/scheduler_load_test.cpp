// Issue 5's load test: 1000 concurrent coroutines against the sandbox with a
// time-compressed bucket (40 points per 0.5 s), a mix of GETs (1 point) and
// writes (2 points). Expected: no 429 at all, every request succeeds, and
// the points used are at least 99% of what the bucket allowed over the run.
// Prints the utilisation figure.
#include <digital_delivery.hpp>
#include <digital_delivery/beast_transport.hpp>

#include "sandbox_process.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>
#include <string>
#include "run.hpp"

namespace dd = digital_delivery;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

// Wraps the real transport and counts what the server answered.
struct counting_transport
{
    dd::beast_transport inner;
    std::shared_ptr<std::atomic<int>> responses = std::make_shared<std::atomic<int>>(0);
    std::shared_ptr<std::atomic<int>> refused = std::make_shared<std::atomic<int>>(0);

    asio::any_io_executor get_executor() const { return inner.get_executor(); }
    void async_send(dd::http_request req, dd::transport_handler h)
    {
        inner.async_send(
            std::move(req),
            // (single-threaded io_context: the wrapper may run the handler directly)
            dd::transport_handler(
                [h = std::move(h), responses = responses, refused = refused](dd::error_code ec, dd::http_response r) mutable {
                    if (!ec)
                        ++*responses;
                    if (!ec && r.status == 429)
                        ++*refused;
                    std::move(h)(ec, std::move(r));
                }
            )
        );
    }
};

TEST(scheduler_load, thousand_coroutines_never_see_a_429_and_use_the_budget)
{
    constexpr double capacity = 40;
    constexpr double window_s = 0.5;
    dd_test::sandbox_process sb({"--rate-limit-points", "40", "--rate-limit-window-seconds", "0.5", "--seed-orders", "20"});
    asio::io_context ioc;
    counting_transport transport{dd::beast_transport(ioc.get_executor())};
    auto responses = transport.responses;
    auto refused = transport.refused;
    dd::client client(
        transport,
        {.base_url = sb.base_url(),
         .api_key = sb.api_key(),
         .rate_limit = {.capacity = capacity, .window = std::chrono::duration<double>(window_s)}}
    );

    // One asset and one order to work on (created before the measured run).
    std::string asset_id, order_id;
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            dd::new_asset licence{.type = dd::asset_type::licence, .name = "load"};
            asset_id = (co_await dd::create_asset(client, licence)).asset.id;
            dd::order_query first{.per_page = 1};
            order_id = (co_await dd::list_orders(client, first)).orders.at(0).id;
        },
        asio::detached
    );
    dd_test::run(ioc);
    ASSERT_FALSE(asset_id.empty());
    ASSERT_FALSE(order_id.empty());
    ioc.restart();

    // Let the server's bucket refill completely so that both sides start full.
    std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int>(window_s * 1000 * 1.2)));
    const int before = responses->load();

    constexpr int n = 1000;
    std::atomic<int> ok{0}, failed{0};
    long points = 0;
    const auto t0 = std::chrono::steady_clock::now();
    auto t_last = t0;
    for (int i = 0; i < n; ++i)
    {
        const bool write = i % 4 == 3;  // 750 GETs, 250 PATCHes
        points += write ? 2 : 1;
        asio::co_spawn(
            ioc,
            [&, write, i]() -> asio::awaitable<void> {
                dd::diagnostics diag;
                dd::error_code ec;
                if (write)
                {
                    dd::asset_update upd{.name = "load " + std::to_string(i)};
                    auto [e, a] = co_await dd::update_asset(client, asset_id, upd, diag, asio::as_tuple(asio::use_awaitable));
                    ec = e;
                }
                else
                {
                    auto [e, o] = co_await dd::get_order(client, order_id, diag, asio::as_tuple(asio::use_awaitable));
                    ec = e;
                }
                if (ec)
                {
                    ++failed;
                    std::fprintf(stderr, "request %d failed: %s (%s)\n", i, ec.message().c_str(), diag.to_string().c_str());
                }
                else
                    ++ok;
                t_last = std::chrono::steady_clock::now();
            },
            asio::detached
        );
    }
    dd_test::run(ioc);
    const double elapsed = std::chrono::duration<double>(t_last - t0).count();
    const double allowed = capacity + capacity / window_s * elapsed;
    const double utilisation = static_cast<double>(points) / allowed;
    std::printf(
        "scheduler load: %d requests (%ld points) in %.2f s; bucket allowed %.1f points; utilisation %.2f%%; "
        "429 responses: %d; responses: %d\n",
        n, points, elapsed, allowed, utilisation * 100.0, refused->load(), responses->load() - before
    );
    EXPECT_EQ(ok.load(), n);
    EXPECT_EQ(failed.load(), 0);
    EXPECT_EQ(refused->load(), 0);
    EXPECT_EQ(responses->load() - before, n);  // nothing resent
    EXPECT_GE(utilisation, 0.99);
}

}  // namespace
