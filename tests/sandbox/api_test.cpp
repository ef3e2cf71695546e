// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The API endpoints of the sandbox core: auth, routing, rate limit, assets,
// digital products, orders (filters, sorts, pagination), attach/detach, notify.
#include "helpers.hpp"

#include <regex>
#include <set>

using namespace sbt;

namespace {
bool is_iso_ms(const json::value& v)
{
    static const std::regex re("^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z$");
    return v.is_string() && std::regex_match(std::string(v.as_string()), re);
}
std::set<std::string> keys(const json::object& o)
{
    std::set<std::string> k;
    for (const auto& [key, v] : o)
        k.emplace(key);
    return k;
}
} // namespace

// --- auth, routing, rate limit ----------------------------------------------------
TEST_F(sandbox_test, MissingOrWrongKeyIs401)
{
    auto r = call("GET", "/api/v1/external/orders", "", {}, false);
    EXPECT_EQ(r.status, 401);
    EXPECT_EQ(r.body, R"({"error":"Invalid API key"})");
    r = call("GET", "/api/v1/external/orders", "", {{"X-Auth-Token", "nope"}}, false);
    EXPECT_EQ(r.status, 401);
    r = call("GET", "/sandbox/outbox", "", {}, false);
    EXPECT_EQ(r.status, 401);
    EXPECT_EQ(call("GET", "/sandbox/health", "", {}, false).body, R"({"status":"ok","service":"digital-delivery-sandbox"})");
}

TEST_F(sandbox_test, UnknownRouteIs404NotFound)
{
    for (const char* t : {"/api/v1/external/nothing", "/api/v1/external/orders/x/y", "/elsewhere"}) {
        auto r = call("GET", t);
        EXPECT_EQ(r.status, 404) << t;
        EXPECT_EQ(r.body, R"({"error":"Not found"})");
    }
    EXPECT_EQ(call("PUT", "/api/v1/external/orders").status, 404);
}

TEST_F(sandbox_test, SuccessCarriesRateLimitHeaders)
{
    auto r = api("GET", "/orders");
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(*r.header("X-RateLimit-Limit"), "40");
    EXPECT_EQ(*r.header("X-RateLimit-Remaining"), "39");
    EXPECT_EQ(*r.header("X-RateLimit-Reset"), std::to_string(unix_seconds(now) + 2));  // 1 pt = 1.5 s
    r = api("POST", "/orders/none/notify");
    EXPECT_EQ(*r.header("X-RateLimit-Remaining"), "37");  // writes cost 2
}

TEST_F(sandbox_test, RateLimitExceededGives429WithRetryAfter)
{
    cfg.rate_limit_window_seconds = 2;  // time-compressed: 20 points per second
    for (int i = 0; i < 40; ++i)
        ASSERT_EQ(api("GET", "/assets").status, 200) << i;
    auto r = api("GET", "/assets");
    EXPECT_EQ(r.status, 429);
    EXPECT_EQ(r.body, R"({"error":"Rate limit exceeded"})");
    EXPECT_EQ(*r.header("Retry-After"), "1");
    EXPECT_EQ(*r.header("X-RateLimit-Remaining"), "0");
    ASSERT_NE(r.header("X-RateLimit-Reset"), nullptr);
    // control endpoints are not rate limited
    EXPECT_EQ(call("GET", "/sandbox/outbox").status, 200);
    now += std::chrono::milliseconds(100);
    EXPECT_EQ(api("POST", "/orders/none/notify").status, 404);  // 2 points back after 0.1 s
}

TEST_F(sandbox_test, RateLimitWithDefaultWindowAndDisabled)
{
    for (int i = 0; i < 20; ++i)
        ASSERT_NE(api("DELETE", "/assets/x").status, 429);
    auto r = api("DELETE", "/assets/x");
    EXPECT_EQ(r.status, 429);
    EXPECT_EQ(*r.header("Retry-After"), "3");
    svc.reset();
    cfg.rate_limit = false;
    for (int i = 0; i < 100; ++i)
        ASSERT_EQ(api("GET", "/assets").status, 200);
    EXPECT_EQ(api("GET", "/assets").header("X-RateLimit-Limit"), nullptr);
}

