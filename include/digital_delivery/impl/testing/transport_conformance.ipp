//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_TESTING_TRANSPORT_CONFORMANCE_IPP
#define DIGITAL_DELIVERY_IMPL_TESTING_TRANSPORT_CONFORMANCE_IPP

// The conformance kit (docs/transport.md, "The conformance kit").
//
// Three io_contexts, each run by a thread of its own:
//  - the transport's (the factory's executor);
//  - the caller's: every async_send is called there and every handler is
//    bound to it, so "on the handler's executor" and "from another thread"
//    (cancellation is emitted there) are both real;
//  - the servers': each case's scripted server, a coroutine per accepted
//    connection on 127.0.0.1:0, stopped (acceptor and sockets closed) at the
//    end of the case.
// The calling thread only orchestrates: it waits for server events and
// completions (bounded by conformance_params::step_limit) and records checks.

#include <digital_delivery/testing/transport_conformance.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/http_message.hpp>
#include <digital_delivery/transport.hpp>

#include <boost/asio/append.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace digital_delivery {
namespace testing {
namespace conformance_detail {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using ms = std::chrono::milliseconds;
constexpr auto await_tok = asio::as_tuple(asio::use_awaitable);

inline std::string lower(std::string_view s)
{
    std::string r(s);
    for (auto& c : r)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    return r;
}

inline std::string printable(std::string_view s, std::size_t max = 200)
{
    std::string r;
    for (char c : s.substr(0, max))
    {
        if (c == '\r')
            r += "\\r";
        else if (c == '\n')
            r += "\\n";
        else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
            r += '?';
        else
            r += c;
    }
    if (s.size() > max)
        r += "... (" + std::to_string(s.size()) + " bytes)";
    return r;
}

inline std::string describe(const error_code& ec)
{
    if (!ec)
        return "success";
    return ec.category().name() + std::string(":") + std::to_string(ec.value()) + " (" + ec.message() + ")";
}

// A request as the server read it.
struct wire_request
{
    std::string request_line;
    std::vector<std::pair<std::string, std::string>> fields;  // in order, as sent
    std::string body;
    bool chunked = false;

    std::vector<std::string> values(std::string_view name) const
    {
        std::vector<std::string> r;
        for (const auto& [n, v] : fields)
            if (lower(n) == lower(name))
                r.push_back(v);
        return r;
    }
};

inline std::optional<wire_request> parse_head(std::string_view head)
{
    wire_request r;
    auto eol = head.find("\r\n");
    if (eol == std::string_view::npos)
        return std::nullopt;
    r.request_line = std::string(head.substr(0, eol));
    std::size_t pos = eol + 2;
    while (pos < head.size())
    {
        eol = head.find("\r\n", pos);
        if (eol == std::string_view::npos || eol == pos)
            break;
        const auto line = head.substr(pos, eol - pos);
        const auto colon = line.find(':');
        if (colon == std::string_view::npos)
            return std::nullopt;
        auto value = line.substr(colon + 1);
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
            value.remove_prefix(1);
        while (!value.empty() && (value.back() == ' ' || value.back() == '\t'))
            value.remove_suffix(1);
        r.fields.emplace_back(std::string(line.substr(0, colon)), std::string(value));
        pos = eol + 2;
    }
    for (const auto& te : r.values("Transfer-Encoding"))
        r.chunked = r.chunked || lower(te).find("chunked") != std::string::npos;
    return r;
}

// What a case's server saw, shared with the orchestrating thread.
struct server_log
{
    std::mutex m;
    std::condition_variable cv;
    int connections = 0;
    std::vector<wire_request> requests;  // complete requests (head and body)
    int heads = 0;                       // request heads read (an upload's body may still be coming)
    bool malformed = false;
    std::string note;

    template <class F>
    void update(F f)
    {
        {
            std::lock_guard lk(m);
            f();
        }
        cv.notify_all();
    }
    // Waits until pred() holds (under the lock) or `limit` passes.
    template <class Pred>
    bool wait(Pred pred, ms limit)
    {
        std::unique_lock lk(m);
        return cv.wait_for(lk, limit, pred);
    }
};

class scripted_server;
using script_fn = std::function<asio::awaitable<void>(std::shared_ptr<tcp::socket>, scripted_server&, int)>;

// One case's server: accepts on 127.0.0.1:0 and runs the script on each
// connection (with its index, from 0). stop() closes everything.
class scripted_server : public std::enable_shared_from_this<scripted_server>
{
public:
    scripted_server(asio::io_context& io, script_fn script, int backlog = asio::socket_base::max_listen_connections)
        : io_(io), acceptor_(io), script_(std::move(script))
    {
        const tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), 0);
        acceptor_.open(ep.protocol());
        acceptor_.bind(ep);
        acceptor_.listen(backlog);
        port_ = acceptor_.local_endpoint().port();
    }

    // Accept connections (not called for a server that must never accept).
    void start() { asio::co_spawn(io_, accept_loop(shared_from_this()), asio::detached); }

    unsigned short port() const noexcept { return port_; }
    server_log log;

    // Closes the acceptor and every connection, ends every hold(); returns once done.
    void stop()
    {
        std::promise<void> done;
        asio::post(io_, [this, &done] {
            error_code ig;
            acceptor_.close(ig);
            for (auto& w : sockets_)
                if (auto s = w.lock())
                    s->close(ig);
            stopped_ = true;
            wake_all();
            done.set_value();
        });
        done.get_future().wait();
    }

    // Lets the scripts waiting in hold() go on.
    void release()
    {
        asio::post(io_, [self = shared_from_this()] {
            self->released_ = true;
            self->wake_all();
        });
    }

    // Waits for release() or stop(), or `limit`.
    asio::awaitable<void> hold(ms limit)
    {
        if (released_ || stopped_)
            co_return;
        auto t = std::make_shared<asio::steady_timer>(io_);
        t->expires_after(limit);
        holders_.push_back(t);
        (void)co_await t->async_wait(await_tok);
        holders_.erase(std::remove(holders_.begin(), holders_.end(), t), holders_.end());
    }

    asio::io_context& io() noexcept { return io_; }

private:
    void wake_all()
    {
        for (auto& t : holders_)
            t->cancel();
    }

