// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// `ddctl assets check` and `ddctl assets sync` against the sandbox (issue 45):
// a folder with new, same-size-edited, moved and removed files; the flags and
// exit codes of docs/cli.md; and `assets sync` SIGKILLed at 20 seeded moments
// of its traffic (kill_relay.hpp), then run to its end. After each, what a
// buyer gets is checked: every asset of the store linked to a digital product
// that is then bought, every download entry with a download_url, its bytes the
// SHA-256 of exactly one local file, as many assets as files (no two for one
// path, none left behind).
#include "kill_relay.hpp"
#include "sandbox_process.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace dd_test;

namespace {

std::string random_bytes(std::mt19937& rng, std::size_t n)
{
    std::string data(n, '\0');
    for (auto& c : data)
        c = static_cast<char>(rng());
    return data;
}

void write_file(const fs::path& p, const std::string& data)
{
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary | std::ios::trunc) << data;
}

std::string read_file(const fs::path& p)
{
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/// The JSON lines of a ddctl stdout.
std::vector<json::object> json_lines(const std::string& out)
{
    std::vector<json::object> r;
    std::istringstream in(out);
    for (std::string l; std::getline(in, l);)
        if (!l.empty())
        {
            boost::system::error_code ec;
            auto v = json::parse(l, ec);
            if (ec || !v.is_object())
                ADD_FAILURE() << "not a JSON object line: " << l;
            else
                r.push_back(v.as_object());
        }
    return r;
}

/// The "summary" object of `-o json` output (empty when there is none).
json::object summary_of(const std::string& out)
{
    for (auto& o : json_lines(out))
        if (auto* s = o.if_contains("summary"))
            return s->as_object();
    ADD_FAILURE() << "no summary line in: " << out;
    return {};
}

std::int64_t planned(const json::object& summary, const char* kind)
{
    return summary.at("planned").at(kind).to_number<std::int64_t>();
}

/// A store of the sandbox, ddctl's environment for it, and the checks of what
/// a buyer gets.
struct sync_fixture
{
    sandbox_process& sb;
    sandbox_process::store store;
    kill_temp_dir home{"ddctl-sync-home"};
    fs::path tree;
    std::map<std::string, std::string> env;
    kill_plan no_kill;

    sync_fixture(sandbox_process& s, const std::string& api_base, const std::string& key_suffix,
                 std::vector<std::string> store_options = {"--no-rate-limit", "--quota-asset-count", "100000"})
        : sb(s), store(s.create_store(std::move(store_options), "sync-key-" + key_suffix + "-" + std::to_string(::getpid())))
    {
        tree = home.path / "deliverables";
        fs::create_directories(tree);
        env = {{"DIGITAL_DELIVERY_BASE_URL", api_base.empty() ? store.base_url : api_base + path_of(store.base_url)},
               {"DIGITAL_DELIVERY_API_KEY", store.api_key},
               {"HOME", home.path.string()},
               {"XDG_CONFIG_HOME", home.path.string()},
               {"XDG_STATE_HOME", (home.path / "state").string()},
               {"PATH", "/usr/bin:/bin"}};
    }

    /// ddctl with the rate limit out of the way (the store has none).
    ddctl_run ddctl(std::vector<std::string> args, kill_plan* p = nullptr)
    {
        args.insert(args.end(), {"--no-progress", "--rate-limit-points", "1000000", "--rate-limit-store", "in-process"});
        return run_ddctl(DDCTL_EXE, args, env, home.path, p ? *p : no_kill);
    }

    std::string api(const std::string& path) const { return path_of(store.base_url) + path; }

    json::value get(const std::string& path)
    {
        const auto r = sb.request("GET", api(path), {}, store.api_key);
        EXPECT_EQ(r.status, 200) << path << ": " << r.body;
        return json::parse(r.body);
    }

    std::int64_t points_used() { return usage("points"); }

    /// A counter of the sandbox's GET /sandbox/usage ("points", "requests").
    std::int64_t usage(const char* counter)
    {
        const auto r = sb.request("GET", "/sandbox/usage", {}, store.api_key);
        return json::parse(r.body).at(counter).to_number<std::int64_t>();
    }

    /// The files and folders under `dir` (empty when it does not exist).
    static std::vector<std::string> entries_under(const fs::path& dir)
    {
        std::vector<std::string> r;
        std::error_code ec;
        for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
            r.push_back(fs::relative(it->path(), dir).string());
        return r;
    }

    /// Every asset of the store (every page).
    std::vector<json::object> assets()
    {
        std::vector<json::object> all;
        for (int page = 1;; ++page)
        {
            const auto v = get("/assets?per_page=250&page=" + std::to_string(page));
            const auto& items = v.at("assets").as_array();
            for (const auto& a : items)
                all.push_back(a.as_object());
            if (items.size() < 250)
                return all;
        }
    }

    /// The local files: relative path -> SHA-256.
    std::map<std::string, std::string> local_files() const
    {
        std::map<std::string, std::string> r;
        for (auto it = fs::recursive_directory_iterator(tree); it != fs::recursive_directory_iterator(); ++it)
            if (it->path().filename().string().starts_with("."))  // hidden: not synced
            {
                if (it->is_directory())
                    it.disable_recursion_pending();
            }
            else if (it->is_regular_file())
                r[fs::relative(it->path(), tree).string()] = sha_hex(read_file(it->path()));
        return r;
    }

    /// What a buyer gets equals the folder: every asset of the store in one
    /// digital product, bought; each download entry has a URL whose bytes are
    /// one local file's, each local file exactly once.
    void expect_store_holds_the_folder(const std::string& what, std::int64_t store_product_id)
    {
        const auto local = local_files();
        const auto all = assets();
        EXPECT_EQ(all.size(), local.size()) << what << ": assets of the store vs files of the folder";
        json::array ids;
        for (const auto& a : all)
            ids.emplace_back(a.at("id"));
        ASSERT_FALSE(ids.empty()) << what;
        const auto product = sb.request(
            "POST", api("/digital_products"),
            json::serialize(json::object{{"digital_product", json::object{{"store_product_id", store_product_id}, {"asset_ids", ids}}}}),
            store.api_key);
        ASSERT_EQ(product.status, 201) << what << ": " << product.body;
        const auto order = sb.request("POST", "/sandbox/purchases",
                                      json::serialize(json::object{{"store_product_id", store_product_id}, {"email", "ada@example.com"}}),
                                      store.api_key);
        ASSERT_EQ(order.status, 201) << what << ": " << order.body;
        const std::string order_id(json::parse(order.body).at("order").at("id").as_string());
        const auto downloads = get("/orders/" + order_id + "/downloads");
        std::multiset<std::string> got;
        for (const auto& d : downloads.at("downloads").as_array())
        {
            const std::string f(d.at("file_name").as_string());
            if (!d.at("download_url").is_string())
            {
                ADD_FAILURE() << what << ": " << f << " has no download_url (an asset without its file)";
                continue;
            }
            const auto [status, bytes] = http_get(std::string(d.at("download_url").as_string()));
            EXPECT_EQ(status, 200) << what << ": " << f;
            got.insert(sha_hex(bytes));
        }
        std::multiset<std::string> want;
        for (const auto& [path, sha] : local)
            want.insert(sha);
        EXPECT_EQ(got, want) << what << ": the bytes a buyer downloads are not the folder's files, one each";
        // and ddctl sees nothing left to do
        auto check = ddctl({"assets", "check", tree.string(), "--delete", "-o", "json"});
        EXPECT_EQ(check.status, 0) << what << ": " << check.err;
        const auto s = summary_of(check.out);
        if (!s.empty())
        {
            EXPECT_EQ(planned(s, "create") + planned(s, "replace") + planned(s, "delete"), 0) << what << ": " << check.out;
            EXPECT_EQ(planned(s, "unchanged"), static_cast<std::int64_t>(local.size())) << what << ": " << check.out;
        }
    }
};

/// How many `-o json` lines of a sync say an action of `kind` ended `result`.
std::size_t results(const std::string& out, const char* kind, const char* result)
{
    std::size_t n = 0;
    for (const auto& l : json_lines(out))
        if (l.if_contains("action") && l.at("action").as_string() == kind && l.if_contains("result") &&
            l.at("result").as_string() == result)
            ++n;
    return n;
}

std::string asset_id_named(const std::vector<json::object>& assets, const std::string& name)
{
    for (const auto& a : assets)
        if (a.at("name").is_string() && a.at("name").as_string() == name)
            return std::string(a.at("id").as_string());
    return {};
}

}  // namespace