// GET /sandbox/usage: what the benchmarks of `ddctl assets sync` count P with.
TEST_F(sandbox_test, UsageCountsRequestsPointsAndRefusals)
{
    cfg.rate_limit_points = 5;
    auto usage = [&] { return json::parse(call("GET", "/sandbox/usage").body).as_object(); };
    EXPECT_EQ(usage(), (json::object{{"requests", 0}, {"points", 0}, {"rate_limited", 0}}));
    EXPECT_EQ(api("GET", "/assets").status, 200);           // 1 point
    EXPECT_EQ(api("POST", "/orders/none/notify").status, 404);  // 2 points: a refusal past the limit still costs
    EXPECT_EQ(api("DELETE", "/assets/none").status, 404);   // 2 points: 5 spent
    EXPECT_EQ(api("GET", "/assets").status, 429);           // refused: no point
    EXPECT_EQ(call("GET", "/api/v1/external/assets", "", {}, false).status, 401);  // no key: not counted
    EXPECT_EQ(call("GET", "/sandbox/outbox").status, 200);  // control endpoints are not counted
    EXPECT_EQ(usage(), (json::object{{"requests", 4}, {"points", 5}, {"rate_limited", 1}}));
    EXPECT_EQ(call("DELETE", "/sandbox/usage").status, 204);
    EXPECT_EQ(usage(), (json::object{{"requests", 0}, {"points", 0}, {"rate_limited", 0}}));
    // counted without a rate limit too
    svc.reset();
    cfg.rate_limit = false;
    for (int i = 0; i < 7; ++i)
        ASSERT_EQ(api("GET", "/assets").status, 200);
    EXPECT_EQ(api("POST", "/assets", json::parse(R"({"asset":{"type":"licence","name":"k"}})")).status, 201);
    EXPECT_EQ(usage(), (json::object{{"requests", 8}, {"points", 9}, {"rate_limited", 0}}));
}

// --- assets ------------------------------------------------------------------------
TEST_F(sandbox_test, CreateInternalAssetReturnsUploadHandle)
{
    auto r = api("POST", "/assets",
                 json::object{{"asset", json::object{{"type", "internal"}, {"filename", "Guide.pdf"},
                                                     {"byte_size", 1234}, {"unknown", 1}}}});
    ASSERT_EQ(r.status, 201) << r.body;
    auto v = js(r);
    const auto& a = v.at("asset").as_object();
    EXPECT_EQ(keys(a), (std::set<std::string>{"id", "type", "name", "filename", "external_url",
                                               "content_type", "byte_size", "watermark_asset",
                                               "autogenerate_licence_key", "created_at", "updated_at"}));
    EXPECT_EQ(a.at("content_type"), "application/octet-stream");
    EXPECT_TRUE(a.at("name").is_null());
    EXPECT_TRUE(a.at("external_url").is_null());
    EXPECT_EQ(a.at("byte_size"), 1234);
    EXPECT_EQ(a.at("created_at"), "2026-11-22T10:00:00.000Z");
    const auto& up = v.at("upload").as_object();
    EXPECT_EQ(up.at("method"), "PUT");
    EXPECT_EQ(up.at("expires_at"), "2026-11-22T11:00:00.000Z");
    EXPECT_EQ(up.at("headers").as_object().size(), 2u);
    EXPECT_EQ(up.at("headers").at("Content-Type"), "application/octet-stream");
    EXPECT_EQ(up.at("headers").at("Content-Disposition"), "inline; filename=\"Guide.pdf\"");
    const std::string url(up.at("url").as_string());
    EXPECT_EQ(url.rfind("http://sandbox.test:9000/storage/sandbox-assets/assets/" +
                            std::string(a.at("id").as_string()) + "/", 0), 0u) << url;
    for (const char* p : {"X-Amz-Algorithm=AWS4-HMAC-SHA256", "X-Amz-Credential=", "%2F20261122%2Fus-east-1%2Fs3%2Faws4_request",
                          "X-Amz-Date=20261122T100000Z", "X-Amz-Expires=3600",
                          "X-Amz-SignedHeaders=content-disposition%3Bcontent-type%3Bhost", "X-Amz-Signature="})
        EXPECT_NE(url.find(p), std::string::npos) << p;
    EXPECT_TRUE(is_iso_ms(a.at("updated_at")));
}

TEST_F(sandbox_test, CreateExternalAndLicenceAssets)
{
    auto r = api("POST", "/assets", json::object{{"asset", json::object{{"type", "external"},
                                                                        {"external_url", "https://cdn.example.com/files/My%20Song.mp3?x=1"}}}});
    ASSERT_EQ(r.status, 201) << r.body;
    auto v = js(r);
    EXPECT_FALSE(v.as_object().contains("upload"));
    EXPECT_EQ(v.at("asset").at("filename"), "My Song.mp3");
    EXPECT_EQ(v.at("asset").at("content_type"), "audio/mpeg");
    EXPECT_EQ(v.at("asset").at("byte_size"), 0);
    r = api("POST", "/assets", json::object{{"asset", json::object{{"type", "licence"}, {"name", "Pro key"},
                                                                   {"autogenerate_licence_key", true}}}});
    ASSERT_EQ(r.status, 201);
    v = js(r);
    EXPECT_FALSE(v.as_object().contains("upload"));
    EXPECT_EQ(v.at("asset").at("filename"), "Licence Key");
    EXPECT_EQ(v.at("asset").at("content_type"), "licence/key");
    EXPECT_EQ(v.at("asset").at("byte_size"), 0);
    EXPECT_EQ(v.at("asset").at("autogenerate_licence_key"), true);
}

