// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The two ready-made observers: json_logger (one JSON line per event, levels,
// stream or callback sink, no secrets) and metrics_observer (series per
// endpoint/status/error, retries, 429s, limiter waits, Prometheus text).
#include "fixtures.hpp"

#include <digital_delivery/json_logger.hpp>
#include <digital_delivery/metrics.hpp>
#include <digital_delivery/testing/virtual_clock.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

using namespace fixtures;
using namespace std::chrono_literals;

namespace {

class builtin_observers_test : public ::testing::Test
{
protected:
    asio::io_context ioc;
    std::shared_ptr<dd::testing::fake_transport> fake = std::make_shared<dd::testing::fake_transport>(ioc.get_executor());

    dd::client make_client(std::shared_ptr<dd::observer> obs, dd::rate_limit_params rl = {.enabled = false})
    {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        return dd::client(fake, {.base_url = base_url,
                                 .api_key = std::string(api_key) + info->name(),
                                 .rate_limit = rl,
                                 .retry = {.initial_backoff = 1ms, .max_backoff = 5ms},
                                 .observer = std::move(obs)});
    }

    template <class F>
    auto run(F&& f)
    {
        return dd_test::run_awaitable(ioc, f(asio::as_tuple(asio::use_awaitable)));
    }

    std::string ok_order() const { return R"({"order":)" + order_json() + "}"; }

    static std::vector<std::string> lines_of(const std::string& text)
    {
        std::vector<std::string> v;
        std::istringstream is(text);
        for (std::string l; std::getline(is, l);)
            v.push_back(l);
        return v;
    }
};

TEST_F(builtin_observers_test, json_logger_writes_one_parseable_line_per_event_at_its_level)
{
    std::ostringstream os;
    auto logger = std::make_shared<dd::json_logger>(os, dd::log_level::debug);
    auto c = make_client(logger);
    fake->expect_any().respond(503, "<html>busy</html>");
    fake->expect_any().respond(200, ok_order()).header("X-RateLimit-Remaining", "38").header("X-RateLimit-Limit", "40");
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(c, "o\"1", t); });
    ASSERT_FALSE(ec);
    const auto lines = lines_of(os.str());
    ASSERT_EQ(lines.size(), 6u) << os.str();  // start, response 503, retry, start, response 200, end
    std::vector<std::string> events, levels;
    for (const auto& l : lines)
    {
        boost::system::error_code jec;
        auto v = boost::json::parse(l, jec);
        ASSERT_FALSE(jec) << l;
        ASSERT_TRUE(v.is_object()) << l;
        const auto& obj = v.as_object();
        events.emplace_back(obj.at("event").as_string());
        levels.emplace_back(obj.at("level").as_string());
        EXPECT_TRUE(obj.contains("time")) << l;
        EXPECT_EQ(obj.at("endpoint").as_string(), "get_order") << l;
        EXPECT_EQ(obj.at("http.request.method").as_string(), "GET") << l;
        EXPECT_EQ(obj.at("url.template").as_string(), "/orders/{id}") << l;
        EXPECT_EQ(obj.at("server.address").as_string(), "dd.example.test") << l;
        EXPECT_EQ(l.find(c.params().api_key), std::string::npos) << l;
    }
    EXPECT_EQ(events, (std::vector<std::string>{"request.start", "response", "retry", "request.start", "response", "operation.end"}));
    EXPECT_EQ(levels, (std::vector<std::string>{"debug", "warning", "warning", "debug", "debug", "info"}));
    auto first_response = boost::json::parse(lines[1]).as_object();
    EXPECT_EQ(first_response.at("http.response.status_code").as_int64(), 503);
    EXPECT_EQ(first_response.at("error.type").as_string(), "server_error");
    auto ok = boost::json::parse(lines[4]).as_object();
    EXPECT_EQ(ok.at("ratelimit.remaining").as_int64(), 38);
    EXPECT_FALSE(ok.contains("error.type"));
    auto end = boost::json::parse(lines[5]).as_object();
    EXPECT_EQ(end.at("attempts").as_int64(), 2);
    EXPECT_EQ(end.at("url.path").as_string(), "/orders/o%221");
}

TEST_F(builtin_observers_test, json_logger_filters_by_level_and_writes_failures_with_diagnostics)
{
    std::vector<std::pair<dd::log_level, std::string>> got;
    auto logger = std::make_shared<dd::json_logger>([&](dd::log_level l, std::string_view line) { got.emplace_back(l, std::string(line)); });
    EXPECT_EQ(logger->level(), dd::log_level::info);
    auto c = make_client(logger);
    fake->expect_any().respond(200, ok_order());
    fake->expect_any().respond(404, R"({"error":"Order not found"})");
    (void)run([&](auto t) { return dd::async_get_order(c, "o1", t); });
    (void)run([&](auto t) { return dd::async_get_order(c, "missing", t); });
    // At info: the success's end, the 404's response (a warning) and its end; no debug lines.
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0].first, dd::log_level::info);
    EXPECT_EQ(got[1].first, dd::log_level::warning);
    EXPECT_EQ(got[2].first, dd::log_level::error);
    auto v = boost::json::parse(got[2].second).as_object();
    EXPECT_EQ(v.at("error.type").as_string(), "order_not_found");
    EXPECT_EQ(v.at("http.response.status_code").as_int64(), 404);
    EXPECT_NE(std::string(v.at("diagnostics").as_string()).find("Order not found"), std::string::npos);

    got.clear();
    logger->set_level(dd::log_level::off);
    fake->expect_any().respond(404, R"({"error":"Order not found"})");
    (void)run([&](auto t) { return dd::async_get_order(c, "missing", t); });
    EXPECT_TRUE(got.empty());
}

