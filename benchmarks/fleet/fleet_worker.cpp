//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// One worker process of the fleet benchmark (benchmarks/fleet/run.sh): a
// client on one io_context thread, `loops` coroutines that each send a
// request, pause `think_ms`, and again until `seconds` have passed (3 GETs of
// an order, 1 point each, for each PATCH of an asset, 2 points); then the
// requests still waiting are cancelled. The client's retry policy and
// deadline are the library's defaults. Every event is written to `out`, one
// line each, times in nanoseconds of the system clock (the same clock in
// every network namespace of the machine):
//
//   R <attempt start> <status, 0: no answer> <points> <answer> <X-RateLimit-Remaining, -1: none>
//                                                          (observer::on_response)
//   W <time> <waited> <1: refused, else 0>                 (observer::on_limiter_wait)
//   O <end> <ok|failed|cancelled> <duration> [message]     (observer::on_operation_end)
//   T <time> <throttle_event kind>                         (rate_limit_params::on_throttle)
//   S <start> <end>                                        (the period the loops ran)
//
// benchmarks/fleet/summarise.py turns the files of a run into its table.
//
//   fleet_worker setup URL                       prints "ASSET_ID ORDER_ID" (3 points)
//   fleet_worker run URL ASSET ORDER OUT [name=value...]
//     seconds=30 loops=1 think_ms=250 capacity=40 window=2 store=local|redis|sentinel
//     host=IP port=6379 tls=0|1 ca=FILE prefix=P sentinels=IP:PORT,... master=NAME
//     retry_ms=1000 timeout_ms=500
// The API key is read from DD_BENCH_API_KEY (never from the command line).
#include <digital_delivery.hpp>
#include <digital_delivery/beast_transport.hpp>
#include <digital_delivery/redis_rate_limit_store.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace dd = digital_delivery;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

long long now_ns()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

long long ns(std::chrono::steady_clock::duration d)
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
}

// Everything the client reports, kept in memory and written at the end (the
// client runs on one thread: no lock).
struct recorder final : dd::observer
{
    std::string lines;

    void add(const char* fmt, auto... args)
    {
        char buf[256];
        const int n = std::snprintf(buf, sizeof buf, fmt, args...);
        lines.append(buf, static_cast<std::size_t>(std::min<int>(n, sizeof buf - 1)));
    }
    void on_response(const dd::response_event& e) override
    {
        const auto t = now_ns();
        const auto rl = e.status ? e.rate_limit() : std::nullopt;
        const long long remaining = rl && rl->remaining ? *rl->remaining : -1;
        add("R %lld %u %d %lld %lld\n", t - ns(e.duration), e.status, e.request.method == dd::http_method::get ? 1 : 2, t,
            remaining);
    }
    void on_limiter_wait(const dd::limiter_wait_event& e) override
    {
        add("W %lld %lld %d\n", now_ns(), ns(e.waited), e.error ? 1 : 0);
    }
    void on_operation_end(const dd::operation_end_event& e) override
    {
        const char* what = !e.error ? "ok" : e.error == dd::condition::cancelled ? "cancelled" : "failed";
        std::string msg = e.error ? e.error.message() : std::string();
        for (auto& c : msg)
            if (c == '\n')
                c = ' ';
        add("O %lld %s %lld %s\n", now_ns(), what, ns(e.duration), msg.substr(0, 160).c_str());
    }
    void throttle(const dd::throttle_event& e)
    {
        static const char* const names[] = {"paused", "resumed", "store_unavailable", "store_restored",
                                            "store_misconfigured"};
        add("T %lld %s\n", now_ns(), names[static_cast<int>(e.what)]);
    }
};

using options = std::map<std::string, std::string>;

std::string opt(const options& o, const std::string& k, const std::string& def)
{
    const auto it = o.find(k);
    return it == o.end() ? def : it->second;
}

dd::rate_limit_store make_store(const options& o)
{
    const auto kind = opt(o, "store", "local");
    if (kind == "local")
        return {};
    dd::redis_store_params p;
    p.host = opt(o, "host", "127.0.0.1");
    p.port = static_cast<std::uint16_t>(std::stoi(opt(o, "port", "6379")));
    p.key_prefix = opt(o, "prefix", "dd-fleet:");
    p.command_timeout = std::chrono::milliseconds(std::stoi(opt(o, "timeout_ms", "500")));
    if (opt(o, "tls", "0") == "1")
        p.tls = {.enabled = true, .ca_file = opt(o, "ca", "")};
    if (kind == "sentinel")
    {
        p.sentinel.master_name = opt(o, "master", "fleet");
        p.sentinel.tls = p.tls;
        const auto list = opt(o, "sentinels", "");
        for (std::size_t at = 0; at < list.size();)
        {
            auto end = list.find(',', at);
            if (end == std::string::npos)
                end = list.size();
            const auto item = list.substr(at, end - at);
            const auto colon = item.rfind(':');
            p.sentinel.sentinels.push_back(
                {item.substr(0, colon), static_cast<std::uint16_t>(std::stoi(item.substr(colon + 1)))});
            at = end + 1;
        }
    }
    return dd::redis_rate_limit_store(std::move(p));
}

