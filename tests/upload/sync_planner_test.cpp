// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The folder sync's pure parts: the endpoint cost API, the planner
// (plan_sync: every action kind, the delete guards, adopt, rules), the apply
// rules (sync_apply_core), the local scan (hashing only what changed, hidden
// files, symlinks, files over 2 GB) and the SQLite manifest (with the upload
// journal's schema migration).
#include <digital_delivery/endpoint_cost.hpp>
#include <digital_delivery/impl/sync/sansio/sync_apply_core.hpp>
#include <digital_delivery/sqlite_sync_manifest.hpp>
#include <digital_delivery/sqlite_upload_journal.hpp>
#include <digital_delivery/sync.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

namespace dd = digital_delivery;

// ---- the cost API -------------------------------------------------------------------------

static_assert(dd::endpoint_points<dd::endpoints::list_assets> == 1);
static_assert(dd::endpoint_points<dd::endpoints::create_asset> == 2);
static_assert(dd::endpoint_points<dd::endpoints::delete_asset> == 2);
static_assert(dd::operation_points::upload_asset == 3);
static_assert(dd::operation_points::replace_asset_body == 3);
static_assert(dd::operation_points::edit_product_assets == 4);
static_assert(dd::listing_points<dd::endpoints::list_assets>(0) == 1);
static_assert(dd::listing_points<dd::endpoints::list_assets>(250) == 1);
static_assert(dd::listing_points<dd::endpoints::list_assets>(251) == 2);
static_assert(dd::listing_points<dd::endpoints::list_digital_products>(101) == 2);

namespace {

dd::sync_local_file file(std::string path, std::uint64_t size, std::string sha, std::int64_t mtime = 1)
{
    dd::sync_local_file f;
    f.path = std::move(path);
    f.size = size;
    f.sha256 = std::move(sha);
    f.mtime_ns = mtime;
    return f;
}

dd::sync_manifest_entry entry(std::string path, std::string id, std::uint64_t size, std::string sha, std::int64_t mtime = 1)
{
    dd::sync_manifest_entry e;
    e.path = std::move(path);
    e.asset_id = std::move(id);
    e.size = size;
    e.sha256 = std::move(sha);
    e.mtime_ns = mtime;
    e.filename = e.path.substr(e.path.rfind('/') == std::string::npos ? 0 : e.path.rfind('/') + 1);
    return e;
}

dd::asset remote(std::string id, std::string filename, std::int64_t size)
{
    dd::asset a;
    a.id = std::move(id);
    a.type = dd::asset_type::internal;
    a.filename = std::move(filename);
    a.byte_size = size;
    return a;
}

std::string sha(char c) { return std::string(64, c); }

struct planner : ::testing::Test
{
    dd::sync_local_tree local{.root = "/data"};
    std::vector<dd::sync_manifest_entry> manifest;
    dd::sync_remote rem;
    dd::sync_options o;

    dd::sync_plan plan() { return dd::plan_sync(local, manifest, rem, {}, o); }
    const dd::sync_action* find(const dd::sync_plan& p, const std::string& path)
    {
        for (const auto& a : p.actions)
            if (a.path == path)
                return &a;
        return nullptr;
    }
};

}  // namespace

