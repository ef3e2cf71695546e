//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// The typical flow of the Digital Delivery API, end to end (README's main job):
//
//   1. upload a local file as an internal asset, with a progress bar;
//   2. create a licence asset that generates a key per purchase;
//   3. link both to a storefront product (a digital product);
//   4. simulate a purchase;
//   5. attach an extra asset to that order;
//   6. notify the buyer;
//   7. wait for PDF watermarking;
//   8. print the order's downloads as a table (and, on the sandbox, the link of
//      the buyer's download page).
//
// Configuration: DIGITAL_DELIVERY_BASE_URL and DIGITAL_DELIVERY_API_KEY
// (examples/run_main_job.sh sets them to a local sandbox).
//
//   typical_flow [--write] [--order ORDER_ID] [--notify-customer] [--as-real-service]
//                [--record CASSETTE | --replay CASSETTE] [--trace SPANS] [FILE]
//
// It says first which mode it runs in. Against the sandbox it runs every
// step: the sandbox is recognised by what only it says, its GET /sandbox/health
// answering 200 with `Server: digital-delivery-sandbox` AND a JSON body whose
// "service" is "digital-delivery-sandbox" (a health route of another service,
// or a proxy's catch-all route answering 200 to any path, says neither). When
// unsure it runs as against a real service, which it only reads
// (the first page of assets, digital products and orders; ORDER_ID's
// downloads), unless told otherwise:
//   --write            run steps 1-3 and, with --order, 5 and 7-8 on ORDER_ID
//                      (a real service has no simulated purchase);
//   --notify-customer  also step 6: emails ORDER_ID's real customer;
//   --as-real-service  behave as against a real service even on the sandbox
//                      (to rehearse a run).
// FILE: the file to upload (default: a generated PDF of a few MiB).
//
// Cassettes (docs/cassettes.md): --record CASSETTE writes every exchange of
// the run to CASSETTE (the API key, signatures, emails, customer names and
// licence keys masked); --replay CASSETTE runs the same flow from it, with no
// service at all (DIGITAL_DELIVERY_BASE_URL and _API_KEY are then optional).
//
// Traces (docs/observability.md, "Traces"): --trace SPANS writes the spans of
// every operation, attempt and wait of the run to the file SPANS, as OTLP
// JSON (one export request per line, what an OpenTelemetry Collector's file
// receiver reads), through dd::otlp_exporter; flushed before it exits.

#include <digital_delivery.hpp>
#include <digital_delivery/beast_transport.hpp>
#include <digital_delivery/otlp_exporter.hpp>
#include <digital_delivery/testing/cassette.hpp>
#include <digital_delivery/testing/sandbox_probe.hpp>
#include <digital_delivery/upload.hpp>
#include <digital_delivery/watermark.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <string_view>

namespace asio = boost::asio;
namespace dd = digital_delivery;
using namespace std::chrono_literals;