TEST_F(sandbox_test, CreateAssetValidationMessages)
{
    auto errs = [&](json::object asset) { return errors_of(api("POST", "/assets", json::object{{"asset", asset}})); };
    EXPECT_EQ(errs({{"type", "video"}}), std::vector<std::string>{"Type is not included in the list"});
    EXPECT_EQ(errs({{"name", "x"}}),
              (std::vector<std::string>{"Type can't be blank", "Type is not included in the list"}));
    EXPECT_EQ(errs({{"type", "internal"}, {"byte_size", 1}}), std::vector<std::string>{"Filename can't be blank"});
    EXPECT_EQ(errs({{"type", "internal"}, {"filename", "a"}}), std::vector<std::string>{"Byte size can't be blank"});
    EXPECT_EQ(errs({{"type", "internal"}, {"filename", "a"}, {"byte_size", 0}}),
              std::vector<std::string>{"Byte size must be greater than 0"});
    EXPECT_EQ(errs({{"type", "internal"}, {"filename", "a"}, {"byte_size", 2147483649LL}}),
              std::vector<std::string>{"Byte size must be less than or equal to 2147483648"});
    EXPECT_EQ(errs({{"type", "internal"}, {"filename", "a"}, {"byte_size", 1.5}}),
              std::vector<std::string>{"Byte size must be an integer"});
    EXPECT_EQ(errs({{"type", "external"}}), std::vector<std::string>{"External url can't be blank"});
    EXPECT_EQ(errs({{"type", "external"}, {"external_url", "ftp://x/y"}}), std::vector<std::string>{"External url is invalid"});
    EXPECT_EQ(api("POST", "/assets", json::object{{"asset", json::object{{"type", "internal"}, {"filename", "a"},
                                                                       {"byte_size", 2147483648LL}}}}).status, 201);
}

TEST_F(sandbox_test, MalformedBodyAndMissingRoot)
{
    auto r = call("POST", "/api/v1/external/assets", "{\"asset\": ");
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(r.body, R"({"error":"Malformed JSON body"})");
    r = call("POST", "/api/v1/external/assets", R"({"type":"internal"})");
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(error_of(r), "param is missing or the value is empty: asset");
    r = call("POST", "/api/v1/external/digital_products", "");
    EXPECT_EQ(error_of(r), "param is missing or the value is empty: digital_product");
}

TEST_F(sandbox_test, GetListUpdateDeleteAsset)
{
    auto r = api("POST", "/assets", json::object{{"asset", json::object{{"type", "external"}, {"name", "Cover art"},
                                                                        {"external_url", "https://x.example/a.png"}}}});
    const std::string id(js(r).at("asset").at("id").as_string());
    licence_asset();
    EXPECT_EQ(api("GET", "/assets/" + id).status, 200);
    r = api("GET", "/assets/00000000-0000-4000-8000-000000000000");
    EXPECT_EQ(r.status, 404);
    EXPECT_EQ(error_of(r), "Asset not found");

    auto list = js(api("GET", "/assets?type=external"));
    EXPECT_EQ(list.at("assets").as_array().size(), 1u);
    EXPECT_EQ(list.at("pagination").at("total_count"), 1);
    list = js(api("GET", "/assets?q=COVER"));
    EXPECT_EQ(list.at("assets").as_array().size(), 1u);
    list = js(api("GET", "/assets?q=licence"));  // matches filename "Licence Key"
    EXPECT_EQ(list.at("assets").as_array().size(), 1u);
    EXPECT_EQ(errors_of(api("GET", "/assets?type=internal")), std::vector<std::string>{"type is invalid"});
    EXPECT_EQ(errors_of(api("GET", "/assets?per_page=251")), std::vector<std::string>{"per_page must be between 1 and 250"});

    now += std::chrono::seconds(5);
    r = api("PATCH", "/assets/" + id, json::object{{"asset", json::object{{"name", "New"}, {"watermark_asset", true}}}});
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(js(r).at("asset").at("name"), "New");
    EXPECT_EQ(js(r).at("asset").at("updated_at"), "2026-11-22T10:00:05.000Z");
    r = api("PATCH", "/assets/" + id, json::object{{"asset", json::object{{"external_url", ""}}}});
    EXPECT_EQ(errors_of(r), std::vector<std::string>{"External url can't be blank"});
    EXPECT_EQ(api("PATCH", "/assets/missing", json::object{{"asset", json::object{{"name", "x"}}}}).status, 404);

    r = api("DELETE", "/assets/" + id);
    EXPECT_EQ(r.status, 204);
    EXPECT_TRUE(r.body.empty());
    EXPECT_EQ(api("GET", "/assets/" + id).status, 404);
    EXPECT_EQ(error_of(api("DELETE", "/assets/" + id)), "Asset not found");
}

