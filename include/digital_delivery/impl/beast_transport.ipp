//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
//
#ifndef DIGITAL_DELIVERY_IMPL_BEAST_TRANSPORT_IPP
#define DIGITAL_DELIVERY_IMPL_BEAST_TRANSPORT_IPP

// The Beast transport's implementation. Compiled once: by src.hpp
// (separate compilation) or by the one translation unit including
// beast_transport.hpp (header-only mode).
//
// Structure
//  - beast_transport_impl: executor, one strand, TLS context, the pool
//    (per "scheme://host:port": idle connections, count, FIFO waiters).
//  - request_op: one async_send. Runs as a C++20 coroutine on the strand.
//    Every interruption (cancellation slot, watchdog timer) is delivered on
//    the strand as interrupt(reason): it records the reason and stops
//    whatever is in progress (leaves the waiter queue, cancels the resolver,
//    closes the connection). After each co_await the coroutine checks the
//    reason, so a connection interrupted mid-request is never reused.
//  - One watchdog timer per request, re-armed per phase with
//    min(phase deadline, request deadline) and the matching client_errc.

#include <digital_delivery/beast_transport.hpp>
#include <digital_delivery/detail/beast_url.hpp>
#include <digital_delivery/error.hpp>

#include <boost/asio/append.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/span_body.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace digital_delivery {
namespace detail {

namespace bt {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;
using clock = std::chrono::steady_clock;
using strand_t = asio::strand<asio::any_io_executor>;
constexpr auto tok = asio::as_tuple(asio::use_awaitable);

struct connection
{
    connection(const asio::any_io_executor& ex, std::string k, std::size_t buffer_size)
        : key(std::move(k)), plain(ex)
    {
        buf.reserve(buffer_size);
    }
    tcp::socket& socket() noexcept { return tls ? tls->next_layer() : plain; }
    void close() noexcept
    {
        error_code ig;
        socket().close(ig);
    }

    std::string key;
    tcp::socket plain;                               // used when !tls
    std::unique_ptr<ssl::stream<tcp::socket>> tls;   // used for https
    beast::flat_buffer buf;                          // reserved once, reused
    clock::time_point idle_since{};
    long verify_error = X509_V_OK;                   // recorded by the verify callback
    std::uint64_t requests = 0;
};
using conn_ptr = std::shared_ptr<connection>;

struct request_op;

struct host_pool
{
    std::vector<conn_ptr> idle;  // most recently used at the back
    std::size_t total = 0;       // idle + in use + being connected
    std::deque<std::shared_ptr<request_op>> waiters;
};

}  // namespace bt

class beast_transport_impl : public std::enable_shared_from_this<beast_transport_impl>
{
public:
    beast_transport_impl(boost::asio::any_io_executor ex, beast_transport_params p)
        : ex_(std::move(ex)),
          strand_(boost::asio::make_strand(ex_)),
          params_(std::move(p)),
          ctx_(bt::ssl::context::tls_client)
    {
        if (params_.max_connections_per_host == 0)
            params_.max_connections_per_host = 1;
        if (params_.upload_chunk_size == 0)
            params_.upload_chunk_size = 64u * 1024u;
        ctx_.set_options(bt::ssl::context::default_workarounds | bt::ssl::context::no_sslv2 |
                         bt::ssl::context::no_sslv3 | bt::ssl::context::no_tlsv1 | bt::ssl::context::no_tlsv1_1);
        if (params_.tls.verify_peer)
        {
            ctx_.set_verify_mode(bt::ssl::verify_peer);
            if (params_.tls.ca_file.empty() && params_.tls.ca_path.empty())
                ctx_.set_default_verify_paths();
            if (!params_.tls.ca_file.empty())
                ctx_.load_verify_file(params_.tls.ca_file);
            if (!params_.tls.ca_path.empty())
                ctx_.add_verify_path(params_.tls.ca_path);
        }
        else
            ctx_.set_verify_mode(bt::ssl::verify_none);
    }

