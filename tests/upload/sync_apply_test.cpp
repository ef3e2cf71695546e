// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The folder sync through its public API (async_plan_sync, async_apply_sync)
// against a stateful stand-in of the API and the storage (sync_store.hpp):
// new, same-size-edited, moved and removed files; the cost model checked
// against the points the store charged; quotas, max_points, a file changed
// after the plan; and a crash at every request, journal write and manifest
// write of one run, each followed by a second run that must converge (every
// file's bytes in exactly one asset, no orphan, no duplicate).
#include <digital_delivery/error_with_diagnostics.hpp>
#include <digital_delivery/impl/crypto/sha256.hpp>
#include <digital_delivery/sqlite_sync_manifest.hpp>
#include <digital_delivery/sqlite_upload_journal.hpp>
#include <digital_delivery/sync.hpp>
#include <digital_delivery/testing/virtual_clock.hpp>
#include <digital_delivery/upload_journal.hpp>

#include "run.hpp"
#include "sync_store.hpp"
#include "temp_dir.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/system/system_error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

namespace dd = digital_delivery;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

constexpr const char* base_url = "https://dd.example.test/api/v1/external";

std::string sha_hex(const std::string& s)
{
    dd::detail::sha256 h;
    h.update(s);
    return dd::detail::sha256::to_hex(h.finish());
}

// Journal and manifest that die with the process: at their n-th write, or
// at any write once the store saw the crash.
struct crash_switch
{
    std::optional<int> at_write;
    int writes = 0;
    bool dead = false;
    dd_test::sync_store* store = nullptr;
    void write()
    {
        if (dead || (store && store->crashed))
        {
            dead = true;
            throw boost::system::system_error(make_error_code(boost::system::errc::interrupted), "killed");
        }
        if (at_write && ++writes == *at_write)
        {
            dead = true;
            if (store)
                store->crashed = true;  // nothing is sent after the crash either
            throw boost::system::system_error(make_error_code(boost::system::errc::interrupted), "killed");
        }
    }
};

class crashing_journal final : public dd::upload_journal
{
public:
    crashing_journal(dd::upload_journal& inner, crash_switch& c) : inner_(inner), c_(c) {}
    std::vector<dd::upload_record> find(std::string_view p) override { return inner_.find(p); }
    std::vector<dd::upload_record> unfinished() override { return inner_.unfinished(); }
    std::int64_t insert(const dd::upload_record& r) override
    {
        c_.write();
        return inner_.insert(r);
    }
    void update(const dd::upload_record& r) override
    {
        c_.write();
        inner_.update(r);
    }
    void erase(std::int64_t id) override
    {
        c_.write();
        inner_.erase(id);
    }

private:
    dd::upload_journal& inner_;
    crash_switch& c_;
};

class crashing_manifest final : public dd::sync_manifest
{
public:
    crashing_manifest(dd::sync_manifest& inner, crash_switch& c) : inner_(inner), c_(c) {}
    std::vector<dd::sync_manifest_entry> entries() override { return inner_.entries(); }
    void put(const dd::sync_manifest_entry& e) override
    {
        c_.write();
        inner_.put(e);
    }
    void erase(std::string_view p) override
    {
        c_.write();
        inner_.erase(p);
    }
    void move(std::string_view from, const dd::sync_manifest_entry& to) override
    {
        c_.write();
        inner_.move(from, to);
    }

private:
    dd::sync_manifest& inner_;
    crash_switch& c_;
};

class sync_apply : public ::testing::Test
{
protected:
    dd_test::temp_dir tmp{"dd-sync"};
    std::string base = tmp.path;
    std::string dir = base + "/tree";
    dd_test::sync_store store;
    dd::memory_upload_journal journal;
    dd::memory_sync_manifest manifest;
    std::int64_t mtime_tick = 1'700'000'000;

    sync_apply() { std::filesystem::create_directories(dir); }

