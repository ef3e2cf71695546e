// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// otlp_exporter on hand-made spans: the OTLP JSON encoding, batching and the
// schedule delay (virtual clock), the collector's POST (fake transport): its
// URL and headers, retries on 503 and 429 with Retry-After, 400 dropped, a
// collector that never answers (bounded queue, dropped spans counted, the
// metrics series), the file output, flush and shutdown, bad configuration.
#include "fixtures.hpp"

#include <digital_delivery/metrics.hpp>
#include <digital_delivery/otlp_exporter.hpp>
#include <digital_delivery/impl/otlp/sansio/otlp_json.hpp>
#include <digital_delivery/testing/virtual_clock.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace fixtures;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

dd::span_data make_span(std::uint8_t n, std::uint8_t parent = 0)
{
    dd::span_data s;
    s.trace = {0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36};
    s.id = {0, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7};
    s.id[7] = n;
    if (parent)
    {
        s.parent = s.id;
        s.parent[7] = parent;
    }
    s.name = "GET /orders/{id}";
    s.kind = dd::span_kind::client;
    s.start = std::chrono::system_clock::time_point(std::chrono::nanoseconds(1764288000123456789LL));
    s.end = s.start + 41ms;
    s.attributes = {{"http.request.method", std::string("GET")},
                    {"server.port", std::int64_t(443)},
                    {"dd.points", 1.5},
                    {"dd.cached", false}};
    return s;
}

std::vector<std::string> file_lines(const std::string& path)
{
    std::vector<std::string> v;
    std::ifstream is(path);
    for (std::string l; std::getline(is, l);)
        v.push_back(l);
    return v;
}

const json::array& spans_of(const json::value& req)
{
    return req.at("resourceSpans").at(0).at("scopeSpans").at(0).at("spans").as_array();
}

class otlp_exporter_test : public ::testing::Test
{
protected:
    asio::io_context ioc;
    std::shared_ptr<dd::testing::fake_transport> fake = std::make_shared<dd::testing::fake_transport>(ioc.get_executor());
    std::string path = (std::filesystem::temp_directory_path() /
                        ("dd_otlp_" + std::to_string(::getpid()) + "_" +
                         ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".jsonl"))
                           .string();

    void TearDown() override { std::remove(path.c_str()); }

    dd::otlp_exporter_params collector(dd::otlp_exporter_params p = {})
    {
        p.endpoint = "http://collector.test:4318";
        p.transport = fake;
        p.service_name = "checkout";
        return p;
    }

    // Runs async_flush to its end on the virtual clock; returns whether it ended.
    bool flush(dd::otlp_exporter& e, dd::testing::virtual_clock& vc, std::chrono::milliseconds limit = 1min)
    {
        bool done = false;
        e.async_flush([&] { done = true; });
        return vc.run_until(ioc, [&] { return done; }, limit);
    }
};

TEST(otlp_json, encodes_a_request_by_the_otlp_json_mapping)
{
    auto root = make_span(1);
    root.kind = dd::span_kind::internal;
    root.name = "get_order";
    root.trace_state = "vendor=a\"b";
    auto child = make_span(2, 1);
    child.status = dd::span_status::error;
    child.status_message = "HTTP 503";
    child.events.push_back({"upload.progress", child.start + 1ms, {{"bytes", std::int64_t(4096)}}});
    const std::vector<dd::span_data> spans{root, child};
    const std::string text = dd::detail::encode_otlp_json(spans, {"checkout", "digital_delivery", "0.1.0"});
    EXPECT_EQ(text.find('\n'), std::string::npos);

    const json::value v = json::parse(text);
    const auto& rs = v.at("resourceSpans").at(0);
    EXPECT_EQ(rs.at("resource").at("attributes").at(0).at("key"), "service.name");
    EXPECT_EQ(rs.at("resource").at("attributes").at(0).at("value").at("stringValue"), "checkout");
    EXPECT_EQ(rs.at("scopeSpans").at(0).at("scope").at("name"), "digital_delivery");
    EXPECT_EQ(rs.at("scopeSpans").at(0).at("scope").at("version"), "0.1.0");
    const auto& out = spans_of(v);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].at("traceId"), "4bf92f3577b34da6a3ce929d0e0e4736");
    EXPECT_EQ(out[0].at("spanId"), "00f067aa0ba90201");
    EXPECT_FALSE(out[0].as_object().contains("parentSpanId"));  // a root span
    EXPECT_EQ(out[0].at("traceState"), "vendor=a\"b");
    EXPECT_EQ(out[0].at("kind"), 1);
    EXPECT_EQ(out[0].at("startTimeUnixNano"), "1764288000123456789");
    EXPECT_EQ(out[0].at("endTimeUnixNano"), "1764288000164456789");
    EXPECT_TRUE(out[0].at("status").as_object().empty());  // unset
    EXPECT_EQ(out[1].at("parentSpanId"), "00f067aa0ba90201");
    EXPECT_EQ(out[1].at("kind"), 3);
    EXPECT_EQ(out[1].at("status").at("code"), 2);
    EXPECT_EQ(out[1].at("status").at("message"), "HTTP 503");
    const auto& attrs = out[1].at("attributes").as_array();
    EXPECT_EQ(attrs[0].at("value").at("stringValue"), "GET");
    EXPECT_EQ(attrs[1].at("value").at("intValue"), "443");  // int64: a string
    EXPECT_EQ(attrs[2].at("value").at("doubleValue"), 1.5);
    EXPECT_EQ(attrs[3].at("value").at("boolValue"), false);
    const auto& ev = out[1].at("events").at(0);
    EXPECT_EQ(ev.at("name"), "upload.progress");
    EXPECT_EQ(ev.at("timeUnixNano"), "1764288000124456789");
    EXPECT_EQ(ev.at("attributes").at(0).at("value").at("intValue"), "4096");
}

