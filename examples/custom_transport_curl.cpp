//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// A complete custom transport built on libcurl's multi interface, driven by
// Asio, plugged into the client; written to the contract of
// docs/transport.md ("The contract": the rule numbers below are its own).
//
// The transport concept is two members:
//   any_io_executor get_executor();
//   void async_send(http_request, any_completion_handler<void(error_code, http_response)>);
// Here every libcurl call runs on one strand: curl_multi_socket_action is
// driven by Asio waits on curl's sockets (CURLMOPT_SOCKETFUNCTION) and one
// timer (CURLMOPT_TIMERFUNCTION); no thread of its own, no blocking call.
//
// Usage: custom_transport_curl BASE_URL API_KEY
//          (e.g. a digital-delivery-sandbox: http://127.0.0.1:PORT/api/v1/external sandbox-key)
//        custom_transport_curl --conformance [CASE]
//          (runs the conformance kit against this transport, or its cases whose
//          name contains CASE; exit 0 when it passes; DD_CURL_VERBOSE=1: curl's trace)

#include <digital_delivery.hpp>
#include <digital_delivery/testing/transport_conformance.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/append.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <curl/curl.h>

#include <poll.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace asio = boost::asio;
namespace dd = digital_delivery;

/// Limits of the curl transport (the phases' timeouts, the body limit).
struct curl_transport_params
{
    std::chrono::milliseconds connect_timeout{10'000};  // resolve + connect + TLS handshake
    std::uint64_t response_body_limit = 16u * 1024u * 1024u;  // rule 11
    bool verify_peer = true;
};

class curl_transport
{
    struct engine;
    struct transfer;

public:
    explicit curl_transport(asio::any_io_executor ex, curl_transport_params p = {})
        : e_(std::make_shared<engine>(std::move(ex), p))
    {
    }

    asio::any_io_executor get_executor() const { return e_->ex; }

    void async_send(dd::http_request req, dd::transport_handler h)
    {
        auto t = std::make_shared<transfer>(e_, std::move(req), std::move(h));
        // Rule 3: the slot's handler runs on the emitter's thread: it only
        // posts to our strand, with a weak reference (the emit may come late).
        t->slot = asio::get_associated_cancellation_slot(t->handler);
        if (t->slot.is_connected())
            t->slot.assign([w = std::weak_ptr<transfer>(t), strand = e_->strand](asio::cancellation_type type) {
                if ((type & asio::cancellation_type::terminal) == asio::cancellation_type::none)
                    return;  // partial, total: ignored
                asio::post(strand, [w] {
                    if (auto t = w.lock())
                        t->finish(asio::error::operation_aborted);
                });
            });
        // Rule 1: never inline: everything starts on the strand, later.
        asio::post(e_->strand, [t] { t->start(); });
    }

private:
    // One multi handle, its sockets and its timer; every member is used on the strand only.
    struct engine : std::enable_shared_from_this<engine>
    {
        struct watch
        {
            explicit watch(const asio::any_io_executor& ex, curl_socket_t fd) : d(ex, fd) {}
            asio::posix::stream_descriptor d;
            int want = 0;  // CURL_POLL_IN | CURL_POLL_OUT
            bool reading = false, writing = false;
        };

