//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_BEAST_TRANSPORT_IPP
#define DIGITAL_DELIVERY_IMPL_BEAST_TRANSPORT_IPP

// The Beast transport's implementation. Compiled once: by src.hpp
// (separate compilation) or by the one translation unit including
// beast_transport.hpp (header-only mode).
//
// Structure (docs/transport-beast.md)
//  - beast_transport_impl: executor, one strand, the TLS context (created on
//    first HTTPS use unless a custom trust store is given), the pools (per
//    "scheme://host:port": the validated origin, idle connections, count,
//    FIFO waiters) and a one-entry cache of the last origin seen.
//  - request_op: one async_send, a state machine on the strand:
//    run -> acquire (idle connection | new slot | FIFO wait until the
//    deadline) -> [open_connection: a coroutine, only for new connections]
//    -> exchange -> on_exchanged (release, retry once on a stale pooled
//    connection, complete). The bytes of the exchange (one request
//    serializer, one response reader, the keep-alive decision) are the sans-io
//    core in impl/http/sansio/http_exchange.hpp; two drivers move them: requests
//    with an in-memory body use simple_exchange (one gather write of the head
//    and body, then read_some into a reused buffer); streaming bodies use the
//    exchange_stream coroutine (the body written while a concurrent reader
//    watches for an early response).
//  - Every interruption (cancellation slot, watchdog) is delivered on the
//    strand as interrupt(reason): it records the reason and stops whatever is
//    in progress (leaves the waiter queue, cancels the resolver, closes the
//    connection); each step checks the reason, so a connection interrupted
//    mid-request is never reused.
//  - One watchdog timer per connection, kept armed across requests (see
//    watch()); it only fires to compare deadlines.

#include <digital_delivery/beast_transport.hpp>
#include <digital_delivery/impl/http/sansio/beast_url.hpp>
#include <digital_delivery/impl/http/sansio/connection_reuse.hpp>
#include <digital_delivery/impl/http/sansio/http_exchange.hpp>
#include <digital_delivery/impl/http/proxy_tunnel.hpp>
#include <digital_delivery/error.hpp>

#include <boost/asio/append.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/associated_allocator.hpp>
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
#include <boost/beast/http/error.hpp>

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#if !defined(_WIN32)
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#endif

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <deque>
#include <exception>
#include <limits>
#include <memory>
#include <new>
#include <optional>
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

struct request_op;
struct host_pool;

struct connection : std::enable_shared_from_this<connection>
{
    connection(const asio::any_io_executor& ex, const strand_t& st, host_pool* hp, std::size_t buffer_size)
        : pool(hp), strand(st), plain(ex), timer(ex)
    {
        buf.reserve(buffer_size);
    }
    tcp::socket& socket() noexcept { return tls ? tls->next_layer() : plain; }
    void close() noexcept
    {
        error_code ig;
        socket().close(ig);
    }

    host_pool* pool;
    strand_t strand;
    tcp::socket plain;                               // used when !tls
    std::unique_ptr<ssl::stream<tcp::socket>> tls;   // used for https
    beast::flat_buffer buf;                          // reserved once, reused
    std::string wbuf;                                // request header, reused
    response_reader reader;                          // per response, storage reused
    clock::time_point keep_until{};                  // idle: reusable until then
    std::chrono::milliseconds keep_for{};            // set from each response (keep_alive_limit)
    long verify_error = X509_V_OK;                   // recorded by the verify callback
    unsigned proxy_status = 0;                       // the proxy's answer to CONNECT, when refused
    std::uint64_t requests = 0;
    bool idle = false;                               // in pool->idle

    // Watchdog, kept armed across requests (docs/transport-beast.md): a wait
    // is pending until `armed`; when it fires, the current `deadline` is
    // compared and the wait re-armed if it moved later. Idle connections
    // cancel it so that no pending wait keeps io_context::run() alive.
    asio::steady_timer timer;
    clock::time_point deadline = clock::time_point::max();
    clock::time_point armed = clock::time_point::max();
    unsigned tgen = 0;
    client_errc code = client_errc::request_timeout;
    request_op* op = nullptr;                        // the request using it, if any
};
using conn_ptr = std::shared_ptr<connection>;

struct host_pool
{
    // The origin, validated once (beast_url.hpp).
    bool tls = false;
    bool host_is_ip = false;
    std::string host, port, host_header, key;
    const proxy_endpoint* proxy = nullptr;  // through an HTTP proxy (docs/proxies.md), or direct

    std::vector<conn_ptr> idle;  // most recently used at the back
    std::size_t total = 0;       // idle + in use + being connected
    std::deque<std::shared_ptr<request_op>> waiters;
};

}  // namespace bt