TEST_F(sandbox_test, AssetQuotas)
{
    cfg.quota_asset_count = 2;
    cfg.quota_storage_bytes = 1000;
    auto create = [&](std::int64_t size) {
        return api("POST", "/assets", json::object{{"asset", json::object{{"type", "internal"}, {"filename", "f"}, {"byte_size", size}}}});
    };
    EXPECT_EQ(create(600).status, 201);  // never uploaded, still counts
    auto r = create(500);
    EXPECT_EQ(r.status, 422);
    EXPECT_EQ(r.body, R"({"error":"Asset storage limit exceeded","code":"asset_storage_limit_exceeded"})");
    auto second = create(400);
    ASSERT_EQ(second.status, 201);
    r = create(1);
    EXPECT_EQ(r.body, R"({"error":"Asset count limit exceeded","code":"asset_count_limit_exceeded"})");
    // replace checks only the growth
    const std::string id(js(second).at("asset").at("id").as_string());
    r = api("POST", "/assets/" + id + "/replace", json::object{{"asset", json::object{{"filename", "g"}, {"byte_size", 401}}}});
    EXPECT_EQ(r.status, 422);
    EXPECT_EQ(js(r).at("code"), "asset_storage_limit_exceeded");
    r = api("POST", "/assets/" + id + "/replace", json::object{{"asset", json::object{{"filename", "g"}, {"byte_size", 400}}}});
    EXPECT_EQ(r.status, 200) << r.body;
    // delete frees at once
    EXPECT_EQ(api("DELETE", "/assets/" + id).status, 204);
    EXPECT_EQ(create(400).status, 201);
}

// The storage quota follows every change of an asset's footprint (the larger of its
// file and a pending replacement): a second replace, the replacement's upload, a
// delete. Each check is at its exact boundary (fits at the limit, refused one byte over).
TEST_F(sandbox_test, StorageQuotaFollowsReplaceUploadAndDelete)
{
    cfg.quota_storage_bytes = 100;
    auto create = [&](std::int64_t size) {
        return api("POST", "/assets", json::object{{"asset", json::object{{"type", "internal"}, {"filename", "f"}, {"byte_size", size}}}});
    };
    auto replace = [&](const std::string& id, std::int64_t size) {
        return api("POST", "/assets/" + id + "/replace", json::object{{"asset", json::object{{"filename", "g"}, {"byte_size", size}}}});
    };
    const std::string a = uploaded_asset("a.pdf", std::string(10, 'a'));  // 10 used
    auto r = replace(a, 60);                                              // footprint 60: 60 used
    ASSERT_EQ(r.status, 200) << r.body;
    r = replace(a, 30);  // a second replace drops the first: footprint 30
    ASSERT_EQ(r.status, 200) << r.body;
    const auto pending = js(r);
    EXPECT_EQ(create(71).status, 422);
    auto b = create(70);  // 30 + 70 = 100
    ASSERT_EQ(b.status, 201) << b.body;
    const std::string b_id(js(b).at("asset").at("id").as_string());
    EXPECT_EQ(create(1).status, 422);
    EXPECT_EQ(api("DELETE", "/assets/" + b_id).status, 204);  // 30 used
    ASSERT_EQ(put(upload_url(pending), std::string(30, 'b'), upload_headers(pending)).status, 200);
    r = replace(a, 20);  // the uploaded 30 stays until its replacement lands: footprint 30
    ASSERT_EQ(r.status, 200) << r.body;
    const auto smaller = js(r);
    EXPECT_EQ(create(71).status, 422);
    ASSERT_EQ(put(upload_url(smaller), std::string(20, 'c'), upload_headers(smaller)).status, 200);
    // footprint 20 now
    EXPECT_EQ(create(81).status, 422);
    EXPECT_EQ(create(80).status, 201);
    EXPECT_EQ(create(1).status, 422);
    EXPECT_EQ(api("DELETE", "/assets/" + a).status, 204);  // 80 used
    EXPECT_EQ(create(21).status, 422);
    EXPECT_EQ(create(20).status, 201);
}

TEST_F(sandbox_test, ReplaceRules)
{
    const std::string lic = licence_asset();
    auto r = api("POST", "/assets/" + lic + "/replace", json::object{{"asset", json::object{{"filename", "g"}, {"byte_size", 4}}}});
    EXPECT_EQ(r.status, 422);
    EXPECT_EQ(error_of(r), "Only internal assets can have their file replaced");
    EXPECT_EQ(error_of(api("POST", "/assets/nope/replace", json::object{{"asset", json::object{{"filename", "g"}}}})), "Asset not found");
    const std::string id = uploaded_asset("a.pdf", "12345");
    r = api("POST", "/assets/" + id + "/replace", json::object{{"asset", json::object{{"filename", "b.pdf"}}}});
    EXPECT_EQ(errors_of(r), std::vector<std::string>{"Byte size can't be blank"});
    r = api("POST", "/assets/" + id + "/replace", json::object{{"asset", json::object{{"filename", "b.pdf"}, {"byte_size", 3}}}});
    ASSERT_EQ(r.status, 200);
    auto v = js(r);
    EXPECT_EQ(v.at("asset").at("id"), id);
    EXPECT_EQ(v.at("upload").at("headers").at("Content-Type"), "application/pdf");  // keeps the current type
    EXPECT_EQ(v.at("upload").at("headers").at("Content-Disposition"), "inline; filename=\"b.pdf\"");
}

