// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The observer of client_params: which events a request, a retry, a 429, a
// rejected request and an upload produce, with what fields; and that no
// secret (API key, presigned signature, URL user info) reaches an observer.
#include "fixtures.hpp"

#include <digital_delivery/observer.hpp>
#include <digital_delivery/raw_request.hpp>
#include <digital_delivery/testing/virtual_clock.hpp>
#include <digital_delivery/upload.hpp>

#include <optional>
#include <string>
#include <vector>

using namespace fixtures;
using namespace std::chrono_literals;

namespace {

// Every event as a copy of its fields.
struct record
{
    std::string kind, endpoint, method, path_template, path, id, server;
    unsigned attempt = 0, status = 0;
    dd::error_code ec;
    std::chrono::milliseconds delay{0};
    int points = 0;
    std::size_t request_bytes = 0, response_bytes = 0;
    std::optional<dd::rate_limit_snapshot> rate_limit;
    std::string diag;     // operation_end: diag->to_string()
    std::string extra;    // throttle kind, upload refresh reason, progress figures
    dd::priority prio = dd::priority::normal;
};

class recording_observer final : public dd::observer
{
public:
    std::vector<record> events;

    std::vector<std::string> kinds() const
    {
        std::vector<std::string> k;
        for (auto& e : events)
            k.push_back(e.kind);
        return k;
    }
    const record* first(const std::string& kind) const
    {
        for (auto& e : events)
            if (e.kind == kind)
                return &e;
        return nullptr;
    }
    // Everything an observer could write to a log, concatenated.
    std::string all_text() const
    {
        std::string s;
        for (auto& e : events)
            s += e.kind + ' ' + e.endpoint + ' ' + e.path_template + ' ' + e.path + ' ' + e.id + ' ' + e.server + ' ' + e.diag + ' ' + e.extra + '\n';
        return s;
    }

    void on_request_start(const dd::request_start_event& e) override
    {
        auto& r = add("start", e.request);
        r.attempt = e.attempt;
        r.prio = e.prio;
    }
    void on_response(const dd::response_event& e) override
    {
        auto& r = add("response", e.request);
        r.attempt = e.attempt;
        r.status = e.status;
        r.ec = e.error;
        r.request_bytes = e.request_bytes;
        r.response_bytes = e.response_bytes;
        r.rate_limit = e.rate_limit();
    }
    void on_retry(const dd::retry_event& e) override
    {
        auto& r = add("retry", e.request);
        r.attempt = e.attempt;
        r.ec = e.reason;
        r.status = e.status;
        r.delay = e.delay;
    }
    void on_limiter_wait(const dd::limiter_wait_event& e) override
    {
        auto& r = add("limiter", e.request);
        r.points = e.points;
        r.ec = e.error;
        r.prio = e.prio;
    }
    void on_throttle(const dd::throttle_event& e) override
    {
        record r;
        r.kind = "throttle";
        r.extra = std::string(dd::to_string(e.what));
        r.delay = e.retry_after;
        events.push_back(std::move(r));
    }
    void on_upload_progress(const dd::upload_progress_event& e) override
    {
        record r;
        r.kind = "progress";
        r.id = std::string(e.asset_id);
        r.server = std::string(e.server_address);
        r.path = std::string(e.path);
        r.extra = std::to_string(e.progress.bytes_sent) + "/" + std::to_string(e.progress.total);
        events.push_back(std::move(r));
    }
    void on_upload_refresh(const dd::upload_refresh_event& e) override
    {
        record r;
        r.kind = "refresh";
        r.id = std::string(e.asset_id);
        r.extra = std::string(e.reason);
        events.push_back(std::move(r));
    }
    void on_operation_end(const dd::operation_end_event& e) override
    {
        auto& r = add("end", e.request);
        r.ec = e.error;
        r.attempt = e.attempts;
        r.diag = e.diag ? e.diag->to_string() : "(null)";
    }

private:
    record& add(const char* kind, const dd::request_info& i)
    {
        record r;
        r.kind = kind;
        r.endpoint = std::string(i.endpoint);
        r.method = std::string(dd::to_string(i.method));
        r.path_template = std::string(i.path_template);
        r.path = std::string(i.path);
        r.id = std::string(i.id);
        r.server = std::string(i.server_address);
        events.push_back(std::move(r));
        return events.back();
    }
};

class observer_test : public ::testing::Test
{
protected:
    asio::io_context ioc;
    std::shared_ptr<dd::testing::fake_transport> fake = std::make_shared<dd::testing::fake_transport>(ioc.get_executor());
    std::shared_ptr<recording_observer> obs = std::make_shared<recording_observer>();
    dd::diagnostics diag;

