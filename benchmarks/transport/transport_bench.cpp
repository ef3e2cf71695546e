//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// Transport benchmark (not a test): GETs against a local nginx serving static
// files, with
//   ours  - digital_delivery::beast_transport (the full transport path:
//           URL validation, pool, watchdog timer, http_response conversion)
//   beast - a hand-written Beast coroutine client (one connection per
//           coroutine, reserved 64 KiB flat_buffer, request built once)
//   curl  - a libcurl easy handle with keep-alive (one connection only)
//   api   - the public API: dd::async_get_order (PATH /order) or dd::async_list_orders
//           with per_page=250 (PATH /page) through a dd::client over
//           beast_transport, rate limiter disabled, decoding into the models
//   api_await - dd::async_get_order co_awaited with the default token, the
//           rate limiter on (never waiting): the public API as users call it
//   api_await_nolimit - the same with the rate limiter off
//   api_metrics - the same with a dd::metrics_observer installed
//   api_log - the same with a dd::json_logger at info level writing to /dev/null
//   api_traced - the api mode with a dd::otlp_exporter as the client's tracer
//           (its own thread), writing every span as OTLP JSON to /dev/null
//   api_traced_otlp - the same, the spans POSTed to nginx's /v1/traces (a
//           collector answering 200) through the exporter's own beast_transport
//   beast_decode - the hand-written Beast client, then the body decoded into
//           dd::order by the library's decoder (no pool, no type erasure, no
//           status mapping): the floor of a small GET with Beast + Boost.JSON
//   beast_parse  - the hand-written Beast client, then boost::json::parse of
//           the body (a DOM, no model)
//
// usage: transport_bench MODE PORT PATH REQUESTS [IN_FLIGHT CONNECTIONS]
// Prints "requests seconds requests_per_second". Run by run.sh.

#include <digital_delivery/beast_transport.hpp>
#include <digital_delivery/client.hpp>
#include <digital_delivery/otlp_exporter.hpp>
#include <digital_delivery/endpoints.hpp>
#include <digital_delivery/json_logger.hpp>
#include <digital_delivery/metrics.hpp>
#include <digital_delivery/impl/engine/endpoint_call.hpp>  // detail::decode_response

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json/parse.hpp>

#include <curl/curl.h>

#include <fstream>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace dd = digital_delivery;

