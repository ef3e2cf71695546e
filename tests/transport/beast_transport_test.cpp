//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// Integration tests of the Beast transport against a real nginx (started by
// the test, TLS with a CA made at test time) proxying to an in-process
// upstream. Label: integration.

#include <digital_delivery.hpp>
#include <digital_delivery/beast_transport.hpp>
#include <digital_delivery/impl/http/sansio/connection_reuse.hpp>
#include <digital_delivery/impl/http/sansio/response_parser.hpp>

#include "nginx_env.hpp"
#include "run.hpp"

#include "test_data.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#if !defined(_WIN32)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#endif

namespace dd = digital_delivery;
using dd::client_errc;
using dd::error_code;
using dd::http_method;
using dd::http_request;
using dd::http_response;

namespace {

dd_test::environment* env = nullptr;

class TransportEnv : public ::testing::Environment
{
public:
    void SetUp() override
    {
        static dd_test::environment e;
        e.start();
        env = &e;
    }
    void TearDown() override
    {
        if (env)
            env->stop();
    }
};
const auto* const registered = ::testing::AddGlobalTestEnvironment(new TransportEnv);

std::string tls_url(const std::string& path, unsigned short port = 0)
{
    return "https://127.0.0.1:" + std::to_string(port ? port : env->tls_port) + path;
}

dd::beast_transport_params trusted_params()
{
    dd::beast_transport_params p;
    p.tls.ca_file = env->ca_file();
    return p;
}

struct result
{
    error_code ec;
    http_response resp;
};

// Runs the io_context until the request completes (hang-guarded: dd_test::run_until).
result send(boost::asio::io_context& ioc, dd::beast_transport& t, http_request req)
{
    std::optional<result> out;
    t.async_send(std::move(req), [&](error_code ec, http_response r) { out.emplace(result{ec, std::move(r)}); });
    EXPECT_FALSE(out.has_value()) << "completed inline";
    try
    {
        dd_test::run_until(ioc, [&] { return out.has_value(); });
    }
    catch (const dd_test::hang_error&)
    {
        return {boost::asio::error::timed_out, {}};
    }
    return std::move(*out);
}

http_request make(http_method m, std::string url, std::string body = {})
{
    http_request r;
    r.method = m;
    r.url = std::move(url);
    r.body = std::move(body);
    r.idempotent = m != http_method::post;
    return r;
}

// A body_source producing `size` bytes of a pattern, completing via post.
class pattern_source final : public dd::body_source
{
public:
    pattern_source(boost::asio::any_io_executor ex, std::uint64_t size) : ex_(std::move(ex)), size_(size) {}
    std::uint64_t size() const noexcept override { return size_; }
    void async_read_some(boost::asio::mutable_buffer buf, read_handler h) override
    {
        const std::uint64_t left = size_ - pos_;
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, buf.size()));
        std::memset(buf.data(), 'u', n);
        pos_ += n;
        ++reads_;
        boost::asio::post(ex_, [h = std::move(h), n]() mutable {
            if (n == 0)
                std::move(h)(boost::asio::error::eof, 0);
            else
                std::move(h)(error_code{}, n);
        });
    }
    dd::error_code rewind() override
    {
        pos_ = 0;
        return {};
    }
    std::uint64_t reads() const { return reads_; }

private:
    boost::asio::any_io_executor ex_;
    std::uint64_t size_;
    std::uint64_t pos_ = 0;
    std::uint64_t reads_ = 0;
};

// Calls `probe` before every read of `inner`.
class probing_source final : public dd::body_source
{
public:
    probing_source(std::shared_ptr<dd::body_source> inner, std::function<void()> probe)
        : inner_(std::move(inner)), probe_(std::move(probe))
    {
    }
    std::uint64_t size() const noexcept override { return inner_->size(); }
    void async_read_some(boost::asio::mutable_buffer buf, read_handler h) override
    {
        probe_();
        inner_->async_read_some(buf, std::move(h));
    }
    dd::error_code rewind() override { return inner_->rewind(); }

private:
    std::shared_ptr<dd::body_source> inner_;
    std::function<void()> probe_;
};

#ifdef TCP_NOTSENT_LOWAT
// TCP_NOTSENT_LOWAT of every socket of this process connected to 127.0.0.1:port.
std::vector<int> lowat_of_sockets_to(unsigned short port)
{
    std::vector<int> out;
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd"))
    {
        const int fd = std::atoi(e.path().filename().c_str());
        sockaddr_in peer{};
        socklen_t len = sizeof peer;
        if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0 || peer.sin_family != AF_INET ||
            ntohs(peer.sin_port) != port)
            continue;
        int v = -1;
        socklen_t vl = sizeof v;
        if (getsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &v, &vl) == 0)
            out.push_back(v);
    }
    return out;
}
#endif

// A plain TCP server on 127.0.0.1 (free port, its own thread) that answers
// each connection's first request with the next scripted byte string, byte
// for byte, then closes the connection. Right after the request head, or,
// when pushed with drain_body, after reading Content-Length body bytes, or,
// with immediate, at once without reading anything. Counts the connections it
// accepted.
class scripted_server
{
public:
    scripted_server()
        : acceptor_(ioc_, {boost::asio::ip::make_address("127.0.0.1"), 0}), endpoint_(acceptor_.local_endpoint())
    {
        thread_ = std::thread([this] { run(); });  // the acceptor is used by that thread only from here on
    }
    ~scripted_server()
    {
        stop_ = true;
        boost::asio::ip::tcp::socket poke(ioc_);
        error_code ec;
        poke.connect(endpoint_, ec);  // unblocks accept()
        thread_.join();
    }
    unsigned short port() const { return endpoint_.port(); }
    void push(std::string response, bool drain_body = false, bool immediate = false)
    {
        std::lock_guard<std::mutex> l(m_);
        script_.push_back({std::move(response), drain_body, immediate});
    }
    int accepted() const { return accepted_.load(); }

private:
    void run()
    {
        for (;;)
        {
            boost::asio::ip::tcp::socket s(ioc_);
            error_code ec;
            acceptor_.accept(s, ec);
            if (stop_)
                return;
            if (ec)
                continue;
            ++accepted_;
            scripted next;
            {
                std::lock_guard<std::mutex> l(m_);
                if (!script_.empty())
                {
                    next = std::move(script_.front());
                    script_.pop_front();
                }
            }
            std::string head;
            char buf[4096];
            while (!next.immediate && head.find("\r\n\r\n") == std::string::npos)
            {
                const std::size_t n = s.read_some(boost::asio::buffer(buf), ec);
                if (ec)
                    break;
                head.append(buf, n);
            }
            if (next.drain_body)
            {
                std::size_t length = 0;
                if (const auto at = head.find("Content-Length: "); at != std::string::npos)
                    length = std::strtoull(head.c_str() + at + 16, nullptr, 10);
                std::size_t have = head.size() - (head.find("\r\n\r\n") + 4);
                while (have < length && !ec)
                    have += s.read_some(boost::asio::buffer(buf), ec);
            }
            boost::asio::write(s, boost::asio::buffer(next.response), ec);
            s.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ec);
        }
    }

    boost::asio::io_context ioc_;
    boost::asio::ip::tcp::acceptor acceptor_;
    boost::asio::ip::tcp::endpoint endpoint_;
    std::thread thread_;
    std::atomic<bool> stop_{false};
    std::atomic<int> accepted_{0};
    struct scripted
    {
        std::string response;
        bool drain_body = false;
        bool immediate = false;
    };
    std::mutex m_;
    std::deque<scripted> script_;
};