    // Writes a file with a distinct mtime (a second apart: no clock granularity issue).
    void write(const std::string& rel, const std::string& content)
    {
        const auto p = std::filesystem::path(dir) / rel;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary | std::ios::trunc) << content;
        struct timespec t[2] = {{++mtime_tick, 0}, {mtime_tick, 0}};
        ::utimensat(AT_FDCWD, p.c_str(), t, 0);
    }
    void remove(const std::string& rel) { std::filesystem::remove(std::filesystem::path(dir) / rel); }
    void rename(const std::string& a, const std::string& b)
    {
        std::filesystem::create_directories((std::filesystem::path(dir) / b).parent_path());
        std::filesystem::rename(std::filesystem::path(dir) / a, std::filesystem::path(dir) / b);
    }

    struct run_out
    {
        dd::error_code plan_ec, apply_ec;
        dd::sync_plan plan;
        dd::sync_result result;
        std::vector<dd::sync_event_kind> events;
        std::int64_t points_before = 0, points_listing = 0;
    };

    // One process: a new io_context and client; plan, then apply (unless plan_only).
    run_out run(const dd::sync_options& o, dd::sync_apply_options ao = {}, dd::upload_journal* j = nullptr,
                dd::sync_manifest* m = nullptr, bool plan_only = false, bool rate_limited = false)
    {
        dd::testing::virtual_clock vc;
        asio::io_context ioc;
        auto t = std::make_shared<dd_test::sync_store::transport>(ioc.get_executor(), store);
        dd::client_params params{.base_url = base_url, .api_key = "k"};
        params.rate_limit.enabled = rate_limited;
        params.retry.max_attempts = 1;
        dd::client client{t, params};
        run_out out;
        out.points_before = store.points();
        bool done = false;
        dd::upload_journal& jj = j ? *j : journal;
        dd::sync_manifest& mm = m ? *m : manifest;
        dd::async_plan_sync(client, jj, mm, dir, o, [&](dd::error_code ec, dd::sync_plan p) {
            out.plan_ec = ec;
            out.plan = std::move(p);
            out.points_listing = store.points() - out.points_before;
            if (ec || plan_only)
            {
                done = true;
                return;
            }
            ao.upload.max_attempts = 1;
            ao.upload.retry_backoff = 1ms;
            auto user = ao.on_event;
            ao.on_event = [&out, user](const dd::sync_event& e) {
                out.events.push_back(e.kind);
                if (user)
                    user(e);
            };
            dd::async_apply_sync(client, jj, mm, out.plan, ao, [&](dd::error_code ec2, dd::sync_result r) {
                out.apply_ec = ec2;
                out.result = std::move(r);
                done = true;
            });
        });
        EXPECT_TRUE(vc.run_until(ioc, [&] { return done; }, 24h, 500ms)) << "the sync did not end";
        return out;
    }

    // The store holds exactly the tree: one asset per file with its bytes,
    // the manifest names it, and no other asset exists.
    void expect_converged(const std::set<std::string>& extra_assets = {})
    {
        std::map<std::string, std::string> files;
        for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
            if (e.is_regular_file())
            {
                std::ifstream in(e.path(), std::ios::binary);
                files[std::filesystem::relative(e.path(), dir).generic_string()] =
                    std::string(std::istreambuf_iterator<char>(in), {});
            }
        auto entries = manifest.entries();
        std::set<std::string> held;
        ASSERT_EQ(entries.size(), files.size());
        for (const auto& e : entries)
        {
            ASSERT_TRUE(files.count(e.path)) << e.path;
            auto it = store.assets.find(e.asset_id);
            ASSERT_NE(it, store.assets.end()) << e.path << " -> " << e.asset_id;
            EXPECT_TRUE(it->second.has_body) << e.path;
            EXPECT_EQ(sha_hex(it->second.body), sha_hex(files[e.path])) << e.path;
            EXPECT_EQ(e.sha256, sha_hex(files[e.path])) << e.path;
            EXPECT_TRUE(held.insert(e.asset_id).second) << "two paths hold " << e.asset_id;
        }
        for (const auto& [id, a] : store.assets)
            EXPECT_TRUE(held.count(id) || extra_assets.count(id)) << "orphan asset " << id << " (" << a.filename << ")";
        EXPECT_TRUE(journal.unfinished().empty());
    }
};

}  // namespace