TEST_F(planner, every_kind_with_its_points_and_bytes)
{
    local.files = {file("new.pdf", 10, sha('n')), file("same.pdf", 5, sha('s')), file("edited.pdf", 5, sha('E')),
                   file("dir/moved.pdf", 7, sha('m'))};
    manifest = {entry("same.pdf", "s1", 5, sha('s')), entry("edited.pdf", "e1", 5, sha('e')),
                entry("old/moved.pdf", "m1", 7, sha('m')), entry("removed.pdf", "r1", 3, sha('r'))};
    rem.assets = {remote("s1", "same.pdf", 5), remote("e1", "edited.pdf", 5), remote("m1", "moved.pdf", 7),
                  remote("r1", "removed.pdf", 3)};
    auto p = plan();
    ASSERT_NE(find(p, "new.pdf"), nullptr);
    EXPECT_EQ(find(p, "new.pdf")->kind, dd::sync_action_kind::create);
    EXPECT_EQ(find(p, "new.pdf")->points, 3);
    EXPECT_EQ(find(p, "new.pdf")->bytes, 10u);
    EXPECT_EQ(find(p, "edited.pdf")->kind, dd::sync_action_kind::replace);  // same size, other hash
    EXPECT_EQ(find(p, "edited.pdf")->asset_id, "e1");
    EXPECT_EQ(find(p, "dir/moved.pdf")->kind, dd::sync_action_kind::move);
    EXPECT_EQ(find(p, "dir/moved.pdf")->from_path, "old/moved.pdf");
    EXPECT_EQ(find(p, "dir/moved.pdf")->points, 0);
    EXPECT_EQ(find(p, "same.pdf"), nullptr);
    EXPECT_EQ(find(p, "removed.pdf"), nullptr);  // deletes are off by default
    EXPECT_EQ(p.totals.unchanged, 1u);
    EXPECT_EQ(p.totals.points, 6);
    EXPECT_EQ(p.totals.bytes, 15u);
    // The order: no-request actions first, deletes last.
    EXPECT_EQ(p.actions.front().kind, dd::sync_action_kind::move);

    o.delete_remote = true;
    auto p2 = plan();
    ASSERT_NE(find(p2, "removed.pdf"), nullptr);
    EXPECT_EQ(find(p2, "removed.pdf")->kind, dd::sync_action_kind::delete_asset);
    EXPECT_EQ(p2.totals.points, 8);
    EXPECT_EQ(p2.actions.back().kind, dd::sync_action_kind::delete_asset);

    o.rename_replace = true;
    auto p3 = plan();
    EXPECT_EQ(find(p3, "dir/moved.pdf")->kind, dd::sync_action_kind::replace);
    EXPECT_EQ(find(p3, "dir/moved.pdf")->reason, dd::sync_reason::moved_renamed);
    EXPECT_EQ(find(p3, "dir/moved.pdf")->filename, "moved.pdf");
}

// The plan does not depend on the order of its inputs: sorted by path (as the scan and the
// SQLite manifest give them: matched by a merge) or not (matched by a hash table), with a
// name that sorts before its folder's files ("a.b" < "a/x"), an mtime-only change, a gone
// file, a forgotten one, a move and the product's link.
TEST_F(planner, sorted_and_unsorted_inputs_plan_alike)
{
    local.files = {file("a/x.pdf", 4, sha('x')), file("a.b", 2, sha('b'), 9), file("new.pdf", 10, sha('n')),
                   file("z/moved.pdf", 7, sha('m')), file("same.pdf", 5, sha('s')), file("edited.pdf", 5, sha('E'))};
    manifest = {entry("same.pdf", "s1", 5, sha('s')), entry("removed.pdf", "r1", 3, sha('r')),
                entry("a/x.pdf", "x1", 4, sha('x')), entry("edited.pdf", "e1", 5, sha('e')),
                entry("old/moved.pdf", "m1", 7, sha('m')), entry("a.b", "b1", 2, sha('b')),
                entry("forgotten.pdf", "f1", 1, sha('f'))};
    rem.assets = {remote("s1", "same.pdf", 5), remote("e1", "edited.pdf", 5), remote("m1", "moved.pdf", 7),
                  remote("r1", "removed.pdf", 3), remote("x1", "x.pdf", 4), remote("b1", "a.b", 2)};
    rem.product_asset_ids = std::vector<std::string>{"s1", "e1", "m1", "r1", "x1"};
    o.delete_remote = true;
    o.product_id = "p1";
    auto summary = [](const dd::sync_plan& p) {
        std::vector<std::string> out;
        for (const auto& a : p.actions)
            out.push_back(std::to_string(static_cast<int>(a.kind)) + " " + a.path + " " + a.asset_id + " " + a.from_path);
        std::sort(out.begin(), out.end());
        for (const auto& e : p.manifest_refresh)
            out.push_back("refresh " + e.path + " " + std::to_string(e.mtime_ns));
        for (const auto& f : p.manifest_forget)
            out.push_back("forget " + f);
        out.push_back("unchanged " + std::to_string(p.totals.unchanged) + " points " + std::to_string(p.totals.points) +
                      " product " + std::to_string(p.product_points));
        return out;
    };
    const auto unsorted = summary(plan());
    const auto by_path = [](const auto& a, const auto& b) { return a.path < b.path; };
    std::sort(local.files.begin(), local.files.end(), by_path);
    std::sort(manifest.begin(), manifest.end(), by_path);
    const auto sorted = summary(plan());
    EXPECT_EQ(sorted, unsorted);
    EXPECT_EQ(sorted, (std::vector<std::string>{
                          "1 new.pdf  ", "2 edited.pdf e1 ", "3 removed.pdf r1 ", "5 z/moved.pdf m1 old/moved.pdf",
                          "refresh a.b 9", "forget forgotten.pdf", "unchanged 3 points 16 product 8"}));
}