    boost::asio::any_io_executor ex_;
    bt::strand_t strand_;
    beast_transport_params params_;
    bt::ssl::context ctx_;
    std::unordered_map<std::string, bt::host_pool> pools_;

    void start(http_request req, transport_handler h);

    // --- pool (strand only) ---
    void release(const std::string& key, bt::conn_ptr c, bool reusable);
};

namespace bt {

struct request_op : std::enable_shared_from_this<request_op>
{
    request_op(std::shared_ptr<beast_transport_impl> i, http_request r, transport_handler h)
        : impl(std::move(i)),
          req(std::move(r)),
          handler(std::move(h)),
          watchdog(impl->strand_),
          wait_timer(impl->strand_)
    {
    }

    std::shared_ptr<beast_transport_impl> impl;
    http_request req;
    transport_handler handler;
    asio::cancellation_slot slot;
    asio::steady_timer watchdog;
    asio::steady_timer wait_timer;  // FIFO wait for a connection; reader signals (uploads)
    unsigned gen = 0;
    error_code reason;              // why the op was interrupted (set once)
    bool done = false;
    bool queued = false;
    beast_target target;
    tcp::resolver* resolver = nullptr;
    conn_ptr conn;                  // the connection in use
    conn_ptr handoff;               // given by release() to a queued op
    bool slot_granted = false;      // ... or the right to open a new one

    void interrupt(error_code why)
    {
        if (done || reason)
            return;
        reason = why;
        if (queued)
        {
            auto& w = impl->pools_[target.pool_key].waiters;
            auto self = shared_from_this();
            w.erase(std::remove(w.begin(), w.end(), self), w.end());
            queued = false;
        }
        wait_timer.cancel();
        if (resolver)
            resolver->cancel();
        if (conn)
            conn->close();
    }

    void arm(clock::time_point deadline, client_errc code)
    {
        const unsigned g = ++gen;
        watchdog.expires_at(deadline);
        watchdog.async_wait([w = weak_from_this(), g, code](error_code ec) {
            if (ec)
                return;
            if (auto self = w.lock(); self && self->gen == g)
                self->interrupt(code);
        });
    }

    // Arms the watchdog for a phase bounded by `limit` inside the request deadline.
    void arm_phase(clock::time_point request_deadline, std::chrono::milliseconds limit, client_errc code)
    {
        const auto phase_deadline = clock::now() + limit;
        if (phase_deadline < request_deadline)
            arm(phase_deadline, code);
        else
            arm(request_deadline, client_errc::request_timeout);
    }

