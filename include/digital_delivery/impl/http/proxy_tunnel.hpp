//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_INTERNAL_PROXY_TUNNEL_HPP
#define DIGITAL_DELIVERY_IMPL_INTERNAL_PROXY_TUNNEL_HPP

// The CONNECT handshake of an https:// request through an HTTP proxy (only
// included by impl/http/beast_transport.ipp: it needs Beast).

#include <digital_delivery/error.hpp>
#include <digital_delivery/impl/http/sansio/proxy.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>

#include <string>
#include <string_view>

namespace digital_delivery {
namespace detail {

/// "host:port" as a CONNECT request target (IPv6 in brackets).
inline std::string connect_authority(std::string_view host, std::string_view port)
{
    std::string a;
    if (host.find(':') != std::string_view::npos)
        a.append("[").append(host).append("]");
    else
        a.append(host);
    return a.append(":").append(port);
}

/// Asks the proxy connected to `s` for a tunnel to `authority`. Completes with
/// no error when the proxy answered 2xx (the stream is then a raw tunnel:
/// `buf` is left empty), proxy_auth_required for 407, proxy_tunnel_refused for
/// any other answer or a broken one; `status` gets the proxy's status (0: none).
template <class Socket>
boost::asio::awaitable<error_code> proxy_connect(
    Socket& s,
    boost::beast::flat_buffer& buf,
    const std::string& authority,
    const proxy_endpoint& px,
    unsigned& status
)
{
    namespace http = boost::beast::http;
    constexpr auto tok = boost::asio::as_tuple(boost::asio::use_awaitable);
    status = 0;
    std::string req = "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n";
    if (!px.authorization.empty())
        req += "Proxy-Authorization: " + px.authorization + "\r\n";
    req += "\r\n";
    auto [wec, wn] = co_await boost::asio::async_write(s, boost::asio::buffer(req), tok);
    (void)wn;
    if (wec)
        co_return client_errc::proxy_unreachable;
    http::response_parser<http::empty_body> p;
    p.skip(true);  // a CONNECT response has no body we read
    p.header_limit(16 * 1024);
    auto [rec, rn] = co_await http::async_read_header(s, buf, p, tok);
    (void)rn;
    if (rec)
        co_return client_errc::proxy_tunnel_refused;
    status = p.get().result_int();
    if (status == 407 || status == 401)  // (tinyproxy answers wrong credentials with 401)
        co_return client_errc::proxy_auth_required;
    if (status < 200 || status > 299)
        co_return client_errc::proxy_tunnel_refused;
    buf.consume(buf.size());
    co_return error_code{};
}

}  // namespace detail
}  // namespace digital_delivery

#endif