        engine(asio::any_io_executor e, curl_transport_params p)
            : ex(std::move(e)), strand(asio::make_strand(ex)), timer(strand), params(p)
        {
            static const bool init = [] { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; }();
            (void)init;
            multi = curl_multi_init();
            curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, &engine::on_socket);
            curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, this);
            curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, &engine::on_timer);
            curl_multi_setopt(multi, CURLMOPT_TIMERDATA, this);
        }
        ~engine()
        {
            for (auto& [fd, w] : watches)
                w->d.release();  // curl owns its sockets
            curl_multi_cleanup(multi);
        }

        asio::any_io_executor ex;
        asio::strand<asio::any_io_executor> strand;
        asio::steady_timer timer;
        curl_transport_params params;
        CURLM* multi = nullptr;
        std::unordered_map<curl_socket_t, std::unique_ptr<watch>> watches;
        std::unordered_map<CURL*, std::shared_ptr<transfer>> running;

        static int on_socket(CURL*, curl_socket_t fd, int what, void* ud, void*)
        {
            auto* e = static_cast<engine*>(ud);
            auto it = e->watches.find(fd);
            if (what == CURL_POLL_REMOVE)
            {
                if (it != e->watches.end())
                {
                    it->second->d.release();  // deregisters; curl closes the socket
                    e->watches.erase(it);
                }
                return 0;
            }
            if (it == e->watches.end())
                it = e->watches.emplace(fd, std::make_unique<watch>(e->strand, fd)).first;
            it->second->want = what;
            e->arm(fd);
            return 0;
        }

        static int on_timer(CURLM*, long timeout_ms, void* ud)
        {
            auto* e = static_cast<engine*>(ud);
            if (timeout_ms < 0)
            {
                e->timer.cancel();
                return 0;
            }
            e->timer.expires_after(std::chrono::milliseconds(timeout_ms));
            e->timer.async_wait([w = e->weak_from_this()](dd::error_code ec) {
                if (auto self = w.lock(); self && !ec)
                    self->action(CURL_SOCKET_TIMEOUT, 0);
            });
            return 0;
        }

        auto ready(curl_socket_t fd, int mask, bool watch::*flag)
        {
            return [w = weak_from_this(), fd, mask, flag](dd::error_code ec) {
                auto self = w.lock();
                if (!self)
                    return;
                auto it = self->watches.find(fd);
                if (it == self->watches.end())
                    return;  // removed meanwhile (its waits were cancelled)
                (*it->second).*flag = false;
                if (!ec)
                    self->action(fd, mask);
            };
        }

        // Waits for what curl wants of `fd`. Asio's reactor is edge-triggered:
        // a wait fires on the next change, not while the socket stays ready
        // (curl may stop writing to a writable socket, e.g. when its read
        // callback pauses). So after each arming, and after each action on the
        // socket, poll it once and act again at once if it is ready: curl's
        // level-triggered view.
        void arm(curl_socket_t fd)
        {
            auto& w = *watches.at(fd);
            short ready_for = 0;
            if (w.want & CURL_POLL_IN)
            {
                ready_for |= POLLIN;
                if (!w.reading)
                {
                    w.reading = true;
                    w.d.async_wait(asio::posix::descriptor_base::wait_read, ready(fd, CURL_CSELECT_IN, &watch::reading));
                }
            }
            if (w.want & CURL_POLL_OUT)
            {
                ready_for |= POLLOUT;
                if (!w.writing)
                {
                    w.writing = true;
                    w.d.async_wait(asio::posix::descriptor_base::wait_write, ready(fd, CURL_CSELECT_OUT, &watch::writing));
                }
            }
            if (ready_for)
            {
                pollfd p{fd, ready_for, 0};
                if (::poll(&p, 1, 0) > 0)
                {
                    const int mask = ((p.revents & (POLLIN | POLLHUP | POLLERR)) ? CURL_CSELECT_IN : 0) |
                                     ((p.revents & POLLOUT) ? CURL_CSELECT_OUT : 0);
                    asio::post(strand, [w = weak_from_this(), fd, mask] {
                        if (auto self = w.lock(); self && self->watches.count(fd))
                            self->action(fd, mask);
                    });
                }
            }
        }

        void action(curl_socket_t fd, int mask)
        {
            auto keep = shared_from_this();  // a completion may drop the last transport
            int still = 0;
            curl_multi_socket_action(multi, fd, mask, &still);
            check_done();
            if (fd != CURL_SOCKET_TIMEOUT && watches.count(fd))
                arm(fd);
        }

        // Completes the transfers curl has finished.
        void check_done()
        {
            auto keep = shared_from_this();
            int still = 0;
            while (CURLMsg* m = curl_multi_info_read(multi, &still))
            {
                if (m->msg != CURLMSG_DONE)
                    continue;
                auto it = running.find(m->easy_handle);
                if (it != running.end())
                {
                    auto t = it->second;
                    t->done(m->data.result);
                }
            }
        }
    };

    // One request: its easy handle and the state its callbacks use (strand only).
    struct transfer : std::enable_shared_from_this<transfer>
    {
        transfer(std::shared_ptr<engine> e, dd::http_request r, dd::transport_handler h)
            : eng(std::move(e)), req(std::move(r)), handler(std::move(h))
        {
        }
        ~transfer()
        {
            if (easy)
                curl_easy_cleanup(easy);
            curl_slist_free_all(headers);
        }

        std::shared_ptr<engine> eng;
        dd::http_request req;
        dd::transport_handler handler;
        asio::cancellation_slot slot;
        CURL* easy = nullptr;
        curl_slist* headers = nullptr;
        dd::http_response resp;
        char errbuf[CURL_ERROR_SIZE] = {};
        bool finished = false, added = false;
        bool too_large = false, malformed = false;
        bool in_response_head = false;
        bool head_done = false;  // the blank line ending a final response's head was read
        // The streamed body (rule 8): one read at a time into `chunk`.
        std::vector<char> chunk;
        std::size_t have = 0, off = 0;
        bool reading = false, eof = false;
        dd::error_code source_ec;
        std::uint64_t given = 0;

        void start()
        {
            if (finished)
                return;
            easy = curl_easy_init();
            if (!easy)
                return finish(make_error_code(boost::system::errc::not_enough_memory));
            const bool streamed = req.body_stream != nullptr;
            curl_easy_setopt(easy, CURLOPT_URL, req.url.c_str());
            curl_easy_setopt(easy, CURLOPT_PATH_AS_IS, 1L);  // rule 7: the target byte-exact, no dot-segment removal
            curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
            curl_easy_setopt(easy, CURLOPT_PROXY, "");  // rule 7: no proxy from the environment
            curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
            curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, errbuf);
            curl_easy_setopt(easy, CURLOPT_PRIVATE, this);
            if (std::getenv("DD_CURL_VERBOSE"))
                curl_easy_setopt(easy, CURLOPT_VERBOSE, 1L);
            // Rule 6: libcurl re-sends a request whose reused connection died
            // before a response byte; on a fresh connection it never does.
            if (!req.idempotent || streamed)
                curl_easy_setopt(easy, CURLOPT_FRESH_CONNECT, 1L);
            // Rule 7: only the request's own fields; switch off curl's own.
            bool has_ua = false, has_ct = false, has_accept = false;
            for (auto f : req.headers)
            {
                has_ua = has_ua || dd_iequals(f.name, "User-Agent");
                has_ct = has_ct || dd_iequals(f.name, "Content-Type");
                has_accept = has_accept || dd_iequals(f.name, "Accept");
                std::string line(f.name);
                line += f.value.empty() ? ";" : ": ";  // "Name;" sends an empty value
                line += f.value;
                headers = curl_slist_append(headers, line.c_str());
            }
            headers = curl_slist_append(headers, "Expect:");
            if (!has_accept)
                headers = curl_slist_append(headers, "Accept:");
            if (!has_ct)
                headers = curl_slist_append(headers, "Content-Type:");
            curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
            curl_easy_setopt(easy, CURLOPT_USERAGENT, has_ua ? nullptr : dd::default_user_agent);

            const std::string method(dd::to_string(req.method));
            if (streamed)
            {
                curl_easy_setopt(easy, CURLOPT_UPLOAD, 1L);
                curl_easy_setopt(easy, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(req.body_stream->size()));
                curl_easy_setopt(easy, CURLOPT_READFUNCTION, &transfer::on_read);
                curl_easy_setopt(easy, CURLOPT_READDATA, this);
                chunk.resize(64 * 1024);
            }
            else if (!req.body.empty() || req.method == dd::http_method::post || req.method == dd::http_method::put ||
                     req.method == dd::http_method::patch)
            {
                // Content-Length even when 0 (a bodyless POST).
                curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
                curl_easy_setopt(easy, CURLOPT_POSTFIELDS, req.body.data());
            }
            if (req.method != dd::http_method::get || streamed || !req.body.empty())
                curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, method.c_str());
            curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &transfer::on_body);
            curl_easy_setopt(easy, CURLOPT_WRITEDATA, this);
            curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &transfer::on_header);
            curl_easy_setopt(easy, CURLOPT_HEADERDATA, this);
            curl_easy_setopt(easy, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(eng->params.response_body_limit));
            const auto whole = req.timeout.count() > 0 ? req.timeout : dd::default_request_timeout;
            curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(whole.count()));
            curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS,
                             static_cast<long>(std::min(whole, eng->params.connect_timeout).count()));
            if (!eng->params.verify_peer)
            {
                curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
                curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
            }
            eng->running.emplace(easy, shared_from_this());
            added = true;
            if (curl_multi_add_handle(eng->multi, easy) != CURLM_OK)
                finish(dd::client_errc::invalid_url);
        }

        static bool dd_iequals(std::string_view a, std::string_view b)
        {
            return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
                       return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
                   });
        }

        static std::size_t on_body(char* p, std::size_t sz, std::size_t n, void* ud)
        {
            auto* t = static_cast<transfer*>(ud);
            if (t->resp.body.size() + sz * n > t->eng->params.response_body_limit)
            {
                t->too_large = true;  // rule 11
                return 0;
            }
            t->resp.body.append(p, sz * n);
            return sz * n;
        }

        // Rules 12, 13: a status line starts a response (an interim 1xx is
        // replaced by the next); a field line without a colon is invalid.
        static std::size_t on_header(char* p, std::size_t sz, std::size_t n, void* ud)
        {
            auto* t = static_cast<transfer*>(ud);
            std::string_view line(p, sz * n);
            while (!line.empty() && (line.back() == '\r' || line.back() == '\n'))
                line.remove_suffix(1);
            if (line.starts_with("HTTP/"))
            {
                t->resp.headers.clear();
                t->in_response_head = true;
                t->head_done = false;
                const auto sp = line.find(' ');
                const auto code = sp == std::string_view::npos ? std::string_view() : line.substr(sp + 1, 3);
                if (code.size() != 3 || !std::all_of(code.begin(), code.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
                    (line.size() > sp + 4 && line[sp + 4] != ' '))
                    return t->malformed = true, 0;
                return sz * n;
            }
            if (line.empty() || !t->in_response_head)
            {
                if (line.empty() && t->in_response_head)
                    t->head_done = true;  // (an interim 1xx's head too: the next status line resets it)
                t->in_response_head = false;
                return sz * n;  // the end of a head, or a trailer
            }
            const auto colon = line.find(':');
            if (colon == std::string_view::npos || colon == 0)
                return t->malformed = true, 0;
            auto value = line.substr(colon + 1);
            while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
                value.remove_prefix(1);
            while (!value.empty() && (value.back() == ' ' || value.back() == '\t'))
                value.remove_suffix(1);
            const auto name = line.substr(0, colon);
            if (dd_iequals(name, "Content-Length"))
            {
                const bool digits = !value.empty() &&
                                    std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
                if (!digits || t->resp.headers.find("Content-Length"))
                    return t->malformed = true, 0;
            }
            t->resp.headers.add(name, value);
            return sz * n;
        }

        // Rule 8: the body_source read asynchronously; libcurl's transfer is
        // paused until the read completes (on the strand).
        static std::size_t on_read(char* p, std::size_t sz, std::size_t n, void* ud)
        {
            auto* t = static_cast<transfer*>(ud);
            if (t->source_ec)
                return CURL_READFUNC_ABORT;
            if (t->off < t->have)
            {
                const std::size_t k = std::min(sz * n, t->have - t->off);
                std::memcpy(p, t->chunk.data() + t->off, k);
                t->off += k;
                t->given += k;
                if (t->req.on_body_progress)
                    t->req.on_body_progress(t->given);  // rule 9 (handed to curl, which writes it next)
                return k;
            }
            if (t->eof)
                return 0;
            if (!t->reading)
            {
                t->reading = true;
                const auto want = static_cast<std::size_t>(
                    std::min<std::uint64_t>(t->chunk.size(), t->req.body_stream->size() - t->given + 1));
                t->req.body_stream->async_read_some(
                    asio::buffer(t->chunk.data(), want),
                    asio::bind_executor(t->eng->strand, [w = t->weak_from_this()](dd::error_code ec, std::size_t k) {
                        auto t = w.lock();
                        if (!t || t->finished)
                            return;
                        t->reading = false;
                        t->off = 0;
                        t->have = 0;
                        if (ec == asio::error::eof)
                        {
                            t->eof = true;
                            if (t->given != t->req.body_stream->size())
                                t->source_ec = dd::client_errc::source_size_mismatch;
                        }
                        else if (ec)
                            t->source_ec = ec;
                        else if (t->given + k > t->req.body_stream->size())
                            t->source_ec = dd::client_errc::source_size_mismatch;
                        else
                            t->have = k;
                        // Unpausing may run the transfer to its end at once
                        // (a response that came meanwhile): collect it; else
                        // look at the socket again (see engine::arm()).
                        curl_easy_pause(t->easy, CURLPAUSE_CONT);
                        t->eng->check_done();
                        curl_socket_t fd = CURL_SOCKET_BAD;
                        if (!t->finished && curl_easy_getinfo(t->easy, CURLINFO_ACTIVESOCKET, &fd) == CURLE_OK &&
                            t->eng->watches.count(fd))
                            t->eng->arm(fd);
                    }));
            }
            return CURL_READFUNC_PAUSE;
        }

        // Rule 5: the code tells the phase. Nothing was sent while curl has
        // not written the request's head (CURLINFO_REQUEST_SIZE is 0).
        dd::error_code map(CURLcode rc)
        {
            curl_off_t sent_head = 0, connected = 0, handshaken = 0;
            curl_easy_getinfo(easy, CURLINFO_REQUEST_SIZE, &sent_head);
            curl_easy_getinfo(easy, CURLINFO_CONNECT_TIME_T, &connected);
            curl_easy_getinfo(easy, CURLINFO_APPCONNECT_TIME_T, &handshaken);
            long os_errno = 0;
            curl_easy_getinfo(easy, CURLINFO_OS_ERRNO, &os_errno);
            const bool https = req.url.starts_with("https:");
            if (too_large)
                return dd::client_errc::response_too_large;
            if (malformed)
                return dd::client_errc::protocol_error;
            if (source_ec)
                return source_ec;
            switch (rc)
            {
            case CURLE_OK:
                // Rule 13: curl accepts a head cut by the peer's close as a
                // response without a body; it is not one.
                return head_done ? dd::error_code() : dd::error_code(dd::client_errc::connection_closed);
            case CURLE_URL_MALFORMAT:
            case CURLE_UNSUPPORTED_PROTOCOL:
                return sent_head == 0 && connected == 0 ? dd::error_code(dd::client_errc::invalid_url)
                                                        : dd::error_code(dd::client_errc::protocol_error);
            case CURLE_COULDNT_RESOLVE_HOST: return asio::error::host_not_found;
            case CURLE_COULDNT_RESOLVE_PROXY: return dd::client_errc::proxy_unreachable;
            case CURLE_COULDNT_CONNECT:
                switch (os_errno)
                {
                case ECONNREFUSED: return asio::error::connection_refused;
                case ENETUNREACH: return asio::error::network_unreachable;
                case EHOSTUNREACH: return asio::error::host_unreachable;
                case EADDRNOTAVAIL: return make_error_code(boost::system::errc::address_not_available);
                case ETIMEDOUT: return dd::client_errc::connect_timeout;
                default: return dd::client_errc::connect_failed;  // EACCES, EPERM, ...: nothing was sent
                }
            case CURLE_OPERATION_TIMEDOUT:
                if (sent_head > 0)
                    return dd::client_errc::request_timeout;
                if (connected == 0)
                    return dd::client_errc::connect_timeout;
                return https && handshaken == 0 ? dd::error_code(dd::client_errc::tls_handshake_timeout)
                                                : dd::error_code(dd::client_errc::connect_timeout);
            case CURLE_PEER_FAILED_VERIFICATION:
                return std::strstr(errbuf, "subject name") || std::strstr(errbuf, "host name")
                           ? dd::error_code(dd::client_errc::tls_hostname_mismatch)
                           : dd::error_code(dd::client_errc::tls_certificate_verify_failed);
            case CURLE_SSL_CONNECT_ERROR: return dd::client_errc::tls_error;
            case CURLE_FILESIZE_EXCEEDED: return dd::client_errc::response_too_large;
            case CURLE_RECV_ERROR:
                if (std::strstr(errbuf, "chunk"))
                    return dd::client_errc::protocol_error;  // "Malformed encoding found in chunked-encoding"
                return dd::client_errc::connection_closed;
            case CURLE_GOT_NOTHING:
            case CURLE_SEND_ERROR:
            case CURLE_PARTIAL_FILE: return dd::client_errc::connection_closed;
            default: return dd::client_errc::protocol_error;  // CURLE_WEIRD_SERVER_REPLY, bad framing, ...
            }
        }

        void done(CURLcode rc)
        {
            long status = 0;
            curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
            const dd::error_code ec = map(rc);
            if (!ec)
                resp.status = static_cast<unsigned>(status);
            else
            {
                // Explaining a failure: curl's own words (no URL: it may carry a signature).
                resp = {};
                resp.body = errbuf[0] ? errbuf : curl_easy_strerror(rc);
                if (source_ec)
                    resp.body = "reading the request body: " + source_ec.message();
            }
            finish(ec);
        }

        // Completes once: removes the handle (aborting a transfer in progress:
        // curl closes its connection), then the handler on its executor.
        void finish(dd::error_code ec)
        {
            if (finished)
                return;
            finished = true;
            auto keep = shared_from_this();
            if (added)
            {
                curl_multi_remove_handle(eng->multi, easy);
                eng->running.erase(easy);
            }
            if (ec == asio::error::operation_aborted)
                resp = {};
            // Rules 2 and 4: on the handler's executor, clearing the slot there first.
            auto hex = asio::get_associated_executor(handler, eng->ex);
            asio::post(eng->strand, asio::bind_executor(hex, [slot = slot, h = std::move(handler), ec, r = std::move(resp)]() mutable {
                if (slot.is_connected())
                    slot.clear();
                std::move(h)(ec, std::move(r));
            }));
        }
    };

    std::shared_ptr<engine> e_;  // shared: copies of the transport share the multi handle (rule 14)
};