// --- digital products ----------------------------------------------------------------
TEST_F(sandbox_test, DigitalProductCrud)
{
    const std::string a1 = licence_asset(), a2 = licence_asset();
    auto r = api("POST", "/digital_products",
                 json::object{{"digital_product", json::object{{"store_product_id", 7500000001111LL},
                                                               {"store_variant_id", 42},
                                                               {"asset_ids", json::array{a1, a1}},
                                                               {"custom_message", "Enjoy"}}}});
    ASSERT_EQ(r.status, 201) << r.body;
    auto d = js(r).at("digital_product").as_object();
    EXPECT_EQ(keys(d), (std::set<std::string>{"id", "store_product_id", "store_variant_id", "assets", "upsert_always",
                                               "custom_message", "preorder_enabled", "preorder_launch_date",
                                               "preorder_subject", "preorder_heading", "preorder_description",
                                               "created_at", "updated_at"}));
    EXPECT_EQ(d.at("store_product_id"), 7500000001111LL);
    EXPECT_EQ(d.at("store_variant_id"), 42);
    ASSERT_EQ(d.at("assets").as_array().size(), 1u);
    EXPECT_EQ(keys(d.at("assets").at(0).as_object()),
              (std::set<std::string>{"id", "type", "name", "filename", "external_url", "content_type", "byte_size", "created_at"}));
    const std::string id(d.at("id").as_string());

    r = api("PATCH", "/digital_products/" + id, json::object{{"digital_product", json::object{{"asset_ids", json::array{a2}}}}});
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(js(r).at("digital_product").at("assets").at(0).at("id"), a2);  // replaced, not appended
    EXPECT_EQ(js(r).at("digital_product").at("custom_message"), "Enjoy");

    digital_product(999, {a1});
    auto list = js(api("GET", "/digital_products?store_product_id=7500000001111"));
    EXPECT_EQ(list.at("digital_products").as_array().size(), 1u);
    EXPECT_EQ(js(api("GET", "/digital_products")).at("pagination").at("total_count"), 2);
    EXPECT_EQ(errors_of(api("GET", "/digital_products?per_page=101")), std::vector<std::string>{"per_page must be between 1 and 100"});
    EXPECT_EQ(errors_of(api("GET", "/digital_products?store_product_id=abc")), std::vector<std::string>{"store_product_id is invalid"});

    EXPECT_EQ(api("GET", "/digital_products/" + id).status, 200);
    r = api("DELETE", "/digital_products/" + id);
    EXPECT_EQ(r.status, 204);
    EXPECT_TRUE(r.body.empty());
    r = api("GET", "/digital_products/" + id);
    EXPECT_EQ(r.status, 404);
    EXPECT_EQ(error_of(r), "Digital product not found");
}

TEST_F(sandbox_test, DigitalProductValidation)
{
    const std::string a = licence_asset();
    auto errs = [&](json::object dp) { return errors_of(api("POST", "/digital_products", json::object{{"digital_product", dp}})); };
    EXPECT_EQ(errs({{"asset_ids", json::array{a}}}), std::vector<std::string>{"Store product can't be blank"});
    EXPECT_EQ(errs({{"store_product_id", 1}}), std::vector<std::string>{"Asset ids can't be blank"});
    EXPECT_EQ(errs({{"store_product_id", 1}, {"asset_ids", json::array{}}}), std::vector<std::string>{"Asset ids can't be blank"});
    EXPECT_EQ(errs({{"store_product_id", 1}, {"asset_ids", json::array{"nope"}}}),
              std::vector<std::string>{"Asset ids contain unknown assets"});
    EXPECT_EQ(errs({{"store_product_id", 1}, {"asset_ids", json::array{a}}, {"preorder_enabled", true}}),
              (std::vector<std::string>{"Preorder launch date can't be blank", "Custom message can't be blank"}));
    EXPECT_EQ(errs({{"store_product_id", 1}, {"asset_ids", json::array{a}}, {"preorder_enabled", true},
                    {"custom_message", "Soon"}, {"preorder_launch_date", "2026-11-22T11:59:00Z"}}),
              std::vector<std::string>{"Preorder launch date must be in the future"});
    EXPECT_EQ(errs({{"store_product_id", 1}, {"asset_ids", json::array{a}}, {"preorder_launch_date", "next week"}}),
              std::vector<std::string>{"Preorder launch date is invalid"});
    auto r = api("POST", "/digital_products",
                 json::object{{"digital_product", json::object{{"store_product_id", 1}, {"asset_ids", json::array{a}},
                                                               {"preorder_enabled", true}, {"custom_message", "Soon"},
                                                               {"preorder_launch_date", "2026-11-22T14:00:00+02:00"}}}});
    ASSERT_EQ(r.status, 201) << r.body;  // 12:00Z = exactly two hours ahead
    EXPECT_EQ(js(r).at("digital_product").at("preorder_launch_date"), "2026-11-22T12:00:00.000Z");
    const std::string id(js(r).at("digital_product").at("id").as_string());
    r = api("PATCH", "/digital_products/" + id,
            json::object{{"digital_product", json::object{{"preorder_launch_date", "2026-11-22T10:30:00Z"}}}});
    EXPECT_EQ(errors_of(r), std::vector<std::string>{"Preorder launch date must be in the future"});
    r = api("PATCH", "/digital_products/" + id, json::object{{"digital_product", json::object{{"custom_message", nullptr}}}});
    EXPECT_EQ(errors_of(r), std::vector<std::string>{"Custom message can't be blank"});
    EXPECT_EQ(error_of(api("PATCH", "/digital_products/nope", json::object{{"digital_product", json::object{{"upsert_always", true}}}})),
              "Digital product not found");
}

