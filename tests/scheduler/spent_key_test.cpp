//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// A process starting on an API key another process has just spent: the
// client's bucket believes it is full, the server's is empty. Through the
// whole client on the virtual clock: a modelled server (its token bucket,
// its X-RateLimit-* headers, 429 with Retry-After, a round trip of latency),
// on one thread and on four; then the bounds that end a request the rate
// limit keeps refusing (the deadline, retry_params::max_rate_limited_wait),
// and probes that end without an answer, with testing::fake_transport.

#include "fixtures.hpp"

#include <digital_delivery/detail/clock.hpp>
#include <digital_delivery/testing/virtual_clock.hpp>

#include <boost/asio/append.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include <atomic>
#include <cmath>
#include <mutex>
#include <thread>
#include <vector>

namespace spent_key_tests {

namespace dd = digital_delivery;
namespace asio = boost::asio;
using namespace std::chrono_literals;
using clk = dd::detail::clock;

// The API as the sandbox models it: a token bucket of `capacity` points
// refilled over `window`, decided when a request arrives; a 429 says
// Retry-After = the whole seconds until the points are there. Every answer
// carries X-RateLimit-*, and comes back `latency` after the request.
class bucket_server
{
public:
    bucket_server(asio::any_io_executor ex, double capacity, std::chrono::duration<double> window, double tokens,
                  std::chrono::milliseconds latency)
        : ex_(std::move(ex)), capacity_(capacity), rate_(capacity / window.count()), tokens_(tokens),
          last_(clk::now()), latency_(latency)
    {
    }

    asio::any_io_executor get_executor() const { return ex_; }

    void async_send(dd::http_request req, dd::transport_handler h)
    {
        dd::http_response r;
        {
            std::lock_guard<std::mutex> lk(mtx_);
            const auto now = clk::now();
            tokens_ = std::min(capacity_, tokens_ + std::chrono::duration<double>(now - last_).count() * rate_);
            last_ = now;
            const double cost = req.method == dd::http_method::get ? 1 : 2;
            ++sent_;
            if (tokens_ + 1e-9 >= cost)
            {
                tokens_ -= cost;
                if (req.method == dd::http_method::get)
                    r.status = 200, r.body = R"({"order":)" + fixtures::order_json() + "}";
                else
                    r.status = 201, r.body = R"({"asset":)" + fixtures::asset_json(true, "licence") + "}";
            }
            else
            {
                r.status = 429;
                r.body = R"({"error":"Rate limit exceeded"})";
                const auto wait = static_cast<long>(std::ceil((cost - tokens_) / rate_ - 1e-9));
                r.headers.add("Retry-After", std::to_string(std::max(1L, wait)));
            }
            r.headers.add("Content-Type", "application/json");
            r.headers.add("X-RateLimit-Limit", std::to_string(static_cast<long>(capacity_)));
            r.headers.add("X-RateLimit-Remaining", std::to_string(static_cast<long>(std::floor(tokens_ + 1e-9))));
            const auto reset = dd::detail::clock::system_now() +
                               std::chrono::duration_cast<std::chrono::system_clock::duration>(
                                   std::chrono::duration<double>((capacity_ - tokens_) / rate_));
            r.headers.add("X-RateLimit-Reset",
                          std::to_string(std::chrono::duration_cast<std::chrono::seconds>(reset.time_since_epoch()).count()));
        }
        auto timer = std::make_shared<dd::detail::timer>(ex_);
        timer->expires_after(latency_);
        timer->async_wait([this, timer, h = std::move(h), r = std::move(r)](dd::error_code) mutable {
            {
                std::lock_guard<std::mutex> lk(mtx_);
                if (r.status == 429 && refused_++ == 0)
                    in_flight_at_first_429_ = sent_ - answered_;
                ++answered_;
            }
            // Through the handler's associated executor (a strand), never inline.
            asio::post(ex_, asio::append(std::move(h), dd::error_code(), std::move(r)));
        });
    }