    // Each test its own key (its own rate-limit bucket).
    dd::client make_client(dd::rate_limit_params rl = {.enabled = false}, dd::retry_params rp = {.initial_backoff = 1ms, .max_backoff = 5ms})
    {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        return dd::client(fake, {.base_url = base_url, .api_key = std::string(api_key) + info->name(), .rate_limit = rl, .retry = rp, .observer = obs});
    }

    template <class F>
    auto run(F&& f)
    {
        return dd_test::run_awaitable(ioc, f(asio::as_tuple(asio::use_awaitable)));
    }

    void expect_no_secret(const std::string& key) const
    {
        const std::string text = obs->all_text();
        EXPECT_EQ(text.find(key), std::string::npos) << text;
        EXPECT_EQ(text.find("X-Amz"), std::string::npos) << text;
        EXPECT_EQ(text.find("deadbeef"), std::string::npos) << text;
        EXPECT_EQ(text.find("hunter2"), std::string::npos) << text;
    }

    std::string ok_order() const { return R"({"order":)" + order_json() + "}"; }
};

TEST(observer, absent_by_default)
{
    dd::client_params p;
    EXPECT_EQ(p.observer, nullptr);
}

TEST(observer, redacted_url_drops_query_fragment_and_user_info)
{
    EXPECT_EQ(dd::redacted_url("https://u:hunter2@s.example:9000/b/k?X-Amz-Signature=deadbeef#f"), "https://s.example:9000/b/k");
    EXPECT_EQ(dd::redacted_url("http://h/p"), "http://h/p");
    EXPECT_EQ(dd::redacted_url("http://h?q=1"), "http://h");
    EXPECT_EQ(dd::redacted_url("https://user@h"), "https://h");
}

TEST_F(observer_test, a_get_reports_wait_start_response_end)
{
    auto c = make_client({.enabled = true});
    fake->expect_any().respond(200, ok_order()).header("X-RateLimit-Limit", "40").header("X-RateLimit-Remaining", "39");
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(c, "o1", dd::request_options{.prio = dd::priority::interactive}, t); });
    ASSERT_FALSE(ec);
    EXPECT_EQ(obs->kinds(), (std::vector<std::string>{"limiter", "start", "response", "end"}));
    for (const auto& e : obs->events)
    {
        SCOPED_TRACE(e.kind);
        EXPECT_EQ(e.endpoint, "get_order");
        EXPECT_EQ(e.method, "GET");
        EXPECT_EQ(e.path_template, "/orders/{id}");
        EXPECT_EQ(e.path, "/orders/o1");
        EXPECT_EQ(e.id, "o1");
        EXPECT_EQ(e.server, "dd.example.test");
    }
    EXPECT_EQ(obs->first("limiter")->points, 1);
    EXPECT_EQ(obs->first("limiter")->prio, dd::priority::interactive);
    EXPECT_EQ(obs->first("start")->attempt, 1u);
    EXPECT_EQ(obs->first("start")->prio, dd::priority::interactive);
    const record& r = *obs->first("response");
    EXPECT_EQ(r.status, 200u);
    EXPECT_FALSE(r.ec);
    EXPECT_EQ(r.response_bytes, ok_order().size());
    ASSERT_TRUE(r.rate_limit);
    EXPECT_EQ(r.rate_limit->remaining, 39);
    EXPECT_EQ(r.rate_limit->limit, 40);
    const record& end = *obs->first("end");
    EXPECT_FALSE(end.ec);
    EXPECT_EQ(end.attempt, 1u);
    expect_no_secret(c.params().api_key);
}

