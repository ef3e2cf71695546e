// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The transport's exchange drivers (the in-memory-body state machine and the
// streamed-body coroutine, impl/http/beast_transport.ipp) over beast::test::stream
// with a fail_count: the n-th read or write of the connection fails, for every
// n until the exchange succeeds. Each failure point must end the request with
// the stream's own error and no response, exactly once, with nothing left
// running and the connection out of the pool; each success must deliver the
// right response and pool the connection only when it is reusable.
//
// The drivers are internal: this program includes them header-only.
// Connecting, the TLS handshake and closing run on real sockets; they are
// exercised in beast_transport_test.cpp (refused, unknown CA, a peer closing
// at every byte, a server not speaking TLS).
#include <digital_delivery/beast_transport.hpp>
#include <digital_delivery/upload.hpp>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/_experimental/test/fail_count.hpp>
#include <boost/beast/_experimental/test/stream.hpp>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

namespace dd = digital_delivery;
namespace bt = digital_delivery::detail::bt;
namespace test = boost::beast::test;
using dd::error_code;
using dd::http_method;

namespace {

// Beast 1.81's test::stream takes a work guard on the handler's associated
// executor with the old executor interface (on_work_started), which the
// drivers' strand<any_io_executor> does not have. This adapter hands the
// stream a handler bound to the io_context's executor and relays the
// completion to the driver's own executor; the stream, its fail_count and its
// read and write sizes do the rest.
class adapted_stream
{
public:
    using executor_type = boost::asio::any_io_executor;

    adapted_stream(test::stream& s, boost::asio::io_context& ioc) : s_(s), ioc_(ioc) {}

    executor_type get_executor() { return s_.get_executor(); }

    template <class Buffers, class Token>
    auto async_read_some(const Buffers& b, Token&& token)
    {
        return boost::asio::async_initiate<Token, void(error_code, std::size_t)>(
            [this](auto h, const Buffers& bufs) { s_.async_read_some(bufs, relay(std::move(h))); }, token, b);
    }

    template <class Buffers, class Token>
    auto async_write_some(const Buffers& b, Token&& token)
    {
        return boost::asio::async_initiate<Token, void(error_code, std::size_t)>(
            [this](auto h, const Buffers& bufs) { s_.async_write_some(bufs, relay(std::move(h))); }, token, b);
    }

private:
    // A failed operation leaves the stream closed, as a socket error leaves a
    // broken connection (the other direction's pending operation ends too).
    template <class Handler>
    auto relay(Handler h)
    {
        return boost::asio::bind_executor(ioc_.get_executor(), [this, h = std::move(h)](error_code ec, std::size_t n) mutable {
            if (ec && ec != boost::asio::error::operation_aborted)
                s_.close();
            auto ex = boost::asio::get_associated_executor(h);
            boost::asio::dispatch(ex, [h = std::move(h), ec, n]() mutable { h(ec, n); });
        });
    }

    test::stream& s_;
    boost::asio::io_context& ioc_;
};

struct scenario
{
    const char* name;
    http_method method;
    std::string body;        // in memory
    std::size_t streamed;    // > 0: a streamed body of this size instead
    std::string response;    // what the peer sends
    std::string want_body;   // the response body that must be delivered
    bool reusable;           // the connection goes back to the pool
};

struct outcome
{
    int calls = 0;
    error_code ec;
    dd::http_response resp;
};

class exchange_driver : public ::testing::TestWithParam<scenario>
{
protected:
    boost::asio::io_context ioc;