// The resource carries what OpenTelemetry's SDKs set: telemetry.sdk.*, and
// service.version when it is known (service.name stays first).
TEST(otlp_json, the_resource_names_the_sdk_and_the_service_version)
{
    const std::vector<dd::span_data> spans{make_span(1)};
    auto attributes = [&](const dd::detail::otlp_resource& r) {
        std::map<std::string, std::string> m;
        const json::value v = json::parse(dd::detail::encode_otlp_json(spans, r));
        const auto& a = v.at("resourceSpans").at(0).at("resource").at("attributes").as_array();
        EXPECT_EQ(a.at(0).at("key"), "service.name");
        for (const auto& kv : a)
            m[std::string(kv.at("key").as_string())] = std::string(kv.at("value").at("stringValue").as_string());
        return m;
    };
    auto m = attributes({"checkout", "digital_delivery", "0.1.0", "2.4.1"});
    EXPECT_EQ(m["service.name"], "checkout");
    EXPECT_EQ(m["service.version"], "2.4.1");
    EXPECT_EQ(m["telemetry.sdk.name"], "digital_delivery");
    EXPECT_EQ(m["telemetry.sdk.language"], "cpp");
    EXPECT_EQ(m["telemetry.sdk.version"], "0.1.0");
    m = attributes({"checkout", "digital_delivery", "0.1.0"});
    EXPECT_EQ(m.count("service.version"), 0u) << "not known: not sent";
    EXPECT_EQ(m.size(), 4u);
}

TEST(otlp_json, outcomes_of_a_post_follow_otlp_http)
{
    using dd::detail::classify_otlp_post;
    using o = dd::detail::otlp_post_outcome;
    EXPECT_EQ(classify_otlp_post(false, 200), o::delivered);
    EXPECT_EQ(classify_otlp_post(false, 202), o::delivered);
    for (unsigned s : {429u, 502u, 503u, 504u})
        EXPECT_EQ(classify_otlp_post(false, s), o::retry) << s;
    EXPECT_EQ(classify_otlp_post(true, 0), o::retry);  // collector unreachable
    for (unsigned s : {400u, 401u, 404u, 413u, 500u, 501u})
        EXPECT_EQ(classify_otlp_post(false, s), o::rejected) << s;
}