namespace {

// A small, valid PDF padded to `size` bytes (so the progress bar moves).
std::string make_sample_pdf(std::size_t size)
{
    std::string pdf =
        "%PDF-1.4\n"
        "1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
        "2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n"
        "3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >> endobj\n"
        "4 0 obj << /Length 44 >> stream\nBT /F1 24 Tf 72 720 Td (Digital delivery) Tj ET\nendstream endobj\n";
    std::string pad = "% padding ";
    while (pdf.size() + 64 < size)
        pdf += pad + std::string(std::min<std::size_t>(70, size - pdf.size() - 64), 'x') + "\n";
    pdf += "trailer << /Root 1 0 R >>\n%%EOF\n";
    return pdf;
}

void draw_progress(const dd::upload_progress& p)
{
    const double frac = p.total ? static_cast<double>(p.bytes_sent) / static_cast<double>(p.total) : 1.0;
    const int width = 32, filled = static_cast<int>(frac * width);
    std::printf("\r  [%s%s] %5.1f%%  %7.2f MiB/s", std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(),
                frac * 100.0, p.rate / (1024.0 * 1024.0));
    if (p.bytes_sent == p.total)
        std::printf("\n");
    std::fflush(stdout);
}

// A request outside the API's base path (the sandbox's control endpoints).
dd::http_request sandbox_request(const dd::client& client, dd::http_method m, std::string_view path, std::string body = {})
{
    dd::http_request req;
    req.method = m;
    req.url = dd::testing::url_origin(client.params().base_url) + std::string(path);
    req.headers.add("X-Auth-Token", client.params().api_key);
    req.headers.add("Accept", "application/json");
    if (!body.empty())
        req.headers.add("Content-Type", "application/json");
    req.body = std::move(body);
    req.timeout = 10s;
    return req;
}

std::string or_dash(const std::optional<std::string>& s) { return s ? *s : "-"; }

struct flow_options
{
    bool write = false;            // --write
    bool notify_customer = false;  // --notify-customer
    bool as_real_service = false;  // --as-real-service
    std::string order_id;          // --order
    std::string file;              // FILE
    std::string record;            // --record CASSETTE
    std::string replay;            // --replay CASSETTE
    std::string trace;             // --trace SPANS
};

// What a recorded run masks besides the built-in secrets.
const dd::testing::cassette_options cassette_masking{.masked_fields = {"email", "customer_name", "licence_key", "download_page_url"}};

// The transport of this run: the Beast transport, recorded or not, or a
// cassette's replay.
dd::any_transport make_transport(asio::io_context& ioc, const flow_options& opts)
{
    if (!opts.replay.empty())
        return dd::testing::replay_transport(ioc.get_executor(), opts.replay, cassette_masking);
    dd::any_transport live(dd::beast_transport(ioc.get_executor()));
    if (!opts.record.empty())
        return dd::testing::recording_transport(live, opts.record, cassette_masking);
    return live;
}

// Read-only: what a real store holds, without changing anything.
asio::awaitable<int> read_only_tour(dd::client& client, const flow_options& opts, dd::diagnostics& diag)
{
    dd::asset_query first_assets{.per_page = 5};
    auto [aec, assets] = co_await dd::async_list_assets(client, first_assets, diag, asio::as_tuple(asio::use_awaitable));
    if (aec)
        throw dd::error_with_diagnostics(aec, diag);
    std::printf("assets: %lld in all; first: %s\n", static_cast<long long>(assets.pagination.total_count),
                assets.assets.empty() ? "-" : assets.assets.front().name.value_or("(no name)").c_str());
    dd::digital_product_query first_products{.per_page = 5};
    auto [pec, products] = co_await dd::async_list_digital_products(client, first_products, diag, asio::as_tuple(asio::use_awaitable));
    if (pec)
        throw dd::error_with_diagnostics(pec, diag);
    std::printf("digital products: %lld in all\n", static_cast<long long>(products.pagination.total_count));
    dd::order_query newest{.per_page = 5};
    auto [oec, orders] = co_await dd::async_list_orders(client, newest, diag, asio::as_tuple(asio::use_awaitable));
    if (oec)
        throw dd::error_with_diagnostics(oec, diag);
    std::printf("orders: %lld in all; newest: %s\n", static_cast<long long>(orders.pagination.total_count),
                orders.orders.empty() ? "-" : orders.orders.front().name.c_str());
    if (!opts.order_id.empty())
    {
        auto [dec, d] = co_await dd::async_get_order_downloads(client, opts.order_id, diag, asio::as_tuple(asio::use_awaitable));
        if (dec)
            throw dd::error_with_diagnostics(dec, diag);
        std::printf("order %s: %zu downloads\n", d.order_name.c_str(), d.downloads.size());
    }
    co_return 0;
}

asio::awaitable<int> typical_flow(dd::client& client, const dd::any_transport& transport, flow_options opts)
{
    dd::diagnostics diag;

    // Which service is this? Only the sandbox names itself on /sandbox/health
    // (asked without the API key: it needs none, another service gets none).
    // (dd::testing::answers_as_the_sandbox: the same test as ddctl's.)
    auto health_req = dd::testing::sandbox_health_request(client.params().base_url);
    auto [hec, health] = co_await dd::async_transport_send(transport, std::move(health_req), asio::as_tuple(asio::use_awaitable));
    const bool sandbox = !hec && dd::testing::answers_as_the_sandbox(health) && !opts.as_real_service;
    if (!hec && health.status == 200 && !dd::testing::answers_as_the_sandbox(health))
        std::printf("note: /sandbox/health answered 200, but not as the sandbox: treated as a real service\n");
    if (!sandbox && !opts.write)
    {
        std::printf("mode: real service, read-only (--write to create assets and a digital product)\n");
        co_return co_await read_only_tour(client, opts, diag);
    }
    if (!sandbox && opts.order_id.empty())
        std::printf("mode: real service, writing: steps 1-3 only (--order ORDER_ID for the rest)\n");
    else if (!sandbox)
        std::printf("mode: real service, writing, order %s; the customer is %snotified\n", opts.order_id.c_str(),
                    opts.notify_customer ? "" : "not ");
    else
        std::printf("mode: sandbox, every step\n");
    std::string file = opts.file;
    auto check = [&](dd::error_code ec, const char* what) {
        if (ec)
        {
            std::fprintf(stderr, "%s failed: %s (%s)\n", what, ec.message().c_str(), diag.to_string().c_str());
            throw dd::error_with_diagnostics(ec, diag);
        }
    };

    // 1. Upload a local file as an internal asset.
    std::string filename = "handbook.pdf";
    if (file.empty())
    {
        file = (std::filesystem::temp_directory_path() / "digital_delivery_handbook.pdf").string();
        std::ofstream(file, std::ios::binary) << make_sample_pdf(3 * 1024 * 1024);
    }
    else
    {
        filename = std::filesystem::path(file).filename().string();
    }
    dd::error_code ec;
    auto src = dd::file_source::open(file, ec);
    check(ec, "open the file");
    std::printf("1. uploading %s (%llu bytes) as an internal asset\n", filename.c_str(),
                static_cast<unsigned long long>(src->size()));
    // GCC 12 corrupts temporaries that hold a std::string when they are
    // created inside a co_await expression (docs/compilers.md): every
    // argument with strings is a named variable here.
    dd::upload_asset_params meta{.filename = filename, .content_type = "application/pdf", .name = "Handbook", .watermark_asset = true};
    dd::upload_options uopts{.on_progress = draw_progress};
    auto [uec, pdf] = co_await dd::async_upload_asset(client, src, meta, std::move(uopts), diag,
                                                      asio::as_tuple(asio::use_awaitable));
    check(uec, "upload");
    std::printf("   asset %s, %lld bytes\n", pdf.id.c_str(), static_cast<long long>(pdf.byte_size));

    // 2. A licence asset whose key is generated per purchase.
    dd::new_asset key_asset{.type = dd::asset_type::licence, .name = "Activation key", .autogenerate_licence_key = true};
    auto [lec, licence] = co_await dd::async_create_asset(client, key_asset, diag, asio::as_tuple(asio::use_awaitable));
    check(lec, "create licence asset");
    std::printf("2. licence asset %s\n", licence.asset.id.c_str());

    // 3. Link both to a storefront product.
    // (A replay sends what the recording sent: no random id there.)
    std::mt19937_64 rng(opts.record.empty() && opts.replay.empty() ? std::random_device{}() : 26u);
    const std::int64_t store_product_id = 8000000000000LL + static_cast<std::int64_t>(rng() % 1000000);
    const std::string linked[] = {pdf.id, licence.asset.id};
    dd::new_digital_product link{
        .store_product_id = store_product_id,
        .asset_ids = linked,
        .upsert_always = true,
        .custom_message = "Thank you for your purchase!"};
    auto [pec, product] = co_await dd::async_create_digital_product(client, link, diag, asio::as_tuple(asio::use_awaitable));
    check(pec, "create digital product");
    std::printf("3. digital product %s for store product %lld (%zu assets)\n", product.id.c_str(),
                static_cast<long long>(store_product_id), product.assets.size());

    // 4. A purchase: simulated on the sandbox; on a real service, the order
    // named with --order (never one picked for the caller).
    std::string order_id = opts.order_id;
    if (sandbox)
    {
        auto purchase_req = sandbox_request(
            client, dd::http_method::post, "/sandbox/purchases",
            R"({"store_product_id":)" + std::to_string(store_product_id) +
                R"(,"email":"ada@example.com","customer_name":"Ada Lovelace"})"
        );
        auto [pec2, purchase] = co_await dd::async_transport_send(transport, std::move(purchase_req), asio::as_tuple(asio::use_awaitable));
        if (pec2 || purchase.status != 201)
        {
            std::fprintf(stderr, "simulated purchase failed: %s %u %s\n", pec2.message().c_str(), purchase.status, purchase.body.c_str());
            co_return 1;
        }
        order_id = std::string(boost::json::parse(purchase.body).at("order").at("id").as_string());
        std::printf("4. simulated a purchase: order %s\n", order_id.c_str());
    }
    else if (order_id.empty())
    {
        std::printf("4. a real service: no order named (--order), stopping here\n");
        co_return 0;
    }
    else
    {
        std::printf("4. a real service: using order %s\n", order_id.c_str());
    }

    // 5. Attach an extra asset to this order only.
    dd::new_asset bonus_asset{.type = dd::asset_type::external, .external_url = "https://example.com/bonus-track.mp3", .name = "Bonus track"};
    auto [xec, bonus] = co_await dd::async_create_asset(client, bonus_asset, diag, asio::as_tuple(asio::use_awaitable));
    check(xec, "create external asset");
    const std::string extra_ids[] = {bonus.asset.id};
    dd::asset_ids_request extra{.asset_ids = extra_ids};
    auto [aec, attached] = co_await dd::async_attach_assets(client, order_id, extra, diag, asio::as_tuple(asio::use_awaitable));
    check(aec, "attach assets");
    std::printf("5. attached %s to order %s (%zu attached)\n", bonus.asset.id.c_str(), attached.order.name.c_str(),
                attached.attached_assets.size());

    // 6. Notify the buyer (a real customer only with --notify-customer).
    if (sandbox || opts.notify_customer)
    {
        auto [nec, notified] = co_await dd::async_notify_order(client, order_id, diag, asio::as_tuple(asio::use_awaitable));
        check(nec, "notify");
        std::printf("6. notified %s: %s at %s\n", notified.order.email.c_str(), notified.notified ? "queued" : "not queued",
                    dd::format_timestamp(notified.notified_at).c_str());
    }
    else
    {
        std::printf("6. not notifying the customer (--notify-customer)\n");
    }

    // 7. Wait until watermarked PDFs are ready (background priority, backoff).
    std::printf("7. waiting for watermarking...\n");
    const dd::request_options within_2min{.deadline = std::chrono::steady_clock::now() + 120s};
    auto [wec, downloads] = co_await dd::async_wait_for_downloads(client, order_id, within_2min, asio::as_tuple(asio::use_awaitable));
    check(wec, "wait for downloads");

    // 8. The order's downloads.
    std::printf("8. downloads of order %s\n", downloads.order_name.c_str());
    std::printf("   %-16s %-26s %-14s %-12s %-5s %s\n", "product", "file", "watermark", "downloadable", "count", "key / url");
    for (const auto& d : downloads.downloads)
    {
        std::string url = or_dash(d.download_url);
        if (auto q = url.find('?'); q != std::string::npos)
            url = url.substr(0, q) + "?...";  // never print a signature
        std::printf("   %-16.16s %-26.26s %-14s %-12s %-5lld %s\n", d.product_name.c_str(), d.file_name.c_str(),
                    std::string(d.watermark_status.str()).c_str(), d.downloadable ? "yes" : "no",
                    static_cast<long long>(d.download_count), d.is_licence_key ? or_dash(d.licence_key).c_str() : url.c_str());
    }
    auto rl = client.rate_limit();
    if (rl.remaining)
        std::printf("rate limit: %lld of %lld points left\n", static_cast<long long>(*rl.remaining),
                    static_cast<long long>(rl.limit.value_or(0)));
    // What the buyer sees: the order's hosted download page (the sandbox's; the
    // API gives no link to the real one).
    if (sandbox)
    {
        auto page_req = dd::testing::sandbox_download_page_request(client.params().base_url, client.params().api_key, order_id);
        auto [gec, page] = co_await dd::async_transport_send(transport, std::move(page_req), asio::as_tuple(asio::use_awaitable));
        const std::string link = gec ? std::string() : dd::testing::download_page_url_of(page);
        if (!link.empty())
            std::printf("the buyer's download page (sandbox): %s\n", link.c_str());
    }
    co_return 0;
}

}  // namespace

