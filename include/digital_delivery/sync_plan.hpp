//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_SYNC_PLAN_HPP
#define DIGITAL_DELIVERY_SYNC_PLAN_HPP

/// \file
/// The folder sync's plan and its actions, and the values a plan is made
/// from (the options, the local tree, the manifest's entries, the remote
/// listing, the journal's records) and a run's outcome: plain values, no
/// operation. <digital_delivery/sync.hpp> includes this header and adds the
/// operations (scan, plan, apply, the lock). See docs/sync.md.

#include <digital_delivery/asset.hpp>
#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/timestamp.hpp>
#include <digital_delivery/upload_record.hpp>

#include <boost/system/error_category.hpp>
#include <boost/system/error_code.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace digital_delivery {

// ---- errors ----------------------------------------------------------------------

/// What a sync refuses or stops on (category "digital_delivery.sync").
enum class sync_errc : int
{
    locked = 1,               ///< Another sync of the same folder holds its lock (sync_folder_lock).
    not_a_directory,          ///< The folder to sync is not a directory (or cannot be read).
    state_inside_tree,        ///< The state file is inside the folder: keep it out of the tree.
    deletes_refused_empty,    ///< Deletes planned while the local side is empty: all refused.
    deletes_refused_shrink,   ///< The local side shrank by more than sync_options::max_shrink: deletes refused.
    deletes_refused_max,      ///< More deletes than sync_options::max_delete: all refused.
    linked_asset,             ///< The asset is linked to a digital product: not deleted without sync_options::delete_linked.
    file_changed,             ///< The file changed (size or mtime) between its hash and its upload: skipped this run.
    file_too_large,           ///< The file is above max_asset_byte_size (2 GB): skipped.
    file_unreadable,          ///< The file could not be read (permissions, vanished): skipped.
    points_exhausted,         ///< sync_apply_options::max_points reached: the rest waits for the next run.
    quota_exceeded,           ///< The store's asset storage or count quota: creates stopped (diagnostics say which).
    uploads_failed,           ///< An upload of the run failed: the planned deletes were not run.
    ambiguous_adopt,          ///< Several internal assets have the file's (filename, byte_size): not adopted.
    action_failed,            ///< Some actions of the run failed (sync_result::results says which and why).
};

/// \return The category of sync_errc, "digital_delivery.sync".
DIGITAL_DELIVERY_DECL const boost::system::error_category& get_sync_category() noexcept;

/// \param e The code.
/// \return `e` as an error_code of get_sync_category().
inline error_code make_error_code(sync_errc e) noexcept { return {static_cast<int>(e), get_sync_category()}; }

// ---- the manifest ------------------------------------------------------------------

/// What the last sync left for one file of the folder.
struct sync_manifest_entry
{
    std::string path{};          ///< Relative to the folder, '/'-separated, no leading "./".
    std::string asset_id{};      ///< The asset that holds the file.
    std::uint64_t size = 0;      ///< The file's size when it was uploaded (or adopted).
    std::int64_t mtime_ns = 0;   ///< Its mtime then (ns since the Unix epoch).
    std::string sha256{};        ///< SHA-256 of its content then (64 lowercase hex digits; empty when adopted unread).
    timestamp asset_updated_at{};  ///< The asset's updated_at after our last write: another value means someone else changed it.
    std::string filename{};      ///< The asset's filename (kept when the file moved: PATCH cannot change it).
};

// ---- options -----------------------------------------------------------------------

/// One include or exclude rule. Rules are tried in order; the first whose
/// pattern matches a file's relative path decides; a file no rule matches is
/// included. Patterns are globs: `*` and `?` do not cross '/', `**` does; a
/// pattern without '/' matches the file's name in any folder (`*.tmp`), one
/// with '/' the whole relative path (`drafts/**`). Exclude rules do not
/// bring back hidden files or symlinks (sync_options::hidden, symlinks).
struct sync_rule
{
    bool include = false;  ///< true: an --include rule; false: --exclude.
    std::string pattern{};  ///< The glob.
};

/// What --adopt does with an existing internal asset that matches a local
/// file not in the manifest by (filename, byte_size), unambiguously.
enum class sync_adopt : int
{
    off = 0,  ///< No adoption: every such file is created (default).
    trust,    ///< Take the asset as the file's: nothing uploaded (it may hold other bytes of that size, or none).
    replace,  ///< Take the asset and upload the file into it (replace): sure, at replace's cost.
};

