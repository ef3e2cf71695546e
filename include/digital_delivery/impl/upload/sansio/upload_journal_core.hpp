//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_UPLOAD_SANSIO_UPLOAD_JOURNAL_CORE_HPP
#define DIGITAL_DELIVERY_IMPL_UPLOAD_SANSIO_UPLOAD_JOURNAL_CORE_HPP

// The upload journal's state machine, without I/O: what to do next for a
// record and the file as it is now, the records of each transition (written
// by the driver before the write they announce), and which listed asset a
// "creating" record made. The driver (impl/upload/upload_journal.ipp) only
// carries out the steps.

#include <digital_delivery/asset.hpp>
#include <digital_delivery/timestamp.hpp>
#include <digital_delivery/upload_record.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace digital_delivery {
namespace detail {

/// The file as the driver found it now.
struct journal_file
{
    bool exists = false;
    std::uint64_t size = 0;
    std::string sha256{};
};

/// What the driver does next for a record.
enum class journal_step
{
    create,        // announce (creating), then POST /assets + PUT (async_upload_asset)
    reconcile,     // list assets with q = filename; reconcile_match() decides
    upload_body,   // async_replace_asset_body on asset_id (a fresh URL)
    delete_asset,  // DELETE /assets/{asset_id} (404: already gone), then erase
    verify,        // GET /assets/{asset_id}: found -> committed, 404 -> erase
    forget,        // erase the record: nothing exists for it
    done,          // committed: nothing to do
};

inline bool same_content(const upload_record& r, const journal_file& f)
{
    return f.exists && f.size == r.size && f.sha256 == r.sha256;
}

/// The next step for `r`, the file being `f` now. `reconciled`: the
/// listing was done and found nothing (a "creating" record is then created
/// again when its file is unchanged, else forgotten).
inline journal_step next_step(const upload_record& r, const journal_file& f, bool reconciled = false)
{
    switch (r.stage)
    {
    case upload_stage::creating:
        if (!reconciled)
            return journal_step::reconcile;
        return same_content(r, f) ? journal_step::create : journal_step::forget;
    case upload_stage::created:
        // A replace's asset existed before: never deleted (its old body stays).
        if (same_content(r, f))
            return journal_step::upload_body;
        return r.replace ? journal_step::forget : journal_step::delete_asset;
    case upload_stage::uploaded: return journal_step::verify;
    case upload_stage::committed: return journal_step::done;
    }
    return journal_step::forget;
}

/// The record announcing a replace of `asset_id`'s body (stage created: the asset exists).
inline upload_record replacing_record(upload_record meta, const journal_file& f, std::int64_t now_unix_ms)
{
    meta.size = f.size;
    meta.sha256 = f.sha256;
    meta.stage = upload_stage::created;
    meta.replace = true;
    meta.intent_unix_ms = now_unix_ms;
    return meta;
}

/// The record announcing a create.
inline upload_record creating_record(upload_record meta, const journal_file& f, std::int64_t now_unix_ms)
{
    meta.size = f.size;
    meta.sha256 = f.sha256;
    meta.stage = upload_stage::creating;
    meta.asset_id.clear();
    meta.intent_unix_ms = now_unix_ms;
    return meta;
}

inline upload_record with_stage(upload_record r, upload_stage s, std::string asset_id = {})
{
    r.stage = s;
    if (!asset_id.empty())
        r.asset_id = std::move(asset_id);
    return r;
}

/// Whether a listed asset is the one a "creating" record's POST made: an
/// internal asset with the record's filename, size, name (when one was
/// sent) and content type (when one was sent), created no earlier than the
/// intent less `margin`.
inline bool matches(const upload_record& r, const asset& a, std::chrono::milliseconds margin)
{
    if (a.type != asset_type::internal || a.filename != r.filename ||
        a.byte_size != static_cast<std::int64_t>(r.size))
        return false;
    if (r.name && a.name != r.name)
        return false;
    if (r.content_type && a.content_type != r.content_type)
        return false;
    const auto created_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(a.created_at.time_since_epoch()).count();
    return created_ms >= r.intent_unix_ms - margin.count();
}

/// Of the listed assets, the one the record made: the earliest that
/// matches (a second match is another create's, not this record's).
inline std::optional<asset> reconcile_match(const upload_record& r, std::span<const asset> listed, std::chrono::milliseconds margin)
{
    std::optional<asset> best;
    for (const auto& a : listed)
        if (matches(r, a, margin) && (!best || a.created_at < best->created_at))
            best = a;
    return best;
}

}  // namespace detail
}  // namespace digital_delivery

#endif
