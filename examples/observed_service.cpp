//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// A service that logs every call as JSON and exposes metrics
// (docs/observability.md):
//
//   - one client whose observer fans out to a dd::json_logger (one JSON line
//     per event on stdout, level info) and a dd::metrics_observer;
//   - a /metrics endpoint (Prometheus text) on 127.0.0.1, a free port;
//   - the typical flow against the sandbox: upload a file, create a licence
//     asset, link both to a storefront product, simulate a purchase, attach
//     an extra asset, notify the buyer, wait for watermarking;
//   - then it scrapes its own /metrics once and prints it.
//
// Configuration: DIGITAL_DELIVERY_BASE_URL and DIGITAL_DELIVERY_API_KEY of a
// sandbox (tests/common/with_sandbox.sh sets them).

#include <digital_delivery.hpp>
#include <digital_delivery/beast_transport.hpp>
#include <digital_delivery/json_logger.hpp>
#include <digital_delivery/metrics.hpp>
#include <digital_delivery/upload.hpp>
#include <digital_delivery/watermark.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>
#include <boost/json/parse.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace dd = digital_delivery;
using namespace std::chrono_literals;

namespace {

// GET /metrics: the Prometheus text exposition; anything else: 404.
asio::awaitable<void> serve_metrics(asio::ip::tcp::acceptor& acceptor, std::shared_ptr<dd::metrics_observer> metrics)
{
    for (;;)
    {
        auto [aec, sock] = co_await acceptor.async_accept(asio::as_tuple(asio::use_awaitable));
        if (aec)
            co_return;
        asio::streambuf buf;
        auto [rec, n] = co_await asio::async_read_until(sock, buf, "\r\n\r\n", asio::as_tuple(asio::use_awaitable));
        if (rec)
            continue;
        std::string head(asio::buffers_begin(buf.data()), asio::buffers_begin(buf.data()) + static_cast<std::ptrdiff_t>(n));
        const bool ok = head.starts_with("GET /metrics ");
        const std::string body = ok ? metrics->prometheus() : std::string("not found\n");
        std::string resp = std::string(ok ? "HTTP/1.1 200 OK\r\n" : "HTTP/1.1 404 Not Found\r\n") +
                           "Content-Type: text/plain; version=0.0.4\r\nConnection: close\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\n\r\n" + body;
        co_await asio::async_write(sock, asio::buffer(resp), asio::as_tuple(asio::use_awaitable));
    }
}

std::string origin_of(const std::string& base_url)
{
    const auto scheme_end = base_url.find("://");
    const auto path = base_url.find('/', scheme_end == std::string::npos ? 0 : scheme_end + 3);
    return path == std::string::npos ? base_url : base_url.substr(0, path);
}

asio::awaitable<int> flow(dd::client& client, const dd::any_transport& transport, unsigned short metrics_port)
{
    dd::diagnostics diag;
    auto check = [&](dd::error_code ec, const char* what) {
        if (ec)
            throw dd::error_with_diagnostics(ec, diag);
        std::fprintf(stderr, "ok: %s\n", what);
    };

    // 1. Upload (memory source; its progress is logged at debug level).
    auto src = std::make_shared<dd::memory_source>(std::string(256 * 1024, 'x'));
    dd::upload_asset_params meta{.filename = "handbook.pdf", .content_type = "application/pdf", .name = "Handbook"};
    auto [uec, pdf] = co_await dd::async_upload_asset(client, src, meta, diag, asio::as_tuple(asio::use_awaitable));
    check(uec, "upload");

    // 2. A licence asset.
    dd::new_asset key_asset{.type = dd::asset_type::licence, .name = "Activation key", .autogenerate_licence_key = true};
    auto [lec, licence] = co_await dd::async_create_asset(client, key_asset, diag, asio::as_tuple(asio::use_awaitable));
    check(lec, "licence asset");

    // 3. Link both to a storefront product.
    const std::int64_t store_product_id = 8100000000000LL;
    const std::string linked[] = {pdf.id, licence.asset.id};
    dd::new_digital_product link{.store_product_id = store_product_id, .asset_ids = linked, .upsert_always = true};
    auto [pec, product] = co_await dd::async_create_digital_product(client, link, diag, asio::as_tuple(asio::use_awaitable));
    check(pec, "digital product");

    // 4. A simulated purchase (the sandbox's control endpoint, through the transport).
    dd::http_request purchase_req;
    purchase_req.method = dd::http_method::post;
    purchase_req.url = origin_of(client.params().base_url) + "/sandbox/purchases";
    purchase_req.headers.add("X-Auth-Token", client.params().api_key);
    purchase_req.headers.add("Content-Type", "application/json");
    purchase_req.body = R"({"store_product_id":)" + std::to_string(store_product_id) + R"(,"email":"ada@example.com"})";
    purchase_req.timeout = 10s;
    auto [sec, purchase] = co_await dd::async_transport_send(transport, std::move(purchase_req), asio::as_tuple(asio::use_awaitable));
    if (sec || purchase.status != 201)
    {
        std::fprintf(stderr, "simulated purchase failed: %s %u\n", sec.message().c_str(), purchase.status);
        co_return 1;
    }
    const std::string order_id(boost::json::parse(purchase.body).at("order").at("id").as_string());

    // 5. Attach an extra asset; 6. notify the buyer.
    dd::new_asset bonus_asset{.type = dd::asset_type::external, .external_url = "https://example.com/bonus.mp3", .name = "Bonus"};
    auto [xec, bonus] = co_await dd::async_create_asset(client, bonus_asset, diag, asio::as_tuple(asio::use_awaitable));
    check(xec, "external asset");
    const std::string extra_ids[] = {bonus.asset.id};
    dd::asset_ids_request extra{.asset_ids = extra_ids};
    auto [aec, attached] = co_await dd::async_attach_assets(client, order_id, extra, diag, asio::as_tuple(asio::use_awaitable));
    check(aec, "attach");
    auto [nec, notified] = co_await dd::async_notify_order(client, order_id, diag, asio::as_tuple(asio::use_awaitable));
    check(nec, "notify");

    // 7. A failure on purpose: it is logged at level error with its diagnostics.
    auto [mec, missing] = co_await dd::async_get_order(client, "no-such-order", diag, asio::as_tuple(asio::use_awaitable));
    std::fprintf(stderr, "expected failure: %s\n", mec.message().c_str());

    // 8. Wait for watermarking.
    const dd::request_options within_2min{.deadline = std::chrono::steady_clock::now() + 120s};
    auto [wec, downloads] = co_await dd::async_wait_for_downloads(client, order_id, within_2min, asio::as_tuple(asio::use_awaitable));
    check(wec, "downloads");

    // Scrape our own /metrics, as Prometheus would.
    dd::http_request scrape;
    scrape.url = "http://127.0.0.1:" + std::to_string(metrics_port) + "/metrics";
    scrape.timeout = 10s;
    auto [mec2, text] = co_await dd::async_transport_send(transport, std::move(scrape), asio::as_tuple(asio::use_awaitable));
    if (mec2 || text.status != 200)
    {
        std::fprintf(stderr, "scraping /metrics failed: %s\n", mec2.message().c_str());
        co_return 1;
    }
    std::printf("---- GET /metrics ----\n%s", text.body.c_str());
    co_return 0;
}

}  // namespace

