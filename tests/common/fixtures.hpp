// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Realistic API payloads and the test harness shared by the unit tests.
#ifndef DIGITAL_DELIVERY_TESTS_UNIT_FIXTURES_HPP
#define DIGITAL_DELIVERY_TESTS_UNIT_FIXTURES_HPP

#include <digital_delivery.hpp>
#include <digital_delivery/testing/fake_transport.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <gtest/gtest.h>

#include "run.hpp"

#include <memory>
#include <string>
#include "run.hpp"

namespace dd = digital_delivery;
namespace asio = boost::asio;

namespace fixtures {

inline constexpr const char* base_url = "https://dd.example.test/api/v1/external";
inline constexpr const char* base_path = "/api/v1/external";
inline constexpr const char* api_key = "sk_test_SECRET_123";

// Request models refer to the caller's ids (std::span): named arrays.
inline const std::string ids_a1[] = {"a1"};

// One asset; `nulls` makes every nullable field null.
inline std::string asset_json(bool nulls = false, const std::string& type = "internal")
{
    if (nulls)
        return R"({"id":"a1","type":")" + type +
               R"(","name":null,"filename":null,"external_url":null,"content_type":null,"byte_size":0,)"
               R"("watermark_asset":false,"autogenerate_licence_key":false,)"
               R"("created_at":"2024-05-01T12:00:00Z","updated_at":"2024-05-01T12:00:00.5+02:00"})";
    return R"({"id":"a1","type":")" + type +
           R"(","name":"Manual","filename":"manual.pdf","external_url":"https://cdn.example/x.pdf",)"
           R"("content_type":"application/pdf","byte_size":5000000000,"watermark_asset":true,)"
           R"("autogenerate_licence_key":false,"created_at":"2024-05-01T12:00:00Z",)"
           R"("updated_at":"2024-05-02T08:30:15.250-04:00","beta_new_field":{"x":[1,2]}})";
}

inline std::string asset_summary_json(bool nulls = false)
{
    if (nulls)
        return R"({"id":"a1","type":"licence","name":null,"filename":null,"external_url":null,"content_type":null,"byte_size":0,"created_at":"2024-05-01T12:00:00Z"})";
    return R"({"id":"a1","type":"internal","name":"Manual","filename":"manual.pdf","external_url":null,"content_type":"application/pdf","byte_size":1024,"created_at":"2024-05-01T12:00:00Z","extra":1})";
}

inline std::string digital_product_json(bool nulls = false)
{
    if (nulls)
        return R"({"id":"dp1","store_product_id":null,"store_variant_id":null,"assets":[],"upsert_always":false,)"
               R"("custom_message":null,"preorder_enabled":false,"preorder_launch_date":null,"preorder_subject":null,)"
               R"("preorder_heading":null,"preorder_description":null,"created_at":"2024-05-01T12:00:00Z","updated_at":"2024-05-01T12:00:00Z"})";
    return R"({"id":"dp1","store_product_id":9007199254740993,"store_variant_id":42,"assets":[)" +
           asset_summary_json() + "," + asset_summary_json(true) +
           R"(],"upsert_always":true,"custom_message":"Thanks","preorder_enabled":true,)"
           R"("preorder_launch_date":"2030-01-01T00:00:00Z","preorder_subject":"It's here","preorder_heading":"Soon",)"
           R"("preorder_description":"Wait","created_at":"2024-05-01T12:00:00Z","updated_at":"2024-05-01T12:00:00Z","new_beta":true})";
}

inline std::string order_json(bool nulls = false, const std::string& status = "paid", int downloads = 3)
{
    if (nulls)
        return R"({"id":"o1","name":"#1001","email":"ada@example.com","phone":null,"financial_status":null,)"
               R"("fulfillment_status":null,"total_price":null,"currency":null,"created_at":"2024-05-01T12:00:00Z","download_count":0})";
    return R"({"id":"o1","name":"#1001","email":"ada@example.com","phone":"+1 555","financial_status":")" + status +
           R"(","fulfillment_status":"fulfilled","total_price":"19.99","currency":"EUR",)"
           R"("created_at":"2024-05-01T12:00:00+00:00","download_count":)" +
           std::to_string(downloads) + R"(,"tags":["vip"]})";
}