TEST_F(planner, changed_or_deleted_by_someone_else)
{
    local.files = {file("a.pdf", 5, sha('a')), file("b.pdf", 5, sha('b'))};
    manifest = {entry("a.pdf", "a1", 5, sha('a')), entry("b.pdf", "b1", 5, sha('b'))};
    rem.assets = {remote("a1", "a.pdf", 5)};
    rem.assets[0].updated_at = dd::timestamp(std::chrono::microseconds(42));  // not what the manifest recorded
    auto p = plan();
    EXPECT_EQ(find(p, "a.pdf")->kind, dd::sync_action_kind::replace);
    EXPECT_EQ(find(p, "a.pdf")->reason, dd::sync_reason::remote_changed);
    EXPECT_EQ(find(p, "b.pdf")->kind, dd::sync_action_kind::create);
    EXPECT_EQ(find(p, "b.pdf")->reason, dd::sync_reason::remote_deleted);
}

TEST_F(planner, delete_guards)
{
    manifest = {entry("a", "a1", 1, sha('a')), entry("b", "b1", 1, sha('b')), entry("c", "c1", 1, sha('c')),
                entry("d", "d1", 1, sha('d'))};
    rem.assets = {remote("a1", "a", 1), remote("b1", "b", 1), remote("c1", "c", 1), remote("d1", "d", 1)};
    o.delete_remote = true;
    // The local side is empty: every delete refused.
    auto p = plan();
    EXPECT_EQ(p.deletes_refused, dd::sync_errc::deletes_refused_empty);
    EXPECT_EQ(p.totals.delete_asset, 0u);
    EXPECT_EQ(p.totals.skip, 4u);
    // Shrank by 3 of 4 (> 0.5): refused.
    local.files = {file("a", 1, sha('a'))};
    EXPECT_EQ(plan().deletes_refused, dd::sync_errc::deletes_refused_shrink);
    // 2 of 4 gone (= 0.5): allowed, but max_delete 1 refuses both.
    local.files = {file("a", 1, sha('a')), file("b", 1, sha('b'))};
    EXPECT_FALSE(plan().deletes_refused);
    EXPECT_EQ(plan().totals.delete_asset, 2u);
    o.max_delete = 1;
    EXPECT_EQ(plan().deletes_refused, dd::sync_errc::deletes_refused_max);
    o.max_delete.reset();
    // A linked asset needs its own flag.
    rem.linked_asset_ids = {"c1"};
    auto p2 = plan();
    EXPECT_EQ(find(p2, "c")->kind, dd::sync_action_kind::skip);
    EXPECT_EQ(find(p2, "c")->error, dd::sync_errc::linked_asset);
    o.delete_linked = true;
    EXPECT_EQ(find(plan(), "c")->kind, dd::sync_action_kind::delete_asset);
    // A file out of the rules' scope now is neither deleted nor forgotten.
    o.rules = {{.include = false, .pattern = "c"}};
    EXPECT_EQ(find(plan(), "c"), nullptr);
}