    void complete(error_code ec, http_response resp = {})
    {
        if (done)
            return;
        done = true;
        ++gen;
        watchdog.cancel();
        if (slot.is_connected())
            slot.clear();
        auto h = std::move(handler);
        auto hex = asio::get_associated_executor(h, impl->ex_);
        asio::dispatch(hex, asio::append(std::move(h), ec, std::move(resp)));
    }
};

inline http::verb to_verb(http_method m) noexcept
{
    switch (m)
    {
    case http_method::get: return http::verb::get;
    case http_method::post: return http::verb::post;
    case http_method::put: return http::verb::put;
    case http_method::patch: return http::verb::patch;
    case http_method::delete_: return http::verb::delete_;
    }
    return http::verb::get;
}

inline bool is_closed_error(const error_code& ec) noexcept
{
    return ec == http::error::end_of_stream || ec == http::error::partial_message || ec == asio::error::eof ||
           ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
           ec == asio::error::connection_aborted || ec == ssl::error::stream_truncated;
}

// Maps an I/O error of the request/response exchange.
inline error_code map_io_error(const error_code& ec) noexcept
{
    if (ec == http::error::body_limit || ec == http::error::buffer_overflow)
        return client_errc::response_too_large;
    if (is_closed_error(ec))
        return client_errc::connection_closed;
    if (ec.category() == make_error_code(http::error::bad_version).category())
        return client_errc::protocol_error;
    if (ec.category() == asio::error::get_ssl_category())
        return client_errc::tls_error;
    return ec;
}

template <class Fields>
void apply_headers(http::header<true, Fields>& h, const request_op& op, const beast_transport_params& p)
{
    bool has_host = false, has_ua = false;
    for (const auto f : op.req.headers)
    {
        if (beast::iequals(f.name, "content-length") || beast::iequals(f.name, "transfer-encoding"))
            continue;
        has_host = has_host || beast::iequals(f.name, "host");
        has_ua = has_ua || beast::iequals(f.name, "user-agent");
        h.insert(beast::string_view(f.name.data(), f.name.size()), beast::string_view(f.value.data(), f.value.size()));
    }
    if (!has_host)
        h.set(http::field::host, op.target.host_header);
    if (!has_ua && !p.user_agent.empty())
        h.set(http::field::user_agent, p.user_agent);
}

inline http_response convert(http::response<http::string_body>& m)
{
    http_response out;
    out.status = m.result_int();
    std::size_t n = 0, bytes = 0;
    for (const auto& f : m)
    {
        ++n;
        bytes += f.name_string().size() + f.value().size();
    }
    out.headers.reserve(n, bytes);
    for (const auto& f : m)
    {
        const auto name = f.name_string();
        const auto value = f.value();
        out.headers.add(std::string_view(name.data(), name.size()), std::string_view(value.data(), value.size()));
    }
    out.body = std::move(m.body());
    return out;
}

struct exchange_result
{
    error_code ec;
    http_response resp;
    bool reusable = false;
    bool nothing_received = false;  // the connection failed before any response byte
};

using response_parser = http::response_parser<http::string_body>;

struct reader_state;
inline void on_continue(reader_state* rs);

// Reads responses until a final (non-1xx) one; a 100 is reported to `rs`.
// (No lambda argument: GCC 12 double-frees a capturing lambda passed in a
// co_await expression.)
template <class Stream>
asio::awaitable<error_code> read_final(request_op& op, Stream& s, std::optional<response_parser>& p, bool& got_any,
                                       reader_state* rs)
{
    connection& c = *op.conn;
    for (;;)
    {
        p.emplace();
        p->body_limit(op.impl->params_.response_body_limit);
        auto [ec, n] = co_await http::async_read(s, c.buf, *p, tok);
        (void)n;
        got_any = got_any || p->got_some();
        if (ec)
            co_return ec;
        const unsigned st = p->get().result_int();
        if (st >= 100 && st < 200 && st != 101)
        {
            if (st == 100 && rs)
                on_continue(rs);
            continue;
        }
        co_return error_code{};
    }
}

template <class Stream>
asio::awaitable<exchange_result> exchange_simple(std::shared_ptr<request_op> op, Stream& s)
{
    exchange_result r;
    connection& c = *op->conn;
    const auto& p = op->impl->params_;
    {
        http::request<http::span_body<const char>> m{to_verb(op->req.method), op->target.target, 11};
        apply_headers(m.base(), *op, p);
        const auto& body = op->req.body;
        if (!body.empty() || op->req.method == http_method::post || op->req.method == http_method::put ||
            op->req.method == http_method::patch)
            m.content_length(body.size());
        m.body() = {body.data(), body.size()};
        auto [ec, n] = co_await http::async_write(s, m, tok);
        (void)n;
        if (op->reason)
            co_return r;
        if (ec)
        {
            r.ec = map_io_error(ec);
            r.nothing_received = true;
            co_return r;
        }
    }
    std::optional<response_parser> parser;
    bool got_any = c.buf.size() != 0;
    const error_code ec = co_await read_final(*op, s, parser, got_any, nullptr);
    if (op->reason)
        co_return r;
    if (ec)
    {
        r.nothing_received = !got_any && is_closed_error(ec);
        r.ec = map_io_error(ec);
        co_return r;
    }
    auto& m = parser->get();
    r.reusable = m.keep_alive() && !parser->need_eof() && c.buf.size() == 0;
    r.resp = convert(m);
    co_return r;
}

// --- streaming body: response read concurrently with the body write ---

struct reader_state
{
    explicit reader_state(const strand_t& s) : signal(s) {}
    asio::steady_timer signal;  // cancelled on every reader event
    bool done = false;
    bool got_continue = false;
    bool got_any = false;
    bool writer_done = false;
    error_code ec;
    http_response resp;
    bool keep_alive = false;
};

inline void on_continue(reader_state* rs)
{
    rs->got_continue = true;
    rs->signal.cancel();
}

template <class Stream>
asio::awaitable<void> stream_reader(std::shared_ptr<request_op> op, Stream& s, std::shared_ptr<reader_state> rs)
{
    std::optional<response_parser> parser;
    bool got_any = op->conn->buf.size() != 0;
    const error_code ec = co_await read_final(*op, s, parser, got_any, rs.get());
    rs->got_any = got_any;
    if (ec)
        rs->ec = ec;
    else
    {
        auto& m = parser->get();
        rs->keep_alive = m.keep_alive() && !parser->need_eof() && op->conn->buf.size() == 0;
        rs->resp = convert(m);
        // An early refusal (or a server that will close): stop sending the body.
        // An early success on a keep-alive connection: keep sending (the
        // server discards), so that the connection stays usable.
        if (!rs->writer_done && (rs->resp.status >= 300 || !rs->keep_alive))
        {
            rs->keep_alive = false;
            op->conn->close();
        }
    }
    rs->done = true;
    rs->signal.cancel();
}

inline auto read_source(body_source& src, asio::mutable_buffer b)
{
    return asio::async_initiate<decltype(tok), void(error_code, std::size_t)>(
        [](auto handler, body_source* s, asio::mutable_buffer buf) {
            s->async_read_some(buf, body_source::read_handler(std::move(handler)));
        },
        tok, &src, b);
}

template <class Stream>
asio::awaitable<exchange_result> exchange_stream(std::shared_ptr<request_op> op, Stream& s)
{
    exchange_result r;
    auto& impl = *op->impl;
    const auto& p = impl.params_;
    body_source& src = *op->req.body_stream;
    const std::uint64_t size = src.size();
    bool expect_continue = false;
    {
        http::request<http::empty_body> m{to_verb(op->req.method), op->target.target, 11};
        apply_headers(m.base(), *op, p);
        m.content_length(size);
        if (auto e = m.find(http::field::expect); e != m.end() && beast::iequals(e->value(), "100-continue"))
            expect_continue = true;
        http::request_serializer<http::empty_body> sr{m};
        auto [ec, n] = co_await http::async_write_header(s, sr, tok);
        (void)n;
        if (op->reason)
            co_return r;
        if (ec)
        {
            r.ec = map_io_error(ec);
            r.nothing_received = true;
            co_return r;
        }
    }

    auto rs = std::make_shared<reader_state>(impl.strand_);
    asio::co_spawn(impl.strand_, stream_reader(op, s, rs), [rs](std::exception_ptr e) {
        if (e && !rs->done)
        {
            rs->ec = client_errc::protocol_error;
            rs->done = true;
            rs->signal.cancel();
        }
    });

    error_code write_ec;   // socket write failure
    error_code source_ec;  // body_source failure or size mismatch
    std::uint64_t sent = 0;
    if (expect_continue)
    {
        rs->signal.expires_after(p.expect_continue_timeout);
        if (!rs->done && !rs->got_continue)
            (void)co_await rs->signal.async_wait(tok);
    }
    if (!rs->done && !op->reason && size > 0)
    {
        std::vector<char> chunk(static_cast<std::size_t>(std::min<std::uint64_t>(p.upload_chunk_size, size)));
        while (sent < size && !rs->done && !op->reason)
        {
            const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), size - sent));
            auto [rec, n] = co_await read_source(src, asio::buffer(chunk.data(), want));
            if (op->reason || rs->done)
                break;
            if (rec == asio::error::eof || (!rec && n == 0))
            {
                source_ec = client_errc::source_size_mismatch;
                break;
            }
            if (rec)
            {
                source_ec = rec;
                break;
            }
            if (n > want)
            {
                source_ec = client_errc::source_size_mismatch;
                break;
            }
            auto [wec, wn] = co_await asio::async_write(s, asio::buffer(chunk.data(), n), tok);
            (void)wn;
            if (wec)
            {
                write_ec = wec;
                break;
            }
            sent += n;
            if (op->req.on_body_progress)
                op->req.on_body_progress(sent);
        }
    }
    rs->writer_done = true;
    if (source_ec || op->reason)
        op->conn->close();  // the request is incomplete: stop the reader too
    while (!rs->done)
    {
        rs->signal.expires_at(clock::time_point::max());
        (void)co_await rs->signal.async_wait(tok);
    }
    if (op->reason)
        co_return r;
    if (source_ec)
    {
        r.ec = source_ec;
        co_return r;
    }
    if (!rs->ec)
    {
        // A final response, possibly before the whole body went out.
        r.resp = std::move(rs->resp);
        r.reusable = rs->keep_alive && sent == size && !write_ec;
        co_return r;
    }
    const error_code ec = write_ec ? write_ec : rs->ec;
    r.nothing_received = !rs->got_any && is_closed_error(ec);
    r.ec = map_io_error(ec);
    co_return r;
}

