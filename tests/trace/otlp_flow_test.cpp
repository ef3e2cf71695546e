// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The client's own spans through otlp_exporter, as a collector's file
// receiver would read them: names, parent/child links, the resend count of a
// 503 then 200, a rate-limiter wait under a tight bucket, an upload's
// presigned URL redacted. With DD_OTLP_SCHEMA_OUT set (ctest
// trace_otlp_schema), every export is also appended there for the
// OpenTelemetry schema check.
#include "fixtures.hpp"

#include <digital_delivery/otlp_exporter.hpp>
#include <digital_delivery/testing/virtual_clock.hpp>
#include <digital_delivery/upload.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

using namespace fixtures;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

class otlp_flow : public ::testing::Test
{
protected:
    asio::io_context ioc;
    std::shared_ptr<dd::testing::fake_transport> fake = std::make_shared<dd::testing::fake_transport>(ioc.get_executor());
    std::string path = (std::filesystem::temp_directory_path() /
                        ("dd_otlp_flow_" + std::to_string(::getpid()) + "_" +
                         ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".jsonl"))
                           .string();
    std::shared_ptr<dd::otlp_exporter> exporter;
    std::vector<json::object> spans;  // every exported span, in order

    void TearDown() override
    {
        if (const char* out = std::getenv("DD_OTLP_SCHEMA_OUT"))
        {
            std::ifstream in(path);
            std::ofstream(out, std::ios::app) << in.rdbuf();
        }
        std::remove(path.c_str());
    }

    dd::client make_client(dd::rate_limit_params rl = {.enabled = false})
    {
        exporter = std::make_shared<dd::otlp_exporter>(
            ioc.get_executor(), dd::otlp_exporter_params{.file = path, .service_name = "otlp-flow"});
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        return dd::client(fake, {.base_url = base_url,
                                 .api_key = std::string(api_key) + info->name(),
                                 .rate_limit = rl,
                                 .retry = {.initial_backoff = 1ms, .max_backoff = 5ms},
                                 .tracer = exporter});
    }

    // Flushes the exporter, then reads its file back.
    void read_back()
    {
        bool done = false;
        exporter->async_flush([&] { done = true; });
        dd_test::run(ioc);
        ASSERT_TRUE(done);
        std::ifstream in(path);
        for (std::string line; std::getline(in, line);)
        {
            const json::value request = json::parse(line);
            for (const auto& s : request.at("resourceSpans").at(0).at("scopeSpans").at(0).at("spans").as_array())
                spans.push_back(s.as_object());
        }
        EXPECT_EQ(exporter->stats().dropped(), 0u);
    }

    const json::object* named(std::string_view name, std::size_t nth = 0) const
    {
        for (const auto& s : spans)
            if (s.at("name").as_string() == name && nth-- == 0)
                return &s;
        return nullptr;
    }

    static const json::value* attr(const json::object& s, std::string_view key)
    {
        if (!s.contains("attributes"))
            return nullptr;
        for (const auto& a : s.at("attributes").as_array())
            if (a.at("key").as_string() == key)
                return &a.at("value");
        return nullptr;
    }

    // Every parentSpanId names an exported span of the same trace.
    void expect_linked() const
    {
        std::map<std::string, std::string> trace_of;
        for (const auto& s : spans)
            trace_of[std::string(s.at("spanId").as_string())] = std::string(s.at("traceId").as_string());
        for (const auto& s : spans)
            if (s.contains("parentSpanId"))
            {
                const auto it = trace_of.find(std::string(s.at("parentSpanId").as_string()));
                ASSERT_NE(it, trace_of.end()) << s.at("name");
                EXPECT_EQ(it->second, s.at("traceId").as_string()) << s.at("name");
            }
    }
};

TEST_F(otlp_flow, an_operation_and_its_attempt_are_exported_linked)
{
    auto c = make_client();
    fake->expect(dd::http_method::get, std::string(base_path) + "/orders/o1").respond(200, R"({"order":)" + order_json() + "}");
    auto [ec, o] = dd_test::run_awaitable(ioc, dd::async_get_order(c, "o1", asio::as_tuple(asio::use_awaitable)));
    ASSERT_FALSE(ec);
    read_back();
    ASSERT_EQ(spans.size(), 2u);
    const json::object* op = named("get_order");
    const json::object* attempt = named("GET /orders/{id}");
    ASSERT_TRUE(op && attempt);
    EXPECT_FALSE(op->contains("parentSpanId"));
    EXPECT_EQ(attempt->at("parentSpanId"), op->at("spanId"));
    EXPECT_EQ(attempt->at("kind"), 3);  // CLIENT
    EXPECT_EQ(op->at("kind"), 1);       // INTERNAL
    EXPECT_EQ(attr(*attempt, "http.response.status_code")->at("intValue"), "200");
    EXPECT_EQ(attr(*attempt, "url.template")->at("stringValue"), "/orders/{id}");
    EXPECT_EQ(fake->requests().at(0).headers.find("traceparent"),
              std::optional<std::string_view>("00-" + std::string(attempt->at("traceId").as_string()) + "-" +
                                              std::string(attempt->at("spanId").as_string()) + "-01"));
    expect_linked();
}