    int sent() const
    {
        std::lock_guard<std::mutex> lk(mtx_);
        return sent_;
    }
    int refused() const
    {
        std::lock_guard<std::mutex> lk(mtx_);
        return refused_;
    }
    int in_flight_at_first_429() const
    {
        std::lock_guard<std::mutex> lk(mtx_);
        return in_flight_at_first_429_;
    }

private:
    asio::any_io_executor ex_;
    mutable std::mutex mtx_;
    double capacity_, rate_, tokens_;
    clk::time_point last_;
    std::chrono::milliseconds latency_;
    int sent_ = 0, answered_ = 0, refused_ = 0, in_flight_at_first_429_ = 0;
};

std::string key_of_test(std::string_view suffix = {})
{
    return std::string("key-") + ::testing::UnitTest::GetInstance()->current_test_info()->name() + std::string(suffix);
}

// The issue's workload, 200 operations started at once: two GETs of an
// order, then a create of a licence asset (a POST of 2 points, which a 429
// must not stop from being resent), each on its own strand of `ex`.
struct workload
{
    std::atomic<int> done{0}, failed{0};
    std::mutex mtx;
    std::vector<std::string> failures;

    void start(dd::client& c, asio::io_context& ioc, int n)
    {
        for (int i = 0; i < n; ++i)
        {
            auto strand = asio::make_strand(ioc);
            auto record = [this](dd::error_code ec, const dd::diagnostics& d) {
                if (ec)
                {
                    ++failed;
                    std::lock_guard<std::mutex> lk(mtx);
                    failures.push_back(ec.message() + ": " + d.to_string());
                }
                ++done;
            };
            asio::post(strand, [&c, i, strand, record] {
                auto diag = std::make_shared<dd::diagnostics>();
                if (i % 3 == 2)
                    dd::async_create_asset(c, {.type = dd::asset_type::licence}, *diag,
                                           asio::bind_executor(strand, [diag, record](dd::error_code ec, auto&&) {
                                               record(ec, *diag);
                                           }));
                else
                    dd::async_get_order(c, "o1", *diag,
                                        asio::bind_executor(strand, [diag, record](dd::error_code ec, dd::order) {
                                            record(ec, *diag);
                                        }));
            });
        }
    }
};

constexpr int operations = 200;

dd::client_params spent_key_params(std::string key)
{
    // The bucket of the issue: 40 points per 2 s on both sides.
    return {.base_url = fixtures::base_url,
            .api_key = std::move(key),
            .rate_limit = {.capacity = 40, .window = std::chrono::seconds(2)}};
}

}  // namespace spent_key_tests

using namespace spent_key_tests;

// Someone else spent the key: the server's bucket is empty, ours full. No
// caller fails, and the only 429s are those of requests already in flight
// when the first one came back (here: the first request, sent alone).
TEST(spent_key, two_hundred_operations_on_a_spent_key_all_succeed)
{
    asio::io_context ioc;
    dd::testing::virtual_clock vc;
    auto server = std::make_shared<bucket_server>(ioc.get_executor(), 40, 2s, 0.0, 50ms);
    dd::client c(server, spent_key_params(key_of_test()));
    workload w;
    w.start(c, ioc, operations);
    const bool finished = vc.run_until(ioc, [&] { return w.done == operations; }, 10min, 10ms);
    ASSERT_TRUE(finished) << w.done << " of " << operations << " done after 10 min of virtual time";
    EXPECT_EQ(w.failed, 0) << (w.failures.empty() ? std::string() : w.failures.front());
    EXPECT_GE(server->refused(), 1) << "the key was not spent: the test tests nothing";
    EXPECT_LE(server->refused(), server->in_flight_at_first_429())
        << server->refused() << " 429s, " << server->in_flight_at_first_429() << " in flight at the first";
}

