//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_DIAGNOSTICS_HPP
#define DIGITAL_DELIVERY_DIAGNOSTICS_HPP

/// \file
/// What accompanies an error_code: the server's own words and the request
/// (the failing one, when there is a failure). Never contains the API key or
/// a presigned URL's query string.

#include <digital_delivery/detail/config.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace digital_delivery {

/// What an operation reports beyond its error code: the server's words, the
/// request, attempts and waits. Passed as the `diagnostics&` argument of a
/// request function, carried by error_with_diagnostics (docs/errors.md). No
/// secrets: no API key, no presigned signature, no query string.
struct diagnostics
{
    /// HTTP status of the failing response; 0 when none was received.
    unsigned http_status = 0;

    /// The server's words: its `error` message (single-error shape), or the
    /// messages of its `errors` list joined with "; " (validation shape), or
    /// the storage's `<Message>` for an S3-style XML error.
    std::string server_message{};

    /// The server's `errors` list (validation shape), one message each.
    std::vector<std::string> server_errors{};

    /// The server's machine-readable code: `code` in a JSON body (quota
    /// failures) or `<Code>` of a storage XML error (e.g. SignatureDoesNotMatch).
    std::string code{};

    /// Retry-After of a 429, when present.
    std::optional<std::chrono::milliseconds> retry_after{};

    /// The request (the failing one, when there is a failure; written at the
    /// start of every request, success included): "GET", its host (and port,
    /// when the URL gives one; never user info) and its path without query string.
    std::string method{};
    std::string host{};  ///< The request's host[:port].
    std::string path{};  ///< The request's path, without query string.

    /// The client's own explanation (which argument was rejected, which
    /// response field failed to decode and why).
    std::string client_message{};

    /// Attempts made (1 when not retried): every sending, the resends after a
    /// 429 included, so it can exceed retry_params::max_attempts (which does
    /// not count 429s).
    unsigned attempts = 0;
    std::chrono::milliseconds total_wait{0};  ///< Rate-limiter waits and retry backoff, summed.
    /// The asset an upload operation worked on, when it failed after the asset
    /// existed: async_upload_asset sets it once POST /assets answered with the
    /// asset (the asset exists and counts against the quotas: finish it with
    /// async_replace_asset_body on this id, or delete it), async_replace_asset_body
    /// to the asset it was given. Empty otherwise, and on success (the
    /// result carries the asset). With the default token the exception
    /// (error_with_diagnostics) carries it: `e.get_diagnostics().asset_id`.
    std::string asset_id{};

    /// Resets every member to its default.
    void clear() { *this = diagnostics{}; }

    /// One line for logs: `GET /orders/x: 404 Order not found (api.example.com)`,
    /// then attempts and time waited when the request was retried.
    /// \return The summary.
    DIGITAL_DELIVERY_DECL std::string to_string() const;
};

namespace detail {

/// The messages of `d.server_errors`, joined with "; ".
inline std::string joined_errors(const diagnostics& d)
{
    std::string r;
    for (const auto& e : d.server_errors)
    {
        if (!r.empty())
            r += "; ";
        r += e;
    }
    return r;
}

}  // namespace detail

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/error/diagnostics.ipp>
#endif

#endif