TEST_F(sync_apply, new_then_unchanged_then_edited_moved_removed)
{
    write("a.pdf", "alpha");
    write("docs/readme.pdf", "first readme");
    write("more/readme.pdf", "second readme");
    dd::sync_options o;
    o.delete_remote = true;
    o.max_shrink = 0.9;
    std::set<std::string> done_ids;
    dd::sync_apply_options ao1;
    ao1.on_event = [&](const dd::sync_event& e) {
        if (e.kind == dd::sync_event_kind::action_done)
            done_ids.insert(std::string(e.asset_id));
    };
    auto r1 = run(o, ao1);
    ASSERT_FALSE(r1.plan_ec) << r1.plan_ec.message();
    std::set<std::string> store_ids;
    for (const auto& [id, a] : store.assets)
        store_ids.insert(id);
    EXPECT_EQ(done_ids, store_ids);  // each create's event names its new asset
    ASSERT_FALSE(r1.apply_ec) << r1.apply_ec.message();
    EXPECT_EQ(r1.plan.totals.create, 3u);
    EXPECT_EQ(r1.result.outcome, dd::sync_outcome::complete);
    EXPECT_EQ(r1.result.done.create, 3u);
    // The cost model: what the store charged = the plan's points (listing apart).
    EXPECT_EQ(store.points() - r1.points_before - r1.points_listing, r1.plan.totals.points);
    EXPECT_EQ(r1.points_listing, r1.plan.listing_points);
    expect_converged();
    // Two readme.pdf: one filename, two names.
    std::set<std::string> names;
    for (const auto& [id, a] : store.assets)
        if (a.filename == "readme.pdf")
            names.insert(a.name.value_or(""));
    EXPECT_EQ(names, (std::set<std::string>{"docs/readme.pdf", "more/readme.pdf"}));

    // No change: the listing only (GET /assets, GET /digital_products).
    const auto log_before = store.log.size();
    auto r2 = run(o);
    ASSERT_FALSE(r2.apply_ec);
    EXPECT_EQ(r2.plan.totals.unchanged, 3u);
    EXPECT_EQ(r2.plan.totals.points, 0);
    for (std::size_t i = log_before; i < store.log.size(); ++i)
        EXPECT_EQ(store.log[i].rfind("GET ", 0), 0u) << store.log[i];

    // Same-size edit, a move, a removal.
    const std::string id_a = manifest.entries()[0].asset_id;
    write("a.pdf", "ALPHA");
    rename("docs/readme.pdf", "docs/guide/readme-renamed.pdf");
    remove("more/readme.pdf");
    auto r3 = run(o);
    ASSERT_FALSE(r3.apply_ec) << r3.apply_ec.message();
    EXPECT_EQ(r3.plan.totals.replace, 1u);
    EXPECT_EQ(r3.plan.totals.move, 1u);
    EXPECT_EQ(r3.plan.totals.delete_asset, 1u);
    EXPECT_EQ(r3.plan.totals.create, 0u);
    EXPECT_EQ(store.points() - r3.points_before - r3.points_listing, r3.plan.totals.points);
    expect_converged();
    // The edited file kept its asset; the moved one kept its filename (PATCH cannot change it).
    EXPECT_EQ(manifest.entries()[0].asset_id, id_a);
    EXPECT_EQ(sha_hex(store.assets.at(id_a).body), sha_hex("ALPHA"));
    bool found = false;
    for (const auto& e : manifest.entries())
        if (e.path == "docs/guide/readme-renamed.pdf")
        {
            found = true;
            EXPECT_EQ(store.assets.at(e.asset_id).filename, "readme.pdf");
        }
    EXPECT_TRUE(found);
}

TEST_F(sync_apply, deletes_wait_for_every_upload_and_are_off_by_default)
{
    write("a.bin", "aaaa");
    write("b.bin", "bbbb");
    write("c.bin", "cccc");
    ASSERT_FALSE(run({}).apply_ec);
    remove("c.bin");
    auto r = run({}, {}, nullptr, nullptr, true);
    EXPECT_EQ(r.plan.totals.delete_asset, 0u);  // off by default
    // With deletes, an upload that fails keeps the delete from running.
    write("d.bin", "dddd");
    store.count_quota = store.assets.size();  // the create fails
    dd::sync_options o;
    o.delete_remote = true;
    o.max_shrink = 0.9;
    auto r2 = run(o);
    EXPECT_EQ(r2.plan.totals.delete_asset, 1u);
    EXPECT_EQ(r2.result.outcome, dd::sync_outcome::quota_stopped);
    EXPECT_EQ(r2.apply_ec, dd::sync_errc::quota_exceeded);
    EXPECT_EQ(store.count("DELETE "), 0u);
    EXPECT_EQ(store.assets.size(), 3u);
    // Quota raised: the next run finishes both.
    store.count_quota.reset();
    auto r3 = run(o);
    ASSERT_FALSE(r3.apply_ec) << r3.apply_ec.message();
    EXPECT_EQ(store.count("DELETE "), 1u);
    expect_converged();
}