namespace {

std::size_t g_bytes = 0;
int g_failed = 0;

void run_ours(unsigned short port, const std::string& path, long n, long in_flight, long conns)
{
    asio::io_context ioc(1);
    dd::beast_transport_params p;
    p.max_connections_per_host = static_cast<std::size_t>(conns);
    dd::beast_transport t(ioc.get_executor(), p);
    const std::string url = "http://127.0.0.1:" + std::to_string(port) + path;
    long started = 0;
    struct starter
    {
        dd::beast_transport& t;
        const std::string& url;
        long& started;
        long n;
        void operator()()
        {
            if (started >= n)
                return;
            ++started;
            dd::http_request req;
            req.url = url;
            req.idempotent = true;
            t.async_send(std::move(req), [this](dd::error_code ec, dd::http_response r) {
                if (ec || r.status != 200)
                    ++g_failed;
                g_bytes += r.body.size();
                (*this)();
            });
        }
    } s{t, url, started, n};
    for (long i = 0; i < in_flight; ++i)
        s();
    ioc.run();
}

// The client of the api modes: over a beast_transport with `conns`
// connections to the local nginx.
dd::client make_api_client(asio::io_context& ioc, unsigned short port, long conns, dd::rate_limit_params rl,
                           std::shared_ptr<dd::observer> obs = {}, std::shared_ptr<dd::tracer> tracer = {})
{
    dd::beast_transport_params p;
    p.max_connections_per_host = static_cast<std::size_t>(conns);
    return dd::client(dd::beast_transport(ioc.get_executor(), p),
                      {.base_url = "http://127.0.0.1:" + std::to_string(port) + "/api",
                       .api_key = "bench-key",
                       .rate_limit = rl,
                       .observer = std::move(obs),
                       .tracer = std::move(tracer)});
}

void run_api(unsigned short port, const std::string& path, long n, long in_flight, long conns, std::shared_ptr<dd::observer> obs = {},
             std::shared_ptr<dd::tracer> tracer = {})
{
    asio::io_context ioc(1);
    dd::client c = make_api_client(ioc, port, conns, {.enabled = false}, std::move(obs), std::move(tracer));
    const bool page = path == "/page";
    long started = 0;
    struct starter
    {
        dd::client& c;
        bool page;
        long& started;
        long n;
        void operator()()
        {
            if (started >= n)
                return;
            ++started;
            if (page)
                dd::async_list_orders(c, {.per_page = 250}, [this](dd::error_code ec, dd::order_list l) {
                    if (ec || l.orders.size() != 250)
                        ++g_failed;
                    g_bytes += l.orders.size();
                    (*this)();
                });
            else
                dd::async_get_order(c, "1001", [this](dd::error_code ec, dd::order o) {
                    if (ec || o.id != "1001")
                        ++g_failed;
                    g_bytes += o.email.size();
                    (*this)();
                });
        }
    } s{c, page, started, n};
    for (long i = 0; i < in_flight; ++i)
        s();
    ioc.run();
}

// As users call it: co_await with the default token (an awaitable that
// throws on failure), the rate limiter on (a bucket so large that it never
// waits, so only its bookkeeping is measured), in_flight coroutines.
asio::awaitable<void> api_await_worker(dd::client& c, long n)
{
    for (long i = 0; i < n; ++i)
    {
        dd::order o = co_await dd::async_get_order(c, "1001");
        if (o.id != "1001")
            ++g_failed;
        g_bytes += o.email.size();
    }
}

void run_api_await(unsigned short port, long n, long in_flight, long conns, bool limiter)
{
    asio::io_context ioc(1);
    dd::client c = make_api_client(ioc, port, conns, {.enabled = limiter, .capacity = 1e12, .window = std::chrono::seconds(1)});
    for (long i = 0; i < in_flight; ++i)
        asio::co_spawn(ioc, api_await_worker(c, n / in_flight), [](std::exception_ptr e) {
            if (e)
                ++g_failed;
        });
    ioc.run();
}

enum class after_read
{
    nothing,
    decode,
    parse,
};

asio::awaitable<void> beast_worker(unsigned short port, std::string path, long n, after_read what)
{
    auto ex = co_await asio::this_coro::executor;
    asio::ip::tcp::socket sock(ex);
    co_await sock.async_connect({asio::ip::make_address("127.0.0.1"), port}, asio::use_awaitable);
    sock.set_option(asio::ip::tcp::no_delay(true));
    beast::flat_buffer buf;
    buf.reserve(64 * 1024);
    http::request<http::empty_body> req{http::verb::get, path, 11};
    req.set(http::field::host, "127.0.0.1:" + std::to_string(port));
    req.set(http::field::user_agent, "bench");
    for (long i = 0; i < n; ++i)
    {
        co_await http::async_write(sock, req, asio::use_awaitable);
        http::response_parser<http::string_body> p;
        p.body_limit(16 * 1024 * 1024);
        co_await http::async_read(sock, buf, p, asio::use_awaitable);
        if (p.get().result_int() != 200)
            ++g_failed;
        g_bytes += p.get().body().size();
        if (what == after_read::decode)
        {
            dd::order o;
            if (dd::detail::decode_response<dd::endpoints::get_order>(p.get().body(), o, nullptr) || o.id != "1001")
                ++g_failed;
            g_bytes += o.email.size();
        }
        else if (what == after_read::parse)
        {
            boost::system::error_code ec;
            auto v = boost::json::parse(p.get().body(), ec);
            if (ec || !v.is_object())
                ++g_failed;
        }
    }
}

void run_beast(unsigned short port, const std::string& path, long n, long conns, after_read what)
{
    asio::io_context ioc(1);
    for (long c = 0; c < conns; ++c)
        asio::co_spawn(ioc, beast_worker(port, path, n / conns, what), asio::detached);
    ioc.run();
}

std::size_t curl_sink(char*, std::size_t size, std::size_t nmemb, void* ud)
{
    static_cast<std::string*>(ud)->append(static_cast<std::size_t>(size * nmemb), 'x');
    return size * nmemb;
}

void run_curl(unsigned short port, const std::string& path, long n)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURL* h = curl_easy_init();
    const std::string url = "http://127.0.0.1:" + std::to_string(port) + path;
    std::string body;
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, curl_sink);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
    for (long i = 0; i < n; ++i)
    {
        body.clear();
        if (curl_easy_perform(h) != CURLE_OK)
            ++g_failed;
        g_bytes += body.size();
    }
    curl_easy_cleanup(h);
    curl_global_cleanup();
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 5)
    {
        std::fprintf(stderr, "usage: %s ours|beast|beast_decode|beast_parse|curl|api|api_await|api_await_nolimit|api_metrics|api_log|api_traced|api_traced_otlp PORT PATH REQUESTS [IN_FLIGHT CONNECTIONS]\n", argv[0]);
        return 2;
    }
    const std::string mode = argv[1];
    const auto port = static_cast<unsigned short>(std::atoi(argv[2]));
    const std::string path = argv[3];
    const long n = std::atol(argv[4]);
    const long in_flight = argc > 5 ? std::atol(argv[5]) : 1;
    const long conns = argc > 6 ? std::atol(argv[6]) : 1;
    const auto t0 = std::chrono::steady_clock::now();
    if (mode == "ours")
        run_ours(port, path, n, in_flight, conns);
    else if (mode == "beast")
        run_beast(port, path, n, conns, after_read::nothing);
    else if (mode == "beast_decode")
        run_beast(port, path, n, conns, after_read::decode);
    else if (mode == "beast_parse")
        run_beast(port, path, n, conns, after_read::parse);
    else if (mode == "api")
        run_api(port, path, n, in_flight, conns);
    else if (mode == "api_await")
        run_api_await(port, n, in_flight, conns, true);
    else if (mode == "api_await_nolimit")
        run_api_await(port, n, in_flight, conns, false);
    else if (mode == "api_metrics")
        run_api(port, path, n, in_flight, conns, std::make_shared<dd::metrics_observer>());
    else if (mode == "api_log")
    {
        static std::ofstream devnull("/dev/null");
        run_api(port, path, n, in_flight, conns, std::make_shared<dd::json_logger>(devnull));
    }
    else if (mode == "api_traced" || mode == "api_traced_otlp")
    {
        // Every span exported before the count ends: shutdown() flushes.
        dd::otlp_exporter_params p{.service_name = "transport_bench"};
        if (mode == "api_traced")
            p.file = "/dev/null";
        else
            p.endpoint = "http://127.0.0.1:" + std::to_string(port);
        auto exporter = std::make_shared<dd::otlp_exporter>(p);
        run_api(port, path, n, in_flight, conns, {}, exporter);
        if (!exporter->shutdown(std::chrono::seconds(60)) || exporter->stats().dropped() != 0)
            ++g_failed;
    }
    else if (mode == "curl")
        run_curl(port, path, n);
    else
        return 2;
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%ld %.3f %.0f\n", n, secs, static_cast<double>(n) / secs);
    if (g_failed)
    {
        std::fprintf(stderr, "%d requests failed\n", g_failed);
        return 1;
    }
    return 0;
}