TEST_F(otlp_exporter_test, a_batch_waits_the_schedule_delay_then_goes_to_the_collector_without_api_key)
{
    dd::testing::virtual_clock vc;
    dd::otlp_exporter e(ioc.get_executor(), collector({.schedule_delay = 2000ms}));
    EXPECT_EQ(e.traces_url(), "http://collector.test:4318/v1/traces");
    fake->expect(dd::http_method::post, "/v1/traces").respond(200, "{}");
    e.on_end(make_span(1));
    e.on_end(make_span(2, 1));
    vc.run_for(ioc, 1990ms);
    EXPECT_TRUE(fake->requests().empty());
    vc.run_for(ioc, 20ms);
    ASSERT_EQ(fake->requests().size(), 1u);
    const auto req = fake->requests()[0];
    EXPECT_EQ(req.url, "http://collector.test:4318/v1/traces");
    EXPECT_EQ(req.headers.find("Content-Type"), std::optional<std::string_view>("application/json"));
    EXPECT_FALSE(req.headers.find("X-Auth-Token"));
    EXPECT_EQ(req.headers.size(), 1u);
    const json::value v = json::parse(req.body);
    EXPECT_EQ(spans_of(v).size(), 2u);
    EXPECT_EQ(v.at("resourceSpans").at(0).at("resource").at("attributes").at(0).at("value").at("stringValue"), "checkout");
    EXPECT_TRUE(fake->done());
    EXPECT_EQ(e.stats().exported, 2u);
    EXPECT_EQ(e.stats().dropped(), 0u);
}

TEST_F(otlp_exporter_test, configured_headers_go_with_every_post)
{
    dd::testing::virtual_clock vc;
    dd::otlp_exporter e(ioc.get_executor(), collector({.headers = {{"Authorization", "Bearer collector-token"}},
                                                       .schedule_delay = 10ms}));
    fake->expect(dd::http_method::post, "/v1/traces").respond(200, "{}");
    e.on_end(make_span(1));
    EXPECT_TRUE(flush(e, vc));
    ASSERT_EQ(fake->requests().size(), 1u);
    EXPECT_EQ(fake->requests()[0].headers.find("Authorization"), std::optional<std::string_view>("Bearer collector-token"));
    EXPECT_EQ(fake->requests()[0].body.find("collector-token"), std::string::npos);
}

TEST_F(otlp_exporter_test, a_full_batch_goes_at_once_and_the_rest_follows)
{
    dd::testing::virtual_clock vc;
    dd::otlp_exporter e(ioc.get_executor(), {.file = path, .max_batch_size = 2, .schedule_delay = 5000ms});
    for (std::uint8_t i = 1; i <= 5; ++i)
        e.on_end(make_span(i));
    vc.run_for(ioc, 10ms);  // two full batches, no wait
    auto lines = file_lines(path);
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(spans_of(json::parse(lines[0])).size(), 2u);
    EXPECT_EQ(spans_of(json::parse(lines[1])).size(), 2u);
    vc.run_for(ioc, 4900ms);
    EXPECT_EQ(file_lines(path).size(), 2u);  // the fifth waits its delay
    vc.run_for(ioc, 200ms);
    lines = file_lines(path);
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(spans_of(json::parse(lines[2])).at(0).at("spanId"), "00f067aa0ba90205");
    EXPECT_EQ(e.stats().exported, 5u);
}

TEST_F(otlp_exporter_test, resends_after_503_at_its_retry_after_and_counts_the_requests)
{
    dd::testing::virtual_clock vc;
    dd::otlp_exporter e(ioc.get_executor(), collector({.schedule_delay = 10ms}));
    fake->expect(dd::http_method::post, "/v1/traces").respond(503, "").header("Retry-After", "3");
    fake->expect(dd::http_method::post, "/v1/traces").respond(200, "{}");
    e.on_end(make_span(1));
    vc.run_for(ioc, 50ms);
    ASSERT_EQ(fake->requests().size(), 1u);
    vc.run_for(ioc, 2900ms);
    EXPECT_EQ(fake->requests().size(), 1u);  // Retry-After: 3 honoured
    vc.run_for(ioc, 100ms);
    ASSERT_EQ(fake->requests().size(), 2u);
    EXPECT_EQ(fake->requests()[1].body, fake->requests()[0].body);
    EXPECT_TRUE(fake->done());
    EXPECT_EQ(e.stats().exported, 1u);
    EXPECT_EQ(e.stats().export_requests, 2u);
}

