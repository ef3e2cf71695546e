// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The exact request of each of the 18 endpoints, and the decoding of a
// realistic response (nullable fields null and set, unknown extra fields,
// unknown enum values).
#include "fixtures.hpp"

#include <digital_delivery/custom_endpoint.hpp>

#include <boost/describe/class.hpp>
#include <boost/json/parse.hpp>

using namespace fixtures;
using namespace std::chrono_literals;

// A descriptor of the user's own (an endpoint the library does not know),
// defined after <digital_delivery/custom_endpoint.hpp>: it links in separate
// compilation too, where src.hpp only instantiates the library's endpoints.
namespace my_api {
struct order_note
{
    std::string id;
    std::string text;
    std::optional<std::string> author;
};
BOOST_DESCRIBE_STRUCT(order_note, (), (id, text, author))
struct order_note_envelope
{
    order_note note;
};
BOOST_DESCRIBE_STRUCT(order_note_envelope, (), (note))
struct new_note
{
    std::string_view text;
};
BOOST_DESCRIBE_STRUCT(new_note, (), (text))

struct create_order_note : dd::endpoint_defaults
{
    static constexpr dd::http_method method = dd::http_method::post;
    static constexpr std::string_view path = "/orders/{id}/notes";
    using body = new_note;
    static constexpr std::string_view body_root = "note";
    using response = order_note_envelope;
};
inline constexpr dd::request_fn<create_order_note> async_create_order_note{};
}  // namespace my_api

