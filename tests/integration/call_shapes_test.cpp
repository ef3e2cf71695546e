// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The natural call shapes inside co_await, against the sandbox: braced
// payloads and queries with string literals, braced request options, braced
// raw requests and upload parameters, no token (the default) and as_tuple.
// GCC 12 relocates such temporaries bitwise into the coroutine frame
// (docs/compilers.md); the parameter types are views and trivially
// destructible, so that is harmless. This program is built with g++ and
// ASan+UBSan in CI (tests/integration/CMakeLists.txt), header-only, so that
// every line of it is instrumented.
#include "sandbox_harness.hpp"

#include <digital_delivery/upload.hpp>

#include <type_traits>

using namespace dd_integ;
using namespace std::chrono_literals;

namespace {

// What makes the shapes safe: nothing to free, whatever the compiler does
// with the bytes of the temporary.
static_assert(std::is_trivially_destructible_v<dd::request_options>);
static_assert(std::is_trivially_destructible_v<dd::new_asset>);
static_assert(std::is_trivially_destructible_v<dd::asset_update>);
static_assert(std::is_trivially_destructible_v<dd::asset_replacement>);
static_assert(std::is_trivially_destructible_v<dd::asset_query>);
static_assert(std::is_trivially_destructible_v<dd::new_digital_product>);
static_assert(std::is_trivially_destructible_v<dd::digital_product_update>);
static_assert(std::is_trivially_destructible_v<dd::notify_buyers_request>);
static_assert(std::is_trivially_destructible_v<dd::digital_product_query>);
static_assert(std::is_trivially_destructible_v<dd::order_query>);
static_assert(std::is_trivially_destructible_v<dd::asset_ids_request>);
static_assert(std::is_trivially_destructible_v<dd::notify_request>);
static_assert(std::is_trivially_destructible_v<dd::raw_request>);
static_assert(std::is_trivially_destructible_v<dd::upload_asset_params>);
static_assert(std::is_trivially_destructible_v<dd::replace_asset_params>);
static_assert(std::is_trivially_destructible_v<dd::watermark_wait_options>);
static_assert(std::is_trivially_destructible_v<dd::asset_edit_options>);
static_assert(std::is_trivially_destructible_v<dd::paginate_options>);

TEST(CallShapes, braced_arguments_inside_co_await)
{
    sandbox_env e({"--no-rate-limit", "--seed-orders", "3"}, "shapes-key");
    std::vector<std::string> log;
    auto body = [&]() -> asio::awaitable<void> {
        auto& client = e.client;
        // Payloads with string literals, longer and shorter than a small-string buffer.
        auto key = co_await dd::async_create_asset(client, {.type = dd::asset_type::licence, .name = "Key"});
        auto link = co_await dd::async_create_asset(
            client,
            {.type = dd::asset_type::external,
             .external_url = "https://downloads.example.com/a/rather/long/path/to/the/file.pdf",
             .name = "An external asset whose name does not fit a small buffer"}
        );
        auto renamed = co_await dd::async_update_asset(
            client, key.asset.id, {.name = "A licence key renamed to something long enough for the heap"},
            dd::request_options{.timeout = 5s}
        );
        log.push_back(renamed.name.value_or(""));
        const std::string ids[] = {key.asset.id, link.asset.id};
        auto product = co_await dd::async_create_digital_product(
            client, {.store_product_id = 7500000001111, .asset_ids = ids, .custom_message = "Thank you for your purchase!"}
        );
        log.push_back(product.custom_message.value_or(""));
        auto products = co_await dd::async_list_digital_products(client, {.store_product_id = 7500000001111});
        log.push_back(std::to_string(products.digital_products.size()));
        // A braced query holding strings, braced options with a deadline, priority and headers.
        const dd::http_headers::field trace[] = {{"X-Trace", "call-shapes"}};
        auto orders = co_await dd::async_list_orders(
            client, {.q = "#10", .status = dd::financial_status::paid, .per_page = 2},
            dd::request_options{.deadline = std::chrono::steady_clock::now() + 30s, .prio = dd::priority::interactive, .extra_headers = trace}
        );
        log.push_back(std::to_string(orders.orders.size()));
        // A braced raw request, as a tuple.
        auto [rec, raw] = co_await dd::async_raw_request(
            client, {.method = dd::http_method::get, .path = "/assets", .body = {}}, dd::request_options{.timeout = 5s},
            asio::as_tuple(asio::use_awaitable)
        );
        log.push_back(rec ? rec.message() : std::to_string(raw.at("assets").as_array().size()));
        // Upload parameters, braced.
        auto uploaded = co_await dd::async_upload_asset(
            client, std::make_shared<dd::memory_source>(std::string(70000, 'x')),
            {.filename = "a-manual-with-a-long-file-name.pdf", .content_type = "application/pdf", .name = "Manual"},
            dd::upload_options{.stall_timeout = 30s}
        );
        log.push_back(std::to_string(uploaded.byte_size));
        // A refusal: the exception carries the server's words.
        try
        {
            co_await dd::async_get_asset(client, "no-such-asset", dd::request_options{.timeout = 5s});
        }
        catch (const dd::error_with_diagnostics& ex)
        {
            log.push_back(ex.get_diagnostics().server_message);
        }
    };
    auto fut = asio::co_spawn(e.ioc, body(), asio::use_future);
    wait_for(e.ioc, fut);
    ASSERT_EQ(log.size(), 7u);
    EXPECT_EQ(log[0], "A licence key renamed to something long enough for the heap");
    EXPECT_EQ(log[1], "Thank you for your purchase!");
    EXPECT_EQ(log[2], "1") << "the product listed by its store product id";
    EXPECT_LE(std::stoi(log[3]), 2) << "per_page";
    EXPECT_GE(std::stoi(log[4]), 2) << "the raw listing sees the two assets";
    EXPECT_EQ(log[5], "70000");
    EXPECT_EQ(log[6], "Asset not found");
}

// Request models filled field by field before the call, the way most code
// fills them: every kind of value the views accept (a literal, a named string,
// a mutable one, a view of a named string, an optional of a named string, a
// named vector of ids, a header from a named string) reaches the server intact.
// With g++ this program runs under ASan+UBSan; the dangling shapes (a
// temporary std::string or container assigned to a field) do not compile
// (tests/consumer/compile_fail.cpp).
TEST(CallShapes, fields_assigned_before_the_call)
{
    sandbox_env e({"--no-rate-limit", "--seed-orders", "1"}, "shapes-fields-key");
    std::vector<std::string> log;
    auto body = [&]() -> asio::awaitable<void> {
        auto& client = e.client;
        const std::string label = "A licence key named by a string that does not fit a small buffer " + std::to_string(42);
        std::string mutable_name = "short";
        const std::optional<std::string> maybe_url = "https://downloads.example.com/" + std::to_string(7) + "/file.pdf";

        dd::new_asset key;
        key.type = dd::asset_type::licence;
        key.name = label;
        auto k = co_await dd::async_create_asset(client, key);
        log.push_back(k.asset.name.value_or(""));

        dd::new_asset link;
        link.type = dd::asset_type::external;
        link.external_url = maybe_url;
        link.name = std::string_view(label).substr(2, 7);
        auto l = co_await dd::async_create_asset(client, link);
        log.push_back(l.asset.external_url.value_or("") + "|" + l.asset.name.value_or(""));

        dd::asset_update rename;
        rename.name = mutable_name;
        auto renamed = co_await dd::async_update_asset(client, l.asset.id, rename);
        log.push_back(renamed.name.value_or(""));

        const std::vector<std::string> ids = {k.asset.id, l.asset.id};
        const std::string message = "Thanks, " + std::to_string(3) + " times";
        dd::new_digital_product p;
        p.store_product_id = 7500000002222;
        p.asset_ids = ids;
        p.custom_message = message;
        const std::string trace_id = "fields-" + std::to_string(1);
        const dd::http_headers::field trace[] = {{"X-Trace", trace_id}};
        dd::request_options opts;
        opts.extra_headers = trace;
        auto product = co_await dd::async_create_digital_product(client, p, opts);
        log.push_back(product.custom_message.value_or("") + "|" + std::to_string(product.assets.size()));

        dd::asset_query q;
        q.q = "licence key named";
        auto found = co_await dd::async_list_assets(client, q);
        log.push_back(std::to_string(found.assets.size()));
    };
    auto fut = asio::co_spawn(e.ioc, body(), asio::use_future);
    wait_for(e.ioc, fut);
    ASSERT_EQ(log.size(), 5u);
    EXPECT_EQ(log[0], "A licence key named by a string that does not fit a small buffer 42");
    EXPECT_EQ(log[1], "https://downloads.example.com/7/file.pdf|licence");
    EXPECT_EQ(log[2], "short");
    EXPECT_EQ(log[3], "Thanks, 3 times|2");
    EXPECT_EQ(log[4], "1");
}

// The run-time net behind the compile-time guard: the sandbox's request log of
// this program is checked at exit for malformed bodies (sandbox_harness.hpp).
// Here one is sent on purpose, and the log shows it.
TEST(CallShapes, the_request_log_shows_a_malformed_body)
{
    auto& sb = dd_test::sandbox_process::shared();
    const auto before = dd_test::sandbox_request_log::lines_containing("Malformed JSON body").size();
    expect_malformed_bodies(1);
    EXPECT_EQ(sb.request("POST", "/api/v1/external/assets", "{\"asset\":{\"name\":\"\x01\x07y").status, 400);
    const auto lines = dd_test::sandbox_request_log::lines_containing("Malformed JSON body");
    ASSERT_EQ(lines.size(), before + 1);
    EXPECT_EQ(lines.back().rfind("POST /api/v1/external/assets 400 ", 0), 0u) << lines.back();
}

}  // namespace
