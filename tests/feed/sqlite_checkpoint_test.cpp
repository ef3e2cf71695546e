// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The order feed's SQLite checkpoint: every field survives a reopen, the
// pruning deletes, consumers share a file apart, a refused commit applies
// nothing, and the feed's core resumes from the file after a crash.
#include <digital_delivery/impl/feed/sansio/feed_core.hpp>
#include <digital_delivery/sqlite_feed_checkpoint.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace dd = digital_delivery;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

class sqlite_checkpoint_test : public ::testing::Test
{
protected:
    fs::path dir;
    std::string file;
    dd::timestamp t0 = dd::timestamp(std::chrono::sys_days(std::chrono::year(2026) / 12 / 4));

    void SetUp() override
    {
        char tmpl[] = "/tmp/dd_feed_ckpt_XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir = tmpl;
        file = (dir / "state.db").string();
    }
    void TearDown() override
    {
        std::error_code ec;
        fs::permissions(dir, fs::perms::owner_all, ec);
        fs::remove_all(dir, ec);
    }

    dd::feed_commit sample() const
    {
        dd::feed_commit c;
        c.initialise = true;
        c.horizon = t0;
        c.watermark = t0 + 5s;
        c.last_lookback = t0 + 1s;
        dd::feed_order_state k;
        k.id = "o1";
        k.created_at = t0 + 5s;
        k.financial_status = "refunded";
        k.download_count = 3;
        k.expires_at = t0 + 48h;
        k.expired_reported = true;
        k.revoked_reported = true;
        k.limit_reached = {"e1", "e2"};
        c.upserts.push_back(k);
        dd::feed_dead_letter d{"new_order:o2", R"({"key":"new_order:o2"})", "exit status 3", 5, t0 + 9s};
        c.add_dead.push_back(d);
        return c;
    }
};

TEST_F(sqlite_checkpoint_test, every_field_survives_a_reopen)
{
    {
        dd::sqlite_feed_checkpoint cp(file, "a");
        dd::feed_state s;
        ASSERT_FALSE(cp.load(s));
        EXPECT_FALSE(s.initialised);
        ASSERT_FALSE(cp.commit(sample()));
    }
    dd::sqlite_feed_checkpoint cp(file, "a");
    dd::feed_state s;
    ASSERT_FALSE(cp.load(s));
    dd::feed_state want;
    dd::apply_feed_commit(want, sample());
    EXPECT_TRUE(s.initialised);
    EXPECT_EQ(s.horizon, want.horizon);
    EXPECT_EQ(s.watermark, want.watermark);
    EXPECT_EQ(s.last_lookback, want.last_lookback);
    ASSERT_EQ(s.orders.size(), 1u);
    const auto& k = s.orders.at("o1");
    EXPECT_EQ(k.created_at, t0 + 5s);
    EXPECT_EQ(k.financial_status, "refunded");
    EXPECT_EQ(k.download_count, 3);
    EXPECT_EQ(k.expires_at, t0 + 48h);
    EXPECT_TRUE(k.expired_reported);
    EXPECT_TRUE(k.revoked_reported);
    EXPECT_EQ(k.limit_reached, (std::vector<std::string>{"e1", "e2"}));
    ASSERT_EQ(s.dead_letters.size(), 1u);
    EXPECT_EQ(s.dead_letters.at("new_order:o2").error, "exit status 3");
    EXPECT_EQ(s.dead_letters.at("new_order:o2").attempts, 5);
    // Another consumer in the same file starts empty.
    dd::sqlite_feed_checkpoint other(file, "b");
    dd::feed_state o;
    ASSERT_FALSE(other.load(o));
    EXPECT_FALSE(o.initialised);
    EXPECT_TRUE(o.orders.empty());
}

TEST_F(sqlite_checkpoint_test, a_new_horizon_prunes_and_a_removed_dead_letter_goes)
{
    dd::sqlite_feed_checkpoint cp(file, "a");
    ASSERT_FALSE(cp.commit(sample()));
    dd::feed_commit c;
    c.horizon = t0 + 6s;
    c.remove_dead.push_back("new_order:o2");
    ASSERT_FALSE(cp.commit(c));
    dd::feed_state s;
    ASSERT_FALSE(cp.load(s));
    EXPECT_TRUE(s.orders.empty());
    EXPECT_TRUE(s.dead_letters.empty());
    EXPECT_EQ(s.horizon, t0 + 6s);
}

TEST_F(sqlite_checkpoint_test, a_refused_commit_applies_nothing)
{
    dd::sqlite_feed_checkpoint cp(file, "a", {.busy_timeout = std::chrono::milliseconds(50)});
    ASSERT_FALSE(cp.commit(sample()));
    // Another process holds the write lock: the commit fails (SQLITE_BUSY), nothing applied.
    dd::sqlite_state other(file);
    auto tx = other.begin();
    dd::feed_commit c;
    c.watermark = t0 + 1h;
    c.upserts.push_back({.id = "o3", .created_at = t0 + 1h});
    const dd::error_code ec = cp.commit(c);
    EXPECT_EQ(ec.value() & 0xff, 5) << ec.message();  // SQLITE_BUSY
    tx.rollback();
    dd::feed_state s;
    ASSERT_FALSE(cp.load(s));
    EXPECT_EQ(s.watermark, t0 + 5s);
    EXPECT_EQ(s.orders.count("o3"), 0u);
    // The same commit once the lock is free.
    ASSERT_FALSE(cp.commit(c));
    ASSERT_FALSE(cp.load(s));
    EXPECT_EQ(s.orders.count("o3"), 1u);
}

TEST_F(sqlite_checkpoint_test, the_core_resumes_from_the_file_after_a_crash)
{
    dd::order_list page;
    for (int i = 0; i < 3; ++i)
    {
        dd::order o;
        o.id = "o" + std::to_string(i);
        o.created_at = t0 + std::chrono::seconds(1 + i);
        page.orders.push_back(o);
    }
    page.pagination = {1, 250, 3, 1};
    std::vector<std::string> handled;
    for (int run = 0; run < 2; ++run)
    {
        dd::sqlite_feed_checkpoint cp(file, "a");
        dd::detail::feed_core c({});
        dd::feed_state s;
        ASSERT_FALSE(cp.load(s));
        if (auto first = c.start(s, t0))
        {
            ASSERT_FALSE(cp.commit(*first));
            c.committed(*first);
        }
        c.begin_scan(dd::detail::feed_core::scan_kind::new_orders, t0 + 10s);
        EXPECT_FALSE(c.on_page(page, t0 + 10s));
        while (c.has_event())
        {
            handled.push_back(c.front().order.id);
            if (run == 0 && handled.size() == 2)
                break;  // the process dies after handling o1, before its acknowledgement
            auto a = c.ack_commit();
            ASSERT_FALSE(cp.commit(a));
            c.acknowledged(a);
        }
    }
    EXPECT_EQ(handled, (std::vector<std::string>{"o0", "o1", "o1", "o2"}));
}

}  // namespace
