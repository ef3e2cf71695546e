// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// `ddctl assets upload` SIGKILLed at 20 seeded moments, then run again: after
// the recovering run each file has exactly one asset, whose bytes (read back
// through a purchase's download entry) have the file's SHA-256, and no asset
// is left without its file.
//
// The moments are hit exactly: ddctl talks to the sandbox through two relays
// of this process (kill_relay.hpp: the API's, and the storage's: the sandbox's
// --public-url), which kill ddctl when a given request passes: before POST
// /assets reaches the sandbox; after it did, before its answer reaches ddctl;
// before the PUT; after N bytes of the PUT's body (N seeded); after the PUT,
// before its answer; before the GET that commits.
#include "kill_relay.hpp"
#include "sandbox_process.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <csignal>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;
namespace json = boost::json;
using dd_test::sandbox_process;
using namespace dd_test;

namespace {

enum class moment
{
    before_create,    // POST /assets held: the sandbox never sees it
    create_answered,  // the sandbox created the asset; its answer never reaches ddctl
    before_put,       // the create's answer arrived; the PUT held
    during_put,       // after `offset` bytes of the PUT went to the storage
    put_answered,     // the storage took the body; its answer never reaches ddctl
    before_commit,    // the GET that confirms the asset held
};
const char* name_of(moment m)
{
    static const char* names[] = {"before_create", "create_answered", "before_put", "during_put", "put_answered", "before_commit"};
    return names[static_cast<int>(m)];
}

// The decision of the relays for one moment.
kill_decision decide(moment at, std::size_t offset, bool storage, std::string_view head)
{
    const bool create = !storage && head.starts_with("POST ") && head.find("/assets HTTP/1.1") != std::string_view::npos;
    const bool get = !storage && head.starts_with("GET ") && head.find("/assets/") != std::string_view::npos;
    const bool put = storage && head.starts_with("PUT ");
    if ((create && at == moment::before_create) || (get && at == moment::before_commit) || (put && at == moment::before_put))
        return {kill_decision::before};
    if ((create && at == moment::create_answered) || (put && at == moment::put_answered))
        return {kill_decision::on_answer};
    if (put && at == moment::during_put)
        return {kill_decision::after_bytes, offset};
    return {};
}

// ddctl, and a failure for any exit other than 0 and SIGKILL; its status and stdout.
std::pair<int, std::string> run(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                                const fs::path& dir, kill_plan& p)
{
    auto r = run_ddctl(DDCTL_EXE, args, env, dir, p);
    if (r.status != 0 && r.status != 128 + SIGKILL)
        ADD_FAILURE() << "ddctl " << args[0] << " " << args[1] << " exited " << r.status << ": " << r.err;
    return {r.status, r.out};
}

}  // namespace