// --- connection setup ---

inline bool is_tls_verify_error(long v) noexcept { return v != X509_V_OK; }

asio::awaitable<error_code> open_connection(std::shared_ptr<request_op> op, conn_ptr c,
                                            clock::time_point deadline)
{
    auto& impl = *op->impl;
    const auto& p = impl.params_;
    const auto& t = op->target;

    tcp::resolver resolver(impl.strand_);
    op->resolver = &resolver;
    op->arm_phase(deadline, p.resolve_timeout, client_errc::resolve_timeout);
    auto [rec, endpoints] = co_await resolver.async_resolve(t.host, t.port, tok);
    op->resolver = nullptr;
    if (op->reason)
        co_return op->reason;
    if (rec)
        co_return rec;

    op->arm_phase(deadline, p.connect_timeout, client_errc::connect_timeout);
    if (t.tls)
        c->tls = std::make_unique<ssl::stream<tcp::socket>>(impl.ex_, impl.ctx_);
    auto [cec, ep] = co_await asio::async_connect(c->socket(), endpoints, tok);
    (void)ep;
    if (op->reason)
        co_return op->reason;
    if (cec)
        co_return cec;
    error_code ig;
    c->socket().set_option(tcp::no_delay(true), ig);

    if (t.tls)
    {
        op->arm_phase(deadline, p.tls_handshake_timeout, client_errc::tls_handshake_timeout);
        SSL* ssl_handle = c->tls->native_handle();
        if (!t.host_is_ip && !SSL_set_tlsext_host_name(ssl_handle, t.host.c_str()))
            co_return client_errc::tls_error;
        if (p.tls.verify_peer)
        {
            c->tls->set_verify_callback(
                [conn = c.get(), check = ssl::host_name_verification(t.host)](bool preverified,
                                                                              ssl::verify_context& vctx) {
                    X509_STORE_CTX* store = vctx.native_handle();
                    if (!preverified)
                    {
                        if (conn->verify_error == X509_V_OK)
                            conn->verify_error = X509_STORE_CTX_get_error(store);
                        return false;
                    }
                    if (!check(preverified, vctx))
                    {
                        conn->verify_error = X509_V_ERR_HOSTNAME_MISMATCH;
                        X509_STORE_CTX_set_error(store, X509_V_ERR_HOSTNAME_MISMATCH);
                        return false;
                    }
                    return true;
                });
        }
        auto [hec] = co_await c->tls->async_handshake(ssl::stream_base::client, tok);
        if (op->reason)
            co_return op->reason;
        if (hec)
        {
            long v = c->verify_error;
            if (v == X509_V_OK)
                v = SSL_get_verify_result(ssl_handle);
            if (v == X509_V_ERR_HOSTNAME_MISMATCH || v == X509_V_ERR_IP_ADDRESS_MISMATCH)
                co_return client_errc::tls_hostname_mismatch;
            if (p.tls.verify_peer && is_tls_verify_error(v))
                co_return client_errc::tls_certificate_verify_failed;
            co_return client_errc::tls_error;
        }
    }
    op->arm(deadline, client_errc::request_timeout);
    co_return error_code{};
}

