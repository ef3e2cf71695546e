//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_UPLOAD_SQLITE_UPLOAD_JOURNAL_IPP
#define DIGITAL_DELIVERY_IMPL_UPLOAD_SQLITE_UPLOAD_JOURNAL_IPP

#include <digital_delivery/sqlite_upload_journal.hpp>

#include <digital_delivery/error_with_diagnostics.hpp>

#include <boost/throw_exception.hpp>

#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace digital_delivery {
namespace detail {

// The journal's schema, by version (appended, never edited).
inline constexpr std::string_view upload_journal_migrations[] = {
    "CREATE TABLE dd_upload_journal("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " path TEXT NOT NULL,"
    " size INTEGER NOT NULL,"
    " sha256 TEXT NOT NULL,"
    " filename TEXT NOT NULL,"
    " content_type TEXT,"
    " name TEXT,"
    " watermark_asset INTEGER CHECK (watermark_asset IN (0, 1)),"
    " stage INTEGER NOT NULL CHECK (stage BETWEEN 1 AND 4),"
    " asset_id TEXT NOT NULL DEFAULT '',"
    " intent_unix_ms INTEGER NOT NULL);"
    "CREATE INDEX dd_upload_journal_path ON dd_upload_journal(path);"
    "CREATE INDEX dd_upload_journal_stage ON dd_upload_journal(stage)",
    // 2: replaces of an existing asset's body (async_replace_file).
    "ALTER TABLE dd_upload_journal ADD COLUMN is_replace INTEGER NOT NULL DEFAULT 0 CHECK (is_replace IN (0, 1))",
};

inline constexpr std::string_view upload_journal_columns =
    "id, path, size, sha256, filename, content_type, name, stage, asset_id, intent_unix_ms, watermark_asset, is_replace";

inline upload_record read_upload_record(const sqlite_statement& st, const std::string& file)
{
    upload_record r;
    r.id = st.column_int64(0);
    r.path = st.column_text(1);
    const std::int64_t size = st.column_int64(2);
    r.sha256 = st.column_text(3);
    r.filename = st.column_text(4);
    r.content_type = st.column_optional_text(5);
    r.name = st.column_optional_text(6);
    const std::int64_t stage = st.column_int64(7);
    r.asset_id = st.column_text(8);
    r.intent_unix_ms = st.column_int64(9);
    if (!st.is_null(10))
        r.watermark_asset = st.column_int64(10) != 0;
    r.replace = st.column_int64(11) != 0;
    if (size < 0 || stage < 1 || stage > 4 || (stage > 1 && r.asset_id.empty()))
    {
        diagnostics d;
        d.client_message = "upload journal record " + std::to_string(r.id) + " is not valid (size " + std::to_string(size) +
                           ", stage " + std::to_string(stage) + "; " + file + ")";
        boost::throw_exception(error_with_diagnostics(make_error_code(state_errc::invalid_record), std::move(d)));
    }
    r.size = static_cast<std::uint64_t>(size);
    r.stage = static_cast<upload_stage>(stage);
    return r;
}

inline void bind_upload_record(sqlite_statement& st, const upload_record& r)
{
    st.bind(1, r.path)
        .bind(2, static_cast<std::int64_t>(r.size))
        .bind(3, r.sha256)
        .bind(4, r.filename)
        .bind(5, r.content_type)
        .bind(6, r.name)
        .bind(7, static_cast<std::int64_t>(r.stage))
        .bind(8, r.asset_id)
        .bind(9, r.intent_unix_ms);
    if (r.watermark_asset)
        st.bind(10, static_cast<std::int64_t>(*r.watermark_asset));
    else
        st.bind(10, nullptr);
    st.bind(11, static_cast<std::int64_t>(r.replace ? 1 : 0));
}

}  // namespace detail

DIGITAL_DELIVERY_DECL sqlite_upload_journal::sqlite_upload_journal(std::string path, const sqlite_state_options& options)
    : db_(std::move(path), options)
{
    db_.migrate("upload_journal", detail::upload_journal_migrations);
}

DIGITAL_DELIVERY_DECL std::vector<upload_record> sqlite_upload_journal::find(std::string_view path)
{
    auto st = db_.prepare("SELECT " + std::string(detail::upload_journal_columns) +
                          " FROM dd_upload_journal WHERE path = ? ORDER BY id DESC");
    st.bind(1, path);
    std::vector<upload_record> out;
    while (st.step())
        out.push_back(detail::read_upload_record(st, db_.path()));
    return out;
}

DIGITAL_DELIVERY_DECL std::vector<upload_record> sqlite_upload_journal::unfinished()
{
    auto st = db_.prepare("SELECT " + std::string(detail::upload_journal_columns) +
                          " FROM dd_upload_journal WHERE stage <> 4 ORDER BY id");
    std::vector<upload_record> out;
    while (st.step())
        out.push_back(detail::read_upload_record(st, db_.path()));
    return out;
}

DIGITAL_DELIVERY_DECL std::int64_t sqlite_upload_journal::insert(const upload_record& r)
{
    auto tx = db_.begin();
    auto st = db_.prepare("INSERT INTO dd_upload_journal(path, size, sha256, filename, content_type, name, stage, asset_id, "
                          "intent_unix_ms, watermark_asset, is_replace) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    detail::bind_upload_record(st, r);
    st.run();
    const std::int64_t id = db_.last_insert_rowid();
    tx.commit();
    return id;
}

DIGITAL_DELIVERY_DECL void sqlite_upload_journal::update(const upload_record& r)
{
    auto tx = db_.begin();
    auto st = db_.prepare("UPDATE dd_upload_journal SET path = ?, size = ?, sha256 = ?, filename = ?, content_type = ?, "
                          "name = ?, stage = ?, asset_id = ?, intent_unix_ms = ?, watermark_asset = ?, is_replace = ? WHERE id = ?");
    detail::bind_upload_record(st, r);
    st.bind(12, r.id);
    st.run();
    tx.commit();
}

DIGITAL_DELIVERY_DECL void sqlite_upload_journal::erase(std::int64_t id)
{
    auto tx = db_.begin();
    db_.prepare("DELETE FROM dd_upload_journal WHERE id = ?").bind(1, id).run();
    tx.commit();
}

}  // namespace digital_delivery

#endif