TEST_F(sync_apply, quota_stops_creates_and_finishes_what_is_in_flight)
{
    for (int i = 0; i < 8; ++i)
        write("f" + std::to_string(i) + ".bin", std::string(100 + i, 'x'));
    store.count_quota = 5;
    dd::sync_apply_options ao;
    ao.transfers = 3;
    auto r = run({}, ao);
    EXPECT_EQ(r.result.outcome, dd::sync_outcome::quota_stopped);
    EXPECT_EQ(r.apply_ec, dd::sync_errc::quota_exceeded);
    EXPECT_EQ(store.assets.size(), 5u);
    // Every asset created has its body and is in the manifest; no record is left unfinished.
    EXPECT_EQ(manifest.entries().size(), 5u);
    for (const auto& [id, a] : store.assets)
        EXPECT_TRUE(a.has_body) << id;
    EXPECT_TRUE(journal.unfinished().empty());
    // At most one refused create per worker: no create starts after the stop.
    EXPECT_LE(std::count(store.log.begin(), store.log.end(), "POST /assets"), 5 + static_cast<int>(ao.transfers));
    EXPECT_GT(r.result.not_started, 0u);
}

TEST_F(sync_apply, max_points_stops_cleanly_and_the_next_run_resumes)
{
    for (int i = 0; i < 6; ++i)
        write("f" + std::to_string(i) + ".bin", std::string(50 + i, 'y'));
    dd::sync_apply_options ao;
    ao.max_points = 7;  // two creates of 3 points
    auto r = run({}, ao);
    EXPECT_EQ(r.result.outcome, dd::sync_outcome::partial);
    EXPECT_EQ(r.apply_ec, dd::sync_errc::points_exhausted);
    EXPECT_EQ(r.result.done.create, 2u);
    EXPECT_LE(store.points() - r.points_before - r.points_listing, 7);
    EXPECT_NE(std::find(r.events.begin(), r.events.end(), dd::sync_event_kind::stopping), r.events.end());
    auto r2 = run({});
    ASSERT_FALSE(r2.apply_ec);
    EXPECT_EQ(r2.plan.totals.create, 4u);
    expect_converged();
}

TEST_F(sync_apply, a_file_changed_after_the_plan_is_skipped_not_uploaded)
{
    write("a.bin", "original");
    write("b.bin", "other");
    dd::sync_apply_options ao;
    ao.transfers = 1;
    bool changed = false;
    ao.on_event = [&](const dd::sync_event& e) {
        // The first action starts: change the other file before its turn.
        if (!changed && e.kind == dd::sync_event_kind::action_started)
        {
            changed = true;
            write(e.action->path == "a.bin" ? "b.bin" : "a.bin", "changed content, longer");
        }
    };
    auto r = run({}, ao);
    EXPECT_NE(std::find(r.events.begin(), r.events.end(), dd::sync_event_kind::action_skipped), r.events.end());
    EXPECT_EQ(std::count(store.log.begin(), store.log.end(), "POST /assets"), 1);  // the changed file sent nothing
    for (const auto& [id, a] : store.assets)
        EXPECT_EQ(static_cast<std::size_t>(a.byte_size), a.body.size());
    auto r2 = run({});
    ASSERT_FALSE(r2.apply_ec);
    expect_converged();
}

TEST_F(sync_apply, transfers_bound_the_concurrent_puts)
{
    for (int i = 0; i < 9; ++i)
        write("f" + std::to_string(i) + ".bin", std::string(20000 + i, 'z'));  // 5 chunks each
    dd::sync_apply_options ao;
    ao.transfers = 2;
    auto r = run({}, ao);
    ASSERT_FALSE(r.apply_ec) << r.apply_ec.message();
    EXPECT_EQ(store.max_in_flight_puts, 2u);
    expect_converged();
}

