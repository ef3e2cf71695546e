//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_SQLITE_SQLITE_STATE_IPP
#define DIGITAL_DELIVERY_IMPL_SQLITE_SQLITE_STATE_IPP

#include <digital_delivery/sqlite_state.hpp>

#include <digital_delivery/diagnostics.hpp>
#include <digital_delivery/error_with_diagnostics.hpp>

#include <boost/throw_exception.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

namespace digital_delivery {
namespace detail {

class sqlite_category_impl final : public boost::system::error_category
{
public:
    const char* name() const noexcept override { return "digital_delivery.sqlite"; }
    std::string message(int ev) const override
    {
        const char* m = sqlite3_errstr(ev);
        return std::string("SQLite: ") + (m ? m : "unknown result code") + " (" + std::to_string(ev) + ")";
    }
    char const* message(int ev, char* buffer, std::size_t len) const noexcept override
    {
        const char* m = sqlite3_errstr(ev);
        std::snprintf(buffer, len, "SQLite: %s (%d)", m ? m : "unknown result code", ev);
        return buffer;
    }
};

class state_category_impl final : public boost::system::error_category
{
public:
    const char* name() const noexcept override { return "digital_delivery.state"; }
    std::string message(int ev) const override
    {
        switch (static_cast<state_errc>(ev))
        {
        case state_errc::schema_too_new: return "The state file was written by a newer program (schema version unknown here)";
        case state_errc::wal_unavailable: return "The state file cannot be put in WAL mode (is it on a local, writable file system?)";
        case state_errc::invalid_record: return "The state file holds a record this program does not accept";
        }
        return "Unknown state error";
    }
};

[[noreturn]] inline void throw_state_error(error_code ec, std::string message)
{
    diagnostics d;
    d.client_message = std::move(message);
    boost::throw_exception(error_with_diagnostics(ec, std::move(d)));
}

}  // namespace detail

DIGITAL_DELIVERY_DECL const boost::system::error_category& get_sqlite_category() noexcept
{
    static const detail::sqlite_category_impl c;
    return c;
}

DIGITAL_DELIVERY_DECL const boost::system::error_category& get_state_category() noexcept
{
    static const detail::state_category_impl c;
    return c;
}

// ---- sqlite_state ----------------------------------------------------------------

DIGITAL_DELIVERY_DECL void sqlite_state::fail(int rc, std::string_view what) const
{
    // The connection's message when it is about this failure (it names the
    // table, the constraint, the OS error), else SQLite's text for the code.
    int ext = db_ ? sqlite3_extended_errcode(db_) : rc;
    bool own = db_ && (ext & 0xff) == (rc & 0xff);
    if (!own)
        ext = rc;
    std::string msg = "SQLite: ";
    msg += own ? sqlite3_errmsg(db_) : sqlite3_errstr(ext);
    msg += " (";
    msg += what;
    msg += "; ";
    msg += path_;
    msg += ")";
    detail::throw_state_error(error_code(ext, get_sqlite_category()), std::move(msg));
}

DIGITAL_DELIVERY_DECL sqlite_state::sqlite_state(std::string path, const sqlite_state_options& options)
    : path_(std::move(path))
{
    // Created owner-only before SQLite opens it: SQLite would create it with
    // the umask's mode, and its -wal and -shm files copy the file's mode.
    int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
    {
        int e = errno;
        detail::throw_state_error(error_code(SQLITE_CANTOPEN, get_sqlite_category()),
                                  "SQLite: cannot open the state file: " + std::string(std::strerror(e)) + " (" + path_ + ")");
    }
    ::close(fd);
    int rc = sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
    if (rc != SQLITE_OK)
    {
        // A handle is returned even on failure (except out of memory).
        std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
        int ext = db_ ? sqlite3_extended_errcode(db_) : rc;
        sqlite3_close(db_);
        db_ = nullptr;
        detail::throw_state_error(error_code(ext, get_sqlite_category()), "SQLite: " + msg + " (open; " + path_ + ")");
    }
    struct closer
    {
        sqlite3*& db;
        bool armed = true;
        ~closer()
        {
            if (armed)
            {
                sqlite3_close(db);
                db = nullptr;
            }
        }
    } guard{db_};
    sqlite3_extended_result_codes(db_, 1);
    auto ms = options.busy_timeout.count();
    sqlite3_busy_timeout(db_, ms < 0 ? 0 : ms > 0x7fffffff ? 0x7fffffff : static_cast<int>(ms));
    {
        auto st = prepare("PRAGMA journal_mode=WAL");
        std::string mode = st.step() ? st.column_text(0) : std::string();
        if (mode != "wal")
            detail::throw_state_error(make_error_code(state_errc::wal_unavailable),
                                      "SQLite: journal_mode is '" + mode + "', not 'wal' (" + path_ + ")");
    }
    // FULL: a commit syncs the WAL, so a state written before a network write
    // survives a power loss, not only a crash of the process (NORMAL would).
    exec("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;"
         "CREATE TABLE IF NOT EXISTS dd_schema(component TEXT PRIMARY KEY NOT NULL, version INTEGER NOT NULL)");
    guard.armed = false;
}

DIGITAL_DELIVERY_DECL sqlite_state::~sqlite_state()
{
    if (db_)
        sqlite3_close_v2(db_);
}

DIGITAL_DELIVERY_DECL sqlite_state::sqlite_state(sqlite_state&& other) noexcept
    : path_(std::move(other.path_)), db_(std::exchange(other.db_, nullptr))
{
}

DIGITAL_DELIVERY_DECL void sqlite_state::exec(std::string_view sql)
{
    std::string text(sql);
    int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK)
        fail(rc, text.size() > 80 ? text.substr(0, 80) + "..." : text);
}