// The same on an io_context run by four threads, each operation on a strand
// of its own (virtual time moved by this thread meanwhile).
TEST(spent_key, two_hundred_operations_on_a_spent_key_from_four_threads)
{
    asio::io_context ioc;
    dd::testing::virtual_clock vc;
    auto server = std::make_shared<bucket_server>(ioc.get_executor(), 40, 2s, 0.0, 50ms);
    dd::client c(server, spent_key_params(key_of_test()));
    auto guard = asio::make_work_guard(ioc);
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&] { ioc.run(); });
    workload w;
    w.start(c, ioc, operations);
    // Virtual time moves in 10 ms steps; the threads run what each makes due
    // (the library's timers notice a step within a millisecond of real time).
    for (int step = 0; step < 60'000 && w.done < operations; ++step)
    {
        vc.advance(10ms);
        std::this_thread::sleep_for(2ms);
    }
    guard.reset();
    ioc.stop();
    for (auto& t : threads)
        t.join();
    ASSERT_EQ(w.done, operations) << "not done after 10 min of virtual time";
    EXPECT_EQ(w.failed, 0) << (w.failures.empty() ? std::string() : w.failures.front());
    EXPECT_GE(server->refused(), 1) << "the key was not spent: the test tests nothing";
    EXPECT_LE(server->refused(), server->in_flight_at_first_429())
        << server->refused() << " 429s, " << server->in_flight_at_first_429() << " in flight at the first";
}

namespace spent_key_tests {

// A server that refuses everything with Retry-After: 60 for `n` requests.
void refuse_all(dd::testing::fake_transport& fake, int n)
{
    for (int i = 0; i < n; ++i)
        fake.expect_any().respond(429, R"({"error":"Rate limit exceeded"})").header("Retry-After", "60");
}

}  // namespace spent_key_tests

// With a deadline, a 429 ends a request only when the deadline cannot be met:
// with its error, the server's words and how long it waited.
TEST(spent_key, the_deadline_ends_a_request_the_rate_limit_keeps_refusing)
{
    asio::io_context ioc;
    auto fake = std::make_shared<dd::testing::fake_transport>(ioc.get_executor());
    dd::client c(fake, {.base_url = fixtures::base_url, .api_key = key_of_test(), .operation_timeout = 150s});
    refuse_all(*fake, 10);
    dd::testing::virtual_clock vc;
    dd::diagnostics diag;
    std::optional<dd::error_code> result;
    dd::async_get_order(c, "o1", diag, [&](dd::error_code ec, dd::order) { result = ec; });
    vc.run_for(ioc, 119s, 1s);
    EXPECT_FALSE(result) << "ended before the deadline could not be met: " << result->message();
    // Sent at 0, 60 and 120 s; a fourth sending (180 s) would pass the deadline.
    vc.run_for(ioc, 2s, 100ms);
    ASSERT_TRUE(result) << "still waiting";
    EXPECT_EQ(*result, dd::client_errc::rate_limit_wait_exceeds_deadline) << result->message();
    EXPECT_EQ(*result, dd::condition::rate_limited);
    EXPECT_EQ(fake->requests().size(), 3u);
    EXPECT_EQ(diag.http_status, 429u);
    EXPECT_EQ(diag.server_message, "Rate limit exceeded");
    EXPECT_EQ(diag.retry_after, 60s);
    EXPECT_EQ(diag.attempts, 3u);
    EXPECT_NE(diag.client_message.find("refused with 429 3 times, waited 120000 ms"), std::string::npos) << diag.client_message;
    EXPECT_NE(diag.client_message.find("deadline"), std::string::npos) << diag.client_message;
}