/// How a plan is made (and what it allows the apply to do).
struct sync_options
{
    std::vector<sync_rule> rules{};  ///< Include/exclude rules, first match decides (default: none: every file).
    bool hidden = false;     ///< Sync files and folders whose name starts with '.' (default: false: skipped).
    bool symlinks = false;   ///< Follow symlinks to files and folders (default: false: skipped).
    /// Re-upload a moved file (replace) so that its asset's filename follows
    /// the new name (default: false: the manifest follows the move, the
    /// asset keeps its filename and id, no request).
    bool rename_replace = false;
    bool delete_remote = false;  ///< Delete the assets of files removed locally (default: false).
    /// Refuse every delete when more than this many are planned (default: no limit).
    std::optional<std::size_t> max_delete{};
    /// Refuse every delete when more than this share of the manifest's files
    /// are gone (default 0.5: the local side lost more than half).
    double max_shrink = 0.5;
    /// Delete assets that are linked to a digital product too (default:
    /// false: they are kept and reported). Assets attached to single orders
    /// cannot be found without reading every order and are not looked for.
    bool delete_linked = false;
    sync_adopt adopt = sync_adopt::off;  ///< See sync_adopt.
    /// Link every asset of the folder (the manifest's, new ones included) to
    /// this digital product at the end of the apply (async_add_assets), and
    /// unlink the deleted ones (default: none).
    std::optional<std::string> product_id{};
};

// ---- the local side --------------------------------------------------------------

/// One file of the local tree as scan_sync_tree found it.
struct sync_local_file
{
    std::string path{};         ///< Relative, '/'-separated.
    std::uint64_t size = 0;     ///< stat's st_size.
    std::int64_t mtime_ns = 0;  ///< stat's st_mtim, ns since the Unix epoch.
    /// SHA-256 (hex): computed when size or mtime differ from the manifest's
    /// entry, else the manifest's. A file the manifest does not hold is read
    /// only when a manifest entry whose file is gone has its size (it may be
    /// that file, moved); else this is empty and the upload journal hashes
    /// the file when it uploads it (one read, inside a transfer slot). Empty
    /// for files skipped (too large, unreadable).
    std::string sha256{};
    bool hashed = false;        ///< Whether this scan read the file.
    /// Why the file is not synced (sync_errc::file_too_large,
    /// file_unreadable, file_changed), empty for a file to sync.
    error_code skip{};
};

/// The local tree (scan_sync_tree).
struct sync_local_tree
{
    std::string root{};                  ///< The folder, absolute.
    std::vector<sync_local_file> files{};  ///< Every file the rules let in, ordered by path.
    std::uint64_t skipped_hidden = 0;    ///< Hidden files and folders left out.
    std::uint64_t skipped_symlinks = 0;  ///< Symlinks left out.
    std::uint64_t excluded = 0;          ///< Files an exclude rule left out.
    std::uint64_t hashed = 0;            ///< Files read (hashed) by this scan.
    std::uint64_t hashed_bytes = 0;      ///< Their bytes.
};

// ---- the remote side ---------------------------------------------------------------

/// The remote side of a plan.
struct sync_remote
{
    std::vector<asset> assets{};  ///< Every asset of the store (GET /assets, every page).
    /// Ids of the assets linked to a digital product (GET /digital_products,
    /// every page); filled only when products_listed.
    std::vector<std::string> linked_asset_ids{};
    bool products_listed = false;  ///< Whether the digital products were listed (deletes planned).
    /// The asset ids of sync_options::product_id (GET /digital_products/{id}),
    /// when one is set.
    std::optional<std::vector<std::string>> product_asset_ids{};
    std::int64_t listing_requests = 0;  ///< GET requests the listing took.
    std::int64_t listing_points = 0;    ///< Their points.
};

// ---- the plan ----------------------------------------------------------------------

/// What the apply does with one path.
enum class sync_action_kind : int
{
    create = 1,  ///< Upload the file as a new asset (3 points).
    replace,     ///< Upload the file into its asset (replace: keeps the id and every link; 3 points).
    delete_asset,  ///< Delete the asset of a file removed locally (2 points; only with delete_remote).
    adopt,       ///< Record an existing asset as the file's (sync_adopt::trust: no request).
    move,        ///< The file moved: the manifest follows it (no request; the asset keeps its filename).
    skip,        ///< Nothing is done (the reason says why: too large, changed, refused delete, linked asset, ...).
    ambiguous,   ///< Several assets could be the file's (adopt): nothing is done; listed in `candidates`.
};

/// \param k The kind.
/// \return "create", "replace", "delete", "adopt", "move", "skip" or "ambiguous".
DIGITAL_DELIVERY_DECL std::string_view to_string(sync_action_kind k) noexcept;

/// Why an action is planned.
enum class sync_reason : int
{
    new_file = 1,     ///< Not in the manifest.
    content_changed,  ///< Size or SHA-256 differ from the manifest's.
    moved,            ///< Same content as a manifest entry whose file is gone.
    moved_renamed,    ///< Moved, and sync_options::rename_replace: uploaded again for the new filename.
    remote_changed,   ///< Someone else changed the asset (its updated_at): the local file is uploaded into it.
    remote_deleted,   ///< Someone else deleted the asset: the file is created again.
    adopted,          ///< Matched an existing asset by (filename, byte_size) (sync_adopt).
    local_deleted,    ///< The file is gone: its asset is deleted (or kept, see error).
    journal_recovered,  ///< A committed journal upload of this content was not in the manifest yet.
    refused,          ///< A skip: `error` says why (a delete guard, a linked asset, a file too large, ...).
};

/// \param r The reason.
/// \return Its name ("new_file", "content_changed", ...).
DIGITAL_DELIVERY_DECL std::string_view to_string(sync_reason r) noexcept;