// New, same-size-edited, moved and removed files; each flag's effect and exit code.
TEST(ddctl_sync, new_edited_moved_removed_files_against_the_sandbox)
{
    sandbox_process& sb = sandbox_process::shared();
    sync_fixture f(sb, {}, "scenario");
    std::mt19937 rng(4545);
    for (const char* p : {"a/readme.pdf", "b/readme.pdf", "c.bin", "d.bin", "e.bin", "f.bin"})
        write_file(f.tree / p, random_bytes(rng, std::uniform_int_distribution<std::size_t>(1000, 40000)(rng)));

    // check: the plan and its cost, nothing written (only the listing's GET is spent)
    const auto before = f.points_used();
    auto check = f.ddctl({"assets", "check", f.tree.string(), "-o", "json"});
    ASSERT_EQ(check.status, 0) << check.err;
    auto s = summary_of(check.out);
    EXPECT_EQ(planned(s, "create"), 6) << check.out;
    EXPECT_EQ(s.at("points").to_number<std::int64_t>(), 18) << check.out;  // POST + GET re-read per file
    EXPECT_EQ(f.points_used() - before, s.at("listing_points").to_number<std::int64_t>()) << "check wrote something";
    EXPECT_TRUE(f.assets().empty());
    auto text = f.ddctl({"assets", "check", f.tree.string()});
    EXPECT_NE(text.out.find("6 create (18 points with re-reads)"), std::string::npos) << text.out;

    // --dry-run: nothing sent at all
    const auto before_dry = f.points_used();
    auto dry = f.ddctl({"--dry-run", "assets", "sync", f.tree.string()});
    EXPECT_EQ(dry.status, 0) << dry.err;
    EXPECT_NE(dry.out.find("dry run: nothing was sent"), std::string::npos) << dry.out;
    EXPECT_EQ(f.points_used(), before_dry);

    // --max-points: stops cleanly (exit 8), the next run resumes
    auto partial = f.ddctl({"assets", "sync", f.tree.string(), "--max-points", "6", "-o", "json"});
    EXPECT_EQ(partial.status, 8) << partial.err;
    const auto two = f.assets();
    EXPECT_EQ(two.size(), 2u) << partial.out;

    // the product the synced assets join (--product): made with the first of them
    json::array first_ids;
    if (!two.empty())
        first_ids.emplace_back(two.front().at("id"));
    const auto product = sb.request(
        "POST", f.api("/digital_products"),
        json::serialize(json::object{{"digital_product", json::object{{"store_product_id", 777001}, {"asset_ids", first_ids}}}}),
        f.store.api_key);
    const bool product_made = product.status == 201;
    std::string product_id;
    if (product_made)
        product_id = std::string(json::parse(product.body).at("digital_product").at("id").as_string());

    std::vector<std::string> args{"assets", "sync", f.tree.string(), "-o", "json"};
    if (product_made)
        args.insert(args.end(), {"--product", product_id});
    auto first = f.ddctl(args);
    ASSERT_EQ(first.status, 0) << first.err;
    EXPECT_EQ(results(first.out, "create", "done"), 4u) << first.out;
    const auto synced = f.assets();
    ASSERT_EQ(synced.size(), 6u);
    EXPECT_NE(asset_id_named(synced, "a/readme.pdf"), asset_id_named(synced, "b/readme.pdf")) << "two readme.pdf, two assets";
    if (product_made)
        EXPECT_EQ(f.get("/digital_products/" + product_id).at("digital_product").at("assets").as_array().size(), 6u);
    else
        ADD_FAILURE() << "cannot make a digital product: " << product.body;

    // one sync of a folder at a time: its lock held (as a running sync holds it), a second one is refused (exit 9)
    {
        int lock_fd = -1;
        for (const auto& e : fs::directory_iterator(f.home.path / "state" / "ddctl"))
            if (e.path().filename().string().find(".sync-") != std::string::npos && e.path().extension() == ".lock")
                lock_fd = ::open(e.path().c_str(), O_RDWR | O_CLOEXEC);
        ASSERT_GE(lock_fd, 0) << "no folder lock beside the state file";
        ASSERT_EQ(::flock(lock_fd, LOCK_EX | LOCK_NB), 0);
        auto locked = f.ddctl({"assets", "sync", f.tree.string()});
        EXPECT_EQ(locked.status, 9) << locked.err;
        EXPECT_NE(locked.err.find("another `ddctl assets sync`"), std::string::npos) << locked.err;
        ::close(lock_fd);
    }

    // nothing changed: nothing written
    const auto before_again = f.points_used();
    auto again = f.ddctl({"assets", "sync", f.tree.string(), "-o", "json"});
    ASSERT_EQ(again.status, 0) << again.err;
    EXPECT_EQ(planned(summary_of(again.out), "unchanged"), 6);
    EXPECT_EQ(f.points_used() - before_again, summary_of(again.out).at("listing_points").to_number<std::int64_t>());

    // a same-size edit (mtime moved on), a move, a removal, a new file
    const std::string c_id = asset_id_named(synced, "c.bin"), d_id = asset_id_named(synced, "d.bin");
    const auto c_size = fs::file_size(f.tree / "c.bin");
    write_file(f.tree / "c.bin", random_bytes(rng, c_size));
    fs::last_write_time(f.tree / "c.bin", fs::last_write_time(f.tree / "c.bin") + std::chrono::seconds(10));
    fs::create_directories(f.tree / "sub");
    fs::rename(f.tree / "d.bin", f.tree / "sub" / "d2.bin");
    fs::remove(f.tree / "e.bin");
    write_file(f.tree / "g.bin", random_bytes(rng, 5000));
    write_file(f.tree / ".hidden", "not synced");

    auto plan = f.ddctl({"assets", "check", f.tree.string(), "-o", "json"});
    ASSERT_EQ(plan.status, 0) << plan.err;
    s = summary_of(plan.out);
    EXPECT_EQ(planned(s, "replace"), 1) << plan.out;
    EXPECT_EQ(planned(s, "create"), 1) << plan.out;
    EXPECT_EQ(planned(s, "move"), 1) << plan.out;
    EXPECT_EQ(planned(s, "delete"), 0) << "deletes are off by default: " << plan.out;

    // without --delete: e's asset stays
    auto second = f.ddctl({"assets", "sync", f.tree.string(), "-o", "json"});
    ASSERT_EQ(second.status, 0) << second.err;
    auto now = f.assets();
    EXPECT_EQ(now.size(), 7u);
    EXPECT_EQ(asset_id_named(now, "c.bin"), c_id) << "an edit is a replace: the asset keeps its id";
    bool d_kept = false;
    for (const auto& a : now)
        d_kept |= a.at("id").as_string() == d_id;
    EXPECT_TRUE(d_kept) << "a move keeps the asset";

    // --delete: e's asset is linked to the product (--product), so kept and reported without --delete-linked
    auto linked = f.ddctl({"assets", "check", f.tree.string(), "--delete", "-o", "json"});
    EXPECT_EQ(linked.status, 0) << linked.err;
    bool reported = false;
    for (const auto& l : json_lines(linked.out))
        if (l.if_contains("action") && l.at("action").as_string() == "skip" && l.at("path").as_string() == "e.bin")
            reported = true;
    EXPECT_TRUE(reported) << linked.out;
    auto kept_linked = f.ddctl({"assets", "sync", f.tree.string(), "--delete", "-o", "json"});
    EXPECT_EQ(kept_linked.status, 0) << kept_linked.err;
    reported = false;
    for (const auto& l : json_lines(kept_linked.out))
        if (l.if_contains("action") && l.at("action").as_string() == "skip" && l.at("path").as_string() == "e.bin")
            reported = l.at("result").as_string() == "skipped";
    EXPECT_TRUE(reported) << "sync says what it leaves out: " << kept_linked.out;
    EXPECT_EQ(f.assets().size(), 7u);
    // --delete asks: no terminal and no --yes is a usage error, nothing deleted
    auto unconfirmed = f.ddctl({"assets", "sync", f.tree.string(), "--delete", "--delete-linked"});
    EXPECT_EQ(unconfirmed.status, 2) << unconfirmed.err;
    EXPECT_EQ(f.assets().size(), 7u);
    // --max-delete 0 refuses (exit 9)
    auto refused = f.ddctl({"assets", "sync", f.tree.string(), "--delete", "--delete-linked", "--max-delete", "0", "--yes"});
    EXPECT_EQ(refused.status, 9) << refused.err;
    EXPECT_EQ(f.assets().size(), 7u);
    std::vector<std::string> del{"assets", "sync", f.tree.string(), "--delete", "--delete-linked", "--yes", "-o", "json"};
    if (product_made)
        del.insert(del.end(), {"--product", product_id});
    auto third = f.ddctl(del);
    ASSERT_EQ(third.status, 0) << third.err;
    if (product_made)
    {
        EXPECT_EQ(f.get("/digital_products/" + product_id).at("digital_product").at("assets").as_array().size(), 6u)
            << "the deleted asset left the product";
    }
    f.expect_store_holds_the_folder("after the edits", 777002);

    // an emptied folder: every delete refused (exit 9), nothing deleted
    const auto kept = f.assets().size();
    for (const auto& e : fs::directory_iterator(f.tree))
        fs::remove_all(e.path());
    auto emptied = f.ddctl({"assets", "sync", f.tree.string(), "--delete", "--yes", "--delete-linked"});
    EXPECT_EQ(emptied.status, 9) << emptied.err;
    EXPECT_EQ(f.assets().size(), kept);
}

