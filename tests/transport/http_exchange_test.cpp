//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// The transport's sans-io HTTP/1.1 core (impl/http/sansio/http_exchange.hpp):
// the request serializer and the response reader, with the peer scripted
// byte by byte. No sockets.

#include <digital_delivery/impl/http/sansio/http_exchange.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dd = digital_delivery;
using dd::detail::request_head;
using dd::detail::response_reader;
using state = response_reader::state;

namespace {

// What reading a whole scripted response gave.
struct outcome
{
    state last = state::need_more;
    dd::error_code ec;
    unsigned status = 0;
    std::string headers;  // "name: value\n"...
    std::string body;
    bool reusable = false;
    std::size_t left_over = 0;
    int continues = 0;
    bool got_any = false;

    bool operator==(const outcome&) const = default;
};

// Feeds `bytes` in pieces of the given sizes (the rest in one last piece),
// as a driver would: unconsumed bytes stay buffered and are offered again
// with the next piece. `eof`: the peer then closes.
outcome read_response(const std::string& bytes, std::vector<std::size_t> pieces, bool eof = false,
                      std::uint64_t limit = 1 << 20)
{
    response_reader r;
    r.start(limit);
    outcome o;
    std::string buffered;
    std::size_t pos = 0;
    auto step = [&](std::size_t n) {
        buffered.append(bytes, pos, n);
        pos += n;
        for (;;)
        {
            std::size_t used = 0;
            o.last = r.put(boost::asio::buffer(buffered), used);
            buffered.erase(0, used);
            if (o.last == state::continue_)
            {
                ++o.continues;
                continue;
            }
            return;
        }
    };
    for (std::size_t n : pieces)
    {
        if (o.last == state::done || o.last == state::failed || pos >= bytes.size())
            break;
        step(std::min(n, bytes.size() - pos));
    }
    if (o.last == state::need_more && pos < bytes.size())
        step(bytes.size() - pos);
    if (o.last == state::need_more && eof)
        o.last = r.put_eof();
    o.got_any = r.got_any();
    if (o.last == state::failed)
    {
        o.ec = r.error();
        return o;
    }
    if (o.last != state::done)
        return o;
    o.left_over = buffered.size() + (bytes.size() - pos);
    o.reusable = r.reusable(o.left_over != 0);
    auto resp = r.take_response();
    o.status = resp.status;
    for (const auto f : resp.headers)
        o.headers += std::string(f.name) + ": " + std::string(f.value) + "\n";
    o.body = resp.body;
    return o;
}

outcome whole(const std::string& bytes, bool eof = false) { return read_response(bytes, {bytes.size()}, eof); }

outcome byte_by_byte(const std::string& bytes, bool eof = false)
{
    return read_response(bytes, std::vector<std::size_t>(bytes.size(), 1), eof);
}

const std::string responses[] = {
    "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-RateLimit-Remaining: 39\r\n\r\nhello",
    "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\nTrailer: x\r\n\r\n",
    "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
    "HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 28\r\n\r\n{\"error\":\"Order not found\"}\n",
    "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx",
    "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx",
    "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 5\r\nContent-Length: 0\r\n\r\n",
};

}  // namespace

TEST(HttpExchange, EverySplitOfAResponseReadsTheSame)
{
    for (const auto& bytes : responses)
    {
        SCOPED_TRACE(bytes);
        const outcome ref = whole(bytes);
        ASSERT_EQ(ref.last, state::done) << ref.ec.message();
        EXPECT_EQ(byte_by_byte(bytes), ref);
        for (std::size_t cut = 1; cut < bytes.size(); ++cut)
            ASSERT_EQ(read_response(bytes, {cut}), ref) << "split at " << cut;
    }
}

// Beast 1.81 asserts when a chunked body's last chunk is resumed with fewer
// than 5 bytes (boostorg/beast#2861); the reader waits for them.
TEST(HttpExchange, TheLastChunkSplitAcrossReads)
{
    const std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    const std::pair<std::string, std::vector<std::size_t>> cases[] = {
        {head + "0\r\n\r\n", {head.size(), 3, 1, 1}},
        {head + "0\r\n\r\n", {head.size() + 1, 1, 1, 1, 1}},
        {head + "2\r\nok\r\n0\r\nX-T: 1\r\n\r\n", {head.size() + 10, 7, 2, 1}},
    };
    for (const auto& [bytes, pieces] : cases)
    {
        const auto o = read_response(bytes, pieces);
        ASSERT_EQ(o.last, state::done) << o.ec.message();
        EXPECT_EQ(o.status, 200u);
        EXPECT_EQ(o.left_over, 0u);
    }
}

