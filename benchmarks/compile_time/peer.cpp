// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The translation unit a user would write instead of using the library: one
// co_awaited HTTPS GET over Beast with TLS, the JSON body decoded with
// boost::json::value_to into a described struct (issue 25, point 4).
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/describe.hpp>
#include <boost/json.hpp>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;

struct order
{
    std::string id;
    std::string name;
    std::string email;
    std::optional<std::string> phone;
    std::optional<std::string> financial_status;
    std::optional<std::string> fulfillment_status;
    std::optional<std::string> total_price;
    std::optional<std::string> currency;
    std::string created_at;
    std::int64_t download_count = 0;
};
BOOST_DESCRIBE_STRUCT(
    order,
    (),
    (id, name, email, phone, financial_status, fulfillment_status, total_price, currency, created_at, download_count)
)

asio::awaitable<order> get_order(asio::ssl::context& tls, std::string host, std::string key, std::string id)
{
    auto ex = co_await asio::this_coro::executor;
    asio::ip::tcp::resolver resolver(ex);
    beast::ssl_stream<beast::tcp_stream> stream(ex, tls);
    if (!SSL_set_tlsext_host_name(stream.native_handle(), host.c_str()))
        throw std::runtime_error("SNI");
    stream.set_verify_callback(asio::ssl::host_name_verification(host));
    auto endpoints = co_await resolver.async_resolve(host, "443", asio::use_awaitable);
    beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(30));
    co_await beast::get_lowest_layer(stream).async_connect(endpoints, asio::use_awaitable);
    co_await stream.async_handshake(asio::ssl::stream_base::client, asio::use_awaitable);

    http::request<http::empty_body> req{http::verb::get, "/api/v1/external/orders/" + id, 11};
    req.set(http::field::host, host);
    req.set(http::field::authorization, "Bearer " + key);
    req.set(http::field::accept, "application/json");
    co_await http::async_write(stream, req, asio::use_awaitable);

    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    co_await http::async_read(stream, buffer, res, asio::use_awaitable);
    if (res.result() != http::status::ok)
        throw std::runtime_error("HTTP " + std::to_string(res.result_int()));
    co_return json::value_to<order>(json::parse(res.body()));
}

asio::awaitable<void> print_order(asio::ssl::context& tls, std::string host)
{
    order o = co_await get_order(tls, std::move(host), "key", "o1");
    std::printf("%s\n", o.name.c_str());
}

int main(int argc, char** argv)
{
    asio::io_context ioc;
    asio::ssl::context tls(asio::ssl::context::tls_client);
    tls.set_default_verify_paths();
    tls.set_verify_mode(asio::ssl::verify_peer);
    asio::co_spawn(ioc, print_order(tls, argc > 1 ? argv[1] : "api.example.com"), asio::detached);
    ioc.run();
}