// A keep-alive server: every connection (its own thread) answers each
// request with "c<connection>r<request>" and keeps the connection open.
// After the first response on a connection it can send `unsolicited` bytes
// (an unrequested response, a stray CRLF) as a separate write, or announce
// `keep_alive` ("timeout=N") in every response.
class keepalive_server
{
public:
    struct behaviour
    {
        std::string unsolicited;
        std::string keep_alive;
    };
    explicit keepalive_server(behaviour b)
        : b_(std::move(b)),
          acceptor_(ioc_, {boost::asio::ip::make_address("127.0.0.1"), 0}),
          endpoint_(acceptor_.local_endpoint())
    {
        thread_ = std::thread([this] { accept_loop(); });
    }
    ~keepalive_server()
    {
        stop_ = true;
        {
            boost::asio::ip::tcp::socket poke(ioc_);
            error_code ec;
            poke.connect(endpoint_, ec);
        }
        thread_.join();
        std::lock_guard<std::mutex> l(m_);
        for (auto& s : sockets_)
            ::shutdown(s->native_handle(), SHUT_RDWR);
        for (auto& t : workers_)
            t.join();
    }
    unsigned short port() const { return endpoint_.port(); }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port()) + "/x"; }
    int accepted() const { return accepted_.load(); }
    int pushed() const { return pushed_.load(); }

private:
    void accept_loop()
    {
        for (;;)
        {
            auto s = std::make_shared<boost::asio::ip::tcp::socket>(ioc_);
            error_code ec;
            acceptor_.accept(*s, ec);
            if (stop_)
                return;
            if (ec)
                continue;
            const int n = ++accepted_;
            std::lock_guard<std::mutex> l(m_);
            sockets_.push_back(s);
            workers_.emplace_back([this, s, n] { serve(*s, n); });
        }
    }
    void serve(boost::asio::ip::tcp::socket& s, int conn)
    {
        std::string in;
        char buf[4096];
        for (int req = 1;; ++req)
        {
            error_code ec;
            std::size_t end;
            while ((end = in.find("\r\n\r\n")) == std::string::npos)
            {
                const std::size_t n = s.read_some(boost::asio::buffer(buf), ec);
                if (ec)
                    return;
                in.append(buf, n);
            }
            std::size_t length = 0;
            if (const auto at = in.find("Content-Length: "); at != std::string::npos && at < end)
                length = std::strtoull(in.c_str() + at + 16, nullptr, 10);
            while (in.size() < end + 4 + length)
            {
                const std::size_t n = s.read_some(boost::asio::buffer(buf), ec);
                if (ec)
                    return;
                in.append(buf, n);
            }
            in.erase(0, end + 4 + length);
            const std::string body = "c" + std::to_string(conn) + "r" + std::to_string(req);
            std::string resp = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
            if (!b_.keep_alive.empty())
                resp += "Keep-Alive: " + b_.keep_alive + "\r\n";
            resp += "\r\n" + body;
            boost::asio::write(s, boost::asio::buffer(resp), ec);
            if (ec)
                return;
            if (req == 1 && !b_.unsolicited.empty())
            {
                std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a write of its own
                boost::asio::write(s, boost::asio::buffer(b_.unsolicited), ec);
                ++pushed_;
            }
        }
    }

    behaviour b_;
    boost::asio::io_context ioc_;
    boost::asio::ip::tcp::acceptor acceptor_;
    boost::asio::ip::tcp::endpoint endpoint_;
    std::thread thread_;
    std::atomic<bool> stop_{false};
    std::atomic<int> accepted_{0};
    std::atomic<int> pushed_{0};
    std::mutex m_;
    std::vector<std::shared_ptr<boost::asio::ip::tcp::socket>> sockets_;
    std::vector<std::thread> workers_;
};