// A body shorter than 5 bytes arriving in a read of its own completes the
// response (the Beast #2861 workaround above must not hold it back).
TEST(HttpExchange, AShortBodyInAReadOfItsOwn)
{
    const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n";
    const auto o = read_response(head + "ok", {head.size(), 1, 1});
    ASSERT_EQ(o.last, state::done) << o.ec.message();
    EXPECT_EQ(o.body, "ok");
}

// A chunked body's trailer fields are not the response's header fields:
// one repeating X-RateLimit-Remaining with another value changes nothing the
// client reads, whatever the Boost version (up to Boost 1.89 Beast reports
// them as fields after the header; from 1.90 through a callback of their own).
TEST(HttpExchange, TrailerFieldsNeverBecomeHeaders)
{
    const std::string bytes =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-RateLimit-Remaining: 39\r\n\r\n"
        "2\r\nok\r\n0\r\nX-RateLimit-Remaining: 0\r\nRetry-After: 60\r\n\r\n";
    const outcome ref = whole(bytes);
    ASSERT_EQ(ref.last, state::done) << ref.ec.message();
    EXPECT_EQ(ref.body, "ok");
    EXPECT_EQ(ref.headers, "Transfer-Encoding: chunked\nX-RateLimit-Remaining: 39\n");
    EXPECT_TRUE(ref.reusable);
    EXPECT_EQ(byte_by_byte(bytes), ref);
    for (std::size_t cut = 1; cut < bytes.size(); ++cut)
        ASSERT_EQ(read_response(bytes, {cut}), ref) << "split at " << cut;
}

TEST(HttpExchange, WhatAResponseSays)
{
    auto o = byte_by_byte(responses[0]);
    EXPECT_EQ(o.status, 200u);
    EXPECT_EQ(o.body, "hello");
    EXPECT_EQ(o.headers, "Content-Length: 5\nX-RateLimit-Remaining: 39\n");
    EXPECT_TRUE(o.reusable);
    EXPECT_EQ(o.continues, 0);

    o = byte_by_byte(responses[1]);
    EXPECT_EQ(o.status, 201u);
    EXPECT_EQ(o.body, "abcde");
    EXPECT_TRUE(o.reusable);

    o = byte_by_byte(responses[2]);  // 100 Continue is reported, then skipped
    EXPECT_EQ(o.continues, 1);
    EXPECT_EQ(o.status, 200u);
    EXPECT_EQ(o.body, "ok");

    o = byte_by_byte(responses[3]);  // other interim responses are skipped silently
    EXPECT_EQ(o.continues, 0);
    EXPECT_EQ(o.status, 204u);
    EXPECT_EQ(o.headers, "");  // the 103's fields are not the final response's

    EXPECT_FALSE(byte_by_byte(responses[4]).reusable);  // Connection: close
    EXPECT_FALSE(byte_by_byte(responses[5]).reusable);  // HTTP/1.0
    EXPECT_TRUE(byte_by_byte(responses[6]).reusable);   // HTTP/1.0 + keep-alive
}

TEST(HttpExchange, KeepAliveDecision)
{
    // A body delimited by the end of the connection: read to EOF, never reused.
    auto o = byte_by_byte("HTTP/1.1 200 OK\r\n\r\nuntil the end", true);
    ASSERT_EQ(o.last, state::done) << o.ec.message();
    EXPECT_EQ(o.body, "until the end");
    EXPECT_FALSE(o.reusable);
    // Bytes after the response (a pushed response, a stray CRLF): not reused.
    for (const char* extra : {"\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\npushed"})
    {
        o = whole(responses[0] + extra);
        ASSERT_EQ(o.last, state::done);
        EXPECT_EQ(o.body, "hello") << "the extra bytes are not part of the response";
        EXPECT_EQ(o.left_over, std::string(extra).size());
        EXPECT_FALSE(o.reusable);
    }
}