TEST_F(otlp_exporter_test, a_400_drops_the_batch_without_retrying)
{
    dd::testing::virtual_clock vc;
    auto metrics = std::make_shared<dd::metrics_observer>();
    dd::otlp_exporter e(ioc.get_executor(), collector({.schedule_delay = 10ms, .metrics = metrics}));
    fake->expect(dd::http_method::post, "/v1/traces").respond(400, R"({"message":"bad"})");
    e.on_end(make_span(1));
    e.on_end(make_span(2));
    EXPECT_TRUE(flush(e, vc));
    vc.run_for(ioc, 60s);
    EXPECT_EQ(fake->requests().size(), 1u);
    EXPECT_EQ(e.stats().dropped_export_failed, 2u);
    EXPECT_EQ(e.stats().exported, 0u);
    EXPECT_EQ(metrics->snapshot().spans_dropped, 2u);
    EXPECT_NE(metrics->prometheus().find("dd_client_spans_dropped_total 2\n"), std::string::npos);
}

TEST_F(otlp_exporter_test, spans_a_partial_success_rejects_are_counted_dropped)
{
    dd::testing::virtual_clock vc;
    auto metrics = std::make_shared<dd::metrics_observer>();
    dd::otlp_exporter e(ioc.get_executor(), collector({.schedule_delay = 10ms, .metrics = metrics}));
    fake->expect(dd::http_method::post, "/v1/traces")
        .respond(200, R"({"partialSuccess":{"rejectedSpans":"1","errorMessage":"span too large"}})");
    fake->expect(dd::http_method::post, "/v1/traces").respond(200, R"({"partialSuccess":{}})");
    e.on_end(make_span(1));
    e.on_end(make_span(2));
    EXPECT_TRUE(flush(e, vc));
    e.on_end(make_span(3));
    EXPECT_TRUE(flush(e, vc));
    EXPECT_EQ(e.stats().exported, 2u);
    EXPECT_EQ(e.stats().dropped_export_failed, 1u);
    EXPECT_EQ(metrics->snapshot().spans_dropped, 1u);
    EXPECT_EQ(fake->requests().size(), 2u);  // a partial success is not resent
}

TEST(otlp_json, rejected_spans_of_a_partial_success)
{
    using dd::detail::rejected_spans;
    EXPECT_EQ(rejected_spans(""), 0u);
    EXPECT_EQ(rejected_spans("{}"), 0u);
    EXPECT_EQ(rejected_spans(R"({"partialSuccess":{"rejectedSpans":"3"}})"), 3u);
    EXPECT_EQ(rejected_spans(R"({"partialSuccess":{"rejectedSpans":4}})"), 4u);
    EXPECT_EQ(rejected_spans(R"({"partialSuccess":{"rejectedSpans":"x"}})"), 0u);
    EXPECT_EQ(rejected_spans(R"({"partialSuccess":{"rejectedSpans":-1}})"), 0u);
    EXPECT_EQ(rejected_spans(R"({"partialSuccess":{"rejectedSpans":"2")"), 0u);  // not JSON
    EXPECT_EQ(rejected_spans("rejectedSpans"), 0u);
}

TEST_F(otlp_exporter_test, an_unreachable_collector_is_retried_with_backoff_then_the_batch_dropped)
{
    dd::testing::virtual_clock vc;
    dd::otlp_exporter e(ioc.get_executor(),
                        collector({.schedule_delay = 10ms, .max_attempts = 3, .initial_backoff = 1000ms, .max_backoff = 2000ms}));
    for (int i = 0; i < 3; ++i)
        fake->expect(dd::http_method::post, "/v1/traces").fail(asio::error::connection_refused);
    e.on_end(make_span(1));
    // Full jitter under ceilings of 1 s, then 2 s (a retry may come at once):
    // three attempts within 3 s of the first, then the batch is given up.
    EXPECT_TRUE(vc.run_until(ioc, [&] { return e.stats().dropped_export_failed == 1; }, 3100ms));
    EXPECT_EQ(fake->requests().size(), 3u);
    EXPECT_TRUE(fake->done());
    EXPECT_EQ(e.stats().exported, 0u);
}

TEST_F(otlp_exporter_test, a_retry_after_beyond_the_cap_drops_the_batch)
{
    dd::testing::virtual_clock vc;
    dd::otlp_exporter e(ioc.get_executor(), collector({.schedule_delay = 10ms, .max_retry_after = 30000ms}));
    fake->expect(dd::http_method::post, "/v1/traces").respond(429, "").header("Retry-After", "120");
    e.on_end(make_span(1));
    EXPECT_TRUE(flush(e, vc, 1s));
    EXPECT_EQ(e.stats().dropped_export_failed, 1u);
    EXPECT_EQ(fake->requests().size(), 1u);
}