    static asio::awaitable<void> accept_loop(std::shared_ptr<scripted_server> self)
    {
        for (int index = 0;; ++index)
        {
            auto s = std::make_shared<tcp::socket>(self->io_);
            auto [ec] = co_await self->acceptor_.async_accept(*s, await_tok);
            if (ec || self->stopped_)
                co_return;
            self->sockets_.push_back(s);
            self->log.update([&] { ++self->log.connections; });
            asio::co_spawn(self->io_, run_script(self, s, index), asio::detached);
        }
    }
    static asio::awaitable<void> run_script(std::shared_ptr<scripted_server> self, std::shared_ptr<tcp::socket> s, int index)
    {
        try
        {
            co_await self->script_(s, *self, index);
        }
        catch (const std::exception&)
        {
        }
        error_code ig;
        s->close(ig);
    }

    asio::io_context& io_;
    tcp::acceptor acceptor_;
    script_fn script_;
    std::vector<std::shared_ptr<asio::steady_timer>> holders_;
    std::vector<std::weak_ptr<tcp::socket>> sockets_;
    unsigned short port_ = 0;
    bool released_ = false;
    bool stopped_ = false;
};

// Reads one request head into `buf` (which keeps what follows). Empty on EOF.
inline asio::awaitable<std::optional<wire_request>> read_head(tcp::socket& s, std::string& buf, scripted_server& srv,
                                                              std::size_t& body_left)
{
    for (;;)
    {
        if (const auto end = buf.find("\r\n\r\n"); end != std::string::npos)
        {
            auto r = parse_head(std::string_view(buf).substr(0, end + 2));
            buf.erase(0, end + 4);
            if (!r)
            {
                srv.log.update([&] { srv.log.malformed = true; });
                co_return std::nullopt;
            }
            body_left = 0;
            const auto cl = r->values("Content-Length");
            if (cl.size() == 1)
            {
                try
                {
                    body_left = static_cast<std::size_t>(std::stoull(cl[0]));
                }
                catch (const std::exception&)
                {
                    srv.log.update([&] { srv.log.malformed = true; });
                }
            }
            srv.log.update([&] { ++srv.log.heads; });
            co_return r;
        }
        char tmp[4096];
        auto [ec, n] = co_await s.async_read_some(asio::buffer(tmp), await_tok);
        if (ec)
            co_return std::nullopt;
        buf.append(tmp, n);
    }
}

// Reads one whole request (head and Content-Length body) and logs it.
inline asio::awaitable<std::optional<wire_request>> read_request(tcp::socket& s, std::string& buf, scripted_server& srv)
{
    std::size_t left = 0;
    auto r = co_await read_head(s, buf, srv, left);
    if (!r)
        co_return r;
    while (buf.size() < left)
    {
        char tmp[65536];
        auto [ec, n] = co_await s.async_read_some(asio::buffer(tmp), await_tok);
        if (ec)
            co_return std::nullopt;
        buf.append(tmp, n);
    }
    r->body = buf.substr(0, left);
    buf.erase(0, left);
    srv.log.update([&] { srv.log.requests.push_back(*r); });
    co_return r;
}

inline asio::awaitable<bool> write_all(tcp::socket& s, std::string_view bytes)
{
    auto [ec, n] = co_await asio::async_write(s, asio::buffer(bytes.data(), bytes.size()), await_tok);
    (void)n;
    co_return !ec;
}

// Reads and discards until the peer closes or `limit` passes (a lingering
// close: the peer reads what was written before the connection goes).
inline asio::awaitable<void> drain(tcp::socket& s, scripted_server& srv, ms limit)
{
    asio::steady_timer t(srv.io());
    t.expires_after(limit);
    t.async_wait([&s](error_code ec) {
        if (!ec)
        {
            error_code ig;
            s.close(ig);
        }
    });
    char tmp[65536];
    for (;;)
    {
        auto [ec, n] = co_await s.async_read_some(asio::buffer(tmp), await_tok);
        (void)n;
        if (ec)
            break;
    }
    t.cancel();
}

// --- the caller's side ---

inline thread_local bool inside_async_send = false;

struct call_state
{
    std::mutex m;
    std::condition_variable cv;
    int completions = 0;
    bool inline_completion = false;
    bool on_handler_executor = true;
    error_code ec;
    http_response resp;
    asio::cancellation_signal signal;  // used on the caller's thread only
    std::vector<std::uint64_t> progress;

    bool wait(ms limit)
    {
        std::unique_lock lk(m);
        return cv.wait_for(lk, limit, [&] { return completions > 0; });
    }
};

// A body of `size` patterned bytes; records how the transport reads it.
class pattern_source final : public body_source
{
public:
    pattern_source(std::uint64_t size, asio::any_io_executor ex) : size_(size), ex_(std::move(ex)) {}
    static char byte_at(std::uint64_t i) noexcept { return static_cast<char>('a' + (i * 7 + i / 251) % 26); }
    static std::string bytes(std::uint64_t n)
    {
        std::string s(n, '\0');
        for (std::uint64_t i = 0; i < n; ++i)
            s[i] = byte_at(i);
        return s;
    }

    struct done_call
    {
        std::shared_ptr<std::atomic<bool>> reading;
        read_handler h;
        error_code ec;
        std::size_t n;

        using executor_type = asio::associated_executor_t<read_handler>;
        executor_type get_executor() const noexcept { return asio::get_associated_executor(h); }
        void operator()()
        {
            *reading = false;
            std::move(h)(ec, n);
        }
    };

    std::uint64_t size() const noexcept override { return size_; }
    void async_read_some(asio::mutable_buffer buf, read_handler h) override
    {
        if (reading_->exchange(true))
            overlapping_ = true;
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size_ - offset_));
        auto* p = static_cast<char*>(buf.data());
        for (std::size_t i = 0; i < n; ++i)
            p[i] = byte_at(offset_ + i);
        offset_ += n;
        reads_++;
        // Through the read handler's associated executor (the contract of
        // body_source), the flag cleared just before the handler runs.
        asio::post(ex_, done_call{reading_, std::move(h), n == 0 ? error_code(asio::error::eof) : error_code(), n});
    }
    error_code rewind() override
    {
        rewinds_++;
        offset_ = 0;
        return {};
    }

    std::atomic<int> rewinds_{0};
    std::atomic<int> reads_{0};
    std::atomic<bool> overlapping_{false};