// The store's asset-count quota met halfway (exit 10: creates stopped, those in
// flight finished, the journal kept; the rerun after space is freed completes),
// the state directory inside the folder refused (exit 9) before anything is
// created, and the global --dry-run: no request, and no local file either.
TEST(ddctl_sync, quota_stop_state_inside_the_folder_and_a_dry_run_that_writes_nothing)
{
    sandbox_process& sb = sandbox_process::shared();
    sync_fixture f(sb, {}, "quota", {"--no-rate-limit", "--quota-asset-count", "6"});
    std::mt19937 rng(4547);
    for (int i = 0; i < 6; ++i)
        write_file(f.tree / ("q-" + std::to_string(i) + ".bin"), random_bytes(rng, 3000 + 1000 * static_cast<std::size_t>(i)));
    const fs::path state = f.home.path / "state";

    // --dry-run of both commands: the listing printed, not sent; no state
    // directory, journal or lock file created (there was none before)
    for (const char* command : {"sync", "check"})
    {
        auto dry = f.ddctl({"--dry-run", "assets", command, f.tree.string()});
        EXPECT_EQ(dry.status, 0) << command << ": " << dry.err;
        EXPECT_NE(dry.out.find("dry run: nothing was sent\nGET /assets"), std::string::npos) << command << ": " << dry.out;
        EXPECT_FALSE(fs::exists(state)) << "`--dry-run assets " << command << "` created " << state;
    }
    EXPECT_EQ(f.usage("requests"), 0) << "a dry run sent a request";

    // the state directory inside the folder: refused (exit 9) with nothing
    // sent and nothing created in the folder
    {
        auto env = f.env;
        f.env["XDG_STATE_HOME"] = (f.tree / ".state").string();
        auto inside = f.ddctl({"assets", "sync", f.tree.string()});
        f.env = env;
        EXPECT_EQ(inside.status, 9) << inside.err;
        EXPECT_NE(inside.err.find("is inside " + f.tree.string()), std::string::npos) << inside.err;
        EXPECT_FALSE(fs::exists(f.tree / ".state")) << "refused, yet it created its state in the folder";
        EXPECT_EQ(f.usage("requests"), 0) << "refused, yet it sent a request";
    }

    // another asset of the store takes one of the 6 the plan allows: 5 creates
    // pass, the 6th is refused (asset_count_limit_exceeded)
    const auto blocker = sb.request(
        "POST", f.api("/assets"),
        R"({"asset": {"type": "internal", "name": "other", "filename": "other.bin", "byte_size": 1000}})", f.store.api_key);
    ASSERT_EQ(blocker.status, 201) << blocker.body;
    const std::string blocker_id(json::parse(blocker.body).at("asset").at("id").as_string());

    auto stopped = f.ddctl({"assets", "sync", f.tree.string(), "-o", "json"});
    EXPECT_EQ(stopped.status, 10) << stopped.err;
    EXPECT_NE(stopped.err.find("the store's quota stopped the uploads"), std::string::npos) << stopped.err;
    EXPECT_NE(stopped.err.find("asset count limit"), std::string::npos) << "which quota: " << stopped.err;
    EXPECT_NE(stopped.err.find("; 1 action left"), std::string::npos) << stopped.err;
    EXPECT_EQ(results(stopped.out, "create", "done"), 5u) << stopped.out;
    EXPECT_EQ(summary_of(stopped.out).at("outcome").as_string(), "quota_stopped") << stopped.out;
    EXPECT_EQ(f.assets().size(), 6u) << "the other asset and the 5 created";
    // the uploads in flight finished: the journal (kept) holds nothing unfinished
    auto left = f.ddctl({"assets", "recover", "--list"});
    EXPECT_EQ(left.status, 0) << left.err;
    EXPECT_EQ(left.out, "no unfinished uploads\n");

    // space freed: the same command creates the one file left, and completes
    ASSERT_EQ(sb.request("DELETE", f.api("/assets/" + blocker_id), {}, f.store.api_key).status / 100, 2);
    auto rerun = f.ddctl({"assets", "sync", f.tree.string(), "-o", "json"});
    ASSERT_EQ(rerun.status, 0) << rerun.err;
    EXPECT_EQ(results(rerun.out, "create", "done"), 1u) << rerun.out;
    EXPECT_EQ(planned(summary_of(rerun.out), "unchanged"), 5) << rerun.out;
    f.expect_store_holds_the_folder("after the quota stop", 777004);

    // with the state there now: a dry run leaves it as it was, and adds no file
    const auto before = sync_fixture::entries_under(state);
    auto dry = f.ddctl({"--dry-run", "assets", "sync", f.tree.string()});
    EXPECT_EQ(dry.status, 0) << dry.err;
    EXPECT_EQ(sync_fixture::entries_under(state), before);
}

