// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The SQLite state file (<digital_delivery/sqlite_state.hpp>): WAL and
// synchronous=FULL, owner-only files, schema versions per component, one
// transaction per change (rolled back unless committed, also when the process
// dies), typed errors with SQLite's words, and two processes writing one file.
#include <digital_delivery/sqlite_state.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <string_view>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace dd = digital_delivery;

namespace {

struct temp_dir
{
    std::filesystem::path path;
    temp_dir()
    {
        std::string t = (std::filesystem::temp_directory_path() / "dd-sqlite-XXXXXX").string();
        if (!::mkdtemp(t.data()))
            throw std::runtime_error("mkdtemp failed");
        path = t;
    }
    ~temp_dir() { std::filesystem::remove_all(path); }
    std::string file(std::string_view name) const { return (path / name).string(); }
};

constexpr std::string_view counter_v1[] = {
    "CREATE TABLE counter(id INTEGER PRIMARY KEY, n INTEGER NOT NULL); INSERT INTO counter VALUES (1, 0)",
};

std::int64_t read_counter(dd::sqlite_state& db)
{
    auto st = db.prepare("SELECT n FROM counter WHERE id = 1");
    EXPECT_TRUE(st.step());
    return st.column_int64(0);
}

// Runs f in a child process; returns its exit status (-1 when it did not exit).
template <class F>
int in_child(F f)
{
    pid_t pid = ::fork();
    if (pid == 0)
    {
        int rc = 0;
        try
        {
            rc = f();
        }
        catch (...)
        {
            rc = 99;
        }
        ::_exit(rc);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST(sqlite_state, opens_in_wal_with_full_sync_owner_only)
{
    temp_dir dir;
    auto path = dir.file("state.db");
    dd::sqlite_state db(path);
    auto mode = db.prepare("PRAGMA journal_mode");
    ASSERT_TRUE(mode.step());
    EXPECT_EQ(mode.column_text(0), "wal");
    auto sync = db.prepare("PRAGMA synchronous");
    ASSERT_TRUE(sync.step());
    EXPECT_EQ(sync.column_int64(0), 2);  // FULL
    struct stat st{};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(sqlite_state, migrations_run_once_per_version_and_per_component)
{
    temp_dir dir;
    auto path = dir.file("state.db");
    constexpr std::string_view v2[] = {
        "CREATE TABLE a(x INTEGER)",
        "ALTER TABLE a ADD COLUMN y TEXT",
    };
    {
        dd::sqlite_state db(path);
        EXPECT_EQ(db.schema_version("job_a"), 0);
        db.migrate("job_a", std::span(v2).first(1));
        EXPECT_EQ(db.schema_version("job_a"), 1);
        db.migrate("job_b", counter_v1);
        EXPECT_EQ(db.schema_version("job_b"), 1);
    }
    dd::sqlite_state db(path);
    db.migrate("job_a", v2);  // from 1 to 2: only the ALTER runs
    EXPECT_EQ(db.schema_version("job_a"), 2);
    db.migrate("job_a", v2);  // nothing to do (a second CREATE would fail)
    db.prepare("INSERT INTO a(x, y) VALUES (1, 'one')").run();
    EXPECT_EQ(db.schema_version("job_b"), 1);
}

TEST(sqlite_state, a_newer_schema_is_refused_untouched)
{
    temp_dir dir;
    dd::sqlite_state db(dir.file("state.db"));
    constexpr std::string_view v2[] = {"CREATE TABLE a(x INTEGER)", "CREATE TABLE b(x INTEGER)"};
    db.migrate("job", v2);
    try
    {
        db.migrate("job", std::span(v2).first(1));
        FAIL() << "no error";
    }
    catch (const dd::error_with_diagnostics& e)
    {
        EXPECT_EQ(e.code(), dd::state_errc::schema_too_new);
        EXPECT_NE(e.get_diagnostics().client_message.find("version 2"), std::string::npos)
            << e.get_diagnostics().client_message;
    }
    EXPECT_EQ(db.schema_version("job"), 2);
}

TEST(sqlite_state, a_transaction_not_committed_is_rolled_back)
{
    temp_dir dir;
    auto path = dir.file("state.db");
    dd::sqlite_state db(path);
    db.migrate("counter", counter_v1);
    {
        auto tx = db.begin();
        db.prepare("UPDATE counter SET n = 5").run();
    }  // destroyed: rolled back
    EXPECT_EQ(read_counter(db), 0);
    {
        auto tx = db.begin();
        db.prepare("UPDATE counter SET n = 7").run();
        tx.commit();
    }
    dd::sqlite_state again(path);
    EXPECT_EQ(read_counter(again), 7);
}

TEST(sqlite_state, errors_carry_sqlites_code_and_words)
{
    temp_dir dir;
    dd::sqlite_state db(dir.file("state.db"));
    db.migrate("counter", counter_v1);
    try
    {
        db.prepare("INSERT INTO counter VALUES (?, 0)").bind(1, 1).run();
        FAIL() << "no error";
    }
    catch (const dd::error_with_diagnostics& e)
    {
        EXPECT_EQ(e.code().category(), dd::get_sqlite_category());
        EXPECT_EQ(e.code().value(), 1555);  // SQLITE_CONSTRAINT_PRIMARYKEY
        EXPECT_NE(e.get_diagnostics().client_message.find("UNIQUE constraint failed: counter.id"), std::string::npos)
            << e.get_diagnostics().client_message;
        EXPECT_NE(e.get_diagnostics().client_message.find("state.db"), std::string::npos);
    }
    try
    {
        db.prepare("SELECT x FROM nowhere");
        FAIL() << "no error";
    }
    catch (const dd::error_with_diagnostics& e)
    {
        EXPECT_EQ(e.code().value(), 1);  // SQLITE_ERROR
        EXPECT_NE(e.get_diagnostics().client_message.find("no such table: nowhere"), std::string::npos)
            << e.get_diagnostics().client_message;
    }
    EXPECT_THROW(dd::sqlite_state(dir.file("no/such/dir/state.db")), dd::error_with_diagnostics);
}

TEST(sqlite_state, a_writer_waits_for_another_then_fails_busy_after_the_timeout)
{
    temp_dir dir;
    auto path = dir.file("state.db");
    dd::sqlite_state a(path);
    a.migrate("counter", counter_v1);
    dd::sqlite_state b(path, {.busy_timeout = std::chrono::milliseconds(20)});
    auto held = a.begin();
    try
    {
        auto tx = b.begin();
        FAIL() << "two write transactions at once";
    }
    catch (const dd::error_with_diagnostics& e)
    {
        EXPECT_EQ(e.code().value() & 0xff, 5) << e.what();  // SQLITE_BUSY
    }
    held.commit();
    auto tx = b.begin();  // free now
    tx.commit();
}

TEST(sqlite_state, two_processes_increment_one_counter_without_losing_a_write)
{
    temp_dir dir;
    auto path = dir.file("state.db");
    {
        dd::sqlite_state db(path);
        db.migrate("counter", counter_v1);
    }
    constexpr int per_process = 100;
    auto worker = [&] {
        dd::sqlite_state db(path);
        for (int i = 0; i < per_process; ++i)
        {
            auto tx = db.begin();
            auto n = read_counter(db);  // read, then write: a lost update without the write lock
            db.prepare("UPDATE counter SET n = ?").bind(1, n + 1).run();
            tx.commit();
        }
        return 0;
    };
    pid_t first = ::fork();
    if (first == 0)
    {
        int rc = 1;
        try
        {
            rc = worker();
        }
        catch (...)
        {
        }
        ::_exit(rc);
    }
    int second = in_child(worker);
    int status = 0;
    ::waitpid(first, &status, 0);
    EXPECT_EQ(second, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    dd::sqlite_state db(path);
    EXPECT_EQ(read_counter(db), 2 * per_process);
}

TEST(sqlite_state, a_process_dying_mid_transaction_leaves_the_last_commit)
{
    temp_dir dir;
    auto path = dir.file("state.db");
    {
        dd::sqlite_state db(path);
        db.migrate("counter", counter_v1);
    }
    EXPECT_EQ(in_child([&] {
                  dd::sqlite_state db(path);
                  auto tx = db.begin();
                  db.prepare("UPDATE counter SET n = 1").run();
                  tx.commit();
                  auto dying = db.begin();
                  db.prepare("UPDATE counter SET n = 2").run();
                  ::_exit(0);  // no rollback, no close
                  return 0;
              }),
              0);
    dd::sqlite_state db(path);
    EXPECT_EQ(read_counter(db), 1);
    auto tx = db.begin();  // the dead process's lock is gone
    tx.commit();
}