private:
    std::uint64_t size_;
    std::uint64_t offset_ = 0;
    std::shared_ptr<std::atomic<bool>> reading_ = std::make_shared<std::atomic<bool>>(false);
    asio::any_io_executor ex_;
};

class harness
{
public:
    harness(const transport_factory& make, const conformance_params& p)
        : make_(make), p_(p), tg_(tio_.get_executor()), cg_(cio_.get_executor()), sg_(sio_.get_executor())
    {
        threads_.emplace_back([this] { run(tio_); });
        threads_.emplace_back([this] { run(cio_); });
        threads_.emplace_back([this] { run(sio_); });
    }
    ~harness()
    {
        tg_.reset();
        cg_.reset();
        sg_.reset();
        tio_.stop();
        cio_.stop();
        sio_.stop();
        for (auto& t : threads_)
            t.join();
    }

    conformance_report report;
    const conformance_params& params() const noexcept { return p_; }
    asio::io_context& servers() noexcept { return sio_; }
    asio::any_io_executor caller_executor() { return cio_.get_executor(); }

    bool selected(std::string_view name) const { return p_.only.empty() || name.find(p_.only) != std::string_view::npos; }

    void check(std::string name, std::string rule, bool ok, std::string expected, std::string seen)
    {
        report.checks.push_back({std::move(name), std::move(rule), ok, std::move(expected), ok ? std::string() : std::move(seen)});
    }

    // The transport, made (and later destroyed) on its own thread.
    any_transport make_transport()
    {
        std::promise<any_transport> pr;
        asio::post(tio_, [&] {
            try
            {
                pr.set_value(make_(tio_.get_executor()));
            }
            catch (...)
            {
                pr.set_exception(std::current_exception());
            }
        });
        return pr.get_future().get();
    }
    void drop(any_transport& t)
    {
        std::promise<void> pr;
        asio::post(tio_, [&] {
            t = any_transport();
            pr.set_value();
        });
        pr.get_future().wait();
    }

    // Calls async_send on the caller's thread; the handler is bound to the
    // caller's executor and to the call's cancellation signal.
    std::shared_ptr<call_state> send(const any_transport& t, http_request req)
    {
        auto st = std::make_shared<call_state>();
        std::promise<void> called;
        asio::post(cio_, [&, st]() mutable {
            auto ex = cio_.get_executor();
            auto h = [st, ex](error_code ec, http_response r) {
                std::lock_guard lk(st->m);
                if (inside_async_send)
                    st->inline_completion = true;
                if (!ex.running_in_this_thread())
                    st->on_handler_executor = false;
                if (st->completions++ == 0)
                {
                    st->ec = ec;
                    st->resp = std::move(r);
                }
                st->cv.notify_all();
            };
            inside_async_send = true;
            t.async_send(std::move(req), transport_handler(asio::bind_cancellation_slot(st->signal.slot(), asio::bind_executor(ex, std::move(h)))));
            inside_async_send = false;
            called.set_value();
        });
        called.get_future().wait();
        return st;
    }

    // Emits a cancellation on the caller's thread (where the handler runs).
    void emit(const std::shared_ptr<call_state>& st, asio::cancellation_type t)
    {
        std::promise<void> done;
        asio::post(cio_, [&] {
            st->signal.emit(t);
            done.set_value();
        });
        done.get_future().wait();
    }

    // Waits for a completion; records the completion rules (1, 2) for `name`.
    bool finish(const std::string& name, const std::shared_ptr<call_state>& st, ms limit)
    {
        const bool done = st->wait(limit);
        check(name + ".completes", "rule 1: complete exactly once, whatever happens", done,
              "a completion within " + std::to_string(limit.count()) + " ms", "none (a hang)");
        if (!done)
            return false;
        std::lock_guard lk(st->m);
        if (st->inline_completion)
            check(name + ".never_inline", "rule 1: never complete from inside async_send (post)", false, "a posted completion",
                  "the handler ran inside async_send");
        if (!st->on_handler_executor)
            check(name + ".handler_executor", "rule 2: complete through the handler's associated executor", false,
                  "the handler on the caller's executor", "the handler ran on another thread");
        return true;
    }
    // After the whole run: a second completion of any call.
    void track(const std::shared_ptr<call_state>& st, std::string name) { calls_.emplace_back(st, std::move(name)); }
    void check_exactly_once()
    {
        // Let late completions arrive: one round trip through each thread.
        for (int i = 0; i < 2; ++i)
        {
            std::promise<void> a, b;
            asio::post(tio_, [&] { a.set_value(); });
            a.get_future().wait();
            asio::post(cio_, [&] { b.set_value(); });
            b.get_future().wait();
        }
        std::string twice;
        for (auto& [st, name] : calls_)
        {
            std::lock_guard lk(st->m);
            if (st->completions > 1)
                twice += (twice.empty() ? "" : ", ") + name + " (" + std::to_string(st->completions) + " times)";
        }
        check("completion.exactly_once", "rule 1: complete exactly once", twice.empty(), "one completion per request",
              "more than one: " + twice);
    }

    http_request request(http_method m, unsigned short port, std::string target = "/conformance", bool https = false)
    {
        http_request r;
        r.method = m;
        r.url = std::string(https ? "https" : "http") + "://127.0.0.1:" + std::to_string(port) + target;
        r.timeout = p_.step_limit + ms(1000);
        return r;
    }

private:
    static void run(asio::io_context& io)
    {
        for (;;)
        {
            try
            {
                io.run();
                return;
            }
            catch (...)
            {
            }
        }
    }

    const transport_factory& make_;
    conformance_params p_;
    asio::io_context tio_, cio_, sio_;
    asio::executor_work_guard<asio::io_context::executor_type> tg_, cg_, sg_;
    std::vector<std::thread> threads_;
    std::vector<std::pair<std::shared_ptr<call_state>, std::string>> calls_;
};

