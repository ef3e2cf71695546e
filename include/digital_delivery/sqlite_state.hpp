//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_SQLITE_STATE_HPP
#define DIGITAL_DELIVERY_SQLITE_STATE_HPP

/// \file
/// The SQLite state file of the library's durable jobs (opt-in: the umbrella
/// header does not include it, and only a program that uses it links
/// libsqlite3). See docs/sqlite.md.
///
/// \code
/// #include <digital_delivery/sqlite_state.hpp>
/// dd::sqlite_state db("/var/lib/app/state.db");
/// static constexpr std::string_view steps[] = {"CREATE TABLE t(k TEXT PRIMARY KEY, v INTEGER)"};
/// db.migrate("my_job", steps);
/// auto tx = db.begin();
/// db.prepare("INSERT INTO t VALUES (?, ?)").bind(1, "a").bind(2, 1).run();
/// tx.commit();
/// \endcode
///
/// One file holds the state of several jobs (components): each job owns its
/// tables and its schema version (sqlite_state::migrate). The file is in WAL
/// mode with `synchronous=FULL` (a committed transaction survives a power
/// loss), and one transaction per state change (sqlite_transaction, `BEGIN
/// IMMEDIATE`) makes the writers of several processes take turns, each
/// waiting up to the busy timeout. Every failure throws error_with_diagnostics:
/// SQLite's result code (category get_sqlite_category()) or a state_errc, and
/// SQLite's own message, the statement's purpose and the file's path in
/// diagnostics::client_message.

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/error_with_diagnostics.hpp>

#include <boost/system/error_category.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

// SQLite's handles, declared as <sqlite3.h> declares them: with separate
// compilation a translation unit that includes this header does not parse
// <sqlite3.h>.
extern "C" {
/// SQLite's connection handle (declared by <sqlite3.h> too).
typedef struct sqlite3 sqlite3;
/// SQLite's prepared-statement handle (declared by <sqlite3.h> too).
typedef struct sqlite3_stmt sqlite3_stmt;
}

namespace digital_delivery {

/// \return The category of SQLite's result codes, "digital_delivery.sqlite":
/// an error_code's value is SQLite's extended result code (e.g. 5, SQLITE_BUSY;
/// 11, SQLITE_CORRUPT; 3338, SQLITE_IOERR_FSYNC), its message SQLite's
/// sqlite3_errstr().
DIGITAL_DELIVERY_DECL const boost::system::error_category& get_sqlite_category() noexcept;

/// What a state file can be wrong about that is not an SQLite failure.
enum class state_errc : int
{
    /// The file holds a schema version of a component newer than this program
    /// knows (written by a newer program): not touched.
    schema_too_new = 1,
    /// The file could not be put in WAL mode (e.g. a file system without
    /// shared memory for its readers, or a read-only one).
    wal_unavailable,
    /// A row of the file holds values this program does not accept (out of
    /// range, unknown state): written by another program, or edited by hand.
    invalid_record,
};

/// \return The category of state_errc, "digital_delivery.state".
DIGITAL_DELIVERY_DECL const boost::system::error_category& get_state_category() noexcept;

/// \param e The code.
/// \return `e` as an error_code of get_state_category().
inline error_code make_error_code(state_errc e) noexcept { return {static_cast<int>(e), get_state_category()}; }

/// How sqlite_state opens its file.
struct sqlite_state_options
{
    /// How long a transaction waits for another connection (this process or
    /// another) to finish writing before it fails with SQLITE_BUSY (5).
    std::chrono::milliseconds busy_timeout{10000};
};

class sqlite_state;

/// One prepared statement of a sqlite_state (sqlite_state::prepare).
/// Parameters are numbered from 1, columns from 0, as in SQLite.
/// Move-only; finalized by its destructor.
class sqlite_statement
{
public:
    /// \private
    sqlite_statement(sqlite3_stmt* s, const sqlite_state* db, std::string_view sql) noexcept;
    DIGITAL_DELIVERY_DECL ~sqlite_statement();
    /// Moves the statement.
    /// \param other Left empty.
    sqlite_statement(sqlite_statement&& other) noexcept;
    sqlite_statement(const sqlite_statement&) = delete;
    sqlite_statement& operator=(const sqlite_statement&) = delete;
    sqlite_statement& operator=(sqlite_statement&&) = delete;

