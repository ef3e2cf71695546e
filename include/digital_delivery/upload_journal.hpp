//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_UPLOAD_JOURNAL_HPP
#define DIGITAL_DELIVERY_UPLOAD_JOURNAL_HPP

/// \file
/// Journaled uploads of files: no orphan, no duplicate, whatever kills the
/// process (opt-in: the umbrella header does not include it). See
/// docs/uploads.md ("Journaled uploads").
///
/// \code
/// #include <digital_delivery/sqlite_upload_journal.hpp>
/// dd::sqlite_upload_journal journal("/var/lib/app/uploads.db");
/// dd::journaled_upload r = co_await dd::async_upload_file(client, journal, "/data/manual.pdf", {.filename = "manual.pdf"});
/// // r.outcome: uploaded (new asset), existing (uploaded before: nothing sent), completed (resumed)
/// \endcode
///
/// Every state change is written to the journal *before* the write it
/// announces: creating (path, size, SHA-256 of the content) before POST
/// /assets; created (the asset's id), not uploaded, before the PUT; uploaded
/// once the storage took the body; committed once the API shows the asset.
/// The next run (or async_recover_upload) finishes what a crash left:
/// "creating" is reconciled by listing the assets with `q` before anything
/// is created again; "created" is finished with a fresh URL
/// (async_replace_asset_body on that id), or the asset deleted when the file
/// is gone or changed; "committed" is never uploaded again.

#include <digital_delivery/asset.hpp>
#include <digital_delivery/client.hpp>
#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/detail/trailing_args.hpp>
#include <digital_delivery/diagnostics.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/request_options.hpp>
#include <digital_delivery/string_ref.hpp>
#include <digital_delivery/upload_options.hpp>
#include <digital_delivery/upload_record.hpp>

#include <boost/asio/any_completion_handler.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace digital_delivery {

/// Where journaled uploads are kept: implement it to keep them in your own
/// store (a database, a key-value store); sqlite_upload_journal is the
/// embedded default. Each call must be durable when it returns (an update
/// that is only in memory defeats the journal), and atomic. Failures are
/// thrown (error_with_diagnostics, or any boost::system::system_error): the
/// operation then ends with that error before its next write.
class upload_journal
{
public:
    virtual ~upload_journal() = default;
    /// \param path A file's path.
    /// \return Its records, newest first.
    virtual std::vector<upload_record> find(std::string_view path) = 0;
    /// \return Every record not committed, oldest first.
    virtual std::vector<upload_record> unfinished() = 0;
    /// Adds a record (its `id` is ignored).
    /// \param r The record.
    /// \return Its new id.
    virtual std::int64_t insert(const upload_record& r) = 0;
    /// Replaces the record of id `r.id`.
    /// \param r The record.
    virtual void update(const upload_record& r) = 0;
    /// Removes a record (nothing exists for it any more).
    /// \param id The record's id.
    virtual void erase(std::int64_t id) = 0;
};

/// A journal in memory (for tests; nothing survives the process).
class memory_upload_journal final : public upload_journal
{
public:
    DIGITAL_DELIVERY_DECL std::vector<upload_record> find(std::string_view path) override;
    DIGITAL_DELIVERY_DECL std::vector<upload_record> unfinished() override;
    DIGITAL_DELIVERY_DECL std::int64_t insert(const upload_record& r) override;
    DIGITAL_DELIVERY_DECL void update(const upload_record& r) override;
    DIGITAL_DELIVERY_DECL void erase(std::int64_t id) override;
    /// \return Every record, oldest first.
    const std::vector<upload_record>& records() const noexcept { return records_; }

private:
    std::vector<upload_record> records_;
    std::int64_t next_ = 1;
};

/// What a journaled operation did.
enum class journal_outcome : int
{
    uploaded = 1,  ///< A new asset was created and its body uploaded.
    existing,      ///< The same content was committed before: nothing was written.
    completed,     ///< An interrupted upload was finished (its asset kept its id).
    deleted,       ///< The file is gone or changed: the interrupted upload's asset was deleted.
    forgotten,     ///< Nothing existed for the record (no asset found): it was removed.
};

/// \param o The outcome.
/// \return "uploaded", "existing", "completed", "deleted" or "forgotten".
DIGITAL_DELIVERY_DECL std::string_view to_string(journal_outcome o) noexcept;