// --- orders ---------------------------------------------------------------------------
TEST_F(sandbox_test, SeededOrdersLookRealistic)
{
    cfg.seed_orders = 1000;
    auto v = js(api("GET", "/orders?per_page=250"));
    EXPECT_EQ(v.at("pagination"), (json::object{{"current_page", 1}, {"per_page", 250}, {"total_count", 1000}, {"total_pages", 4}}));
    std::set<std::string> statuses, currencies;
    bool null_phone = false, null_fulfillment = false;
    for (int page = 1; page <= 4; ++page) {
        const json::value pv = js(api("GET", "/orders?per_page=250&page=" + std::to_string(page)));
        for (const auto& o : pv.at("orders").as_array()) {
            const auto& ob = o.as_object();
            EXPECT_EQ(keys(ob), (std::set<std::string>{"id", "name", "email", "phone", "financial_status", "fulfillment_status",
                                                        "total_price", "currency", "created_at", "download_count"}));
            statuses.emplace(ob.at("financial_status").as_string());
            currencies.emplace(ob.at("currency").as_string());
            null_phone |= ob.at("phone").is_null();
            null_fulfillment |= ob.at("fulfillment_status").is_null();
            EXPECT_TRUE(std::regex_match(std::string(ob.at("total_price").as_string()), std::regex("^\\d+\\.\\d\\d$")));
            EXPECT_TRUE(is_iso_ms(ob.at("created_at")));
            EXPECT_GE(std::string(ob.at("created_at").as_string()), "2025-11-22");
        }
    }
    EXPECT_EQ(statuses.size(), 7u);
    EXPECT_GE(currencies.size(), 3u);
    EXPECT_TRUE(null_phone);
    EXPECT_TRUE(null_fulfillment);
    // same seed, same data
    auto first = api("GET", "/orders?per_page=1").body;
    svc.reset();
    EXPECT_EQ(api("GET", "/orders?per_page=1").body, first);
}

TEST_F(sandbox_test, OrdersPaginationAndSorts)
{
    auto v = js(api("GET", "/orders?per_page=7&page=9"));
    EXPECT_EQ(v.at("orders").as_array().size(), 4u);  // 60 orders
    EXPECT_EQ(v.at("pagination").at("total_pages"), 9);
    v = js(api("GET", "/orders?per_page=7&page=10"));
    EXPECT_TRUE(v.at("orders").as_array().empty());
    EXPECT_EQ(v.at("pagination").at("current_page"), 10);
    EXPECT_EQ(v.at("pagination").at("total_count"), 60);
    EXPECT_EQ(errors_of(api("GET", "/orders?page=0")), std::vector<std::string>{"page must be at least 1"});
    EXPECT_EQ(errors_of(api("GET", "/orders?per_page=0")), std::vector<std::string>{"per_page must be between 1 and 250"});
    EXPECT_EQ(errors_of(api("GET", "/orders?page=x")), std::vector<std::string>{"page is invalid"});
    EXPECT_EQ(errors_of(api("GET", "/orders?sort=price")), std::vector<std::string>{"sort is invalid"});
    EXPECT_EQ(js(api("GET", "/orders")).at("pagination").at("per_page"), 25);

    auto names = [&](const std::string& sort) {
        std::vector<std::string> n;
        const json::value pv = js(api("GET", "/orders?per_page=250&sort=" + sort));
        for (const auto& o : pv.at("orders").as_array())
            n.emplace_back(o.at(sort.starts_with("name") ? "name" : "created_at").as_string());
        return n;
    };
    auto asc = names("created_at_asc");
    EXPECT_TRUE(std::is_sorted(asc.begin(), asc.end()));
    auto desc = names("created_at_desc");
    EXPECT_TRUE(std::is_sorted(desc.rbegin(), desc.rend()));
    auto nasc = names("name_asc");
    EXPECT_EQ(nasc.front(), "#1001");
    EXPECT_EQ(nasc.back(), "#1060");
    auto ndesc = names("name_desc");
    EXPECT_EQ(ndesc.front(), "#1060");
}

