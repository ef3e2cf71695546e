// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The typical flow (create, upload, link, purchase, attach, notify, wait for
// watermarking) recorded against a sandbox of this test's own through the
// Beast transport; the sandbox is then stopped and the cassette replayed on
// the virtual clock: the same results, the same diagnostics, no secret in
// the file.
#include <digital_delivery.hpp>
#include <digital_delivery/beast_transport.hpp>
#include <digital_delivery/testing/cassette.hpp>
#include <digital_delivery/testing/sandbox.hpp>
#include <digital_delivery/testing/virtual_clock.hpp>
#include <digital_delivery/upload.hpp>
#include <digital_delivery/watermark.hpp>

#include "cassette_helpers.hpp"
#include "run.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <string>
#include <vector>

namespace dd = digital_delivery;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

const dd::testing::cassette_options masking{.masked_fields = {"email", "customer_name", "licence_key"}};

// The flow's outcome, one line per step: what a user's test would compare.
// Masked values (emails, licence keys) replay as placeholders: only their
// presence is part of the outcome.
asio::awaitable<std::vector<std::string>> typical_flow(dd::client& client, dd::any_transport transport, std::string origin)
{
    std::vector<std::string> out;
    dd::diagnostics diag;
    const auto step = [&](const char* what, dd::error_code ec, const std::string& detail) {
        out.push_back(std::string(what) + ": " + (ec ? ec.message() + " | " + diag.to_string() : detail));
    };

    // 1. Upload an internal asset.
    auto src = std::make_shared<dd::memory_source>(std::string(200000, 'p'));
    const std::string filename = "handbook.pdf";
    dd::upload_asset_params meta{.filename = filename, .content_type = "application/pdf", .name = "Handbook", .watermark_asset = true};
    auto [uec, pdf] = co_await dd::async_upload_asset(client, src, meta, diag, asio::as_tuple(asio::use_awaitable));
    step("upload", uec, pdf.id + " " + std::to_string(pdf.byte_size));

    // 2. A licence asset.
    dd::new_asset key_asset{.type = dd::asset_type::licence, .name = "Activation key", .autogenerate_licence_key = true};
    auto [lec, licence] = co_await dd::async_create_asset(client, key_asset, diag, asio::as_tuple(asio::use_awaitable));
    step("licence", lec, licence.asset.id);

    // 3. Link both to a storefront product.
    const std::string linked[] = {pdf.id, licence.asset.id};
    dd::new_digital_product link{.store_product_id = 880000777, .asset_ids = linked, .upsert_always = true};
    auto [pec, product] = co_await dd::async_create_digital_product(client, link, diag, asio::as_tuple(asio::use_awaitable));
    step("product", pec, product.id + " " + std::to_string(product.assets.size()));

    // 4. A purchase (the sandbox's own endpoint, through the same transport).
    dd::http_request purchase;
    purchase.method = dd::http_method::post;
    purchase.url = origin + "/sandbox/purchases";
    purchase.headers.add("X-Auth-Token", client.params().api_key);
    purchase.headers.add("Content-Type", "application/json");
    purchase.body = R"({"store_product_id":880000777,"email":"ada@example.com","customer_name":"Ada Lovelace"})";
    auto [sec, bought] = co_await dd::async_transport_send(transport, std::move(purchase), asio::as_tuple(asio::use_awaitable));
    std::string order_id;
    if (!sec && bought.status == 201)
        order_id = std::string(boost::json::parse(bought.body).at("order").at("id").as_string());
    step("purchase", sec, std::to_string(bought.status) + " " + order_id);

    // 5. Attach an extra asset to the order.
    dd::new_asset bonus_asset{.type = dd::asset_type::external, .external_url = "https://example.com/bonus.mp3", .name = "Bonus"};
    auto [xec, bonus] = co_await dd::async_create_asset(client, bonus_asset, diag, asio::as_tuple(asio::use_awaitable));
    step("bonus", xec, bonus.asset.id);
    const std::string extra_ids[] = {bonus.asset.id};
    dd::asset_ids_request extra{.asset_ids = extra_ids};
    auto [aec, attached] = co_await dd::async_attach_assets(client, order_id, extra, diag, asio::as_tuple(asio::use_awaitable));
    step("attach", aec, attached.order.name + " " + std::to_string(attached.attached_assets.size()));

    // 6. Notify the buyer.
    auto [nec, notified] = co_await dd::async_notify_order(client, order_id, diag, asio::as_tuple(asio::use_awaitable));
    step("notify", nec, std::string(notified.notified ? "queued" : "not queued") + " email:" + (notified.order.email.empty() ? "no" : "yes"));

    // 7. Wait for watermarking; 8. the downloads.
    const dd::request_options within{.deadline = dd::testing::virtual_clock::now() + 60s};
    auto [wec, downloads] = co_await dd::async_wait_for_downloads(client, order_id, within, diag, asio::as_tuple(asio::use_awaitable));
    std::string table;
    for (const auto& d : downloads.downloads)
        table += d.file_name + "/" + std::string(d.watermark_status.str()) + "/" + (d.downloadable ? "yes" : "no") + "/" +
                 (d.is_licence_key ? (d.licence_key ? "key" : "no key") : (d.download_url ? "url" : "no url")) + " ";
    step("downloads", wec, downloads.order_name + " " + table);

    // An error, with its diagnostics.
    auto [mec, missing] = co_await dd::async_get_order(client, "no-such-order", diag, asio::as_tuple(asio::use_awaitable));
    step("missing", mec, "found?");
    co_return out;
}