class beast_transport_impl : public std::enable_shared_from_this<beast_transport_impl>
{
public:
    beast_transport_impl(boost::asio::any_io_executor ex, beast_transport_params p)
        : ex_(std::move(ex)), strand_(boost::asio::make_strand(ex_)), params_(std::move(p)),
          proxy_(make_proxy_config(params_.proxy))
    {
        if (params_.max_connections_per_host == 0)
            params_.max_connections_per_host = 1;
        if (params_.upload_chunk_size == 0)
            params_.upload_chunk_size = 64u * 1024u;
        // A custom trust store is loaded now, so that an unreadable file
        // throws here; the system trust store (the expensive one: ~250 M
        // instructions and several MiB) only on the first HTTPS connection.
        if (params_.tls.verify_peer && (!params_.tls.ca_file.empty() || !params_.tls.ca_path.empty()))
            make_ssl_context();
    }

    boost::asio::any_io_executor ex_;
    bt::strand_t strand_;
    beast_transport_params params_;
    proxy_config proxy_;                     // decided once (impl/http/sansio/proxy.hpp)
    std::unique_ptr<bt::ssl::context> ctx_;  // created on first use
    std::unordered_map<std::string, bt::host_pool> pools_;
    // The last origin seen, as written in the URL ("scheme://authority"), so
    // that a request to the same origin skips parsing it again.
    std::string last_origin_;
    bt::host_pool* last_pool_ = nullptr;

    void make_ssl_context()
    {
        auto ctx = std::make_unique<bt::ssl::context>(bt::ssl::context::tls_client);
        ctx->set_options(bt::ssl::context::default_workarounds | bt::ssl::context::no_sslv2 |
                         bt::ssl::context::no_sslv3 | bt::ssl::context::no_tlsv1 | bt::ssl::context::no_tlsv1_1);
        if (params_.tls.verify_peer)
        {
            ctx->set_verify_mode(bt::ssl::verify_peer);
            if (params_.tls.ca_file.empty() && params_.tls.ca_path.empty())
                ctx->set_default_verify_paths();
            if (!params_.tls.ca_file.empty())
                ctx->load_verify_file(params_.tls.ca_file);
            if (!params_.tls.ca_path.empty())
                ctx->add_verify_path(params_.tls.ca_path);
        }
        else
            ctx->set_verify_mode(bt::ssl::verify_none);
        ctx_ = std::move(ctx);
    }

    // Validates `url`; returns its pool and the encoded path + query (a view
    // into url), or null.
    bt::host_pool* find_pool(std::string_view url, std::string_view& path_query)
    {
        if (url.empty() || url.size() > 64 * 1024)
            return nullptr;
        if (last_pool_ && url.size() >= last_origin_.size() &&
            url.compare(0, last_origin_.size(), last_origin_) == 0 &&
            (url.size() == last_origin_.size() || url[last_origin_.size()] == '/' ||
             url[last_origin_.size()] == '?' || url[last_origin_.size()] == '#'))
        {
            if (!beast_url_rest(url.substr(last_origin_.size()), path_query))
                return nullptr;
            return last_pool_;
        }
        beast_target t;
        if (!parse_beast_target(url, t))
            return nullptr;
        const std::size_t olen = beast_url_origin_length(url);
        if (!beast_url_rest(url.substr(olen), path_query))
            return nullptr;
        auto [it, inserted] = pools_.try_emplace(t.pool_key);
        bt::host_pool& hp = it->second;
        if (inserted)
        {
            hp.tls = t.tls;
            hp.host_is_ip = t.host_is_ip;
            hp.host = std::move(t.host);
            hp.port = std::move(t.port);
            hp.host_header = std::move(t.host_header);
            hp.key = t.pool_key;
            hp.proxy = proxy_.route(hp.tls, hp.host);
        }
        last_origin_.assign(url.data(), olen);
        last_pool_ = &hp;
        return &hp;
    }

    void start(http_request req, transport_handler h);

    // --- pool (strand only) ---
    void release(bt::host_pool& hp, bt::conn_ptr c, bool reusable);
};