TEST_F(sync_apply, the_rate_limited_run_charges_what_the_plan_said)
{
    for (int i = 0; i < 20; ++i)  // 60 points: more than the 40-point bucket
        write("f" + std::to_string(i) + ".bin", "content " + std::to_string(i));
    auto r = run({}, {}, nullptr, nullptr, false, true);
    ASSERT_FALSE(r.apply_ec) << r.apply_ec.message();
    EXPECT_EQ(r.plan.totals.points, 60);
    EXPECT_EQ(store.points() - r.points_before - r.points_listing, 60);
    expect_converged();
}

TEST_F(sync_apply, adopt_trust_and_adopt_replace)
{
    write("manual.pdf", "manual bytes");
    write("other.pdf", "other bytes");
    // Assets that exist already (uploaded by hand): one matches manual.pdf by
    // (filename, byte_size); two match other.pdf (ambiguous).
    auto add = [&](const std::string& id, const std::string& fn, const std::string& body) {
        dd_test::sync_store::stored_asset a;
        a.id = id;
        a.filename = fn;
        a.byte_size = static_cast<std::int64_t>(body.size());
        a.body = body;
        a.has_body = true;
        a.created_us = a.updated_us = 1;
        store.assets[id] = a;
    };
    add("x1", "manual.pdf", std::string(12, '?'));
    add("x2", "other.pdf", "OTHER bytes");
    add("x3", "other.pdf", "other BYTES");
    dd::sync_options o;
    o.adopt = dd::sync_adopt::trust;
    auto r = run(o);
    ASSERT_FALSE(r.plan_ec);
    EXPECT_EQ(r.plan.totals.adopt, 1u);
    EXPECT_EQ(r.plan.totals.ambiguous, 1u);
    EXPECT_EQ(std::count(store.log.begin(), store.log.end(), "POST /assets"), 0);
    ASSERT_EQ(manifest.entries().size(), 1u);
    EXPECT_EQ(manifest.entries()[0].asset_id, "x1");
    // Taken as is: the next plan sees manifest.pdf in sync (its hash is the file's).
    auto again = run(o, {}, nullptr, nullptr, true);
    EXPECT_EQ(again.plan.totals.unchanged, 1u);
    EXPECT_EQ(again.plan.totals.replace, 0u);
    EXPECT_EQ(store.assets.at("x1").body, std::string(12, '?'));  // trust: its bytes were never checked
    // --adopt=replace uploads the file into the adopted asset.
    manifest = dd::memory_sync_manifest{};
    o.adopt = dd::sync_adopt::replace;
    auto r2 = run(o);
    ASSERT_FALSE(r2.plan_ec);
    EXPECT_EQ(r2.plan.totals.replace, 1u);
    EXPECT_EQ(store.assets.at("x1").body, "manual bytes");  // uploaded again into the adopted asset
    EXPECT_EQ(std::count(store.log.begin(), store.log.end(), "POST /assets"), 0);  // no create: the ambiguous file is left alone
}

TEST_F(sync_apply, product_step_links_every_synced_asset)
{
    store.products["dp1"] = {"dp1", {}};
    write("a.bin", "aaa");
    write("b.bin", "bbb");
    dd::sync_options o;
    o.product_id = "dp1";
    auto r = run(o);
    ASSERT_FALSE(r.apply_ec) << r.apply_ec.message();
    EXPECT_EQ(store.products["dp1"].asset_ids.size(), 2u);
    EXPECT_EQ(store.points() - r.points_before - r.points_listing, r.plan.totals.points);
    // A linked asset is not deleted without its own flag.
    remove("a.bin");
    o.delete_remote = true;
    o.max_shrink = 0.9;
    auto r2 = run(o, {}, nullptr, nullptr, true);
    ASSERT_EQ(r2.plan.actions.size(), 1u);
    EXPECT_EQ(r2.plan.actions[0].kind, dd::sync_action_kind::skip);
    EXPECT_EQ(r2.plan.actions[0].error, dd::sync_errc::linked_asset);
    o.delete_linked = true;
    auto r3 = run(o);
    ASSERT_FALSE(r3.apply_ec) << r3.apply_ec.message();
    EXPECT_EQ(store.assets.size(), 1u);
    EXPECT_EQ(store.products["dp1"].asset_ids.size(), 1u);
}