// Waits until the server has sent its unsolicited bytes `n` times, and a
// little more for loopback to deliver them.
void wait_pushed(const keepalive_server& s, int n = 1)
{
    for (int i = 0; i < 2000 && s.pushed() < n; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_EQ(s.pushed(), n);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

}  // namespace

TEST(BeastTransport, InvalidUrls)
{
    boost::asio::io_context ioc;
    dd::beast_transport t(ioc.get_executor());
    for (const char* url : {"hps:{", "ftp://example.com/", "http://", "https:///x", "http://a b/", "http://h:99999/",
                            "http://user@h/", "http://h/\x7f", "http://[zz]/", "http://h:/", "//h/x", "http:{"})
    {
        auto r = send(ioc, t, make(http_method::get, url));
        EXPECT_EQ(r.ec, client_errc::invalid_url) << url;
        EXPECT_EQ(r.resp.status, 0u);
    }
}

TEST(BeastTransport, RoundTripsOverTls)
{
    boost::asio::io_context ioc;
    dd::beast_transport t(ioc.get_executor(), trusted_params());
    for (auto m : {http_method::get, http_method::post, http_method::patch, http_method::delete_, http_method::put})
    {
        const std::string body = m == http_method::get || m == http_method::delete_ ? "" : R"({"a":1})";
        auto req = make(m, tls_url("/echo?tag=rt"), body);
        req.headers.add("Content-Type", "application/json");
        auto r = send(ioc, t, std::move(req));
        ASSERT_FALSE(r.ec) << r.ec.message();
        EXPECT_EQ(r.resp.status, 200u);
        EXPECT_EQ(r.resp.body, std::string(dd::to_string(m)) + ":" + body);
        EXPECT_EQ(r.resp.headers.find("x-method").value_or(""), dd::to_string(m));
    }
    // "localhost" is in the certificate too (SNI + DNS name check).
    auto r = send(ioc, t, make(http_method::get, "https://localhost:" + std::to_string(env->tls_port) + "/echo"));
    ASSERT_FALSE(r.ec) << r.ec.message();
    EXPECT_EQ(r.resp.status, 200u);
}

TEST(BeastTransport, PlainHttp)
{
    boost::asio::io_context ioc;
    dd::beast_transport t(ioc.get_executor());
    auto r = send(ioc, t, make(http_method::post, "http://127.0.0.1:" + std::to_string(env->plain_port) + "/echo", "x"));
    ASSERT_FALSE(r.ec) << r.ec.message();
    EXPECT_EQ(r.resp.body, "POST:x");
}

TEST(BeastTransport, KeepAliveReusesOneConnection)
{
    boost::asio::io_context ioc;
    dd::beast_transport t(ioc.get_executor(), trusted_params());
    for (int i = 0; i < 10; ++i)
    {
        auto r = send(ioc, t, make(http_method::get, tls_url("/echo?tag=reuse-one")));
        ASSERT_FALSE(r.ec) << r.ec.message();
    }
    EXPECT_EQ(env->wait_for_requests("tag=reuse-one", 10), 10u);
    EXPECT_EQ(env->connections_for("tag=reuse-one"), 1u);
}

TEST(BeastTransport, ServerClosingEveryTwoRequestsIsTransparent)
{
    boost::asio::io_context ioc;
    dd::beast_transport t(ioc.get_executor(), trusted_params());
    for (int i = 0; i < 9; ++i)
    {
        auto r = send(ioc, t, make(http_method::get, tls_url("/echo?tag=close-two", env->tls_close_port)));
        ASSERT_FALSE(r.ec) << i << ": " << r.ec.message();
        EXPECT_EQ(r.resp.status, 200u);
    }
    EXPECT_EQ(env->wait_for_requests("tag=close-two", 9), 9u);
    EXPECT_EQ(env->connections_for("tag=close-two"), 5u);
}

TEST(BeastTransport, StalePooledConnection)
{
    // The server's keepalive_timeout (1 s) closes the pooled connection
    // behind the client's back (client idle timeout 30 s).
    boost::asio::io_context ioc;
    dd::beast_transport t(ioc.get_executor(), trusted_params());
    const auto url = tls_url("/echo?tag=stale", env->tls_close_port);
    ASSERT_FALSE(send(ioc, t, make(http_method::get, url)).ec);
    ASSERT_TRUE(dd_test::wait_until_peer_closed(env->tls_close_port)) << "nginx kept the idle connection";
    // Idempotent: resent on a fresh connection.
    auto r = send(ioc, t, make(http_method::get, url));
    ASSERT_FALSE(r.ec) << r.ec.message();
    EXPECT_EQ(r.resp.status, 200u);
    ASSERT_TRUE(dd_test::wait_until_peer_closed(env->tls_close_port)) << "nginx kept the idle connection";
    // Not idempotent: the closed connection is noticed before anything is
    // written to it, and the POST goes out once, on a fresh connection.
    auto r2 = send(ioc, t, make(http_method::post, url, "once"));
    ASSERT_FALSE(r2.ec) << r2.ec.message();
    EXPECT_EQ(r2.resp.body, "POST:once");
    EXPECT_EQ(env->wait_for_requests("tag=stale", 3), 3u);
}

TEST(BeastTransport, UnknownCa)
{
    boost::asio::io_context ioc;
    dd::beast_transport_params p;
    p.tls.ca_file = env->other_ca_file();
    dd::beast_transport t(ioc.get_executor(), p);
    auto r = send(ioc, t, make(http_method::get, tls_url("/echo")));
    EXPECT_EQ(r.ec, client_errc::tls_certificate_verify_failed) << r.ec.message();

    // The system trust store does not know the test CA either.
    dd::beast_transport sys(ioc.get_executor());
    r = send(ioc, sys, make(http_method::get, tls_url("/echo")));
    EXPECT_EQ(r.ec, client_errc::tls_certificate_verify_failed) << r.ec.message();

    // Verification off (dangerous): accepted.
    dd::beast_transport_params off;
    off.tls.verify_peer = false;
    dd::beast_transport insecure(ioc.get_executor(), off);
    r = send(ioc, insecure, make(http_method::get, tls_url("/echo")));
    EXPECT_FALSE(r.ec) << r.ec.message();
}

TEST(BeastTransport, HostNameMismatch)
{
    boost::asio::io_context ioc;
    dd::beast_transport t(ioc.get_executor(), trusted_params());
    auto r = send(ioc, t, make(http_method::get, tls_url("/echo", env->mismatch_port)));
    EXPECT_EQ(r.ec, client_errc::tls_hostname_mismatch) << r.ec.message();
}

TEST(BeastTransport, RequestTimeout)
{
    boost::asio::io_context ioc;
    dd::beast_transport t(ioc.get_executor(), trusted_params());
    auto req = make(http_method::get, tls_url("/slow?ms=2000&tag=timeout"));
    req.timeout = std::chrono::milliseconds(300);
    auto r = send(ioc, t, std::move(req));
    EXPECT_EQ(r.ec, client_errc::request_timeout) << r.ec.message();
    auto r2 = send(ioc, t, make(http_method::get, tls_url("/echo")));
    ASSERT_FALSE(r2.ec) << r2.ec.message();
}

TEST(BeastTransport, ConnectionRefused)
{
    boost::asio::io_context ioc;
    dd::beast_transport t(ioc.get_executor());
    const dd_test::refused_port port;
    auto r = send(ioc, t, make(http_method::get, "http://127.0.0.1:" + std::to_string(port.port()) + "/"));
    EXPECT_EQ(r.ec, boost::asio::error::connection_refused) << r.ec.message();
}

TEST(BeastTransport, ResponseBodyLimit)
{
    boost::asio::io_context ioc;
    auto p = trusted_params();
    p.response_body_limit = 1000;
    dd::beast_transport t(ioc.get_executor(), p);
    auto ok = send(ioc, t, make(http_method::get, tls_url("/big?n=1000")));
    ASSERT_FALSE(ok.ec) << ok.ec.message();
    EXPECT_EQ(ok.resp.body.size(), 1000u);
    auto r = send(ioc, t, make(http_method::get, tls_url("/big?n=200000")));
    EXPECT_EQ(r.ec, client_errc::response_too_large) << r.ec.message();
}

TEST(BeastTransport, LargeResponse)
{
    boost::asio::io_context ioc;
    dd::beast_transport t(ioc.get_executor(), trusted_params());
    auto r = send(ioc, t, make(http_method::get, tls_url("/big?n=3000000")));
    ASSERT_FALSE(r.ec) << r.ec.message();
    EXPECT_EQ(r.resp.body.size(), 3000000u);
}

TEST(BeastTransport, CancelMidRequestThenReuse)
{
    boost::asio::io_context ioc;
    dd::beast_transport t(ioc.get_executor(), trusted_params());
    ASSERT_FALSE(send(ioc, t, make(http_method::get, tls_url("/echo"))).ec);  // warm the pool

    boost::asio::cancellation_signal sig;
    std::optional<result> out;
    t.async_send(make(http_method::get, tls_url("/slow?ms=3000&tag=cancelled")),
                 boost::asio::bind_cancellation_slot(sig.slot(), [&](error_code ec, http_response r) {
                     out.emplace(result{ec, std::move(r)});
                 }));
    // Cancelled once the server has the request (it answers 3 s later).
    dd_test::run_until(ioc, [&] { return env->up->stats().received("/slow?ms=3000&tag=cancelled"); });
    ASSERT_FALSE(out.has_value());
    sig.emit(boost::asio::cancellation_type::terminal);
    dd_test::run_until(ioc, [&] { return out.has_value(); });
    EXPECT_EQ(out->ec, boost::asio::error::operation_aborted) << out->ec.message();

    auto r = send(ioc, t, make(http_method::post, tls_url("/echo"), "after"));
    ASSERT_FALSE(r.ec) << r.ec.message();
    EXPECT_EQ(r.resp.body, "POST:after");
}

TEST(BeastTransport, CancelWhileQueuedAndFifo)
{
    boost::asio::io_context ioc;
    auto p = trusted_params();
    p.max_connections_per_host = 1;
    dd::beast_transport t(ioc.get_executor(), p);

    std::vector<int> order;
    std::optional<result> a, b, c;
    t.async_send(make(http_method::get, tls_url("/slow?ms=500&tag=queue-a")),
                 [&](error_code ec, http_response r) { a.emplace(result{ec, std::move(r)}), order.push_back(1); });
    boost::asio::cancellation_signal sig;
    t.async_send(make(http_method::get, tls_url("/echo?tag=queue-b")),
                 boost::asio::bind_cancellation_slot(sig.slot(), [&](error_code ec, http_response r) {
                     b.emplace(result{ec, std::move(r)});
                     order.push_back(2);
                 }));
    t.async_send(make(http_method::get, tls_url("/echo?tag=queue-c")),
                 [&](error_code ec, http_response r) { c.emplace(result{ec, std::move(r)}), order.push_back(3); });
    // b is cancelled while queued: a holds the only connection for 500 ms from
    // the moment the server has it.
    dd_test::run_until(ioc, [&] { return env->up->stats().received("/slow?ms=500&tag=queue-a"); });
    ASSERT_FALSE(b.has_value());
    sig.emit(boost::asio::cancellation_type::terminal);
    dd_test::run_until(ioc, [&] { return a && b && c; });
    EXPECT_EQ(b->ec, boost::asio::error::operation_aborted);
    ASSERT_FALSE(a->ec) << a->ec.message();
    ASSERT_FALSE(c->ec) << c->ec.message();
    EXPECT_EQ(order, (std::vector<int>{2, 1, 3}));
    EXPECT_EQ(env->wait_for_requests("tag=queue-", 2), 2u);
    EXPECT_EQ(env->requests_for("tag=queue-b"), 0u);
    // One connection served both a and c.
    EXPECT_EQ(env->connections_for("tag=queue-"), 1u);
}

// Whatever comes back on the wire, a request ends with a response or a typed
// error (never a crash or a hang), and the transport keeps working.
TEST(BeastTransport, MalformedResponsesAreTypedErrors)
{
    const std::string ok = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
    struct row
    {
        std::string wire;
        error_code want;  // or success with `status` and `body`
        unsigned status = 0;
        std::string body;
    };
    const row rows[] = {
        {ok, {}, 200, "hello"},
        {"HTTX/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", client_errc::protocol_error},
        {"HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n", client_errc::protocol_error},
        // Three digits but no HTTP status (RFC 9110: 100-599): never a final response.
        {"HTTP/1.1 002 OK\r\nContent-Length: 0\r\n\r\n", client_errc::protocol_error},
        {"HTTP/1.1 000 OK\r\nContent-Length: 5\r\n\r\nhello", client_errc::protocol_error},
        {"HTTP/1.1 099 X\r\nContent-Length: 0\r\n\r\n", client_errc::protocol_error},
        {"HTTP/1.1 600 X\r\nContent-Length: 0\r\n\r\n", client_errc::protocol_error},
        {"HTTP/1.1 999 X\r\nContent-Length: 0\r\n\r\n", client_errc::protocol_error},
        {"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 002 OK\r\nContent-Length: 0\r\n\r\n", client_errc::protocol_error},
        {"HTTP/1.1 599 X\r\nContent-Length: 0\r\n\r\n", {}, 599, ""},
        {"HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n", client_errc::protocol_error},
        {"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc", client_errc::protocol_error},
        {"HTTP/1.1 200 OK\r\nBad Header: x\r\n\r\n", client_errc::protocol_error},
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", client_errc::protocol_error},
        {"HTTP/1.1 200 OK\r\nX-Big: " + std::string(200000, 'x') + "\r\n\r\n", client_errc::protocol_error},
        {"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n", client_errc::response_too_large},
        {"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", client_errc::connection_closed},
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", client_errc::connection_closed},
        {"HTTP/1.1 200 OK\r\nContent-Len", client_errc::connection_closed},
        {"", client_errc::connection_closed},
        {"HTTP/1.1 100 Continue\r\n\r\n", client_errc::connection_closed},  // no final response follows
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", {}, 200, "hello"},
        {"HTTP/1.0 200 OK\r\n\r\nread to the end", {}, 200, "read to the end"},
        {"HTTP/1.1 100 Continue\r\n\r\n" + ok, {}, 200, "hello"},
        {ok + "trailing garbage", {}, 200, "hello"},
    };
    scripted_server server;
    const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/x";
    int expected_connections = 0;
    for (const auto& r : rows)
    {
        SCOPED_TRACE(r.wire.substr(0, 80));
        boost::asio::io_context ioc;
        dd::beast_transport_params p;
        p.request_timeout = std::chrono::seconds(10);
        dd::beast_transport t(ioc.get_executor(), p);
        server.push(r.wire);
        auto got = send(ioc, t, make(http_method::get, url));
        ++expected_connections;
        EXPECT_EQ(got.ec, r.want) << got.ec.message();
        if (!r.want)
        {
            EXPECT_EQ(got.resp.status, r.status);
            EXPECT_EQ(got.resp.body, r.body);
        }
        // The same transport, a well-formed response: works.
        server.push(ok);
        auto again = send(ioc, t, make(http_method::get, url));
        ++expected_connections;
        ASSERT_FALSE(again.ec) << again.ec.message();
        EXPECT_EQ(again.resp.body, "hello");
    }
    EXPECT_EQ(server.accepted(), expected_connections);  // no request was sent twice

    // Seeded random mutations of a valid response: a response or a typed error, always.
    const std::string base = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                             "X-RateLimit-Remaining: 39\r\n\r\n11\r\n{\"order\":{\"a\":1}}\r\n0\r\n\r\n";
    const char alphabet[] = {'\r', '\n', ':', ' ', '0', '9', 'f', 'x', '\0', '\x7f', '\xff', 'H', '/', '.', ';'};
    std::mt19937 rng(20261122);
    int responses = 0, errors = 0;
    boost::asio::io_context ioc;
    dd::beast_transport_params p;
    p.request_timeout = std::chrono::seconds(10);
    dd::beast_transport t(ioc.get_executor(), p);
    for (int i = 0; i < 300; ++i)
    {
        const std::string wire = dd_test::mutate(base, rng, {alphabet, sizeof alphabet});
        server.push(wire);
        auto got = send(ioc, t, make(http_method::get, url));
        if (got.ec)
        {
            ++errors;
            EXPECT_TRUE(
                got.ec == client_errc::protocol_error || got.ec == client_errc::connection_closed ||
                got.ec == client_errc::response_too_large
            ) << got.ec.message() << " for " << wire;
        }
        else
        {
            ++responses;
            EXPECT_GE(got.resp.status, 100u);
            EXPECT_LE(got.resp.status, 599u);
        }
    }
    EXPECT_GT(responses, 20);
    EXPECT_GT(errors, 20);
    server.push(ok);
    auto last = send(ioc, t, make(http_method::get, url));
    ASSERT_FALSE(last.ec) << last.ec.message();
    EXPECT_EQ(last.resp.body, "hello");

    // The same while a streaming body is going out (the storage answering
    // after the request head, then closing): the upload stops with a response
    // or a typed error, it does not hang or send the rest.
    const std::string streaming_rows[] = {
        "HTTX/1.1 200 OK\r\n\r\n",
        "HTTP/1.1 002 OK\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 000 OK\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 403 Forbidden\r\nContent-Length: 21\r\n\r\nSignatureDoesNotMatch",
        "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
        "",
    };
    for (const auto& wire : streaming_rows)
    {
        SCOPED_TRACE(wire);
        const std::uint64_t size = 64u * 1024u * 1024u;
        auto src = std::make_shared<pattern_source>(ioc.get_executor(), size);
        auto req = make(http_method::put, url);
        req.body_stream = src;
        server.push(wire);
        auto got = send(ioc, t, std::move(req));
        if (got.ec)
        {
            EXPECT_TRUE(
                got.ec == client_errc::protocol_error || got.ec == client_errc::connection_closed ||
                got.ec == boost::asio::error::broken_pipe || got.ec == boost::asio::error::connection_reset
            ) << got.ec.message();
        }
        else
        {
            EXPECT_EQ(got.resp.status, 403u);
        }
        EXPECT_LT(src->reads() * 65536u, size / 2);  // stopped early
        server.push(ok);
        auto after = send(ioc, t, make(http_method::get, url));
        ASSERT_FALSE(after.ec) << after.ec.message();
        EXPECT_EQ(after.resp.body, "hello");
    }
}

// A server that closes idle keep-alive connections (here: at once, after
// each answer). A request that may not be resent — a POST, a streamed PUT —
// does not take the pooled connection the server closed meanwhile: it goes
// out exactly once on a fresh one instead of failing with connection_closed.
TEST(BeastTransport, AWriteAfterAnIdleCloseGoesOutOnAFreshConnection)
{
    for (bool streamed : {false, true})
    {
        SCOPED_TRACE(streamed ? "streamed PUT" : "POST");
        scripted_server server;
        const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/x";
        boost::asio::io_context ioc;
        dd::beast_transport t(ioc.get_executor());
        server.push("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst");
        ASSERT_FALSE(send(ioc, t, make(http_method::get, url)).ec);
        // The server closed that keep-alive connection after answering; it is idle in the pool.
        ASSERT_TRUE(dd_test::wait_until_peer_closed(server.port()));
        server.push("HTTP/1.1 201 Created\r\nContent-Length: 7\r\n\r\ncreated", true);
        auto req = make(streamed ? http_method::put : http_method::post, url, streamed ? "" : R"({"asset":{}})");
        if (streamed)
            req.body_stream = std::make_shared<pattern_source>(ioc.get_executor(), 1024u * 1024u);
        auto r = send(ioc, t, std::move(req));
        ASSERT_FALSE(r.ec) << r.ec.message();
        EXPECT_EQ(r.resp.status, 201u);
        EXPECT_EQ(r.resp.body, "created");
        EXPECT_EQ(server.accepted(), 2);
    }
}

// Bytes a server sends on a connection idle in the pool are no response to
// the next request: that connection is discarded, and the next request gets
// its own answer on a fresh one.
TEST(BeastTransport, UnsolicitedBytesOnAnIdleConnectionAreNeverAResponse)
{
    keepalive_server server({.unsolicited = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\npushed"});
    boost::asio::io_context ioc;
    dd::beast_transport t(ioc.get_executor());
    auto r1 = send(ioc, t, make(http_method::get, server.url()));
    ASSERT_FALSE(r1.ec) << r1.ec.message();
    EXPECT_EQ(r1.resp.body, "c1r1");
    wait_pushed(server);
    auto r2 = send(ioc, t, make(http_method::get, server.url()));
    ASSERT_FALSE(r2.ec) << r2.ec.message();
    EXPECT_EQ(r2.resp.body, "c2r1");
    // ... and so is a write, which may not be resent.
    wait_pushed(server, 2);  // the second connection pushed too
    auto r3 = send(ioc, t, make(http_method::post, server.url(), "x"));
    ASSERT_FALSE(r3.ec) << r3.ec.message();
    EXPECT_EQ(r3.resp.body, "c3r1");
}

// A stray CRLF after a keep-alive response does not fail the next request.
TEST(BeastTransport, AStrayCrlfAfterAResponseDoesNotFailTheNextRequest)
{
    keepalive_server server({.unsolicited = "\r\n"});
    boost::asio::io_context ioc;
    dd::beast_transport t(ioc.get_executor());
    ASSERT_FALSE(send(ioc, t, make(http_method::get, server.url())).ec);
    wait_pushed(server);
    auto r = send(ioc, t, make(http_method::get, server.url()));
    ASSERT_FALSE(r.ec) << r.ec.message();
    EXPECT_EQ(r.resp.status, 200u);
}

// Keep-Alive: timeout=N is honoured: a connection is reused only while well
// inside the server's announced idle time (one second of margin).
TEST(BeastTransport, KeepAliveTimeoutIsHonoured)
{
    // Keep-Alive value -> the second request's answer: "c1r2" reused, "c2r1" a fresh connection.
    const std::pair<const char*, const char*> cases[] = {{"timeout=30, max=100", "c1r2"}, {"timeout=1", "c2r1"}};
    for (const auto& [keep_alive, expected] : cases)
    {
        SCOPED_TRACE(keep_alive);
        keepalive_server server({.keep_alive = keep_alive});
        boost::asio::io_context ioc;
        dd::beast_transport t(ioc.get_executor());
        ASSERT_FALSE(send(ioc, t, make(http_method::get, server.url())).ec);
        auto r = send(ioc, t, make(http_method::post, server.url(), "x"));
        ASSERT_FALSE(r.ec) << r.ec.message();
        EXPECT_EQ(r.resp.body, expected);
    }
}

// The peer fails at every point of the exchange: it closes the connection
// after each prefix of its response (nothing, part of the status line, of a
// header, of the body, of a chunk), for a GET, a POST and a streamed PUT.
// Every run ends with a typed error or the whole response: never a hang, a
// crash, a truncated body delivered as a success, or an untyped error.
TEST(BeastTransport, APeerClosingAtEveryPointGivesATypedError)
{
    const std::string bodies[] = {
        "HTTP/1.1 200 OK\r\nContent-Length: 11\r\nX-A: b\r\n\r\n{\"id\":\"a1\"}",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n3\r\n:1}\r\n0\r\n\r\n",
    };
    for (const auto& full : bodies)
    {
        for (auto m : {http_method::get, http_method::post, http_method::put})
        {
            scripted_server server;
            const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/x";
            boost::asio::io_context ioc;
            dd::beast_transport t(ioc.get_executor());
            for (std::size_t k = 0; k <= full.size(); ++k)
            {
                SCOPED_TRACE(std::string(dd::to_string(m)) + " closed after " + std::to_string(k) + " bytes of " + full);
                server.push(full.substr(0, k), m == http_method::post);
                auto req = make(m, url, m == http_method::post ? "{}" : "");
                if (m == http_method::put)
                    req.body_stream = std::make_shared<pattern_source>(ioc.get_executor(), 4096u);
                auto r = send(ioc, t, std::move(req));
                if (k == full.size())
                {
                    // Complete: delivered, unless a streamed body met the close first.
                    if (!r.ec || m != http_method::put)
                    {
                        ASSERT_FALSE(r.ec) << r.ec.message();
                        EXPECT_EQ(r.resp.status, 200u);
                        EXPECT_NE(r.resp.body.find(":"), std::string::npos);
                        continue;
                    }
                }
                ASSERT_TRUE(r.ec) << "a truncated response was delivered: " << r.resp.body;
                EXPECT_TRUE(r.ec == client_errc::connection_closed || r.ec == client_errc::protocol_error)
                    << r.ec.message();
            }
        }
    }
}

// The reuse limit from a response alone (no I/O).
TEST(KeepAliveLimit, FromTheServersKeepAliveHeader)
{
    using dd::detail::keep_alive_timeout_param;
    EXPECT_EQ(keep_alive_timeout_param("timeout=5, max=1000"), 5);
    EXPECT_EQ(keep_alive_timeout_param("max=10,Timeout=7"), 7);
    EXPECT_EQ(keep_alive_timeout_param(" timeout=\"3\" "), 3);
    EXPECT_EQ(keep_alive_timeout_param("timeout=-1"), -1);
    EXPECT_EQ(keep_alive_timeout_param("timeout=99999999999999999999"), -1);
    EXPECT_EQ(keep_alive_timeout_param("timeouts=5"), -1);
    EXPECT_EQ(keep_alive_timeout_param(""), -1);
    const auto limit = [](const char* ka) {
        http_response r;
        if (ka)
            r.headers.add("Keep-Alive", ka);
        return dd::detail::keep_alive_limit(r, std::chrono::milliseconds(4000));
    };
    EXPECT_EQ(limit(nullptr), std::chrono::milliseconds(4000));
    EXPECT_EQ(limit("timeout=60"), std::chrono::milliseconds(4000));
    EXPECT_EQ(limit("timeout=3"), std::chrono::milliseconds(2000));
    EXPECT_EQ(limit("timeout=1"), std::chrono::milliseconds(0));
    EXPECT_EQ(limit("timeout=0"), std::chrono::milliseconds(0));
    EXPECT_EQ(limit("timeout=x"), std::chrono::milliseconds(4000));
}

// An https URL whose server does not speak TLS: a typed TLS error, whether
// it answers in plain HTTP at once or says nothing at all.
TEST(BeastTransport, ServerNotSpeakingTlsIsATypedError)
{
    scripted_server server;
    const std::string url = "https://127.0.0.1:" + std::to_string(server.port()) + "/x";
    boost::asio::io_context ioc;
    dd::beast_transport_params p = trusted_params();
    p.tls_handshake_timeout = std::chrono::milliseconds(300);
    dd::beast_transport t(ioc.get_executor(), p);
    server.push("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", false, true);
    auto plain = send(ioc, t, make(http_method::get, url));
    EXPECT_EQ(plain.ec, client_errc::tls_error) << plain.ec.message();
    server.push("");  // reads the ClientHello, then waits for the client to give up
    auto silent = send(ioc, t, make(http_method::get, url));
    EXPECT_EQ(silent.ec, client_errc::tls_handshake_timeout) << silent.ec.message();
    // The transport still works.
    auto r = send(ioc, t, make(http_method::get, tls_url("/echo")));
    ASSERT_FALSE(r.ec) << r.ec.message();
}

TEST(BeastTransport, StreamingUpload)
{
    boost::asio::io_context ioc;
    dd::beast_transport t(ioc.get_executor(), trusted_params());
    const std::uint64_t size = 5u * 1024u * 1024u + 123u;
    auto src = std::make_shared<pattern_source>(ioc.get_executor(), size);
    const auto before = env->up->stats().upload_bytes.load();
    auto req = make(http_method::put, tls_url("/upload?tag=stream"));
    req.body_stream = src;
    std::uint64_t last_progress = 0;
    int progress_calls = 0;
    req.on_body_progress = [&](std::uint64_t n) {
        EXPECT_GT(n, last_progress);
        last_progress = n;
        ++progress_calls;
    };
    auto r = send(ioc, t, std::move(req));
    ASSERT_FALSE(r.ec) << r.ec.message();
    EXPECT_EQ(r.resp.status, 200u);
    EXPECT_EQ(r.resp.body, std::to_string(size));
    EXPECT_EQ(last_progress, size);
    EXPECT_GE(progress_calls, 80);
    EXPECT_EQ(env->up->stats().upload_bytes.load() - before, size);

    // Expect: 100-continue (nginx answers 100 itself).
    auto src2 = std::make_shared<pattern_source>(ioc.get_executor(), 100000);
    auto req2 = make(http_method::put, tls_url("/upload?tag=stream-expect"));
    req2.headers.add("Expect", "100-continue");
    req2.body_stream = src2;
    auto r2 = send(ioc, t, std::move(req2));
    ASSERT_FALSE(r2.ec) << r2.ec.message();
    EXPECT_EQ(r2.resp.body, "100000");
}

#ifdef TCP_NOTSENT_LOWAT
// beast_transport_params::upload_send_lowat is set on the connection while the
// body goes out, and only then: a pooled connection before and after has the
// system default (0); with 0 the socket is left alone.
TEST(BeastTransport, UploadSendLowatOnlyWhileTheBodyIsSent)
{
    for (const std::size_t lowat : {std::size_t{16 * 1024}, std::size_t{0}})
    {
        SCOPED_TRACE("upload_send_lowat = " + std::to_string(lowat));
        boost::asio::io_context ioc;
        auto p = trusted_params();
        p.upload_send_lowat = lowat;
        dd::beast_transport t(ioc.get_executor(), p);
        auto r0 = send(ioc, t, make(http_method::get, tls_url("/echo")));
        ASSERT_FALSE(r0.ec) << r0.ec.message();
        EXPECT_EQ(lowat_of_sockets_to(env->tls_port), std::vector<int>{0});

        std::vector<int> seen;
        auto src = std::make_shared<probing_source>(
            std::make_shared<pattern_source>(ioc.get_executor(), 1024u * 1024u),
            [&] {
                const auto v = lowat_of_sockets_to(env->tls_port);
                seen.insert(seen.end(), v.begin(), v.end());
            }
        );
        auto req = make(http_method::put, tls_url("/upload?tag=lowat"));
        req.body_stream = src;
        auto r = send(ioc, t, std::move(req));
        ASSERT_FALSE(r.ec) << r.ec.message();
        EXPECT_EQ(r.resp.status, 200u);
        ASSERT_GE(seen.size(), 16u);  // one socket, probed at every 64 KiB read
        EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [&](int v) { return v == static_cast<int>(lowat); }));
        // Restored: the same connection, back in the pool.
        EXPECT_EQ(lowat_of_sockets_to(env->tls_port), std::vector<int>{0});
        auto r2 = send(ioc, t, make(http_method::get, tls_url("/echo")));
        ASSERT_FALSE(r2.ec) << r2.ec.message();
    }
}
#endif

