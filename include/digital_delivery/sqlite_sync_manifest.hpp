//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_SQLITE_SYNC_MANIFEST_HPP
#define DIGITAL_DELIVERY_SQLITE_SYNC_MANIFEST_HPP

/// \file
/// The sync manifest in the upload journal's SQLite state file (opt-in, part
/// of the SQLite component: link `digital_delivery::sqlite` or
/// `digital_delivery::sqlite_compiled`). See docs/sync.md and docs/sqlite.md.
///
/// \code
/// #include <digital_delivery/sqlite_sync_manifest.hpp>
/// dd::sqlite_upload_journal journal("/var/lib/app/state.db");
/// dd::sqlite_sync_manifest manifest(journal.state(), "/srv/shop/files");
/// \endcode

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/sqlite_state.hpp>
#include <digital_delivery/sqlite_upload_journal.hpp>
#include <digital_delivery/sync.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace digital_delivery {

/// The manifest of one folder in a sqlite_state file: the component
/// "sync_manifest" (its table `dd_sync_manifest`, keyed by (folder, path):
/// one file holds the manifests of several folders). One transaction per
/// change, durable when each call returns. Failures throw
/// error_with_diagnostics (state_errc::invalid_record for a row this
/// program does not accept).
class sqlite_sync_manifest final : public sync_manifest
{
public:
    /// Brings the manifest's table to this program's version.
    /// \param db The state file (e.g. sqlite_upload_journal::state()); must outlive this object.
    /// \param root The folder (its absolute path is the key: the same folder
    /// named another way is another manifest).
    DIGITAL_DELIVERY_DECL sqlite_sync_manifest(sqlite_state& db, std::string root);

    DIGITAL_DELIVERY_DECL std::vector<sync_manifest_entry> entries() override;
    DIGITAL_DELIVERY_DECL void put(const sync_manifest_entry& e) override;
    DIGITAL_DELIVERY_DECL void erase(std::string_view path) override;
    DIGITAL_DELIVERY_DECL void move(std::string_view from, const sync_manifest_entry& to) override;
    /// \return The state file's path.
    std::string state_file() override { return db_->path(); }

    /// \return The folder this manifest is of.
    const std::string& root() const noexcept { return root_; }

private:
    sqlite_state* db_;
    std::string root_;
};

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/sync/sqlite_sync_manifest.ipp>
#endif

#endif