// A server running `script`, stopped at the end of the scope.
struct server_scope
{
    std::shared_ptr<scripted_server> s;
    server_scope(harness& h, script_fn f, bool accept = true, int backlog = asio::socket_base::max_listen_connections)
        : s(std::make_shared<scripted_server>(h.servers(), std::move(f), backlog))
    {
        if (accept)
            s->start();
    }
    ~server_scope() { s->stop(); }
    scripted_server* operator->() const noexcept { return s.get(); }
};

inline const std::string ok_response = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

// Answers every request of every connection with `answer`.
inline script_fn answer_all(std::string answer)
{
    return [answer](std::shared_ptr<tcp::socket> s, scripted_server& srv, int) -> asio::awaitable<void> {
        std::string buf;
        while (co_await read_request(*s, buf, srv))
            if (!co_await write_all(*s, answer))
                co_return;
    };
}

// --- the cases ---

inline void wire_cases(harness& h)
{
    const std::string rule = "rule 7: send exactly the request's fields plus Host, Content-Length, User-Agent when absent";
    struct wire_case
    {
        std::string name;
        http_method method;
        std::string target;
        std::vector<std::pair<std::string, std::string>> headers;
        std::string body;
        std::uint64_t stream = 0;  // a body_source of this size
        bool use_stream = false;
    };
    const std::vector<wire_case> cases = {
        {"wire.get", http_method::get, "/a/b%2Fc/./d?X-Amz-Signature=ab%2Bcd%3D&q=a%20b&e=&x=1",
         {{"X-Conformance", "one"}, {"X-Auth-Token", "secret"}}, "", 0, false},
        {"wire.get_own_user_agent", http_method::get, "/ua", {{"User-Agent", "my-agent/2"}}, "", 0, false},
        {"wire.post_bodyless", http_method::post, "/p", {}, "", 0, false},
        {"wire.post_json", http_method::post, "/p?x=1", {{"Content-Type", "application/json"}, {"Accept", "application/json"}},
         R"({"a":1})", 0, false},
        {"wire.put_memory", http_method::put, "/bucket/key?X-Amz-Signature=s%2F1", {{"Content-Type", "application/pdf"}},
         std::string(3000, 'x'), 0, false},
        {"wire.patch", http_method::patch, "/q", {{"Content-Type", "application/json"}}, "{}", 0, false},
        {"wire.delete", http_method::delete_, "/d/1", {}, "", 0, false},
        {"wire.put_stream", http_method::put, "/bucket/stream", {{"Content-Type", "video/mp4"}}, "", 200000, true},
        {"wire.put_stream_empty", http_method::put, "/bucket/empty", {}, "", 0, true},
    };
    for (const auto& c : cases)
    {
        if (!h.selected(c.name))
            continue;
        server_scope srv(h, answer_all(ok_response));
        auto t = h.make_transport();
        auto req = h.request(c.method, srv->port(), c.target);
        for (const auto& [n, v] : c.headers)
            req.headers.add(n, v);
        std::shared_ptr<pattern_source> src;
        std::shared_ptr<std::vector<std::uint64_t>> progress = std::make_shared<std::vector<std::uint64_t>>();
        auto progress_m = std::make_shared<std::mutex>();
        std::string expected_body = c.body;
        if (c.use_stream)
        {
            src = std::make_shared<pattern_source>(c.stream, h.caller_executor());
            req.body_stream = src;
            req.on_body_progress = [progress, progress_m](std::uint64_t n) {
                std::lock_guard lk(*progress_m);
                progress->push_back(n);
            };
            expected_body = pattern_source::bytes(c.stream);
        }
        else
            req.body = c.body;
        auto st = h.send(t, std::move(req));
        h.track(st, c.name);
        if (h.finish(c.name, st, h.params().step_limit))
        {
            h.check(c.name + ".response", "rule 13: complete with the final response", !st->ec && st->resp.status == 200 && st->resp.body == "ok",
                    "200 with body \"ok\"", describe(st->ec) + ", status " + std::to_string(st->resp.status) + ", body \"" + printable(st->resp.body) + "\"");
        }
        std::vector<wire_request> got;
        {
            std::lock_guard lk(srv->log.m);
            got = srv->log.requests;
        }
        if (got.size() != 1)
        {
            h.check(c.name + ".received", rule, false, "the server receives the request once", std::to_string(got.size()) + " requests");
            h.drop(t);
            continue;
        }
        const auto& w = got[0];
        const std::string line = std::string(to_string(c.method)) + " " + c.target + " HTTP/1.1";
        h.check(c.name + ".request_line", "rule 7: the request line carries the URL's target byte-exact", w.request_line == line,
                "\"" + line + "\"", "\"" + printable(w.request_line) + "\"");
        // The fields: the request's own, in order, then only Host, Content-Length, User-Agent.
        std::vector<std::pair<std::string, std::string>> own;
        std::string extra;
        bool saw_ua = false;
        for (const auto& [n, v] : w.fields)
        {
            const auto ln = lower(n);
            bool mine = false;
            for (const auto& [cn, cv] : c.headers)
                mine = mine || (lower(cn) == ln && cv == v);
            if (mine)
                own.emplace_back(n, v);
            else if (ln == "host" || ln == "content-length")
                ;
            else if (ln == "user-agent" && !saw_ua)
                saw_ua = true;
            else
                extra += (extra.empty() ? "" : ", ") + n + ": " + printable(v, 60);
        }
        h.check(c.name + ".no_other_fields", rule, extra.empty(), "no field beyond the request's own, Host, Content-Length and User-Agent",
                "added " + extra);
        bool order = own.size() == c.headers.size();
        for (std::size_t i = 0; order && i < own.size(); ++i)
            order = lower(own[i].first) == lower(c.headers[i].first) && own[i].second == c.headers[i].second;
        h.check(c.name + ".own_fields", "rule 7: the request's own fields, each once, in order", order,
                std::to_string(c.headers.size()) + " fields as given", std::to_string(own.size()) + " of them, or another order");
        const auto hosts = w.values("Host");
        const std::string host = "127.0.0.1:" + std::to_string(srv->port());
        h.check(c.name + ".host", "rule 7: Host is the URL's host and port", hosts.size() == 1 && hosts[0] == host, "Host: " + host,
                hosts.empty() ? "no Host" : "Host: " + hosts[0] + (hosts.size() > 1 ? " (and more)" : ""));
        const auto uas = w.values("User-Agent");
        bool own_ua = false;
        for (const auto& [n, v] : c.headers)
            own_ua = own_ua || lower(n) == "user-agent";
        if (own_ua)
            h.check(c.name + ".user_agent", "rule 7: a User-Agent of the request is sent as it is, alone", uas.size() == 1 && uas[0] == "my-agent/2",
                    "User-Agent: my-agent/2", std::to_string(uas.size()) + " User-Agent fields" + (uas.empty() ? "" : ", first " + uas[0]));
        else
            h.check(c.name + ".user_agent", "rule 7: a User-Agent when the request has none (default_user_agent)", uas.size() == 1 && !uas[0].empty(),
                    "one User-Agent", std::to_string(uas.size()) + " User-Agent fields");
        const auto cls = w.values("Content-Length");
        const bool body_method = c.method == http_method::post || c.method == http_method::put || c.method == http_method::patch;
        const std::string want_cl = std::to_string(expected_body.size());
        const bool cl_ok = (body_method || !expected_body.empty() || c.use_stream)
                               ? cls.size() == 1 && cls[0] == want_cl
                               : cls.empty() || (cls.size() == 1 && cls[0] == "0");
        h.check(c.name + ".content_length", "rule 7: Content-Length framing (for POST, PUT, PATCH even when 0), never chunked", cl_ok && !w.chunked,
                (body_method || c.use_stream) ? "Content-Length: " + want_cl : "no Content-Length (or 0)",
                w.chunked ? std::string("Transfer-Encoding: chunked") : cls.empty() ? std::string("no Content-Length") : "Content-Length: " + cls[0]);
        h.check(c.name + ".body", "rule 7/8: the body's bytes, exactly", w.body == expected_body, std::to_string(expected_body.size()) + " bytes as given",
                std::to_string(w.body.size()) + " bytes" + (w.body.size() == expected_body.size() ? " that differ" : ""));
        if (src)
        {
            h.check(c.name + ".no_rewind", "rule 8: a transport never rewinds a body_source", src->rewinds_ == 0, "no rewind()",
                    std::to_string(src->rewinds_.load()) + " calls");
            h.check(c.name + ".one_read_at_a_time", "rule 8: one async_read_some at a time", !src->overlapping_, "sequential reads", "overlapping reads");
            std::vector<std::uint64_t> pr;
            {
                std::lock_guard lk(*progress_m);
                pr = *progress;
            }
            bool mono = std::is_sorted(pr.begin(), pr.end());
            const bool last_ok = c.stream == 0 ? (pr.empty() || pr.back() == 0) : (!pr.empty() && pr.back() == c.stream);
            h.check(c.name + ".progress", "rule 9: on_body_progress counts body bytes written, monotonic, ending at size()", mono && last_ok,
                    c.stream == 0 ? "no call, or 0" : "calls ending with " + std::to_string(c.stream),
                    std::to_string(pr.size()) + " calls" + (pr.empty() ? "" : ", last " + std::to_string(pr.back())) + (mono ? "" : ", not monotonic"));
        }
        h.drop(t);
    }
}