DIGITAL_DELIVERY_DECL sqlite_statement sqlite_state::prepare(std::string_view sql)
{
    sqlite3_stmt* s = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &s, nullptr);
    if (rc != SQLITE_OK)
    {
        sqlite3_finalize(s);
        fail(rc, "prepare: " + std::string(sql));
    }
    return sqlite_statement(s, this, sql);
}

DIGITAL_DELIVERY_DECL sqlite_transaction sqlite_state::begin()
{
    exec("BEGIN IMMEDIATE");
    return sqlite_transaction(*this);
}

DIGITAL_DELIVERY_DECL std::int64_t sqlite_state::schema_version(std::string_view component)
{
    auto st = prepare("SELECT version FROM dd_schema WHERE component = ?");
    st.bind(1, component);
    return st.step() ? st.column_int64(0) : 0;
}

DIGITAL_DELIVERY_DECL void sqlite_state::migrate(std::string_view component, std::span<const std::string_view> migrations)
{
    auto tx = begin();
    std::int64_t v = schema_version(component);
    auto target = static_cast<std::int64_t>(migrations.size());
    if (v > target || v < 0)
        detail::throw_state_error(make_error_code(state_errc::schema_too_new),
                                  "the state file's " + std::string(component) + " schema is version " + std::to_string(v) +
                                      "; this program knows versions up to " + std::to_string(target) + " (" + path_ + ")");
    if (v == target)
        return;  // the transaction rolls back: nothing was written
    for (auto i = v; i < target; ++i)
        exec(migrations[static_cast<std::size_t>(i)]);
    prepare("INSERT INTO dd_schema(component, version) VALUES (?, ?) "
            "ON CONFLICT(component) DO UPDATE SET version = excluded.version")
        .bind(1, component)
        .bind(2, target)
        .run();
    tx.commit();
}

DIGITAL_DELIVERY_DECL std::int64_t sqlite_state::last_insert_rowid() const noexcept
{
    return sqlite3_last_insert_rowid(db_);
}

// ---- sqlite_transaction -------------------------------------------------------------

DIGITAL_DELIVERY_DECL sqlite_transaction::~sqlite_transaction()
{
    if (db_)
        sqlite3_exec(db_->native_handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

DIGITAL_DELIVERY_DECL void sqlite_transaction::commit()
{
    sqlite_state* db = std::exchange(db_, nullptr);
    int rc = sqlite3_exec(db->native_handle(), "COMMIT", nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK)
    {
        // A failed COMMIT may leave the transaction open (SQLITE_BUSY): end it.
        if (!sqlite3_get_autocommit(db->native_handle()))
            sqlite3_exec(db->native_handle(), "ROLLBACK", nullptr, nullptr, nullptr);
        db->fail(rc, "COMMIT");
    }
}

DIGITAL_DELIVERY_DECL void sqlite_transaction::rollback()
{
    sqlite_state* db = std::exchange(db_, nullptr);
    int rc = sqlite3_exec(db->native_handle(), "ROLLBACK", nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK)
        db->fail(rc, "ROLLBACK");
}

// ---- sqlite_statement ------------------------------------------------------------------

DIGITAL_DELIVERY_DECL sqlite_statement::~sqlite_statement()
{
    if (stmt_)
        sqlite3_finalize(stmt_);
}

DIGITAL_DELIVERY_DECL void sqlite_statement::check(int rc, const char* what) const
{
    if (rc != SQLITE_OK)
        db_->fail(rc, std::string(what) + ": " + sql_);
}

DIGITAL_DELIVERY_DECL sqlite_statement& sqlite_statement::bind(int index, std::int64_t value)
{
    check(sqlite3_bind_int64(stmt_, index, value), "bind");
    return *this;
}

DIGITAL_DELIVERY_DECL sqlite_statement& sqlite_statement::bind(int index, std::string_view value)
{
    check(sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8), "bind");
    return *this;
}

DIGITAL_DELIVERY_DECL sqlite_statement& sqlite_statement::bind(int index, std::nullptr_t)
{
    check(sqlite3_bind_null(stmt_, index), "bind");
    return *this;
}

DIGITAL_DELIVERY_DECL bool sqlite_statement::step()
{
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW)
        return true;
    if (rc == SQLITE_DONE)
        return false;
    sqlite3_reset(stmt_);
    db_->fail(rc, "step: " + sql_);
}

DIGITAL_DELIVERY_DECL std::int64_t sqlite_statement::run()
{
    while (step())
    {
    }
    auto n = sqlite3_changes64(sqlite3_db_handle(stmt_));
    sqlite3_reset(stmt_);
    return n;
}

DIGITAL_DELIVERY_DECL void sqlite_statement::reset()
{
    sqlite3_reset(stmt_);
}

DIGITAL_DELIVERY_DECL bool sqlite_statement::is_null(int column) const
{
    return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

DIGITAL_DELIVERY_DECL std::int64_t sqlite_statement::column_int64(int column) const
{
    return sqlite3_column_int64(stmt_, column);
}

DIGITAL_DELIVERY_DECL std::string sqlite_statement::column_text(int column) const
{
    const unsigned char* t = sqlite3_column_text(stmt_, column);
    int n = sqlite3_column_bytes(stmt_, column);
    return t ? std::string(reinterpret_cast<const char*>(t), static_cast<std::size_t>(n)) : std::string();
}

}  // namespace digital_delivery

#endif