TEST_F(otlp_flow, a_503_then_200_exports_the_resend_count_and_the_backoff)
{
    auto c = make_client();
    fake->expect_any().respond(503, "<html>busy</html>");
    fake->expect_any().respond(200, R"({"order":)" + order_json() + "}");
    auto [ec, o] = dd_test::run_awaitable(ioc, dd::async_get_order(c, "o1", asio::as_tuple(asio::use_awaitable)));
    ASSERT_FALSE(ec);
    read_back();
    const json::object* first = named("GET /orders/{id}", 0);
    const json::object* second = named("GET /orders/{id}", 1);
    ASSERT_TRUE(first && second && named("backoff"));
    EXPECT_EQ(attr(*first, "http.request.resend_count"), nullptr);
    EXPECT_EQ(first->at("status").at("code"), 2);  // ERROR
    EXPECT_EQ(attr(*first, "http.response.status_code")->at("intValue"), "503");
    EXPECT_EQ(attr(*second, "http.request.resend_count")->at("intValue"), "1");
    EXPECT_TRUE(second->at("status").as_object().empty());
    EXPECT_EQ(second->at("parentSpanId"), named("get_order")->at("spanId"));
    expect_linked();
}

TEST_F(otlp_flow, a_wait_for_rate_limit_points_is_exported_under_its_operation)
{
    dd::testing::virtual_clock vc;
    auto c = make_client({.capacity = 1, .window = 10s, .probe_first = false});
    fake->expect_any().respond(200, R"({"order":)" + order_json() + "}");
    fake->expect_any().respond(200, R"({"order":)" + order_json() + "}");
    auto first = asio::co_spawn(ioc, dd::async_get_order(c, "o1", asio::as_tuple(asio::use_awaitable)), asio::use_future);
    auto second = asio::co_spawn(ioc, dd::async_get_order(c, "o2", asio::as_tuple(asio::use_awaitable)), asio::use_future);
    vc.run_for(ioc, 15s, 100ms);
    ASSERT_FALSE(std::get<0>(dd_test::wait(ioc, first)));
    ASSERT_FALSE(std::get<0>(dd_test::wait(ioc, second)));
    bool done = false;
    exporter->async_flush([&] { done = true; });
    ASSERT_TRUE(vc.run_until(ioc, [&] { return done; }, 10s));
    read_back();
    const json::object* wait = named("rate_limit_wait");
    ASSERT_TRUE(wait);
    EXPECT_EQ(wait->at("parentSpanId"), named("get_order", 1)->at("spanId"));
    EXPECT_EQ(attr(*wait, "digital_delivery.wait.reason")->at("stringValue"), "rate_limit");
    EXPECT_GE(std::stoll(std::string(attr(*wait, "digital_delivery.wait.ms")->at("intValue").as_string())), 5000);
    // Its duration in the export: at least the 5 s the bucket made it wait.
    EXPECT_GE(std::stoll(std::string(wait->at("endTimeUnixNano").as_string())) -
                  std::stoll(std::string(wait->at("startTimeUnixNano").as_string())),
              5'000'000'000LL);
    expect_linked();
}

TEST_F(otlp_flow, an_upload_exports_its_put_with_the_presigned_url_redacted)
{
    auto c = make_client();
    const std::string url = "https://u:hunter2@storage.example:9000/bucket/a1/manual.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                            "&X-Amz-Credential=AKIAEXAMPLE%2F20240501&X-Amz-Security-Token=tok3n&X-Amz-Signature=deadbeef";
    script_upload(*fake, url);
    dd::diagnostics diag;
    auto [ec, a] = dd_test::run_awaitable(
        ioc, dd::async_upload_asset(c, std::make_shared<dd::memory_source>("abc"), {.filename = "manual.pdf"},
                                    dd::upload_options{}, dd::request_options{}, diag, asio::as_tuple(asio::use_awaitable)));
    ASSERT_FALSE(ec) << diag.to_string();
    read_back();
    const json::object* put = named("PUT");
    const json::object* up = named("upload_asset");
    ASSERT_TRUE(put && up);
    EXPECT_EQ(put->at("parentSpanId"), up->at("spanId"));
    EXPECT_EQ(attr(*put, "url.full")->at("stringValue"),
              "https://storage.example:9000/bucket/a1/manual.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256"
              "&X-Amz-Credential=REDACTED&X-Amz-Security-Token=REDACTED&X-Amz-Signature=REDACTED");
    EXPECT_EQ(attr(*put, "http.request.body.size")->at("intValue"), "3");
    ASSERT_TRUE(put->contains("events"));
    EXPECT_EQ(put->at("events").at(0).at("name"), "upload.progress");
    // No secret anywhere in what was exported.
    std::ifstream in(path);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (const char* secret : {"hunter2", "deadbeef", "AKIAEXAMPLE", "tok3n", api_key})
        EXPECT_EQ(text.find(secret), std::string::npos) << secret;
    expect_linked();
}

}  // namespace