/// The result of async_upload_file and async_recover_upload.
struct journaled_upload
{
    journal_outcome outcome = journal_outcome::uploaded;  ///< What was done.
    upload_record record{};  ///< The record as it ends (removed from the journal when deleted or forgotten).
    asset result{};          ///< The asset (empty id when deleted or forgotten).
};

/// Options of async_upload_file and async_recover_upload.
struct journal_options
{
    /// Create a new asset even when the same content was committed before
    /// (default: false: report the existing asset and send no write).
    bool force_new = false;
    /// How far before a "creating" record's intent a listed asset may have
    /// been created and still be taken for the one that record created (the
    /// difference between the local clock and the server's; default: 5 min).
    std::chrono::seconds reconcile_margin{300};
    /// The uploads' options (progress, stall, retries). Its on_created is the
    /// journal's and is replaced.
    upload_options upload{};
};

namespace detail {
/// \private
using journal_handler = boost::asio::any_completion_handler<void(error_code, journaled_upload)>;
/// \private The non-template bodies (impl/upload/upload_journal.ipp).
DIGITAL_DELIVERY_DECL void start_upload_file(
    client& c,
    upload_journal& j,
    std::string path,
    upload_record meta,
    journal_options opts,
    stored_request_options request,
    diagnostics* diag,
    journal_handler handler
);
/// \private
DIGITAL_DELIVERY_DECL void start_recover_upload(
    client& c,
    upload_journal& j,
    upload_record rec,
    journal_options opts,
    stored_request_options request,
    diagnostics* diag,
    journal_handler handler
);
/// \private
struct upload_file_initiation
{
    template <class Handler>
    void operator()(Handler&& h, diagnostics* diag, client* c, upload_journal* j, std::string path, upload_record meta,
                    journal_options opts, stored_request_options request) const
    {
        start_upload_file(*c, *j, std::move(path), std::move(meta), std::move(opts), std::move(request), diag,
                          journal_handler(std::forward<Handler>(h)));
    }
};
/// \private
DIGITAL_DELIVERY_DECL void start_replace_file(
    client& c,
    upload_journal& j,
    std::string asset_id,
    std::string path,
    upload_record meta,
    journal_options opts,
    stored_request_options request,
    diagnostics* diag,
    journal_handler handler
);
/// \private
struct replace_file_initiation
{
    template <class Handler>
    void operator()(Handler&& h, diagnostics* diag, client* c, upload_journal* j, std::string asset_id, std::string path,
                    upload_record meta, journal_options opts, stored_request_options request) const
    {
        start_replace_file(*c, *j, std::move(asset_id), std::move(path), std::move(meta), std::move(opts), std::move(request),
                           diag, journal_handler(std::forward<Handler>(h)));
    }
};
/// \private
struct recover_upload_initiation
{
    template <class Handler>
    void operator()(Handler&& h, diagnostics* diag, client* c, upload_journal* j, upload_record rec, journal_options opts,
                    stored_request_options request) const
    {
        start_recover_upload(*c, *j, std::move(rec), std::move(opts), std::move(request), diag,
                             journal_handler(std::forward<Handler>(h)));
    }
};
}  // namespace detail

/// Uploads the file at `path` as a new internal asset, through `journal`:
/// the same content (path, size, SHA-256) committed before is reported
/// (journal_outcome::existing, no write sent) unless journal_options::force_new;
/// an interrupted upload of it is finished (completed); unfinished records of
/// the same path with other content are recovered first (their assets
/// deleted, or kept when they were uploaded).
///
/// Call shape (docs/operations.md): `async_upload_file(client, journal, path,
/// params, [journal_options], [request_options], [diagnostics&], [token])`;
/// completion `void(error_code, journaled_upload)`. On failure the journal
/// keeps what the next run needs, and diagnostics::asset_id names an asset
/// that exists.
///
/// The file is read (hashed) synchronously on the client's executor before
/// anything is sent. The client, the journal and a `diagnostics&` must
/// outlive the operation.
///
/// \param c The client.
/// \param journal The journal.
/// \param path The file.
/// \param params The asset's filename, content type and name.
/// \param rest [journal_options], [request_options], [diagnostics&], [token].
/// \return What the completion token makes of the operation (an awaitable by default).
template <class... Rest>
    requires(detail::trailing<journal_options, Rest...>::template valid<upload_asset_params>())