TEST(BeastTransport, EarlyForbiddenDuringLargeUpload)
{
    boost::asio::io_context ioc;
    dd::beast_transport t(ioc.get_executor(), trusted_params());
    const std::uint64_t size = 1024u * 1024u * 1024u;  // 1 GiB: never fully sent
    auto src = std::make_shared<pattern_source>(ioc.get_executor(), size);
    auto req = make(http_method::put, tls_url("/forbid?X-Amz-Signature=abc%2Fdef&tag=forbid"));
    req.body_stream = src;
    auto r = send(ioc, t, std::move(req));
    ASSERT_FALSE(r.ec) << r.ec.message();
    EXPECT_EQ(r.resp.status, 403u);
    EXPECT_NE(r.resp.body.find("SignatureDoesNotMatch"), std::string::npos);
    EXPECT_LT(src->reads() * 65536u, size / 4);
    // Query sent byte-exact.
    EXPECT_TRUE(env->up->stats().received("/forbid?X-Amz-Signature=abc%2Fdef&tag=forbid"));
    // The transport still works.
    auto r2 = send(ioc, t, make(http_method::get, tls_url("/echo")));
    ASSERT_FALSE(r2.ec) << r2.ec.message();
}

TEST(BeastTransport, MultiThreadedIoContext)
{
    boost::asio::io_context ioc(4);
    auto p = trusted_params();
    p.max_connections_per_host = 4;
    dd::beast_transport t(ioc.get_executor(), p);
    auto work = boost::asio::make_work_guard(ioc);
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&] { ioc.run(); });
    std::atomic<int> ok{0}, failed{0}, finished{0};
    std::promise<void> all_done;
    const int total = 200;
    for (int i = 0; i < total; ++i)
    {
        auto req = make(i % 3 == 0 ? http_method::post : http_method::get, tls_url("/echo?tag=mt"), "b");
        t.async_send(std::move(req), [&](error_code ec, http_response r) {
            (ec || r.status != 200 ? failed : ok)++;
            if (++finished == total)
                all_done.set_value();
        });
    }
    const bool completed = all_done.get_future().wait_for(dd_test::hang_limit()) == std::future_status::ready;
    EXPECT_TRUE(completed) << "HANG in " << dd_test::current_test() << ": " << finished.load() << " of " << total
                           << " requests completed";
    work.reset();
    ioc.stop();
    for (auto& th : threads)
        th.join();
    EXPECT_EQ(ok.load(), total);
    EXPECT_EQ(failed.load(), 0);
    EXPECT_EQ(env->wait_for_requests("tag=mt", total), std::size_t(total));
    EXPECT_LE(env->connections_for("tag=mt"), 4u);
}