// Gets a connection: an idle pooled one (reused = true), a new slot, or waits
// FIFO for one. Returns null when interrupted.
asio::awaitable<conn_ptr> acquire(std::shared_ptr<request_op> op, bool& reused, bool force_new)
{
    auto& impl = *op->impl;
    const auto& p = impl.params_;
    host_pool& hp = impl.pools_[op->target.pool_key];
    const auto now = clock::now();
    reused = false;
    if (!force_new)
    {
        while (!hp.idle.empty())
        {
            conn_ptr c = std::move(hp.idle.back());
            hp.idle.pop_back();
            if (now - c->idle_since >= p.idle_timeout || !c->socket().is_open())
            {
                c->close();
                --hp.total;
                continue;
            }
            reused = true;
            co_return c;
        }
    }
    else if (hp.total >= p.max_connections_per_host && !hp.idle.empty())
    {
        // Make room for the fresh connection by dropping the oldest idle one.
        hp.idle.front()->close();
        hp.idle.erase(hp.idle.begin());
        --hp.total;
    }
    if (hp.total < p.max_connections_per_host)
    {
        ++hp.total;
        co_return std::make_shared<connection>(impl.ex_, op->target.pool_key, p.read_buffer_size);
    }

    hp.waiters.push_back(op);
    op->queued = true;
    op->wait_timer.expires_at(clock::time_point::max());
    (void)co_await op->wait_timer.async_wait(tok);
    op->queued = false;
    conn_ptr c = std::move(op->handoff);
    const bool slot = std::exchange(op->slot_granted, false);
    if (op->reason)
    {
        if (c)
            impl.release(op->target.pool_key, std::move(c), true);
        else if (slot)
            impl.release(op->target.pool_key, nullptr, false);
        co_return nullptr;
    }
    if (c)
    {
        reused = true;
        co_return c;
    }
    if (slot)
        co_return std::make_shared<connection>(impl.ex_, op->target.pool_key, p.read_buffer_size);
    co_return nullptr;  // not reached: woken without a connection
}