// A crash at each request of a run (processed, its answer lost, nothing sent
// after it), then at each journal or manifest write; then a run without crash
// must converge. The tree: new files, a same-size edit, a move, a removal.
TEST_F(sync_apply, a_crash_at_every_point_of_a_run_then_a_run_converges)
{
    const auto seed_tree = [&] {
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        write("keep.pdf", "kept as is");
        write("edit.pdf", "before edit");
        write("move.pdf", "moving content");
        write("gone.pdf", "to be removed");
    };
    const auto change_tree = [&] {
        write("edit.pdf", "after  edit");  // same size
        rename("move.pdf", "sub/moved.pdf");
        remove("gone.pdf");
        write("new1.mp3", "new one");
        write("sub/new2.zip", "new two, longer");
    };
    dd::sync_options o;
    o.delete_remote = true;
    o.max_shrink = 0.9;
    int points_checked = 0;
    for (int kind = 0; kind < 2; ++kind)  // 0: at a request, 1: at a journal/manifest write
    {
        for (int at = 1;; ++at)
        {
            SCOPED_TRACE((kind == 0 ? "crash after request " : "crash at write ") + std::to_string(at));
            store = dd_test::sync_store{};
            journal = dd::memory_upload_journal{};
            manifest = dd::memory_sync_manifest{};
            seed_tree();
            ASSERT_FALSE(run(o).apply_ec);
            change_tree();
            const auto base_log = store.log.size();
            crash_switch cs;
            cs.store = &store;
            if (kind == 0)
                store.crash_after = base_log + static_cast<std::size_t>(at);
            else
                cs.at_write = at;
            crashing_journal cj(journal, cs);
            crashing_manifest cm(manifest, cs);
            dd::sync_apply_options ao;
            ao.transfers = 2;
            auto crashed_run = run(o, ao, &cj, &cm);
            const bool crashed = store.crashed || cs.dead;
            store.crash_after.reset();
            store.crashed = false;
            // Edited again before the next run (same size): an interrupted
            // replace of the old content must not cost the asset.
            write("edit.pdf", "after  EDIT");
            // The next process: a run without crash, then everything is in place.
            auto r = run(o);
            ASSERT_FALSE(r.plan_ec) << r.plan_ec.message();
            ASSERT_FALSE(r.apply_ec) << r.apply_ec.message() << " after " << (crashed ? "a crash" : "no crash");
            expect_converged();
            if (::testing::Test::HasFailure())
                return;
            if (!crashed)
            {
                // The crash point is past the run's end: every point was covered.
                EXPECT_GT(at, 10);
                ++points_checked;
                break;
            }
            (void)crashed_run;
        }
    }
    EXPECT_EQ(points_checked, 2);
}

TEST_F(sync_apply, the_sqlite_state_file_holds_journal_and_manifest_and_must_be_outside_the_tree)
{
    write("a.bin", "aaa");
    const std::string db = base + "/state.db";
    {
        dd::sqlite_upload_journal j(db);
        dd::sqlite_sync_manifest m(j.state(), dir);
        auto r = run({}, {}, &j, &m);
        ASSERT_FALSE(r.apply_ec) << r.apply_ec.message();
    }
    {
        dd::sqlite_upload_journal j(db);
        dd::sqlite_sync_manifest m(j.state(), dir);
        ASSERT_EQ(m.entries().size(), 1u);
        auto r = run({}, {}, &j, &m, true);
        EXPECT_EQ(r.plan.totals.unchanged, 1u);
        EXPECT_EQ(r.plan.totals.points, 0);
    }
    {
        dd::sqlite_upload_journal j(dir + "/inside.db");
        dd::sqlite_sync_manifest m(j.state(), dir);
        auto r = run({}, {}, &j, &m, true);
        EXPECT_EQ(r.plan_ec, dd::sync_errc::state_inside_tree);
    }
}

TEST_F(sync_apply, one_sync_of_a_folder_at_a_time)
{
    const std::string db = base + "/state.db";
    dd::sync_folder_lock first(db, dir);
    try
    {
        dd::sync_folder_lock second(db, dir);
        ADD_FAILURE() << "a second lock of the same folder was taken";
    }
    catch (const dd::error_with_diagnostics& e)
    {
        EXPECT_EQ(e.code(), dd::sync_errc::locked);
    }
    std::filesystem::create_directories(base + "/other");
    dd::sync_folder_lock other(db, base + "/other");  // another folder: its own lock
}

