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
///
/// The plan, its actions and the values it is made from are in
/// <digital_delivery/sync_plan.hpp>, which this header includes.

#include <digital_delivery/asset.hpp>
#include <digital_delivery/client.hpp>
#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/detail/trailing_args.hpp>
#include <digital_delivery/diagnostics.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/request_options.hpp>
#include <digital_delivery/sync_plan.hpp>
#include <digital_delivery/upload_journal.hpp>
#include <digital_delivery/upload_options.hpp>

#include <boost/asio/any_completion_handler.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace digital_delivery {

// ---- the manifest ------------------------------------------------------------------

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

// ---- the plan ----------------------------------------------------------------------

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

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/sync/sync.ipp>
#endif

#endif
