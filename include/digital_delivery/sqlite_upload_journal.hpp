//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_SQLITE_UPLOAD_JOURNAL_HPP
#define DIGITAL_DELIVERY_SQLITE_UPLOAD_JOURNAL_HPP

/// \file
/// The upload journal in an SQLite state file (opt-in, like
/// <digital_delivery/sqlite_state.hpp>: link `digital_delivery::sqlite` or
/// `digital_delivery::sqlite_compiled`). See docs/uploads.md ("Journaled
/// uploads") and docs/sqlite.md.
///
/// \code
/// #include <digital_delivery/sqlite_upload_journal.hpp>
/// dd::sqlite_upload_journal journal("/var/lib/app/state.db");
/// auto r = co_await dd::async_upload_file(client, journal, "/data/manual.pdf", {.filename = "manual.pdf"});
/// \endcode

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/sqlite_state.hpp>
#include <digital_delivery/upload_journal.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace digital_delivery {

/// The upload journal kept in a sqlite_state file: the component
/// "upload_journal" (its table `dd_upload_journal`), one transaction per
/// change, durable when each call returns (WAL, synchronous=FULL). Several
/// processes may share the file. Failures throw error_with_diagnostics
/// (SQLite's code and words; state_errc::invalid_record for a row this
/// program does not accept).
class sqlite_upload_journal final : public upload_journal
{
public:
    /// Opens (or creates) the file and brings the journal's tables to this
    /// program's version.
    /// \param path The state file.
    /// \param options How it is opened.
    DIGITAL_DELIVERY_DECL explicit sqlite_upload_journal(std::string path, const sqlite_state_options& options = {});

    DIGITAL_DELIVERY_DECL std::vector<upload_record> find(std::string_view path) override;
    DIGITAL_DELIVERY_DECL std::vector<upload_record> unfinished() override;
    DIGITAL_DELIVERY_DECL std::int64_t insert(const upload_record& r) override;
    DIGITAL_DELIVERY_DECL void update(const upload_record& r) override;
    DIGITAL_DELIVERY_DECL void erase(std::int64_t id) override;

    /// \return The state file.
    sqlite_state& state() noexcept { return db_; }

private:
    sqlite_state db_;
};

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/upload/sqlite_upload_journal.ipp>
#endif

#endif
