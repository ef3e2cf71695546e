//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// A process that starts on a key another process has just spent. One client
// on an io_context run by 4 threads starts 240 operations at once, each on a
// strand of its own (list pages, gets of an order, create + delete of a
// licence asset; a third cancelled after a delay, with the signal and its
// timer on the operation's strand), against a sandbox store of 40 points per
// 2 s (rate_limit.window set to 2 s to match). The same program runs twice
// back to back on the same key: the first run starts on a fresh key, the
// second on the key the first one spent. Counted per run: the 429 answers
// (an observer), the operations that failed (cancellations excepted) and
// those cancelled.
//
//   spent_key_bench [operations=240] [threads=4]
//
// Results: docs/performance.md ("Starting on a key in use").
#include "sandbox_process.hpp"

#include <digital_delivery.hpp>
#include <digital_delivery/beast_transport.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace dd = digital_delivery;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

struct count_429 final : dd::observer
{
    std::atomic<int> refused{0};
    void on_response(const dd::response_event& e) override { refused += e.status == 429; }
};

struct run_result
{
    int ok = 0, failed = 0, cancelled = 0, refused = 0;
    double seconds = 0;
    std::string first_failure;
};

// One operation on its strand; `done(ec)` on that strand.
template <class Done>
void start_op(dd::client& c, const asio::strand<asio::io_context::executor_type>& strand, int i,
              const std::string& order_id, asio::cancellation_slot slot, Done done)
{
    auto diag = std::make_shared<dd::diagnostics>();
    auto finish = [diag, done](dd::error_code ec) { done(ec, *diag); };
    switch (i % 3)
    {
    case 0:
        dd::async_list_orders(c, dd::order_query{.page = 1 + i % 2, .per_page = 5}, *diag,
                              asio::bind_cancellation_slot(slot, asio::bind_executor(strand, [finish](dd::error_code ec, auto&&) {
                                  finish(ec);
                              })));
        return;
    case 1:
        dd::async_get_order(c, order_id, *diag,
                            asio::bind_cancellation_slot(slot, asio::bind_executor(strand, [finish](dd::error_code ec, auto&&) {
                                finish(ec);
                            })));
        return;
    default:
        dd::async_create_asset(
            c, {.type = dd::asset_type::licence, .name = "bench"}, *diag,
            asio::bind_cancellation_slot(slot, asio::bind_executor(strand, [&c, strand, slot, diag, finish](dd::error_code ec, auto&& created) {
                if (ec)
                    return finish(ec);
                dd::async_delete_asset(c, created.asset.id, *diag,
                                       asio::bind_cancellation_slot(slot, asio::bind_executor(strand, [finish](dd::error_code ec2) {
                                           finish(ec2);
                                       })));
            })));
        return;
    }
}

run_result run(const std::string& base_url, const std::string& key, const std::string& order_id, int n, int threads)
{
    asio::io_context ioc;
    auto obs = std::make_shared<count_429>();
    dd::client c(dd::beast_transport(ioc.get_executor()),
                 {.base_url = base_url, .api_key = key, .rate_limit = {.capacity = 40, .window = 2s}, .observer = obs});
    std::atomic<int> ok{0}, failed{0}, cancelled{0};
    std::mutex mtx;
    std::string first_failure;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i)
    {
        auto strand = asio::make_strand(ioc);
        asio::post(strand, [&, strand, i] {
            // The signal and the timer that fires it live on the operation's strand.
            auto sig = std::make_shared<asio::cancellation_signal>();
            auto timer = std::make_shared<asio::steady_timer>(strand);
            const bool cancel = (i / 3) % 3 == i % 3;  // a third of the operations, of every kind
            auto done = [&, sig, timer](dd::error_code ec, const dd::diagnostics& d) {
                timer->cancel();
                if (!ec)
                    ++ok;
                else if (ec == dd::condition::cancelled)
                    ++cancelled;
                else
                {
                    ++failed;
                    std::lock_guard<std::mutex> lk(mtx);
                    if (first_failure.empty())
                        first_failure = ec.message() + ": " + d.to_string();
                }
            };
            start_op(c, strand, i, order_id, sig->slot(), done);
            if (cancel)
            {
                timer->expires_after(std::chrono::milliseconds(200 + 37 * (i % 50)));
                timer->async_wait([sig](dd::error_code ec) {
                    if (!ec)
                        sig->emit(asio::cancellation_type::terminal);
                });
            }
        });
    }
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&] { ioc.run(); });
    for (auto& t : pool)
        t.join();
    run_result r;
    r.ok = ok;
    r.failed = failed;
    r.cancelled = cancelled;
    r.refused = obs->refused;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.first_failure = first_failure;
    return r;
}

}  // namespace

int main(int argc, char** argv)
{
    const int n = argc > 1 ? std::atoi(argv[1]) : 240;
    const int threads = argc > 2 ? std::atoi(argv[2]) : 4;
    auto& sandbox = dd_test::sandbox_process::shared();
    const auto store = sandbox.create_store(
        {"--rate-limit-points", "40", "--rate-limit-window-seconds", "2", "--seed-orders", "20"});
    // An order id to get (its point is spent before the first run).
    std::string order_id;
    {
        asio::io_context ioc;
        dd::client c(dd::beast_transport(ioc.get_executor()), {.base_url = store.base_url, .api_key = store.api_key});
        dd::async_list_orders(c, dd::order_query{.per_page = 1}, [&](dd::error_code ec, dd::order_list l) {
            if (!ec && !l.orders.empty())
                order_id = l.orders.front().id;
        });
        ioc.run();
    }
    if (order_id.empty())
    {
        std::fprintf(stderr, "setup failed: no order in the sandbox store\n");
        return 1;
    }
    std::printf("| run | operations | ok | failed | cancelled | 429 answers | seconds |\n|---|---|---|---|---|---|---|\n");
    for (int k = 1; k <= 2; ++k)
    {
        const auto r = run(store.base_url, store.api_key, order_id, n, threads);
        std::printf("| %s | %d | %d | %d | %d | %d | %.1f |\n", k == 1 ? "1 (fresh key)" : "2 (right after)", n, r.ok,
                    r.failed, r.cancelled, r.refused, r.seconds);
        if (!r.first_failure.empty())
            std::fprintf(stderr, "run %d, first failure: %s\n", k, r.first_failure.c_str());
        std::fflush(stdout);
    }
    return 0;
}