namespace bt {

inline void watch_expired(const std::weak_ptr<connection>& w, unsigned g);

struct watch_handler
{
    std::weak_ptr<connection> c;
    unsigned g;
    strand_t strand;
    using executor_type = strand_t;
    executor_type get_executor() const noexcept { return strand; }
    void operator()(error_code ec) const
    {
        if (!ec)
            watch_expired(c, g);
    }
};

inline void arm_watch(connection& c, clock::time_point t, const strand_t& strand)
{
    c.armed = t;
    c.timer.expires_at(t);  // cancels a pending wait (its handler sees a stale generation)
    c.timer.async_wait(watch_handler{c.weak_from_this(), ++c.tgen, strand});
}

// Sets the deadline of the current phase of `c`; re-arms the timer only when
// the new deadline is earlier than the pending wait.
inline void watch(connection& c, clock::time_point deadline, client_errc code, const strand_t& strand)
{
    c.deadline = deadline;
    c.code = code;
    if (c.armed > deadline)
        arm_watch(c, deadline, strand);
}

// An idle connection: stop the pending wait (if any).
inline void unwatch(connection& c)
{
    c.deadline = clock::time_point::max();
    if (c.armed != clock::time_point::max())
    {
        ++c.tgen;
        c.armed = clock::time_point::max();
        c.timer.cancel();
    }
}

struct wait_handler
{
    std::shared_ptr<request_op> op;
    using executor_type = strand_t;
    executor_type get_executor() const noexcept;
    void operator()(error_code ec);
};

struct exchange_result
{
    error_code ec;
    http_response resp;
    bool reusable = false;
    bool nothing_received = false;  // the connection failed before any response byte
};

// Invokes a request's handler on its executor, clearing its cancellation
// slot there first.
struct completion_call
{
    asio::cancellation_slot slot;
    transport_handler handler;
    error_code ec;
    http_response resp;

    using allocator_type = asio::associated_allocator_t<transport_handler>;
    allocator_type get_allocator() const noexcept { return asio::get_associated_allocator(handler); }

    void operator()()
    {
        if (slot.is_connected())
            slot.clear();
        std::move(handler)(ec, std::move(resp));
    }
};

struct request_op : std::enable_shared_from_this<request_op>
{
    request_op(std::shared_ptr<beast_transport_impl> i, http_request r, transport_handler h)
        : impl(std::move(i)), req(std::move(r)), handler(std::move(h))
    {
    }

    std::shared_ptr<beast_transport_impl> impl;
    http_request req;
    transport_handler handler;
    asio::cancellation_slot slot;
    std::optional<asio::steady_timer> wait_timer;  // FIFO wait for a connection (until the deadline)
    clock::time_point deadline{};
    error_code reason;              // why the op was interrupted (set once)
    bool done = false;
    bool queued = false;
    bool initiating = false;        // inside async_send: complete through post
    bool reused = false;
    bool force_new = false;
    host_pool* pool = nullptr;
    std::string_view path_query;    // into req.url
    tcp::resolver* resolver = nullptr;
    conn_ptr conn;                  // the connection in use
    conn_ptr handoff;               // given by release() to a queued op
    bool slot_granted = false;      // ... or the right to open a new one
    std::string why;                // a failure's explanation (set on failure paths only)

    void interrupt(error_code why)
    {
        if (done || reason)
            return;
        reason = why;
        if (queued)
        {
            auto& w = pool->waiters;
            auto self = shared_from_this();
            w.erase(std::remove(w.begin(), w.end(), self), w.end());
            queued = false;
        }
        if (wait_timer)
            wait_timer->cancel();
        if (resolver)
            resolver->cancel();
        if (conn)
            conn->close();
    }

    void complete(error_code ec, http_response&& resp = {})
    {
        if (done)
            return;
        done = true;
        if (ec) [[unlikely]]
            explain(ec, resp);
        auto hex = asio::get_associated_executor(handler, impl->ex_);
        // The slot is cleared where the handler runs (completion_call), not
        // here on the strand: a cancellation slot is not thread-safe and the
        // emitter runs on the handler's executor (docs/transport.md, rule 4).
        completion_call c{slot, std::move(handler), ec, std::move(resp)};
        if (initiating)
            asio::post(impl->ex_, asio::bind_executor(hex, std::move(c)));
        else
            asio::dispatch(hex, std::move(c));
    }

    // A failure's one-line explanation in the response body (docs/transport.md,
    // "Explaining a failure"); never a secret: no query string, no header.
    void explain(error_code ec, http_response& resp) const;

