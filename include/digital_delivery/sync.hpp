//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_SYNC_HPP
#define DIGITAL_DELIVERY_SYNC_HPP

/// \file
/// A local folder kept in the service as internal assets: plan, apply,
/// resume (opt-in: the umbrella header does not include it). See docs/sync.md.
///
/// \code
/// #include <digital_delivery/sqlite_sync_manifest.hpp>
/// dd::sqlite_upload_journal journal("/var/lib/app/state.db");   // outside the folder
/// dd::sqlite_sync_manifest manifest(journal.state(), "/srv/shop/files");
/// dd::sync_folder_lock lock(journal.state().path(), "/srv/shop/files");  // one sync of a folder at a time
/// dd::sync_options opts;
/// dd::sync_plan plan = co_await dd::async_plan_sync(client, journal, manifest, "/srv/shop/files", opts);
/// dd::sync_result r = co_await dd::async_apply_sync(client, journal, manifest, plan, dd::sync_apply_options{});
/// \endcode
///
/// The *plan* compares three sides: the local tree (scan_sync_tree: one
/// stat per file, SHA-256 only when size or mtime differ from the manifest),
/// the manifest (what the last sync left: path -> asset id, size, mtime,
/// SHA-256, the asset's updated_at) and the remote listing (GET /assets,
/// and GET /digital_products when deletes are planned). plan_sync() is a
/// pure function of those three; async_plan_sync() gathers them and calls it.
/// Every action carries its rate-limit points (endpoint_cost.hpp) and bytes.
///
/// The *apply* (async_apply_sync) sends every write at
/// priority::background through the upload journal (async_upload_file,
/// async_replace_file), at most sync_apply_options::transfers at a time; a
/// create or replace is started only by a free transfer slot, so no upload
/// URL waits for the PUT. Deletes run last, and only when every upload of
/// the run succeeded.

#include <digital_delivery/asset.hpp>
#include <digital_delivery/client.hpp>
#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/detail/trailing_args.hpp>
#include <digital_delivery/diagnostics.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/request_options.hpp>
#include <digital_delivery/timestamp.hpp>
#include <digital_delivery/upload_journal.hpp>
#include <digital_delivery/upload_options.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/system/error_category.hpp>
#include <boost/system/error_code.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
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

/// Where the manifest of one folder is kept: implement it for your own
/// store; sqlite_sync_manifest keeps it in the upload journal's SQLite file.
/// Each call is durable and atomic when it returns; failures throw.
class sync_manifest
{
public:
    virtual ~sync_manifest() = default;
    /// \return Every entry, ordered by path.
    virtual std::vector<sync_manifest_entry> entries() = 0;
    /// Adds or replaces the entry of `e.path`.
    /// \param e The entry.
    virtual void put(const sync_manifest_entry& e) = 0;
    /// Removes the entry of `path` (nothing when there is none).
    /// \param path The relative path.
    virtual void erase(std::string_view path) = 0;
    /// Moves an entry, atomically: erases `from` and puts `to`.
    /// \param from The old relative path.
    /// \param to The new entry.
    virtual void move(std::string_view from, const sync_manifest_entry& to) = 0;
    /// \return The file that holds the manifest, when it is one (async_plan_sync
    /// refuses a folder that contains it: sync_errc::state_inside_tree); empty
    /// otherwise (the default).
    virtual std::string state_file() { return {}; }
};