namespace {

// Request models refer to the caller's ids (std::span): named arrays.
const std::string ids_a1_a2[] = {"a1", "a2"};
const std::string ids_a1_a3[] = {"a1", "a3"};

class endpoints_test : public client_test
{
protected:
    void expect_common_headers(const dd::http_request& r, bool has_body)
    {
        EXPECT_EQ(r.headers.find("X-Auth-Token").value_or(""), api_key);
        EXPECT_EQ(r.headers.find("Accept").value_or(""), "application/json");
        EXPECT_EQ(r.headers.find("User-Agent").value_or(""), "digital_delivery/0.1");
        if (has_body)
            EXPECT_EQ(r.headers.find("Content-Type").value_or(""), "application/json");
        else
        {
            EXPECT_FALSE(r.headers.find("Content-Type"));
            EXPECT_TRUE(r.body.empty());
        }
    }
    static boost::json::value body_of(const dd::http_request& r) { return boost::json::parse(r.body); }
};

// ---- assets ----------------------------------------------------------------------

TEST_F(endpoints_test, list_assets_typical_and_edges)
{
    fake->expect(dd::http_method::get, target("/assets"))
        .respond(200, R"({"assets":[)" + asset_json() + "," + asset_json(true, "licence") + "," + asset_json(false, "hologram") +
                          R"(],"pagination":)" + pagination_json(1, 25, 3, 1) + "}");
    auto [ec, list] = run([&](auto t) { return dd::async_list_assets(client, diag, t); });
    ASSERT_FALSE(ec) << diag.to_string();
    expect_common_headers(last_request(), false);
    EXPECT_EQ(last_request().method, dd::http_method::get);
    ASSERT_EQ(list.assets.size(), 3u);
    const auto& a = list.assets[0];
    EXPECT_EQ(a.id, "a1");
    EXPECT_EQ(a.type, dd::asset_type::internal);
    EXPECT_EQ(a.name, "Manual");
    EXPECT_EQ(a.filename, "manual.pdf");
    EXPECT_EQ(a.external_url, "https://cdn.example/x.pdf");
    EXPECT_EQ(a.content_type, "application/pdf");
    EXPECT_EQ(a.byte_size, 5000000000LL);  // 64-bit
    EXPECT_TRUE(a.watermark_asset);
    EXPECT_EQ(dd::format_timestamp(a.updated_at), "2024-05-02T12:30:15.250000Z");
    const auto& n = list.assets[1];
    EXPECT_EQ(n.type, dd::asset_type::licence);
    EXPECT_FALSE(n.name && n.filename && n.external_url && n.content_type);
    EXPECT_FALSE(n.name);
    EXPECT_EQ(dd::format_timestamp(n.updated_at), "2024-05-01T10:00:00.500000Z");
    // An unknown enum value is carried as text.
    EXPECT_TRUE(list.assets[2].type.is_unknown());
    EXPECT_EQ(list.assets[2].type.str(), "hologram");
    EXPECT_EQ(list.pagination.total_count, 3);

    fake->expect(dd::http_method::get, target("/assets?q=Big%20Book%20%26%20co&type=licence&page=3&per_page=250"))
        .respond(200, R"({"assets":[],"pagination":)" + pagination_json(3, 250, 0, 0) + "}");
    auto [ec2, list2] = run([&](auto t) {
        return dd::async_list_assets(client, {.q = "Big Book & co", .type = dd::asset_type::licence, .page = 3, .per_page = 250}, t);
    });
    EXPECT_FALSE(ec2);
    EXPECT_TRUE(list2.assets.empty());
    EXPECT_TRUE(fake->done()) << ::testing::PrintToString(fake->mismatches());
}

TEST_F(endpoints_test, get_asset)
{
    fake->expect(dd::http_method::get, target("/assets/a1")).respond(200, R"({"asset":)" + asset_json() + "}");
    auto [ec, a] = run([&](auto t) { return dd::async_get_asset(client, "a1", t); });
    EXPECT_FALSE(ec);
    EXPECT_EQ(a.id, "a1");
    expect_common_headers(last_request(), false);
    EXPECT_TRUE(fake->done());
}

TEST_F(endpoints_test, create_internal_asset_sends_only_set_fields_and_returns_upload)
{
    fake->expect(dd::http_method::post, target("/assets"))
        .respond(201, R"({"asset":)" + asset_json() + R"(,"upload":)" + upload_json() + "}");
    auto [ec, r] = run([&](auto t) {
        return dd::async_create_asset(
            client,
            {.type = dd::asset_type::internal, .filename = "manual.pdf", .byte_size = dd::max_asset_byte_size, .content_type = "application/pdf"},
            diag,
            t
        );
    });
    ASSERT_FALSE(ec) << diag.to_string();
    auto req = last_request();
    expect_common_headers(req, true);
    EXPECT_EQ(body_of(req), boost::json::parse(
                                R"({"asset":{"type":"internal","filename":"manual.pdf","byte_size":2147483648,"content_type":"application/pdf"}})"
                            ));
    ASSERT_TRUE(r.upload);
    EXPECT_EQ(r.upload->method, "PUT");
    EXPECT_EQ(r.upload->headers.find("Content-Type").value_or(""), "application/pdf");
    EXPECT_EQ(r.upload->headers.find("Content-Disposition").value_or(""), "inline; filename=\"manual.pdf\"");
    EXPECT_EQ(r.upload->headers.size(), 2u);
    EXPECT_EQ(dd::format_timestamp(r.upload->expires_at), "2024-05-01T13:00:00Z");
}

TEST_F(endpoints_test, create_licence_and_external_assets)
{
    fake->expect(dd::http_method::post, target("/assets")).respond(201, R"({"asset":)" + asset_json(true, "licence") + "}");
    auto [ec, r] = run([&](auto t) {
        return dd::async_create_asset(client, {.type = dd::asset_type::licence, .name = "Key", .autogenerate_licence_key = true}, t);
    });
    EXPECT_FALSE(ec);
    EXPECT_FALSE(r.upload);
    EXPECT_EQ(body_of(last_request()), boost::json::parse(R"({"asset":{"type":"licence","name":"Key","autogenerate_licence_key":true}})"));

    fake->expect(dd::http_method::post, target("/assets")).respond(201, R"({"asset":)" + asset_json(false, "external") + "}");
    auto [ec2, r2] = run([&](auto t) {
        return dd::async_create_asset(client, {.type = dd::asset_type::external, .external_url = "https://x.test/f.zip", .watermark_asset = false}, t);
    });
    EXPECT_FALSE(ec2);
    EXPECT_EQ(
        body_of(last_request()),
        boost::json::parse(R"({"asset":{"type":"external","external_url":"https://x.test/f.zip","watermark_asset":false}})")
    );
}

TEST_F(endpoints_test, update_asset_patch_semantics)
{
    fake->expect(dd::http_method::patch, target("/assets/a1")).respond(200, R"({"asset":)" + asset_json() + "}");
    auto [ec, a] = run([&](auto t) { return dd::async_update_asset(client, "a1", {.name = "New name"}, t); });
    EXPECT_FALSE(ec);
    EXPECT_EQ(a.id, "a1");
    EXPECT_EQ(body_of(last_request()), boost::json::parse(R"({"asset":{"name":"New name"}})"));

    // Nothing set: an empty object, never nulls.
    fake->expect(dd::http_method::patch, target("/assets/a1")).respond(200, R"({"asset":)" + asset_json() + "}");
    run([&](auto t) { return dd::async_update_asset(client, "a1", {}, t); });
    EXPECT_EQ(last_request().body, R"({"asset":{}})");
}

TEST_F(endpoints_test, delete_asset_accepts_204_and_200)
{
    fake->expect(dd::http_method::delete_, target("/assets/a1")).respond(204);
    auto [ec] = run([&](auto t) { return dd::async_delete_asset(client, "a1", t); });
    EXPECT_FALSE(ec);
    expect_common_headers(last_request(), false);
    fake->expect(dd::http_method::delete_, target("/assets/a2")).respond(200, R"({"deleted":true})");
    auto [ec2] = run([&](auto t) { return dd::async_delete_asset(client, "a2", t); });
    EXPECT_FALSE(ec2);
    EXPECT_TRUE(fake->done());
}

TEST_F(endpoints_test, replace_asset)
{
    fake->expect(dd::http_method::post, target("/assets/a1/replace"))
        .respond(200, R"({"asset":)" + asset_json() + R"(,"upload":)" + upload_json() + "}");
    auto [ec, r] = run([&](auto t) {
        return dd::async_replace_asset(client, "a1", {.filename = "v2.pdf", .byte_size = 1}, t);
    });
    EXPECT_FALSE(ec);
    EXPECT_TRUE(r.upload);
    EXPECT_EQ(body_of(last_request()), boost::json::parse(R"({"asset":{"filename":"v2.pdf","byte_size":1}})"));
}

// ---- digital products ---------------------------------------------------------------

TEST_F(endpoints_test, list_digital_products)
{
    fake->expect(dd::http_method::get, target("/digital_products?store_product_id=9007199254740993&per_page=100"))
        .respond(200, R"({"digital_products":[)" + digital_product_json() + "," + digital_product_json(true) +
                          R"(],"pagination":)" + pagination_json(1, 100, 2, 1) + "}");
    auto [ec, l] = run([&](auto t) {
        return dd::async_list_digital_products(client, {.store_product_id = 9007199254740993LL, .per_page = 100}, diag, t);
    });
    ASSERT_FALSE(ec) << diag.to_string();
    ASSERT_EQ(l.digital_products.size(), 2u);
    const auto& p = l.digital_products[0];
    EXPECT_EQ(p.store_product_id, 9007199254740993LL);  // above 2^53, exact
    EXPECT_EQ(p.store_variant_id, 42);
    ASSERT_EQ(p.assets.size(), 2u);
    EXPECT_EQ(p.assets[0].content_type, "application/pdf");
    EXPECT_FALSE(p.assets[1].content_type);
    EXPECT_TRUE(p.preorder_enabled);
    ASSERT_TRUE(p.preorder_launch_date);
    EXPECT_EQ(dd::format_timestamp(*p.preorder_launch_date), "2030-01-01T00:00:00Z");
    const auto& q = l.digital_products[1];
    EXPECT_FALSE(q.store_product_id);
    EXPECT_FALSE(q.store_variant_id);
    EXPECT_FALSE(q.custom_message || q.preorder_launch_date || q.preorder_subject || q.preorder_heading || q.preorder_description);
}

TEST_F(endpoints_test, get_digital_product)
{
    fake->expect(dd::http_method::get, target("/digital_products/dp1"))
        .respond(200, R"({"digital_product":)" + digital_product_json() + "}");
    auto [ec, p] = run([&](auto t) { return dd::async_get_digital_product(client, "dp1", t); });
    EXPECT_FALSE(ec);
    EXPECT_EQ(p.id, "dp1");
}

TEST_F(endpoints_test, create_digital_product_with_preorder)
{
    fake->expect(dd::http_method::post, target("/digital_products"))
        .respond(201, R"({"digital_product":)" + digital_product_json() + "}");
    const auto launch = dd::parse_timestamp("2030-01-01T00:00:00Z").value();
    auto [ec, p] = run([&](auto t) {
        return dd::async_create_digital_product(
            client,
            {.store_product_id = 9007199254740993LL,
             .asset_ids = ids_a1_a2,
             .upsert_always = true,
             .custom_message = "Thanks",
             .preorder_enabled = true,
             .preorder_launch_date = launch,
             .preorder_subject = "It's here"},
            t
        );
    });
    EXPECT_FALSE(ec);
    EXPECT_EQ(
        body_of(last_request()),
        boost::json::parse(R"({"digital_product":{"store_product_id":9007199254740993,"asset_ids":["a1","a2"],"upsert_always":true,)"
                           R"("custom_message":"Thanks","preorder_enabled":true,"preorder_launch_date":"2030-01-01T00:00:00Z","preorder_subject":"It's here"}})")
    );
}

TEST_F(endpoints_test, update_digital_product_replaces_asset_list)
{
    fake->expect(dd::http_method::patch, target("/digital_products/dp1"))
        .respond(200, R"({"digital_product":)" + digital_product_json() + "}");
    auto [ec, p] = run([&](auto t) {
        return dd::async_update_digital_product(client, "dp1", {.asset_ids = ids_a1_a3}, t);
    });
    EXPECT_FALSE(ec);
    EXPECT_EQ(last_request().body, R"({"digital_product":{"asset_ids":["a1","a3"]}})");
    // An explicitly empty list is sent (it unlinks everything); omitted is not.
    fake->expect(dd::http_method::patch, target("/digital_products/dp1"))
        .respond(200, R"({"digital_product":)" + digital_product_json() + "}");
    run([&](auto t) { return dd::async_update_digital_product(client, "dp1", {.asset_ids = dd::id_list{}}, t); });
    EXPECT_EQ(last_request().body, R"({"digital_product":{"asset_ids":[]}})");
}

TEST_F(endpoints_test, delete_digital_product)
{
    fake->expect(dd::http_method::delete_, target("/digital_products/dp1")).respond(204);
    auto [ec] = run([&](auto t) { return dd::async_delete_digital_product(client, "dp1", t); });
    EXPECT_FALSE(ec);
}

TEST_F(endpoints_test, notify_buyers_with_and_without_body)
{
    fake->expect(dd::http_method::post, target("/digital_products/dp1/notify_buyers"))
        .respond(202, R"({"digital_product_id":"dp1","notified_count":12})");
    auto [ec, r] = run([&](auto t) { return dd::async_notify_buyers(client, "dp1", t); });
    EXPECT_FALSE(ec);
    EXPECT_EQ(r.notified_count, 12);
    EXPECT_EQ(last_request().body, "{}");
    fake->expect(dd::http_method::post, target("/digital_products/dp1/notify_buyers"))
        .respond(202, R"({"digital_product_id":"dp1","notified_count":1})");
    run([&](auto t) {
        return dd::async_notify_buyers(client, "dp1", {.subject = "Hi {{ customer.name }}", .body = "Order {{ order.name }}"}, t);
    });
    EXPECT_EQ(
        body_of(last_request()),
        boost::json::parse(R"({"subject":"Hi {{ customer.name }}","body":"Order {{ order.name }}"})")
    );
}

// ---- orders ------------------------------------------------------------------------

TEST_F(endpoints_test, list_orders_with_every_filter)
{
    fake->expect(
            dd::http_method::get,
            target("/orders?q=%231001&email=ada%40example.com&status=partially_refunded&store_product_id=123&"
                   "digital_product_id=dp1&created_at_min=2024-01-01&created_at_max=2024-12-31&page=2&per_page=250&sort=name_desc")
    )
        .respond(200, R"({"orders":[)" + order_json() + "," + order_json(true) + "," + order_json(false, "chargeback") +
                          R"(],"pagination":)" + pagination_json(2, 250, 253, 2) + "}");
    using namespace std::chrono;
    auto [ec, l] = run([&](auto t) {
        return dd::async_list_orders(
            client,
            {.q = "#1001",
             .email = "ada@example.com",
             .status = dd::financial_status::partially_refunded,
             .store_product_id = 123,
             .digital_product_id = "dp1",
             .created_at_min = year(2024) / January / 1,
             .created_at_max = year(2024) / December / 31,
             .page = 2,
             .per_page = 250,
             .sort = dd::order_sort::name_desc},
            diag,
            t
        );
    });
    ASSERT_FALSE(ec) << diag.to_string();
    ASSERT_EQ(l.orders.size(), 3u);
    EXPECT_EQ(l.orders[0].financial_status, dd::open_enum(dd::financial_status::paid));
    EXPECT_EQ(l.orders[0].total_price, "19.99");
    EXPECT_EQ(l.orders[0].download_count, 3);
    EXPECT_FALSE(l.orders[1].financial_status);
    EXPECT_FALSE(l.orders[1].phone || l.orders[1].fulfillment_status || l.orders[1].total_price || l.orders[1].currency);
    ASSERT_TRUE(l.orders[2].financial_status);
    EXPECT_TRUE(l.orders[2].financial_status->is_unknown());
    EXPECT_EQ(l.orders[2].financial_status->str(), "chargeback");
    EXPECT_EQ(l.pagination.total_pages, 2);
}

TEST_F(endpoints_test, list_orders_without_filters_sends_no_query)
{
    fake->expect(dd::http_method::get, target("/orders"))
        .respond(200, R"({"orders":[],"pagination":)" + pagination_json(1, 25, 0, 0) + "}");
    auto [ec, l] = run([&](auto t) { return dd::async_list_orders(client, t); });
    EXPECT_FALSE(ec);
    EXPECT_TRUE(fake->done());
}

TEST_F(endpoints_test, get_order)
{
    fake->expect(dd::http_method::get, target("/orders/o1")).respond(200, R"({"order":)" + order_json() + "}");
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(client, "o1", t); });
    EXPECT_FALSE(ec);
    EXPECT_EQ(o.name, "#1001");
    EXPECT_EQ(o.email, "ada@example.com");
    EXPECT_EQ(o.currency, "EUR");
}

TEST_F(endpoints_test, get_order_downloads)
{
    fake->expect(dd::http_method::get, target("/orders/o1/downloads"))
        .respond(200, R"({"order_id":"o1","order_name":"#1001","downloads":[)" + download_json() + "," + download_json(true) + "," +
                          download_json(false, "processing") + "," + download_json(false, "hologram") + "]}");
    auto [ec, d] = run([&](auto t) { return dd::async_get_order_downloads(client, "o1", diag, t); });
    ASSERT_FALSE(ec) << diag.to_string();
    ASSERT_EQ(d.downloads.size(), 4u);
    const auto& f = d.downloads[0];
    EXPECT_EQ(f.file_size_bytes, 3000000000LL);
    EXPECT_EQ(f.watermark_status, dd::watermark_status::ready);
    EXPECT_EQ(f.download_limit, 5);
    EXPECT_EQ(f.licence_key, "ABCD-1234");
    EXPECT_TRUE(f.expires_at && f.preorder_available_at);
    EXPECT_FALSE(f.awaiting_watermark());
    const auto& k = d.downloads[1];
    EXPECT_TRUE(k.is_licence_key);
    EXPECT_FALSE(k.download_url || k.download_limit || k.expires_at || k.preorder_available_at || k.licence_key);
    EXPECT_TRUE(d.downloads[2].awaiting_watermark());
    EXPECT_TRUE(d.downloads[3].watermark_status.is_unknown());
    EXPECT_EQ(d.downloads[3].watermark_status.str(), "hologram");
}

TEST_F(endpoints_test, attach_assets)
{
    fake->expect(dd::http_method::post, target("/orders/o1/attach_assets"))
        .respond(200, R"({"order":)" + order_json() +
                          R"(,"attached_assets":[{"id":"a1","type":"internal","name":null,"filename":"f.pdf","content_type":"application/pdf","byte_size":10}]})");
    auto [ec, r] = run([&](auto t) { return dd::async_attach_assets(client, "o1", {.asset_ids = ids_a1_a2}, t); });
    EXPECT_FALSE(ec);
    EXPECT_EQ(last_request().body, R"({"asset_ids":["a1","a2"]})");
    ASSERT_EQ(r.attached_assets.size(), 1u);
    EXPECT_EQ(r.attached_assets[0].filename, "f.pdf");
    EXPECT_FALSE(r.attached_assets[0].name);
}

TEST_F(endpoints_test, detach_assets_tolerates_any_documented_shape)
{
    fake->expect(dd::http_method::delete_, target("/orders/o1/detach_assets"))
        .respond(200, R"({"order":)" + order_json() + R"(,"attached_assets":[]})");
    auto [ec, r] = run([&](auto t) { return dd::async_detach_assets(client, "o1", {.asset_ids = ids_a1}, t); });
    EXPECT_FALSE(ec);
    EXPECT_EQ(last_request().body, R"({"asset_ids":["a1"]})");
    EXPECT_EQ(last_request().headers.find("Content-Type").value_or(""), "application/json");
    EXPECT_TRUE(r.order && r.attached_assets);
    fake->expect(dd::http_method::delete_, target("/orders/o1/detach_assets")).respond(204);
    auto [ec2, r2] = run([&](auto t) { return dd::async_detach_assets(client, "o1", {.asset_ids = ids_a1}, t); });
    EXPECT_FALSE(ec2);
    EXPECT_FALSE(r2.order);
}

TEST_F(endpoints_test, notify_order)
{
    fake->expect(dd::http_method::post, target("/orders/o1/notify"))
        .respond(200, R"({"order":)" + order_json() + R"(,"notified":true,"notified_at":"2024-05-03T10:00:00Z"})");
    auto [ec, r] = run([&](auto t) { return dd::async_notify_order(client, "o1", {.email = "other@example.com"}, t); });
    EXPECT_FALSE(ec);
    EXPECT_TRUE(r.notified);
    EXPECT_EQ(last_request().body, R"({"email":"other@example.com"})");
    fake->expect(dd::http_method::post, target("/orders/o1/notify"))
        .respond(200, R"({"order":)" + order_json() + R"(,"notified":true,"notified_at":"2024-05-03T10:00:00Z"})");
    run([&](auto t) { return dd::async_notify_order(client, "o1", t); });
    EXPECT_EQ(last_request().body, "{}");
}

// ---- ids and paths -------------------------------------------------------------------

TEST_F(endpoints_test, ids_are_encoded_as_one_segment)
{
    const std::pair<std::string, std::string> cases[] = {
        {"a/b", "/orders/a%2Fb"},
        {"../../assets", "/orders/..%2F..%2Fassets"},
        {"x?y=1", "/orders/x%3Fy%3D1"},
        {"100%", "/orders/100%25"},
        {"a b#c", "/orders/a%20b%23c"},
        {"\r\nX-Evil: 1", "/orders/%0D%0AX-Evil%3A%201"},
    };
    for (const auto& [id, path] : cases)
    {
        fake->expect(dd::http_method::get, target(path)).respond(200, R"({"order":)" + order_json() + "}");
        auto [ec, o] = run([&](auto t) { return dd::async_get_order(client, id, t); });
        EXPECT_FALSE(ec) << id;
    }
    EXPECT_TRUE(fake->done()) << ::testing::PrintToString(fake->mismatches());
}

TEST(base_url, trailing_slash_and_port)
{
    asio::io_context ioc;
    auto fake = std::make_shared<dd::testing::fake_transport>(ioc.get_executor());
    dd::client c(fake, {.base_url = "http://127.0.0.1:8080/api/v1/external/", .api_key = "k"});
    fake->expect_any().respond(200, R"({"order":)" + order_json() + "}");
    dd::async_get_order(c, "o1", [](dd::error_code, dd::order) {});
    dd_test::run(ioc);
    ASSERT_EQ(fake->requests().size(), 1u);
    EXPECT_EQ(fake->requests()[0].url, "http://127.0.0.1:8080/api/v1/external/orders/o1");
}

TEST(base_url, invalid_configuration_throws_typed_errors)
{
    asio::io_context ioc;
    auto fake = std::make_shared<dd::testing::fake_transport>(ioc.get_executor());
    for (const char* bad : {"", "ftp://x/api", "dd.example.com/api", "https://", "https://h/a?x=1", "hps:{", "https://h/a b",
                            // Boost.URL 1.81 takes these for an empty port and a path without
                            // '/' (found by tests/fuzz/fuzz_url): no request could be sent.
                            "https://dd.example.com:x/api", "http://h:api/v1", "https://h:/api",
                            "https://h:99999/api", "https://h:0/api"})
    {
        try
        {
            dd::client c(fake, {.base_url = bad, .api_key = "k"});
            ADD_FAILURE() << "accepted " << bad;
        }
        catch (const dd::error_with_diagnostics& e)
        {
            EXPECT_EQ(e.code(), dd::client_errc::invalid_base_url) << bad;
            EXPECT_FALSE(e.get_diagnostics().client_message.empty());
        }
    }
    try
    {
        dd::client c(fake, {.base_url = fixtures::base_url, .api_key = "k\r\nX: y"});
        ADD_FAILURE() << "accepted a key with CRLF";
    }
    catch (const dd::error_with_diagnostics& e)
    {
        EXPECT_EQ(e.code(), dd::client_errc::invalid_argument);
        EXPECT_EQ(std::string(e.what()).find("X: y"), std::string::npos);  // never echo the key
    }
}

}  // namespace