auto async_upload_file(client& c, upload_journal& journal, std::string_view path, const upload_asset_params& params, Rest&&... rest)
{
    auto t = detail::make_trailing<journal_options>(std::forward<Rest>(rest)...);
    upload_record meta;
    meta.filename = std::string(params.filename);
    if (params.content_type)
        meta.content_type = std::string(*params.content_type);
    if (params.name)
        meta.name = std::string(*params.name);
    meta.watermark_asset = params.watermark_asset;
    const journal_options* o = t.op_options();
    return t.template initiate<void(error_code, journaled_upload)>(
        detail::upload_file_initiation{}, &c, &journal, std::string(path), std::move(meta), o ? *o : journal_options{},
        detail::stored_request_options(t.options())
    );
}

/// Uploads the file at `path` into the existing internal asset `asset_id`
/// (POST /assets/{id}/replace and the PUT: the asset keeps its id and every
/// link), through `journal`: a record (replace = true, stage `created`, the
/// file's size and SHA-256) is written before the POST; `uploaded` once the
/// storage took the body; `committed` once GET /assets/{id} shows it. An
/// interrupted replace is finished by the next call for the same asset and
/// content, or by async_recover_upload (which never deletes the asset: a
/// changed or gone file forgets the record).
///
/// Call shape: `async_replace_file(client, journal, asset_id, path, params,
/// [journal_options], [request_options], [diagnostics&], [token])`;
/// completion `void(error_code, journaled_upload)` (outcome uploaded, or
/// completed when an interrupted replace was finished). Points:
/// operation_points::replace_asset_body.
///
/// \param c The client.
/// \param journal The journal.
/// \param asset_id The internal asset.
/// \param path The file.
/// \param params The new filename and content type.
/// \param rest [journal_options], [request_options], [diagnostics&], [token].
/// \return What the completion token makes of the operation (an awaitable by default).
template <class... Rest>
    requires(detail::trailing<journal_options, Rest...>::template valid<replace_asset_params>())
auto async_replace_file(client& c, upload_journal& journal, string_ref asset_id, std::string_view path,
                        const replace_asset_params& params, Rest&&... rest)
{
    auto t = detail::make_trailing<journal_options>(std::forward<Rest>(rest)...);
    upload_record meta;
    meta.filename = std::string(params.filename);
    if (params.content_type)
        meta.content_type = std::string(*params.content_type);
    meta.replace = true;
    meta.asset_id = std::string(asset_id);
    const journal_options* o = t.op_options();
    return t.template initiate<void(error_code, journaled_upload)>(
        detail::replace_file_initiation{}, &c, &journal, std::string(asset_id), std::string(path), std::move(meta),
        o ? *o : journal_options{}, detail::stored_request_options(t.options())
    );
}

/// Finishes one unfinished record of `journal` (upload_journal::unfinished):
/// "creating" is reconciled by listing the assets with `q` = its filename
/// (an asset found is finished, none: the record is forgotten, or the file
/// uploaded when it is unchanged); "created" is finished with
/// async_replace_asset_body on its asset when the file is unchanged, else
/// the asset is deleted; "uploaded" is confirmed with GET /assets/{id}.
///
/// Call shape: `async_recover_upload(client, journal, record,
/// [journal_options], [request_options], [diagnostics&], [token])`;
/// completion `void(error_code, journaled_upload)`.
///
/// \param c The client.
/// \param journal The journal.
/// \param record The record (copied).
/// \param rest [journal_options], [request_options], [diagnostics&], [token].
/// \return What the completion token makes of the operation (an awaitable by default).
template <class... Rest>
    requires(detail::trailing<journal_options, Rest...>::template valid<upload_record>())
auto async_recover_upload(client& c, upload_journal& journal, const upload_record& record, Rest&&... rest)
{
    auto t = detail::make_trailing<journal_options>(std::forward<Rest>(rest)...);
    const journal_options* o = t.op_options();
    return t.template initiate<void(error_code, journaled_upload)>(
        detail::recover_upload_initiation{}, &c, &journal, record, o ? *o : journal_options{},
        detail::stored_request_options(t.options())
    );
}

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/upload/upload_journal.ipp>
#endif

#endif
