// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Several stores in one sandbox (store_registry): POST/DELETE /sandbox/stores,
// routing by X-Auth-Token and by the /stores/<id> prefix of storage URLs,
// isolation of state, quotas, rate limit and clock; and the one option parser
// of the command line and of store options.
#include "helpers.hpp"
#include "options.hpp"
#include "stores.hpp"

#include <filesystem>
#include <regex>
#include <set>

using namespace sbt;
namespace fs = std::filesystem;

namespace {

std::set<std::string> keys(const json::object& o)
{
    std::set<std::string> k;
    for (const auto& [key, v] : o)
        k.emplace(key);
    return k;
}

json::array strings(std::initializer_list<const char*> l)
{
    json::array a;
    for (const char* s : l)
        a.emplace_back(s);
    return a;
}

class stores_test : public ::testing::Test {
protected:
    static constexpr const char* host = "sandbox.test:9000";
    static constexpr const char* origin = "http://sandbox.test:9000";
    static constexpr const char* admin = "admin-key";
    fs::path dir;
    sandbox_config cfg;  // the default store (the command line's)
    std::unique_ptr<store_registry> registry;
    time_point now = at("2026-11-22T10:00:00.000Z");

    struct made {
        std::string id, key;
    };

    void SetUp() override
    {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir = fs::temp_directory_path() / (std::string("dd-sandbox-test-") + info->test_suite_name() +
                                           "-" + info->name() + "-" + std::to_string(::getpid()));
        fs::remove_all(dir);
        fs::create_directories(dir);
        cfg.api_key = admin;
        cfg.data_dir = dir.string();
        cfg.public_url = origin;
        cfg.seed_orders = 3;
    }
    void TearDown() override
    {
        registry.reset();
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    store_registry& reg()
    {
        if (!registry)
            registry = std::make_unique<store_registry>(cfg, now);
        return *registry;
    }
    // token empty: no X-Auth-Token
    response call(const std::string& method, const std::string& target, const std::string& token,
                  const std::string& body = {}, header_list extra = {})
    {
        request r;
        r.method = method;
        r.target = target;
        if (!token.empty())
            r.headers.emplace_back("X-Auth-Token", token);
        if (!body.empty())
            r.headers.emplace_back("Content-Type", "application/json");
        for (auto& h : extra)
            r.headers.push_back(h);
        r.body = body;
        return reg().handle(r, now);
    }
    response api(const std::string& token, const std::string& method, const std::string& path,
                 const json::value& body = nullptr)
    {
        return call(method, "/api/v1/external" + path, token, body.is_null() ? "" : json::serialize(body));
    }
    response create(const json::value& body, const std::string& token = admin)
    {
        return call("POST", "/sandbox/stores", token, json::serialize(body));
    }
    made make(json::array options = {}, const std::string& api_key = {})
    {
        json::object body{{"options", std::move(options)}};
        if (!api_key.empty())
            body["api_key"] = api_key;
        auto r = create(body);
        EXPECT_EQ(r.status, 201) << r.body;
        if (r.status != 201)
            return {};
        const auto s = js(r).at("store");
        return {std::string(s.at("id").as_string()), std::string(s.at("api_key").as_string())};
    }
    std::int64_t order_count(const std::string& token)
    {
        auto r = api(token, "GET", "/orders?per_page=1");
        EXPECT_EQ(r.status, 200) << r.body;
        return r.status == 200 ? js(r).at("pagination").at("total_count").as_int64() : -1;
    }
    std::int64_t asset_count(const std::string& token)
    {
        auto r = api(token, "GET", "/assets");
        EXPECT_EQ(r.status, 200) << r.body;
        return r.status == 200 ? js(r).at("pagination").at("total_count").as_int64() : -1;
    }
    response new_asset(const std::string& token, const std::string& filename, std::size_t size)
    {
        return api(token, "POST", "/assets",
                   json::object{{"asset", json::object{{"type", "internal"},
                                                       {"filename", filename},
                                                       {"byte_size", size},
                                                       {"content_type", "application/pdf"}}}});
    }
    response new_licence(const std::string& token)
    {
        return api(token, "POST", "/assets",
                   json::object{{"asset", json::object{{"type", "licence"}, {"name", "Key"}}}});
    }
    static std::string target_of(const std::string& url)
    {
        EXPECT_EQ(url.rfind(origin, 0), 0u) << url;
        return url.substr(std::string_view(origin).size());
    }
    // a storage request as a client would send it to the URL
    request storage_request(const std::string& method, const std::string& target, const std::string& data,
                            const header_list& headers)
    {
        request r;
        r.method = method;
        r.target = target;
        r.headers.emplace_back("Host", host);
        if (method == "PUT")
            r.headers.emplace_back("Content-Length", std::to_string(data.size()));
        for (const auto& h : headers)
            r.headers.push_back(h);
        r.body = data;
        return r;
    }
    response storage(const std::string& method, const std::string& target, const std::string& data = {},
                     const header_list& headers = {})
    {
        return reg().handle(storage_request(method, target, data, headers), now);
    }
    static std::string read_file(const fs::path& p)
    {
        std::ifstream f(p, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(f), {});
    }
    static std::vector<fs::path> files_under(const fs::path& p)
    {
        std::vector<fs::path> out;
        if (fs::exists(p))
            for (const auto& e : fs::recursive_directory_iterator(p))
                if (e.is_regular_file())
                    out.push_back(e.path());
        return out;
    }
};

} // namespace

// --- POST /sandbox/stores --------------------------------------------------------
TEST_F(stores_test, CreateAnswers201WithIdKeyAndBaseUrl)
{
    auto r = create(json::object{{"options", strings({"--seed-orders", "5"})}});
    ASSERT_EQ(r.status, 201) << r.body;
    EXPECT_EQ(*r.header("Content-Type"), "application/json; charset=utf-8");
    const auto v = js(r);
    EXPECT_EQ(keys(v.as_object()), (std::set<std::string>{"store"}));
    const auto& s = v.at("store").as_object();
    EXPECT_EQ(keys(s), (std::set<std::string>{"id", "api_key", "base_url"}));
    EXPECT_EQ(s.at("id"), std::string("s1"));
    EXPECT_EQ(s.at("base_url"), std::string("http://sandbox.test:9000/api/v1/external"));
    const std::string key(s.at("api_key").as_string());
    EXPECT_TRUE(std::regex_match(key, std::regex("^store-s1-[0-9a-f]{16}$"))) << key;
    EXPECT_TRUE(fs::is_directory(dir / "stores" / "s1"));
    EXPECT_EQ(reg().created_count(), 1u);

    // an empty body is a store with the built-in defaults
    r = call("POST", "/sandbox/stores", admin);
    ASSERT_EQ(r.status, 201) << r.body;
    const auto s2 = js(r).at("store");
    EXPECT_EQ(s2.at("id"), std::string("s2"));
    EXPECT_NE(std::string(s2.at("api_key").as_string()), key);
    EXPECT_TRUE(fs::is_directory(dir / "stores" / "s2"));
    EXPECT_NE(reg().find("s2"), nullptr);
    EXPECT_EQ(reg().find("default"), &reg().default_store());
    EXPECT_EQ(reg().find("s3"), nullptr);
}

TEST_F(stores_test, OptionsTakeBothFormsAndDefaultsAreTheBuiltInOnes)
{
    cfg.rate_limit = false;  // the default store: no rate limit, 3 orders
    const auto plain = make();
    auto r = api(plain.key, "GET", "/orders?per_page=1");
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(js(r).at("pagination").at("total_count").as_int64(), 1000);  // built-in --seed-orders
    ASSERT_NE(r.header("X-RateLimit-Limit"), nullptr);
    EXPECT_EQ(*r.header("X-RateLimit-Limit"), "40");  // built-in rate limit
    EXPECT_EQ(api(admin, "GET", "/orders").header("X-RateLimit-Limit"), nullptr);

    const auto tuned = make(strings({"--seed-orders=2", "--rate-limit-points", "3"}));
    r = api(tuned.key, "GET", "/orders?per_page=1");
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(js(r).at("pagination").at("total_count").as_int64(), 2);
    EXPECT_EQ(*r.header("X-RateLimit-Limit"), "3");
}

TEST_F(stores_test, OptionErrorsAre422WithTheParsersMessage)
{
    const std::vector<std::pair<json::array, std::string>> cases = {
        {strings({"--bogus"}), "unknown option --bogus"},
        {strings({"5"}), "unknown option 5"},
        {strings({"--seed-orders", "abc"}), "invalid value for --seed-orders: abc"},
        {strings({"--seed-orders=-1"}), "invalid value for --seed-orders: -1"},
        {strings({"--seed-orders", "1000001"}), "invalid value for --seed-orders: 1000001"},
        {strings({"--no-rate-limit", "--seed-orders"}), "missing value for --seed-orders"},
        {strings({"--watermark", "maybe"}), "--watermark takes on or off"},
        {strings({"--rate-limit-window-seconds", "0"}), "invalid value for --rate-limit-window-seconds: 0"},
        {strings({"--rate-limit-points", "0"}), "invalid value for --rate-limit-points: 0"},
        {strings({"--no-rate-limit=yes"}), "--no-rate-limit takes no value"},
        {strings({"--upload-url-ttl-seconds", "604801"}), "--upload-url-ttl-seconds must be at most 604800"},
        // process-level flags are the command line's only
        {strings({"--port", "8080"}), "--port configures the whole process, not a store"},
        {strings({"--host", "0.0.0.0"}), "--host configures the whole process, not a store"},
        {strings({"--data-dir", "/tmp"}), "--data-dir configures the whole process, not a store"},
        {strings({"--public-url", "http://x"}), "--public-url configures the whole process, not a store"},
        {strings({"--api-key=k"}), "--api-key configures the whole process, not a store"},
        {strings({"--help"}), "--help configures the whole process, not a store"},
    };
    for (const auto& [options, message] : cases) {
        auto r = create(json::object{{"options", options}});
        EXPECT_EQ(r.status, 422) << json::serialize(options);
        EXPECT_EQ(errors_of(r), std::vector<std::string>{message}) << json::serialize(options);
    }
    for (const json::value& options : {json::value("--no-rate-limit"), json::value(json::array{5}),
                                       json::value(json::object{})}) {
        auto r = create(json::object{{"options", options}});
        EXPECT_EQ(r.status, 422);
        EXPECT_EQ(errors_of(r), std::vector<std::string>{"options must be an array of strings"});
    }
    for (const char* body : {"[]", "{", "\"x\""}) {
        auto r = call("POST", "/sandbox/stores", admin, body);
        EXPECT_EQ(r.status, 400) << body;
        EXPECT_EQ(error_of(r), "Malformed JSON body");
    }
    EXPECT_EQ(reg().created_count(), 0u);
    EXPECT_TRUE(files_under(dir / "stores").empty());
    EXPECT_EQ(make().id, "s1");  // refusals use no id
}

TEST_F(stores_test, GivenApiKeyMustBeNonEmptyAndUnused)
{
    const auto mine = make({}, "my-store-key");
    EXPECT_EQ(mine.key, "my-store-key");
    EXPECT_EQ(api("my-store-key", "GET", "/orders").status, 200);

    for (const char* used : {"my-store-key", admin}) {
        auto r = create(json::object{{"api_key", used}});
        EXPECT_EQ(r.status, 409) << used;
        EXPECT_EQ(error_of(r), "api_key is already in use");
    }
    for (const json::value& bad : {json::value(""), json::value(5), json::value(json::array{})}) {
        auto r = create(json::object{{"api_key", bad}});
        EXPECT_EQ(r.status, 422) << json::serialize(bad);
        EXPECT_EQ(errors_of(r), std::vector<std::string>{"api_key must be a non-empty string"});
    }
    auto r = create(json::object{{"api_key", "a\r\nb"}});
    EXPECT_EQ(r.status, 422);
    EXPECT_EQ(errors_of(r), std::vector<std::string>{"api_key must not contain control characters"});
    EXPECT_EQ(reg().created_count(), 1u);

    r = create(json::object{{"api_key", nullptr}});  // null: generated
    ASSERT_EQ(r.status, 201);
    EXPECT_EQ(std::string(js(r).at("store").at("api_key").as_string()).rfind("store-s2-", 0), 0u);
}

TEST_F(stores_test, ManagingStoresNeedsTheDefaultStoresKey)
{
    const auto s1 = make();
    for (const std::string& token : {std::string(), s1.key, std::string("nope")}) {
        auto r = call("POST", "/sandbox/stores", token, "{}");
        EXPECT_EQ(r.status, 401) << token;
        EXPECT_EQ(r.body, R"({"error":"Invalid API key"})");
        r = call("DELETE", "/sandbox/stores/" + s1.id, token);
        EXPECT_EQ(r.status, 401) << token;
    }
    EXPECT_EQ(call("GET", "/sandbox/stores", admin).status, 404);
    EXPECT_EQ(call("PUT", "/sandbox/stores/s1", admin).status, 404);
    EXPECT_EQ(call("DELETE", "/sandbox/stores/", admin).status, 404);
    EXPECT_EQ(reg().created_count(), 1u);
    EXPECT_EQ(order_count(s1.key), 1000);
}

// --- routing by key ------------------------------------------------------------------
TEST_F(stores_test, ApiAndSandboxRequestsGoToTheStoreOfTheKey)
{
    const auto five = make(strings({"--seed-orders", "5"}));
    const auto seven = make(strings({"--seed-orders", "7"}));
    EXPECT_EQ(order_count(admin), 3);
    EXPECT_EQ(order_count(five.key), 5);
    EXPECT_EQ(order_count(seven.key), 7);

    // /sandbox/... too: a purchase lands in the store of the key
    auto r = call("POST", "/sandbox/purchases", five.key, R"({"store_product_id": 7500000001111})");
    ASSERT_EQ(r.status, 201) << r.body;
    EXPECT_EQ(js(r).at("order").at("name"), std::string("#1006"));
    EXPECT_EQ(order_count(five.key), 6);
    EXPECT_EQ(order_count(seven.key), 7);
    EXPECT_EQ(order_count(admin), 3);

    // a created store answers unknown routes like any store
    r = api(five.key, "GET", "/nothing");
    EXPECT_EQ(r.status, 404);
    EXPECT_EQ(r.body, R"({"error":"Not found"})");
}

TEST_F(stores_test, UnknownOrMissingKeyIsAnsweredByTheDefaultStore)
{
    const auto s1 = make();
    for (const std::string& token : {std::string(), std::string("nope"), s1.key + "x"}) {
        auto r = api(token, "GET", "/orders");
        EXPECT_EQ(r.status, 401) << token;
        EXPECT_EQ(r.body, R"({"error":"Invalid API key"})");
        EXPECT_EQ(call("GET", "/sandbox/outbox", token).status, 401);
    }
    EXPECT_EQ(call("GET", "/sandbox/health", "").body, R"({"status":"ok","service":"digital-delivery-sandbox"})");
    EXPECT_EQ(call("GET", "/elsewhere", "").status, 404);
}

// --- isolation -------------------------------------------------------------------------
TEST_F(stores_test, StateAndOutboxAreIsolated)
{
    const auto a = make(strings({"--seed-orders", "2"}));
    const auto b = make(strings({"--seed-orders", "2"}));  // same seed: same ids
    auto r = new_licence(a.key);
    ASSERT_EQ(r.status, 201) << r.body;
    const std::string asset_id(js(r).at("asset").at("id").as_string());
    EXPECT_EQ(asset_count(a.key), 1);
    EXPECT_EQ(asset_count(b.key), 0);
    EXPECT_EQ(asset_count(admin), 0);
    EXPECT_EQ(api(b.key, "GET", "/assets/" + asset_id).status, 404);
    EXPECT_EQ(api(b.key, "DELETE", "/assets/" + asset_id).status, 404);
    EXPECT_EQ(api(a.key, "GET", "/assets/" + asset_id).status, 200);

    r = api(a.key, "GET", "/orders?per_page=1");
    ASSERT_EQ(r.status, 200);
    const std::string order_id(js(r).at("orders").at(0).at("id").as_string());
    r = api(a.key, "POST", "/orders/" + order_id + "/notify", json::object{{"email", "x@example.com"}});
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(js(call("GET", "/sandbox/outbox", a.key)).at("emails").as_array().size(), 1u);
    EXPECT_EQ(js(call("GET", "/sandbox/outbox", b.key)).at("emails").as_array().size(), 0u);
    EXPECT_EQ(js(call("GET", "/sandbox/outbox", admin)).at("emails").as_array().size(), 0u);
}

TEST_F(stores_test, QuotasAreIsolated)
{
    const auto one = make(strings({"--quota-asset-count", "1", "--quota-storage-bytes", "10"}));
    const auto roomy = make();
    EXPECT_EQ(new_licence(one.key).status, 201);
    auto r = new_licence(one.key);
    EXPECT_EQ(r.status, 422);
    EXPECT_EQ(js(r).at("code"), std::string("asset_count_limit_exceeded"));
    EXPECT_EQ(new_licence(roomy.key).status, 201);
    EXPECT_EQ(new_licence(roomy.key).status, 201);

    const auto small = make(strings({"--quota-storage-bytes", "10"}));
    r = new_asset(small.key, "a.pdf", 11);
    EXPECT_EQ(r.status, 422);
    EXPECT_EQ(js(r).at("code"), std::string("asset_storage_limit_exceeded"));
    EXPECT_EQ(new_asset(roomy.key, "a.pdf", 11).status, 201);
    EXPECT_EQ(new_asset(admin, "a.pdf", 11).status, 201);
}

TEST_F(stores_test, RateLimitBucketsAreIsolated)
{
    const auto tight = make(strings({"--rate-limit-points", "2"}));
    const auto plain = make();
    const auto unlimited = make(strings({"--no-rate-limit"}));
    EXPECT_EQ(api(tight.key, "GET", "/orders").status, 200);
    EXPECT_EQ(api(tight.key, "GET", "/orders").status, 200);
    auto r = api(tight.key, "GET", "/orders");
    EXPECT_EQ(r.status, 429);
    ASSERT_NE(r.header("Retry-After"), nullptr);

    r = api(plain.key, "GET", "/orders");
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(*r.header("X-RateLimit-Limit"), "40");
    EXPECT_EQ(*r.header("X-RateLimit-Remaining"), "39");
    r = api(admin, "GET", "/orders");
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(*r.header("X-RateLimit-Remaining"), "39");
    for (int i = 0; i < 50; ++i)
        ASSERT_EQ(api(unlimited.key, "GET", "/orders").status, 200);
    EXPECT_EQ(api(unlimited.key, "GET", "/orders").header("X-RateLimit-Limit"), nullptr);
}

TEST_F(stores_test, ClocksAreIsolated)
{
    const auto a = make();
    const auto b = make();
    auto r = call("POST", "/sandbox/clock", a.key, R"({"advance_seconds": 3600})");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(js(r).at("offset_ms").as_int64(), 3600000);
    r = call("GET", "/sandbox/clock", a.key);
    EXPECT_EQ(js(r).at("offset_ms").as_int64(), 3600000);
    EXPECT_EQ(js(r).at("now"), std::string("2026-11-22T11:00:00.000Z"));
    for (const std::string& token : {b.key, std::string(admin)}) {
        r = call("GET", "/sandbox/clock", token);
        EXPECT_EQ(js(r).at("offset_ms").as_int64(), 0);
        EXPECT_EQ(js(r).at("now"), std::string("2026-11-22T10:00:00.000Z"));
    }
}

// --- storage through the /stores/<id> prefix -----------------------------------------------
TEST_F(stores_test, UploadAndDownloadThroughAStoresPrefixedUrls)
{
    const std::string data = "%PDF-1.4 hello from s1";
    const auto a = make(strings({"--seed-orders", "1"}));
    const auto b = make(strings({"--seed-orders", "1"}));  // same seed: same ids and keys as a
    auto r = new_asset(a.key, "Guide.pdf", data.size());
    ASSERT_EQ(r.status, 201) << r.body;
    const auto created = js(r);
    const std::string asset_id(created.at("asset").at("id").as_string());
    const std::string url(created.at("upload").at("url").as_string());
    EXPECT_EQ(url.rfind("http://sandbox.test:9000/stores/s1/storage/sandbox-assets/assets/", 0), 0u) << url;
    const header_list headers = upload_headers(created);
    const std::string target = target_of(url);
    ASSERT_EQ(new_asset(b.key, "Guide.pdf", data.size()).status, 201);

    // another store's prefix, or none (the default store), does not take it
    const std::string unprefixed = target.substr(std::string_view("/stores/s1").size());
    for (const std::string& t : {"/stores/s2" + unprefixed, unprefixed}) {
        r = storage("PUT", t, data, headers);
        EXPECT_EQ(r.status, 403) << t;
        EXPECT_NE(r.body.find("<Code>SignatureDoesNotMatch</Code>"), std::string::npos) << r.body;
    }

    r = storage("PUT", target, data, headers);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_NE(r.header("ETag"), nullptr);
    const auto objects = files_under(dir / "stores" / "s1" / "objects");
    ASSERT_EQ(objects.size(), 1u);
    EXPECT_EQ(read_file(objects[0]), data);
    EXPECT_TRUE(files_under(dir / "objects").empty());
    EXPECT_TRUE(files_under(dir / "stores" / "s2" / "objects").empty());

    // the two phases of a streamed PUT (the front end's path), through the registry
    EXPECT_TRUE(store_registry::is_storage_upload("PUT", target));
    EXPECT_TRUE(store_registry::is_storage_upload("PUT", "/storage/sandbox-assets/x"));
    EXPECT_FALSE(store_registry::is_storage_upload("GET", target));
    EXPECT_FALSE(store_registry::is_storage_upload("PUT", "/api/v1/external/assets/x"));
    const std::string data2 = "%PDF-1.4 HELLO FROM S1";
    ASSERT_EQ(data2.size(), data.size());
    auto header_only = storage_request("PUT", target, data2, headers);
    header_only.body.clear();
    auto begun = reg().begin_upload(header_only, now);
    ASSERT_TRUE(std::holds_alternative<upload_ticket>(begun)) << std::get<response>(begun).body;
    const auto ticket = std::get<upload_ticket>(begun);
    EXPECT_EQ(ticket.store_id, "s1");
    EXPECT_EQ(ticket.length, data2.size());
    EXPECT_EQ(fs::path(ticket.temp_path).parent_path(), dir / "stores" / "s1" / "tmp");
    std::ofstream(ticket.temp_path, std::ios::binary) << data2;
    r = reg().finish_upload(ticket, data2.size(), now);
    ASSERT_EQ(r.status, 200) << r.body;

    // a purchase, and its download URL under the same prefix
    r = api(a.key, "POST", "/digital_products",
            json::object{{"digital_product", json::object{{"store_product_id", 7500000001111},
                                                          {"asset_ids", json::array{asset_id.c_str()}}}}});
    ASSERT_EQ(r.status, 201) << r.body;
    r = call("POST", "/sandbox/purchases", a.key, R"({"store_product_id": 7500000001111})");
    ASSERT_EQ(r.status, 201) << r.body;
    const std::string order_id(js(r).at("order").at("id").as_string());
    r = api(a.key, "GET", "/orders/" + order_id + "/downloads");
    ASSERT_EQ(r.status, 200) << r.body;
    const std::string download(js(r).at("downloads").at(0).at("download_url").as_string());
    EXPECT_EQ(download.rfind("http://sandbox.test:9000/stores/s1/storage/sandbox-assets/downloads/", 0), 0u)
        << download;
    r = storage("GET", target_of(download));
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(read_file(r.file_path), data2);
    r = api(a.key, "GET", "/orders/" + order_id + "/downloads");
    EXPECT_EQ(js(r).at("downloads").at(0).at("download_count").as_int64(), 1);
}

TEST_F(stores_test, UnknownStorePrefixIsNoSuchKey)
{
    const auto a = make();
    for (const char* t : {"/stores/s9/storage/sandbox-assets/downloads/x/y.pdf?X-Amz-Signature=0",
                                "/stores/s1/other", "/stores/s1", "/stores/"}) {
        auto r = storage("GET", t);
        EXPECT_EQ(r.status, 404) << t;
        EXPECT_NE(r.body.find("<Code>NoSuchKey</Code>"), std::string::npos) << r.body;
        EXPECT_EQ(*r.header("Content-Type"), "application/xml");
    }
    // a streamed PUT is refused from its header, and the connection closed
    auto begun = reg().begin_upload(
        storage_request("PUT", "/stores/s9/storage/sandbox-assets/assets/a/b/c.pdf", "abc", {}), now);
    ASSERT_TRUE(std::holds_alternative<response>(begun));
    const auto& refusal = std::get<response>(begun);
    EXPECT_EQ(refusal.status, 404);
    EXPECT_NE(refusal.body.find("<Code>NoSuchKey</Code>"), std::string::npos);
    EXPECT_TRUE(refusal.close);
}

// --- DELETE /sandbox/stores/{id} ---------------------------------------------------------
TEST_F(stores_test, DeleteRemovesTheStoreAndItsFiles)
{
    const auto a = make();
    auto r = new_asset(a.key, "a.pdf", 3);
    ASSERT_EQ(r.status, 201);
    const auto created = js(r);
    const header_list headers = upload_headers(created);
    const std::string target = target_of(upload_url(created));
    ASSERT_EQ(storage("PUT", target, "abc", headers).status, 200);
    ASSERT_FALSE(files_under(dir / "stores" / "s1").empty());

    r = call("DELETE", "/sandbox/stores/s1", admin);
    EXPECT_EQ(r.status, 204);
    EXPECT_TRUE(r.body.empty());
    EXPECT_FALSE(fs::exists(dir / "stores" / "s1"));
    EXPECT_EQ(reg().created_count(), 0u);
    EXPECT_EQ(reg().find("s1"), nullptr);
    EXPECT_EQ(api(a.key, "GET", "/orders").status, 401);  // its key is unknown now
    EXPECT_EQ(storage("PUT", target, "abc", headers).status, 404);

    r = call("DELETE", "/sandbox/stores/s1", admin);
    EXPECT_EQ(r.status, 404);
    EXPECT_EQ(error_of(r), "Store not found");
    r = call("DELETE", "/sandbox/stores/default", admin);
    EXPECT_EQ(r.status, 422);
    EXPECT_EQ(error_of(r), "The default store cannot be deleted");
    EXPECT_EQ(order_count(admin), 3);

    // ids are not reused; the key is free again
    EXPECT_EQ(make({}, a.key).id, "s2");
}

TEST_F(stores_test, StoreDeletedWhileItsUploadStreams)
{
    const auto a = make();
    auto r = new_asset(a.key, "a.pdf", 3);
    ASSERT_EQ(r.status, 201);
    const auto created = js(r);
    const header_list headers = upload_headers(created);
    const std::string target = target_of(upload_url(created));
    auto header_only = storage_request("PUT", target, "abc", headers);
    header_only.body.clear();
    auto begun = reg().begin_upload(header_only, now);
    ASSERT_TRUE(std::holds_alternative<upload_ticket>(begun)) << std::get<response>(begun).body;
    const auto ticket = std::get<upload_ticket>(begun);
    std::ofstream(ticket.temp_path, std::ios::binary) << "abc";

    ASSERT_EQ(call("DELETE", "/sandbox/stores/s1", admin).status, 204);
    r = reg().finish_upload(ticket, 3, now);
    EXPECT_EQ(r.status, 404);
    EXPECT_NE(r.body.find("<Code>NoSuchKey</Code>"), std::string::npos);
    EXPECT_FALSE(fs::exists(ticket.temp_path));
    reg().abort_upload(ticket);  // harmless for a store that is gone
}

TEST_F(stores_test, RegistryRemovesTheCreatedStoresDirectoriesWhenDestroyed)
{
    make();
    make();
    ASSERT_TRUE(fs::is_directory(dir / "stores" / "s2"));
    registry.reset();
    EXPECT_FALSE(fs::exists(dir / "stores"));
    EXPECT_TRUE(fs::is_directory(dir));  // the default store's directory is the caller's
}

// --- the one option parser ---------------------------------------------------------------
TEST(Options, CommandLineTakesProcessAndStoreFlags)
{
    sandbox_config cfg;
    process_options p;
    const auto err = parse_options({"--host", "0.0.0.0", "--port=8080", "--api-key", "k", "--data-dir", "/d",
                                    "--public-url=http://p", "--seed-orders", "5", "--no-rate-limit",
                                    "--watermark=off", "--download-limit", "3"},
                                   cfg, &p);
    EXPECT_FALSE(err) << err.value_or("");
    EXPECT_EQ(p.host, "0.0.0.0");
    EXPECT_EQ(p.port, 8080);
    EXPECT_TRUE(p.data_dir_given);
    EXPECT_TRUE(p.public_url_given);
    EXPECT_FALSE(p.help);
    EXPECT_EQ(cfg.api_key, "k");
    EXPECT_EQ(cfg.data_dir, "/d");
    EXPECT_EQ(cfg.public_url, "http://p");
    EXPECT_EQ(cfg.seed_orders, 5);
    EXPECT_FALSE(cfg.rate_limit);
    EXPECT_FALSE(cfg.watermark);
    EXPECT_EQ(cfg.download_limit, 3);
    EXPECT_EQ(cfg.quota_asset_count, sandbox_config{}.quota_asset_count);
}

TEST(Options, CommandLineErrorsAndHelp)
{
    auto parse = [](std::vector<std::string> args, process_options* p = nullptr) {
        sandbox_config cfg;
        process_options local;
        return parse_options(args, cfg, p ? p : &local);
    };
    EXPECT_EQ(parse({"--port", "65536"}), "invalid value for --port: 65536");
    EXPECT_EQ(parse({"--api-key="}), "--api-key must not be empty");
    EXPECT_EQ(parse({"--host"}), "missing value for --host");
    EXPECT_EQ(parse({"--bogus", "--help"}), "unknown option --bogus");
    process_options p;
    EXPECT_FALSE(parse({"--seed", "1", "-h", "--bogus"}, &p));  // stops at --help
    EXPECT_TRUE(p.help);
}

TEST(Options, StoreOptionsRefuseProcessFlags)
{
    sandbox_config cfg;
    EXPECT_FALSE(parse_options({"--seed-orders", "4", "--rate-limit-window-seconds=0.5"}, cfg, nullptr));
    EXPECT_EQ(cfg.seed_orders, 4);
    EXPECT_EQ(cfg.rate_limit_window_seconds, 0.5);
    // Every process flag docs/sandbox.md lists for POST /sandbox/stores.
    for (const char* flag : {"--host", "--port", "--api-key", "--data-dir", "--public-url", "--max-open-files", "--log-file",
                             "--help", "-h"})
        EXPECT_EQ(parse_options({flag, "x"}, cfg, nullptr),
                  std::string(flag) + " configures the whole process, not a store");
    EXPECT_TRUE(is_process_flag("--port"));
    EXPECT_FALSE(is_process_flag("--seed"));
}