// A TCP server that accepts every connection and never answers (reads and
// discards until it is destroyed): requests to it stay in flight until they
// are cancelled. With close_at_once, it closes each connection as soon as it
// is accepted: requests to it fail at once (connection_closed).
class silent_server
{
public:
    explicit silent_server(bool close_at_once = false)
        : close_at_once_(close_at_once), acceptor_(ioc_, {boost::asio::ip::make_address("127.0.0.1"), 0})
    {
        accept();
        thread_ = std::thread([this] { ioc_.run(); });
    }
    ~silent_server()
    {
        boost::asio::post(ioc_, [this] {
            error_code ec;
            acceptor_.close(ec);
            for (auto& s : sockets_)
                s->close(ec);
        });
        work_.reset();
        thread_.join();
    }
    unsigned short port() const { return acceptor_.local_endpoint().port(); }

private:
    void accept()
    {
        acceptor_.async_accept([this](error_code ec, boost::asio::ip::tcp::socket s) {
            if (ec)
                return;
            if (close_at_once_)
            {
                s.close(ec);
                return accept();
            }
            sockets_.push_back(std::make_shared<boost::asio::ip::tcp::socket>(std::move(s)));
            discard(sockets_.back());
            accept();
        });
    }
    void discard(std::shared_ptr<boost::asio::ip::tcp::socket> s)
    {
        auto buf = std::make_shared<std::array<char, 4096>>();
        s->async_read_some(boost::asio::buffer(*buf), [this, s, buf](error_code ec, std::size_t) {
            if (!ec)
                discard(s);
        });
    }