    /// Binds an integer.
    /// \param index The parameter, from 1.
    /// \param value The value.
    /// \return `*this`.
    DIGITAL_DELIVERY_DECL sqlite_statement& bind(int index, std::int64_t value);
    /// Binds an integer.
    /// \param index The parameter, from 1.
    /// \param value The value.
    /// \return `*this`.
    sqlite_statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
    /// Binds a text (copied).
    /// \param index The parameter, from 1.
    /// \param value The text.
    /// \return `*this`.
    DIGITAL_DELIVERY_DECL sqlite_statement& bind(int index, std::string_view value);
    /// Binds a text (copied).
    /// \param index The parameter, from 1.
    /// \param value The text.
    /// \return `*this`.
    sqlite_statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
    /// Binds a text (copied).
    /// \param index The parameter, from 1.
    /// \param value The text.
    /// \return `*this`.
    sqlite_statement& bind(int index, const std::string& value) { return bind(index, std::string_view(value)); }
    /// Binds NULL.
    /// \param index The parameter, from 1.
    /// \return `*this`.
    DIGITAL_DELIVERY_DECL sqlite_statement& bind(int index, std::nullptr_t);
    /// Binds a text, or NULL for an empty optional.
    /// \param index The parameter, from 1.
    /// \param value The text or nothing.
    /// \return `*this`.
    sqlite_statement& bind(int index, const std::optional<std::string>& value)
    {
        return value ? bind(index, std::string_view(*value)) : bind(index, nullptr);
    }

    /// Runs the statement to its next row.
    /// \return true with a row to read, false when done.
    DIGITAL_DELIVERY_DECL bool step();
    /// Runs the statement to its end (a statement that returns no rows).
    /// \return The rows it changed (sqlite3_changes).
    DIGITAL_DELIVERY_DECL std::int64_t run();
    /// Makes the statement runnable again; the bindings stay.
    DIGITAL_DELIVERY_DECL void reset();

    /// \param column The column, from 0.
    /// \return Whether the current row's column is NULL.
    DIGITAL_DELIVERY_DECL bool is_null(int column) const;
    /// \param column The column, from 0.
    /// \return The current row's column as an integer (0 for NULL).
    DIGITAL_DELIVERY_DECL std::int64_t column_int64(int column) const;
    /// \param column The column, from 0.
    /// \return The current row's column as text (empty for NULL).
    DIGITAL_DELIVERY_DECL std::string column_text(int column) const;
    /// \param column The column, from 0.
    /// \return The current row's column as text, nothing for NULL.
    std::optional<std::string> column_optional_text(int column) const
    {
        if (is_null(column))
            return std::nullopt;
        return column_text(column);
    }

    /// \return SQLite's statement handle.
    sqlite3_stmt* native_handle() const noexcept { return stmt_; }

private:
    DIGITAL_DELIVERY_DECL void check(int rc, const char* what) const;

