// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Typed errors: the API's known messages, error body shapes, decode errors
// with JSON paths, and caller input rejected before anything is sent.
#include "fixtures.hpp"

#include <functional>
#include <utility>
#include <vector>

#include "test_data.hpp"

#include <boost/json/parse.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <random>

using namespace fixtures;
using namespace std::chrono_literals;

namespace {

// Request models refer to the caller's ids (std::span): named arrays.
const std::string ids_a1_blank[] = {"a1", ""};
const std::string ids_a[] = {"a"};

class errors_test : public client_test
{
};

struct known_row
{
    unsigned status;
    const char* body;
    dd::api_errc code;
    const char* message;
};

TEST_F(errors_test, every_known_message_maps_to_its_code)
{
    const known_row rows[] = {
        {401, R"({"error":"Invalid API key"})", dd::api_errc::invalid_api_key, "Invalid API key"},
        {404, R"({"error":"Order not found"})", dd::api_errc::order_not_found, "Order not found"},
        {404, R"({"error":"Asset not found"})", dd::api_errc::asset_not_found, "Asset not found"},
        {404, R"({"error":"Digital product not found"})", dd::api_errc::digital_product_not_found, "Digital product not found"},
        {422, R"({"errors":["External url can't be blank"]})", dd::api_errc::external_url_blank, "External url can't be blank"},
        {422, R"({"errors":["Preorder launch date must be in the future"]})", dd::api_errc::preorder_launch_date_too_soon,
         "Preorder launch date must be in the future"},
        {422, R"({"error":"asset_ids must be a non-empty array"})", dd::api_errc::asset_ids_invalid,
         "asset_ids must be a non-empty array"},
        {422, R"({"error":"Order has no customer email. Provide an email parameter."})", dd::api_errc::order_has_no_email,
         "Order has no customer email. Provide an email parameter."},
        {422, R"({"error":"Only internal assets can have their file replaced"})", dd::api_errc::asset_not_internal,
         "Only internal assets can have their file replaced"},
        {422, R"({"error":"This digital product has no orders to notify"})", dd::api_errc::no_orders_to_notify,
         "This digital product has no orders to notify"},
    };
    for (const auto& row : rows)
    {
        fake->expect_any().respond(row.status, row.body);
        auto [ec, o] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
        EXPECT_EQ(ec, row.code) << row.body;
        EXPECT_EQ(diag.http_status, row.status);
        const bool in_message = diag.server_message == row.message;
        const bool in_errors = !diag.server_errors.empty() && diag.server_errors[0] == row.message;
        EXPECT_TRUE(in_message || in_errors) << row.body;
        EXPECT_EQ(diag.method, "GET");
        EXPECT_EQ(diag.path, "/orders/o1");
        EXPECT_NE(diag.to_string().find(row.message), std::string::npos);
    }
}

TEST_F(errors_test, conditions_group_codes)
{
    EXPECT_EQ(dd::make_error_code(dd::api_errc::order_not_found), dd::condition::not_found);
    EXPECT_EQ(dd::make_error_code(dd::api_errc::asset_storage_limit_exceeded), dd::condition::quota_exceeded);
    EXPECT_EQ(dd::make_error_code(dd::api_errc::asset_storage_limit_exceeded), dd::condition::validation);
    EXPECT_EQ(dd::make_error_code(dd::client_errc::connect_timeout), dd::condition::timeout);
    EXPECT_EQ(dd::make_error_code(dd::client_errc::invalid_per_page), dd::condition::invalid_input);
    EXPECT_EQ(dd::make_error_code(dd::client_errc::missing_field), dd::condition::decode);
    EXPECT_NE(dd::make_error_code(dd::api_errc::order_not_found), dd::condition::validation);
    EXPECT_TRUE(dd::is_transient(dd::api_errc::rate_limited));
    EXPECT_TRUE(dd::is_transient(dd::api_errc::server_error));
    EXPECT_FALSE(dd::is_transient(dd::api_errc::validation_failed));
    EXPECT_TRUE(dd::is_request_not_sent(asio::error::connection_refused));
    EXPECT_FALSE(dd::is_request_not_sent(asio::error::connection_reset));
    EXPECT_STREQ(dd::get_client_category().name(), "digital_delivery.client");
    EXPECT_STREQ(dd::get_api_category().name(), "digital_delivery.api");
    EXPECT_EQ(dd::make_error_code(dd::api_errc::order_not_found).message(), "Order not found");
}

TEST_F(errors_test, unknown_404_and_422_fall_back_to_generic_codes)
{
    fake->expect_any().respond(404, R"({"error":"Widget not found"})");
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
    EXPECT_EQ(ec, dd::api_errc::not_found);
    EXPECT_EQ(diag.server_message, "Widget not found");

    fake->expect_any().respond(422, R"({"errors":["Filename can't be blank","Byte size must be greater than 0"]})");
    auto [ec2, o2] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
    EXPECT_EQ(ec2, dd::api_errc::validation_failed);
    ASSERT_EQ(diag.server_errors.size(), 2u);
    EXPECT_EQ(diag.server_errors[1], "Byte size must be greater than 0");
    // The server's words are in server_message whatever the body's shape,
    // and a log line has them once.
    EXPECT_EQ(diag.server_message, "Filename can't be blank; Byte size must be greater than 0");
    EXPECT_EQ(diag.to_string(), "GET /orders/o1: 422 Filename can't be blank; Byte size must be greater than 0 (dd.example.test)");
}

// A wrong base URL (one without /api/v1/external) gives 404s that are not the
// API's: client_message says what to check. Before, a bare 404 said nothing more.
TEST_F(errors_test, a_404_without_the_apis_error_body_suggests_checking_the_base_url)
{
    const std::string hint = "the base URL may be wrong (it should end with /api/v1/external)";
    for (const char* body : {"", "<html><body>404 Not Found</body></html>", R"({"status":404})", "[]"})
    {
        SCOPED_TRACE(body);
        fake->expect_any().respond(404, body).header("Content-Type", body[0] == '<' ? "text/html" : "application/json");
        auto [ec, o] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
        EXPECT_EQ(ec, dd::api_errc::not_found);
        EXPECT_NE(diag.client_message.find(hint), std::string::npos) << diag.client_message;
        EXPECT_NE(diag.to_string().find(hint), std::string::npos) << diag.to_string();
    }
    // The API's own 404s say nothing of the kind.
    for (const char* body : {R"({"error":"Order not found"})", R"({"error":"Widget not found"})"})
    {
        SCOPED_TRACE(body);
        fake->expect_any().respond(404, body);
        auto [ec, o] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
        EXPECT_EQ(ec, dd::condition::not_found);
        EXPECT_TRUE(diag.client_message.empty()) << diag.client_message;
    }
}

// docs/errors.md, "Retryable or not", code by code: the transport's timeouts
// are transient, the operation's own limits are not; a 429 was not processed.
TEST(retryable_or_not, as_errors_md_says)
{
    using ce = dd::client_errc;
    for (auto e : {ce::resolve_timeout, ce::connect_timeout, ce::tls_handshake_timeout, ce::request_timeout,
                   ce::idle_timeout, ce::connection_closed, ce::proxy_unreachable})
        EXPECT_TRUE(dd::is_transient(e)) << dd::make_error_code(e).message();
    EXPECT_TRUE(dd::is_transient(dd::api_errc::rate_limited));
    EXPECT_TRUE(dd::is_transient(dd::api_errc::server_error));
    EXPECT_TRUE(dd::is_transient(asio::error::connection_refused));
    EXPECT_TRUE(dd::is_transient(asio::error::connection_reset));
    for (auto e : {ce::deadline_exceeded, ce::rate_limit_wait_exceeds_deadline, ce::upload_stalled})
        EXPECT_FALSE(dd::is_transient(e)) << dd::make_error_code(e).message();

    for (auto e : {ce::resolve_timeout, ce::connect_timeout, ce::tls_handshake_timeout, ce::proxy_unreachable,
                   ce::proxy_auth_required, ce::proxy_tunnel_refused, ce::invalid_argument,
                   ce::rate_limit_wait_exceeds_deadline})
        EXPECT_TRUE(dd::is_request_not_sent(e)) << dd::make_error_code(e).message();
    EXPECT_TRUE(dd::is_request_not_sent(dd::api_errc::rate_limited));  // reached the server, refused unprocessed
    // May have been processed: a POST that ended so is ambiguous (docs/ambiguous-writes.md).
    for (auto e : {ce::request_timeout, ce::idle_timeout, ce::connection_closed, ce::deadline_exceeded})
        EXPECT_FALSE(dd::is_request_not_sent(e)) << dd::make_error_code(e).message();
    EXPECT_FALSE(dd::is_request_not_sent(dd::api_errc::server_error));
}

// docs/transport.md, "The not-sent codes": the one list, code by code. A
// connect that failed for a reason without a code of its own (EACCES, EPERM)
// is connect_failed; EADDRNOTAVAIL (no local port left) is accepted as it
// comes. Before, both made a request that never left look maybe-processed,
// and rate_limited_too_long was missing from error.hpp's list.
TEST(retryable_or_not, the_not_sent_list_of_transport_md)
{
    using ce = dd::client_errc;
    for (auto e : {ce::invalid_argument, ce::invalid_path_parameter, ce::invalid_page, ce::invalid_per_page,
                   ce::invalid_byte_size, ce::missing_required_field, ce::invalid_base_url, ce::invalid_url,
                   ce::insecure_upload_url, ce::resolve_timeout, ce::connect_timeout, ce::tls_handshake_timeout,
                   ce::tls_certificate_verify_failed, ce::tls_hostname_mismatch, ce::connect_failed, ce::proxy_unreachable,
                   ce::proxy_auth_required, ce::proxy_tunnel_refused, ce::rate_limit_wait_exceeds_deadline,
                   ce::rate_limited_too_long, ce::cassette_no_match})
        EXPECT_TRUE(dd::is_request_not_sent(e)) << dd::make_error_code(e).message();
    for (auto e : {ce::invalid_json, ce::missing_field, ce::wrong_type, ce::invalid_timestamp, ce::unexpected_status,
                   ce::request_timeout, ce::idle_timeout, ce::tls_error, ce::response_too_large, ce::connection_closed,
                   ce::protocol_error, ce::deadline_exceeded, ce::source_unreadable, ce::source_size_mismatch,
                   ce::upload_stalled, ce::cassette_unused_exchanges, ce::cassette_invalid})
        EXPECT_FALSE(dd::is_request_not_sent(e)) << dd::make_error_code(e).message();
    for (auto e : {asio::error::connection_refused, asio::error::network_unreachable, asio::error::host_unreachable})
        EXPECT_TRUE(dd::is_request_not_sent(e)) << dd::error_code(e).message();
    EXPECT_TRUE(dd::is_request_not_sent(make_error_code(boost::system::errc::address_not_available)));
    EXPECT_TRUE(dd::is_request_not_sent(dd::error_code(EADDRNOTAVAIL, boost::system::system_category())));
    EXPECT_TRUE(dd::is_request_not_sent(asio::error::host_not_found));
    EXPECT_TRUE(dd::is_request_not_sent(asio::error::host_not_found_try_again));
    EXPECT_TRUE(dd::is_request_not_sent(asio::error::no_data));
    for (dd::error_code e : {dd::error_code(asio::error::connection_reset), dd::error_code(asio::error::broken_pipe),
                             dd::error_code(asio::error::eof), dd::error_code(asio::error::timed_out),
                             dd::error_code(asio::error::access_denied), dd::error_code(asio::error::operation_aborted)})
        EXPECT_FALSE(dd::is_request_not_sent(e)) << e.message();
    EXPECT_TRUE(dd::is_transient(ce::connect_failed));
    EXPECT_EQ(dd::make_error_code(ce::connect_failed), dd::condition::transport);
    EXPECT_NE(dd::make_error_code(ce::connect_failed), dd::condition::timeout);
}

// docs/transport.md, "Explaining a failure": the failed response's body is
// the transport's own text; it reaches diagnostics::client_message and the
// exception's message. Before, only a cassette's failure had a voice.
TEST_F(errors_test, a_transports_explanation_reaches_diagnostics_and_the_exception)
{
    const std::string why = "Failed to connect to 127.0.0.1 port 1 after 0 ms: Permission denied";
    fake->expect_any().fail(dd::client_errc::connect_failed, why);
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
    EXPECT_EQ(ec, dd::client_errc::connect_failed);
    EXPECT_EQ(diag.client_message, why);
    EXPECT_NE(std::string(dd::error_with_diagnostics(ec, diag).what()).find(why), std::string::npos);

    // Only the first line, and nothing for a cancellation.
    fake->expect_any().fail(dd::client_errc::request_timeout, "no response within 5 ms\nsecond line");
    auto [ec2, o2] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
    EXPECT_EQ(ec2, dd::client_errc::request_timeout);
    EXPECT_EQ(diag.client_message, "no response within 5 ms");
    fake->expect_any().fail(asio::error::operation_aborted, "aborted");
    auto [ec3, o3] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
    EXPECT_EQ(ec3, asio::error::operation_aborted);
    EXPECT_EQ(diag.client_message, "");
}

// docs/operations.md, "Diagnostics": cleared when a request starts, which
// writes its method, host and path, and its attempts when it completes, on
// success too; the failure's fields only on failure.
TEST_F(errors_test, diagnostics_of_a_success_name_the_request_and_its_attempts)
{
    diag.server_message = "stale";
    diag.http_status = 500;
    diag.client_message = "stale";
    fake->expect_any().respond(200, R"({"order":)" + order_json() + "}");
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
    ASSERT_FALSE(ec) << ec.message();
    EXPECT_EQ(diag.method, "GET");
    EXPECT_EQ(diag.path, "/orders/o1");
    EXPECT_EQ(diag.host, "dd.example.test");
    EXPECT_EQ(diag.attempts, 1u);
    EXPECT_EQ(diag.http_status, 0u);
    EXPECT_TRUE(diag.server_message.empty());
    EXPECT_TRUE(diag.client_message.empty());
}

TEST_F(errors_test, quota_codes)
{
    fake->expect_any().respond(422, R"({"error":"Asset storage limit exceeded","code":"asset_storage_limit_exceeded"})");
    auto [ec, r] = run([&](auto t) {
        return dd::async_create_asset(client, {.type = dd::asset_type::internal, .filename = "f", .byte_size = 10}, diag, t);
    });
    EXPECT_EQ(ec, dd::api_errc::asset_storage_limit_exceeded);
    EXPECT_EQ(diag.code, "asset_storage_limit_exceeded");
    fake->expect_any().respond(422, R"({"errors":["Asset count limit exceeded"],"code":"asset_count_limit_exceeded"})");
    auto [ec2, r2] = run([&](auto t) {
        return dd::async_create_asset(client, {.type = dd::asset_type::licence}, diag, t);
    });
    EXPECT_EQ(ec2, dd::api_errc::asset_count_limit_exceeded);
}

TEST_F(errors_test, unauthorized_with_and_without_body)
{
    fake->expect_any().respond(401, R"({"error":"Invalid API key"})");
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
    EXPECT_EQ(ec, dd::api_errc::invalid_api_key);
    EXPECT_EQ(diag.server_message, "Invalid API key");
    fake->expect_any().respond(401);
    auto [ec2, o2] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
    EXPECT_EQ(ec2, dd::api_errc::invalid_api_key);
    EXPECT_EQ(diag.http_status, 401u);
    EXPECT_TRUE(diag.server_message.empty());
    // The key never appears in what we report.
    EXPECT_EQ(diag.to_string().find(api_key), std::string::npos);
    EXPECT_EQ(dd::error_with_diagnostics(ec2, diag).what(), std::string(dd::error_with_diagnostics(ec2, diag).what()));
    EXPECT_EQ(std::string(dd::error_with_diagnostics(ec2, diag).what()).find(api_key), std::string::npos);
}

TEST_F(errors_test, rate_limited_carries_retry_after)
{
    fake->expect_any().respond(429, R"({"error":"Rate limit exceeded"})").header("Retry-After", "7");
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
    EXPECT_EQ(ec, dd::api_errc::rate_limited);
    EXPECT_EQ(ec, dd::condition::rate_limited);
    ASSERT_TRUE(diag.retry_after);
    EXPECT_EQ(*diag.retry_after, 7s);
    fake->expect_any().respond(429).header("Retry-After", "1.25");
    run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
    EXPECT_EQ(diag.retry_after, std::chrono::milliseconds(1250));
}

TEST_F(errors_test, html_error_body_still_gives_a_typed_error)
{
    fake->expect_any().respond(502, "<html><body><h1>502 Bad Gateway</h1></body></html>").header("Content-Type", "text/html");
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
    EXPECT_EQ(ec, dd::api_errc::server_error);
    EXPECT_EQ(diag.http_status, 502u);
    fake->expect_any().respond(418, "<html>teapot</html>").header("Content-Type", "text/html");
    auto [ec2, o2] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
    EXPECT_EQ(ec2, dd::client_errc::unexpected_status);
    EXPECT_EQ(diag.http_status, 418u);
    fake->expect_any().respond(400, R"({"error":"Malformed JSON body"})");
    auto [ec3, o3] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
    EXPECT_EQ(ec3, dd::api_errc::bad_request);
}

// A known message names its code only under the status the API gives it
// (docs/errors.md's table: a 404 that is none of the three is not_found, a
// 422 that is none of the known ones validation_failed, a 400 bad_request).
// Before: the message won over the status (a 404 saying "Invalid API key"
// was invalid_api_key, which is not condition::not_found).
TEST_F(errors_test, a_known_message_names_its_code_only_under_its_status)
{
    const struct
    {
        unsigned status;
        const char* message;
        dd::api_errc expected;
    } cases[] = {
        {404, "Invalid API key", dd::api_errc::not_found},
        {404, "External url can't be blank", dd::api_errc::not_found},
        {404, "Asset not found", dd::api_errc::asset_not_found},
        {422, "Order not found", dd::api_errc::validation_failed},
        {422, "Invalid API key", dd::api_errc::validation_failed},
        {422, "Only internal assets can have their file replaced", dd::api_errc::asset_not_internal},
        {400, "Order not found", dd::api_errc::bad_request},
        {400, "asset_ids must be a non-empty array", dd::api_errc::bad_request},
    };
    for (const auto& c : cases)
    {
        SCOPED_TRACE(std::to_string(c.status) + " " + c.message);
        fake->expect_any().respond(c.status, std::string(R"({"error":")") + c.message + R"("})");
        auto [ec, o] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
        EXPECT_EQ(ec, c.expected) << ec.message();
        EXPECT_EQ(diag.server_message, c.message);
    }
}

// A transport of one's own (any_transport; here the fake) that hands over a
// status outside 100-599: no HTTP status, a protocol error, never a final
// response or an "undocumented status". Before: client_errc::unexpected_status.
TEST_F(errors_test, a_status_outside_100_to_599_is_a_protocol_error)
{
    for (unsigned status : {0u, 2u, 99u, 600u, 999u, 1000u, 4294967295u})
    {
        SCOPED_TRACE(status);
        diag = {};
        fake->expect_any().respond(status, R"({"order":)" + order_json() + "}");
        auto [ec, o] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
        EXPECT_EQ(ec, dd::client_errc::protocol_error) << ec.message();
        EXPECT_EQ(ec, dd::condition::transport);
        EXPECT_TRUE(o.id.empty());
        EXPECT_EQ(diag.http_status, status);
        EXPECT_NE(diag.client_message.find(std::to_string(status)), std::string::npos) << diag.client_message;
    }
    fake->expect_any().respond(599, "<html>x</html>").header("Content-Type", "text/html");
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
    EXPECT_EQ(ec, dd::api_errc::server_error);
}

TEST_F(errors_test, decode_errors_name_the_path)
{
    // orders[1].download_count has the wrong type
    const std::string bad = R"({"orders":[)" + order_json() + "," +
                            R"({"id":"o2","name":"#2","email":"e","phone":null,"financial_status":null,"fulfillment_status":null,)"
                            R"("total_price":null,"currency":null,"created_at":"2024-05-01T12:00:00Z","download_count":"3"}],"pagination":)" +
                            pagination_json() + "}";
    fake->expect_any().respond(200, bad);
    auto [ec, l] = run([&](auto t) { return dd::async_list_orders(client, diag, t); });
    EXPECT_EQ(ec, dd::client_errc::wrong_type);
    EXPECT_NE(diag.client_message.find("orders[1].download_count"), std::string::npos) << diag.client_message;

    // an identity missing (content may be missing: see tolerant_fields_never_fail_a_page)
    fake->expect_any().respond(200, R"({"order":{"name":"#1","email":"a@example.com"}})");
    auto [ec2, o] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
    EXPECT_EQ(ec2, dd::client_errc::missing_field);
    EXPECT_NE(diag.client_message.find("order.id"), std::string::npos) << diag.client_message;

    // a bad timestamp
    fake->expect_any().respond(200, R"({"order":)" + order_json() + "}");
    std::string bad_ts = R"({"order_id":"o1","order_name":"#1","downloads":[)" + download_json() + "]}";
    bad_ts.replace(bad_ts.find("2024-06-01T00:00:00Z"), 20, "2024-13-01T00:00:00Z");
    run([&](auto t) { return dd::async_get_order(client, "o1", t); });
    fake->expect_any().respond(200, bad_ts);
    auto [ec3, d] = run([&](auto t) { return dd::async_get_order_downloads(client, "o1", diag, t); });
    EXPECT_EQ(ec3, dd::client_errc::invalid_timestamp);
    EXPECT_NE(diag.client_message.find("downloads[0].expires_at"), std::string::npos) << diag.client_message;

    // not JSON at all
    fake->expect_any().respond(200, "<html>maintenance</html>");
    auto [ec4, o4] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
    EXPECT_EQ(ec4, dd::client_errc::invalid_json);

    // 1.5 into an integer, and an int64 overflow
    fake->expect_any().respond(200, R"({"order":)" + order_json(false, "paid", 0).replace(order_json(false, "paid", 0).find("\"download_count\":0"), 18, "\"download_count\":1.5") + "}");
    auto [ec5, o5] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
    EXPECT_EQ(ec5, dd::client_errc::wrong_type);
    fake->expect_any().respond(200, R"({"order":)" + order_json(false, "paid", 0).replace(order_json(false, "paid", 0).find("\"download_count\":0"), 18, "\"download_count\":18446744073709551615") + "}");
    auto [ec6, o6] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
    EXPECT_EQ(ec6, dd::client_errc::wrong_type);
}

TEST_F(errors_test, streaming_decoder_edge_cases)
{
    // Keys in any order, escapes in keys and strings (a string longer than
    // the parser's scratch buffer, so it arrives in parts), \u escapes with a
    // surrogate pair, unknown members of every shape skipped, extra
    // whitespace, 1e3 as an integer, a duplicated key (the last one wins).
    const std::string long_text(5000, 'x');
    const std::string body = " \n{ \"order\" : {\"download_count\": 1e3, \"unknown_obj\": {\"a\": [1, {\"b\": null}], \"c\": \"d\"},"
                             " \"unknown_arr\": [[], {}, \"x\", 1.5, true, null], \"created_at\": \"2024-05-01T12:00:00Z\","
                             " \"id\": \"o\\u00e9\\ud83d\\ude00\", \"n\\u0061me\": \"#1\\\"2\\\\\", \"email\": \"" +
                             long_text + "\\n" + long_text +
                             "\", \"phone\": null, \"currency\": \"USD\", \"currency\": \"EUR\"},"
                             " \"beta\": {\"deep\": [[[[1]]]]}} \n";
    fake->expect_any().respond(200, body);
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
    ASSERT_FALSE(ec) << diag.client_message;
    EXPECT_EQ(o.id, "o\xc3\xa9\xf0\x9f\x98\x80");
    EXPECT_EQ(o.name, "#1\"2\\");
    EXPECT_EQ(o.email, long_text + "\n" + long_text);
    EXPECT_FALSE(o.phone);
    EXPECT_EQ(o.currency, "EUR");
    EXPECT_EQ(o.download_count, 1000);
    EXPECT_FALSE(o.total_price);

    // Header fields keep their names even when escapes put them in the parser's scratch buffer.
    fake->expect_any().respond(
        201,
        R"({"asset":)" + asset_json() +
            R"(,"upload":{"method":"PUT","url":"https://s.example/k","headers":{"Content-\u0054ype":"a\u002fb","X-Other":"v"},"expires_at":"2024-05-01T13:00:00Z"}})"
    );
    dd::new_asset req;
    req.type = dd::asset_type::internal;
    req.filename = "f.pdf";
    req.byte_size = 5;
    auto [ec2, created] = run([&](auto t) { return dd::async_create_asset(client, req, diag, t); });
    ASSERT_FALSE(ec2) << diag.client_message;
    ASSERT_TRUE(created.upload);
    ASSERT_EQ(created.upload->headers.size(), 2u);
    EXPECT_EQ(created.upload->headers.find("Content-Type").value_or(""), "a/b");
    EXPECT_EQ(created.upload->headers.find("X-Other").value_or(""), "v");

    struct bad_case
    {
        std::string body;
        dd::error_code want;
        const char* path;  // in the message, or nullptr
    };
    const std::string ok_order = order_json();
    std::string with_bad_count = ok_order;
    with_bad_count.replace(with_bad_count.find("\"download_count\":3"), 18, "\"download_count\":true");
    const bad_case cases[] = {
        // a mapping error followed by a syntax error: the syntax wins
        {R"({"order":{"id":1,)", dd::client_errc::invalid_json, nullptr},
        {R"({"order":)" + with_bad_count + "} trailing", dd::client_errc::invalid_json, nullptr},
        {R"({"order":)" + with_bad_count + "}", dd::client_errc::wrong_type, "order.download_count: expected an integer"},
        // wrong shapes at the root and below
        {"[]", dd::client_errc::wrong_type, "(root): expected an object"},
        {R"({"order":[]})", dd::client_errc::wrong_type, "order: expected an object"},
        {R"({"order":null})", dd::client_errc::wrong_type, "order: expected an object"},
        {"{}", dd::client_errc::missing_field, "order: required field is missing"},
        {"", dd::client_errc::missing_field, "order: required field is missing"},
        {R"({"order":)" + std::string(ok_order).replace(ok_order.find("\"id\":\"o1\""), 9, "\"id\":null") + "}",
         dd::client_errc::wrong_type, "order.id: expected a string"},
        {R"({"order":)" + std::string(ok_order).replace(ok_order.find("\"download_count\":3"), 18, "\"download_count\":-9223372036854775809") + "}",
         dd::client_errc::wrong_type, "order.download_count"},
        // invalid UTF-8, a lone surrogate, nesting deeper than 32 levels
        {"{\"order\":{\"id\":\"\xff\"}}", dd::client_errc::invalid_json, nullptr},
        {R"({"order":{"id":"\ud800"}})", dd::client_errc::invalid_json, nullptr},
        {R"({"order":)" + ok_order.substr(0, ok_order.size() - 1) + R"(,"x":)" + std::string(40, '[') + std::string(40, ']') + "}}",
         dd::client_errc::invalid_json, nullptr},
    };
    for (const auto& c : cases)
    {
        diag = {};
        fake->expect_any().respond(200, c.body);
        auto [e, out] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
        EXPECT_EQ(e, c.want) << c.body;
        if (c.path)
        {
            EXPECT_NE(diag.client_message.find(c.path), std::string::npos) << diag.client_message;
        }
        EXPECT_EQ(diag.client_message.find("SECRET"), std::string::npos);
        // nothing partial on failure
        EXPECT_TRUE(out.id.empty() && out.name.empty() && out.download_count == 0) << c.body;
    }

    // A page whose second order fails: the error names it, the result is empty.
    fake->expect_any().respond(200, R"({"orders":[)" + ok_order + "," + with_bad_count + R"(],"pagination":)" + pagination_json() + "}");
    auto [ec3, page] = run([&](auto t) { return dd::async_list_orders(client, diag, t); });
    EXPECT_EQ(ec3, dd::client_errc::wrong_type);
    EXPECT_NE(diag.client_message.find("orders[1].download_count"), std::string::npos) << diag.client_message;
    EXPECT_TRUE(page.orders.empty());

    // A nullable whole-object result (detach) accepts an empty body and nulls.
    fake->expect_any().respond(200, "");
    auto [ec4, det] = run([&](auto t) { return dd::async_detach_assets(client, "o1", {.asset_ids = ids_a1}, diag, t); });
    EXPECT_FALSE(ec4) << diag.client_message;
    EXPECT_FALSE(det.order);
    fake->expect_any().respond(200, R"({"order":null,"attached_assets":[]})");
    auto [ec5, det2] = run([&](auto t) { return dd::async_detach_assets(client, "o1", {.asset_ids = ids_a1}, diag, t); });
    EXPECT_FALSE(ec5) << diag.client_message;
    EXPECT_FALSE(det2.order);
    ASSERT_TRUE(det2.attached_assets);
    EXPECT_TRUE(det2.attached_assets->empty());
}

// Bodies mutated at random (seeded: the same cases every run) through the
// public API: never a crash (this runs under ASan/UBSan in CI), `invalid_json`
// exactly when Boost.JSON's own parser refuses the text, any other outcome a
// typed mapping error or success, and nothing partial on failure.
TEST_F(errors_test, mutated_bodies_get_the_verdict_of_boost_json)
{
    const std::string order_body = R"({"order":)" + order_json() + "}";
    const std::string page_body = R"({"orders":[)" + order_json() + "," + order_json(true) + R"(],"pagination":)" +
                                  pagination_json() + "}";
    const char alphabet[] = {'"', '\\', '{', '}', '[', ']', ',', ':', '0', '9', '-', '+', 'e', '.', ' ', '\n',
                             'n', 't', 'f', 'u', 'x', '\0', '\x7f', '\x80', '\xc3', '\xff'};
    std::mt19937 rng(20261122);
    int refused = 0, decoded = 0, mapping_errors = 0;
    const int cases = std::getenv("DD_MUTATION_CASES") ? std::atoi(std::getenv("DD_MUTATION_CASES")) : 5000;
    for (int i = 0; i < cases; ++i)
    {
        const bool page = i % 2 == 1;
        const std::string body = dd_test::mutate(page ? page_body : order_body, rng, {alphabet, sizeof alphabet});
        if (body.find_first_not_of(" \t\r\n") == std::string::npos)
            continue;  // an empty or blank body is "no content", not JSON (covered above)
        boost::system::error_code jec;
        (void)boost::json::parse(body, jec);
        diag = {};
        fake->expect_any().respond(200, body);
        dd::error_code ec;
        if (page)
        {
            auto [e, out] = run([&](auto t) { return dd::async_list_orders(client, diag, t); });
            ec = e;
            if (e)
            {
                EXPECT_TRUE(out.orders.empty() && out.pagination.total_count == 0) << body;
            }
        }
        else
        {
            auto [e, out] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
            ec = e;
            if (e)
            {
                EXPECT_TRUE(out.id.empty() && out.email.empty() && out.download_count == 0) << body;
            }
        }
        if (jec)
        {
            EXPECT_EQ(ec, dd::client_errc::invalid_json) << body;
            ++refused;
        }
        else
        {
            EXPECT_NE(ec, dd::client_errc::invalid_json) << body;
            if (ec)
            {
                EXPECT_EQ(ec.category(), dd::make_error_code(dd::client_errc::wrong_type).category()) << body;
                EXPECT_FALSE(diag.client_message.empty()) << body;
                ++mapping_errors;
            }
            else
            {
                ++decoded;
            }
        }
    }
    // The mix exercised every outcome.
    std::printf("mutated bodies: %d refused as JSON, %d decoded, %d mapping errors\n", refused, decoded, mapping_errors);
    EXPECT_GT(refused, 500);
    EXPECT_GT(decoded, 50);
    EXPECT_GT(mapping_errors, 50);
}

// ---- caller input refused before sending -------------------------------------------------

TEST_F(errors_test, forbidden_input_sends_nothing)
{
    struct case_t
    {
        std::string name;
        std::function<dd::error_code()> call;
        dd::error_code want;
    };
    auto ec_of = [&](auto&& fn) {
        return [this, fn]() {
            auto tup = run([&](auto t) { return fn(t); });
            return std::get<0>(tup);
        };
    };
    std::vector<case_t> cases = {
        {"per_page 0", ec_of([&](auto t) { return dd::async_list_orders(client, {.per_page = 0}, diag, t); }), dd::client_errc::invalid_per_page},
        {"per_page 251", ec_of([&](auto t) { return dd::async_list_orders(client, {.per_page = 251}, diag, t); }), dd::client_errc::invalid_per_page},
        {"dp per_page 101", ec_of([&](auto t) { return dd::async_list_digital_products(client, {.per_page = 101}, diag, t); }),
         dd::client_errc::invalid_per_page},
        {"page 0", ec_of([&](auto t) { return dd::async_list_assets(client, {.page = 0}, diag, t); }), dd::client_errc::invalid_page},
        {"type filter internal", ec_of([&](auto t) { return dd::async_list_assets(client, {.type = dd::asset_type::internal}, diag, t); }),
         dd::client_errc::invalid_argument},
        {"blank asset id", ec_of([&](auto t) { return dd::async_attach_assets(client, "o1", {.asset_ids = ids_a1_blank}, diag, t); }),
         dd::client_errc::invalid_argument},
        {"byte_size 0", ec_of([&](auto t) {
             return dd::async_create_asset(client, {.type = dd::asset_type::internal, .filename = "f", .byte_size = 0}, diag, t);
         }),
         dd::client_errc::invalid_byte_size},
        {"byte_size 2GB+1", ec_of([&](auto t) {
             return dd::async_create_asset(client, {.type = dd::asset_type::internal, .filename = "f", .byte_size = 2147483649LL}, diag, t);
         }),
         dd::client_errc::invalid_byte_size},
        {"internal without filename", ec_of([&](auto t) {
             return dd::async_create_asset(client, {.type = dd::asset_type::internal, .byte_size = 5}, diag, t);
         }),
         dd::client_errc::missing_required_field},
        {"content_type on licence", ec_of([&](auto t) {
             return dd::async_create_asset(client, {.type = dd::asset_type::licence, .content_type = "text/plain"}, diag, t);
         }),
         dd::client_errc::invalid_argument},
        {"replace byte_size -1", ec_of([&](auto t) { return dd::async_replace_asset(client, "a1", {.filename = "f", .byte_size = -1}, diag, t); }),
         dd::client_errc::invalid_byte_size},
        {"preorder without date", ec_of([&](auto t) {
             return dd::async_create_digital_product(
                 client, {.store_product_id = 1, .asset_ids = ids_a, .custom_message = "m", .preorder_enabled = true}, diag, t
             );
         }),
         dd::client_errc::missing_required_field},
        {"preorder without message", ec_of([&](auto t) {
             return dd::async_create_digital_product(
                 client,
                 {.store_product_id = 1, .asset_ids = ids_a, .preorder_enabled = true, .preorder_launch_date = dd::timestamp{}},
                 diag,
                 t
             );
         }),
         dd::client_errc::missing_required_field},
        {"empty id", ec_of([&](auto t) { return dd::async_get_order(client, "", diag, t); }), dd::client_errc::invalid_path_parameter},
        {"dot id", ec_of([&](auto t) { return dd::async_get_order(client, ".", diag, t); }), dd::client_errc::invalid_path_parameter},
        {"dotdot id", ec_of([&](auto t) { return dd::async_get_asset(client, "..", diag, t); }), dd::client_errc::invalid_path_parameter},
        {"bad extra header", ec_of([&](auto t) {
             static const dd::http_headers::field evil[] = {{"X-Evil", "a\r\nX-Auth-Token: stolen"}};
             const dd::request_options o{.extra_headers = evil};
             return dd::async_get_order(client, "o1", o, diag, t);
         }),
         dd::client_errc::invalid_argument},
        {"auth header override", ec_of([&](auto t) {
             static const dd::http_headers::field other[] = {{"x-auth-token", "other"}};
             const dd::request_options o{.extra_headers = other};
             return dd::async_get_order(client, "o1", o, diag, t);
         }),
         dd::client_errc::invalid_argument},
    };
    // The rest of the one reserved-header rule (detail::is_settable_header,
    // which upload handles' headers go through too): the framing headers, and
    // names that are not one token.
    static const dd::http_headers::field refused[][1] = {
        {{"Host", "h"}}, {{"content-length", "1"}}, {{"Transfer-Encoding", "chunked"}},
        {{"", "v"}}, {{"X Y", "v"}}, {{"X:Y", "v"}}, {{"X\tY", "v"}},
    };
    for (const auto& one : refused)
        cases.push_back({"extra header '" + std::string(one[0].name.view()) + "'", ec_of([&one, this](auto t) {
                             const dd::request_options o{.extra_headers = one};
                             return dd::async_get_order(client, "o1", o, diag, t);
                         }),
                         dd::client_errc::invalid_argument});
    for (auto& c : cases)
    {
        EXPECT_EQ(c.call(), c.want) << c.name;
        EXPECT_EQ(c.call(), dd::condition::invalid_input) << c.name;
        EXPECT_FALSE(diag.client_message.empty()) << c.name;
    }
    EXPECT_TRUE(fake->requests().empty());
}

TEST_F(errors_test, blank_external_url_is_refused_with_the_servers_code)
{
    // Refused before sending, with the code the API's 422 "External url can't
    // be blank" gives, so that one check covers both: create and update alike.
    const dd::new_asset no_url{.type = dd::asset_type::external};
    const dd::new_asset blank_url{.type = dd::asset_type::external, .external_url = "  "};
    const dd::asset_update blank_update{.external_url = " "};
    std::vector<std::pair<const char*, std::function<dd::error_code()>>> cases = {
        {"create without url", [&] { return std::get<0>(run([&](auto t) { return dd::async_create_asset(client, no_url, diag, t); })); }},
        {"create with blank url", [&] { return std::get<0>(run([&](auto t) { return dd::async_create_asset(client, blank_url, diag, t); })); }},
        {"update to blank url", [&] { return std::get<0>(run([&](auto t) { return dd::async_update_asset(client, "a1", blank_update, diag, t); })); }},
    };
    for (auto& [name, call] : cases)
    {
        const dd::error_code ec = call();
        EXPECT_EQ(ec, dd::api_errc::external_url_blank) << name << ": " << ec.message();
        EXPECT_EQ(ec, dd::condition::validation) << name;
        EXPECT_EQ(diag.http_status, 0u) << name << ": nothing was sent";
        EXPECT_NE(diag.client_message.find("(refused before sending)"), std::string::npos) << name << ": " << diag.client_message;
    }
    EXPECT_TRUE(fake->requests().empty());
}

TEST_F(errors_test, empty_asset_ids_are_refused_with_the_servers_code)
{
    // The API answers 422 "asset_ids must be a non-empty array"; the client
    // refuses before sending with that answer's code, and says it did not send.
    const dd::error_code attach = std::get<0>(run([&](auto t) { return dd::async_attach_assets(client, "o1", {}, diag, t); }));
    const dd::diagnostics attach_diag = diag;
    const dd::error_code detach = std::get<0>(run([&](auto t) { return dd::async_detach_assets(client, "o1", {}, diag, t); }));
    for (const auto& [ec, d] : {std::pair{attach, attach_diag}, std::pair{detach, diag}})
    {
        EXPECT_EQ(ec, dd::api_errc::asset_ids_invalid) << ec.message();
        EXPECT_EQ(ec, dd::condition::validation);
        EXPECT_EQ(d.http_status, 0u) << "nothing was sent";
        EXPECT_EQ(d.client_message, "asset_ids must be a non-empty array (refused before sending)");
    }
    EXPECT_TRUE(fake->requests().empty());
}

TEST_F(errors_test, valid_edge_values_are_sent)
{
    fake->expect_any().respond(201, R"({"asset":)" + asset_json() + "}");
    auto [ec, r] = run([&](auto t) {
        return dd::async_create_asset(client, {.type = dd::asset_type::internal, .filename = "f", .byte_size = 1}, diag, t);
    });
    EXPECT_FALSE(ec) << diag.to_string();
    fake->expect_any().respond(200, R"({"orders":[],"pagination":)" + pagination_json() + "}");
    auto [ec2, l] = run([&](auto t) { return dd::async_list_orders(client, {.page = 1, .per_page = 1}, t); });
    EXPECT_FALSE(ec2);
    fake->expect_any().respond(200, R"({"orders":[],"pagination":)" + pagination_json() + "}");
    auto [ec3, l3] = run([&](auto t) { return dd::async_list_orders(client, {.per_page = 250}, t); });
    EXPECT_FALSE(ec3);
    EXPECT_EQ(fake->requests().size(), 3u);
}

TEST_F(errors_test, transport_errors_pass_through_with_diagnostics)
{
    fake->expect_any().fail(asio::error::connection_refused);
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
    EXPECT_EQ(ec, asio::error::connection_refused);
    EXPECT_EQ(ec, dd::condition::transport);
    EXPECT_EQ(diag.path, "/orders/o1");
    fake->expect_any().fail(dd::client_errc::request_timeout);
    auto [ec2, o2] = run([&](auto t) { return dd::async_get_order(client, "o1", diag, t); });
    EXPECT_EQ(ec2, dd::client_errc::request_timeout);
    EXPECT_EQ(ec2, dd::condition::timeout);
}

TEST(conditions, cancellation_is_its_own_condition_not_a_transport_failure)
{
    const dd::error_code aborted = asio::error::operation_aborted;
    EXPECT_EQ(aborted, dd::condition::cancelled);
    EXPECT_NE(aborted, dd::condition::transport);
    EXPECT_NE(aborted, dd::condition::timeout);
    const dd::error_code refused = asio::error::connection_refused;
    EXPECT_EQ(refused, dd::condition::transport);
    EXPECT_NE(refused, dd::condition::cancelled);
    EXPECT_NE(dd::error_code(dd::client_errc::request_timeout), dd::condition::cancelled);
    EXPECT_EQ(dd::make_error_condition(dd::condition::cancelled).message(), "cancelled");
}

TEST_F(errors_test, rate_limit_headers_are_recorded)
{
    EXPECT_NE(client.rate_limit().source, dd::rate_limit_source::header);
    fake->expect_any()
        .respond(200, R"({"order":)" + order_json() + "}")
        .header("X-RateLimit-Limit", "40")
        .header("X-RateLimit-Remaining", "37")
        .header("X-RateLimit-Reset", "1767225600");
    run([&](auto t) { return dd::async_get_order(client, "o1", t); });
    auto s = client.rate_limit();
    EXPECT_EQ(s.source, dd::rate_limit_source::header);
    EXPECT_EQ(s.limit, 40);
    EXPECT_EQ(s.remaining, 37);
    ASSERT_TRUE(s.reset);
    EXPECT_EQ(std::chrono::duration_cast<std::chrono::seconds>(s.reset->time_since_epoch()).count(), 1767225600);
}

TEST(rate_limit_parsing, forms)
{
    const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
    dd::http_headers h;
    h.add("x-ratelimit-reset", "30");  // delta seconds tolerated
    auto s = dd::parse_rate_limit_headers(h, now);
    ASSERT_TRUE(s && s->reset);
    EXPECT_EQ(*s->reset, now + 30s);
    EXPECT_FALSE(dd::parse_rate_limit_headers(dd::http_headers{}, now));
    EXPECT_EQ(dd::parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now), std::chrono::milliseconds(0));
    EXPECT_EQ(
        dd::parse_retry_after("Tue, 14 Nov 2023 22:13:40 GMT", now),
        std::chrono::milliseconds(20000)
    );  // 1700000000 = Tue, 14 Nov 2023 22:13:20 GMT
    EXPECT_EQ(dd::parse_retry_after("0.5", now), std::chrono::milliseconds(500));
    EXPECT_FALSE(dd::parse_retry_after("soon", now));
    EXPECT_FALSE(dd::parse_retry_after("", now));
}

// Server-supplied dates and numbers far outside system_clock's range (about
// 1678-2262 with nanoseconds) saturate instead of overflowing (run under UBSan).
TEST(rate_limit_parsing, retry_after_saturates)
{
    const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
    const auto year = std::chrono::milliseconds(std::chrono::hours(24 * 365));
    // Far future: the longest wait parse_retry_after reports (callers cap it again).
    EXPECT_EQ(dd::parse_retry_after("Fri, 31 Dec 9999 23:59:59 GMT", now), year);
    EXPECT_EQ(dd::parse_retry_after("Sat, 01 Jan 2263 00:00:00 GMT", now), year);
    EXPECT_EQ(dd::parse_retry_after("99999999999999999999", now), year);
    EXPECT_EQ(dd::parse_retry_after(std::string(400, '9'), now), year);  // beyond a double
    // Far past: no wait.
    EXPECT_EQ(dd::parse_retry_after("Mon, 01 Jan 0001 00:00:00 GMT", now), std::chrono::milliseconds(0));
    EXPECT_EQ(dd::parse_retry_after("Fri, 01 Jan 1600 00:00:00 GMT", now), std::chrono::milliseconds(0));
    EXPECT_EQ(dd::parse_retry_after("-99999999999999999999", now), std::chrono::milliseconds(0));
    // Near the edges of system_clock itself.
    EXPECT_EQ(dd::parse_retry_after("Tue, 14 Nov 2023 22:13:40 GMT", std::chrono::system_clock::time_point::max()),
              std::chrono::milliseconds(0));
    EXPECT_EQ(dd::parse_retry_after("Tue, 14 Nov 2023 22:13:40 GMT", std::chrono::system_clock::time_point::min()), year);
}

TEST(rate_limit_parsing, a_reset_outside_system_clock_is_ignored)
{
    const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
    for (const char* reset : {"12795482468", "9223372036854775807", "99999999999999999999", "-5", "-12795482468", "soon", "1e3", ""})
    {
        SCOPED_TRACE(reset);
        dd::http_headers h;
        h.add("X-RateLimit-Limit", "40");
        h.add("X-RateLimit-Remaining", "12");
        h.add("X-RateLimit-Reset", reset);
        auto s = dd::parse_rate_limit_headers(h, now);
        ASSERT_TRUE(s);
        EXPECT_EQ(s->limit, 40);  // the other figures still count
        EXPECT_EQ(s->remaining, 12);
        EXPECT_FALSE(s->reset) << s->reset->time_since_epoch().count();
    }
    // A delta that would pass system_clock's end from `now`: ignored too.
    dd::http_headers h;
    h.add("X-RateLimit-Reset", "999999999");
    auto s = dd::parse_rate_limit_headers(h, std::chrono::system_clock::time_point::max() - 1h);
    ASSERT_FALSE(s && s->reset);
    // The last representable second is still a reset (2262-04-11T23:47:16Z).
    h = {};
    h.add("X-RateLimit-Reset", "9223372036");
    s = dd::parse_rate_limit_headers(h, now);
    ASSERT_TRUE(s && s->reset);
    EXPECT_EQ(std::chrono::duration_cast<std::chrono::seconds>(s->reset->time_since_epoch()).count(), 9223372036);
}

// A response's timestamps with years 0001 and 9999 decode exactly (timestamp
// counts microseconds: +-292,000 years); to_system_time() saturates where
// system_clock (nanoseconds) ends.
TEST_F(client_test, timestamps_of_years_0001_and_9999)
{
    std::string a = asset_json(true, "licence");
    a.replace(a.find("2024-05-01T12:00:00Z"), 20, "0001-01-01T00:00:00Z");
    a.replace(a.find("2024-05-01T12:00:00.5+02:00"), 27, "9999-12-31T23:59:59.999999Z");
    fake->expect_any().respond(200, R"({"asset":)" + a + "}");
    auto [ec, got] = run([&](auto t) { return dd::async_get_asset(client, "a1", diag, t); });
    ASSERT_FALSE(ec) << diag.to_string();
    EXPECT_EQ(dd::format_timestamp(got.created_at), "0001-01-01T00:00:00Z");
    EXPECT_EQ(dd::format_timestamp(got.updated_at), "9999-12-31T23:59:59.999999Z");
    EXPECT_EQ(got.created_at.time_since_epoch().count(), -62135596800000000);
    EXPECT_EQ(got.updated_at.time_since_epoch().count(), 253402300799999999);
    EXPECT_EQ(dd::to_system_time(got.created_at), std::chrono::system_clock::time_point::min());
    EXPECT_EQ(dd::to_system_time(got.updated_at), std::chrono::system_clock::time_point::max());
    const auto t2024 = *dd::parse_timestamp("2024-05-01T12:00:00.25Z");
    EXPECT_EQ(dd::to_system_time(t2024), std::chrono::system_clock::time_point(t2024.time_since_epoch()));
    EXPECT_EQ(dd::format_timestamp(*dd::parse_timestamp("0000-01-01T00:30:00-23:59")), "0000-01-02T00:29:00Z");
}

TEST(timestamps, parse_and_format)
{
    EXPECT_EQ(dd::format_timestamp(*dd::parse_timestamp("2024-02-29T23:59:59-01:30")), "2024-03-01T01:29:59Z");
    EXPECT_EQ(dd::format_timestamp(*dd::parse_timestamp("2024-05-01t12:00:00.123456789z")), "2024-05-01T12:00:00.123456Z");
    EXPECT_EQ(dd::format_timestamp(*dd::parse_timestamp("2024-05-01 12:00:00+0200")), "2024-05-01T10:00:00Z");
    for (const char* bad : {"2024-05-01", "2024-05-01T12:00:00", "2023-02-29T00:00:00Z", "2024-05-01T24:00:00Z", "2024-05-01T12:00:00.Z",
                            "2024-05-01T12:00:00Zjunk", "x", ""})
        EXPECT_FALSE(dd::parse_timestamp(bad)) << bad;
    EXPECT_EQ(dd::format_date(*dd::parse_date("2024-12-31")), "2024-12-31");
    EXPECT_FALSE(dd::parse_date("2024-02-30"));
}

// A real server sends nulls and omissions the spec does not draw: a page of
// 250 orders where one order's email is null and other fields are absent
// decodes whole, and the rule of docs/architecture.md ("Decoding") applies.
TEST_F(errors_test, tolerant_fields_never_fail_a_page)
{
    std::string page = R"({"orders":[)";
    for (int i = 0; i < 250; ++i)
    {
        if (i)
            page += ",";
        if (i == 137)
            page += R"({"id":"odd","name":null,"email":null,"created_at":null,"financial_status":"paid"})";
        else
            page += order_json();
    }
    page += R"(],"pagination":)" + pagination_json(1, 250, 250, 1) + "}";
    fake->expect_any().respond(200, page);
    auto [ec, l] = run([&](auto t) { return dd::async_list_orders(client, {.per_page = 250}, diag, t); });
    ASSERT_FALSE(ec) << diag.to_string();
    ASSERT_EQ(l.orders.size(), 250u);
    const dd::order& odd = l.orders[137];
    EXPECT_EQ(odd.id, "odd");
    EXPECT_EQ(odd.email, "") << "null: the empty value";
    EXPECT_EQ(odd.name, "") << "null: the empty value";
    EXPECT_EQ(odd.download_count, 0) << "absent: the empty value";
    EXPECT_EQ(odd.created_at, dd::timestamp{}) << "null: the empty value";
    EXPECT_FALSE(odd.phone) << "an X | null field stays an optional";
    EXPECT_EQ(odd.financial_status, dd::financial_status::paid);
    EXPECT_EQ(l.orders[136].email, "ada@example.com");

    // What is still refused: a missing identity, a structure, what drives the
    // next page, and a wrong type even in a tolerant field.
    const std::pair<std::string, std::string> refused[] = {
        {R"({"orders":[{"name":"#1"}],"pagination":)" + pagination_json() + "}", "orders[0].id"},
        {R"({"orders":[{"id":null}],"pagination":)" + pagination_json() + "}", "orders[0].id"},
        {R"({"pagination":)" + pagination_json() + "}", "orders"},
        {R"({"orders":[],"pagination":{"current_page":1,"per_page":25,"total_count":0}})", "pagination.total_pages"},
        {R"({"orders":[{"id":"o","email":7}],"pagination":)" + pagination_json() + "}", "orders[0].email"},
    };
    for (const auto& [body, path] : refused)
    {
        fake->expect_any().respond(200, body);
        auto [ec2, l2] = run([&](auto t) { return dd::async_list_orders(client, diag, t); });
        EXPECT_TRUE(ec2 == dd::client_errc::missing_field || ec2 == dd::client_errc::wrong_type) << body;
        EXPECT_NE(diag.client_message.find(path), std::string::npos) << diag.client_message;
        EXPECT_TRUE(l2.orders.empty()) << "nothing partial";
    }
}

// A value outside an enum's list would send an empty value (a filter silently
// dropped, a body the server refuses): refused before anything is sent.
TEST_F(errors_test, an_enum_the_api_does_not_know_is_refused_before_sending)
{
    auto [ec, l] = run([&](auto t) {
        return dd::async_list_orders(client, {.status = dd::financial_status::unknown}, diag, t);
    });
    EXPECT_EQ(ec, dd::client_errc::invalid_argument);
    EXPECT_NE(diag.client_message.find("status"), std::string::npos) << diag.client_message;
    auto [ec2, a] = run([&](auto t) {
        return dd::async_create_asset(client, {.type = static_cast<dd::asset_type>(42), .name = "k"}, diag, t);
    });
    EXPECT_EQ(ec2, dd::client_errc::invalid_argument);
    EXPECT_NE(diag.client_message.find("type"), std::string::npos) << diag.client_message;
    EXPECT_TRUE(fake->requests().empty());
}

// The required create fields are checked like the others.
TEST_F(errors_test, a_product_without_store_product_id_or_asset_ids_is_refused_before_sending)
{
    auto [ec, p] = run([&](auto t) { return dd::async_create_digital_product(client, {.asset_ids = ids_a1}, diag, t); });
    EXPECT_EQ(ec, dd::client_errc::missing_required_field);
    EXPECT_NE(diag.client_message.find("store_product_id"), std::string::npos) << diag.client_message;
    auto [ec2, p2] = run([&](auto t) { return dd::async_create_digital_product(client, {.store_product_id = 7}, diag, t); });
    EXPECT_EQ(ec2, dd::client_errc::missing_required_field);
    EXPECT_NE(diag.client_message.find("asset_ids"), std::string::npos) << diag.client_message;
    EXPECT_TRUE(fake->requests().empty());
}

// Replacing is for internal assets: an answer without its upload handle is an
// error at async_replace_asset too, and keeps the asset the server returned.
TEST_F(errors_test, a_replace_answer_without_upload_handle_is_an_error)
{
    fake->expect_any().respond(
        200, R"({"asset":{"id":"a1","type":"internal","filename":"new.pdf","byte_size":5,"created_at":"2024-05-01T12:00:00Z","updated_at":"2024-05-01T12:00:00Z"}})"
    );
    auto [ec, r] = run([&](auto t) {
        return dd::async_replace_asset(client, "a1", {.filename = "new.pdf", .byte_size = 5}, diag, t);
    });
    EXPECT_EQ(ec, dd::client_errc::missing_field);
    EXPECT_EQ(diag.client_message, "the response has no upload handle");
    EXPECT_EQ(r.asset.id, "a1") << "what the server did is kept";
}

}  // namespace
