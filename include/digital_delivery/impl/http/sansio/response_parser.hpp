//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_INTERNAL_RESPONSE_PARSER_HPP
#define DIGITAL_DELIVERY_IMPL_INTERNAL_RESPONSE_PARSER_HPP

// Only included from impl/http/beast_transport.ipp (and the fuzz target
// tests/fuzz/fuzz_http_response.cpp): the Beast transport's response parser.

#include <digital_delivery/detail/boost_compat.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/http_message.hpp>

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/optional/optional.hpp>

#include <cstddef>
#include <cstdint>

namespace digital_delivery {
namespace detail {
namespace bt {
namespace beast = boost::beast;
namespace http = boost::beast::http;

// A response parser writing straight into an http_response: no Beast fields
// container, no copy of the header fields or of the body afterwards. The
// fields of a chunked body's trailer are dropped: they never reach
// resp.headers, where one could add or repeat a header the client reads
// (X-RateLimit-Remaining, Retry-After).
class direct_parser : public http::basic_parser<false>
{
public:
    direct_parser()
    {
        resp.headers.reserve(12, 384);
    }
    http_response resp;

    /// put(), except, with a Beast before Boost 1.86, in a chunked body after
    /// need_more with fewer than 5 bytes buffered: then need_more again
    /// without calling Beast. Beast 1.81 resumes a chunked body's last chunk
    /// with BOOST_ASSERT(n >= 5) (boostorg/beast#2861, fixed in 1.86), so a
    /// peer sending "0\r\n" then "\r" in two reads aborted a program built
    /// without NDEBUG (found by tests/fuzz/fuzz_http_response). In a chunked
    /// body that Beast leaves an incomplete chunk header unconsumed, and what
    /// follows it always ends with the last chunk ("0\r\n\r\n" at least), so
    /// waiting for 5 bytes changes nothing else. Only there: a Content-Length
    /// body may end with fewer bytes (a 2-byte body arriving in a read of its
    /// own). A later Beast consumes the last chunk's line itself: there the
    /// wait would never end (detail/boost_compat.hpp).
    std::size_t put_buffered(boost::asio::const_buffer b, error_code& ec)
    {
        if (DIGITAL_DELIVERY_BEAST_LAST_CHUNK_NEEDS_5_BYTES && need_more_ && b.size() < 5 && is_header_done() &&
            chunked())
        {
            ec = http::error::need_more;
            return 0;
        }
        const std::size_t n = put(b, ec);
        need_more_ = ec == http::error::need_more;
        return n;
    }

private:
    bool need_more_ = false;
    bool header_done_ = false;  // what on_field_impl reports from now on is a trailer

    void on_request_impl(http::verb, beast::string_view, beast::string_view, int, error_code&) override {}
    void on_response_impl(int code, beast::string_view, int, error_code& ec) override
    {
        // Beast takes any three digits; an HTTP status is 100-599 (RFC 9110).
        if (code < 100 || code > 599)
            ec = http::error::bad_status;
        resp.status = static_cast<unsigned>(code);
    }
    void on_field_impl(http::field, beast::string_view name, beast::string_view value, error_code&) override
    {
        if (header_done_)
            return;  // a trailer field (Beast before 359, Boost 1.90)
        resp.headers.add(std::string_view(name.data(), name.size()), std::string_view(value.data(), value.size()));
    }
#if DIGITAL_DELIVERY_BEAST_TRAILER_FIELD_IMPL
    void on_trailer_field_impl(http::field, beast::string_view, beast::string_view, error_code&) override {}
#endif
    void on_header_impl(error_code&) override { header_done_ = true; }
    void on_body_init_impl(const boost::optional<std::uint64_t>& len, error_code&) override
    {
        if (len && *len <= (std::uint64_t{1} << 30))
            resp.body.reserve(static_cast<std::size_t>(*len));
    }
    std::size_t on_body_impl(beast::string_view b, error_code&) override
    {
        resp.body.append(b.data(), b.size());
        return b.size();
    }
    void on_chunk_header_impl(std::uint64_t, beast::string_view, error_code&) override {}
    std::size_t on_chunk_body_impl(std::uint64_t, beast::string_view b, error_code&) override
    {
        resp.body.append(b.data(), b.size());
        return b.size();
    }
    void on_finish_impl(error_code&) override {}
};

}  // namespace bt
}  // namespace detail
}  // namespace digital_delivery

#endif