static_assert(dd::transport<curl_transport>);

static int conformance(const char* only)
{
    curl_transport_params p;
    p.verify_peer = false;
    dd::testing::conformance_params kit;
    kit.only = only ? only : "";
    const auto r = dd::testing::run_transport_conformance(
        [p](asio::any_io_executor ex) { return dd::any_transport(curl_transport(std::move(ex), p)); }, kit);
    std::cout << r.to_string();
    if (!r.passed())
        std::cout << "\nFailures:\n" << r.failures();
    return r.passed() ? 0 : 1;
}

int main(int argc, char** argv)
{
    if (argc >= 2 && std::string_view(argv[1]) == "--conformance")
        return conformance(argc >= 3 ? argv[2] : nullptr);
    if (argc < 3)
    {
        std::fprintf(stderr, "usage: %s BASE_URL API_KEY | --conformance [CASE]\n", argv[0]);
        return 2;
    }
    asio::io_context ioc;
    dd::client client(curl_transport(ioc.get_executor()), {.base_url = argv[1], .api_key = argv[2]});

    int rc = 1;
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            dd::diagnostics diag;
            auto [ec, page] = co_await dd::async_list_orders(
                client, {.per_page = 5, .sort = dd::order_sort::name_asc}, diag, asio::as_tuple(asio::deferred)
            );
            if (ec)
            {
                std::fprintf(stderr, "list_orders failed: %s (%s)\n", ec.message().c_str(), diag.to_string().c_str());
                co_return;
            }
            std::printf("%lld orders in all; first page:\n", static_cast<long long>(page.pagination.total_count));
            for (const auto& o : page.orders)
                std::printf("  %-8s %-28s %s\n", o.name.c_str(), o.email.c_str(),
                            o.financial_status ? std::string(o.financial_status->str()).c_str() : "-");
            // A typed error through the same transport:
            auto [ec2, missing] = co_await dd::async_get_order(client, "no-such-order", diag, asio::as_tuple(asio::deferred));
            std::printf("get_order(no-such-order): %s [%s]\n", ec2.message().c_str(), diag.to_string().c_str());
            // A transport failure explained in curl's words (port 1: nothing listens there).
            dd::client nowhere(curl_transport(ioc.get_executor()),
                               {.base_url = "http://127.0.0.1:1/api/v1/external", .api_key = "k", .retry = {.enabled = false}});
            auto [ec3, none] = co_await dd::async_get_order(nowhere, "o1", diag, asio::as_tuple(asio::deferred));
            std::printf("get_order on a closed port: %s [%s]\n", ec3.message().c_str(), diag.to_string().c_str());
            rc = (ec2 == dd::api_errc::order_not_found && dd::is_request_not_sent(ec3) && !diag.client_message.empty()) ? 0 : 1;
        },
        asio::detached
    );
    ioc.run();
    return rc;
}