    sqlite3_stmt* stmt_;
    const sqlite_state* db_;
    std::string sql_;
};

/// A write transaction (sqlite_state::begin): `BEGIN IMMEDIATE`, so that it
/// holds the file's write lock from its start and two processes never both
/// read, then both write. Rolled back by its destructor unless committed.
class sqlite_transaction
{
public:
    /// \private
    explicit sqlite_transaction(sqlite_state& db) noexcept : db_(&db) {}
    /// Moves the transaction.
    /// \param other Left without a transaction.
    sqlite_transaction(sqlite_transaction&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
    sqlite_transaction(const sqlite_transaction&) = delete;
    sqlite_transaction& operator=(const sqlite_transaction&) = delete;
    sqlite_transaction& operator=(sqlite_transaction&&) = delete;
    /// Rolls back when neither commit() nor rollback() was called.
    DIGITAL_DELIVERY_DECL ~sqlite_transaction();

    /// Commits: when it returns, the change is in the file (WAL, synchronous=FULL).
    DIGITAL_DELIVERY_DECL void commit();
    /// Undoes the transaction's changes.
    DIGITAL_DELIVERY_DECL void rollback();

private:
    sqlite_state* db_;
};

/// One SQLite state file, opened (and created, owner-only, 0600, when it does
/// not exist) in WAL mode with `synchronous=FULL`, foreign keys on and the
/// busy timeout of sqlite_state_options. Several processes may open the same
/// file: their transactions take turns. One object is for one thread at a
/// time. The file must be on a local file system (WAL needs shared memory
/// between the processes that open it).
///
/// The table `dd_schema(component, version)` records the schema version of
/// each component (job) of the file; migrate() brings a component's tables to
/// the newest version its program knows.
class sqlite_state
{
public:
    /// Opens (or creates) the file.
    /// \param path The file's path; its directory must exist.
    /// \param options The busy timeout.
    /// \throws error_with_diagnostics SQLite's code (get_sqlite_category()) or
    /// state_errc::wal_unavailable.
    DIGITAL_DELIVERY_DECL explicit sqlite_state(std::string path, const sqlite_state_options& options = {});
    /// Closes the file.
    DIGITAL_DELIVERY_DECL ~sqlite_state();
    /// Moves the connection.
    /// \param other Left closed.
    DIGITAL_DELIVERY_DECL sqlite_state(sqlite_state&& other) noexcept;
    sqlite_state(const sqlite_state&) = delete;
    sqlite_state& operator=(const sqlite_state&) = delete;
    sqlite_state& operator=(sqlite_state&&) = delete;

    /// \return The file's path.
    const std::string& path() const noexcept { return path_; }

    /// Runs one or more statements that return no rows (no parameters).
    /// \param sql The statements.
    DIGITAL_DELIVERY_DECL void exec(std::string_view sql);
    /// Prepares one statement.
    /// \param sql The statement, with `?` parameters.
    /// \return The statement.
    DIGITAL_DELIVERY_DECL sqlite_statement prepare(std::string_view sql);
    /// Starts a write transaction (`BEGIN IMMEDIATE`): waits up to the busy
    /// timeout for another writer.
    /// \return The transaction; commit it.
    DIGITAL_DELIVERY_DECL sqlite_transaction begin();

    /// \param component The component's name (e.g. "upload_journal").
    /// \return Its schema version in this file, 0 when it has none.
    DIGITAL_DELIVERY_DECL std::int64_t schema_version(std::string_view component);
    /// Brings a component's tables to version `migrations.size()`: in one
    /// transaction, runs `migrations[v]`, `migrations[v + 1]`, ... from the
    /// file's version v and records the new version. A file already there is
    /// not changed. Migrations are appended, never edited: version n is what
    /// the first n of them make.
    /// \param component The component's name.
    /// \param migrations The statements of each version, in order.
    /// \throws error_with_diagnostics state_errc::schema_too_new when the file's
    /// version is above `migrations.size()`.
    DIGITAL_DELIVERY_DECL void migrate(std::string_view component, std::span<const std::string_view> migrations);

    /// \return The rowid of the last row inserted through this connection.
    DIGITAL_DELIVERY_DECL std::int64_t last_insert_rowid() const noexcept;
    /// \return SQLite's connection handle.
    sqlite3* native_handle() const noexcept { return db_; }

    /// \private Throws error_with_diagnostics for SQLite's `rc`.
    [[noreturn]] DIGITAL_DELIVERY_DECL void fail(int rc, std::string_view what) const;

private:
    std::string path_;
    sqlite3* db_ = nullptr;
};

inline sqlite_statement::sqlite_statement(sqlite3_stmt* s, const sqlite_state* db, std::string_view sql) noexcept
    : stmt_(s), db_(db), sql_(sql)
{
}

inline sqlite_statement::sqlite_statement(sqlite_statement&& other) noexcept
    : stmt_(other.stmt_), db_(other.db_), sql_(std::move(other.sql_))
{
    other.stmt_ = nullptr;
}

}  // namespace digital_delivery

namespace boost {
namespace system {
template <>
struct is_error_code_enum<digital_delivery::state_errc> : std::true_type
{
};
}  // namespace system
}  // namespace boost

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/sqlite/sqlite_state.ipp>
#endif

#endif