TEST(http_headers, adding_a_value_viewed_from_the_same_headers)
{
    // The view points into the headers' own buffer, which grows (and moves)
    // while the new field is appended: the field must still get those bytes.
    dd::http_headers h;
    const std::string value(200, 'v');
    h.add("A", value);
    for (int i = 0; i < 8; ++i)
    {
        const std::string_view seen = *h.find("A");
        h.add("Copy-" + std::to_string(i), seen);
        h.set("A", *h.find("A"));  // set() with its own value too
    }
    EXPECT_EQ(*h.find("A"), value);
    for (int i = 0; i < 8; ++i)
        EXPECT_EQ(h.find("Copy-" + std::to_string(i)).value_or(""), value) << i;
}

TEST_F(endpoints_test, a_descriptor_of_ones_own)
{
    fake->expect(dd::http_method::post, target("/orders/o1/notes"))
        .respond(201, R"({"note":{"id":"n1","text":"gift wrap","author":null,"extra":1}})");
    fake->expect(dd::http_method::post, target("/orders/o2/notes")).respond(404, R"({"error":"Order not found"})");
    auto [ec, note] = run([&](auto t) { return my_api::async_create_order_note(client, "o1", {.text = "gift wrap"}, diag, t); });
    ASSERT_FALSE(ec) << diag.to_string();
    EXPECT_EQ(body_of(last_request()), boost::json::parse(R"({"note":{"text":"gift wrap"}})"));
    EXPECT_EQ(note.id, "n1");  // the envelope's one member
    EXPECT_EQ(note.text, "gift wrap");
    EXPECT_FALSE(note.author);

    // Without a token: the awaitable that throws what the server said.
    std::string what;
    dd_test::run_awaitable(ioc, [&]() -> asio::awaitable<void> {
        try
        {
            co_await my_api::async_create_order_note(client, "o2", {.text = "x"});
        }
        catch (const dd::error_with_diagnostics& e)
        {
            what = e.what();
        }
    }());
    EXPECT_EQ(what.rfind("POST /orders/o2/notes: 404 Order not found", 0), 0u) << what;
}