TEST_F(sandbox_test, OrdersFilters)
{
    const std::string oid = purchase(7500000001111LL, "Grace.Hopper@Example.com", {{"financial_status", "pending"}});
    auto count = [&](const std::string& q) {
        auto r = api("GET", "/orders?per_page=250&" + q);
        EXPECT_EQ(r.status, 200) << q << r.body;
        return js(r).at("pagination").at("total_count").as_int64();
    };
    EXPECT_EQ(count("q=grace.hopper%40example"), 1);
    EXPECT_EQ(count("q=%231061"), 1);  // order name
    EXPECT_EQ(count("email=GRACE.HOPPER@"), 1);
    const auto pending = count("status=pending");
    EXPECT_GE(pending, 2);
    EXPECT_EQ(count("status=pending&email=grace.hopper%40"), 1);
    EXPECT_EQ(errors_of(api("GET", "/orders?status=shipped")), std::vector<std::string>{"status is invalid"});
    EXPECT_EQ(errors_of(api("GET", "/orders?store_product_id=1.5")), std::vector<std::string>{"store_product_id is invalid"});
    EXPECT_EQ(errors_of(api("GET", "/orders?created_at_min=2026-13-01")), std::vector<std::string>{"created_at_min is invalid"});
    EXPECT_EQ(errors_of(api("GET", "/orders?created_at_max=yesterday")), std::vector<std::string>{"created_at_max is invalid"});

    const auto by_product = count("store_product_id=7500000001111");
    EXPECT_GE(by_product, 2);  // seeded buyers + ours
    EXPECT_EQ(count("store_product_id=123456"), 0);
    // digital_product_id: orders linked to it; combinable with store_product_id
    const std::string a = licence_asset();
    const std::string dp = digital_product(7500000001111LL, {a});
    EXPECT_EQ(count("digital_product_id=" + dp), by_product);
    EXPECT_EQ(count("digital_product_id=" + dp + "&store_product_id=7500000001111"), by_product);
    const auto both = count("digital_product_id=" + dp + "&store_product_id=7500000002222");
    EXPECT_LT(both, by_product);
    EXPECT_LE(both, count("store_product_id=7500000002222"));
    EXPECT_EQ(count("digital_product_id=" + dp + "&q=grace.hopper%40"), 1);
    EXPECT_EQ(count("digital_product_id=00000000-0000-4000-8000-000000000000"), 0);
    // dates (inclusive)
    EXPECT_EQ(count("created_at_min=2026-11-22&created_at_max=2026-11-22&q=grace.hopper%40"), 1);
    EXPECT_EQ(count("created_at_min=2026-11-23&q=grace.hopper%40"), 0);
    EXPECT_EQ(count("created_at_max=2026-11-21&q=grace.hopper%40"), 0);
    EXPECT_EQ(count("created_at_min=2020-01-01"), 61);
}

TEST_F(sandbox_test, GetOrderAnd404)
{
    const std::string oid = purchase(5);
    auto v = js(api("GET", "/orders/" + oid));
    EXPECT_EQ(v.at("order").at("email"), "buyer@example.com");
    EXPECT_EQ(v.at("order").at("financial_status"), "paid");
    EXPECT_EQ(v.at("order").at("download_count"), 0);
    for (const char* p : {"/orders/nope", "/orders/nope/downloads"}) {
        auto r = api("GET", p);
        EXPECT_EQ(r.status, 404);
        EXPECT_EQ(error_of(r), "Order not found");
    }
}

TEST_F(sandbox_test, AttachAndDetachAssets)
{
    const std::string oid = purchase(5);
    const std::string a1 = licence_asset(), a2 = licence_asset(false);
    auto r = api("POST", "/orders/" + oid + "/attach_assets", json::object{{"asset_ids", json::array{a1}}});
    ASSERT_EQ(r.status, 200) << r.body;
    r = api("POST", "/orders/" + oid + "/attach_assets", json::object{{"asset_ids", json::array{a1, a2}}});
    auto v = js(r);
    EXPECT_EQ(v.at("order").at("id"), oid);
    ASSERT_EQ(v.at("attached_assets").as_array().size(), 2u);  // duplicates ignored
    EXPECT_EQ(keys(v.at("attached_assets").at(0).as_object()),
              (std::set<std::string>{"id", "type", "name", "filename", "content_type", "byte_size"}));
    EXPECT_EQ(downloads(oid).size(), 2u);
    for (const json::value& bad : {json::value(json::object{{"asset_ids", json::array{}}}),
                                   json::value(json::object{{"asset_ids", "x"}}), json::value(json::object{})}) {
        r = api("POST", "/orders/" + oid + "/attach_assets", bad);
        EXPECT_EQ(r.status, 422);
        EXPECT_EQ(r.body, R"({"errors":["asset_ids must be a non-empty array"]})");
    }
    EXPECT_EQ(errors_of(api("POST", "/orders/" + oid + "/attach_assets", json::object{{"asset_ids", json::array{"nope"}}})),
              std::vector<std::string>{"Asset ids contain unknown assets"});
    EXPECT_EQ(error_of(api("POST", "/orders/nope/attach_assets", json::object{{"asset_ids", json::array{a1}}})), "Order not found");

    r = api("DELETE", "/orders/" + oid + "/detach_assets", json::object{{"asset_ids", json::array{a1, "not-attached"}}});
    ASSERT_EQ(r.status, 200) << r.body;
    v = js(r);
    ASSERT_EQ(v.at("attached_assets").as_array().size(), 1u);
    EXPECT_EQ(v.at("attached_assets").at(0).at("id"), a2);
    EXPECT_EQ(downloads(oid).size(), 1u);
    EXPECT_EQ(errors_of(api("DELETE", "/orders/" + oid + "/detach_assets", json::object{{"asset_ids", json::array{}}})),
              std::vector<std::string>{"asset_ids must be a non-empty array"});
    // deleting an asset unlinks it from attachments
    EXPECT_EQ(api("DELETE", "/assets/" + a2).status, 204);
    EXPECT_TRUE(downloads(oid).empty());
}