TEST_F(planner, adopt_only_when_asked_and_unambiguous)
{
    local.files = {file("x/manual.pdf", 12, sha('m')), file("other.pdf", 11, sha('o')), file("none.pdf", 3, sha('z'))};
    rem.assets = {remote("m1", "manual.pdf", 12), remote("o1", "other.pdf", 11), remote("o2", "other.pdf", 11),
                  remote("w1", "none.pdf", 4)};
    EXPECT_EQ(plan().totals.create, 3u);  // off by default
    o.adopt = dd::sync_adopt::trust;
    auto p = plan();
    EXPECT_EQ(find(p, "x/manual.pdf")->kind, dd::sync_action_kind::adopt);
    EXPECT_EQ(find(p, "x/manual.pdf")->asset_id, "m1");
    EXPECT_EQ(find(p, "x/manual.pdf")->points, 0);
    EXPECT_EQ(find(p, "other.pdf")->kind, dd::sync_action_kind::ambiguous);
    EXPECT_EQ(find(p, "other.pdf")->candidates, (std::vector<std::string>{"o1", "o2"}));
    EXPECT_EQ(find(p, "none.pdf")->kind, dd::sync_action_kind::create);  // other size: no match
    o.adopt = dd::sync_adopt::replace;
    EXPECT_EQ(find(plan(), "x/manual.pdf")->kind, dd::sync_action_kind::replace);
    // An asset the manifest holds for another path is never adopted.
    manifest = {entry("elsewhere.pdf", "m1", 99, sha('q'))};
    local.files.push_back(file("elsewhere.pdf", 99, sha('q')));
    EXPECT_EQ(find(plan(), "x/manual.pdf")->kind, dd::sync_action_kind::create);
}

TEST_F(planner, a_committed_journal_upload_is_taken_not_uploaded_again)
{
    local.files = {file("a.pdf", 5, sha('a'))};
    rem.assets = {remote("a1", "a.pdf", 5)};
    dd::upload_record r{.path = "/data/a.pdf", .size = 5, .sha256 = sha('a'), .filename = "a.pdf",
                        .stage = dd::upload_stage::committed, .asset_id = "a1"};
    std::vector<dd::upload_record> committed{r};
    auto p = dd::plan_sync(local, manifest, rem, committed, o);
    ASSERT_EQ(p.actions.size(), 1u);
    EXPECT_EQ(p.actions[0].kind, dd::sync_action_kind::adopt);
    EXPECT_EQ(p.actions[0].reason, dd::sync_reason::journal_recovered);
    EXPECT_EQ(p.totals.points, 0);
}

TEST(sync_mapping, path_to_asset_fields)
{
    std::string filename, name;
    std::optional<std::string> ct;
    dd::sync_asset_fields("docs/a/readme.pdf", filename, name, ct);
    EXPECT_EQ(filename, "readme.pdf");
    EXPECT_EQ(name, "docs/a/readme.pdf");
    EXPECT_EQ(ct, "application/pdf");
    dd::sync_asset_fields("b/README.PDF", filename, name, ct);
    EXPECT_EQ(ct, "application/pdf");
    dd::sync_asset_fields("noext", filename, name, ct);
    EXPECT_EQ(ct, std::nullopt);
}

TEST(sync_rules, first_match_decides)
{
    std::vector<dd::sync_rule> rules{{.include = true, .pattern = "keep/*.tmp"},
                                     {.include = false, .pattern = "*.tmp"},
                                     {.include = false, .pattern = "drafts/**"}};
    EXPECT_TRUE(dd::sync_rules_admit(rules, "keep/a.tmp"));
    EXPECT_FALSE(dd::sync_rules_admit(rules, "x/y/a.tmp"));
    EXPECT_FALSE(dd::sync_rules_admit(rules, "drafts/a/b.pdf"));
    EXPECT_TRUE(dd::sync_rules_admit(rules, "final/a.pdf"));
    EXPECT_FALSE(dd::sync_rules_admit(rules, "keep/sub/a.tmp"));  // '*' does not cross '/'
    std::vector<dd::sync_rule> only_pdf{{.include = true, .pattern = "*.pdf"}, {.include = false, .pattern = "**"}};
    EXPECT_TRUE(dd::sync_rules_admit(only_pdf, "a/b/c.pdf"));
    EXPECT_FALSE(dd::sync_rules_admit(only_pdf, "a/b/c.mp3"));
    std::vector<dd::sync_rule> deep{{.include = false, .pattern = "a/**/c.pdf"}};
    EXPECT_FALSE(dd::sync_rules_admit(deep, "a/c.pdf"));
    EXPECT_FALSE(dd::sync_rules_admit(deep, "a/b/b2/c.pdf"));
    EXPECT_TRUE(dd::sync_rules_admit(deep, "b/c.pdf"));
}

