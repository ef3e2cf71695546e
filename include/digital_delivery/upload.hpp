//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_UPLOAD_HPP
#define DIGITAL_DELIVERY_UPLOAD_HPP

/// \file
/// Streaming upload of internal-asset bodies (up to 2 GB) in bounded memory
/// (docs/uploads.md).
///
/// \code
/// namespace dd = digital_delivery;
/// dd::error_code ec;
/// auto src = dd::file_source::open("/data/manual.pdf", ec);
/// dd::upload_options opts;
/// opts.on_progress = [](const dd::upload_progress& p) { std::printf("%llu\n", (unsigned long long)p.bytes_sent); };
/// dd::asset a = co_await dd::async_upload_asset(client, src,
///     {.filename = "manual.pdf", .content_type = "application/pdf"}, opts);
/// \endcode
///
/// The operation creates the asset (POST /assets), then PUTs the body to the
/// presigned storage URL with exactly the signed headers, `Content-Length`
/// set and the body streamed from the source in the transport's fixed-size
/// chunks. Expired URLs are refreshed with POST /assets/{id}/replace; failed
/// PUTs (transport errors, 5xx) are retried from the first byte.

#include <digital_delivery/asset.hpp>
#include <digital_delivery/client.hpp>
#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/detail/trailing_args.hpp>
#include <digital_delivery/request_options.hpp>
#include <digital_delivery/diagnostics.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/http_message.hpp>
#include <digital_delivery/upload_options.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/deferred.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace digital_delivery {

/// The largest body the API accepts: 2 GB = 2147483648 bytes (inclusive).
inline constexpr std::uint64_t max_upload_size = 2147483648u;

// ---- sources -----------------------------------------------------------------------

/// A regular file read with POSIX pread() in the chunks the transport asks
/// for (64 KiB with beast_transport): memory stays bounded whatever the file
/// size. The size is taken once, at open(); a file that shrinks or grows
/// while uploading fails with client_errc::source_size_mismatch.
///
/// Reads are synchronous (they hit the page cache or a local disk) and their
/// completion is posted, never inline: through `executor` (then the read
/// handler's own executor). Without one, the system executor is used for the
/// post; the upload operations set the client's executor on a file_source
/// that has none.
class file_source final : public body_source
{
public:
    /// Opens `path` for reading. On failure returns null and sets `ec`
    /// (client_errc::source_unreadable; not a regular file, or cannot be
    /// opened). A size of 0 or above max_upload_size is not an error here: the
    /// upload operation refuses it (client_errc::invalid_byte_size).
    /// \param path The file's path.
    /// \param ec Set on failure, cleared on success.
    /// \param executor Where read completions are posted (may be empty).
    /// \return The source, or null on failure.
    DIGITAL_DELIVERY_DECL static std::shared_ptr<file_source> open(
        const std::string& path,
        error_code& ec,
        boost::asio::any_io_executor executor = {}
    );

    /// Closes the file.
    DIGITAL_DELIVERY_DECL ~file_source() override;
    file_source(const file_source&) = delete;
    file_source& operator=(const file_source&) = delete;

    std::uint64_t size() const noexcept override { return size_; }
    DIGITAL_DELIVERY_DECL void async_read_some(boost::asio::mutable_buffer buf, read_handler handler) override;
    DIGITAL_DELIVERY_DECL error_code rewind() override;

    /// \return Bytes read since the last rewind.
    std::uint64_t offset() const noexcept { return offset_; }

    /// Where read completions are posted (empty: see the class comment). The
    /// upload operations set it to the client's executor when it is empty.
    /// \return The executor, maybe empty.
    const boost::asio::any_io_executor& executor() const noexcept { return ex_; }
    /// Sets where read completions are posted.
    /// \param ex The executor.
    void set_executor(boost::asio::any_io_executor ex) { ex_ = std::move(ex); }

    /// \private
    file_source(int fd, std::uint64_t size, boost::asio::any_io_executor ex) noexcept
        : fd_(fd), size_(size), ex_(std::move(ex))
    {
    }

private:
    int fd_ = -1;
    std::uint64_t size_ = 0;
    std::uint64_t offset_ = 0;
    boost::asio::any_io_executor ex_;
};

/// A body held in memory: owned (a std::string moved in) or borrowed (a
/// buffer the caller keeps alive until the upload completes).
class memory_source final : public body_source
{
public:
    /// Owns `data`.
    /// \param data The body.
    /// \param executor Where read completions are posted (may be empty).
    explicit memory_source(std::string data, boost::asio::any_io_executor executor = {})
        : owned_(std::move(data)), view_(owned_), ex_(std::move(executor))
    {
    }

    /// Borrows `data` (not copied).
    /// \param data The body; must outlive the upload.
    /// \param executor Where read completions are posted (may be empty).
    /// \return The source.
    static std::shared_ptr<memory_source> borrow(std::string_view data, boost::asio::any_io_executor executor = {})
    {
        auto s = std::make_shared<memory_source>(std::string(), std::move(executor));
        s->view_ = data;
        return s;
    }

    std::uint64_t size() const noexcept override { return view_.size(); }

    /// Where read completions are posted (empty: through the system executor,
    /// then the handler's own). The upload operations set it to the client's
    /// executor when it is empty.
    /// \return The executor, maybe empty.
    const boost::asio::any_io_executor& executor() const noexcept { return ex_; }
    /// Sets where read completions are posted.
    /// \param ex The executor.
    void set_executor(boost::asio::any_io_executor ex) { ex_ = std::move(ex); }

    DIGITAL_DELIVERY_DECL void async_read_some(boost::asio::mutable_buffer buf, read_handler handler) override;
    error_code rewind() override
    {
        offset_ = 0;
        return {};
    }

private:
    std::string owned_;
    std::string_view view_;
    std::size_t offset_ = 0;
    boost::asio::any_io_executor ex_;
};

