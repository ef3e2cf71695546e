// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// async_add_assets / async_remove_assets on the fake transport.
#include "fixtures.hpp"

#include <digital_delivery/asset_edits.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>

using namespace fixtures;

namespace {

std::string product(const std::vector<std::string>& ids, const std::string& updated = "2024-05-01T12:00:00Z")
{
    std::string assets;
    for (const auto& id : ids)
    {
        if (!assets.empty())
            assets += ',';
        assets += R"({"id":")" + id +
                  R"(","type":"external","name":null,"filename":null,"external_url":"https://x/y","content_type":null,"byte_size":0,"created_at":"2024-05-01T12:00:00Z"})";
    }
    return R"({"digital_product":{"id":"dp1","store_product_id":7,"store_variant_id":null,"assets":[)" + assets +
           R"(],"upsert_always":false,"custom_message":null,"preorder_enabled":false,"preorder_launch_date":null,)"
           R"("preorder_subject":null,"preorder_heading":null,"preorder_description":null,)"
           R"("created_at":"2024-05-01T12:00:00Z","updated_at":")" +
           updated + R"("}})";
}

class asset_edits_test : public client_test
{
protected:
    std::string dp = target("/digital_products/dp1");

    std::vector<std::string> ids_of(const dd::digital_product& p)
    {
        std::vector<std::string> v;
        for (auto& a : p.assets)
            v.push_back(a.id);
        return v;
    }
};

TEST_F(asset_edits_test, add_reads_rechecks_and_patches_the_full_list)
{
    fake->expect(dd::http_method::get, dp).respond(200, product({"a1", "a2"}));
    fake->expect(dd::http_method::get, dp).respond(200, product({"a1", "a2"}));
    fake->expect(dd::http_method::patch, dp).respond(200, product({"a1", "a2", "a3"}, "2024-05-02T00:00:00Z"));
    const dd::http_headers::field trace[] = {{"X-Trace", "t"}};
    const dd::request_options ro{.extra_headers = trace};
    const std::string ids1[] = {"a2", "a3", "a3"};
    auto [ec, p] = run([&](auto tok) { return dd::async_add_assets(client, "dp1", ids1, ro, tok); });
    ASSERT_FALSE(ec) << ec.message();
    EXPECT_EQ(ids_of(p), (std::vector<std::string>{"a1", "a2", "a3"}));
    const auto reqs = fake->requests();
    ASSERT_EQ(reqs.size(), 3u);
    EXPECT_EQ(reqs[2].body, R"({"digital_product":{"asset_ids":["a1","a2","a3"]}})");
    for (const auto& r : reqs)
        EXPECT_EQ(r.headers.find("X-Trace").value_or(""), "t");
    EXPECT_TRUE(fake->done()) << ::testing::PrintToString(fake->mismatches());
}

TEST_F(asset_edits_test, remove_without_recheck)
{
    fake->expect(dd::http_method::get, dp).respond(200, product({"a1", "a2", "a3"}));
    fake->expect(dd::http_method::patch, dp).respond(200, product({"a1", "a3"}));
    const std::string ids2[] = {"a2", "zz"};
    auto [ec, p] = run([&](auto tok) {
        return dd::async_remove_assets(client, "dp1", ids2, dd::asset_edit_options{.recheck_before_patch = false}, tok);
    });
    ASSERT_FALSE(ec) << ec.message();
    EXPECT_EQ(last_request().body, R"({"digital_product":{"asset_ids":["a1","a3"]}})");
    EXPECT_TRUE(fake->done());
}

TEST_F(asset_edits_test, no_change_sends_no_patch)
{
    fake->expect(dd::http_method::get, dp).respond(200, product({"a1"}));
    const std::string ids3[] = {"a1"};
    auto [ec, p] = run([&](auto tok) { return dd::async_add_assets(client, "dp1", ids3, tok); });
    EXPECT_FALSE(ec);
    EXPECT_EQ(fake->requests().size(), 1u);
}

