//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_UPLOAD_OPTIONS_HPP
#define DIGITAL_DELIVERY_UPLOAD_OPTIONS_HPP

/// \file
/// The parameters, options and progress reports of the upload operations
/// (<digital_delivery/upload.hpp>, docs/uploads.md).

#include <digital_delivery/asset.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/string_ref.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace digital_delivery {

/// What POST /assets is told about a new internal asset. byte_size is the
/// source's size(). Views of the caller's strings, copied before the
/// operation's initiating function returns.
struct upload_asset_params
{
    /// Suggested attachment name on download. Required.
    string_ref filename{};
    /// MIME type (default: the API's `application/octet-stream`).
    std::optional<string_ref> content_type{};
    /// Display name.
    std::optional<string_ref> name{};
    /// PDF watermarking on delivery.
    std::optional<bool> watermark_asset{};
};

/// What POST /assets/{id}/replace is told about the new body. byte_size is
/// the source's size().
struct replace_asset_params
{
    /// Required.
    string_ref filename{};
    /// Default: the asset's current content type.
    std::optional<string_ref> content_type{};
};

/// One progress report. Reports are monotonic: bytes_sent never decreases,
/// even across a retried PUT (a retry reports again only once it has passed
/// the previous high-water mark).
struct upload_progress
{
    std::uint64_t bytes_sent = 0;  ///< Body bytes handed to the transport (at most one chunk ahead of the socket).
    std::uint64_t total = 0;       ///< The source's size().
    double rate = 0;               ///< Bytes per second over the current PUT attempt.
    unsigned attempt = 1;          ///< PUT attempt (1 unless retried).
    std::chrono::milliseconds elapsed{0};  ///< Since the operation started.
};

/// Options of one upload. Every default is spelled out. The deadline of the
/// whole operation (create and re-read included) is request_options::deadline.
struct upload_options
{
    /// Progress callback (default: none). Called on the client's executor at
    /// most every `progress_interval` (or every `progress_step_bytes` when
    /// that is non-zero), and once at the end with bytes_sent == total, after
    /// the storage accepted the body.
    std::function<void(const upload_progress&)> on_progress{};

    /// Minimum time between two progress reports (default: 100 ms).
    std::chrono::milliseconds progress_interval{100};

    /// Also report when this many bytes went out since the last report, even
    /// before progress_interval (default: 0 = time-based only).
    std::uint64_t progress_step_bytes = 0;

    /// No body byte taken by the transport for this long → the PUT is
    /// abandoned with client_errc::upload_stalled (default: 30 s; 0 = off).
    std::chrono::milliseconds stall_timeout{30'000};

    /// Time limit of one PUT passed to the transport as http_request::timeout
    /// (default: 1 h, the validity of an upload URL). Must be non-zero: a
    /// transport's own default (default_request_timeout, 30 s) is too short for
    /// 2 GB.
    std::chrono::milliseconds put_timeout{std::chrono::hours(1)};

    /// PUT attempts in total, including refreshes of an expired URL
    /// (default: 3). Transport errors, 5xx and an expired URL are retried,
    /// always from the first byte of the source (rewind()); the asset is never
    /// created twice.
    unsigned max_attempts = 3;

    /// Ceiling of the wait before the first retry, doubled for each further one
    /// up to 30 s; each wait is drawn uniformly below its ceiling (full jitter)
    /// (default: 500 ms).
    std::chrono::milliseconds retry_backoff{500};

    /// A URL that expires within this margin before a PUT (re)starts is
    /// replaced by a fresh one with POST /assets/{id}/replace (default: 60 s).
    std::chrono::seconds url_refresh_margin{60};

    /// Send `Expect: 100-continue` (not a signed header of presigned URLs):
    /// a refusal then costs no body bytes (default: false).
    bool expect_continue = false;

    /// Accept a plain `http://` upload URL from the server although the
    /// client's base_url is `https://` (default: false). Such a URL would send
    /// the body and its presigned signature unencrypted: by default the upload
    /// fails with client_errc::insecure_upload_url before anything is sent to
    /// it (the asset itself is already created). An `http://` base_url (a
    /// local test server) allows `http://` upload URLs without this option.
    bool allow_insecure_upload_url = false;

    /// Re-read the asset with GET /assets/{id} after the upload so that the
    /// result carries the committed metadata (default: true). If that GET
    /// fails, the upload still succeeds with the asset as created.
    bool reread_asset = true;
    /// Called once by async_upload_asset when POST /assets answered with the
    /// asset, before the first PUT, on the client's executor (default: none):
    /// the moment to record the asset's id durably (the upload journal,
    /// <digital_delivery/upload_journal.hpp>, does). An error it returns (or
    /// the code of a boost::system::system_error it throws) ends the operation
    /// with that error before the PUT; the asset exists
    /// (diagnostics::asset_id). Not called by async_replace_asset_body.
    std::function<error_code(const asset&)> on_created{};
};

}  // namespace digital_delivery

#endif