TEST_F(otlp_exporter_test, a_collector_that_never_answers_fills_the_queue_and_later_spans_are_dropped)
{
    dd::testing::virtual_clock vc;
    auto metrics = std::make_shared<dd::metrics_observer>();
    dd::otlp_exporter e(ioc.get_executor(), collector({.max_queue_size = 4,
                                                       .max_batch_size = 2,
                                                       .schedule_delay = 10ms,
                                                       .export_timeout = 1000ms,
                                                       .metrics = metrics}));
    fake->expect(dd::http_method::post, "/v1/traces").hang();
    e.on_end(make_span(1));
    e.on_end(make_span(2));  // a full batch: its POST hangs
    vc.run_for(ioc, 20ms);
    ASSERT_EQ(fake->requests().size(), 1u);
    for (std::uint8_t i = 3; i <= 10; ++i)
        e.on_end(make_span(i));  // 3..6 fill the queue, 7..10 find it full
    EXPECT_EQ(e.stats().dropped_queue_full, 4u);
    EXPECT_EQ(metrics->snapshot().spans_dropped, 4u);
    EXPECT_EQ(e.stats().exported, 0u);
}

TEST_F(otlp_exporter_test, file_and_collector_both_receive_the_batch)
{
    dd::testing::virtual_clock vc;
    auto p = collector({.schedule_delay = 10ms});
    p.file = path;
    dd::otlp_exporter e(ioc.get_executor(), p);
    fake->expect(dd::http_method::post, "/v1/traces").respond(200, "{}");
    e.on_end(make_span(1));
    EXPECT_TRUE(flush(e, vc));
    const auto lines = file_lines(path);
    ASSERT_EQ(lines.size(), 1u);
    ASSERT_EQ(fake->requests().size(), 1u);
    EXPECT_EQ(lines[0], fake->requests()[0].body);
    EXPECT_EQ(e.stats().exported, 1u);
}

TEST_F(otlp_exporter_test, on_its_own_thread_flush_writes_the_file_and_shutdown_refuses_later_spans)
{
    dd::otlp_exporter e({.file = path, .service_name = "own-thread", .schedule_delay = 60000ms});
    e.on_end(make_span(1));
    e.on_end(make_span(2, 1));
    ASSERT_TRUE(e.flush(30s));
    auto lines = file_lines(path);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(spans_of(json::parse(lines[0])).size(), 2u);
    e.on_end(make_span(3));
    EXPECT_TRUE(e.shutdown(30s));
    EXPECT_EQ(file_lines(path).size(), 2u);  // shutdown exported what was queued
    e.on_end(make_span(4));
    EXPECT_EQ(e.stats().exported, 3u);
    EXPECT_EQ(e.stats().dropped_queue_full, 1u);
    EXPECT_TRUE(e.shutdown());  // idempotent
}

TEST_F(otlp_exporter_test, service_name_defaults_to_the_executable_name)
{
    dd::otlp_exporter e(ioc.get_executor(), {.file = path});
    EXPECT_EQ(e.service_name(), "trace_otlp_tests");
}

TEST_F(otlp_exporter_test, endpoints_follow_the_opentelemetry_variables_rules)
{
    EXPECT_EQ(dd::otlp_exporter(ioc.get_executor(), {.endpoint = "https://c.test:4318/", .transport = fake}).traces_url(),
              "https://c.test:4318/v1/traces");
    EXPECT_EQ(dd::otlp_exporter(ioc.get_executor(), {.endpoint = "http://c.test/base", .transport = fake}).traces_url(),
              "http://c.test/base/v1/traces");
    EXPECT_EQ(dd::otlp_exporter(ioc.get_executor(), {.endpoint = "http://a.test",
                                                     .traces_endpoint = "http://b.test/custom/path",
                                                     .transport = fake})
                  .traces_url(),
              "http://b.test/custom/path");
}

