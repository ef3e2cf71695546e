// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Shared fixture for the sandbox core's unit tests: a service with a fake clock.
#pragma once

#include "service.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <concepts>
#include <filesystem>
#include <fstream>
#include <memory>

// Test-only convenience: compare a JSON value with a std::string (found by ADL).
namespace boost::json {
template <class T>
    requires std::same_as<T, std::string>
bool operator==(const value& v, const T& s)
{
    return v.is_string() && v.get_string() == s;
}
} // namespace boost::json

namespace sbt {

namespace json = boost::json;
using namespace dd_sandbox;

inline time_point at(const char* iso)
{
    return *parse_iso8601(iso);
}

// A response's JSON body, its "error" message, its "errors" list.
inline json::value js(const response& r) { return json::parse(r.body); }
inline std::string error_of(const response& r) { return std::string(js(r).at("error").as_string()); }
inline std::vector<std::string> errors_of(const response& r)
{
    std::vector<std::string> out;
    const json::value v = js(r);
    for (const auto& e : v.at("errors").as_array())
        out.emplace_back(e.as_string());
    return out;
}

// The presigned URL and the signed headers of a create/replace answer's "upload".
inline std::string upload_url(const json::value& answer) { return std::string(answer.at("upload").at("url").as_string()); }
inline header_list upload_headers(const json::value& answer)
{
    header_list headers;
    for (const auto& [k, v] : answer.at("upload").at("headers").as_object())
        headers.emplace_back(std::string(k), std::string(v.as_string()));
    return headers;
}

class sandbox_test : public ::testing::Test {
protected:
    static constexpr const char* host = "sandbox.test:9000";
    std::filesystem::path dir;
    sandbox_config cfg;
    std::unique_ptr<service> svc;
    time_point now = at("2026-11-22T10:00:00.000Z");

    void SetUp() override
    {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir = std::filesystem::temp_directory_path() /
              (std::string("dd-sandbox-test-") + info->test_suite_name() + "-" + info->name() + "-" +
               std::to_string(::getpid()));
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        cfg.data_dir = dir.string();
        cfg.public_url = std::string("http://") + host;
        cfg.seed_orders = 60;
        cfg.watermark_delay_ms = 2000;
    }
    void TearDown() override
    {
        svc.reset();
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
    service& s()
    {
        if (!svc)
            svc = std::make_unique<service>(cfg, now);
        return *svc;
    }
    response call(const std::string& method, const std::string& target, const std::string& body = {},
                  header_list extra = {}, bool auth = true)
    {
        request r;
        r.method = method;
        r.target = target;
        if (auth)
            r.headers.emplace_back("X-Auth-Token", cfg.api_key);
        if (!body.empty())
            r.headers.emplace_back("Content-Type", "application/json");
        for (auto& h : extra)
            r.headers.push_back(h);
        r.body = body;
        return s().handle(r, now);
    }
    response api(const std::string& method, const std::string& path, const json::value& body = nullptr)
    {
        return call(method, "/api/v1/external" + path, body.is_null() ? "" : json::serialize(body));
    }

    // storage: target of a presigned URL (public_url stripped)
    std::string target_of(const std::string& url)
    {
        EXPECT_EQ(url.rfind(cfg.public_url, 0), 0u) << url;
        return url.substr(cfg.public_url.size());
    }
    response put(const std::string& url, const std::string& data, header_list headers,
                 bool with_length = true, const std::string& method = "PUT")
    {
        request r;
        r.method = method;
        r.target = target_of(url);
        r.headers.emplace_back("Host", host);
        if (with_length)
            r.headers.emplace_back("Content-Length", std::to_string(data.size()));
        for (auto& h : headers)
            r.headers.push_back(h);
        r.body = data;
        return s().handle(r, now);
    }
    response get_url(const std::string& url)
    {
        request r;
        r.method = "GET";
        r.target = target_of(url);
        r.headers.emplace_back("Host", host);
        return s().handle(r, now);
    }
    static std::string read_file(const std::string& path)
    {
        std::ifstream f(path, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(f), {});
    }

    // creates an internal asset and uploads data; returns the asset id
    std::string uploaded_asset(const std::string& filename, const std::string& data,
                               const std::string& content_type = "application/pdf",
                               bool watermark = false)
    {
        auto r = api("POST", "/assets",
                     json::object{{"asset", json::object{{"type", "internal"},
                                                         {"filename", filename},
                                                         {"byte_size", data.size()},
                                                         {"content_type", content_type},
                                                         {"watermark_asset", watermark}}}});
        EXPECT_EQ(r.status, 201) << r.body;
        auto v = js(r);
        auto up = put(upload_url(v), data, upload_headers(v));
        EXPECT_EQ(up.status, 200) << up.body;
        return std::string(v.at("asset").at("id").as_string());
    }
    std::string licence_asset(bool autogenerate = true)
    {
        auto r = api("POST", "/assets",
                     json::object{{"asset", json::object{{"type", "licence"},
                                                         {"name", "Key"},
                                                         {"autogenerate_licence_key", autogenerate}}}});
        EXPECT_EQ(r.status, 201) << r.body;
        return std::string(js(r).at("asset").at("id").as_string());
    }
    std::string digital_product(std::int64_t store_product_id, std::vector<std::string> asset_ids,
                                json::object extra = {})
    {
        json::array ids;
        for (auto& a : asset_ids)
            ids.emplace_back(a);
        extra["store_product_id"] = store_product_id;
        extra["asset_ids"] = ids;
        auto r = api("POST", "/digital_products", json::object{{"digital_product", extra}});
        EXPECT_EQ(r.status, 201) << r.body;
        return std::string(js(r).at("digital_product").at("id").as_string());
    }
    std::string purchase(std::int64_t store_product_id, const json::value& email = "buyer@example.com",
                         json::object extra = {})
    {
        extra["store_product_id"] = store_product_id;
        extra["email"] = email;
        auto r = call("POST", "/sandbox/purchases", json::serialize(extra));
        EXPECT_EQ(r.status, 201) << r.body;
        return std::string(js(r).at("order").at("id").as_string());
    }
    json::array downloads(const std::string& order_id)
    {
        auto r = api("GET", "/orders/" + order_id + "/downloads");
        EXPECT_EQ(r.status, 200) << r.body;
        return js(r).at("downloads").as_array();
    }
    json::array outbox()
    {
        auto r = call("GET", "/sandbox/outbox");
        EXPECT_EQ(r.status, 200);
        return js(r).at("emails").as_array();
    }
};

} // namespace sbt
