//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_SYNC_SQLITE_SYNC_MANIFEST_IPP
#define DIGITAL_DELIVERY_IMPL_SYNC_SQLITE_SYNC_MANIFEST_IPP

#include <digital_delivery/sqlite_sync_manifest.hpp>

#include <digital_delivery/error_with_diagnostics.hpp>

#include <boost/throw_exception.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace digital_delivery {
namespace detail {

// The manifest's schema, by version (appended, never edited).
inline constexpr std::string_view sync_manifest_migrations[] = {
    "CREATE TABLE dd_sync_manifest("
    " root TEXT NOT NULL,"
    " path TEXT NOT NULL,"
    " asset_id TEXT NOT NULL,"
    " size INTEGER NOT NULL CHECK (size >= 0),"
    " mtime_ns INTEGER NOT NULL,"
    " sha256 TEXT NOT NULL,"
    " asset_updated_at_us INTEGER NOT NULL,"
    " filename TEXT NOT NULL,"
    " PRIMARY KEY (root, path))",
};

inline sync_manifest_entry read_sync_entry(const sqlite_statement& st, const std::string& file)
{
    sync_manifest_entry e;
    e.path = st.column_text(0);
    e.asset_id = st.column_text(1);
    const std::int64_t size = st.column_int64(2);
    e.mtime_ns = st.column_int64(3);
    e.sha256 = st.column_text(4);
    e.asset_updated_at = timestamp(std::chrono::microseconds(st.column_int64(5)));
    e.filename = st.column_text(6);
    if (size < 0 || e.asset_id.empty() || e.path.empty() || (!e.sha256.empty() && e.sha256.size() != 64))
    {
        diagnostics d;
        d.client_message = "sync manifest row of '" + e.path + "' is not valid (size " + std::to_string(size) + "; " + file + ")";
        boost::throw_exception(error_with_diagnostics(make_error_code(state_errc::invalid_record), std::move(d)));
    }
    e.size = static_cast<std::uint64_t>(size);
    return e;
}

inline void put_sync_entry(sqlite_state& db, const std::string& root, const sync_manifest_entry& e)
{
    db.prepare("INSERT OR REPLACE INTO dd_sync_manifest(root, path, asset_id, size, mtime_ns, sha256, asset_updated_at_us, "
               "filename) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        .bind(1, root)
        .bind(2, e.path)
        .bind(3, e.asset_id)
        .bind(4, static_cast<std::int64_t>(e.size))
        .bind(5, e.mtime_ns)
        .bind(6, e.sha256)
        .bind(7, static_cast<std::int64_t>(e.asset_updated_at.time_since_epoch().count()))
        .bind(8, e.filename)
        .run();
}

}  // namespace detail

DIGITAL_DELIVERY_DECL sqlite_sync_manifest::sqlite_sync_manifest(sqlite_state& db, std::string root)
    : db_(&db), root_(std::move(root))
{
    db_->migrate("sync_manifest", detail::sync_manifest_migrations);
}

DIGITAL_DELIVERY_DECL std::vector<sync_manifest_entry> sqlite_sync_manifest::entries()
{
    auto st = db_->prepare("SELECT path, asset_id, size, mtime_ns, sha256, asset_updated_at_us, filename "
                           "FROM dd_sync_manifest WHERE root = ? ORDER BY path");
    st.bind(1, root_);
    std::vector<sync_manifest_entry> out;
    {
        auto count = db_->prepare("SELECT count(*) FROM dd_sync_manifest WHERE root = ?");
        count.bind(1, root_);
        if (count.step())
            out.reserve(static_cast<std::size_t>(std::max<std::int64_t>(0, count.column_int64(0))));
    }
    while (st.step())
        out.push_back(detail::read_sync_entry(st, db_->path()));
    return out;
}

DIGITAL_DELIVERY_DECL void sqlite_sync_manifest::put(const sync_manifest_entry& e)
{
    auto tx = db_->begin();
    detail::put_sync_entry(*db_, root_, e);
    tx.commit();
}

DIGITAL_DELIVERY_DECL void sqlite_sync_manifest::erase(std::string_view path)
{
    auto tx = db_->begin();
    db_->prepare("DELETE FROM dd_sync_manifest WHERE root = ? AND path = ?").bind(1, root_).bind(2, path).run();
    tx.commit();
}

DIGITAL_DELIVERY_DECL void sqlite_sync_manifest::move(std::string_view from, const sync_manifest_entry& to)
{
    auto tx = db_->begin();
    db_->prepare("DELETE FROM dd_sync_manifest WHERE root = ? AND path = ?").bind(1, root_).bind(2, from).run();
    detail::put_sync_entry(*db_, root_, to);
    tx.commit();
}

}  // namespace digital_delivery

#endif