// `assets sync` SIGKILLed at 20 seeded moments of one sync (a request held
// before the sandbox sees it, the sandbox's answer never delivered, a PUT cut
// after N bytes), run again each time, then to its end.
TEST(ddctl_sync, killed_at_twenty_seeded_moments_then_completed)
{
    kill_plan p;
    kill_relay api(false, p), storage(true, p);
    sandbox_process sb({"--no-rate-limit", "--seed-orders", "1", "--public-url", "http://127.0.0.1:" + std::to_string(storage.port())});
    api.set_target(port_of_origin(sb.origin()));
    storage.set_target(port_of_origin(sb.origin()));
    sync_fixture f(sb, "http://127.0.0.1:" + std::to_string(api.port()), "crash");

    const unsigned seed = 45045;
    std::mt19937 rng(seed);
    auto size = [&] { return std::uniform_int_distribution<std::size_t>(16 * 1024, 96 * 1024)(rng); };
    for (int i = 0; i < 10; ++i)
        write_file(f.tree / ("old-" + std::to_string(i) + ".bin"), random_bytes(rng, size()));
    // The first sync, held at its first request (the relay waits) while a
    // second `assets sync` of the folder runs: refused at once (exit 9).
    std::mutex held_mtx;
    std::condition_variable held_cv;
    bool held = false, release = false;
    p.decide = [&](bool, std::string_view) -> kill_decision {
        std::unique_lock<std::mutex> lk(held_mtx);
        held = true;
        held_cv.notify_all();
        held_cv.wait(lk, [&] { return release; });
        return {};
    };
    p.armed = true;
    ddctl_run clean;
    std::thread first([&] { clean = f.ddctl({"assets", "sync", f.tree.string()}, &p); });
    {
        std::unique_lock<std::mutex> lk(held_mtx);
        held_cv.wait(lk, [&] { return held; });
        p.armed = false;  // its other requests pass
    }
    const kill_temp_dir second_out("ddctl-sync-second");
    auto second = run_ddctl(DDCTL_EXE, {"assets", "sync", f.tree.string(), "--no-progress", "--rate-limit-store", "in-process"},
                            f.env, second_out.path, f.no_kill);
    {
        std::lock_guard<std::mutex> lk(held_mtx);
        release = true;
    }
    held_cv.notify_all();
    first.join();
    EXPECT_EQ(second.status, 9) << second.err;
    EXPECT_NE(second.err.find("another `ddctl assets sync` of " + f.tree.string() + " is running"), std::string::npos) << second.err;
    ASSERT_EQ(clean.status, 0) << clean.err;

    // 3 same-size edits, 2 moves, 2 removals, 36 new files
    for (int i : {0, 1, 2})
    {
        const fs::path p = f.tree / ("old-" + std::to_string(i) + ".bin");
        write_file(p, random_bytes(rng, fs::file_size(p)));
        fs::last_write_time(p, fs::last_write_time(p) + std::chrono::seconds(10));
    }
    fs::create_directories(f.tree / "moved");
    fs::rename(f.tree / "old-3.bin", f.tree / "moved" / "old-3.bin");
    fs::rename(f.tree / "old-4.bin", f.tree / "moved" / "four.bin");
    fs::remove(f.tree / "old-5.bin");
    fs::remove(f.tree / "old-6.bin");
    for (int i = 0; i < 36; ++i)
        write_file(f.tree / ("new" + std::to_string(i % 3)) / ("n-" + std::to_string(i) + ".bin"), random_bytes(rng, size()));

    // Each run: killed when its k-th request (API or storage) passes, k seeded:
    // before it reaches the sandbox, when the answer arrives, or (the first
    // PUT from the k-th request on) after a seeded number of its bytes.
    std::atomic<int> seen{0};
    int fired = 0;
    for (int run = 0; run < 20; ++run)
    {
        const int k = std::uniform_int_distribution<int>(1, 9)(rng);
        const int how = std::uniform_int_distribution<int>(0, 2)(rng);
        const std::size_t offset = std::uniform_int_distribution<std::size_t>(1, 16 * 1024)(rng);
        seen = 0;
        p.decide = [&seen, k, how, offset](bool storage, std::string_view head) -> kill_decision {
            if (++seen < k)
                return {};
            if (how == 2)
                return storage && head.starts_with("PUT ") ? kill_decision{kill_decision::after_bytes, offset} : kill_decision{};
            if (seen != k)
                return {};
            return {how == 0 ? kill_decision::before : kill_decision::on_answer};
        };
        p.fired = false;
        p.armed = true;
        auto r = f.ddctl({"assets", "sync", f.tree.string(), "--delete", "--yes", "--transfers", "2"}, &p);
        p.armed = false;
        const std::string what = "run " + std::to_string(run) + " (request " + std::to_string(k) + ", " +
                                 (how == 0 ? "before it" : how == 1 ? "at its answer" : "after " + std::to_string(offset) + " bytes") + ")";
        if (p.fired)
        {
            ++fired;
            EXPECT_EQ(r.status, 128 + SIGKILL) << what << ": " << r.err;
        }
        else
            EXPECT_EQ(r.status, 0) << what << ": " << r.err;
    }
    EXPECT_EQ(fired, 20) << "every seeded moment was reached";
    auto last = f.ddctl({"assets", "sync", f.tree.string(), "--delete", "--yes", "-o", "json"});
    ASSERT_EQ(last.status, 0) << last.err << last.out;
    f.expect_store_holds_the_folder("after 20 kills", 777003);
}
