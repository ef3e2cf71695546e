// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// A load on the client's rate limiter against a real server: `n` concurrent
// coroutines on one client, 3 GETs (1 point) for each PATCH (2 points), on one
// asset and one order the function creates or finds first. Shared by the
// integration test (which asserts the outcomes: no 429, every request served
// once) and benchmarks/scheduler/load_bench.cpp (which reports how much of the
// budget the run used).
#ifndef DIGITAL_DELIVERY_TESTS_COMMON_SCHEDULER_LOAD_HPP
#define DIGITAL_DELIVERY_TESTS_COMMON_SCHEDULER_LOAD_HPP

#include <digital_delivery.hpp>
#include <digital_delivery/beast_transport.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace dd_test {

struct scheduler_load_result
{
    int ok = 0;
    int failed = 0;
    int refused_429 = 0;    // 429 answers the transport saw
    int responses = 0;      // answers to the measured requests (resends included)
    long points = 0;        // points the measured requests cost
    long points_served = 0; // points of the requests that succeeded
    double seconds = 0;     // first request to last completion (wall time: reported, never asserted)
    std::chrono::steady_clock::time_point first{}, last{};  // the same two instants (benchmarks across processes)
    std::vector<std::chrono::steady_clock::time_point> completions;  // each measured request's end, in order
    bool setup_ok = false;  // the asset and the order to work on were there
};

namespace detail {

// Wraps the Beast transport and counts what the server answered.
struct counting_transport
{
    digital_delivery::beast_transport inner;
    std::shared_ptr<std::atomic<int>> responses = std::make_shared<std::atomic<int>>(0);
    std::shared_ptr<std::atomic<int>> refused = std::make_shared<std::atomic<int>>(0);

    boost::asio::any_io_executor get_executor() const { return inner.get_executor(); }
    void async_send(digital_delivery::http_request req, digital_delivery::transport_handler h)
    {
        inner.async_send(std::move(req),
                         digital_delivery::transport_handler(
                             [h = std::move(h), responses = responses, refused = refused](
                                 digital_delivery::error_code ec, digital_delivery::http_response r) mutable {
                                 if (!ec)
                                     ++*responses;
                                 if (!ec && r.status == 429)
                                     ++*refused;
                                 std::move(h)(ec, std::move(r));
                             }));
    }
};

}  // namespace detail

/// Runs the load; `run` drives the io_context to completion (a hang-guarded
/// runner in tests, plain ioc.run() in the benchmark). `limiter`: the client's
/// rate limiter on (sized capacity/window like the server's bucket) or off.
/// Between the setup (3 points) and the load, it waits 1.2 windows so that
/// both buckets, the server's and the client's estimate, are full when the
/// load starts: both refill on the wall clock (the sandbox's rate limiter does
/// not follow its store's clock), so the wait is certain to be long enough,
/// whatever the machine's load.
/// `store`: where the client's points are kept (shm_rate_limit_store,
/// redis_rate_limit_store: the same load in several processes shares one
/// budget; default: in-process). `prio`: the measured requests' priority.
template <class Runner>
scheduler_load_result run_scheduler_load(const std::string& base_url, const std::string& api_key, double capacity,
                                         double window_seconds, int n, bool limiter, Runner run,
                                         digital_delivery::rate_limit_store store = {},
                                         digital_delivery::priority prio = digital_delivery::priority::normal)
{
    namespace dd = digital_delivery;
    namespace asio = boost::asio;
    asio::io_context ioc;
    detail::counting_transport transport{dd::beast_transport(ioc.get_executor())};
    auto responses = transport.responses;
    auto refused = transport.refused;
    dd::client_params params{.base_url = base_url, .api_key = api_key};
    params.rate_limit.enabled = limiter;
    params.rate_limit.capacity = capacity;
    params.rate_limit.window = std::chrono::duration<double>(window_seconds);
    params.rate_limit.store = std::move(store);
    params.retry.enabled = false;  // a 429 must not hide behind a successful retry
    // A bulk job: every request starts at once and may wait for most of the
    // run (with the API's 60 s window, minutes), longer than the default
    // per-request deadline (docs/operations.md).
    params.operation_timeout = std::chrono::milliseconds(0);
    dd::client client(transport, std::move(params));

    scheduler_load_result out;
    std::string asset_id, order_id;
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            dd::new_asset licence{.type = dd::asset_type::licence, .name = "load"};
            dd::asset_with_upload created = co_await dd::async_create_asset(client, licence);
            asset_id = created.asset.id;
            dd::order_query first{.per_page = 1};
            dd::order_list orders = co_await dd::async_list_orders(client, first);
            order_id = orders.orders.at(0).id;
        },
        asio::detached);
    run(ioc);
    out.setup_ok = !asset_id.empty() && !order_id.empty();
    if (!out.setup_ok)
        return out;
    std::this_thread::sleep_for(std::chrono::duration<double>(window_seconds * 1.2));

    const int before = responses->load();
    const int refused_before = refused->load();
    std::atomic<int> ok{0}, failed{0};
    std::atomic<long> served{0};
    const auto t0 = std::chrono::steady_clock::now();
    auto t_last = t0;
    for (int i = 0; i < n; ++i)
    {
        const bool write = i % 4 == 3;
        out.points += write ? 2 : 1;
        asio::co_spawn(
            ioc,
            [&, write, i]() -> asio::awaitable<void> {
                dd::diagnostics diag;
                dd::error_code ec;
                const dd::request_options ro{.prio = prio};
                if (write)
                {
                    const std::string name = "load " + std::to_string(i);  // the model only views it
                    dd::asset_update upd{.name = name};
                    auto [e, a] = co_await dd::async_update_asset(client, asset_id, upd, ro, diag, asio::as_tuple(asio::use_awaitable));
                    ec = e;
                }
                else
                {
                    auto [e, o] = co_await dd::async_get_order(client, order_id, ro, diag, asio::as_tuple(asio::use_awaitable));
                    ec = e;
                }
                if (ec)
                {
                    ++failed;
                    std::fprintf(stderr, "request %d failed: %s (%s)\n", i, ec.message().c_str(), diag.to_string().c_str());
                }
                else
                {
                    ++ok;
                    served += write ? 2 : 1;
                }
                t_last = std::chrono::steady_clock::now();
                out.completions.push_back(t_last);
            },
            asio::detached);
    }
    run(ioc);
    out.ok = ok.load();
    out.points_served = served.load();
    out.failed = failed.load();
    out.refused_429 = refused->load() - refused_before;
    out.responses = responses->load() - before;
    out.seconds = std::chrono::duration<double>(t_last - t0).count();
    out.first = t0;
    out.last = t_last;
    return out;
}

}  // namespace dd_test

#endif