int main()
{
    const char* base = std::getenv("DIGITAL_DELIVERY_BASE_URL");
    const char* key = std::getenv("DIGITAL_DELIVERY_API_KEY");
    if (!base || !key)
    {
        std::fprintf(stderr, "set DIGITAL_DELIVERY_BASE_URL and DIGITAL_DELIVERY_API_KEY (tests/common/with_sandbox.sh)\n");
        return 2;
    }
    try
    {
        asio::io_context ioc;
        auto logger = std::make_shared<dd::json_logger>(std::cout, dd::log_level::info);
        auto metrics = std::make_shared<dd::metrics_observer>();
        const dd::any_transport transport(dd::beast_transport(ioc.get_executor()));
        dd::client client(transport, {.base_url = base, .api_key = key, .observer = std::make_shared<dd::fan_out_observer>(std::vector<std::shared_ptr<dd::observer>>{logger, metrics})});

        asio::ip::tcp::acceptor acceptor(ioc, {asio::ip::make_address("127.0.0.1"), 0});
        asio::co_spawn(ioc, serve_metrics(acceptor, metrics), asio::detached);
        int rc = 1;
        asio::co_spawn(ioc, flow(client, transport, acceptor.local_endpoint().port()), [&](std::exception_ptr e, int r) {
            acceptor.close();
            rc = r;
            if (e)
            {
                try
                {
                    std::rethrow_exception(e);
                }
                catch (const std::exception& ex)
                {
                    std::fprintf(stderr, "error: %s\n", ex.what());
                    rc = 1;
                }
            }
        });
        ioc.run();
        return rc;
    }
    catch (const std::exception& e)
    {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
