//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_INTERNAL_HTTP_EXCHANGE_HPP
#define DIGITAL_DELIVERY_IMPL_INTERNAL_HTTP_EXCHANGE_HPP

// Only included from impl/http/beast_transport.ipp (and tests): the HTTP/1.1
// exchange without I/O. The Beast transport's drivers (an in-memory body; a
// streamed body with the response read concurrently) own the sockets and the
// timers; everything about the bytes is here, once:
//  - serialize_request_head(): the one request serializer (request line,
//    the caller's fields, Host, User-Agent, Content-Length);
//  - response_reader: the one response parser (bt::direct_parser, in
//    response_parser.hpp, writing straight into an http_response). Bytes in, as they arrive and
//    in any split; out: "need more", "100 Continue seen", "final response
//    complete" (with the keep-alive decision) or a typed failure. Interim
//    1xx responses are skipped; a status outside 100-599 is a protocol error.
// Tested byte by byte in tests/transport (http_exchange_test.cpp).

#include <digital_delivery/http_message.hpp>
#include <digital_delivery/impl/http/sansio/response_parser.hpp>

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>

#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <string_view>

namespace digital_delivery {
namespace detail {

/// What the request head is made of.
struct request_head
{
    http_method method = http_method::get;
    std::string_view path_query;     // encoded; "/" is added in front when missing
    const http_headers* headers = nullptr;  // the caller's fields (Content-Length, Transfer-Encoding dropped)
    std::string_view host_header;    // sent when the caller gave no Host
    std::string_view user_agent;     // sent when the caller gave no User-Agent (empty: none)
    std::uint64_t content_length = 0;
    bool always_content_length = false;  // a streamed body: Content-Length even when 0
    // Plain http:// through a proxy: the request target in absolute form
    // ("http://" + host_header + path) and the proxy's credentials.
    std::string_view absolute_form_scheme;  // empty: origin form
    std::string_view proxy_authorization;   // empty: none
};

inline bool http_iequals(std::string_view a, std::string_view b) noexcept
{
    return boost::beast::iequals(boost::beast::string_view(a.data(), a.size()), boost::beast::string_view(b.data(), b.size()));
}

/// Serializes the request head into `out` (cleared first, its storage reused).
inline void serialize_request_head(std::string& out, const request_head& h)
{
    static constexpr std::string_view methods[] = {"GET", "POST", "PUT", "PATCH", "DELETE"};
    out.clear();
    out.append(methods[static_cast<int>(h.method)]);
    out += ' ';
    if (!h.absolute_form_scheme.empty())
    {
        out.append(h.absolute_form_scheme);
        out.append(h.host_header);
    }
    if (h.path_query.empty() || h.path_query.front() != '/')
        out += '/';
    out.append(h.path_query);
    out.append(" HTTP/1.1\r\n");
    bool has_host = false, has_ua = false;
    if (h.headers)
    {
        for (const auto f : *h.headers)
        {
            if (http_iequals(f.name, "content-length") || http_iequals(f.name, "transfer-encoding"))
                continue;
            has_host = has_host || http_iequals(f.name, "host");
            has_ua = has_ua || http_iequals(f.name, "user-agent");
            out.append(f.name);
            out.append(": ");
            out.append(f.value);
            out.append("\r\n");
        }
    }
    if (!has_host)
    {
        out.append("Host: ");
        out.append(h.host_header);
        out.append("\r\n");
    }
    if (!has_ua && !h.user_agent.empty())
    {
        out.append("User-Agent: ");
        out.append(h.user_agent);
        out.append("\r\n");
    }
    if (!h.proxy_authorization.empty())
    {
        out.append("Proxy-Authorization: ");
        out.append(h.proxy_authorization);
        out.append("\r\n");
    }
    if (h.always_content_length || h.content_length != 0 || h.method == http_method::post ||
        h.method == http_method::put || h.method == http_method::patch)
    {
        char digits[24];
        char* e = digits + sizeof digits;
        char* b = e;
        std::uint64_t n = h.content_length;
        do
        {
            *--b = static_cast<char>('0' + n % 10);
            n /= 10;
        } while (n);
        out.append("Content-Length: ");
        out.append(b, static_cast<std::size_t>(e - b));
        out.append("\r\n");
    }
    out.append("\r\n");
}

/// Whether the caller's fields ask for `Expect: 100-continue`.
inline bool expects_continue(const http_headers& headers) noexcept
{
    const auto e = headers.find("expect");
    return e && http_iequals(*e, "100-continue");
}

/// The response side of one exchange, without I/O.
class response_reader
{
public:
    enum class state
    {
        need_more,  ///< Feed more bytes (or put_eof()).
        continue_,  ///< A 100 Continue was read; keep feeding.
        done,       ///< The final response is complete: response(), reusable().
        failed,     ///< error() says why (a Beast HTTP error, or not_enough_memory).
    };

    /// Starts reading a new response (the parser's storage is reused).
    void start(std::uint64_t body_limit)
    {
        limit_ = body_limit;
        fresh();
        got_any_ = false;
        ec_ = {};
    }

    /// Consumes a prefix of `in`; `used` says how much. Bytes after a
    /// complete final response are left unconsumed (the caller then decides:
    /// with bytes left over a connection is not reused).
    state put(boost::asio::const_buffer in, std::size_t& used)
    {
        used = 0;
        for (;;)
        {
            if (in.size() == 0)
                return state::need_more;
            boost::beast::error_code ec;
            std::size_t n = 0;
            try
            {
                n = p_->put_buffered(in, ec);  // not put(): Beast 1.81 asserts on some splits
            }
            catch (const std::bad_alloc&)
            {
                return fail(boost::system::errc::make_error_code(boost::system::errc::not_enough_memory));
            }
            used += n;
            in += n;
            got_any_ = got_any_ || p_->got_some();
            if (ec == boost::beast::http::error::need_more)
                return state::need_more;
            if (ec)
                return fail(ec);
            if (p_->is_done())
            {
                const unsigned st = p_->resp.status;
                if (st >= 100 && st < 200 && st != 101)
                {
                    fresh();  // an interim response: the final one follows
                    if (st == 100)
                        return state::continue_;
                    continue;
                }
                return state::done;
            }
            if (n == 0)
                return state::need_more;
        }
    }

    /// The peer closed the connection (clean EOF).
    state put_eof()
    {
        if (!p_->got_some())
            return fail(boost::beast::http::error::end_of_stream);
        boost::beast::error_code ec;
        p_->put_eof(ec);
        if (ec)
            return fail(ec);
        return state::done;
    }

    /// Whether any byte of a response was read (before a failure: whether the
    /// server may have seen the request at all).
    bool got_any() const noexcept { return got_any_; }
    const boost::beast::error_code& error() const noexcept { return ec_; }

    /// After done: the response (moved out) and whether the connection may
    /// carry another request (keep-alive, not delimited by EOF, and no bytes
    /// left over after the response).
    http_response take_response() { return std::move(p_->resp); }
    unsigned status() const noexcept { return p_->resp.status; }
    bool reusable(bool bytes_left_over) const noexcept
    {
        return p_->keep_alive() && !p_->need_eof() && !bytes_left_over;
    }

private:
    void fresh()
    {
        p_.emplace();
        p_->body_limit(limit_);
    }
    state fail(boost::beast::error_code ec)
    {
        ec_ = ec;
        return state::failed;
    }

    std::optional<bt::direct_parser> p_;
    std::uint64_t limit_ = 0;
    bool got_any_ = false;
    boost::beast::error_code ec_;
};

}  // namespace detail
}  // namespace digital_delivery

#endif