TEST(HttpExchange, MalformedResponsesFailTyped)
{
    namespace http = boost::beast::http;
    const std::pair<std::string, dd::error_code> cases[] = {
        {"HTTP/1.1 002 Odd\r\nContent-Length: 0\r\n\r\n", http::error::bad_status},
        {"HTTP/1.1 000 Zero\r\nContent-Length: 0\r\n\r\n", http::error::bad_status},
        {"HTTP/1.1 600 Beyond\r\nContent-Length: 0\r\n\r\n", http::error::bad_status},
        {"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx", http::error::multiple_content_length},
        {"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", http::error::bad_content_length},
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzzz\r\n", http::error::bad_chunk},
        {"HTTP/2 200\r\n\r\n", http::error::bad_version},
        {"SSH-2.0-OpenSSH_9.2\r\n\r\n", http::error::bad_version},
    };
    for (const auto& [bytes, ec] : cases)
    {
        SCOPED_TRACE(bytes);
        for (const auto& o : {whole(bytes), byte_by_byte(bytes)})
        {
            EXPECT_EQ(o.last, state::failed);
            EXPECT_EQ(o.ec, ec) << o.ec.message();
        }
    }
}

TEST(HttpExchange, BodyLimitAndEarlyEnd)
{
    namespace http = boost::beast::http;
    auto o = read_response("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789", {1000}, false, 9);
    EXPECT_EQ(o.ec, http::error::body_limit);
    // The peer closes before any byte: the server may not have seen the request.
    response_reader r;
    r.start(100);
    EXPECT_EQ(r.put_eof(), state::failed);
    EXPECT_EQ(r.error(), http::error::end_of_stream);
    EXPECT_FALSE(r.got_any());
    // ... or in the middle of the body.
    o = byte_by_byte("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n01234", true);
    EXPECT_EQ(o.last, state::failed);
    EXPECT_EQ(o.ec, http::error::partial_message);
    EXPECT_TRUE(o.got_any);
}

TEST(HttpExchange, RequestHead)
{
    using dd::http_method;
    std::string out;
    dd::http_headers h;
    h.add("X-Auth-Token", "k");
    h.add("Content-Length", "999");  // computed, never the caller's
    h.add("Transfer-Encoding", "chunked");
    request_head rh{.method = http_method::get, .path_query = "orders?page=2", .headers = &h, .host_header = "api.test", .user_agent = "ua/1"};
    dd::detail::serialize_request_head(out, rh);
    EXPECT_EQ(out, "GET /orders?page=2 HTTP/1.1\r\nX-Auth-Token: k\r\nHost: api.test\r\nUser-Agent: ua/1\r\n\r\n");

    rh.method = http_method::post;  // a write always says its length, even 0
    rh.path_query = "/assets";
    dd::detail::serialize_request_head(out, rh);
    EXPECT_EQ(out, "POST /assets HTTP/1.1\r\nX-Auth-Token: k\r\nHost: api.test\r\nUser-Agent: ua/1\r\nContent-Length: 0\r\n\r\n");

    dd::http_headers own;
    own.add("host", "other.test");
    own.add("user-agent", "mine");
    own.add("Expect", "100-Continue");
    request_head put{.method = http_method::put, .path_query = "/b?X-Amz-Signature=s", .headers = &own, .host_header = "api.test",
                     .user_agent = "ua/1", .content_length = 2147483648u, .always_content_length = true};
    dd::detail::serialize_request_head(out, put);
    EXPECT_EQ(out, "PUT /b?X-Amz-Signature=s HTTP/1.1\r\nhost: other.test\r\nuser-agent: mine\r\nExpect: 100-Continue\r\n"
                   "Content-Length: 2147483648\r\n\r\n");
    EXPECT_TRUE(dd::detail::expects_continue(own));

    // Plain http:// through a proxy: absolute form and the proxy's credentials.
    request_head via{.method = http_method::get, .path_query = "/orders", .headers = &h, .host_header = "api.test:8080",
                     .absolute_form_scheme = "http://", .proxy_authorization = "Basic dTpw"};
    dd::detail::serialize_request_head(out, via);
    EXPECT_EQ(out, "GET http://api.test:8080/orders HTTP/1.1\r\nX-Auth-Token: k\r\nHost: api.test:8080\r\n"
                   "Proxy-Authorization: Basic dTpw\r\n\r\n");
    EXPECT_FALSE(dd::detail::expects_continue(h));
}