/// One action of a plan.
struct sync_action
{
    sync_action_kind kind = sync_action_kind::skip;  ///< What is done.
    sync_reason reason = sync_reason::new_file;       ///< Why.
    std::string path{};       ///< Relative path (the old one for a delete; the new one for a move).
    std::string from_path{};  ///< move / moved_renamed: the manifest path it came from.
    std::string asset_id{};   ///< The asset (empty for a create).
    std::uint64_t size = 0;   ///< The file's size (the asset's byte_size for a delete).
    std::int64_t mtime_ns = 0;  ///< The file's mtime at the scan.
    std::string sha256{};     ///< The file's SHA-256 at the scan (empty when the scan did not need to read it: see sync_local_file::sha256).
    std::string filename{};   ///< The asset's filename: the file's name (see docs/sync.md).
    std::string name{};       ///< The asset's name: the relative path.
    std::optional<std::string> content_type{};  ///< From the file's extension (none: the API's default).
    std::int64_t points = 0;  ///< Rate-limit points of its requests (endpoint_cost.hpp).
    std::uint64_t bytes = 0;  ///< Body bytes it uploads (size for create/replace, else 0).
    error_code error{};       ///< For a skip or an ambiguous: why (sync_errc).
    std::string message{};    ///< Words for people (no secret).
    std::vector<std::string> candidates{};  ///< ambiguous: the ids of the matching assets.
    /// adopt, move, replace: the asset's updated_at in the plan's listing
    /// (what the manifest records for an adopt or a move).
    timestamp asset_updated_at{};
};

/// Totals of a plan or of a run, per kind.
struct sync_totals
{
    std::uint64_t create = 0;    ///< Creates.
    std::uint64_t replace = 0;   ///< Replaces.
    std::uint64_t delete_asset = 0;  ///< Deletes.
    std::uint64_t adopt = 0;     ///< Adoptions (trust).
    std::uint64_t move = 0;      ///< Moves followed.
    std::uint64_t skip = 0;      ///< Skips.
    std::uint64_t ambiguous = 0;  ///< Ambiguous matches.
    std::uint64_t unchanged = 0;  ///< Files in sync (no action).
    std::int64_t points = 0;     ///< Points of the actions (and of the product link step).
    std::uint64_t bytes = 0;     ///< Bytes to upload.
};

/// A plan: what async_apply_sync will do, and what it costs.
struct sync_plan
{
    std::string root{};                  ///< The folder, absolute.
    /// In this order: move, adopt (no request), replace, create, skip,
    /// ambiguous, delete (the plan's order within each kind: by path).
    std::vector<sync_action> actions{};
    /// Unchanged files whose mtime changed (touched): the apply writes their
    /// new mtime to the manifest (no request) so the next scan does not hash them.
    std::vector<sync_manifest_entry> manifest_refresh{};
    /// Manifest paths whose file and asset are both gone: the apply forgets them.
    std::vector<std::string> manifest_forget{};
    sync_totals totals{};                ///< Per kind, points and bytes.
    std::int64_t listing_points = 0;     ///< Points the remote listing cost (already spent).
    std::int64_t listing_requests = 0;   ///< GET requests of the listing.
    /// Points of the product step (sync_options::product_id): 0 or
    /// operation_points::edit_product_assets per edit (add, remove).
    std::int64_t product_points = 0;
    /// Set when the planned deletes were refused (sync_errc::deletes_refused_*):
    /// the deletes are then skips with that error.
    error_code deletes_refused{};
    /// Journal records not committed (a run was interrupted): the apply
    /// finishes them first (async_recover_upload), at up to 3 points each.
    std::vector<upload_record> unfinished{};
    std::int64_t recovery_points = 0;    ///< Upper bound of their points.
    sync_options options{};              ///< The options the plan was made with.
};

/// What the upload journal holds for a folder (read_sync_journal).
struct sync_journal_state
{
    /// Committed records of the tree's files that the manifest does not hold
    /// with their current content (a crash after the upload, before the
    /// manifest write): plan_sync takes them as in sync.
    std::vector<upload_record> committed{};
    /// Records under the folder that are not committed (an interrupted
    /// run): the apply finishes them first.
    std::vector<upload_record> unfinished{};
};


/// How a run ended.
enum class sync_outcome : int
{
    complete = 1,     ///< Every action done (skips and ambiguous ones reported).
    partial,          ///< Stopped at max_points: resumable, the next run does the rest.
    quota_stopped,    ///< A quota error stopped the creates: in-flight ones finished, journal kept.
    failed,           ///< Some actions failed (see results); deletes were not run when uploads failed.
};

/// \param o The outcome.
/// \return "complete", "partial", "quota_stopped" or "failed".
DIGITAL_DELIVERY_DECL std::string_view to_string(sync_outcome o) noexcept;

}  // namespace digital_delivery

namespace boost {
namespace system {
template <>
struct is_error_code_enum<digital_delivery::sync_errc> : std::true_type
{
};
}  // namespace system
}  // namespace boost

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/sync/sync_plan.ipp>
#endif

#endif