// Without a deadline (operation_timeout = 0), a 429 is waited out for
// max_rate_limited_wait (default 10 min) in all, then ends the request with
// its own error. Neither attempts (4) nor the retry budget stop it before.
TEST(spent_key, max_rate_limited_wait_ends_a_request_without_a_deadline)
{
    asio::io_context ioc;
    auto fake = std::make_shared<dd::testing::fake_transport>(ioc.get_executor());
    dd::client c(fake, {.base_url = fixtures::base_url, .api_key = key_of_test(), .operation_timeout = 0ms,
                        .retry = {.budget_capacity = 1}});
    refuse_all(*fake, 12);
    dd::testing::virtual_clock vc;
    dd::diagnostics diag;
    std::optional<dd::error_code> result;
    dd::async_create_asset(c, {.type = dd::asset_type::licence}, diag, [&](dd::error_code ec, auto&&) { result = ec; });
    vc.run_for(ioc, 599s, 1s);
    EXPECT_FALSE(result) << "ended before max_rate_limited_wait: " << result->message() << " " << diag.to_string();
    EXPECT_EQ(fake->requests().size(), 10u) << "a POST refused with 429 is resent every Retry-After";
    vc.run_for(ioc, 2s, 100ms);
    ASSERT_TRUE(result) << "still waiting after max_rate_limited_wait";
    EXPECT_EQ(*result, dd::client_errc::rate_limited_too_long) << result->message();
    EXPECT_EQ(*result, dd::condition::rate_limited);
    EXPECT_TRUE(dd::is_request_not_sent(*result));
    EXPECT_EQ(fake->requests().size(), 11u);
    EXPECT_EQ(diag.http_status, 429u);
    EXPECT_EQ(diag.server_message, "Rate limit exceeded");
    EXPECT_EQ(diag.retry_after, 60s);
    EXPECT_NE(diag.client_message.find("refused with 429 11 times, waited 600000 ms"), std::string::npos) << diag.client_message;
    EXPECT_NE(diag.client_message.find("max_rate_limited_wait is 600000 ms"), std::string::npos) << diag.client_message;
}

// Never a hang behind a probe: the first request of a new bucket goes alone;
// when it ends without an answer (its timeout here; a cancellation below),
// the next waiter goes, and an answer (with or without X-RateLimit-*
// figures) releases the others.
TEST(spent_key, a_probe_that_times_out_lets_the_next_request_go)
{
    asio::io_context ioc;
    auto fake = std::make_shared<dd::testing::fake_transport>(ioc.get_executor());
    dd::client c(fake, {.base_url = fixtures::base_url, .api_key = key_of_test(), .request_timeout = 1s});
    fake->expect_any().hang();
    for (int i = 0; i < 3; ++i)  // the two waiters, the probe's retry
        fake->expect_any().respond(200, R"({"order":)" + fixtures::order_json() + "}");
    dd::testing::virtual_clock vc;
    int ok = 0;
    for (int i = 0; i < 3; ++i)
        dd::async_get_order(c, "o1", [&](dd::error_code ec, dd::order) { ok += !ec; });
    vc.run_for(ioc, 999ms, 10ms);
    EXPECT_EQ(fake->requests().size(), 1u) << "more than the probe sent before its answer";
    vc.run_for(ioc, 10ms, 1ms);
    // The next waiter went when the probe timed out (and, answered at once,
    // released the last one).
    EXPECT_GE(fake->requests().size(), 2u) << "the next waiter did not go when the probe timed out";
    vc.run_for(ioc, 2s, 10ms);
    EXPECT_EQ(ok, 3);
    EXPECT_TRUE(fake->done());
}

TEST(spent_key, a_cancelled_probe_lets_the_next_request_go)
{
    asio::io_context ioc;
    auto fake = std::make_shared<dd::testing::fake_transport>(ioc.get_executor());
    dd::client c(fake, {.base_url = fixtures::base_url, .api_key = key_of_test()});
    fake->expect_any().hang();
    for (int i = 0; i < 2; ++i)
        fake->expect_any().respond(200, R"({"order":)" + fixtures::order_json() + "}");
    dd::testing::virtual_clock vc;
    asio::cancellation_signal sig;
    std::optional<dd::error_code> first;
    int ok = 0;
    dd::async_get_order(c, "o1", asio::bind_cancellation_slot(sig.slot(), [&](dd::error_code ec, dd::order) { first = ec; }));
    for (int i = 0; i < 2; ++i)
        dd::async_get_order(c, "o1", [&](dd::error_code ec, dd::order) { ok += !ec; });
    vc.run_for(ioc, 100ms, 10ms);
    EXPECT_EQ(fake->requests().size(), 1u);
    sig.emit(asio::cancellation_type::terminal);
    vc.run_for(ioc, 100ms, 10ms);
    ASSERT_TRUE(first);
    EXPECT_EQ(*first, asio::error::operation_aborted);
    EXPECT_EQ(ok, 2) << "the waiters behind a cancelled probe";
    EXPECT_TRUE(fake->done());
}
