//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_TESTING_SANDBOX_PROBE_HPP
#define DIGITAL_DELIVERY_TESTING_SANDBOX_PROBE_HPP

/// \file
/// Whether a base URL is served by digital-delivery-sandbox, and the link of an
/// order's hosted download page there (docs/sandbox.md, "The pages"). Sans-io:
/// these build the requests and read the answers; send them with any transport
/// (`dd::async_transport_send`).
///
/// \code
/// auto [ec, health] = co_await dd::async_transport_send(t, dd::testing::sandbox_health_request(base_url),
///                                                       asio::as_tuple(asio::deferred));
/// if (!ec && dd::testing::answers_as_the_sandbox(health)) { ... }
/// \endcode
///
/// The sandbox is recognised by what only it says: its `GET /sandbox/health`
/// answers 200 with `Server: digital-delivery-sandbox` AND a JSON body whose
/// "service" is "digital-delivery-sandbox". A health route of another service,
/// or a proxy's catch-all route answering 200 to any path, says neither.

#include <digital_delivery/http_message.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <string>
#include <string_view>

namespace digital_delivery::testing {

/// The name the sandbox gives in its Server header and its health body.
inline constexpr std::string_view sandbox_service_name = "digital-delivery-sandbox";

/// The origin of a URL: `scheme://host[:port]` (the URL itself when it has no path).
/// \param url An absolute URL, e.g. a client's base URL.
/// \return The URL up to (not including) the first '/' after "://".
inline std::string url_origin(std::string_view url)
{
    const auto scheme_end = url.find("://");
    const auto path = url.find('/', scheme_end == std::string_view::npos ? 0 : scheme_end + 3);
    return std::string(path == std::string_view::npos ? url : url.substr(0, path));
}

/// `GET <origin of base_url>/sandbox/health`, without an API key (the sandbox
/// needs none; another service is given none), with a 10 s timeout.
/// \param base_url The client's base URL (`.../api/v1/external`).
/// \return The request to send.
inline http_request sandbox_health_request(std::string_view base_url)
{
    http_request req;
    req.method = http_method::get;
    req.url = url_origin(base_url) + "/sandbox/health";
    req.headers.add("Accept", "application/json");
    req.timeout = std::chrono::seconds(10);
    return req;
}

/// Whether an answer to sandbox_health_request() comes from the sandbox: status
/// 200, `Server: digital-delivery-sandbox` and a JSON object whose "service" is
/// that name. Anything else (another status, a body that is not JSON or names
/// no service, another Server) is not.
/// \param r The answer.
/// \return True for the sandbox's answer only.
inline bool answers_as_the_sandbox(const http_response& r)
{
    if (r.status != 200 || r.headers.find("Server").value_or("") != sandbox_service_name)
        return false;
    boost::system::error_code ec;
    const boost::json::value body = boost::json::parse(r.body, ec);
    const auto* o = ec ? nullptr : body.if_object();
    const auto* service = o ? o->if_contains("service") : nullptr;
    return service && service->is_string() && service->get_string() == sandbox_service_name;
}

/// `GET <origin>/sandbox/orders/{order_id}/download_page` with the store's API
/// key (the id percent-encoded), with a 10 s timeout.
/// \param base_url The client's base URL.
/// \param api_key The store's API key (sent as X-Auth-Token).
/// \param order_id The order.
/// \return The request to send.
inline http_request sandbox_download_page_request(std::string_view base_url, std::string_view api_key,
                                                  std::string_view order_id)
{
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string id;
    for (const char c : order_id)
    {
        const auto u = static_cast<unsigned char>(c);
        if ((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || c == '-' || c == '_' ||
            c == '.' || c == '~')
            id += c;
        else
            id += {'%', hex[u >> 4], hex[u & 15]};
    }
    http_request req;
    req.method = http_method::get;
    req.url = url_origin(base_url) + "/sandbox/orders/" + id + "/download_page";
    req.headers.add("X-Auth-Token", std::string(api_key));
    req.headers.add("Accept", "application/json");
    req.timeout = std::chrono::seconds(10);
    return req;
}

/// The link of an order's download page from the answer to
/// sandbox_download_page_request(): its "download_page_url", when the answer is
/// a 200 with an http(s) URL.
/// \param r The answer.
/// \return The link, or an empty string.
inline std::string download_page_url_of(const http_response& r)
{
    if (r.status != 200)
        return {};
    boost::system::error_code ec;
    const boost::json::value body = boost::json::parse(r.body, ec);
    const auto* o = ec ? nullptr : body.if_object();
    const auto* url = o ? o->if_contains("download_page_url") : nullptr;
    if (!url || !url->is_string())
        return {};
    const std::string_view s = url->get_string();
    if (!s.starts_with("http://") && !s.starts_with("https://"))
        return {};
    for (const char c : s)
        if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7F)
            return {};  // printed on a terminal: nothing that is not part of a URL
    return std::string(s);
}

}  // namespace digital_delivery::testing

#endif
