// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Cassettes without a process: recording through testing::fake_transport,
// replaying through the whole client on the virtual clock (docs/cassettes.md).
#include <digital_delivery.hpp>
#include <digital_delivery/impl/crypto/sha256.hpp>
#include <digital_delivery/testing/cassette.hpp>
#include <digital_delivery/testing/fake_transport.hpp>
#include <digital_delivery/testing/virtual_clock.hpp>
#include <digital_delivery/upload.hpp>

#include "cassette_helpers.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <optional>
#include <regex>
#include <string>

namespace dd = digital_delivery;
namespace asio = boost::asio;
using namespace std::chrono_literals;
using dd_cassette::cassette_file;
using dd_cassette::run_virtual;
using namespace dd_cassette::fixtures;

namespace {

// An HTTP-date: "Sun, 06 Nov 1994 08:49:37 GMT".
std::string imf(std::chrono::system_clock::time_point t)
{
    const std::time_t tt = std::chrono::system_clock::to_time_t(t);
    std::tm tm{};
    ::gmtime_r(&tt, &tm);
    char buf[64];
    std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    return buf;
}

class cassette_test : public dd_cassette::cassette_fixture
{
protected:
    // GET /orders/o1 (200 with rate-limit headers) and GET /orders/missing
    // (404) through `t`: the order's name, then the error and diagnostics.
    std::vector<std::string> two_reads(dd::testing::virtual_clock& vc, dd::any_transport t, const std::string& key)
    {
        dd::client c = make_client(std::move(t), key);
        dd::diagnostics diag;
        auto [ec1, o] = run_virtual(vc, ioc, dd::async_get_order(c, "o1", diag, asio::as_tuple(asio::use_awaitable)));
        auto [ec2, missing] = run_virtual(vc, ioc, dd::async_get_order(c, "missing", diag, asio::as_tuple(asio::use_awaitable)));
        return {ec1.message(), o.name, o.email, std::to_string(c.rate_limit().remaining.value_or(-1)), ec2.message(),
                diag.to_string()};
    }

    // The two reads recorded; a client of their replay, and the replay.
    std::pair<dd::client, std::shared_ptr<dd::testing::replay_transport>> replaying_two_reads(
        dd::testing::virtual_clock& vc, const std::string& key, dd::testing::cassette_options replay_options = {})
    {
        script_two_reads();
        two_reads(vc, recorder(), key);
        auto replay = player(std::move(replay_options));
        return {make_client(replay, key + "-replay", true), replay};
    }