TEST_F(asset_edits_test, concurrent_change_seen_by_the_recheck_writes_nothing)
{
    fake->expect(dd::http_method::get, dp).respond(200, product({"a1"}));
    fake->expect(dd::http_method::get, dp).respond(200, product({"a1", "b9"}, "2024-05-01T12:00:01Z"));
    const std::string ids4[] = {"a2"};
    auto [ec, p] = run([&](auto tok) { return dd::async_add_assets(client, "dp1", ids4, diag, tok); });
    EXPECT_EQ(ec, dd::workflow_errc::concurrent_modification);
    EXPECT_EQ(ids_of(p), (std::vector<std::string>{"a1", "b9"})) << "the re-read product";
    EXPECT_FALSE(diag.client_message.empty());
    EXPECT_EQ(fake->requests().size(), 2u) << "no PATCH";
}

TEST_F(asset_edits_test, updated_at_change_alone_is_a_concurrent_change)
{
    fake->expect(dd::http_method::get, dp).respond(200, product({"a1"}));
    fake->expect(dd::http_method::get, dp).respond(200, product({"a1"}, "2024-05-01T12:00:09Z"));
    const std::string ids5[] = {"a2"};
    auto [ec, p] = run([&](auto tok) { return dd::async_add_assets(client, "dp1", ids5, tok); });
    EXPECT_EQ(ec, dd::workflow_errc::concurrent_modification);
}

TEST_F(asset_edits_test, patch_result_other_than_intended_is_reported)
{
    fake->expect(dd::http_method::get, dp).respond(200, product({"a1"}));
    fake->expect(dd::http_method::get, dp).respond(200, product({"a1"}));
    fake->expect(dd::http_method::patch, dp).respond(200, product({"a1", "a2", "c7"}));
    const std::string ids6[] = {"a2"};
    auto [ec, p] = run([&](auto tok) { return dd::async_add_assets(client, "dp1", ids6, tok); });
    EXPECT_EQ(ec, dd::workflow_errc::concurrent_modification);
    EXPECT_EQ(ids_of(p).size(), 3u) << "the PATCH result is handed back";
}

TEST_F(asset_edits_test, errors_and_invalid_ids)
{
    fake->expect(dd::http_method::get, dp).respond(404, R"({"error":"Digital product not found"})");
    const std::string ids7[] = {"a2"};
    auto [ec, p] = run([&](auto tok) { return dd::async_add_assets(client, "dp1", ids7, tok); });
    EXPECT_EQ(ec, dd::api_errc::digital_product_not_found);
    const std::string ids8[] = {""};
    auto [ec2, p2] = run([&](auto tok) { return dd::async_add_assets(client, "dp1", ids8, tok); });
    EXPECT_EQ(ec2, dd::client_errc::invalid_argument);
    const std::string ids9[] = {"a1"};
    auto [ec3, p3] = run([&](auto tok) { return dd::async_add_assets(client, "", ids9, tok); });
    EXPECT_EQ(ec3, dd::client_errc::invalid_path_parameter);
    EXPECT_EQ(fake->requests().size(), 1u);
}

TEST_F(asset_edits_test, cancellation_before_patch_writes_nothing)
{
    fake->expect(dd::http_method::get, dp).respond(200, product({"a1"}));
    fake->expect(dd::http_method::get, dp).hang();
    asio::cancellation_signal sig;
    dd::error_code got;
    const std::string ids10[] = {"a2"};
    dd::async_add_assets(client, "dp1", ids10, asio::bind_cancellation_slot(sig.slot(), [&](dd::error_code ec, dd::digital_product) {
                             got = ec;
                         }));
    for (int i = 0; i < 50 && fake->requests().size() < 2; ++i)
        ioc.run_one();
    sig.emit(asio::cancellation_type::terminal);
    dd_test::run(ioc);
    EXPECT_EQ(got, asio::error::operation_aborted);
    EXPECT_EQ(fake->requests().size(), 2u);
}

TEST(asset_edit_lists, pure)
{
    using dd::detail::asset_edit_kind;
    using v = std::vector<std::string>;
    EXPECT_EQ(dd::detail::edited_asset_ids(v{"a", "b"}, v{"c", "a", "c"}, asset_edit_kind::add), (v{"a", "b", "c"}));
    EXPECT_EQ(dd::detail::edited_asset_ids(v{"a", "b", "c"}, v{"b", "x"}, asset_edit_kind::remove), (v{"a", "c"}));
    EXPECT_EQ(dd::detail::edited_asset_ids(v{}, v{}, asset_edit_kind::add), v{});
}

}  // namespace