asio::awaitable<void> run_request(std::shared_ptr<request_op> op)
{
    auto& impl = *op->impl;
    const auto& p = impl.params_;
    if (!parse_beast_target(op->req.url, op->target))
    {
        op->complete(client_errc::invalid_url);
        co_return;
    }
    if (op->reason)
    {
        op->complete(op->reason);
        co_return;
    }
    const auto deadline =
        clock::now() + (op->req.timeout.count() > 0 ? op->req.timeout : p.request_timeout);
    op->arm(deadline, client_errc::request_timeout);

    bool force_new = false;
    for (;;)
    {
        bool reused = false;
        conn_ptr c = co_await acquire(op, reused, force_new);
        if (!c)
        {
            op->complete(op->reason ? op->reason : error_code(client_errc::connection_closed));
            co_return;
        }
        op->conn = c;
        if (!reused)
        {
            const error_code ec = co_await open_connection(op, c, deadline);
            if (ec)
            {
                op->conn = nullptr;
                impl.release(op->target.pool_key, std::move(c), false);
                op->complete(op->reason ? op->reason : ec);
                co_return;
            }
        }
        exchange_result r;
        // (No co_await inside ?: — GCC 12 miscompiles some of those.)
        if (op->req.body_stream && c->tls)
            r = co_await exchange_stream(op, *c->tls);
        else if (op->req.body_stream)
            r = co_await exchange_stream(op, c->plain);
        else if (c->tls)
            r = co_await exchange_simple(op, *c->tls);
        else
            r = co_await exchange_simple(op, c->plain);
        op->conn = nullptr;
        if (op->reason)
        {
            impl.release(op->target.pool_key, std::move(c), false);
            op->complete(op->reason);
            co_return;
        }
        if (r.ec)
        {
            impl.release(op->target.pool_key, std::move(c), false);
            if (reused && r.nothing_received)
            {
                // The server closed the pooled connection before reading the request.
                if (op->req.idempotent && !op->req.body_stream)
                {
                    force_new = true;
                    continue;
                }
                op->complete(client_errc::connection_closed);
                co_return;
            }
            op->complete(r.ec);
            co_return;
        }
        ++c->requests;
        impl.release(op->target.pool_key, std::move(c), r.reusable);
        op->complete({}, std::move(r.resp));
        co_return;
    }
}

}  // namespace bt

