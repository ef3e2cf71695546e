// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The package works: its headers are found, Boost.JSON and Boost.URL link, and
// a request runs through the client against the public test double.
#include <digital_delivery.hpp>
#include <digital_delivery/testing/fake_transport.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <cstdio>
#include <memory>
#include <string>

namespace dd = digital_delivery;
namespace asio = boost::asio;

int main()
{
    asio::io_context ioc;
    auto fake = std::make_shared<dd::testing::fake_transport>(ioc.get_executor());
    dd::client client(fake, {.base_url = "https://dd.example/api/v1/external", .api_key = "k"});
    fake->expect(dd::http_method::get, "/api/v1/external/orders/o1")
        .respond(200, R"({"order":{"id":"o1","name":"#1","email":"a@b.c","phone":null,"financial_status":"paid",)"
                      R"("fulfillment_status":null,"total_price":"1.00","currency":"EUR",)"
                      R"("created_at":"2024-01-01T00:00:00Z","download_count":0}})");
    std::string name;
    asio::co_spawn(
        ioc, [&]() -> asio::awaitable<void> { name = (co_await dd::async_get_order(client, "o1")).name; },
        asio::detached);
    ioc.run();
    std::printf("digital_delivery %s: order %s\n", DIGITAL_DELIVERY_VERSION_STRING, name.c_str());
    return name == "#1" && fake->done() ? 0 : 1;
}