TEST_F(sync_apply, cancelled_apply_completes_with_operation_aborted_and_the_next_run_converges)
{
    for (int i = 0; i < 6; ++i)
        write("f" + std::to_string(i) + ".bin", std::string(30000 + i, 'c'));
    {
        dd::testing::virtual_clock vc;
        asio::io_context ioc;
        auto t = std::make_shared<dd_test::sync_store::transport>(ioc.get_executor(), store);
        dd::client_params params{.base_url = base_url, .api_key = "k"};
        params.rate_limit.enabled = false;
        dd::client client{t, params};
        asio::cancellation_signal cancel;
        dd::sync_plan plan;
        dd::error_code ec;
        bool done = false;
        dd::async_plan_sync(client, journal, manifest, dir, dd::sync_options{}, [&](dd::error_code pec, dd::sync_plan p) {
            ASSERT_FALSE(pec);
            plan = std::move(p);
            dd::sync_apply_options ao;
            ao.transfers = 2;
            ao.on_event = [&](const dd::sync_event& e) {
                if (e.kind == dd::sync_event_kind::action_progress)
                    cancel.emit(asio::cancellation_type::terminal);  // during the first PUT
            };
            dd::async_apply_sync(client, journal, manifest, plan, ao,
                                 asio::bind_cancellation_slot(cancel.slot(), [&](dd::error_code e2, dd::sync_result) {
                                     ec = e2;
                                     done = true;
                                 }));
        });
        EXPECT_TRUE(vc.run_until(ioc, [&] { return done; }, 1h, 500ms));
        EXPECT_EQ(ec, asio::error::operation_aborted);
        EXPECT_LT(store.count("PUT "), 6u);
    }
    auto r = run({});
    ASSERT_FALSE(r.apply_ec) << r.apply_ec.message();
    expect_converged();
}

TEST_F(sync_apply, the_plan_composed_of_its_public_steps_is_async_plan_sync)
{
    write("a.pdf", "aaa");
    write("b/c.pdf", "cc");
    ASSERT_FALSE(run({}).apply_ec);
    write("a.pdf", "AAA");
    rename("b/c.pdf", "d.pdf");
    write("e.pdf", "eeeee");
    dd::sync_options o;
    auto whole = run(o, {}, nullptr, nullptr, true);
    ASSERT_FALSE(whole.plan_ec);

    dd::testing::virtual_clock vc;
    asio::io_context ioc;
    auto t = std::make_shared<dd_test::sync_store::transport>(ioc.get_executor(), store);
    dd::client_params params{.base_url = base_url, .api_key = "k"};
    params.rate_limit.enabled = false;
    dd::client client{t, params};
    auto entries = manifest.entries();
    dd::error_code ec;
    auto local = dd::scan_sync_tree(dir, entries, o, ec);
    ASSERT_FALSE(ec);
    dd::sync_remote remote;
    bool done = false;
    dd::async_list_sync_remote(client, o, [&](dd::error_code e, dd::sync_remote r) {
        ec = e;
        remote = std::move(r);
        done = true;
    });
    EXPECT_TRUE(vc.run_until(ioc, [&] { return done; }, 1h, 500ms));
    ASSERT_FALSE(ec);
    EXPECT_EQ(remote.listing_requests, 1);
    auto composed = dd::plan_sync_with_journal(local, entries, remote, dd::read_sync_journal(journal, local, entries), o);
    ASSERT_EQ(composed.actions.size(), whole.plan.actions.size());
    for (std::size_t i = 0; i < composed.actions.size(); ++i)
    {
        EXPECT_EQ(composed.actions[i].kind, whole.plan.actions[i].kind);
        EXPECT_EQ(composed.actions[i].path, whole.plan.actions[i].path);
    }
    EXPECT_EQ(composed.totals.points, whole.plan.totals.points);
    EXPECT_EQ(composed.totals.move, 1u);
    EXPECT_EQ(composed.totals.replace, 1u);
    EXPECT_EQ(composed.totals.create, 1u);
}
