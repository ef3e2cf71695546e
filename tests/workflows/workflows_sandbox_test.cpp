// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Workflow helpers against the digital-delivery-sandbox over the Beast
// transport (label: sandbox): paginating 1,000 seeded orders, purchase ->
// wait for the watermark -> ready, asset edits, raw requests.
#include "run.hpp"
#include "sandbox_process.hpp"

#include <digital_delivery.hpp>
#include <digital_delivery/asset_edits.hpp>
#include <digital_delivery/beast_transport.hpp>
#include <digital_delivery/paginate.hpp>
#include <digital_delivery/raw_request.hpp>
#include <digital_delivery/upload.hpp>
#include <digital_delivery/watermark.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <set>

namespace dd = digital_delivery;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

class workflows_sandbox : public ::testing::Test
{
protected:
    static inline std::optional<dd_test::sandbox_process::store> store;
    static void SetUpTestSuite()
    {
        store = dd_test::sandbox_process::shared().create_store(
            {"--no-rate-limit", "--seed-orders", "1000", "--watermark-delay-ms", "400"});
    }
    asio::io_context ioc;
    dd::beast_transport transport{ioc.get_executor()};
    dd::client client{transport, dd::client_params{.base_url = store->base_url, .api_key = store->api_key}};

    // Runs a coroutine to completion (hang-guarded).
    template <class F>
    void run(F f)
    {
        // (Pooled keep-alive connections keep the io_context busy: run until
        // the coroutine is done, not until the io_context runs out of work.)
        dd_test::run_awaitable(ioc, f());
    }
};

TEST_F(workflows_sandbox, iterates_1000_seeded_orders)
{
    run([&]() -> asio::awaitable<void> {
        auto all = dd::paginate(dd::async_list_orders, client, {.per_page = 250});
        std::set<std::string> ids;
        std::size_t n = 0;
        while (auto o = co_await all.async_next())
        {
            ids.insert(o->id);
            ++n;
        }
        EXPECT_EQ(n, 1000u);
        EXPECT_EQ(ids.size(), 1000u) << "no repeats";
        EXPECT_EQ(all.total_count(), 1000);
        EXPECT_EQ(all.pages_fetched(), 4);
        EXPECT_FALSE(all.drifted());

        // With filters: every item matches, and the count is total_count.
        auto paid = dd::paginate(dd::async_list_orders, client, {.status = dd::financial_status::paid, .per_page = 37, .sort = dd::order_sort::created_at_asc});
        std::int64_t m = 0;
        while (auto o = co_await paid.async_next())
        {
            EXPECT_EQ(o->financial_status->value(), dd::financial_status::paid);
            ++m;
        }
        EXPECT_GT(m, 37);
        EXPECT_EQ(paid.total_count(), m);

        // Pages of assets: an empty list ends at once.
        auto pages = dd::paginate_pages(dd::async_list_assets, client, {.per_page = 250});
        auto p = co_await pages.async_next();
        EXPECT_FALSE(p);
        EXPECT_EQ(pages.total_count(), 0);
    });
}

TEST_F(workflows_sandbox, purchase_then_wait_for_the_watermark)
{
    run([&]() -> asio::awaitable<void> {
        // A PDF internal asset with watermarking, and its body.
        const std::string pdf = "%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n";
        auto src = std::make_shared<dd::memory_source>(pdf);
        // (GCC 12 miscompiles braced temporaries inside co_await expressions:
        // every argument is a named local here.)
        const dd::upload_asset_params meta{.filename = "book.pdf", .content_type = "application/pdf", .name = "Book", .watermark_asset = true};
        dd::asset created = co_await dd::async_upload_asset(client, src, meta);
        EXPECT_EQ(created.byte_size, static_cast<std::int64_t>(pdf.size()));

        // Link it to a store product, buy it.
        const std::int64_t product_id = 7500000001111;
        // (Initializer lists are built outside co_await expressions: GCC 12
        // rejects their backing arrays in a coroutine frame.)
        const std::string ndp_ids[] = {created.id};
        dd::new_digital_product ndp{.store_product_id = product_id, .asset_ids = ndp_ids};
        auto dp = co_await dd::async_create_digital_product(client, ndp);
        dd::client control(transport, dd::client_params{.base_url = store->origin, .api_key = store->api_key});
        boost::json::object purchase;
        purchase["store_product_id"] = product_id;
        purchase["email"] = "ada@example.com";
        purchase["customer_name"] = "Ada";
        const std::string purchase_json = boost::json::serialize(purchase);
        const dd::raw_request buy{.method = dd::http_method::post, .path = "/sandbox/purchases", .body = purchase_json};
        auto bought = co_await dd::async_raw_request(control, buy);
        const std::string order_id(bought.at("order").at("id").as_string());

        // Two concurrent waits share the polls; both see it ready.
        const dd::watermark_wait_options opts{.initial_interval = 100ms, .multiplier = 1.5, .max_interval = 500ms};
        const dd::request_options within_30s{.deadline = std::chrono::steady_clock::now() + 30s};
        std::optional<dd::order_downloads> other;
        dd::async_wait_for_downloads(client, order_id, opts, within_30s, [&](dd::error_code ec, dd::order_downloads d) {
            EXPECT_FALSE(ec) << ec.message();
            other = std::move(d);
        });
        auto d = co_await dd::async_wait_for_downloads(client, order_id, opts, within_30s);
        EXPECT_EQ(d.downloads.size(), 1u);
        if (d.downloads.size() != 1)
            co_return;
        EXPECT_EQ(d.downloads[0].watermark_status.value(), dd::watermark_status::ready);
        EXPECT_TRUE(d.downloads[0].download_url.has_value());
        EXPECT_TRUE(d.downloads[0].is_watermarked);
        EXPECT_TRUE(other.has_value());

        // A deadline that is too short.
        purchase["email"] = "bob@example.com";
        const std::string purchase2_json = boost::json::serialize(purchase);
        const dd::raw_request buy2{.method = dd::http_method::post, .path = "/sandbox/purchases", .body = purchase2_json};
        auto bought2 = co_await dd::async_raw_request(control, buy2);
        const std::string order2(bought2.at("order").at("id").as_string());
        const dd::watermark_wait_options short_wait{.initial_interval = 50ms};
        const dd::request_options within_150ms{.deadline = std::chrono::steady_clock::now() + 150ms};
        auto [wec, wd] = co_await dd::async_wait_for_downloads(client, order2, short_wait, within_150ms, asio::as_tuple(asio::use_awaitable));
        EXPECT_EQ(wec, dd::client_errc::deadline_exceeded);

        // Asset edits on the product.
        const dd::new_asset licence{.type = dd::asset_type::licence, .name = "Key"};
        auto lic = co_await dd::async_create_asset(client, licence);
        const std::vector<std::string> lic_ids{lic.asset.id};
        auto added = co_await dd::async_add_assets(client, dp.id, lic_ids);
        EXPECT_EQ(added.assets.size(), 2u);
        auto removed = co_await dd::async_remove_assets(client, dp.id, lic_ids);
        EXPECT_EQ(removed.assets.size(), 1u);
        if (!removed.assets.empty())
        {
            EXPECT_EQ(removed.assets[0].id, created.id);
        }

        // Raw request: typed errors from the same pipeline.
        dd::diagnostics diag;
        const dd::raw_request missing{.path = "/orders/no-such-order"};
        auto [rec, rv] = co_await dd::async_raw_request(client, missing, diag, asio::as_tuple(asio::use_awaitable));
        EXPECT_EQ(rec, dd::api_errc::order_not_found);
        EXPECT_EQ(diag.http_status, 404u);
    });
}

}  // namespace
