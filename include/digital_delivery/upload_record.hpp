//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_UPLOAD_RECORD_HPP
#define DIGITAL_DELIVERY_UPLOAD_RECORD_HPP

/// \file
/// One journaled upload of a file (upload_record) and its stage: plain
/// values, no operation. <digital_delivery/upload_journal.hpp> includes this
/// header and adds the journal and its operations. See docs/uploads.md.

#include <digital_delivery/detail/config.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace digital_delivery {

/// Where one journaled upload is. Each is written before the write it announces.
enum class upload_stage : int
{
    creating = 1,  ///< POST /assets is (about to be) sent: the asset may exist or not.
    created,       ///< The asset exists (asset_id), its body is not uploaded.
    uploaded,      ///< The storage took the body (the PUT succeeded).
    committed,     ///< The API shows the asset with its body: never uploaded again.
};

/// \param s The stage.
/// \return "creating", "created", "uploaded" or "committed".
DIGITAL_DELIVERY_DECL std::string_view to_string(upload_stage s) noexcept;

/// One journaled upload of a file.
struct upload_record
{
    std::int64_t id = 0;          ///< The journal's key (assigned by upload_journal::insert).
    std::string path{};           ///< The file (absolute).
    std::uint64_t size = 0;       ///< Its size when the job started.
    std::string sha256{};         ///< SHA-256 of its content then (64 lowercase hex digits).
    std::string filename{};       ///< What POST /assets was told: filename, content type, name.
    std::optional<std::string> content_type{};  ///< See filename.
    std::optional<std::string> name{};          ///< See filename.
    std::optional<bool> watermark_asset{};      ///< See filename.
    upload_stage stage = upload_stage::creating;  ///< Where it is.
    std::string asset_id{};       ///< From `created` on: the asset.
    /// When the last POST /assets was announced (Unix time, ms, local clock):
    /// a reconciliation looks for assets created after it (less a margin).
    std::int64_t intent_unix_ms = 0;
    /// Whether the record is a replace of asset_id's body
    /// (async_replace_file), not a new asset: it starts at `created` (the
    /// asset exists), and its recovery never deletes the asset (a changed
    /// or gone file forgets the record; the asset keeps its old body).
    bool replace = false;
};

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/upload/upload_record.ipp>
#endif

#endif