TEST(builtin_observers, json_logger_names_every_throttle_event)
{
    std::vector<std::pair<dd::log_level, std::string>> got;
    dd::json_logger logger([&](dd::log_level l, std::string_view line) { got.emplace_back(l, std::string(line)); },
                           dd::log_level::info);
    dd::throttle_event e;
    using kind = dd::throttle_event::kind;
    for (auto what : {kind::paused, kind::resumed, kind::store_unavailable, kind::store_restored, kind::store_misconfigured})
    {
        e.what = what;
        e.message = what == kind::store_unavailable     ? "connect: Connection refused"
                    : what == kind::store_misconfigured ? "AUTH refused: WRONGPASS"
                                                        : "";
        logger.on_throttle(e);
    }
    ASSERT_EQ(got.size(), 5u);
    std::vector<std::string> events;
    for (const auto& [level, line] : got)
        events.emplace_back(boost::json::parse(line).as_object().at("event").as_string());
    EXPECT_EQ(events, (std::vector<std::string>{"ratelimit.paused", "ratelimit.resumed", "ratelimit.store_unavailable",
                                                "ratelimit.store_restored", "ratelimit.store_misconfigured"}));
    EXPECT_EQ(got[0].first, dd::log_level::warning);
    EXPECT_EQ(got[1].first, dd::log_level::info);
    EXPECT_EQ(got[2].first, dd::log_level::warning);
    EXPECT_EQ(got[3].first, dd::log_level::info);
    EXPECT_EQ(got[4].first, dd::log_level::error);
    EXPECT_EQ(boost::json::parse(got[2].second).as_object().at("message").as_string(), "connect: Connection refused");
    EXPECT_EQ(boost::json::parse(got[4].second).as_object().at("message").as_string(), "AUTH refused: WRONGPASS");
    for (auto what : {kind::paused, kind::resumed, kind::store_unavailable, kind::store_restored, kind::store_misconfigured})
        EXPECT_EQ("ratelimit." + std::string(dd::to_string(what)), events[static_cast<std::size_t>(what)]);
}

TEST_F(builtin_observers_test, metrics_count_series_retries_429s_and_limiter_waits)
{
    auto metrics = std::make_shared<dd::metrics_observer>();
    auto c = make_client(metrics, {.enabled = true});
    fake->expect_any().respond(200, ok_order());
    fake->expect_any().respond(200, ok_order());
    fake->expect_any().respond(404, R"({"error":"Order not found"})");
    fake->expect_any().respond(429, R"({"error":"Rate limit exceeded"})").header("Retry-After", "2");
    fake->expect_any().respond(200, ok_order());
    dd::testing::virtual_clock vc;
    auto fut = asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            co_await dd::async_get_order(c, "o1", asio::as_tuple(asio::use_awaitable));
            co_await dd::async_get_order(c, "o2", asio::as_tuple(asio::use_awaitable));
            co_await dd::async_get_order(c, "missing", asio::as_tuple(asio::use_awaitable));
            co_await dd::async_get_order(c, "o3", asio::as_tuple(asio::use_awaitable));
        },
        asio::use_future
    );
    ASSERT_TRUE(vc.run_until(ioc, [&] { return fut.wait_for(0s) == std::future_status::ready; }, 5min, 100ms));
    fut.get();

    const dd::metrics_snapshot s = metrics->snapshot();
    auto find = [&](unsigned status) -> const dd::metrics_snapshot::request_series* {
        for (const auto& r : s.requests)
            if (r.status == status)
                return &r;
        return nullptr;
    };
    ASSERT_TRUE(find(200));
    EXPECT_EQ(find(200)->duration.count, 3u);
    EXPECT_EQ(find(200)->endpoint, "get_order");
    EXPECT_EQ(find(200)->method, "GET");
    EXPECT_EQ(find(200)->server_address, "dd.example.test");
    EXPECT_EQ(find(200)->error_type, "");
    ASSERT_TRUE(find(404));
    EXPECT_EQ(find(404)->error_type, "order_not_found");
    ASSERT_TRUE(find(429));
    EXPECT_EQ(s.rate_limited_responses, 1u);
    EXPECT_EQ(s.throttle_pauses, 1u);
    ASSERT_EQ(s.retries.size(), 1u);
    EXPECT_EQ(s.retries[0].reason, "rate_limited");
    EXPECT_EQ(s.retries[0].count, 1u);
    EXPECT_EQ(s.limiter_wait.count, 5u);  // every attempt waited (or not) for its point
    std::uint64_t ops = 0;
    double op_seconds = 0;
    for (const auto& o : s.operations)
    {
        ops += o.duration.count;
        op_seconds += o.duration.sum;
    }
    EXPECT_EQ(ops, 4u);
    EXPECT_GE(op_seconds, 1.9);  // the operation that got the 429 waited out Retry-After (virtual time)
    for (const auto& r : s.requests)
    {
        std::uint64_t n = 0;
        for (auto k : r.duration.counts)
            n += k;
        EXPECT_EQ(n, r.duration.count);
        EXPECT_EQ(r.duration.counts.size(), dd::metrics_observer::default_buckets().size() + 1);
    }
}