    bool close_at_once_;
    boost::asio::io_context ioc_;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_ = boost::asio::make_work_guard(ioc_);
    boost::asio::ip::tcp::acceptor acceptor_;
    std::vector<std::shared_ptr<boost::asio::ip::tcp::socket>> sockets_;
    std::thread thread_;
};

// docs/operations.md, "Shutdown: cancelling everything": on a multi-threaded
// io_context, each task's coroutine, the cancellation signal bound to it and
// the timer that emits it live on one strand, and the coroutine is spawned
// from that strand; a shutdown posts the emission to each strand. Asio's
// cancellation signals and slots have no lock: spawning from the main thread
// with a slot bound there, and emitting from there, can meet the slot's
// clearing when the coroutine completes on an io_context thread. (That
// variant also passed here under TSan in three runs: this test shows the
// documented pattern is clean, it does not catch the other.) Half of the tasks wait on a server that
// never answers (only their cancellation ends them), half fail at once (their
// completion meets the shutdown's emission). Run under TSan (tests/ci.sh,
// step 3): every task completes, and nothing races.
TEST(BeastTransport, CancellingTasksEachOnItsStrandFromManyThreads)
{
    silent_server mute, closing(true);
    boost::asio::io_context ioc(4);
    auto params_for = [](const silent_server& s) {
        return dd::client_params{.base_url = "http://127.0.0.1:" + std::to_string(s.port()) + "/api/v1/external",
                                 .api_key = "key",
                                 .rate_limit = {.enabled = false},
                                 .retry = {.enabled = false}};
    };
    dd::client waiting(dd::beast_transport(ioc.get_executor()), params_for(mute));
    dd::client failing(dd::beast_transport(ioc.get_executor()), params_for(closing));
    using strand_type = boost::asio::strand<boost::asio::io_context::executor_type>;
    struct task
    {
        strand_type strand;
        std::shared_ptr<boost::asio::cancellation_signal> stop = std::make_shared<boost::asio::cancellation_signal>();
    };
    const int total = 240;
    std::atomic<int> finished{0}, waiting_cancelled{0}, failing_ended{0};
    std::promise<void> all_done;
    std::vector<task> tasks;
    for (int i = 0; i < total; ++i)
        tasks.push_back({boost::asio::make_strand(ioc)});
    for (int i = 0; i < total; ++i)
    {
        // Even tasks wait, with a deadline of their own (a timer of the
        // strand); odd tasks fail at once, and the shutdown below meets them.
        const bool waits = i % 2 == 0;
        boost::asio::dispatch(tasks[i].strand, [&, i, waits, t = tasks[i]] {
            auto timer = std::make_shared<boost::asio::steady_timer>(t.strand);
            if (waits)
            {
                timer->expires_after(std::chrono::milliseconds(i % 20));
                timer->async_wait([stop = t.stop](error_code ec) {
                    if (!ec)
                        stop->emit(boost::asio::cancellation_type::terminal);
                });
            }
            dd::client& c = waits ? waiting : failing;
            boost::asio::co_spawn(
                t.strand,
                [&c, i]() -> boost::asio::awaitable<void> {
                    const std::string id = "o" + std::to_string(i);
                    co_await dd::async_get_order(c, id);
                },
                boost::asio::bind_cancellation_slot(t.stop->slot(), [&, waits, stop = t.stop, timer](std::exception_ptr e) {
                    timer->cancel();
                    error_code ec;
                    try
                    {
                        if (e)
                            std::rethrow_exception(e);
                    }
                    catch (const boost::system::system_error& ex)
                    {
                        ec = ex.code();
                    }
                    if (waits && ec == dd::condition::cancelled)
                        ++waiting_cancelled;
                    if (!waits && (ec == dd::condition::cancelled || ec == dd::condition::transport))
                        ++failing_ended;
                    if (++finished == total)
                        all_done.set_value();
                })
            );
        });
    }
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&] { ioc.run(); });
    // Shutdown: the emission goes to each task's strand, never from here.
    for (const task& t : tasks)
        boost::asio::post(t.strand, [stop = t.stop] { stop->emit(boost::asio::cancellation_type::terminal); });
    const bool completed = all_done.get_future().wait_for(dd_test::hang_limit()) == std::future_status::ready;
    EXPECT_TRUE(completed) << "HANG in " << dd_test::current_test() << ": " << finished.load() << " of " << total
                           << " tasks completed";
    ioc.stop();  // the transports may keep idle work; every task has completed
    for (auto& th : threads)
        th.join();
    EXPECT_EQ(finished.load(), total);
    EXPECT_EQ(waiting_cancelled.load(), total / 2);
    EXPECT_EQ(failing_ended.load(), total / 2);
}