TEST(ddctl_journal, killed_at_twenty_seeded_moments_then_recovered)
{
    kill_plan p;
    kill_relay api(false, p), storage(true, p);
    // The sandbox's presigned URLs point at the storage relay.
    sandbox_process sb({"--no-rate-limit", "--public-url", "http://127.0.0.1:" + std::to_string(storage.port())});
    api.set_target(port_of_origin(sb.origin()));
    storage.set_target(port_of_origin(sb.origin()));
    const auto store = sb.create_store({"--no-rate-limit"}, "journal-key-" + std::to_string(::getpid()));
    kill_temp_dir home("ddctl-journal");
    const std::map<std::string, std::string> env{
        {"DIGITAL_DELIVERY_BASE_URL", "http://127.0.0.1:" + std::to_string(api.port()) + path_of(store.base_url)},
        {"DIGITAL_DELIVERY_API_KEY", store.api_key},
        {"HOME", home.path.string()},
        {"XDG_CONFIG_HOME", home.path.string()},
        {"XDG_STATE_HOME", (home.path / "state").string()},
        {"PATH", "/usr/bin:/bin"}};

    const unsigned seed = 20261205;
    std::mt19937 rng(seed);
    std::map<std::string, std::string> sha_of;  // filename -> SHA-256 of its content
    constexpr int moments = 20;
    for (int i = 0; i < moments; ++i)
    {
        const std::string filename = "file-" + std::to_string(i) + ".bin";
        const fs::path file = home.path / filename;
        std::string data(std::uniform_int_distribution<std::size_t>(64 * 1024, 256 * 1024)(rng), '\0');
        for (auto& c : data)
            c = static_cast<char>(rng());
        std::ofstream(file, std::ios::binary) << data;
        sha_of[filename] = sha_hex(data);

        const auto at = static_cast<moment>(i % 6);
        const auto offset = std::uniform_int_distribution<std::size_t>(1, data.size())(rng);
        p.decide = [at, offset](bool storage, std::string_view head) { return decide(at, offset, storage, head); };
        p.fired = false;
        p.armed = true;
        const std::string what = std::string(name_of(at)) + " (moment " + std::to_string(i) + ", offset " +
                                 std::to_string(offset) + ")";
        auto [killed, out1] = run({"assets", "upload", file.string(), "--no-progress", "--rate-limit-points", "100000"}, env, home.path, p);
        p.armed = false;
        EXPECT_TRUE(p.fired) << what << ": the moment was never reached";
        EXPECT_EQ(killed, 128 + SIGKILL) << what;
        auto [status, out2] = run({"assets", "upload", file.string(), "--no-progress", "-o", "json", "--rate-limit-points", "100000"}, env, home.path, p);
        ASSERT_EQ(status, 0) << what;
        EXPECT_EQ(json::parse(out2).at("filename").as_string(), filename) << what;
    }

    // Every asset of the store: exactly one per file, none without its file.
    const auto list = sb.request("GET", path_of(store.base_url) + "/assets?per_page=250", {}, store.api_key);
    ASSERT_EQ(list.status, 200) << list.body;
    std::map<std::string, std::string> asset_of;  // filename -> id
    const json::value listed = json::parse(list.body);
    for (const auto& a : listed.at("assets").as_array())
    {
        const std::string f(a.at("filename").as_string());
        EXPECT_TRUE(asset_of.emplace(f, std::string(a.at("id").as_string())).second) << "two assets for " << f;
    }
    EXPECT_EQ(asset_of.size(), static_cast<std::size_t>(moments));
    // Each asset's bytes, as a buyer downloads them: a product with every
    // asset, one purchase, its download entries.
    json::array ids;
    for (const auto& [f, id] : asset_of)
        ids.push_back(json::value(id));
    const auto product = sb.request("POST", path_of(store.base_url) + "/digital_products",
                                    json::serialize(json::object{{"digital_product", json::object{{"store_product_id", 424242},
                                                                                                  {"asset_ids", ids}}}}),
                                    store.api_key);
    ASSERT_EQ(product.status, 201) << product.body;
    const auto order = sb.request("POST", "/sandbox/purchases",
                                  R"({"store_product_id": 424242, "email": "ada@example.com"})", store.api_key);
    ASSERT_EQ(order.status, 201) << order.body;
    const std::string order_id(json::parse(order.body).at("order").at("id").as_string());
    const auto downloads = sb.request("GET", path_of(store.base_url) + "/orders/" + order_id + "/downloads", {}, store.api_key);
    ASSERT_EQ(downloads.status, 200) << downloads.body;
    std::set<std::string> checked;
    const json::value entries = json::parse(downloads.body);
    for (const auto& d : entries.at("downloads").as_array())
    {
        const std::string f(d.at("file_name").as_string());
        ASSERT_TRUE(d.at("download_url").is_string()) << f << " has no download URL (not uploaded)";
        const auto [status, bytes] = http_get(std::string(d.at("download_url").as_string()));
        EXPECT_EQ(status, 200) << f << ": " << bytes;
        EXPECT_EQ(sha_hex(bytes), sha_of[f]) << f << ": the downloaded bytes differ";
        checked.insert(f);
    }
    EXPECT_EQ(checked.size(), static_cast<std::size_t>(moments));
}