// ---- the apply rules ------------------------------------------------------------------------

TEST(sync_apply_core, uploads_then_deletes_only_when_all_succeeded)
{
    dd::sync_plan p;
    p.actions.resize(4);
    p.actions[0].kind = dd::sync_action_kind::move;
    p.actions[1].kind = dd::sync_action_kind::create;
    p.actions[1].points = 3;
    p.actions[2].kind = dd::sync_action_kind::replace;
    p.actions[2].points = 3;
    p.actions[3].kind = dd::sync_action_kind::delete_asset;
    p.actions[3].points = 2;
    using K = dd::detail::sync_apply_core::next_kind;
    {
        dd::detail::sync_apply_core c(p, std::nullopt);
        EXPECT_EQ(c.take().kind, K::local);
        auto u1 = c.take();
        auto u2 = c.take();
        EXPECT_EQ(u1.kind, K::upload);
        EXPECT_EQ(u2.kind, K::upload);
        EXPECT_EQ(c.take().kind, K::done);  // uploads in flight: no delete yet
        c.finish(u1.index, {});
        EXPECT_EQ(c.take().kind, K::done);
        c.finish(u2.index, {});
        auto d = c.take();
        EXPECT_EQ(d.kind, K::remove);
        c.finish(d.index, {});
        EXPECT_EQ(c.outcome().first, dd::sync_outcome::complete);
        EXPECT_EQ(c.points(), 8);
    }
    {
        dd::detail::sync_apply_core c(p, std::nullopt);
        c.take();
        auto u1 = c.take();
        auto u2 = c.take();
        c.finish(u1.index, dd::api_errc::server_error);
        c.finish(u2.index, {});
        EXPECT_EQ(c.take().kind, K::done);  // an upload failed: no delete
        EXPECT_EQ(c.outcome().second, dd::sync_errc::uploads_failed);
        EXPECT_EQ(c.not_started(), 1u);
    }
    {
        dd::detail::sync_apply_core c(p, std::int64_t{5});
        c.take();
        auto u1 = c.take();
        EXPECT_EQ(u1.kind, K::upload);
        EXPECT_EQ(c.take().kind, K::done);  // 3 + 3 > 5
        c.finish(u1.index, {});
        EXPECT_EQ(c.outcome().first, dd::sync_outcome::partial);
        EXPECT_EQ(c.outcome().second, dd::sync_errc::points_exhausted);
    }
    {
        dd::detail::sync_apply_core c(p, std::nullopt);
        c.take();
        auto u1 = c.take();
        c.finish(u1.index, dd::api_errc::asset_count_limit_exceeded);
        EXPECT_EQ(c.take().kind, K::done);  // no create or replace after a quota error
        EXPECT_EQ(c.outcome().first, dd::sync_outcome::quota_stopped);
    }
}

// ---- the local scan ------------------------------------------------------------------------

namespace {
struct scan : ::testing::Test
{
    std::string dir = [] {
        std::string t = (std::filesystem::temp_directory_path() / "dd-scan-XXXXXX").string();
        if (!::mkdtemp(t.data()))
            throw std::runtime_error("mkdtemp");
        return t;
    }();
    ~scan() override { std::filesystem::remove_all(dir); }
    void write(const std::string& rel, const std::string& content)
    {
        auto p = std::filesystem::path(dir) / rel;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary | std::ios::trunc) << content;
    }
};
}  // namespace