inline void beast_transport_impl::release(const std::string& key, bt::conn_ptr c, bool reusable)
{
    // c is null when only a connection slot is given back.
    bt::host_pool* hp = &pools_[key];
    if (!c || !reusable || !c->socket().is_open())
    {
        if (c)
            c->close();
        if (!hp->waiters.empty())
        {
            auto w = std::move(hp->waiters.front());
            hp->waiters.pop_front();
            w->queued = false;
            w->slot_granted = true;
            w->wait_timer.cancel();
        }
        else
            --hp->total;
        return;
    }
    if (!hp->waiters.empty())
    {
        auto w = std::move(hp->waiters.front());
        hp->waiters.pop_front();
        w->queued = false;
        w->handoff = std::move(c);
        w->wait_timer.cancel();
        return;
    }
    // Idle expiry is lazy (here and in acquire): no timer is kept pending, so
    // an idle pool never keeps io_context::run() from returning.
    const auto now = bt::clock::now();
    while (!hp->idle.empty() && now - hp->idle.front()->idle_since >= params_.idle_timeout)
    {
        hp->idle.front()->close();
        hp->idle.erase(hp->idle.begin());
        --hp->total;
    }
    c->idle_since = now;
    hp->idle.push_back(std::move(c));
}

inline void beast_transport_impl::start(http_request req, transport_handler h)
{
    auto op = std::make_shared<bt::request_op>(shared_from_this(), std::move(req), std::move(h));
    op->slot = boost::asio::get_associated_cancellation_slot(op->handler);
    if (op->slot.is_connected())
    {
        op->slot.assign([w = std::weak_ptr<bt::request_op>(op), s = strand_](boost::asio::cancellation_type t) {
            if ((t & boost::asio::cancellation_type::terminal) == boost::asio::cancellation_type::none)
                return;
            boost::asio::post(s, [w] {
                if (auto o = w.lock())
                    o->interrupt(boost::asio::error::operation_aborted);
            });
        });
    }
    // Post first: the operation never completes inside async_send.
    boost::asio::post(strand_, [op]() mutable {
        auto& strand = op->impl->strand_;
        boost::asio::co_spawn(strand, bt::run_request(op), [op](std::exception_ptr e) {
            if (!e || op->done)
                return;
            if (op->conn)
                op->impl->release(op->target.pool_key, std::exchange(op->conn, nullptr), false);
            try
            {
                std::rethrow_exception(e);
            }
            catch (const std::bad_alloc&)
            {
                op->complete(make_error_code(boost::system::errc::not_enough_memory));
            }
            catch (...)
            {
                op->complete(client_errc::protocol_error);
            }
        });
    });
}

}  // namespace detail

DIGITAL_DELIVERY_DECL beast_transport::beast_transport(boost::asio::any_io_executor ex, beast_transport_params params)
    : impl_(std::make_shared<detail::beast_transport_impl>(std::move(ex), std::move(params)))
{
}

DIGITAL_DELIVERY_DECL boost::asio::any_io_executor beast_transport::get_executor() const { return impl_->ex_; }

DIGITAL_DELIVERY_DECL void beast_transport::async_send(http_request req, transport_handler handler)
{
    impl_->start(std::move(req), std::move(handler));
}

DIGITAL_DELIVERY_DECL const beast_transport_params& beast_transport::params() const noexcept { return impl_->params_; }

}  // namespace digital_delivery

#endif