// ---- parameters and progress -----------------------------------------------------------

// ---- the operations ----------------------------------------------------------------------

namespace detail {

/// \private What both operations need to know.
struct upload_request
{
    bool replace = false;
    std::string asset_id{};  ///< replace only
    std::string filename{};
    std::optional<std::string> content_type{};
    std::optional<std::string> name{};
    std::optional<bool> watermark_asset{};
};

using upload_handler = boost::asio::any_completion_handler<void(error_code, asset)>;

/// \private The non-template body of both operations (impl/upload/upload.ipp).
DIGITAL_DELIVERY_DECL void start_upload(
    std::shared_ptr<client_impl> impl,
    std::shared_ptr<body_source> src,
    upload_request req,
    upload_options opts,
    stored_request_options request,
    diagnostics* diag,
    upload_handler handler
);

struct upload_initiation
{
    template <class Handler>
    void operator()(
        Handler&& h,
        diagnostics* diag,
        std::shared_ptr<client_impl> impl,
        std::shared_ptr<body_source> src,
        upload_request req,
        upload_options opts,
        stored_request_options request
    ) const
    {
        start_upload(std::move(impl), std::move(src), std::move(req), std::move(opts), std::move(request), diag,
                     upload_handler(std::forward<Handler>(h)));
    }
};

/// Both public operations share this.
template <class Trailing>
auto initiate_upload(client& c, std::shared_ptr<body_source> src, upload_request r, Trailing t)
{
    const upload_options* o = t.op_options();
    const request_options* ro = t.options();
    return t.template initiate<void(error_code, asset)>(
        upload_initiation{}, access::impl(c), std::move(src), std::move(r), o ? *o : upload_options{},
        stored_request_options(ro)
    );
}

inline std::optional<std::string> own(const std::optional<std::string_view>& s)
{
    return s ? std::optional<std::string>(std::in_place, *s) : std::nullopt;
}

inline upload_request make_upload_request(const upload_asset_params& meta)
{
    return upload_request{false, {}, std::string(meta.filename), own(meta.content_type), own(meta.name), meta.watermark_asset};
}

inline upload_request make_replace_request(std::string_view asset_id, const replace_asset_params& meta)
{
    return upload_request{true, std::string(asset_id), std::string(meta.filename), own(meta.content_type), {}, {}};
}

}  // namespace detail

/// Creates an internal asset and uploads its body from `src`.
///
/// Call shape (docs/operations.md): `async_upload_asset(client, src, params,
/// [upload_options], [request_options], [diagnostics&], [token])`. The
/// request options apply to the API requests (create, refresh, re-read);
/// their deadline bounds the whole operation.
///
/// Completion signature `void(error_code, asset)`. On success the asset as
/// re-read after the upload. On failure after the asset was created, the
/// asset argument still carries it (its id is non-empty): delete it, or
/// retry with async_replace_asset_body. The asset is never created twice.
///
/// Refused before anything is sent: a null source, size() 0 or above
/// 2147483648 (client_errc::invalid_byte_size), an empty filename
/// (client_errc::missing_required_field).
///
/// \par Errors
/// Those of POST /assets (validation, quotas, ...); of the PUT:
/// api_errc::storage_signature_mismatch, storage_request_expired (after the
/// refresh budget), storage_access_denied, storage_error (diagnostics carry
/// the storage's `<Code>` and `<Message>`); client_errc::upload_stalled,
/// deadline_exceeded, source_unreadable, source_size_mismatch; transport
/// errors after the last attempt.
///
/// \par Per-operation cancellation
/// Terminal cancellation at any stage (create, backoff, PUT, re-read)
/// completes with boost::asio::error::operation_aborted; an interrupted PUT's
/// connection is closed by the transport; the client stays usable.
///
/// \par Object lifetimes
/// Arguments are copied before this returns. A `diagnostics&` must outlive
/// the operation. The source is shared with the operation until it completes.
///
/// \param c The client.
/// \param src The body (file_source, memory_source, or your own body_source).
/// \param params The asset's filename, content type, name, watermark flag.
/// \param rest [upload_options], [request_options], [diagnostics&], [token].
/// \return What the completion token makes of the operation (an awaitable by default).
template <class... Rest>
    requires(detail::trailing<upload_options, Rest...>::template valid<upload_asset_params>())
auto async_upload_asset(client& c, std::shared_ptr<body_source> src, const upload_asset_params& params, Rest&&... rest)
{
    return detail::initiate_upload(
        c, std::move(src), detail::make_upload_request(params), detail::make_trailing<upload_options>(std::forward<Rest>(rest)...)
    );
}

/// Replaces the body of internal asset `asset_id` (POST /assets/{id}/replace,
/// Beta) and uploads the new body from `src`, with the same call shape,
/// streaming, progress, retries, errors and cancellation as
/// async_upload_asset. Completes with the asset (re-read: the committed
/// filename, size, type).
/// \param c The client.
/// \param asset_id The internal asset.
/// \param src The new body.
/// \param params The new filename and content type.
/// \param rest [upload_options], [request_options], [diagnostics&], [token].
/// \return What the completion token makes of the operation (an awaitable by default).
template <class... Rest>
    requires(detail::trailing<upload_options, Rest...>::template valid<replace_asset_params>())
auto async_replace_asset_body(
    client& c,
    string_ref asset_id,
    std::shared_ptr<body_source> src,
    const replace_asset_params& params,
    Rest&&... rest
)
{
    return detail::initiate_upload(
        c, std::move(src), detail::make_replace_request(asset_id, params),
        detail::make_trailing<upload_options>(std::forward<Rest>(rest)...)
    );
}

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/upload/upload.ipp>
#endif

#endif