    void script_two_reads()
    {
        fake->expect(dd::http_method::get, api("/orders/o1"))
            .respond(200, order_json("o1", "ada@example.com"))
            .header("X-RateLimit-Limit", "40")
            .header("X-RateLimit-Remaining", "37");
        fake->expect(dd::http_method::get, api("/orders/missing")).respond(404, R"({"error":"Order not found"})");
    }
};

TEST_F(cassette_test, a_replay_gives_the_same_results_and_diagnostics_as_the_recording)
{
    dd::testing::virtual_clock vc;
    script_two_reads();
    const auto recorded = two_reads(vc, recorder(), "key-replay-same");
    ASSERT_TRUE(fake->done());
    EXPECT_EQ(recorded[1], "#1001");
    EXPECT_EQ(recorded[3], "36") << "37 as the server said, less the point the 404 cost";
    EXPECT_NE(recorded[4], "Success");

    auto replay = player();
    const auto replayed = two_reads(vc, replay, "key-replay-same-2");
    EXPECT_EQ(replayed, recorded);
    dd::diagnostics d;
    EXPECT_FALSE(replay->verify(d)) << d.client_message;
    EXPECT_EQ(fake->requests().size(), 2u) << "the replay sent nothing to the live transport";
}

TEST_F(cassette_test, the_file_is_versioned_pretty_json_in_a_stable_key_order)
{
    dd::testing::virtual_clock vc;
    fake->expect(dd::http_method::post, api("/assets?dry=1"))
        .respond(201, R"({"asset":{"id":"x1","type":"licence","name":"Key","created_at":"2026-01-01T00:00:00Z"}})")
        .header("X-RateLimit-Remaining", "39");
    auto rec = recorder();
    dd::http_request req;
    req.method = dd::http_method::post;
    req.url = std::string(base_url) + "/assets?dry=1";
    req.headers.add("X-Auth-Token", "key-format");
    req.headers.add("Content-Type", "application/json");
    req.body = R"({"asset":{"type":"licence","name":"Key"}})";
    auto [ec, r] = run_virtual(vc, ioc, dd::async_transport_send(*rec, std::move(req), asio::as_tuple(asio::use_awaitable)));
    ASSERT_FALSE(ec);
    EXPECT_EQ(rec->size(), 1u);
    std::string text = file.text();
    text = std::regex_replace(text, std::regex(R"("recorded_at": "[^"]*")"), R"("recorded_at": "T")");
    EXPECT_EQ(text, R"({
  "version": 1,
  "recorded_at": "T",
  "exchanges": [
    {
      "request": {
        "method": "POST",
        "path": "/api/v1/external/assets",
        "query": "dry=1",
        "headers": {
          "X-Auth-Token": "REDACTED",
          "Content-Type": "application/json"
        },
        "json": {
          "asset": {
            "type": "licence",
            "name": "Key"
          }
        }
      },
      "response": {
        "status": 201,
        "headers": {
          "Content-Type": "application/json",
          "X-RateLimit-Remaining": "39"
        },
        "json": {
          "asset": {
            "id": "x1",
            "type": "licence",
            "name": "Key",
            "created_at": "2026-01-01T00:00:00Z"
          }
        }
      }
    }
  ]
}
)");
}

TEST_F(cassette_test, secrets_signatures_and_masked_fields_never_reach_the_file)
{
    dd::testing::virtual_clock vc;
    const std::string key = "sk_live_VERY_SECRET_KEY_42";
    fake->expect(dd::http_method::post, api("/assets")).respond(201, with_upload(5, vc.system_now() + 1h));
    fake->expect(dd::http_method::put, std::string(dd::testing::fake_transport::target_of(put_url))).respond(200);
    fake->expect(dd::http_method::get, api("/assets/a1")).respond(200, R"({"asset":)" + asset_json(5) + "}");
    fake->expect(dd::http_method::get, api("/orders/o1")).respond(200, order_json("o1", "ada@example.com"));
    fake->expect(dd::http_method::get, api("/orders/o2"))
        .respond(200, order_json("o2", "ada@example.com"))
        .header("Set-Cookie", "session=cookie-secret-value");
    fake->expect(dd::http_method::get, api("/orders/o3"))
        .respond(200, order_json("o3", "grace@example.com"))
        .header("Link", "<https://admin:hunter2-secret@mirror.example/o3?sig=abc123xyz789>; rel=alternate");
    const dd::testing::cassette_options opts{.masked_fields = {"email"}};
    {
        dd::client c = make_client(recorder(opts), key);
        auto src = std::make_shared<dd::memory_source>("hello");
        const dd::upload_asset_params meta{.filename = "manual.pdf"};
        auto [uec, a] = run_virtual(vc, ioc, dd::async_upload_asset(c, src, meta, asio::as_tuple(asio::use_awaitable)));
        ASSERT_FALSE(uec) << uec.message();
        for (const char* id : {"o1", "o2", "o3"})
        {
            auto [ec, o] = run_virtual(vc, ioc, dd::async_get_order(c, id, asio::as_tuple(asio::use_awaitable)));
            ASSERT_FALSE(ec) << ec.message();
        }
    }
    ASSERT_TRUE(fake->done());
    const std::string text = file.text();
    for (const char* secret : {"sk_live_VERY_SECRET_KEY_42", "5f1e0c9a7b3d2e4f6a8b", "AKIDEXAMPLE7Q", "cookie-secret-value",
                               "hunter2-secret", "abc123xyz789", "ada@example.com", "grace@example.com", "hello"})
        EXPECT_EQ(text.find(secret), std::string::npos) << secret << " is in the cassette:\n" << text;
    EXPECT_NE(text.find("X-Amz-Signature=REDACTED"), std::string::npos);
    EXPECT_NE(text.find("X-Amz-Algorithm=AWS4-HMAC-SHA256"), std::string::npos) << "only secrets are masked";
    // Stable placeholders: one per value.
    const auto count = [&](const std::string& s) {
        std::size_t n = 0;
        for (auto p = text.find(s); p != std::string::npos; p = text.find(s, p + 1))
            ++n;
        return n;
    };
    EXPECT_EQ(count("\"MASKED-email-1\""), 2u);
    EXPECT_EQ(count("\"MASKED-email-2\""), 1u);
    EXPECT_NE(text.find(R"("size": 5)"), std::string::npos);
    EXPECT_NE(text.find(dd::detail::sha256::hex("hello")), std::string::npos);

    // The masked presigned URL replays: the client PUTs to it, the replay matches it.
    auto replay = player(opts);
    dd::client c = make_client(replay, key);
    auto src = std::make_shared<dd::memory_source>("hello");
    const dd::upload_asset_params meta{.filename = "manual.pdf"};
    auto [uec, a] = run_virtual(vc, ioc, dd::async_upload_asset(c, src, meta, asio::as_tuple(asio::use_awaitable)));
    EXPECT_FALSE(uec) << uec.message();
    EXPECT_EQ(a.byte_size, 5);
    auto [ec, o] = run_virtual(vc, ioc, dd::async_get_order(c, "o1", asio::as_tuple(asio::use_awaitable)));
    EXPECT_EQ(o.email, "MASKED-email-1");
}

TEST_F(cassette_test, headers_and_query_parameters_of_ones_own_are_masked_and_still_match)
{
    dd::testing::virtual_clock vc;
    fake->expect(dd::http_method::get, "/partner/feed?session=sess-0123456789&page=2").respond(200, "ok");
    const dd::testing::cassette_options opts{.masked_query_parameters = {"session"}, .masked_headers = {"X-Partner-Token"}};
    const auto feed = [&](dd::any_transport t, const char* session) {
        dd::http_request req;
        req.url = std::string("https://partner.example/partner/feed?session=") + session + "&page=2";
        req.headers.add("X-Partner-Token", "partner-token-abcdef");
        auto [ec, r] = run_virtual(vc, ioc, dd::async_transport_send(t, std::move(req), asio::as_tuple(asio::use_awaitable)));
        return ec ? ec.message() : r.body;
    };
    EXPECT_EQ(feed(recorder(opts), "sess-0123456789"), "ok");
    const std::string text = file.text();
    EXPECT_EQ(text.find("sess-0123456789"), std::string::npos) << text;
    EXPECT_EQ(text.find("partner-token-abcdef"), std::string::npos) << text;
    EXPECT_NE(text.find(R"("query": "session=REDACTED&page=2")"), std::string::npos) << text;
    EXPECT_EQ(feed(player(opts), "another-session"), "ok") << "a masked parameter matches whatever its value";
}

TEST_F(cassette_test, a_request_matching_nothing_is_a_typed_error_naming_it_and_the_closest)
{
    dd::testing::virtual_clock vc;
    auto [c, replay] = replaying_two_reads(vc, "key-mismatch");
    dd::diagnostics diag;
    auto [ec, o] = run_virtual(vc, ioc, dd::async_get_order(c, "o2", diag, asio::as_tuple(asio::use_awaitable)));
    EXPECT_EQ(ec, dd::client_errc::cassette_no_match);
    EXPECT_EQ(diag.attempts, 1u) << "never retried, whatever the retry policy";
    EXPECT_NE(diag.client_message.find("GET /api/v1/external/orders/o2 matches no exchange"), std::string::npos)
        << diag.client_message;
    EXPECT_NE(diag.client_message.find("closest: #1 GET /api/v1/external/orders/o1"), std::string::npos)
        << diag.client_message;
    EXPECT_NE(diag.to_string().find("orders/o1"), std::string::npos) << diag.to_string();

    // Strict mode at the end: the mismatch, then (once it is gone) the unused exchanges.
    dd::diagnostics v;
    EXPECT_EQ(replay->verify(v), dd::client_errc::cassette_no_match);
    EXPECT_NE(v.client_message.find("orders/o2"), std::string::npos);
    EXPECT_THROW(replay->verify(), dd::error_with_diagnostics);
    EXPECT_EQ(replay->unused(), (std::vector<std::string>{"#1 GET /api/v1/external/orders/o1",
                                                            "#2 GET /api/v1/external/orders/missing"}));
}

TEST_F(cassette_test, strict_mode_reports_exchanges_never_used)
{
    dd::testing::virtual_clock vc;
    auto [c, replay] = replaying_two_reads(vc, "key-strict");
    auto [ec, o] = run_virtual(vc, ioc, dd::async_get_order(c, "o1", asio::as_tuple(asio::use_awaitable)));
    ASSERT_FALSE(ec);
    dd::diagnostics v;
    EXPECT_EQ(replay->verify(v), dd::client_errc::cassette_unused_exchanges);
    EXPECT_EQ(v.client_message, "1 recorded exchange(s) never used: #2 GET /api/v1/external/orders/missing");
}

TEST_F(cassette_test, in_recorded_order_the_next_exchange_must_match)
{
    dd::testing::virtual_clock vc;
    auto [c, replay] = replaying_two_reads(vc, "key-order", {.order = dd::testing::match_order::recorded});
    dd::diagnostics diag;
    auto [ec, o] = run_virtual(vc, ioc, dd::async_get_order(c, "missing", diag, asio::as_tuple(asio::use_awaitable)));
    EXPECT_EQ(ec, dd::client_errc::cassette_no_match);
    EXPECT_NE(diag.client_message.find("expected next: #1 GET /api/v1/external/orders/o1"), std::string::npos)
        << diag.client_message;

    // First unused match (the default) serves them in any order.
    auto any_order = player();
    dd::client c2 = make_client(any_order, "key-order-3");
    auto [ec2, o2] = run_virtual(vc, ioc, dd::async_get_order(c2, "missing", diag, asio::as_tuple(asio::use_awaitable)));
    EXPECT_EQ(ec2, dd::api_errc::order_not_found);
    auto [ec3, o3] = run_virtual(vc, ioc, dd::async_get_order(c2, "o1", asio::as_tuple(asio::use_awaitable)));
    EXPECT_FALSE(ec3);
}

TEST_F(cassette_test, a_recorded_429_replays_as_the_same_pause_and_retry)
{
    dd::testing::virtual_clock vc;
    fake->expect(dd::http_method::get, api("/orders/o1"))
        .respond(429, R"({"error":"Rate limit exceeded"})")
        .header("Retry-After", "30");
    fake->expect(dd::http_method::get, api("/orders/o1")).respond(200, order_json("o1", "a@example.com"));
    {
        dd::client c = make_client(recorder(), "key-429", true);
        auto [ec, o] = run_virtual(vc, ioc, dd::async_get_order(c, "o1", asio::as_tuple(asio::use_awaitable)));
        ASSERT_FALSE(ec) << ec.message();
    }
    ASSERT_TRUE(fake->done());

    auto replay = player();
    dd::client c = make_client(replay, "key-429-2", true);
    dd::diagnostics diag;
    auto fut = asio::co_spawn(ioc, dd::async_get_order(c, "o1", diag, asio::as_tuple(asio::use_awaitable)), asio::use_future);
    vc.run_for(ioc, 29s, 100ms);
    EXPECT_EQ(replay->unused().size(), 1u) << "the retry waits out Retry-After";
    EXPECT_NE(fut.wait_for(0s), std::future_status::ready);
    ASSERT_TRUE(vc.run_until(ioc, [&] { return fut.wait_for(0s) == std::future_status::ready; }, 2s, 100ms));
    auto [ec, o] = fut.get();
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_EQ(o.name, "#1001");
    EXPECT_EQ(diag.attempts, 2u);
    EXPECT_GE(diag.total_wait, 30s);
    EXPECT_TRUE(replay->unused().empty());
}

TEST_F(cassette_test, a_recorded_transport_error_replays_and_is_retried)
{
    dd::testing::virtual_clock vc;
    fake->expect(dd::http_method::get, api("/orders/o1")).fail(asio::error::connection_reset);
    fake->expect(dd::http_method::get, api("/orders/o1")).respond(200, order_json("o1", "a@example.com"));
    {
        dd::client c = make_client(recorder(), "key-reset", true);
        auto [ec, o] = run_virtual(vc, ioc, dd::async_get_order(c, "o1", asio::as_tuple(asio::use_awaitable)));
        ASSERT_FALSE(ec) << ec.message();
    }
    EXPECT_NE(file.text().find(R"("category": "system")"), std::string::npos) << file.text();

    auto replay = player();
    dd::client c = make_client(replay, "key-reset-2", true);
    dd::diagnostics diag;
    auto [ec, o] = run_virtual(vc, ioc, dd::async_get_order(c, "o1", diag, asio::as_tuple(asio::use_awaitable)));
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_EQ(diag.attempts, 2u);
    dd::diagnostics v;
    EXPECT_FALSE(replay->verify(v)) << v.client_message;
}

TEST_F(cassette_test, times_are_shifted_so_an_old_cassette_is_not_in_the_past)
{
    dd::testing::virtual_clock vc;
    // As if recorded three years ago: the Date, the window's reset a minute
    // after it, a Retry-After date 5 s after it, an upload URL valid for an hour.
    const auto then = vc.system_now() - std::chrono::hours(24 * 365 * 3);
    const auto then_s = std::chrono::floor<std::chrono::seconds>(then);
    fake->expect(dd::http_method::get, api("/orders/o1"))
        .respond(200, order_json("o1", "a@example.com"))
        .header("Date", imf(then))
        .header("X-RateLimit-Limit", "40")
        .header("X-RateLimit-Remaining", "12")
        .header("X-RateLimit-Reset", std::to_string(then_s.time_since_epoch().count() + 60))
        .header("Retry-After", imf(then + 5s));
    fake->expect(dd::http_method::post, api("/assets"))
        .respond(201, with_upload(5, then + 1h))
        .header("Date", imf(then));
    auto rec = recorder();
    for (auto [m, path] : {std::pair{dd::http_method::get, "/orders/o1"}, std::pair{dd::http_method::post, "/assets"}})
    {
        dd::http_request req;
        req.method = m;
        req.url = std::string(base_url) + path;
        auto [ec, r] = run_virtual(vc, ioc, dd::async_transport_send(*rec, std::move(req), asio::as_tuple(asio::use_awaitable)));
        ASSERT_FALSE(ec);
    }

    auto replay = player();
    dd::client c = make_client(replay, "key-shift");
    auto [ec, o] = run_virtual(vc, ioc, dd::async_get_order(c, "o1", asio::as_tuple(asio::use_awaitable)));
    ASSERT_FALSE(ec);
    const auto now = vc.system_now();
    const auto rl = c.rate_limit();
    ASSERT_TRUE(rl.reset.has_value());
    EXPECT_GT(*rl.reset, now + 58s);
    EXPECT_LT(*rl.reset, now + 62s);
    EXPECT_EQ(rl.remaining, 12);

    dd::http_request req;
    req.method = dd::http_method::post;
    req.url = std::string(base_url) + "/assets";
    auto [ec2, r] = run_virtual(vc, ioc, dd::async_transport_send(*replay, std::move(req), asio::as_tuple(asio::use_awaitable)));
    ASSERT_FALSE(ec2);
    const auto expires = dd::parse_timestamp(boost::json::parse(r.body).at("upload").at("expires_at").as_string());
    ASSERT_TRUE(expires.has_value());
    EXPECT_GT(dd::to_system_time(*expires), now + 58min) << "the upload URL is still valid when replayed";
    EXPECT_LT(dd::to_system_time(*expires), now + 62min);
}

TEST_F(cassette_test, bodies_match_only_when_asked_and_streams_by_size_and_sha256)
{
    dd::testing::virtual_clock vc;
    fake->expect(dd::http_method::put, "/bucket/k").respond(200);
    fake->expect(dd::http_method::post, api("/orders/o1/notify")).respond(200, R"({"notified":true})");
    const dd::testing::cassette_options opts{.masked_fields = {"email"}, .match_body = true};
    const auto send = [&](dd::any_transport t, std::shared_ptr<dd::body_source> stream, std::string body) {
        dd::http_request req;
        req.method = stream ? dd::http_method::put : dd::http_method::post;
        req.url = stream ? "https://storage.example/bucket/k" : std::string(base_url) + "/orders/o1/notify";
        req.body_stream = std::move(stream);
        req.body = std::move(body);
        req.headers.add("Content-Type", "application/json");
        auto [ec, r] = run_virtual(vc, ioc, dd::async_transport_send(t, std::move(req), asio::as_tuple(asio::use_awaitable)));
        return ec;
    };
    auto rec = recorder(opts);
    ASSERT_FALSE(send(rec, std::make_shared<dd::memory_source>("body one"), {}));
    ASSERT_FALSE(send(rec, nullptr, R"({"email":"x@example.com","note":"hi"})"));

    auto replay = player(opts);
    EXPECT_EQ(send(replay, std::make_shared<dd::memory_source>("body two"), {}), dd::client_errc::cassette_no_match);
    EXPECT_NE(replay->mismatches().at(0).find("(the body differs)"), std::string::npos) << replay->mismatches().at(0);
    EXPECT_FALSE(send(replay, std::make_shared<dd::memory_source>("body one"), {}));
    EXPECT_EQ(send(replay, nullptr, R"({"email":"y@example.com","note":"bye"})"), dd::client_errc::cassette_no_match);
    EXPECT_FALSE(send(replay, nullptr, R"({"email":"y@example.com","note":"hi"})"))
        << "a masked field matches whatever its value";

    // Without match_body, method, path and query are enough.
    auto lenient = player({.masked_fields = {"email"}});
    EXPECT_FALSE(send(lenient, std::make_shared<dd::memory_source>("body two"), {}));
    EXPECT_FALSE(send(lenient, nullptr, R"({"note":"bye"})"));
}

TEST_F(cassette_test, a_replayed_upload_stops_at_terminal_cancellation)
{
    dd::testing::virtual_clock vc;
    constexpr std::uint64_t size = 64u << 20;
    fake->expect(dd::http_method::put, "/bucket/big").respond(200);
    const auto put = [&](dd::any_transport t, asio::cancellation_signal* cancel) {
        dd::http_request req;
        req.method = dd::http_method::put;
        req.url = "https://storage.example/bucket/big";
        req.body_stream = std::make_shared<dd_cassette::generated_source>(size, ioc.get_executor());
        std::uint64_t sent = 0;
        req.on_body_progress = [&](std::uint64_t n) {
            sent = n;
            if (cancel && n >= (1u << 20))
                cancel->emit(asio::cancellation_type::terminal);
        };
        std::optional<dd::error_code> result;
        asio::cancellation_signal unused;
        t.async_send(std::move(req), dd::transport_handler(asio::bind_cancellation_slot(
                                         (cancel ? cancel : &unused)->slot(), [&](dd::error_code ec, dd::http_response) { result = ec; })));
        EXPECT_TRUE(vc.run_until(ioc, [&] { return result.has_value(); }, 60s, 10ms));
        return std::pair{result.value_or(dd::error_code()), sent};
    };
    ASSERT_FALSE(put(recorder(), nullptr).first);

    asio::cancellation_signal cancel;
    const auto [ec, sent] = put(player(), &cancel);
    EXPECT_EQ(ec, asio::error::operation_aborted);
    EXPECT_LT(sent, size) << "stopped before the end";
}

TEST_F(cassette_test, cassette_transport_records_once_then_replays)
{
    dd::testing::virtual_clock vc;
    int made = 0;
    const auto live = [&] {
        ++made;
        return dd::any_transport(fake);
    };
    fake->expect(dd::http_method::get, api("/orders/o1")).respond(200, order_json("o1", "a@example.com"));
    const auto read = [&](dd::testing::cassette_transport& t) {
        dd::client c = make_client(std::shared_ptr<dd::testing::cassette_transport>(&t, [](auto*) {}), "key-modes");
        auto [ec, o] = run_virtual(vc, ioc, dd::async_get_order(c, "o1", asio::as_tuple(asio::use_awaitable)));
        return ec ? ec.message() : o.name;
    };
    {
        dd::testing::cassette_transport first(ioc.get_executor(), file.path, dd::testing::record_mode::once, live);
        EXPECT_TRUE(first.recording());
        EXPECT_EQ(read(first), "#1001");
    }
    {
        dd::testing::cassette_transport second(ioc.get_executor(), file.path, dd::testing::record_mode::once, live);
        EXPECT_FALSE(second.recording());
        EXPECT_EQ(read(second), "#1001");
        EXPECT_NO_THROW(second.verify());
    }
    EXPECT_EQ(made, 1) << "replaying never makes the live transport";
    EXPECT_EQ(fake->requests().size(), 1u);
    {
        dd::testing::cassette_transport again(ioc.get_executor(), file.path, dd::testing::record_mode::all, live);
        EXPECT_TRUE(again.recording());
    }
    std::filesystem::remove(file.path);
    try
    {
        dd::testing::cassette_transport none(ioc.get_executor(), file.path, dd::testing::record_mode::none, live);
        ADD_FAILURE() << "a missing cassette replays nothing";
    }
    catch (const dd::error_with_diagnostics& e)
    {
        EXPECT_EQ(e.code(), dd::client_errc::cassette_invalid);
        EXPECT_NE(e.get_diagnostics().client_message.find(file.path), std::string::npos);
    }
}

TEST_F(cassette_test, a_cassette_that_cannot_be_written_fails_the_exchange_and_says_why)
{
    dd::testing::virtual_clock vc;
    fake->expect(dd::http_method::get, api("/orders/o1")).respond(200, order_json("o1", "a@example.com"));
    const std::string nowhere = file.path + ".missing-dir/cassette.json";
    dd::client c = make_client(std::make_shared<dd::testing::recording_transport>(dd::any_transport(fake), nowhere), "key-unwritable");
    dd::diagnostics diag;
    auto [ec, o] = run_virtual(vc, ioc, dd::async_get_order(c, "o1", diag, asio::as_tuple(asio::use_awaitable)));
    EXPECT_EQ(ec, dd::client_errc::cassette_invalid);
    EXPECT_NE(diag.client_message.find("cannot write cassette " + nowhere), std::string::npos) << diag.client_message;
}

TEST(cassette_modes, record_mode_from_env)
{
    const char* var = "DD_TEST_CASSETTE_MODE";
    ::unsetenv(var);
    EXPECT_EQ(dd::testing::record_mode_from_env(dd::testing::record_mode::none, var), dd::testing::record_mode::none);
    ::setenv(var, "all", 1);
    EXPECT_EQ(dd::testing::record_mode_from_env(dd::testing::record_mode::once, var), dd::testing::record_mode::all);
    ::setenv(var, "once", 1);
    EXPECT_EQ(dd::testing::record_mode_from_env(dd::testing::record_mode::none, var), dd::testing::record_mode::once);
    ::setenv(var, "sometimes", 1);
    EXPECT_THROW(dd::testing::record_mode_from_env(dd::testing::record_mode::once, var), std::invalid_argument);
    ::unsetenv(var);
}

TEST(cassette_files, a_file_that_is_no_cassette_is_refused)
{
    asio::io_context ioc;
    cassette_file file;
    for (const char* content : {"not json", R"({"version": 2, "exchanges": []})", R"({"version": 1})",
                                R"({"version": 1, "exchanges": [{"request": {"method": "GET"}}]})"})
    {
        std::ofstream(file.path) << content;
        try
        {
            dd::testing::replay_transport t(ioc.get_executor(), file.path);
            ADD_FAILURE() << content;
        }
        catch (const dd::error_with_diagnostics& e)
        {
            EXPECT_EQ(e.code(), dd::client_errc::cassette_invalid) << content;
        }
    }
}

TEST(cassette_sha256, pieces_of_any_size_hash_like_the_whole)
{
    std::string data;
    for (int i = 0; i < 1000; ++i)
        data += static_cast<char>(i * 7);
    for (std::size_t piece : {1u, 3u, 63u, 64u, 65u, 200u})
    {
        dd::detail::sha256 h;
        for (std::size_t at = 0; at < data.size(); at += piece)
            h.update(std::string_view(data).substr(at, piece));
        EXPECT_EQ(dd::detail::sha256::to_hex(h.finish()), dd::detail::sha256::hex(data)) << piece;
    }
    EXPECT_EQ(dd::detail::sha256::hex(std::string(1000, 'a')), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
}

}  // namespace