inline std::string pagination_json(int page = 1, int per = 25, int total = 1, int pages = 1)
{
    return R"({"current_page":)" + std::to_string(page) + R"(,"per_page":)" + std::to_string(per) +
           R"(,"total_count":)" + std::to_string(total) + R"(,"total_pages":)" + std::to_string(pages) + "}";
}

inline std::string download_json(bool nulls = false, const std::string& wm = "ready")
{
    if (nulls)
        return R"({"id":"d1","product_name":"Book","file_name":"Licence Key","file_type":"licence/key","file_size_bytes":0,)"
               R"("download_url":null,"is_watermarked":false,"watermark_status":"not_applicable","download_count":0,)"
               R"("download_limit":null,"download_limit_reached":false,"expires_at":null,"download_expired":false,)"
               R"("access_revoked":false,"is_preorder":false,"preorder_available_at":null,"preorder_released":true,)"
               R"("is_licence_key":true,"licence_key":null,"downloadable":true})";
    return R"({"id":"d2","product_name":"Book","file_name":"book.pdf","file_type":"application/pdf","file_size_bytes":3000000000,)"
           R"("download_url":"https://storage.example/book.pdf?X-Amz-Signature=abc","is_watermarked":true,"watermark_status":")" +
           wm +
           R"(","download_count":2,"download_limit":5,"download_limit_reached":false,"expires_at":"2024-06-01T00:00:00Z",)"
           R"("download_expired":false,"access_revoked":false,"is_preorder":true,"preorder_available_at":"2024-05-01T00:00:00Z",)"
           R"("preorder_released":true,"is_licence_key":false,"licence_key":"ABCD-1234","downloadable":true,"future":null})";
}

inline std::string upload_json()
{
    return R"({"method":"PUT","url":"https://storage.example/bucket/key?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=deadbeef",)"
           R"("headers":{"Content-Type":"application/pdf","Content-Disposition":"inline; filename=\"manual.pdf\""},)"
           R"("expires_at":"2024-05-01T13:00:00Z"})";
}

/// A client over a fake transport, and helpers to run one operation.
class client_test : public ::testing::Test
{
protected:
    asio::io_context ioc;
    std::shared_ptr<dd::testing::fake_transport> fake = std::make_shared<dd::testing::fake_transport>(ioc.get_executor());
    // Rate limiting and retries are tested on their own (test_retry.cpp):
    // here every scripted response is the final one.
    dd::client client{
        fake,
        dd::client_params{.base_url = base_url, .api_key = api_key, .rate_limit = {.enabled = false}, .retry = {.enabled = false}}};
    dd::diagnostics diag;

    /// Runs `f(token)` to completion with as_tuple(use_awaitable); returns the tuple.
    template <class F>
    auto run(F&& f)
    {
        return dd_test::run_awaitable(ioc, f(asio::as_tuple(asio::use_awaitable)));
    }

    /// Path + query relative to the API root.
    static std::string target(const std::string& rel) { return std::string(base_path) + rel; }

    dd::http_request last_request() const
    {
        auto r = fake->requests();
        EXPECT_FALSE(r.empty());
        return r.empty() ? dd::http_request{} : r.back();
    }
};

// The body of a create-asset answer with a presigned upload to `url`.
inline std::string asset_with_upload_json(const std::string& url)
{
    return R"({"asset":)" + asset_json() + R"(,"upload":{"method":"PUT","url":")" + url +
           R"(","headers":{"Content-Type":"application/pdf"},"expires_at":"2100-01-01T00:00:00Z"}})";
}

// Scripts an upload's three exchanges on `fake`: the create (201, presigned
// `url`), the PUT to the storage (200) and the re-read of asset a1.
inline void script_upload(dd::testing::fake_transport& fake, const std::string& url)
{
    fake.expect(dd::http_method::post, std::string(base_path) + "/assets").respond(201, asset_with_upload_json(url));
    fake.expect_any().respond(200);
    fake.expect(dd::http_method::get, std::string(base_path) + "/assets/a1").respond(200, R"({"asset":)" + asset_json() + "}");
}

}  // namespace fixtures

#endif