// A port that refuses connections: a socket bound to it that never listens.
// It stays bound while the case runs, so no other process can take the port
// (a port closed before the connect could be reused by a listener or be the
// connect's own source port, and the case would wait for a server instead).
struct refusing_port
{
    tcp::socket socket;
    unsigned short port = 0;

    explicit refusing_port(asio::io_context& io) : socket(io)
    {
        socket.open(tcp::v4());
        socket.bind(tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
        port = socket.local_endpoint().port();
    }
};

inline void phase_cases(harness& h)
{
    const auto& p = h.params();
    const std::string rule = "rule 5: a failure before the request was written carries a not-sent code";
    const std::string after = "rule 5: a failure after the request was written carries no not-sent code";
    if (h.selected("phase.refused"))
    {
        auto t = h.make_transport();
        const refusing_port refusing(h.servers());
        auto st = h.send(t, h.request(http_method::post, refusing.port));
        h.track(st, "phase.refused");
        if (h.finish("phase.refused", st, p.step_limit))
            h.check("phase.refused", rule, st->ec && is_request_not_sent(st->ec), "an error for which is_request_not_sent is true (connection_refused)",
                    describe(st->ec));
        h.drop(t);
    }
    if (h.selected("phase.silent_accept"))
    {
        // Accepts, never reads, never answers: the request went to the peer's kernel.
        server_scope srv(h, [](std::shared_ptr<tcp::socket>, scripted_server& srv, int) -> asio::awaitable<void> {
            co_await srv.hold(ms(60000));
        });
        auto t = h.make_transport();
        auto req = h.request(http_method::post, srv->port());
        req.timeout = p.short_timeout;
        auto st = h.send(t, std::move(req));
        h.track(st, "phase.silent_accept");
        if (h.finish("phase.silent_accept", st, p.step_limit))
            h.check("phase.silent_accept", after, st->ec == condition::timeout && !is_request_not_sent(st->ec),
                    "a timeout that is not a not-sent code (request_timeout)", describe(st->ec));
        h.drop(t);
    }
    if (h.selected("phase.timeout_after_sending"))
    {
        server_scope srv(h, [](std::shared_ptr<tcp::socket> s, scripted_server& srv, int) -> asio::awaitable<void> {
            std::string buf;
            if (co_await read_request(*s, buf, srv))
                co_await srv.hold(ms(60000));
        });
        auto t = h.make_transport();
        auto req = h.request(http_method::post, srv->port());
        req.body = "{}";
        req.timeout = p.short_timeout;
        auto st = h.send(t, std::move(req));
        h.track(st, "phase.timeout_after_sending");
        if (h.finish("phase.timeout_after_sending", st, p.step_limit))
            h.check("phase.timeout_after_sending", after, st->ec == client_errc::request_timeout,
                    "client_errc::request_timeout", describe(st->ec));
        h.drop(t);
    }
    if (h.selected("phase.timeout_in_body"))
    {
        server_scope srv(h, [](std::shared_ptr<tcp::socket> s, scripted_server& srv, int) -> asio::awaitable<void> {
            std::string buf;
            if (co_await read_request(*s, buf, srv) && co_await write_all(*s, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npart"))
                co_await srv.hold(ms(60000));
        });
        auto t = h.make_transport();
        auto req = h.request(http_method::get, srv->port());
        req.timeout = p.short_timeout;
        auto st = h.send(t, std::move(req));
        h.track(st, "phase.timeout_in_body");
        if (h.finish("phase.timeout_in_body", st, p.step_limit))
            h.check("phase.timeout_in_body", after, st->ec == client_errc::request_timeout, "client_errc::request_timeout (no partial body as a success)",
                    describe(st->ec) + ", status " + std::to_string(st->resp.status));
        h.drop(t);
    }
    if (p.https && h.selected("phase.slow_tls"))
    {
        // Accepts TCP, never answers the ClientHello; the request's own timeout runs out in the handshake.
        server_scope srv(h, [](std::shared_ptr<tcp::socket> s, scripted_server& srv, int) -> asio::awaitable<void> {
            co_await drain(*s, srv, ms(60000));
        });
        auto t = h.make_transport();
        auto req = h.request(http_method::post, srv->port(), "/conformance", true);
        req.timeout = p.short_timeout;
        auto st = h.send(t, std::move(req));
        h.track(st, "phase.slow_tls");
        if (h.finish("phase.slow_tls", st, p.step_limit))
            h.check("phase.slow_tls", rule + " (the TLS handshake's timeout, even when the request's own timeout ran out)",
                    st->ec == condition::timeout && is_request_not_sent(st->ec), "client_errc::tls_handshake_timeout", describe(st->ec));
        h.drop(t);
    }
}

inline void resend_cases(harness& h)
{
    const auto& p = h.params();
    const std::string rule = "rule 6: never write a request twice when it is not idempotent or has a body_stream";
    struct resend_case
    {
        std::string name;
        http_method method;
        bool idempotent;
        bool stream;
        bool pooled;  // on a pooled connection (after a first exchange)
    };
    const std::vector<resend_case> cases = {
        {"resend.post_closed_after_reading", http_method::post, false, false, false},
        {"resend.post_pooled_closed_after_reading", http_method::post, false, false, true},
        {"resend.stream_pooled_closed_after_reading", http_method::put, true, true, true},
    };
    for (const auto& c : cases)
    {
        if (!h.selected(c.name))
            continue;
        // Connection 0: (pooled) answers the first request keep-alive, then
        // reads the next one and closes without a word. Every later connection
        // does the same to its first request.
        const bool pooled = c.pooled;
        server_scope srv(h, [pooled](std::shared_ptr<tcp::socket> s, scripted_server& srv, int index) -> asio::awaitable<void> {
            std::string buf;
            if (pooled && index == 0)
            {
                if (!co_await read_request(*s, buf, srv) || !co_await write_all(*s, ok_response))
                    co_return;
            }
            (void)co_await read_request(*s, buf, srv);
        });
        auto t = h.make_transport();
        if (c.pooled)
        {
            auto first = h.send(t, h.request(http_method::get, srv->port(), "/first"));
            h.track(first, c.name + ".first");
            if (!h.finish(c.name + ".first", first, p.step_limit) || first->ec)
            {
                h.check(c.name + ".first", "rule 13: complete with the response", false, "200", describe(first->ec));
                h.drop(t);
                continue;
            }
        }
        auto req = h.request(c.method, srv->port(), "/second");
        req.idempotent = c.idempotent;
        if (c.stream)
            req.body_stream = std::make_shared<pattern_source>(1000, h.caller_executor());
        else
            req.body = "{\"n\":1}";
        auto st = h.send(t, std::move(req));
        h.track(st, c.name);
        if (h.finish(c.name, st, p.step_limit))
        {
            std::size_t seconds = 0;
            {
                std::lock_guard lk(srv->log.m);
                for (const auto& w : srv->log.requests)
                    seconds += w.request_line.find(" /second ") != std::string::npos;
            }
            h.check(c.name, rule, seconds == 1, "the server reads the request once", "read " + std::to_string(seconds) + " times");
            h.check(c.name + ".code", "rule 5: the server read the request: no not-sent code", st->ec && !is_request_not_sent(st->ec),
                    "an error that is not a not-sent code (connection_closed)", describe(st->ec));
        }
        h.drop(t);
    }
}

inline void cancel_cases(harness& h)
{
    const auto& p = h.params();
    const std::string rule = "rule 3: terminal cancellation from the caller's thread ends the request at once with operation_aborted";
    struct cancel_case
    {
        std::string name;
        bool https;
        bool stream;      // an 8 MiB upload the server does not read
        std::string reply;  // written after reading the request head (empty: none)
        bool read_body;
    };
    std::vector<cancel_case> cases = {
        {"cancel.waiting_for_response", false, false, "", true},
        {"cancel.during_upload", false, true, "", false},
        {"cancel.during_response_body", false, false, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\npartial", true},
    };
    if (p.https)
        cases.insert(cases.begin(), cancel_case{"cancel.during_tls_handshake", true, false, "", false});
    for (const auto& c : cases)
    {
        if (!h.selected(c.name))
            continue;
        const auto reply = c.reply;
        const bool https = c.https, read_body = c.read_body;
        server_scope srv(h, [reply, https, read_body](std::shared_ptr<tcp::socket> s, scripted_server& srv, int) -> asio::awaitable<void> {
            std::string buf;
            if (https)
            {
                srv.log.update([&] { ++srv.log.heads; });  // the handshake is in progress
                co_await drain(*s, srv, ms(60000));
                co_return;
            }
            std::size_t left = 0;
            if (read_body)
            {
                if (!co_await read_request(*s, buf, srv))
                    co_return;
            }
            else if (!co_await read_head(*s, buf, srv, left))
                co_return;
            if (!reply.empty() && !co_await write_all(*s, reply))
                co_return;
            if (read_body)
                co_await drain(*s, srv, ms(60000));
            else
                co_await srv.hold(ms(60000));  // the body fills the buffers
        });
        auto t = h.make_transport();
        auto req = h.request(c.stream ? http_method::put : http_method::get, srv->port(), "/conformance", c.https);
        if (c.stream)
            req.body_stream = std::make_shared<pattern_source>(8u * 1024u * 1024u, h.caller_executor());
        auto st = h.send(t, std::move(req));
        h.track(st, c.name);
        const bool reached = srv->log.wait([&] { return srv->log.heads > 0; }, p.step_limit);
        if (!reached)
        {
            h.check(c.name + ".reached", rule, false, "the request reaches the phase", "the server saw nothing");
            h.emit(st, asio::cancellation_type::terminal);
            (void)st->wait(p.step_limit);
            h.drop(t);
            continue;
        }
        if (c.stream)
        {
            // Let the upload fill the socket buffers: the transport is blocked writing.
            std::this_thread::sleep_for(ms(50));
        }
        h.emit(st, asio::cancellation_type::terminal);
        if (h.finish(c.name, st, p.step_limit))
            h.check(c.name, rule, st->ec == asio::error::operation_aborted, "boost::asio::error::operation_aborted", describe(st->ec));
        h.drop(t);
    }
    if (h.selected("cancel.partial_is_ignored"))
    {
        server_scope srv(h, [](std::shared_ptr<tcp::socket> s, scripted_server& srv, int) -> asio::awaitable<void> {
            std::string buf;
            if (!co_await read_request(*s, buf, srv))
                co_return;
            co_await srv.hold(ms(60000));
            (void)co_await write_all(*s, ok_response);
            co_await drain(*s, srv, ms(60000));
        });
        auto t = h.make_transport();
        auto st = h.send(t, h.request(http_method::get, srv->port()));
        h.track(st, "cancel.partial_is_ignored");
        if (srv->log.wait([&] { return !srv->log.requests.empty(); }, p.step_limit))
        {
            h.emit(st, asio::cancellation_type::partial);
            h.emit(st, asio::cancellation_type::total);
        }
        srv->release();
        if (h.finish("cancel.partial_is_ignored", st, p.step_limit))
            h.check("cancel.partial_is_ignored", "rule 3: a cancellation without the terminal bit is ignored", !st->ec && st->resp.status == 200,
                    "the response (200)", describe(st->ec) + ", status " + std::to_string(st->resp.status));
        h.drop(t);
    }
    if (h.selected("cancel.right_away"))
    {
        server_scope srv(h, answer_all(ok_response));
        auto t = h.make_transport();
        auto st = std::shared_ptr<call_state>();
        // Cancelled on the caller's thread right after the call, before any I/O could finish.
        st = h.send(t, h.request(http_method::get, srv->port()));
        h.emit(st, asio::cancellation_type::terminal);
        h.track(st, "cancel.right_away");
        if (h.finish("cancel.right_away", st, p.step_limit))
            h.check("cancel.right_away", rule, st->ec == asio::error::operation_aborted || (!st->ec && st->resp.status == 200),
                    "operation_aborted (or the response, if it was already complete)", describe(st->ec));
        h.drop(t);
    }
}

inline void response_cases(harness& h)
{
    const auto& p = h.params();
    if (h.selected("response.early_during_upload"))
    {
        const std::string error_body = "<Error><Code>SignatureDoesNotMatch</Code><Message/></Error>";
        const std::string answer = "HTTP/1.1 403 Forbidden\r\nContent-Type: application/xml\r\nContent-Length: " +
                                   std::to_string(error_body.size()) + "\r\nConnection: close\r\n\r\n" + error_body;
        server_scope srv(h, [answer](std::shared_ptr<tcp::socket> s, scripted_server& srv, int) -> asio::awaitable<void> {
            std::string buf;
            std::size_t left = 0;
            if (!co_await read_head(*s, buf, srv, left) || !co_await write_all(*s, answer))
                co_return;
            error_code ig;
            s->shutdown(tcp::socket::shutdown_send, ig);
            co_await drain(*s, srv, ms(10000));
        });
        auto t = h.make_transport();
        auto req = h.request(http_method::put, srv->port(), "/bucket/key");
        req.body_stream = std::make_shared<pattern_source>(8u * 1024u * 1024u, h.caller_executor());
        auto st = h.send(t, std::move(req));
        h.track(st, "response.early_during_upload");
        if (h.finish("response.early_during_upload", st, p.step_limit))
            h.check("response.early_during_upload", "rule 10: read while writing; complete with an early response, not the write's error",
                    !st->ec && st->resp.status == 403 && st->resp.body.find("SignatureDoesNotMatch") != std::string::npos,
                    "403 with its body", describe(st->ec) + ", status " + std::to_string(st->resp.status));
        h.drop(t);
    }
    if (h.selected("response.interim_1xx"))
    {
        server_scope srv(h, answer_all("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\n"
                                       "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok"));
        auto t = h.make_transport();
        auto req = h.request(http_method::post, srv->port());
        req.body = "{}";
        auto st = h.send(t, std::move(req));
        h.track(st, "response.interim_1xx");
        if (h.finish("response.interim_1xx", st, p.step_limit))
            h.check("response.interim_1xx", "rule 12: skip interim 1xx responses; complete with the final one",
                    !st->ec && st->resp.status == 201 && st->resp.body == "ok", "201 with body \"ok\"",
                    describe(st->ec) + ", status " + std::to_string(st->resp.status));
        h.drop(t);
    }
    if (h.selected("response.chunked"))
    {
        server_scope srv(h, answer_all("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;x=y\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n"));
        auto t = h.make_transport();
        auto st = h.send(t, h.request(http_method::get, srv->port()));
        h.track(st, "response.chunked");
        if (h.finish("response.chunked", st, p.step_limit))
            h.check("response.chunked", "rule 13: a chunked response (with extensions and trailers) is decoded", !st->ec && st->resp.body == "hello world",
                    "body \"hello world\"", describe(st->ec) + ", body \"" + printable(st->resp.body) + "\"");
        h.drop(t);
    }
    const std::vector<std::pair<std::string, std::string>> malformed = {
        {"response.malformed.status_code", "HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n"},
        {"response.malformed.version", "HTTX/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"},
        {"response.malformed.header_line", "HTTP/1.1 200 OK\r\nNo colon here\r\nContent-Length: 0\r\n\r\n"},
        {"response.malformed.two_lengths", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!"},
        {"response.malformed.length", "HTTP/1.1 200 OK\r\nContent-Length: 12abc\r\n\r\nhello"},
        {"response.malformed.chunk_size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n"},
        {"response.malformed.not_http", "SSH-2.0-OpenSSH_9.2\r\n\r\n"},
    };
    for (const auto& [name, bytes] : malformed)
    {
        if (!h.selected(name))
            continue;
        const std::string b = bytes;
        server_scope srv(h, [b](std::shared_ptr<tcp::socket> s, scripted_server& srv, int) -> asio::awaitable<void> {
            std::string buf;
            if (co_await read_request(*s, buf, srv) && co_await write_all(*s, b))
                co_await drain(*s, srv, ms(60000));
        });
        auto t = h.make_transport();
        auto st = h.send(t, h.request(http_method::get, srv->port()));
        h.track(st, name);
        if (h.finish(name, st, p.step_limit))
            h.check(name, "rule 13: an invalid response is protocol_error, never a response", st->ec == client_errc::protocol_error,
                    "client_errc::protocol_error for \"" + printable(b, 60) + "\"", describe(st->ec) + ", status " + std::to_string(st->resp.status));
        h.drop(t);
    }
    if (h.selected("response.too_large"))
    {
        const auto limit = p.response_body_limit;
        server_scope srv(h, [limit](std::shared_ptr<tcp::socket> s, scripted_server& srv, int) -> asio::awaitable<void> {
            std::string buf;
            if (!co_await read_request(*s, buf, srv))
                co_return;
            if (!co_await write_all(*s, "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(limit + 1) + "\r\n\r\n"))
                co_return;
            const std::string block(65536, 'z');
            for (std::uint64_t sent = 0; sent <= limit; sent += block.size())
                if (!co_await write_all(*s, std::string_view(block).substr(0, static_cast<std::size_t>(std::min<std::uint64_t>(block.size(), limit + 1 - sent)))))
                    co_return;
            co_await drain(*s, srv, ms(60000));
        });
        auto t = h.make_transport();
        auto st = h.send(t, h.request(http_method::get, srv->port()));
        h.track(st, "response.too_large");
        if (h.finish("response.too_large", st, p.step_limit))
            h.check("response.too_large", "rule 11: a body past the limit is response_too_large", st->ec == client_errc::response_too_large,
                    "client_errc::response_too_large (limit " + std::to_string(limit) + " bytes)",
                    describe(st->ec) + ", " + std::to_string(st->resp.body.size()) + " body bytes");
        h.drop(t);
    }
    // A peer closing at every byte of a response (Content-Length, then chunked framing).
    const std::vector<std::pair<std::string, std::string>> whole = {
        {"response.peer_closes_at_every_byte.content_length", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\nX-A: b\r\n\r\n0123456789"},
        {"response.peer_closes_at_every_byte.chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"},
    };
    for (const auto& [name, bytes] : whole)
    {
        if (!h.selected(name))
            continue;
        const std::string full = bytes;
        // Past the last chunk ("0\r\n") only the (empty) trailer section's end
        // is missing: the body is whole, so its delivery is no truncation.
        const auto last_chunk = full.find("\r\n0\r\n");
        const std::size_t whole_from = last_chunk == std::string::npos ? full.size() : last_chunk + 5;
        const std::string whole_body = last_chunk == std::string::npos ? std::string() : "hello";
        std::string wrong;
        auto t = h.make_transport();
        for (std::size_t cut = 0; cut < full.size(); ++cut)
        {
            server_scope srv(h, [full, cut](std::shared_ptr<tcp::socket> s, scripted_server& srv, int) -> asio::awaitable<void> {
                std::string buf;
                if (co_await read_request(*s, buf, srv))
                    (void)co_await write_all(*s, std::string_view(full).substr(0, cut));
                error_code ig;
                s->shutdown(tcp::socket::shutdown_send, ig);
                co_await drain(*s, srv, ms(10000));
            });
            auto st = h.send(t, h.request(http_method::post, srv->port()));
            h.track(st, name);
            if (!st->wait(p.step_limit))
            {
                wrong = "no completion after " + std::to_string(cut) + " bytes";
                (void)h.finish(name, st, ms(0));
                break;
            }
            std::lock_guard lk(st->m);
            const bool ok = (st->ec && !is_request_not_sent(st->ec) && st->ec != asio::error::operation_aborted) ||
                            (!st->ec && cut >= whole_from && st->resp.status == 200 && st->resp.body == whole_body);
            if (!ok)
            {
                wrong = "after " + std::to_string(cut) + " bytes (\"" + printable(full.substr(0, cut), 80) + "\"): " + describe(st->ec) +
                        (st->ec ? "" : ", status " + std::to_string(st->resp.status) + ", body \"" + printable(st->resp.body) + "\"");
                break;
            }
        }
        h.check(name, "rule 13: a peer closing before the end of a response is an error (connection_closed), never a truncated success nor a not-sent code",
                wrong.empty(), "an error at each of the " + std::to_string(full.size()) + " cuts", wrong);
        h.drop(t);
    }
}

inline void completion_cases(harness& h)
{
    const auto& p = h.params();
    if (h.selected("completion.invalid_url"))
    {
        auto t = h.make_transport();
        http_request req;
        req.url = "http://[::1";
        req.timeout = p.step_limit;
        auto st = h.send(t, std::move(req));
        h.track(st, "completion.invalid_url");
        if (h.finish("completion.invalid_url", st, p.step_limit))
            h.check("completion.invalid_url", "rules 1, 5: an unusable URL fails (posted) with a not-sent code",
                    st->ec && is_request_not_sent(st->ec), "client_errc::invalid_url", describe(st->ec));
        h.drop(t);
    }
}

}  // namespace conformance_detail

inline conformance_report run_transport_conformance(const transport_factory& make, const conformance_params& params)
{
    namespace cd = conformance_detail;
    cd::harness h(make, params);
    cd::wire_cases(h);
    cd::phase_cases(h);
    cd::resend_cases(h);
    cd::cancel_cases(h);
    cd::response_cases(h);
    cd::completion_cases(h);
    h.check_exactly_once();
    return std::move(h.report);
}

}  // namespace testing
}  // namespace digital_delivery

#endif