TEST_F(otlp_exporter_test, bad_configuration_is_refused_with_typed_errors)
{
    EXPECT_THROW(dd::otlp_exporter(ioc.get_executor(), {}), std::invalid_argument);
    EXPECT_THROW(dd::otlp_exporter(ioc.get_executor(), {.endpoint = "collector:4318"}), std::invalid_argument);
    EXPECT_THROW(dd::otlp_exporter(ioc.get_executor(), {.file = path, .max_queue_size = 0}), std::invalid_argument);
    EXPECT_THROW(dd::otlp_exporter(ioc.get_executor(), {.file = path, .max_batch_size = 0}), std::invalid_argument);
    EXPECT_THROW(dd::otlp_exporter(ioc.get_executor(), {.file = "/nonexistent-dir/x/spans.jsonl"}), std::system_error);
    EXPECT_THROW(dd::otlp_exporter(ioc.get_executor(), {.headers = {{"Host", "x"}}, .file = path}), std::invalid_argument);
    EXPECT_THROW(dd::otlp_exporter(ioc.get_executor(), {.headers = {{"X-A", "a\r\nX-B: b"}}, .file = path}),
                 std::invalid_argument);
    EXPECT_THROW(dd::otlp_exporter(ioc.get_executor(), {.headers = {{"content-type", "text/plain"}}, .file = path}),
                 std::invalid_argument);
    // On its own thread: the state (its timers on the exporter's io_context)
    // goes before that io_context when the constructor throws (UBSan saw a
    // timer destroyed after its service: ddctl --trace with an unwritable file).
    EXPECT_THROW(dd::otlp_exporter({.file = "/nonexistent-dir/x/spans.jsonl"}), std::system_error);
    EXPECT_THROW(dd::otlp_exporter(dd::otlp_exporter_params{}), std::invalid_argument);
}

}  // namespace

namespace {

// The exporter's file output, for the OTLP schema check (ctest
// trace_otlp_schema runs this with DD_OTLP_SCHEMA_OUT set, then
// otlp_schema/check_otlp.js on the file): every kind of value a span holds,
// written through the exporter as a collector's file receiver would read it.
TEST(otlp_file_output, writes_every_kind_of_span_value_one_request_per_line)
{
    const char* out = std::getenv("DD_OTLP_SCHEMA_OUT");
    const std::string path = out ? out : (std::filesystem::temp_directory_path() /
                                          ("dd_otlp_schema_" + std::to_string(::getpid()) + ".jsonl")).string();
    std::remove(path.c_str());
    {
        dd::otlp_exporter e({.file = path, .service_name = "schema \"check\"\n", .max_batch_size = 3});
        auto op = make_span(1);
        op.kind = dd::span_kind::internal;
        op.name = "get_order";
        op.trace_state = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7";
        e.on_end(std::move(op));
        auto attempt = make_span(2, 1);
        attempt.status = dd::span_status::error;
        attempt.status_message = "HTTP 503: Service Unavailable \xc3\xa9\t";
        attempt.attributes.push_back({"http.request.resend_count", std::int64_t(1)});
        attempt.attributes.push_back({"dd.min", std::int64_t(INT64_MIN)});
        attempt.attributes.push_back({"dd.nan", std::numeric_limits<double>::quiet_NaN()});
        attempt.attributes.push_back({"dd.inf", -std::numeric_limits<double>::infinity()});
        attempt.attributes.push_back({"dd.empty", std::string()});
        attempt.events.push_back({"upload.progress", attempt.start + 1ms, {{"bytes_sent", std::int64_t(65536)}}});
        attempt.events.push_back({"upload.progress", attempt.start + 2ms, {}});
        e.on_end(std::move(attempt));
        auto wait = make_span(3, 1);
        wait.kind = dd::span_kind::internal;
        wait.name = "rate_limiter.wait";
        wait.attributes = {};
        e.on_end(std::move(wait));
        e.on_end(make_span(4, 1));  // a second request
        ASSERT_TRUE(e.flush(30s));
    }
    const auto lines = file_lines(path);
    ASSERT_EQ(lines.size(), 2u);
    const json::value first = json::parse(lines[0]);
    EXPECT_EQ(first.at("resourceSpans").at(0).at("resource").at("attributes").at(0).at("value").at("stringValue"),
              "schema \"check\"\n");
    EXPECT_EQ(spans_of(first).size(), 3u);
    EXPECT_EQ(spans_of(first).at(1).at("status").at("message"), "HTTP 503: Service Unavailable \xc3\xa9\t");
    EXPECT_EQ(spans_of(first).at(1).at("attributes").at(5).at("value").at("intValue"), "-9223372036854775808");
    EXPECT_EQ(spans_of(first).at(1).at("attributes").at(6).at("value").at("doubleValue"), "NaN");
    EXPECT_EQ(spans_of(json::parse(lines[1])).size(), 1u);
    if (!out)
        std::remove(path.c_str());
}

}  // namespace