    // Runs one exchange whose stream fails its n-th operation; returns what
    // the caller was given, and what the peer received.
    outcome run(std::size_t n, std::string& received, std::size_t& pooled)
    {
        const scenario& sc = GetParam();
        dd::beast_transport_params params;
        params.upload_chunk_size = 700;
        auto impl = std::make_shared<dd::detail::beast_transport_impl>(ioc.get_executor(), params);
        std::string_view path_query;
        dd::http_request req;
        req.method = sc.method;
        req.url = "http://127.0.0.1:9/x?y=1";
        req.body = sc.body;
        if (sc.streamed)
            req.body_stream = std::make_shared<dd::memory_source>(std::string(sc.streamed, 'b'), ioc.get_executor());
        bt::host_pool* pool = impl->find_pool(req.url, path_query);
        if (!pool)
            throw std::logic_error("url");

        outcome out;
        test::stream* peer_ptr = nullptr;  // closed when the exchange ends (its pending read then ends too)
        auto op = std::make_shared<bt::request_op>(impl, std::move(req), dd::transport_handler([&](error_code ec, dd::http_response r) {
                                                       ++out.calls;
                                                       out.ec = ec;
                                                       out.resp = std::move(r);
                                                       peer_ptr->close();
                                                   }));
        op->pool = pool;
        op->path_query = path_query;
        op->conn = std::make_shared<bt::connection>(ioc.get_executor(), impl->strand_, pool, 4096);
        op->conn->op = op.get();
        op->conn->plain.open(boost::asio::ip::tcp::v4());  // a pooled connection must have an open socket
        ++pool->total;

        test::fail_count fc(n);
        test::stream client(ioc, fc);
        test::stream peer(ioc);
        client.connect(peer);
        peer_ptr = &peer;
        client.read_size(9);     // many reads: a failure point each
        client.write_size(300);  // writes in several pieces
        // The peer answers once the whole request has arrived.
        const std::size_t body_size = sc.streamed ? sc.streamed : sc.body.size();
        std::string got;
        std::array<char, 512> rbuf;
        std::function<void(error_code, std::size_t)> on_read;
        auto read_more = [&] { peer.async_read_some(boost::asio::buffer(rbuf), [&](error_code ec, std::size_t k) { on_read(ec, k); }); };
        on_read = [&](error_code ec, std::size_t k) {
            if (ec)
                return;
            got.append(rbuf.data(), k);
            const auto head_end = got.find("\r\n\r\n");
            if (head_end != std::string::npos && got.size() - head_end - 4 >= body_size)
                return boost::asio::async_write(peer, boost::asio::buffer(sc.response), [](error_code, std::size_t) {});
            read_more();
        };
        read_more();
        adapted_stream stream(client, ioc);
        boost::asio::dispatch(impl->strand_, [op, &stream] { op->exchange_on(stream); });
        op.reset();
        ioc.restart();
        ioc.run_for(std::chrono::seconds(20));  // a hang guard: returns as soon as nothing is left to run
        EXPECT_TRUE(ioc.stopped()) << "work left running after the exchange";
        // Nothing may be pending when the streams and the peer's handler go.
        client.close();
        peer.close();
        ioc.restart();
        ioc.poll();
        received = got + std::string(peer.str());
        pooled = pool->idle.size();
        EXPECT_EQ(pool->total, pooled) << "a connection neither pooled nor given back";
        return out;
    }
};

TEST_P(exchange_driver, every_read_and_write_failure_is_a_typed_error_and_nothing_else)
{
    const scenario& sc = GetParam();
    std::size_t n = 0;
    for (;; ++n)
    {
        ASSERT_LT(n, 2000u) << "never succeeded";
        SCOPED_TRACE("operation " + std::to_string(n) + " fails");
        std::string received;
        std::size_t pooled = 0;
        const outcome o = run(n, received, pooled);
        ASSERT_EQ(o.calls, 1) << "the handler ran " << o.calls << " times";
        if (o.ec)
        {
            EXPECT_EQ(o.ec, test::error::test_failure) << o.ec.message();
            EXPECT_EQ(o.resp.status, 0u);
            EXPECT_TRUE(o.resp.body.empty());
            EXPECT_EQ(pooled, 0u) << "a failed connection went back to the pool";
            continue;
        }
        EXPECT_EQ(o.resp.status, 200u);
        EXPECT_EQ(o.resp.body, sc.want_body);
        const bool complete = received.find("\r\n\r\n") != std::string::npos &&
                              received.size() - received.find("\r\n\r\n") - 4 == (sc.streamed ? sc.streamed : sc.body.size());
        ASSERT_TRUE(complete) << "a response before the whole request was written: " << received;
        EXPECT_EQ(received.rfind(std::string(dd::to_string(sc.method)) + " /x?y=1 HTTP/1.1\r\n", 0), 0u) << received;
        EXPECT_EQ(pooled, sc.reusable ? 1u : 0u);
        break;  // the first run in which no operation failed
    }
    std::cout << GetParam().name << ": " << n << " failure points, then success\n";
    EXPECT_GT(n, 3u) << "too few failure points: the scenario is not exercising the driver";
}

const std::string json = R"({"id":"a1","name":"x"})";

INSTANTIATE_TEST_SUITE_P(
    drivers,
    exchange_driver,
    ::testing::Values(
        scenario{"get_content_length", http_method::get, "", 0,
                 "HTTP/1.1 200 OK\r\nContent-Length: 22\r\nX-A: b\r\n\r\n" + json, json, true},
        scenario{"post_chunked", http_method::post, std::string(900, 'p'), 0,
                 "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"id\"\r\n11\r\n:\"a1\",\"name\":\"x\"}\r\n0\r\n\r\n",
                 json, true},
        scenario{"get_connection_close", http_method::get, "", 0,
                 "HTTP/1.1 200 OK\r\nContent-Length: 22\r\nConnection: close\r\n\r\n" + json, json, false},
        scenario{"get_after_100_continue", http_method::get, "", 0,
                 "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 22\r\n\r\n" + json, json, true},
        scenario{"put_streamed", http_method::put, "", 2500,
                 "HTTP/1.1 200 OK\r\nContent-Length: 22\r\n\r\n" + json, json, true}),
    [](const ::testing::TestParamInfo<scenario>& i) { return std::string(i.param.name); });

}  // namespace
