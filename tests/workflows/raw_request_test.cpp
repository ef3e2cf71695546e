// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// async_raw_request on the fake transport: happy path, typed errors, path
// validation before sending, query/body/options/diagnostics pass-through.
#include "fixtures.hpp"

#include <digital_delivery/raw_request.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/detached.hpp>

using namespace fixtures;

namespace {

class raw_request_test : public client_test
{
};

TEST_F(raw_request_test, get_happy_path)
{
    fake->expect(dd::http_method::get, target("/orders/o1/new_beta")).respond(200, R"({"beta":{"x":[1,2]}})");
    auto [ec, v] = run([&](auto tok) { return dd::async_raw_request(client, {.method = dd::http_method::get, .path = "/orders/o1/new_beta"}, tok); });
    ASSERT_FALSE(ec) << ec.message();
    EXPECT_EQ(v.at("beta").at("x").at(1).as_int64(), 2);
    const auto r = last_request();
    EXPECT_EQ(r.headers.find("X-Auth-Token").value_or(""), api_key);
    EXPECT_TRUE(r.idempotent);
    EXPECT_TRUE(fake->done());
}

TEST_F(raw_request_test, post_with_query_body_options_and_diagnostics)
{
    fake->expect(dd::http_method::post, target("/orders/o1/notify?email=a%40b.c&x=1%202")).respond(200, R"({"notified":true})");
    const dd::http_headers::field trace[] = {{"X-Trace", "abc"}};
    const dd::request_options opts{.extra_headers = trace};
    auto [ec, v] = run([&](auto tok) {
        const dd::raw_query query{{"email", "a@b.c"}, {"x", "1 2"}};
        return dd::async_raw_request(
            client,
            {.method = dd::http_method::post, .path = "/orders/o1/notify", .query = query, .body = R"( {"email": "a@b.c"} )"},
            opts,
            diag,
            tok
        );
    });
    ASSERT_FALSE(ec) << ec.message();
    EXPECT_TRUE(v.at("notified").as_bool());
    const auto r = last_request();
    EXPECT_EQ(r.body, R"({"email":"a@b.c"})");
    EXPECT_EQ(r.headers.find("Content-Type").value_or(""), "application/json");
    EXPECT_EQ(r.headers.find("X-Trace").value_or(""), "abc");
    EXPECT_FALSE(r.idempotent) << "POST is not idempotent";
    EXPECT_EQ(diag.method, "POST");
    EXPECT_EQ(diag.path, "/orders/o1/notify");
    EXPECT_TRUE(fake->done()) << ::testing::PrintToString(fake->mismatches());
}

TEST_F(raw_request_test, typed_error_and_error_body)
{
    fake->expect_any().respond(404, R"({"error":"Order not found"})");
    auto [ec, v] = run([&](auto tok) { return dd::async_raw_request(client, {.method = dd::http_method::get, .path = "/orders/zz"}, diag, tok); });
    EXPECT_EQ(ec, dd::api_errc::order_not_found);
    EXPECT_EQ(ec, dd::condition::not_found);
    EXPECT_EQ(v.at("error").as_string(), "Order not found");
    EXPECT_EQ(diag.server_message, "Order not found");
}

TEST_F(raw_request_test, empty_body_is_null_and_non_json_is_an_error)
{
    fake->expect_any().respond(204);
    fake->expect_any().respond(200, "<html>", dd::http_headers{});
    auto [ec1, v1] = run([&](auto tok) { return dd::async_raw_request(client, {.method = dd::http_method::delete_, .path = "/assets/a1"}, tok); });
    EXPECT_FALSE(ec1);
    EXPECT_TRUE(v1.is_null());
    EXPECT_TRUE(last_request().idempotent);
    auto [ec2, v2] = run([&](auto tok) { return dd::async_raw_request(client, {.method = dd::http_method::get, .path = "/x"}, tok); });
    EXPECT_EQ(ec2, dd::client_errc::invalid_json);
}

TEST_F(raw_request_test, invalid_paths_are_refused_before_sending)
{
    for (const char* p : {"", "orders", "/orders/{id}", "/orders?page=2", "/a#b", "/a/../b", "/..", "/a/./b", "/a/%2e%2E/b",
                          "/a b", "/a\r\nX: y", "/%zz", "/%4"})
    {
        dd::diagnostics d;
        auto [ec, v] = run([&](auto tok) { return dd::async_raw_request(client, {.method = dd::http_method::get, .path = p}, d, tok); });
        EXPECT_EQ(ec, dd::client_errc::invalid_argument) << p;
        EXPECT_FALSE(d.client_message.empty()) << p;
    }
    EXPECT_TRUE(fake->requests().empty());
    std::string why;
    EXPECT_FALSE(dd::detail::validate_raw_path("/orders/o1/new_beta", why));
    EXPECT_FALSE(dd::detail::validate_raw_path("/a/b%20c/..x/.y/:@!$&'()*+,;=-_~", why));
    EXPECT_FALSE(dd::detail::validate_raw_path("/", why));
}

TEST_F(raw_request_test, a_body_that_is_not_json_is_refused_before_sending)
{
    auto [ec, v] = run([&](auto tok) {
        return dd::async_raw_request(client, {.method = dd::http_method::post, .path = "/orders/o1/notify", .body = "{email:"}, diag, tok);
    });
    EXPECT_EQ(ec, dd::client_errc::invalid_argument);
    EXPECT_NE(diag.client_message.find("not JSON"), std::string::npos) << diag.client_message;
    EXPECT_TRUE(fake->requests().empty());
}

TEST_F(raw_request_test, cancellation)
{
    fake->expect_any().hang();
    asio::cancellation_signal sig;
    dd::error_code got;
    dd::async_raw_request(client, {.method = dd::http_method::get, .path = "/orders"}, asio::bind_cancellation_slot(sig.slot(), [&](dd::error_code ec, boost::json::value) {
                              got = ec;
                          }));
    ioc.poll();
    sig.emit(asio::cancellation_type::terminal);
    dd_test::run(ioc);
    EXPECT_EQ(got, asio::error::operation_aborted);
}

TEST_F(raw_request_test, default_token_is_lazy_and_co_awaitable)
{
    fake->expect_any().respond(200, R"([1,2,3])");
    std::size_t n = 0;
    auto op = dd::async_raw_request(client, {.method = dd::http_method::get, .path = "/orders"});  // nothing sent yet
    EXPECT_TRUE(fake->requests().empty());
    asio::co_spawn(ioc, [&]() -> asio::awaitable<void> { n = (co_await std::move(op)).as_array().size(); }, asio::detached);
    dd_test::run(ioc);
    EXPECT_EQ(n, 3u);
}

}  // namespace