TEST(cassette_sandbox, the_typical_flow_replays_with_the_sandbox_stopped)
{
    dd_cassette::cassette_file file;
    const std::string key = "cassette-sandbox-key-7f3a9c";
    dd::testing::sandbox sb({"--watermark-delay-ms", "300"}, key);
    const std::string base_url = sb.base_url(), origin = sb.origin();

    std::vector<std::string> recorded;
    {
        asio::io_context ioc;
        const dd::any_transport rec(dd::testing::recording_transport(dd::beast_transport(ioc.get_executor()), file.path, masking));
        dd::client client(rec, {.base_url = base_url, .api_key = key});
        recorded = dd_test::run_awaitable(ioc, typical_flow(client, rec, origin));
    }
    ASSERT_EQ(recorded.size(), 9u);
    for (std::size_t i = 0; i + 1 < recorded.size(); ++i)
        EXPECT_EQ(recorded[i].find(" | "), std::string::npos) << "step failed while recording: " << recorded[i];
    EXPECT_NE(recorded[7].find("handbook.pdf/ready/yes/url"), std::string::npos) << recorded[7];
    EXPECT_NE(recorded[8].find("404 Order not found"), std::string::npos) << recorded[8];

    sb.stop();
    ASSERT_FALSE(sb.running());

    dd::testing::virtual_clock vc;
    asio::io_context ioc;
    auto replay = std::make_shared<dd::testing::replay_transport>(ioc.get_executor(), file.path, masking);
    dd::client client(replay, {.base_url = base_url, .api_key = key});
    const auto replayed = dd_cassette::run_virtual(vc, ioc, typical_flow(client, replay, origin));
    EXPECT_EQ(replayed, recorded);
    dd::diagnostics v;
    EXPECT_FALSE(replay->verify(v)) << v.client_message;

    // Nothing secret in the file.
    const std::string text = file.text();
    for (const char* secret : {key.c_str(), "ada@example.com", "Ada Lovelace"})
        EXPECT_EQ(text.find(secret), std::string::npos) << secret << " is in the cassette";
    EXPECT_FALSE(std::regex_search(text, std::regex(R"((Signature|X-Amz-Credential|X-Amz-Security-Token)=(?!REDACTED))")))
        << "a signature is in the cassette";
    EXPECT_NE(text.find("Signature=REDACTED"), std::string::npos) << "the presigned URLs are recorded, masked";
    EXPECT_TRUE(std::regex_search(text, std::regex(R"("licence_key": "MASKED-licence_key-\d+")")));
    EXPECT_LT(text.size(), 200000u) << "the upload's 200000 bytes are not in the cassette";
}

TEST(cassette_sandbox, a_429_recorded_live_replays_as_the_same_pause_and_retry)
{
    dd_cassette::cassette_file file;
    const std::string key = "cassette-429-key-51d0";
    // Two points, refilled at one a second: the third read in a row is refused
    // with a Retry-After, waited out and retried by the client (its own
    // limiter off, so that it is the server that says wait).
    dd::testing::sandbox sb({"--rate-limit-points", "2", "--rate-limit-window-seconds", "2", "--seed-orders", "1"}, key);
    const dd::client_params params{.base_url = sb.base_url(), .api_key = key, .rate_limit = {.enabled = false}};
    const auto three_reads = [](dd::client& c) -> asio::awaitable<std::vector<std::string>> {
        std::vector<std::string> out;
        dd::diagnostics diag;
        const dd::order_query first{.per_page = 1};  // named: GCC 12 and temporaries in co_await (docs/compilers.md)
        for (int i = 0; i < 3; ++i)
        {
            auto [ec, list] = co_await dd::async_list_orders(c, first, diag, asio::as_tuple(asio::use_awaitable));
            out.push_back((ec ? ec.message() : std::to_string(list.orders.size())) + " attempts:" + std::to_string(diag.attempts) +
                          " waited:" + (diag.total_wait >= 1s ? ">=1s" : "<1s"));
        }
        co_return out;
    };

    std::vector<std::string> recorded;
    {
        asio::io_context ioc;
        const dd::any_transport rec(dd::testing::recording_transport(dd::beast_transport(ioc.get_executor()), file.path));
        dd::client client(rec, params);
        recorded = dd_test::run_awaitable(ioc, three_reads(client));
    }
    sb.stop();
    ASSERT_EQ(recorded.size(), 3u);
    EXPECT_TRUE(std::regex_match(recorded[2], std::regex("1 attempts:[2-9] waited:>=1s"))) << "the third read was refused, then retried: " << recorded[2];
    EXPECT_NE(file.text().find(R"("status": 429)"), std::string::npos);
    EXPECT_NE(file.text().find(R"("Retry-After")"), std::string::npos);

    dd::testing::virtual_clock vc;
    asio::io_context ioc;
    auto replay = std::make_shared<dd::testing::replay_transport>(ioc.get_executor(), file.path);
    dd::client client(replay, params);
    auto fut = asio::co_spawn(ioc, three_reads(client), asio::use_future);
    vc.run_for(ioc, 500ms, 10ms);
    EXPECT_FALSE(replay->unused().empty()) << "the retry waits out the Retry-After";
    ASSERT_TRUE(vc.run_until(ioc, [&] { return fut.wait_for(0s) == std::future_status::ready; }, 10s, 10ms));
    EXPECT_EQ(fut.get(), recorded);
    dd::diagnostics v;
    EXPECT_FALSE(replay->verify(v)) << v.client_message;
}

}  // namespace
