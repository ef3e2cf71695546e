// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// A 2 GiB upload recorded: the body streams through the recording transport
// (hashed, never held) and the cassette stays under 10 kB. A program of its
// own, built with optimisation: hashing 2 GiB unoptimised (or under ASan)
// takes minutes.
#include <digital_delivery.hpp>
#include <digital_delivery/testing/cassette.hpp>
#include <digital_delivery/testing/fake_transport.hpp>
#include <digital_delivery/testing/virtual_clock.hpp>
#include <digital_delivery/upload.hpp>

#include "cassette_helpers.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <string>

namespace dd = digital_delivery;
namespace asio = boost::asio;

namespace {

using namespace std::chrono_literals;
using namespace dd_cassette::fixtures;
using dd_cassette::run_virtual;

class cassette_large : public dd_cassette::cassette_fixture
{
};

TEST_F(cassette_large, a_2_gib_upload_records_a_cassette_under_10_kb)
{
    dd::testing::virtual_clock vc;
    constexpr std::uint64_t size = 2147483648u;
    fake->expect(dd::http_method::post, api("/assets")).respond(201, with_upload(static_cast<std::int64_t>(size), vc.system_now() + 1h));
    fake->expect(dd::http_method::put, std::string(dd::testing::fake_transport::target_of(put_url))).respond(200);
    fake->expect(dd::http_method::get, api("/assets/a1")).respond(200, R"({"asset":)" + asset_json(static_cast<std::int64_t>(size)) + "}");
    dd::client c = make_client(recorder(), "key-2gib");
    auto src = std::make_shared<dd_cassette::generated_source>(size, ioc.get_executor());
    const dd::upload_asset_params meta{.filename = "manual.pdf"};
    std::uint64_t progress = 0;
    dd::upload_options uo{.on_progress = [&](const dd::upload_progress& p) { progress = p.bytes_sent; }};
    auto [ec, a] = run_virtual(vc, ioc, dd::async_upload_asset(c, src, meta, std::move(uo), asio::as_tuple(asio::use_awaitable)),
                               std::chrono::minutes(60), std::chrono::milliseconds(1000));
    ASSERT_FALSE(ec) << ec.message();
    EXPECT_EQ(progress, size);
    EXPECT_EQ(a.byte_size, static_cast<std::int64_t>(size));
    const std::string text = file.text();
    RecordProperty("cassette_bytes", static_cast<int>(text.size()));
    EXPECT_LT(text.size(), 10000u) << text;
    EXPECT_NE(text.find(R"("size": 2147483648)"), std::string::npos) << text;
    EXPECT_TRUE(std::regex_search(text, std::regex(R"("sha256": "[0-9a-f]{64}")"))) << text;
}

}  // namespace