TEST_F(observer_test, a_write_reports_its_points_and_body_size)
{
    auto c = make_client({.enabled = true});
    fake->expect_any().respond(201, R"({"asset":)" + asset_json(true, "licence") + "}");
    auto [ec, a] = run([&](auto t) { return dd::async_create_asset(c, {.type = dd::asset_type::licence}, t); });
    ASSERT_FALSE(ec);
    EXPECT_EQ(obs->first("limiter")->points, 2);
    EXPECT_EQ(obs->first("start")->endpoint, "create_asset");
    EXPECT_EQ(obs->first("start")->id, "");
    EXPECT_EQ(obs->first("response")->request_bytes, fake->requests().at(0).body.size());
    EXPECT_EQ(obs->first("response")->status, 201u);
}

TEST_F(observer_test, retries_report_each_attempt_and_the_delay)
{
    auto c = make_client();
    fake->expect_any().respond(503, "<html>busy</html>");
    fake->expect_any().fail(asio::error::connection_reset);
    fake->expect_any().respond(200, ok_order());
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(c, "o1", t); });
    ASSERT_FALSE(ec);
    EXPECT_EQ(obs->kinds(), (std::vector<std::string>{"start", "response", "retry", "start", "response", "retry", "start", "response", "end"}));
    std::vector<const record*> responses, retries, starts;
    for (const auto& e : obs->events)
        (e.kind == "response" ? responses : e.kind == "retry" ? retries : starts).push_back(&e);
    EXPECT_EQ(responses[0]->status, 503u);
    EXPECT_EQ(responses[0]->ec, dd::api_errc::server_error);
    EXPECT_EQ(responses[1]->status, 0u);
    EXPECT_EQ(responses[1]->ec, asio::error::connection_reset);
    EXPECT_EQ(responses[2]->status, 200u);
    EXPECT_EQ(retries[0]->attempt, 1u);
    EXPECT_EQ(retries[0]->ec, dd::api_errc::server_error);
    EXPECT_EQ(retries[0]->status, 503u);
    EXPECT_EQ(retries[1]->attempt, 2u);
    EXPECT_LE(retries[0]->delay, 5ms);
    EXPECT_EQ(obs->first("end")->attempt, 3u);
}

TEST_F(observer_test, a_429_reports_throttle_and_the_retry_after)
{
    auto c = make_client({.enabled = true});
    fake->expect_any().respond(429, R"({"error":"Rate limit exceeded"})").header("Retry-After", "5");
    fake->expect_any().respond(200, ok_order());
    dd::testing::virtual_clock vc;
    auto fut = asio::co_spawn(ioc, dd::async_get_order(c, "o1", diag, asio::as_tuple(asio::use_awaitable)), asio::use_future);
    vc.run_for(ioc, 6s, 100ms);
    auto [ec, o] = dd_test::wait(ioc, fut);
    ASSERT_FALSE(ec) << diag.to_string();
    const record* th = obs->first("throttle");
    ASSERT_TRUE(th);
    EXPECT_EQ(th->extra, "paused");
    EXPECT_EQ(th->delay, 5s);
    const record* retry = obs->first("retry");
    ASSERT_TRUE(retry);
    EXPECT_EQ(retry->ec, dd::api_errc::rate_limited);
    EXPECT_EQ(retry->status, 429u);
    EXPECT_EQ(retry->delay, 5s);
    // The second grant waited for the pause: reported by the limiter event.
    int limiter_events = 0;
    for (const auto& e : obs->events)
        limiter_events += e.kind == "limiter";
    EXPECT_EQ(limiter_events, 2);
}

TEST_F(observer_test, a_rejected_request_only_ends_with_its_diagnostics)
{
    auto c = make_client();
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(c, "..", t); });
    EXPECT_EQ(ec, dd::client_errc::invalid_path_parameter);
    ASSERT_EQ(obs->kinds(), (std::vector<std::string>{"end"}));
    EXPECT_EQ(obs->events[0].ec, dd::client_errc::invalid_path_parameter);
    EXPECT_NE(obs->events[0].diag.find("must not be empty"), std::string::npos) << obs->events[0].diag;
    EXPECT_TRUE(fake->requests().empty());
}

TEST_F(observer_test, the_end_has_the_servers_words_even_without_caller_diagnostics)
{
    auto c = make_client();
    fake->expect_any().respond(404, R"({"error":"Order not found"})");
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(c, "missing", t); });
    EXPECT_EQ(ec, dd::api_errc::order_not_found);
    const record* end = obs->first("end");
    ASSERT_TRUE(end);
    EXPECT_EQ(end->ec, dd::api_errc::order_not_found);
    EXPECT_NE(end->diag.find("Order not found"), std::string::npos) << end->diag;
    expect_no_secret(c.params().api_key);
}