    void run();
    void acquire();
    void on_wait(error_code ec);
    void open_new();
    void on_open(error_code ec);
    void begin_exchange();
    template <class Stream>
    void exchange_on(Stream& s);
    void on_exchanged(exchange_result r);
};

inline wait_handler::executor_type wait_handler::get_executor() const noexcept { return op->impl->strand_; }
inline void wait_handler::operator()(error_code ec) { op->on_wait(ec); }

inline void watch_expired(const std::weak_ptr<connection>& w, unsigned g)
{
    auto c = w.lock();
    if (!c || c->tgen != g)
        return;
    c->armed = clock::time_point::max();
    if (c->deadline == clock::time_point::max())
        return;
    if (clock::now() >= c->deadline)
    {
        if (c->op)
            c->op->interrupt(c->code);
        return;
    }
    arm_watch(*c, c->deadline, c->strand);
}

/// Whether an idle pooled connection may carry the next request: nothing is
/// readable on it — no EOF from a peer that closed it, no TLS alert, no
/// bytes the server sent unasked (they would be read as the next response) —
/// checked without blocking (recv with MSG_PEEK | MSG_DONTWAIT, and for TLS
/// the records OpenSSL holds). Checked before every reuse, so a request that
/// may not be resent is never written to a connection known to be closed.
inline bool idle_connection_alive(connection& c) noexcept
{
    tcp::socket& s = c.socket();
    if (!s.is_open() || c.buf.size() != 0)
        return false;
    if (c.tls)
    {
        SSL* ssl = c.tls->native_handle();
        if (SSL_has_pending(ssl) || BIO_pending(SSL_get_rbio(ssl)) > 0)
            return false;
    }
#if defined(MSG_PEEK) && defined(MSG_DONTWAIT)
    char b;
    const auto r = ::recv(s.native_handle(), &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
#else
    return true;
#endif
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

inline request_head head_of(const request_op& op, const beast_transport_params& p, std::uint64_t content_length,
                            bool streamed) noexcept
{
    request_head h;
    h.method = op.req.method;
    h.path_query = op.path_query;
    h.headers = &op.req.headers;
    h.host_header = op.pool->host_header;
    h.user_agent = p.user_agent;
    h.content_length = content_length;
    h.always_content_length = streamed;
    if (op.pool->proxy && !op.pool->tls)
    {
        // Plain http:// through a proxy: the absolute form, and the proxy's credentials.
        h.absolute_form_scheme = "http://";
        h.proxy_authorization = op.pool->proxy->authorization;
    }
    return h;
}

// Feeds what the connection's buffer holds to its response reader.
inline response_reader::state feed(connection& c)
{
    if (c.buf.size() == 0)
        return response_reader::state::need_more;
    std::size_t used = 0;
    const auto st = c.reader.put(c.buf.data(), used);
    c.buf.consume(used);
    return st;
}

// Room to read into; false when the buffer cannot grow.
inline bool read_room(connection& c, asio::mutable_buffer& mb)
{
    const std::size_t room = c.buf.capacity() - c.buf.size();
    const std::size_t want = std::min<std::size_t>(std::max<std::size_t>(room, 512), 65536);
    try
    {
        mb = c.buf.prepare(want);
        return true;
    }
    catch (const std::length_error&)
    {
        return false;
    }
}

// --- the common case: a request with an in-memory body, as a state machine
// (write the head + body with one gather write, then read into a reused
// buffer and feed the response reader until a final response) ---

template <class Stream>
struct simple_exchange
{
    std::shared_ptr<request_op> op;
    Stream* s;
    bool reading = false;

    using executor_type = strand_t;
    executor_type get_executor() const noexcept { return op->impl->strand_; }

    static void start(std::shared_ptr<request_op> o, Stream& s)
    {
        connection& c = *o->conn;
        serialize_request_head(c.wbuf, head_of(*o, o->impl->params_, o->req.body.size(), false));
        const std::array<asio::const_buffer, 2> bufs{asio::buffer(c.wbuf), asio::buffer(o->req.body)};
        asio::async_write(s, bufs, simple_exchange{std::move(o), &s});
    }

    void finish(exchange_result r)
    {
        auto o = std::move(op);
        o->on_exchanged(std::move(r));
    }

    void fail(error_code ec)
    {
        exchange_result r;
        r.nothing_received = !op->conn->reader.got_any() && is_closed_error(ec);
        r.ec = map_io_error(ec);
        finish(std::move(r));
    }

    void operator()(error_code ec, std::size_t n)
    {
        connection& c = *op->conn;
        if (op->reason)
            return finish({});
        if (!reading)
        {
            if (ec)
            {
                exchange_result r;
                r.ec = map_io_error(ec);
                r.nothing_received = true;
                return finish(std::move(r));
            }
            reading = true;
            c.reader.start(op->impl->params_.response_body_limit);
            return parse(c);
        }
        c.buf.commit(n);
        if (ec == asio::error::eof)
            return outcome(c, c.reader.put_eof());
        if (ec)
            return fail(ec);
        parse(c);
    }

    // Parses what is buffered; reads more or completes.
    void parse(connection& c)
    {
        response_reader::state st;
        while ((st = feed(c)) == response_reader::state::continue_)
        {
        }
        if (st != response_reader::state::need_more)
            return outcome(c, st);
        asio::mutable_buffer mb;
        if (!read_room(c, mb))
            return fail(http::error::buffer_overflow);
        Stream& stream = *s;
        stream.async_read_some(mb, std::move(*this));
    }

    void outcome(connection& c, response_reader::state st)
    {
        if (st == response_reader::state::failed)
            return fail(c.reader.error());
        exchange_result r;
        r.reusable = c.reader.reusable(c.buf.size() != 0);
        r.resp = c.reader.take_response();
        finish(std::move(r));
    }
};

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

// Reads until a final response (a 100 Continue is reported to `rs`).
template <class Stream>
asio::awaitable<void> stream_reader(std::shared_ptr<request_op> op, Stream& s, std::shared_ptr<reader_state> rs)
{
    connection& c = *op->conn;
    c.reader.start(op->impl->params_.response_body_limit);
    error_code ec;
    response_reader::state st;
    for (;;)
    {
        st = feed(c);
        if (st == response_reader::state::continue_)
        {
            rs->got_continue = true;
            rs->signal.cancel();
            continue;
        }
        if (st != response_reader::state::need_more)
            break;
        asio::mutable_buffer mb;
        if (!read_room(c, mb))
        {
            ec = http::error::buffer_overflow;
            break;
        }
        auto [rec, n] = co_await s.async_read_some(mb, tok);
        c.buf.commit(n);
        if (rec == asio::error::eof)
        {
            st = c.reader.put_eof();
            break;
        }
        if (rec)
        {
            ec = rec;
            break;
        }
    }
    rs->got_any = c.reader.got_any();
    if (!ec && st == response_reader::state::failed)
        ec = c.reader.error();
    if (ec)
        rs->ec = ec;
    else
    {
        rs->keep_alive = c.reader.reusable(c.buf.size() != 0);
        rs->resp = c.reader.take_response();
        // A final response before the whole body went out: the writer stops
        // (it sees `done`), and the connection, its request cut short, is
        // not reused. A refusal, or a server that will close, also closes
        // the socket at once, which ends a write blocked on a full buffer.
        if (!rs->writer_done && (rs->resp.status >= 300 || !rs->keep_alive))
        {
            rs->keep_alive = false;
            c.close();
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

/// Sets TCP_NOTSENT_LOWAT on the socket for the lifetime of the scope (the
/// body loop of a streaming request), then restores the system default (0).
/// Best effort: a platform or socket that refuses it sends as before.
class send_lowat_scope
{
public:
    send_lowat_scope(tcp::socket& s, std::size_t bytes) noexcept
    {
#ifdef TCP_NOTSENT_LOWAT
        if (bytes == 0 || bytes > static_cast<std::size_t>(std::numeric_limits<int>::max()))
            return;
        error_code ec;
        s.set_option(option{static_cast<int>(bytes)}, ec);
        if (!ec)
            s_ = &s;
#else
        (void)s;
        (void)bytes;
#endif
    }
    ~send_lowat_scope()
    {
#ifdef TCP_NOTSENT_LOWAT
        if (s_ && s_->is_open())
        {
            error_code ec;
            s_->set_option(option{0}, ec);
        }
#endif
    }
    send_lowat_scope(const send_lowat_scope&) = delete;
    send_lowat_scope& operator=(const send_lowat_scope&) = delete;

private:
#ifdef TCP_NOTSENT_LOWAT
    // A SettableSocketOption (Asio's concept) for TCP_NOTSENT_LOWAT.
    struct option
    {
        int value;
        template <class Protocol>
        int level(const Protocol&) const noexcept
        {
            return IPPROTO_TCP;
        }
        template <class Protocol>
        int name(const Protocol&) const noexcept
        {
            return TCP_NOTSENT_LOWAT;
        }
        template <class Protocol>
        const int* data(const Protocol&) const noexcept
        {
            return &value;
        }
        template <class Protocol>
        std::size_t size(const Protocol&) const noexcept
        {
            return sizeof value;
        }
    };
    tcp::socket* s_ = nullptr;
#endif
};

template <class Stream>
asio::awaitable<exchange_result> exchange_stream(std::shared_ptr<request_op> op, Stream& s)
{
    exchange_result r;
    auto& impl = *op->impl;
    const auto& p = impl.params_;
    body_source& src = *op->req.body_stream;
    const std::uint64_t size = src.size();
    const bool expect_continue = expects_continue(op->req.headers);
    {
        connection& c = *op->conn;
        serialize_request_head(c.wbuf, head_of(*op, p, size, true));
        auto [ec, n] = co_await asio::async_write(s, asio::buffer(c.wbuf), tok);
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
        const send_lowat_scope lowat(op->conn->socket(), p.upload_send_lowat);
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

// --- connection setup (rare: a coroutine) ---

inline bool is_tls_verify_error(long v) noexcept { return v != X509_V_OK; }

// A failed connect: the socket errors of the not-sent list (docs/transport.md)
// as they are, the kernel's own connect timeout as connect_timeout, any other
// (EACCES, EPERM, ...) as connect_failed: nothing was sent whatever the reason.
inline error_code connect_error(const error_code& ec) noexcept
{
    if (ec == asio::error::timed_out)
        return client_errc::connect_timeout;
    if (ec == asio::error::connection_refused || ec == asio::error::network_unreachable ||
        ec == asio::error::host_unreachable || ec == boost::system::errc::address_not_available ||
        ec == asio::error::operation_aborted)
        return ec;
    return client_errc::connect_failed;
}

inline void watch_phase(request_op& op, connection& c, std::chrono::milliseconds limit, client_errc code)
{
    // Before the request is written, a timeout is the phase's code even when
    // the request's own deadline comes first: the request was not sent
    // (is_request_not_sent), so the retry policy may resend it.
    const auto phase_deadline = clock::now() + limit;
    watch(c, phase_deadline < op.deadline ? phase_deadline : op.deadline, code, op.impl->strand_);
}

inline asio::awaitable<error_code> open_connection(std::shared_ptr<request_op> op, conn_ptr c)
{
    auto& impl = *op->impl;
    const auto& p = impl.params_;
    const host_pool& t = *op->pool;

    tcp::resolver resolver(impl.strand_);
    op->resolver = &resolver;
    watch_phase(*op, *c, p.resolve_timeout, client_errc::resolve_timeout);
    auto [rec, endpoints] = co_await resolver.async_resolve(t.proxy ? t.proxy->host : t.host, t.proxy ? t.proxy->port : t.port, tok);
    op->resolver = nullptr;
    if (op->reason)
        co_return op->reason;
    if (rec)
    {
        op->why = "resolving " + (t.proxy ? t.proxy->host : t.host) + ": " + rec.message();
        co_return t.proxy ? error_code(client_errc::proxy_unreachable) : rec;
    }

    watch_phase(*op, *c, p.connect_timeout, client_errc::connect_timeout);
    if (t.tls)
    {
        if (!impl.ctx_)
        {
            try
            {
                impl.make_ssl_context();
            }
            catch (const boost::system::system_error&)
            {
                co_return client_errc::tls_error;
            }
        }
        c->tls = std::make_unique<ssl::stream<tcp::socket>>(impl.ex_, *impl.ctx_);
    }
    auto [cec, ep] = co_await asio::async_connect(c->socket(), endpoints, tok);
    (void)ep;
    if (op->reason)
        co_return op->reason;
    if (cec)
    {
        op->why = "connecting to " + (t.proxy ? t.proxy->host + ':' + t.proxy->port : t.host + ':' + t.port) + ": " +
                  cec.message();
        co_return t.proxy ? error_code(client_errc::proxy_unreachable) : connect_error(cec);
    }
    error_code ig;
    c->socket().set_option(tcp::no_delay(true), ig);
    if (t.proxy && t.tls)
    {
        // https:// through a proxy: a CONNECT tunnel, then TLS with the server.
        auto pec = co_await proxy_connect(c->socket(), c->buf, connect_authority(t.host, t.port), *t.proxy, c->proxy_status);
        if (op->reason)
            co_return op->reason;
        if (pec)
            co_return pec;
    }

    if (t.tls)
    {
        watch_phase(*op, *c, p.tls_handshake_timeout, client_errc::tls_handshake_timeout);
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
            op->why = "TLS handshake with " + t.host + ':' + t.port + ": " +
                      (v != X509_V_OK ? std::string(X509_verify_cert_error_string(v)) : hec.message());
            if (v == X509_V_ERR_HOSTNAME_MISMATCH || v == X509_V_ERR_IP_ADDRESS_MISMATCH)
                co_return client_errc::tls_hostname_mismatch;
            if (p.tls.verify_peer && is_tls_verify_error(v))
                co_return client_errc::tls_certificate_verify_failed;
            co_return client_errc::tls_error;
        }
    }
    watch(*c, op->deadline, client_errc::request_timeout, impl.strand_);
    co_return error_code{};
}

inline error_code exception_code(const std::exception_ptr& e)
{
    try
    {
        std::rethrow_exception(e);
    }
    catch (const std::bad_alloc&)
    {
        return make_error_code(boost::system::errc::not_enough_memory);
    }
    catch (...)
    {
        return client_errc::protocol_error;
    }
}

// --- the request state machine (strand only) ---

inline void request_op::explain(error_code ec, http_response& resp) const
{
    if (ec == asio::error::operation_aborted || resp.status != 0 || !resp.body.empty())
        return;
    if (!why.empty())
    {
        resp.body = why;
        return;
    }
    if (!pool)
        return;
    const auto& p = impl->params_;
    const auto ms = [](std::chrono::milliseconds d) { return std::to_string(d.count()) + " ms"; };
    const auto whole = req.timeout.count() > 0 ? req.timeout : p.request_timeout;
    const std::string where = pool->host + ':' + pool->port;
    if (ec == client_errc::resolve_timeout)
        resp.body = "resolving " + pool->host + ": no answer within " + ms(std::min(p.resolve_timeout, whole));
    else if (ec == client_errc::connect_timeout)
        resp.body = "connecting to " + where + ": no connection within " + ms(std::min(p.connect_timeout, whole));
    else if (ec == client_errc::tls_handshake_timeout)
        resp.body = "TLS handshake with " + where + ": not finished within " + ms(std::min(p.tls_handshake_timeout, whole));
    else if (ec == client_errc::request_timeout)
        resp.body = "request to " + where + ": no complete response within " + ms(whole);
    else if (ec == client_errc::response_too_large)
        resp.body = "response from " + where + ": the body exceeds response_body_limit (" +
                    std::to_string(p.response_body_limit) + " bytes)";
    else if (ec == client_errc::connection_closed)
        resp.body = where + " closed the connection before a complete response";
    else if (ec == client_errc::protocol_error)
        resp.body = "response from " + where + ": not valid HTTP/1.1";
}

inline void request_op::run()
{
    pool = impl->find_pool(req.url, path_query);
    if (!pool)
        return complete(client_errc::invalid_url);
    if (reason)
        return complete(reason);
    deadline = clock::now() + (req.timeout.count() > 0 ? req.timeout : impl->params_.request_timeout);
    acquire();
}

// Gets a connection: an idle pooled one (reused), a new slot, or waits FIFO
// for one (until the request deadline).
inline void request_op::acquire()
{
    const auto& p = impl->params_;
    host_pool& hp = *pool;
    reused = false;
    if (!force_new)
    {
        if (!hp.idle.empty())
        {
            const auto now = clock::now();
            while (!hp.idle.empty())
            {
                conn_ptr c = std::move(hp.idle.back());
                hp.idle.pop_back();
                c->idle = false;
                if (now >= c->keep_until || !idle_connection_alive(*c))
                {
                    c->close();
                    unwatch(*c);
                    --hp.total;
                    continue;
                }
                reused = true;
                conn = std::move(c);
                return begin_exchange();
            }
        }
    }
    else if (hp.total >= p.max_connections_per_host && !hp.idle.empty())
    {
        // Make room for the fresh connection by dropping the oldest idle one.
        hp.idle.front()->close();
        unwatch(*hp.idle.front());
        hp.idle.erase(hp.idle.begin());
        --hp.total;
    }
    if (hp.total < p.max_connections_per_host)
    {
        ++hp.total;
        return open_new();
    }
    hp.waiters.push_back(shared_from_this());
    queued = true;
    if (!wait_timer)
        wait_timer.emplace(impl->ex_);
    wait_timer->expires_at(deadline);
    wait_timer->async_wait(wait_handler{shared_from_this()});
}

inline void request_op::on_wait(error_code)
{
    initiating = false;
    conn_ptr c = std::move(handoff);
    const bool granted = std::exchange(slot_granted, false);
    if (reason)
    {
        if (c)
            impl->release(*pool, std::move(c), true);
        else if (granted)
            impl->release(*pool, nullptr, false);
        return complete(reason);
    }
    if (c)
    {
        reused = true;
        conn = std::move(c);
        return begin_exchange();
    }
    if (granted)
        return open_new();
    // The deadline passed while waiting for a connection: nothing was sent.
    why = "no connection to " + pool->host + ':' + pool->port + " became free within the request's timeout";
    interrupt(client_errc::connect_timeout);
    complete(reason);
}

inline void request_op::open_new()
{
    conn = std::make_shared<connection>(impl->ex_, impl->strand_, pool, impl->params_.read_buffer_size);
    conn->op = this;
    asio::co_spawn(impl->strand_, open_connection(shared_from_this(), conn),
                   [self = shared_from_this()](std::exception_ptr e, error_code ec) {
                       self->initiating = false;
                       self->on_open(e ? exception_code(e) : ec);
                   });
}

inline void request_op::on_open(error_code ec)
{
    if (ec || reason)
    {
        conn_ptr c = std::move(conn);
        c->op = nullptr;
        c->deadline = clock::time_point::max();
        http_response proxy_answer;  // a refused CONNECT: the proxy's status, for diagnostics
        proxy_answer.status = reason ? 0 : c->proxy_status;
        impl->release(*pool, std::move(c), false);
        return complete(reason ? reason : ec, std::move(proxy_answer));
    }
    begin_exchange();
}

template <class Stream>
asio::awaitable<exchange_result> exchange_stream(std::shared_ptr<request_op> op, Stream& s);

inline void request_op::begin_exchange()
{
    connection& c = *conn;
    c.op = this;
    watch(c, deadline, client_errc::request_timeout, impl->strand_);
    if (c.tls)
        exchange_on(*c.tls);
    else
        exchange_on(c.plain);
}

// The exchange on the connection's stream (tests drive it over beast::test::stream).
template <class Stream>
void request_op::exchange_on(Stream& s)
{
    if (req.body_stream)
    {
        auto done_fn = [self = shared_from_this()](std::exception_ptr e, exchange_result r) {
            self->initiating = false;
            if (e)
            {
                r = {};
                r.ec = exception_code(e);
            }
            self->on_exchanged(std::move(r));
        };
        asio::co_spawn(impl->strand_, exchange_stream(shared_from_this(), s), std::move(done_fn));
        return;
    }
    simple_exchange<Stream>::start(shared_from_this(), s);
}

inline void request_op::on_exchanged(exchange_result r)
{
    initiating = false;
    conn_ptr c = std::move(conn);
    c->op = nullptr;
    c->deadline = clock::time_point::max();
    if (reason)
    {
        impl->release(*pool, std::move(c), false);
        return complete(reason);
    }
    if (r.ec)
    {
        impl->release(*pool, std::move(c), false);
        if (reused && r.nothing_received)
        {
            // The server closed the pooled connection before reading the request.
            if (req.idempotent && !req.body_stream)
            {
                force_new = true;
                return acquire();
            }
            return complete(client_errc::connection_closed);
        }
        return complete(r.ec);
    }
    ++c->requests;
    c->keep_for = keep_alive_limit(r.resp, impl->params_.idle_timeout);
    // Through a proxy, plain http:// uses one connection per request: proxies
    // such as tinyproxy close it after each response without saying so.
    impl->release(*pool, c, r.reusable && c->keep_for.count() > 0 && !(pool->proxy && !pool->tls));
    if (pool->proxy && !pool->tls && is_proxy_auth_failure(r.resp))  // the proxy, not the server, refused
        return complete(client_errc::proxy_auth_required, http_response{r.resp.status, {}, {}});
    // Completing may start the next request on this connection (the handler
    // runs inline when its executor allows it): the watchdog then stays
    // armed. Otherwise the idle connection stops it.
    complete({}, std::move(r.resp));
    if (c->idle)
        unwatch(*c);
}

}  // namespace bt

inline void beast_transport_impl::release(bt::host_pool& hp, bt::conn_ptr c, bool reusable)
{
    // c is null when only a connection slot is given back.
    if (!c || !reusable || !c->socket().is_open())
    {
        if (c)
        {
            c->close();
            bt::unwatch(*c);
        }
        if (!hp.waiters.empty())
        {
            auto w = std::move(hp.waiters.front());
            hp.waiters.pop_front();
            w->queued = false;
            w->slot_granted = true;
            w->wait_timer->cancel();
        }
        else
            --hp.total;
        return;
    }
    if (!hp.waiters.empty())
    {
        auto w = std::move(hp.waiters.front());
        hp.waiters.pop_front();
        w->queued = false;
        w->handoff = std::move(c);
        w->wait_timer->cancel();
        return;
    }
    // Idle expiry is lazy (here and in acquire): no timer is kept pending, so
    // an idle pool never keeps io_context::run() from returning.
    const auto now = bt::clock::now();
    while (!hp.idle.empty() && now >= hp.idle.front()->keep_until)
    {
        hp.idle.front()->close();
        hp.idle.front()->idle = false;
        bt::unwatch(*hp.idle.front());
        hp.idle.erase(hp.idle.begin());
        --hp.total;
    }
    c->keep_until = now + c->keep_for;
    c->idle = true;
    hp.idle.push_back(std::move(c));
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
    if (strand_.running_in_this_thread())
    {
        // Already on the strand (typically: the previous request's handler
        // starting the next one): no hop. Whatever completes before the first
        // asynchronous step is posted, so nothing completes inside async_send.
        op->initiating = true;
        op->run();
        op->initiating = false;
        return;
    }
    boost::asio::post(strand_, [op = std::move(op)]() mutable { op->run(); });
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
