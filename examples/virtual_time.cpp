//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// Testing code that uses the library, without sockets and without waiting:
// testing::fake_transport answers the requests, testing::virtual_clock holds
// the library's time still until the test moves it on. This program checks
// that a 429 with "Retry-After: 30" is sent again exactly 30 s later, and
// that a caller's deadline ends a request that never gets an answer; it runs
// in a few milliseconds. Exit status 0 when every check holds.
//
// Quoted in docs/testing.md.

#include <digital_delivery.hpp>
#include <digital_delivery/testing/fake_transport.hpp>
#include <digital_delivery/testing/virtual_clock.hpp>

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>

namespace dd = digital_delivery;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

int failures = 0;

void check(bool ok, const char* what)
{
    std::printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
    failures += ok ? 0 : 1;
}

const char* const order_json =
    R"({"order":{"id":"o1","name":"#1001","email":"ada@example.com","phone":null,"financial_status":"paid",)"
    R"("fulfillment_status":null,"total_price":"9.00","currency":"EUR","created_at":"2024-05-01T12:00:00Z",)"
    R"("download_count":0}})";

}  // namespace

int main()
{
    //[virtual_time_retry_after
    asio::io_context ioc;
    auto fake = std::make_shared<dd::testing::fake_transport>(ioc.get_executor());
    dd::client client(fake, {.base_url = "https://dd.test/api/v1/external", .api_key = "test-key"});

    fake->expect_any().respond(429, R"({"error":"Rate limit exceeded"})").header("Retry-After", "30");
    fake->expect_any().respond(200, order_json);

    dd::testing::virtual_clock clock;  // the library's time stands still from here
    std::optional<dd::error_code> result;
    dd::async_get_order(client, "o1", [&](dd::error_code ec, dd::order) { result = ec; });

    clock.run_for(ioc, 29s, 1s);  // runs what is due while time moves on by 29 s
    check(fake->requests().size() == 1 && !result, "not sent again before Retry-After");
    clock.run_for(ioc, 1s);
    check(fake->requests().size() == 2 && result && !*result, "sent again when Retry-After ended, and answered");
    //]

    //[virtual_time_deadline
    fake->expect_any().hang();  // never answers
    std::optional<dd::error_code> late;
    dd::request_options opts{.deadline = clock.now() + 10s};
    dd::async_get_order(client, "o1", opts, [&](dd::error_code ec, dd::order) { late = ec; });
    clock.run_for(ioc, 9s, 1s);
    check(!late, "still waiting before the deadline");
    clock.run_for(ioc, 1s);
    check(late && *late == dd::condition::timeout, "ends with a timeout at the deadline");
    //]

    std::printf("%d check(s) failed\n", failures);
    return failures == 0 ? 0 : 1;
}