int main(int argc, char** argv)
{
    const char* base = std::getenv("DIGITAL_DELIVERY_BASE_URL");
    const char* key = std::getenv("DIGITAL_DELIVERY_API_KEY");
    flow_options opts;
    for (int i = 1; i < argc; ++i)
    {
        const std::string a = argv[i];
        if (a == "--write")
            opts.write = true;
        else if (a == "--notify-customer")
            opts.notify_customer = true;
        else if (a == "--as-real-service")
            opts.as_real_service = true;
        else if (a == "--order" && i + 1 < argc)
            opts.order_id = argv[++i];
        else if (a == "--record" && i + 1 < argc && opts.replay.empty())
            opts.record = argv[++i];
        else if (a == "--replay" && i + 1 < argc && opts.record.empty())
            opts.replay = argv[++i];
        else if (a == "--trace" && i + 1 < argc)
            opts.trace = argv[++i];
        else if (!a.empty() && a[0] != '-' && opts.file.empty())
            opts.file = a;
        else
        {
            std::fprintf(stderr, "usage: typical_flow [--write] [--order ORDER_ID] [--notify-customer] [--as-real-service] "
                                 "[--record CASSETTE | --replay CASSETTE] [--trace SPANS] [FILE]\n");
            return 2;
        }
    }
    if (!opts.replay.empty())
    {
        // A replay reaches no service: any base URL and key will do.
        base = base ? base : "http://replay.invalid/api/v1/external";
        key = key ? key : "replay";
    }
    if (!base || !key)
    {
        std::fprintf(stderr, "set DIGITAL_DELIVERY_BASE_URL and DIGITAL_DELIVERY_API_KEY (or run examples/run_main_job.sh)\n");
        return 2;
    }
    try
    {
        asio::io_context ioc;
        const dd::any_transport transport = make_transport(ioc, opts);
        if (!opts.record.empty())
            std::printf("cassette: recording to %s\n", opts.record.c_str());
        else if (!opts.replay.empty())
            std::printf("cassette: replaying %s\n", opts.replay.c_str());
        // The spans of the run, to a file (on the exporter's own thread).
        std::shared_ptr<dd::otlp_exporter> spans;
        if (!opts.trace.empty())
            spans = std::make_shared<dd::otlp_exporter>(dd::otlp_exporter_params{.file = opts.trace, .service_name = "typical_flow"});
        dd::client client(transport, {.base_url = base, .api_key = key, .tracer = spans});
        auto result = asio::co_spawn(ioc, typical_flow(client, transport, std::move(opts)), asio::use_future);
        ioc.run();
        if (spans && !spans->shutdown(std::chrono::seconds(10)))
            std::fprintf(stderr, "some spans were not written to the trace file\n");
        return result.get();
    }
    catch (const std::exception& e)
    {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