TEST_F(scan, hashes_only_what_changed_and_skips_hidden_symlinks_and_large_files)
{
    write("a.pdf", "abc");
    write("sub/b.pdf", "bcd");
    write(".hidden/c.pdf", "x");
    write(".d.pdf", "y");
    std::filesystem::create_symlink(dir + "/a.pdf", dir + "/link.pdf");
    {
        // 2 GB + 1 byte, sparse: skipped, never read.
        int fd = ::open((dir + "/big.bin").c_str(), O_CREAT | O_WRONLY, 0600);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(::ftruncate(fd, dd::max_asset_byte_size + 1), 0);
        ::close(fd);
    }
    dd::error_code ec;
    // No manifest: new files are not read (the journal hashes them when it uploads them).
    auto t0 = dd::scan_sync_tree(dir, {}, {}, ec);
    ASSERT_FALSE(ec);
    ASSERT_EQ(t0.files.size(), 3u);
    EXPECT_EQ(t0.hashed, 0u);
    EXPECT_TRUE(t0.files[0].sha256.empty());
    // A manifest entry whose file is gone, of size 3: the new files of size 3 may be it, moved.
    std::vector<dd::sync_manifest_entry> gone{entry("gone.pdf", "g1", 3, sha('g'))};
    auto t = dd::scan_sync_tree(dir, gone, {}, ec);
    ASSERT_EQ(t.files.size(), 3u);
    EXPECT_EQ(t.files[0].path, "a.pdf");
    EXPECT_EQ(t.files[0].sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(t.files[1].path, "big.bin");
    EXPECT_EQ(t.files[1].skip, dd::sync_errc::file_too_large);
    EXPECT_EQ(t.files[2].path, "sub/b.pdf");
    EXPECT_EQ(t.hashed, 2u);
    EXPECT_EQ(t.skipped_hidden, 2u);
    EXPECT_EQ(t.skipped_symlinks, 1u);

    // A manifest with the same size and mtime: not read again (its hash is taken).
    std::vector<dd::sync_manifest_entry> m{entry("a.pdf", "a1", 3, sha('k'), t.files[0].mtime_ns),
                                           entry("sub/b.pdf", "b1", 3, sha('l'), t.files[2].mtime_ns + 1)};
    auto t2 = dd::scan_sync_tree(dir, m, {}, ec);
    EXPECT_FALSE(t2.files[0].hashed);
    EXPECT_EQ(t2.files[0].sha256, sha('k'));
    EXPECT_TRUE(t2.files[2].hashed);  // mtime differs
    EXPECT_EQ(t2.hashed, 1u);

    dd::sync_options o;
    o.hidden = true;
    o.symlinks = true;
    auto t3 = dd::scan_sync_tree(dir, {}, o, ec);
    EXPECT_EQ(t3.files.size(), 6u);

    dd::scan_sync_tree(dir + "/a.pdf", {}, {}, ec);
    EXPECT_EQ(ec, dd::sync_errc::not_a_directory);
}

// The scan finds each file's manifest entry whether the manifest is sorted by path (looked
// up in order, with a binary search after a file it does not hold) or not (a hash table),
// and returns the files in path order also when a name sorts before its folder's files.
TEST_F(scan, manifest_in_any_order_and_files_in_path_order)
{
    write("a/x.pdf", "xx");
    write("a.b", "b");
    write("c/new.pdf", "n");
    write("c/old.pdf", "o");
    write("d.pdf", "ddd");
    dd::error_code ec;
    auto t0 = dd::scan_sync_tree(dir, {}, {}, ec);
    ASSERT_FALSE(ec);
    ASSERT_EQ(t0.files.size(), 5u);
    std::vector<dd::sync_manifest_entry> m;
    for (const auto& f : t0.files)
        if (f.path != "c/new.pdf")
            m.push_back(entry(f.path, "id-" + f.path, f.size, std::string(64, static_cast<char>('k' + m.size())), f.mtime_ns));
    ASSERT_EQ(m.size(), 4u);
    for (int order = 0; order < 2; ++order)
    {
        if (order == 1)
            std::reverse(m.begin(), m.end());
        auto t = dd::scan_sync_tree(dir, m, {}, ec);
        ASSERT_FALSE(ec);
        std::vector<std::string> got;
        for (const auto& f : t.files)
            got.push_back(f.path + " " + f.sha256.substr(0, 1) + (f.hashed ? " hashed" : ""));
        EXPECT_EQ(got, (std::vector<std::string>{"a.b k", "a/x.pdf l", "c/new.pdf ", "c/old.pdf m", "d.pdf n"}))
            << "manifest order " << order;
        EXPECT_EQ(t.hashed, 0u);
    }
}

// ---- the SQLite manifest and the journal's migration ---------------------------------------

TEST_F(scan, sqlite_manifest_round_trip_per_folder_and_journal_migration)
{
    const std::string db = dir + "/state.db";
    {
        // A journal file of schema version 1 (before replaces were journaled), with a record.
        dd::sqlite_state s(db);
        static constexpr std::string_view v1[] = {
            "CREATE TABLE dd_upload_journal("
            " id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL, size INTEGER NOT NULL, sha256 TEXT NOT NULL,"
            " filename TEXT NOT NULL, content_type TEXT, name TEXT,"
            " watermark_asset INTEGER CHECK (watermark_asset IN (0, 1)),"
            " stage INTEGER NOT NULL CHECK (stage BETWEEN 1 AND 4), asset_id TEXT NOT NULL DEFAULT '',"
            " intent_unix_ms INTEGER NOT NULL);"
            "CREATE INDEX dd_upload_journal_path ON dd_upload_journal(path);"
            "CREATE INDEX dd_upload_journal_stage ON dd_upload_journal(stage)"};
        s.migrate("upload_journal", v1);
        s.exec("INSERT INTO dd_upload_journal(path, size, sha256, filename, stage, asset_id, intent_unix_ms) "
               "VALUES ('/x/a.pdf', 3, 'abc', 'a.pdf', 2, 'a1', 5)");
    }
    {
        dd::sqlite_upload_journal j(db);
        EXPECT_EQ(j.state().schema_version("upload_journal"), 2);
        auto recs = j.find("/x/a.pdf");
        ASSERT_EQ(recs.size(), 1u);
        EXPECT_FALSE(recs[0].replace);
        auto r = recs[0];
        r.replace = true;
        j.update(r);
        EXPECT_TRUE(j.find("/x/a.pdf")[0].replace);

        dd::sqlite_sync_manifest m1(j.state(), "/x");
        dd::sqlite_sync_manifest m2(j.state(), "/y");
        auto e = entry("b.pdf", "b1", 3, sha('b'), 77);
        e.asset_updated_at = dd::timestamp(std::chrono::microseconds(1'700'000'000'123'456));
        m1.put(e);
        m1.put(entry("a.pdf", "a1", 3, sha('a')));
        m2.put(entry("a.pdf", "z1", 4, sha('z')));
        m1.move("b.pdf", entry("c/b.pdf", "b1", 3, sha('b'), 78));
        EXPECT_EQ(m1.state_file(), db);
    }
    {
        dd::sqlite_upload_journal j(db);
        dd::sqlite_sync_manifest m1(j.state(), "/x");
        auto es = m1.entries();
        ASSERT_EQ(es.size(), 2u);
        EXPECT_EQ(es[0].path, "a.pdf");
        EXPECT_EQ(es[1].path, "c/b.pdf");
        EXPECT_EQ(es[1].mtime_ns, 78);
        m1.erase("a.pdf");
        EXPECT_EQ(m1.entries().size(), 1u);
        dd::sqlite_sync_manifest m2(j.state(), "/y");
        ASSERT_EQ(m2.entries().size(), 1u);
        EXPECT_EQ(m2.entries()[0].asset_id, "z1");
        // A row this program does not accept: a typed error, not a crash.
        j.state().exec("UPDATE dd_sync_manifest SET sha256 = 'short' WHERE root = '/y'");
        try
        {
            m2.entries();
            ADD_FAILURE() << "an invalid row was accepted";
        }
        catch (const dd::error_with_diagnostics& ex)
        {
            EXPECT_EQ(ex.code(), dd::state_errc::invalid_record);
        }
    }
}
