// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// A consumer: umbrella header + the public test double, built header-only
// (target digital_delivery::digital_delivery) and against the compiled library
// (digital_delivery::compiled).
#include <digital_delivery.hpp>
#include <digital_delivery/testing/fake_transport.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <cstdio>
#include <string_view>

// The build system's version of the package (CMake or pkg-config) is the headers'.
static_assert(std::string_view(DIGITAL_DELIVERY_VERSION_STRING) == DD_EXPECTED_VERSION);
static_assert(DIGITAL_DELIVERY_VERSION ==
              DIGITAL_DELIVERY_VERSION_MAJOR * 100000 + DIGITAL_DELIVERY_VERSION_MINOR * 100 + DIGITAL_DELIVERY_VERSION_PATCH);

namespace dd = digital_delivery;
namespace asio = boost::asio;

int other_translation_unit();

int main()
{
    asio::io_context ioc;
    auto fake = std::make_shared<dd::testing::fake_transport>(ioc.get_executor());
    dd::client client(fake, {.base_url = "https://dd.example/api/v1/external", .api_key = "k"});
    fake->expect(dd::http_method::get, "/api/v1/external/orders/o1")
        .respond(200, R"({"order":{"id":"o1","name":"#1","email":"a@b.c","phone":null,"financial_status":"paid",)"
                      R"("fulfillment_status":null,"total_price":"1.00","currency":"EUR","created_at":"2024-01-01T00:00:00Z","download_count":0}})");
    std::string name;
    asio::co_spawn(ioc, [&]() -> asio::awaitable<void> { name = (co_await dd::async_get_order(client, "o1")).name; }, asio::detached);
    ioc.run();
    const int other = other_translation_unit();
    std::printf("consumer: order %s, other TU %d\n", name.c_str(), other);
    return name == "#1" && other == 42 && fake->done() ? 0 : 1;
}