TEST_F(builtin_observers_test, prometheus_exposition_is_well_formed)
{
    auto metrics = std::make_shared<dd::metrics_observer>(std::vector<double>{0.1, 1});
    auto c = make_client(metrics);
    fake->expect_any().respond(200, ok_order());
    fake->expect_any().respond(404, R"({"error":"Order not found"})");
    (void)run([&](auto t) { return dd::async_get_order(c, "o1", t); });
    (void)run([&](auto t) { return dd::async_get_order(c, "missing", t); });
    const std::string text = metrics->prometheus();
    const std::regex sample(R"re(^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? [-+0-9.eE]+$|^[a-zA-Z_:][a-zA-Z0-9_:]*\{.*le="\+Inf".*\} [0-9]+$)re");
    for (const auto& l : lines_of(text))
    {
        if (l.starts_with("# HELP ") || l.starts_with("# TYPE "))
            continue;
        EXPECT_TRUE(std::regex_match(l, sample)) << l;
    }
    EXPECT_NE(text.find("# TYPE http_client_request_duration_seconds histogram"), std::string::npos) << text;
    EXPECT_NE(text.find(R"(http_client_request_duration_seconds_count{http_request_method="GET",http_response_status_code="200",server_address="dd.example.test",endpoint="get_order"} 1)"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find(R"(http_client_request_duration_seconds_bucket{http_request_method="GET",http_response_status_code="404",server_address="dd.example.test",endpoint="get_order",error_type="order_not_found",le="+Inf"} 1)"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find(R"(dd_client_operation_duration_seconds_count{endpoint="get_order",http_request_method="GET",error_type="order_not_found"} 1)"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("dd_client_rate_limited_responses_total 0"), std::string::npos) << text;
    EXPECT_EQ(text.find(c.params().api_key), std::string::npos);
}

// One slot, several observers: each gets every event, in list order; a null
// entry is skipped.
TEST_F(builtin_observers_test, fan_out_observer_forwards_every_event_to_each)
{
    struct recorder final : dd::observer
    {
        std::vector<std::string>& log;
        std::string name;
        recorder(std::vector<std::string>& l, std::string n) : log(l), name(std::move(n)) {}
        void on_request_start(const dd::request_start_event&) override { log.push_back(name + ":start"); }
        void on_response(const dd::response_event& e) override { log.push_back(name + ":" + std::to_string(e.status)); }
        void on_operation_end(const dd::operation_end_event&) override { log.push_back(name + ":end"); }
    };
    std::vector<std::string> log;
    auto metrics = std::make_shared<dd::metrics_observer>();
    auto c = make_client(std::make_shared<dd::fan_out_observer>(std::vector<std::shared_ptr<dd::observer>>{
        std::make_shared<recorder>(log, "a"), nullptr, metrics, std::make_shared<recorder>(log, "b")}));
    fake->expect_any().respond(200, ok_order());
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(c, "o1", t); });
    ASSERT_FALSE(ec);
    EXPECT_EQ(log, (std::vector<std::string>{"a:start", "b:start", "a:200", "b:200", "a:end", "b:end"}));
    ASSERT_EQ(metrics->snapshot().requests.size(), 1u) << "the metrics observer in the list counted the request";
}

TEST(builtin_observers, error_type_names)
{
    EXPECT_EQ(dd::error_type({}), "");
    EXPECT_EQ(dd::error_type(dd::client_errc::connect_timeout), "connect_timeout");
    EXPECT_EQ(dd::error_type(dd::client_errc::invalid_argument), "invalid_argument");
    EXPECT_EQ(dd::error_type(dd::client_errc::insecure_upload_url), "insecure_upload_url");
    EXPECT_EQ(dd::error_type(dd::api_errc::invalid_api_key), "invalid_api_key");
    EXPECT_EQ(dd::error_type(dd::api_errc::storage_error), "storage_error");
    EXPECT_EQ(dd::error_type(asio::error::operation_aborted), "cancelled");
    EXPECT_EQ(dd::error_type(asio::error::connection_refused), "connection_refused");
    EXPECT_EQ(dd::error_type(asio::error::no_buffer_space), "_OTHER");
}

}  // namespace