TEST_F(observer_test, raw_requests_are_named_raw)
{
    auto c = make_client();
    fake->expect_any().respond(200, R"({"shop":{}})");
    dd::raw_request r{.method = dd::http_method::get, .path = "/shop"};
    auto [ec, v] = run([&](auto t) { return dd::async_raw_request(c, r, t); });
    ASSERT_FALSE(ec);
    ASSERT_TRUE(obs->first("end"));
    EXPECT_EQ(obs->first("end")->endpoint, "raw");
    EXPECT_EQ(obs->first("end")->path_template, "/shop");
}

// The cost rule (detail::request_cost) holds for raw requests as for
// endpoints: GET 1 point, any other method 2.
TEST_F(observer_test, raw_requests_cost_one_point_per_get_and_two_per_write)
{
    auto c = make_client({.enabled = true});
    fake->expect_any().respond(200, R"({"shop":{}})");
    fake->expect_any().respond(200, R"({"shop":{}})");
    for (auto m : {dd::http_method::get, dd::http_method::patch})
    {
        dd::raw_request r{.method = m, .path = "/shop"};
        if (m != dd::http_method::get)
            r.body = "{}";
        auto [ec, v] = run([&](auto t) { return dd::async_raw_request(c, r, t); });
        ASSERT_FALSE(ec);
    }
    std::vector<int> points;
    for (const auto& e : obs->events)
        if (e.kind == "limiter")
            points.push_back(e.points);
    EXPECT_EQ(points, (std::vector<int>{1, 2}));
}

TEST_F(observer_test, an_upload_reports_its_put_progress_refresh_and_end_without_the_signature)
{
    auto c = make_client();
    const std::string url1 = "https://u:hunter2@storage.example/bucket/a1/u/manual.pdf?X-Amz-Signature=deadbeef";
    const std::string url2 = "https://storage.example/bucket/a1/v/manual.pdf?X-Amz-Signature=deadbeef2";
    const char* expired_xml = "<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>";
    fake->expect_any().respond(201, asset_with_upload_json(url1));
    fake->expect_any().respond(403, expired_xml);
    fake->expect_any().respond(200, asset_with_upload_json(url2));
    fake->expect_any().respond(200);
    bool done = false;
    dd::error_code uec;
    dd::async_upload_asset(c, std::make_shared<dd::memory_source>("abc"), {.filename = "manual.pdf"},
                           dd::upload_options{.reread_asset = false}, diag, [&](dd::error_code ec, dd::asset) {
                               uec = ec;
                               done = true;
                           });
    dd_test::run(ioc);
    ASSERT_TRUE(done);
    ASSERT_FALSE(uec) << diag.to_string();

    const record* refresh = obs->first("refresh");
    ASSERT_TRUE(refresh);
    EXPECT_EQ(refresh->extra, "rejected");
    int put_starts = 0;
    for (const auto& e : obs->events)
        if (e.kind == "start" && e.endpoint == "upload_body")
        {
            ++put_starts;
            EXPECT_EQ(e.method, "PUT");
            EXPECT_EQ(e.server, "storage.example");
            EXPECT_TRUE(e.path == "/bucket/a1/u/manual.pdf" || e.path == "/bucket/a1/v/manual.pdf") << e.path;
        }
    EXPECT_EQ(put_starts, 2);
    const record* progress = nullptr;
    for (const auto& e : obs->events)
        if (e.kind == "progress")
            progress = &e;
    ASSERT_TRUE(progress);
    EXPECT_EQ(progress->extra, "3/3");
    EXPECT_EQ(progress->id, "a1");
    const record& last = obs->events.back();
    EXPECT_EQ(last.kind, "end");
    EXPECT_EQ(last.endpoint, "upload");
    EXPECT_FALSE(last.ec);
    // The API calls inside the upload are reported as themselves.
    EXPECT_EQ(obs->first("start")->endpoint, "create_asset");
    bool replaced = false;
    for (const auto& e : obs->events)
        replaced |= e.kind == "end" && e.endpoint == "replace_asset" && e.id == "a1";
    EXPECT_TRUE(replaced);
    expect_no_secret(c.params().api_key);
}

}  // namespace
