// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Shared harness of the client-against-sandbox integration tests: a store of
// its own in the program's one digital-delivery-sandbox process (created with
// the given options), an io_context, the Beast transport and a client, plus
// helpers that run one operation to completion and talk to the sandbox-only
// endpoints (/sandbox/...) and the storage through the transport.
#ifndef DIGITAL_DELIVERY_TESTS_INTEGRATION_SANDBOX_HARNESS_HPP
#define DIGITAL_DELIVERY_TESTS_INTEGRATION_SANDBOX_HARNESS_HPP

#include <digital_delivery.hpp>
#include <digital_delivery/beast_transport.hpp>
#include <digital_delivery/raw_request.hpp>

#include "run.hpp"
#include "sandbox_process.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dd = digital_delivery;
namespace asio = boost::asio;
namespace json = boost::json;

namespace dd_integ {

using namespace std::chrono_literals;

/// Runs the io_context until `fut` is ready (the Beast transport keeps idle
/// pooled connections with timers, so ioc.run() would not return early).
template <class T>
T wait_for(asio::io_context& ioc, std::future<T>& fut)
{
    return dd_test::wait(ioc, fut);
}

/// At the end of the program: no request that reached a sandbox_process had a
/// malformed JSON body, unless a test said it sent one (expect_malformed_bodies).
/// A view of a temporary string in a request model would send freed memory,
/// which the sandbox refuses as "Malformed JSON body": this catches it at run
/// time in whatever the compile-time guard (dd::string_ref) cannot see.
class malformed_body_check : public ::testing::Environment
{
public:
    static inline std::size_t expected = 0;

    void TearDown() override
    {
        const auto lines = dd_test::sandbox_request_log::lines_containing("Malformed JSON body");
        EXPECT_EQ(lines.size(), expected) << "requests with a malformed body in " << dd_test::sandbox_request_log::path()
                                          << (lines.empty() ? std::string() : ", the first: " + lines.front());
        if (lines.size() == expected)
            std::filesystem::remove(dd_test::sandbox_request_log::path());
    }
};
inline ::testing::Environment* const malformed_body_check_env =
    ::testing::AddGlobalTestEnvironment(new malformed_body_check);

/// A test that sends malformed bodies on purpose says how many.
inline void expect_malformed_bodies(std::size_t n) { malformed_body_check::expected += n; }

/// A sandbox store, an io_context, a Beast transport and a client of that store.
struct sandbox_env
{
    dd_test::sandbox_process::store store;
    asio::io_context ioc;
    dd::beast_transport transport{ioc.get_executor(), dd::beast_transport_params{}};
    dd::client client;

    /// A new store with these sandbox options (the command line's store flags)
    /// and API key.
    sandbox_env(std::vector<std::string> options, std::string api_key, dd::client_params params = {})
        : store(dd_test::sandbox_process::shared().create_store(std::move(options), std::move(api_key))),
          client(make_client(std::move(params)))
    {
    }

    dd::client make_client(dd::client_params p)
    {
        p.base_url = store.base_url;
        if (p.api_key.empty())
            p.api_key = store.api_key;
        return dd::client(transport, std::move(p));
    }

    /// The base of this store's presigned storage URLs.
    std::string public_url() const { return store.origin + "/stores/" + store.id; }

    /// Runs `f(token)` (a request function call with the given token) to
    /// completion with as_tuple(use_awaitable); returns the tuple.
    template <class F>
    auto run(F&& f)
    {
        auto fut = asio::co_spawn(ioc, f(asio::as_tuple(asio::use_awaitable)), asio::use_future);
        return wait_for(ioc, fut);
    }

    /// Sends one request straight through the transport (no client pipeline).
    dd::http_response send(dd::http_request req)
    {
        auto prom = std::make_shared<std::promise<std::pair<dd::error_code, dd::http_response>>>();
        auto fut = prom->get_future();
        transport.async_send(std::move(req), [prom](dd::error_code ec, dd::http_response r) {
            prom->set_value({ec, std::move(r)});
        });
        auto [ec, r] = wait_for(ioc, fut);
        if (ec)
            throw std::runtime_error("transport error: " + ec.message());
        return r;
    }

    struct json_response
    {
        unsigned status = 0;
        json::value body;
        dd::http_headers headers;
    };

    /// A request to a sandbox-only endpoint (path from the origin, e.g.
    /// "/sandbox/purchases"), authenticated with X-Auth-Token.
    json_response sandbox(dd::http_method m, const std::string& path, std::optional<json::value> body = std::nullopt)
    {
        dd::http_request req;
        req.method = m;
        req.url = store.origin + path;
        req.headers.add("X-Auth-Token", store.api_key);
        req.headers.add("Accept", "application/json");
        if (body)
        {
            req.headers.add("Content-Type", "application/json");
            req.body = json::serialize(*body);
        }
        auto r = send(std::move(req));
        json_response out;
        out.status = r.status;
        out.headers = std::move(r.headers);
        if (!r.body.empty())
            out.body = json::parse(r.body);
        return out;
    }

    /// POST /sandbox/purchases; returns the new order's id (fails the test otherwise).
    std::string purchase(json::object body)
    {
        auto r = sandbox(dd::http_method::post, "/sandbox/purchases", json::value(std::move(body)));
        EXPECT_EQ(r.status, 201u) << json::serialize(r.body);
        if (r.status != 201)
            return {};
        return std::string(r.body.at("order").at("id").as_string());
    }

    /// GET /sandbox/outbox: the queued emails.
    json::array outbox()
    {
        auto r = sandbox(dd::http_method::get, "/sandbox/outbox");
        EXPECT_EQ(r.status, 200u);
        return r.body.at("emails").as_array();
    }

    /// PUTs `body` to an upload handle, with its headers (optionally changed).
    dd::http_response put_upload(const dd::upload_handle& h, std::string body, const dd::http_headers* headers = nullptr)
    {
        dd::http_request req;
        req.method = dd::http_method::put;
        req.url = h.url;
        req.headers = headers ? *headers : h.headers;
        req.body = std::move(body);
        return send(std::move(req));
    }

    /// A plain GET of an absolute URL (signed download URLs).
    dd::http_response get_url(const std::string& url)
    {
        dd::http_request req;
        req.method = dd::http_method::get;
        req.url = url;
        return send(std::move(req));
    }
};

inline dd::timestamp now_ts() { return std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now()); }

/// "<message>" found as diagnostics::server_message or one of server_errors.
inline bool server_said(const dd::diagnostics& d, const std::string& message)
{
    if (d.server_message == message)
        return true;
    for (const auto& e : d.server_errors)
        if (e == message)
            return true;
    return false;
}

}  // namespace dd_integ

#endif