// The transport's parser fed as its reading loop feeds it (put what is
// buffered, read more after need_more), one read per piece. Beast 1.81
// asserts (BOOST_ASSERT, builds without NDEBUG) when a chunked body's last
// chunk "0\r\n" is resumed with fewer than 5 bytes (boostorg/beast#2861):
// found by tests/fuzz/fuzz_http_response (corpus: last_chunk_split).
TEST(beast_transport_parser, last_chunk_split_across_reads)
{
    struct split
    {
        std::vector<std::string> pieces;
        std::string body;
    };
    const std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    const std::vector<split> cases{
        {{head, "0\r\n", "\r", "\n"}, ""},
        {{head + "0", "\r", "\n", "\r", "\n"}, ""},
        {{head + "2\r\nok\r\n0\r\n", "X-T: 1\r", "\n\r", "\n"}, "ok"},
    };
    for (const auto& [pieces, body] : cases)
    {
        dd::detail::bt::direct_parser p;
        boost::beast::flat_buffer buf;
        error_code ec;
        for (const auto& piece : pieces)
        {
            const auto mb = buf.prepare(piece.size());
            std::memcpy(mb.data(), piece.data(), piece.size());
            buf.commit(piece.size());
            while (buf.size() != 0 && !p.is_done())
            {
                const std::size_t used = p.put_buffered(buf.data(), ec);
                buf.consume(used);
                if (ec)
                    break;
            }
            if (ec && ec != boost::beast::http::error::need_more)
                break;
        }
        EXPECT_FALSE(ec && ec != boost::beast::http::error::need_more) << ec.message();
        EXPECT_TRUE(p.is_done()) << pieces[1];
        EXPECT_EQ(p.resp.status, 200u);
        EXPECT_EQ(p.resp.body, body);
    }
}