int setup(const std::string& url, const std::string& key)
{
    asio::io_context ioc;
    dd::client c(dd::beast_transport(ioc.get_executor()), {.base_url = url, .api_key = key});
    std::string asset, order, problem;
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            dd::diagnostics diag;
            auto [e1, created] = co_await dd::async_create_asset(c, {.type = dd::asset_type::licence, .name = "fleet"}, diag,
                                                                 asio::as_tuple(asio::use_awaitable));
            if (e1)
            {
                problem = e1.message() + ": " + diag.to_string();
                co_return;
            }
            auto [e2, list] = co_await dd::async_list_orders(c, dd::order_query{.per_page = 1}, diag,
                                                             asio::as_tuple(asio::use_awaitable));
            if (e2 || list.orders.empty())
            {
                problem = e2 ? e2.message() + ": " + diag.to_string() : "no order in the store";
                co_return;
            }
            asset = created.asset.id;
            order = list.orders.front().id;
        },
        asio::detached);
    ioc.run();
    if (!problem.empty())
    {
        std::fprintf(stderr, "fleet_worker setup: %s\n", problem.c_str());
        return 1;
    }
    std::printf("%s %s\n", asset.c_str(), order.c_str());
    return 0;
}

int run(const std::string& url, const std::string& key, const std::string& asset, const std::string& order,
        const std::string& out, const options& o)
{
    const double seconds = std::stod(opt(o, "seconds", "30"));
    const int loops = std::stoi(opt(o, "loops", "1"));
    const auto think = std::chrono::milliseconds(std::stoi(opt(o, "think_ms", "250")));

    asio::io_context ioc(1);
    auto rec = std::make_shared<recorder>();
    dd::client_params params{.base_url = url, .api_key = key, .observer = rec};
    params.rate_limit.capacity = std::stod(opt(o, "capacity", "40"));
    params.rate_limit.window = std::chrono::duration<double>(std::stod(opt(o, "window", "2")));
    params.rate_limit.store_retry_interval = std::chrono::milliseconds(std::stoi(opt(o, "retry_ms", "1000")));
    params.rate_limit.store = make_store(o);
    params.rate_limit.on_throttle = [rec](const dd::throttle_event& e) { rec->throttle(e); };
    dd::client c(dd::beast_transport(ioc.get_executor()), std::move(params));

    const auto span = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(seconds));
    const auto end = std::chrono::steady_clock::now() + span;
    rec->add("S %lld %lld\n", now_ns(), now_ns() + static_cast<long long>(span.count()));
    std::vector<asio::cancellation_signal> stop(static_cast<std::size_t>(loops));
    int running = loops;
    for (int l = 0; l < loops; ++l)
        asio::co_spawn(
            ioc,
            [&, l]() -> asio::awaitable<void> {
                asio::steady_timer pause(ioc);
                for (int i = l; std::chrono::steady_clock::now() < end; ++i)
                {
                    dd::error_code ec;
                    if (i % 4 == 3)
                    {
                        const std::string name = "fleet " + std::to_string(i);
                        dd::asset_update upd{.name = name};
                        std::tie(ec, std::ignore) =
                            co_await dd::async_update_asset(c, asset, upd, asio::as_tuple(asio::use_awaitable));
                    }
                    else
                        std::tie(ec, std::ignore) = co_await dd::async_get_order(c, order, asio::as_tuple(asio::use_awaitable));
                    if (ec == dd::condition::cancelled)
                        break;
                    pause.expires_after(think);
                    auto [pe] = co_await pause.async_wait(asio::as_tuple(asio::use_awaitable));
                    if (pe)
                        break;
                }
                if (--running == 0)
                    ioc.stop();
            },
            asio::bind_cancellation_slot(stop[static_cast<std::size_t>(l)].slot(), asio::detached));
    // At the end, the requests still waiting for points (or on the wire) are cancelled.
    asio::steady_timer deadline(ioc);
    deadline.expires_at(end);
    deadline.async_wait([&](dd::error_code) {
        for (auto& s : stop)
            s.emit(asio::cancellation_type::terminal);
    });
    ioc.run();

    std::FILE* f = std::fopen(out.c_str(), "w");
    if (!f)
    {
        std::fprintf(stderr, "fleet_worker: cannot write %s\n", out.c_str());
        return 1;
    }
    std::fwrite(rec->lines.data(), 1, rec->lines.size(), f);
    std::fclose(f);
    return 0;
}

}  // namespace

int main(int argc, char** argv)
{
    const char* key = std::getenv("DD_BENCH_API_KEY");
    const std::string mode = argc > 1 ? argv[1] : "";
    if (!key || (mode == "setup" ? argc != 3 : (mode != "run" || argc < 6)))
    {
        std::fprintf(stderr,
                     "usage: DD_BENCH_API_KEY=KEY fleet_worker setup URL\n"
                     "       DD_BENCH_API_KEY=KEY fleet_worker run URL ASSET ORDER OUT [name=value...]\n");
        return 2;
    }
    if (mode == "setup")
        return setup(argv[2], key);
    options o;
    for (int i = 6; i < argc; ++i)
    {
        const std::string a = argv[i];
        const auto eq = a.find('=');
        if (eq == std::string::npos)
        {
            std::fprintf(stderr, "fleet_worker: expected name=value, got %s\n", a.c_str());
            return 2;
        }
        o[a.substr(0, eq)] = a.substr(eq + 1);
    }
    try
    {
        return run(argv[2], key, argv[3], argv[4], argv[5], o);
    }
    catch (const std::exception& e)
    {
        std::fprintf(stderr, "fleet_worker: %s\n", e.what());
        return 1;
    }
}