TEST_F(sandbox_test, NotifyOrder)
{
    const std::string oid = purchase(5);
    now += std::chrono::seconds(30);
    auto r = api("POST", "/orders/" + oid + "/notify");
    ASSERT_EQ(r.status, 200) << r.body;
    auto v = js(r);
    EXPECT_EQ(v.at("notified"), true);
    EXPECT_EQ(v.at("notified_at"), "2026-11-22T10:00:30.000Z");
    EXPECT_EQ(v.at("order").at("id"), oid);
    r = api("POST", "/orders/" + oid + "/notify", json::object{{"email", "other@example.com"}});
    EXPECT_EQ(r.status, 200);
    auto box = outbox();
    ASSERT_EQ(box.size(), 2u);  // no digital product linked: no delivery email on purchase
    EXPECT_EQ(box[0].at("kind"), "notify");
    EXPECT_EQ(box[0].at("to"), "buyer@example.com");
    EXPECT_EQ(box[1].at("to"), "other@example.com");
    EXPECT_NE(std::string(box[0].at("subject").as_string()).find(std::string(js(api("GET", "/orders/" + oid)).at("order").at("name").as_string())), std::string::npos);

    const std::string no_email = purchase(5, nullptr);
    EXPECT_EQ(js(api("GET", "/orders/" + no_email)).at("order").at("email"), "");
    r = api("POST", "/orders/" + no_email + "/notify");
    EXPECT_EQ(r.status, 422);
    EXPECT_EQ(error_of(r), "Order has no customer email. Provide an email parameter.");
    EXPECT_EQ(api("POST", "/orders/" + no_email + "/notify", json::object{{"email", "x@example.com"}}).status, 200);
    EXPECT_EQ(error_of(api("POST", "/orders/nope/notify")), "Order not found");
}

TEST_F(sandbox_test, NotifyBuyers)
{
    const std::string a = licence_asset(false);
    const std::string dp = digital_product(4242, {a});
    auto r = api("POST", "/digital_products/" + dp + "/notify_buyers");
    EXPECT_EQ(r.status, 422);
    EXPECT_EQ(error_of(r), "This digital product has no orders to notify");
    purchase(4242, "a@example.com", {{"customer_name", "Ada"}});
    purchase(4242, "b@example.com", {{"customer_name", "Bob"}});
    purchase(4243, "c@example.com");
    const auto before = outbox().size();
    r = api("POST", "/digital_products/" + dp + "/notify_buyers",
            json::object{{"subject", "{{ order.name }} from {{shop.name}}"}, {"body", "Hi {{ customer.name }}"}});
    ASSERT_EQ(r.status, 202) << r.body;
    EXPECT_EQ(js(r), (json::object{{"digital_product_id", dp}, {"notified_count", 2}}));
    auto box = outbox();
    ASSERT_EQ(box.size(), before + 2);
    EXPECT_EQ(box[before].at("kind"), "notify_buyers");
    // The body, then the link of the order's download page (the same as the outbox's
    // download_page_url and GET /sandbox/orders/{id}/download_page).
    for (std::size_t i : {before, before + 1}) {
        const std::string page = std::string(box[i].at("download_page_url").as_string());
        EXPECT_TRUE(page.starts_with(cfg.public_url + "/download-page/")) << page;
        EXPECT_EQ(page, std::string(js(call("GET", "/sandbox/orders/" +
                                                         std::string(box[i].at("order_id").as_string()) +
                                                         "/download_page")).at("download_page_url").as_string()));
        EXPECT_EQ(box[i].at("body"), (i == before ? "Hi Ada" : "Hi Bob") + std::string("\n\nYour download page: ") + page);
    }
    EXPECT_NE(std::string(box[before].at("subject").as_string()).find(" from Sandbox Store"), std::string::npos);
    EXPECT_EQ(std::string(box[before].at("subject").as_string()).front(), '#');
    // default subject/body with no body
    r = api("POST", "/digital_products/" + dp + "/notify_buyers");
    EXPECT_EQ(r.status, 202);
    EXPECT_EQ(outbox().back().at("subject"), "Your downloads from Sandbox Store - order " +
                                                 std::string(js(api("GET", "/orders?q=b%40example.com")).at("orders").at(0).at("name").as_string()));
    EXPECT_EQ(error_of(api("POST", "/digital_products/nope/notify_buyers")), "Digital product not found");
}