/// A manifest in memory (tests; nothing survives the process).
class memory_sync_manifest final : public sync_manifest
{
public:
    DIGITAL_DELIVERY_DECL std::vector<sync_manifest_entry> entries() override;
    DIGITAL_DELIVERY_DECL void put(const sync_manifest_entry& e) override;
    DIGITAL_DELIVERY_DECL void erase(std::string_view path) override;
    DIGITAL_DELIVERY_DECL void move(std::string_view from, const sync_manifest_entry& to) override;

private:
    std::vector<sync_manifest_entry> entries_;
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

/// Scans `root` (synchronously: stat per file, SHA-256 of the files whose
/// size or mtime differ from `manifest`). Entries of the manifest are read
/// once.
/// \param root The folder.
/// \param manifest The folder's manifest.
/// \param options Rules, hidden, symlinks.
/// \param ec Set to sync_errc::not_a_directory when `root` is not a readable directory.
/// \return The tree (empty on error).
DIGITAL_DELIVERY_DECL sync_local_tree scan_sync_tree(
    std::string_view root,
    std::span<const sync_manifest_entry> manifest,
    const sync_options& options,
    error_code& ec
);

/// \param rules The rules.
/// \param relative_path A relative path.
/// \return Whether the rules let the path in (first match decides; no match: in).
DIGITAL_DELIVERY_DECL bool sync_rules_admit(std::span<const sync_rule> rules, std::string_view relative_path) noexcept;

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

/// Plans a sync from its three sides (pure: no I/O; the sans-io core of
/// impl/sync/sansio/).
/// \param local The local tree (scan_sync_tree).
/// \param manifest The manifest's entries.
/// \param remote The remote listing.
/// \param committed Committed journal records of the folder's files whose
/// (path, size, sha256) the manifest does not have (a crash after the
/// upload, before the manifest write): taken as in sync.
/// \param options The options.
/// \return The plan.
DIGITAL_DELIVERY_DECL sync_plan plan_sync(
    const sync_local_tree& local,
    std::span<const sync_manifest_entry> manifest,
    const sync_remote& remote,
    std::span<const upload_record> committed,
    const sync_options& options
);

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

/// Reads what plan_sync needs of the journal (synchronously: one
/// upload_journal::find per file of `local` that the manifest does not
/// hold with its content, and one upload_journal::unfinished).
/// \param journal The upload journal.
/// \param local The local tree (its root is the folder).
/// \param manifest The manifest's entries.
/// \return The records. Journal failures are thrown.
DIGITAL_DELIVERY_DECL sync_journal_state read_sync_journal(
    upload_journal& journal,
    const sync_local_tree& local,
    std::span<const sync_manifest_entry> manifest
);

/// Plans a sync (pure), with the journal's records: plan_sync with
/// `journal.committed`, and sync_plan::unfinished / recovery_points set from
/// `journal.unfinished`. async_plan_sync is scan_sync_tree,
/// async_list_sync_remote, read_sync_journal and this.
/// \param local The local tree (scan_sync_tree).
/// \param manifest The manifest's entries.
/// \param remote The remote listing (async_list_sync_remote).
/// \param journal The journal's records (read_sync_journal).
/// \param options The options.
/// \return The plan.
DIGITAL_DELIVERY_DECL sync_plan plan_sync_with_journal(
    const sync_local_tree& local,
    std::span<const sync_manifest_entry> manifest,
    const sync_remote& remote,
    const sync_journal_state& journal,
    const sync_options& options
);

/// The asset's filename, name and content type for a relative path
/// (docs/sync.md, "Path mapping"): filename = the last component, name = the
/// whole relative path, content type from the extension (none when unknown).
/// \param relative_path The path.
/// \param filename Set to the filename.
/// \param name Set to the name.
/// \param content_type Set to the content type or nothing.
DIGITAL_DELIVERY_DECL void sync_asset_fields(
    std::string_view relative_path,
    std::string& filename,
    std::string& name,
    std::optional<std::string>& content_type
);

// ---- the apply ---------------------------------------------------------------------

/// What a progress event reports.
enum class sync_event_kind : int
{
    action_started = 1,  ///< A transfer slot took an action (before its first request).
    action_progress,     ///< Bytes of the action's PUT went out.
    action_done,         ///< The action succeeded (the manifest is written).
    action_failed,       ///< The action failed: `error`; the run goes on unless it must stop.
    action_skipped,      ///< The action was not done: `error` (file changed, points, quota, uploads failed).
    stopping,            ///< The run stops starting actions (points, quota): in-flight ones finish.
};

/// One progress event of async_apply_sync (called on the client's executor).
struct sync_event
{
    sync_event_kind kind = sync_event_kind::action_started;  ///< What happened.
    const sync_action* action = nullptr;  ///< The action (of the plan passed to async_apply_sync); null for `stopping`.
    std::uint64_t action_bytes_sent = 0;  ///< The action's body bytes sent.
    std::uint64_t bytes_done = 0;         ///< Body bytes of the run sent so far (all actions).
    std::uint64_t bytes_total = 0;        ///< Body bytes of the plan.
    std::int64_t points_spent = 0;        ///< Points the run's requests took so far.
    std::int64_t points_total = 0;        ///< Points of the plan (listing excluded).
    error_code error{};                   ///< action_failed / action_skipped / stopping: why.
    std::string_view message{};           ///< Words for people.
    /// action_done: the asset the file is in now (a create's new id);
    /// action_failed: an asset that exists for it, if any.
    std::string_view asset_id{};
};

/// Options of async_apply_sync.
struct sync_apply_options
{
    /// Uploads (PUTs) at the same time (default: 4, at least 1). Requests to
    /// the API take their turn in the client's rate limiter apart from this.
    unsigned transfers = 4;
    /// Stop starting actions once their points would exceed this (default:
    /// none). The run ends with sync_errc::points_exhausted; the next plan
    /// holds the rest.
    std::optional<std::int64_t> max_points{};
    /// Progress events (default: none).
    std::function<void(const sync_event&)> on_event{};
    /// The uploads' options (progress interval, stall, retries); on_progress
    /// and on_created are the sync's own and are replaced.
    upload_options upload{};
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

/// One action's end.
struct sync_action_result
{
    std::size_t index = 0;  ///< The action's index in sync_plan::actions.
    bool done = false;      ///< Whether it was carried out.
    error_code error{};     ///< Why not (sync_errc, api_errc, client_errc, ...).
    std::string message{};  ///< Words for people.
    std::string asset_id{}; ///< The asset (a create's new id).
};

/// The result of async_apply_sync.
struct sync_result
{
    sync_outcome outcome = sync_outcome::complete;  ///< How it ended.
    sync_totals done{};          ///< What was carried out, per kind (points: spent by the run's requests).
    std::uint64_t failed = 0;    ///< Actions that failed.
    std::uint64_t not_started = 0;  ///< Actions left for the next run (points, quota, failed uploads).
    std::uint64_t recovered = 0;  ///< Interrupted journal uploads finished first.
    std::vector<sync_action_result> results{};  ///< Every action that was not done, and every write done.
};

namespace detail {
/// \private
using sync_plan_handler = boost::asio::any_completion_handler<void(error_code, sync_plan)>;
/// \private
using sync_remote_handler = boost::asio::any_completion_handler<void(error_code, sync_remote)>;
/// \private
DIGITAL_DELIVERY_DECL void start_list_sync_remote(
    client& c,
    sync_options opts,
    stored_request_options request,
    diagnostics* diag,
    sync_remote_handler handler
);
/// \private
struct list_sync_remote_initiation
{
    template <class Handler>
    void operator()(Handler&& h, diagnostics* diag, client* c, sync_options opts, stored_request_options request) const
    {
        start_list_sync_remote(*c, std::move(opts), std::move(request), diag, sync_remote_handler(std::forward<Handler>(h)));
    }
};
/// \private
using sync_apply_handler = boost::asio::any_completion_handler<void(error_code, sync_result)>;
/// \private (impl/sync/sync.ipp)
DIGITAL_DELIVERY_DECL void start_plan_sync(
    client& c,
    upload_journal& j,
    sync_manifest& m,
    std::string root,
    sync_options opts,
    stored_request_options request,
    diagnostics* diag,
    sync_plan_handler handler
);
/// \private
DIGITAL_DELIVERY_DECL void start_apply_sync(
    client& c,
    upload_journal& j,
    sync_manifest& m,
    const sync_plan* plan,
    sync_apply_options opts,
    stored_request_options request,
    diagnostics* diag,
    sync_apply_handler handler
);
/// \private
struct plan_sync_initiation
{
    template <class Handler>
    void operator()(Handler&& h, diagnostics* diag, client* c, upload_journal* j, sync_manifest* m, std::string root,
                    sync_options opts, stored_request_options request) const
    {
        start_plan_sync(*c, *j, *m, std::move(root), std::move(opts), std::move(request), diag,
                        sync_plan_handler(std::forward<Handler>(h)));
    }
};
/// \private
struct apply_sync_initiation
{
    template <class Handler>
    void operator()(Handler&& h, diagnostics* diag, client* c, upload_journal* j, sync_manifest* m, const sync_plan* plan,
                    sync_apply_options opts, stored_request_options request) const
    {
        start_apply_sync(*c, *j, *m, plan, std::move(opts), std::move(request), diag,
                         sync_apply_handler(std::forward<Handler>(h)));
    }
};
}  // namespace detail

/// Lists the remote side of a plan: every page of GET /assets (250 a page),
/// of GET /digital_products (100 a page) when sync_options::delete_remote,
/// and GET /digital_products/{id} when sync_options::product_id; each at
/// priority::background. sync_remote::listing_requests / listing_points
/// count them.
///
/// Call shape: `async_list_sync_remote(client, sync_options,
/// [request_options], [diagnostics&], [token])`; completion
/// `void(error_code, sync_remote)`.
/// \param c The client.
/// \param options The options (delete_remote, product_id).
/// \param rest [request_options], [diagnostics&], [token].
/// \return What the completion token makes of the operation (an awaitable by default).
template <class... Rest>
    requires(detail::trailing<void, Rest...>::template valid<sync_options>())
auto async_list_sync_remote(client& c, const sync_options& options, Rest&&... rest)
{
    auto t = detail::make_trailing<void>(std::forward<Rest>(rest)...);
    return t.template initiate<void(error_code, sync_remote)>(
        detail::list_sync_remote_initiation{}, &c, options, detail::stored_request_options(t.options())
    );
}

/// Plans a sync of `root`: scans it (scan_sync_tree, synchronously on the
/// client's executor: a big tree holds that executor for the scan), lists the store's
/// assets (every page of GET /assets, 250 a page) and, when
/// sync_options::delete_remote, its digital products (to find linked
/// assets), reads the journal's committed records of the folder's files and
/// its unfinished ones, and calls plan_sync(). Sends GETs only (at
/// priority::background); writes nothing.
///
/// Call shape (docs/operations.md): `async_plan_sync(client, journal,
/// manifest, root, sync_options, [request_options], [diagnostics&], [token])`;
/// completion `void(error_code, sync_plan)`. Errors: sync_errc::not_a_directory,
/// state_inside_tree (sync_manifest::state_file() is inside `root`), those
/// of the manifest, the journal and the listing.
///
/// The client, journal and manifest (and a `diagnostics&`) must outlive the operation.
/// \param c The client.
/// \param journal The upload journal (its file holds the manifest).
/// \param manifest The folder's manifest.
/// \param root The folder.
/// \param options The options.
/// \param rest [request_options], [diagnostics&], [token].
/// \return What the completion token makes of the operation (an awaitable by default).
template <class... Rest>
    requires(detail::trailing<void, Rest...>::template valid<sync_options>())
auto async_plan_sync(client& c, upload_journal& journal, sync_manifest& manifest, std::string_view root,
                     const sync_options& options, Rest&&... rest)
{
    auto t = detail::make_trailing<void>(std::forward<Rest>(rest)...);
    return t.template initiate<void(error_code, sync_plan)>(
        detail::plan_sync_initiation{}, &c, &journal, &manifest, std::string(root), options,
        detail::stored_request_options(t.options())
    );
}

/// Carries out a plan: first the journal's unfinished uploads
/// (async_recover_upload), then creates and replaces through the journal
/// (async_upload_file, async_replace_file), up to `transfers` at a time, then
/// adopt/move manifest writes, then, when every upload succeeded, the deletes
/// (each asset's journal records erased), then the product step. Every
/// request at priority::background. A file whose size or mtime differ from
/// the plan's when its turn comes is skipped (sync_errc::file_changed): the
/// body sent is always `size` bytes of the file as hashed, or the upload fails
/// (client_errc::source_size_mismatch) without a commit.
///
/// Stops: at max_points (sync_outcome::partial, error sync_errc::points_exhausted);
/// on api_errc::asset_storage_limit_exceeded / asset_count_limit_exceeded no
/// further create or replace starts, those in flight finish, the journal keeps
/// the rest (sync_outcome::quota_stopped, error sync_errc::quota_exceeded).
///
/// Call shape: `async_apply_sync(client, journal, manifest, plan,
/// [sync_apply_options], [request_options], [diagnostics&], [token])`;
/// completion `void(error_code, sync_result)`: success only for
/// sync_outcome::complete; the result is filled in every case. The plan is
/// not copied: it must outlive the operation (events point into it).
/// \param c The client.
/// \param journal The upload journal.
/// \param manifest The folder's manifest.
/// \param plan The plan (of async_plan_sync, made with this manifest).
/// \param rest [sync_apply_options], [request_options], [diagnostics&], [token].
/// \return What the completion token makes of the operation (an awaitable by default).
template <class... Rest>
    requires(detail::trailing<sync_apply_options, Rest...>::template valid<sync_plan>())
auto async_apply_sync(client& c, upload_journal& journal, sync_manifest& manifest, const sync_plan& plan, Rest&&... rest)
{
    auto t = detail::make_trailing<sync_apply_options>(std::forward<Rest>(rest)...);
    const sync_apply_options* o = t.op_options();
    return t.template initiate<void(error_code, sync_result)>(
        detail::apply_sync_initiation{}, &c, &journal, &manifest, &plan, o ? *o : sync_apply_options{},
        detail::stored_request_options(t.options())
    );
}

// ---- the lock ----------------------------------------------------------------------

/// One sync of a folder at a time: an exclusive lock (flock) on a file beside
/// the state file, named after the folder (`<state file>.sync-<16 hex digits
/// of SHA-256(root)>.lock`). Released by the destructor, or by the kernel
/// when the process dies (a SIGKILL leaves no stale lock).
class sync_folder_lock
{
public:
    /// Takes the lock without waiting.
    /// \param state_file The state file (the journal's).
    /// \param root The folder.
    /// \throws error_with_diagnostics sync_errc::locked when another process
    /// (or object) holds it; a system error when the lock file cannot be made.
    DIGITAL_DELIVERY_DECL sync_folder_lock(std::string_view state_file, std::string_view root);
    /// Releases the lock.
    DIGITAL_DELIVERY_DECL ~sync_folder_lock();
    sync_folder_lock(const sync_folder_lock&) = delete;
    sync_folder_lock& operator=(const sync_folder_lock&) = delete;
    /// \return The lock file's path.
    const std::string& path() const noexcept { return path_; }

private:
    std::string path_;
    int fd_ = -1;
};

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
#include <digital_delivery/impl/sync/sync.ipp>
#endif

#endif
