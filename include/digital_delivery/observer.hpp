//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_OBSERVER_HPP
#define DIGITAL_DELIVERY_OBSERVER_HPP

/// \file
/// Observability hooks: one `observer` object in client_params receives an
/// event at every step of every request (docs/observability.md). Ready-made
/// observers: <digital_delivery/json_logger.hpp>, <digital_delivery/metrics.hpp>.

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/diagnostics.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/http_message.hpp>
#include <digital_delivery/rate_limit.hpp>
#include <digital_delivery/upload_options.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace digital_delivery {

/// What every request event says about the request. Every view is valid for
/// the duration of the call only; copy what you keep. Secrets never appear:
/// no header is passed (so neither the API key nor a storage signature), and
/// a presigned storage URL is reduced to its host and path (no query, no user info).
struct request_info
{
    /// The endpoint's name ("get_order", "list_assets", ...; the path
    /// template for a descriptor without `name`); "raw" for raw requests;
    /// "upload_body" for the PUT of an upload's body to the storage, and
    /// "upload" for the upload operation as a whole.
    std::string_view endpoint{};
    http_method method = http_method::get;  ///< The request's HTTP method.
    /// "/orders/{id}/downloads"; the storage path for "upload_body".
    std::string_view path_template{};
    /// The path as sent, ids percent-encoded, without query string.
    std::string_view path{};
    /// The first path parameter's value as sent (percent-encoded), or "".
    std::string_view id{};
    /// host[:port] of the server (the API or the storage), never user info.
    std::string_view server_address{};
};

/// An attempt is about to be sent (after the rate limiter granted it).
struct request_start_event
{
    request_info request{};  ///< The request.
    unsigned attempt = 1;  ///< 1 for the first attempt, 2 for the first retry...
    priority prio = priority::normal;  ///< The request's priority (request_options::prio).
};

/// An attempt ended: with a status, or with a transport error (status 0).
struct response_event
{
    request_info request{};  ///< The request.
    unsigned attempt = 1;    ///< 1 for the first attempt, 2 for the first retry...
    unsigned status = 0;  ///< 0 when no response was received.
    /// The transport's error, or the status mapped to an error (api_errc...),
    /// empty for 2xx.
    error_code error{};
    std::chrono::steady_clock::duration duration{};  ///< Send to response (this attempt).
    std::size_t request_bytes = 0;                   ///< Body bytes sent (an upload's size).
    std::size_t response_bytes = 0;                  ///< Body bytes received.

    /// X-RateLimit-* of this response, parsed on demand (nullopt when absent).
    /// \return The response's rate-limit headers, or nullopt.
    DIGITAL_DELIVERY_DECL std::optional<rate_limit_snapshot> rate_limit() const;

    /// The response's headers (not part of the API: use rate_limit()).
    const http_headers* headers_ = nullptr;
};

/// A failed attempt will be retried after `delay`.
struct retry_event
{
    request_info request{};  ///< The request.
    unsigned attempt = 1;  ///< The attempt that failed.
    error_code reason{};     ///< Its error (e.g. api_errc::rate_limited, a transport error).
    unsigned status = 0;   ///< Its status, 0 for none.
    std::chrono::milliseconds delay{0};  ///< The wait before the next attempt.
};

/// The client-side rate limiter granted (or refused) points.
struct limiter_wait_event
{
    request_info request{};  ///< The request.
    int points = 1;          ///< The points asked for (1 for a GET, 2 for a write).
    priority prio = priority::normal;  ///< The request's priority.
    std::chrono::steady_clock::duration waited{};  ///< How long the request waited for its points.
    error_code error{};  ///< rate_limit_wait_exceeds_deadline, operation_aborted, or empty.
};

/// Progress of an upload's body (the same reports as upload_options::on_progress).
struct upload_progress_event
{
    std::string_view asset_id{};  ///< The asset whose body is uploaded.
    std::string_view server_address{};  ///< The storage's host[:port].
    std::string_view path{};            ///< The storage path, no query string.
    upload_progress progress{};  ///< Bytes sent so far and the total.
};

/// An upload asks for a new presigned URL.
struct upload_refresh_event
{
    std::string_view asset_id{};  ///< The asset whose body is uploaded.
    /// "expiring": the URL expires within url_refresh_margin;
    /// "rejected": the storage refused the old one (expired or signature).
    std::string_view reason{};
};

/// An operation ended (after its retries). For a request function this is the
/// end of the HTTP exchange: a body that then fails to decode is not reported.
struct operation_end_event
{
    request_info request{};  ///< The request.
    error_code error{};      ///< The operation's result: empty on success.
    /// Never null: the caller's diagnostics when one was passed; otherwise,
    /// for a failure, the client's own (the server's words, the client's
    /// message), and for a success an empty object. No secrets: see diagnostics.
    const diagnostics* diag = nullptr;
    unsigned attempts = 0;  ///< How many attempts were made.
    std::chrono::steady_clock::duration duration{};  ///< From the call to the end, waits included.
};

/// Receives the events of a client (client_params::observer). Override what
/// you need; every default does nothing.
///
/// \par Thread safety
/// Calls come from whatever thread runs the client's operations (and, for
/// on_throttle, the thread that noticed a 429 on a bucket shared with other
/// clients): an observer used by a multi-threaded client must synchronise itself.
/// Calls are never made while the library holds a lock.
///
/// \par Cost
/// With no observer installed a request pays one null test per event site:
/// no allocation, no virtual call, no clock read.
///
/// \par Exceptions
/// An observer must not throw.
class observer
{
public:
    /// Destroys the observer.
    virtual ~observer() = default;
    /// An attempt is about to be sent.
    virtual void on_request_start(const request_start_event&) {}
    /// An attempt ended, with a status or a transport error.
    virtual void on_response(const response_event&) {}
    /// A failed attempt will be retried.
    virtual void on_retry(const retry_event&) {}
    /// The rate limiter granted or refused a request's points.
    virtual void on_limiter_wait(const limiter_wait_event&) {}
    /// A 429 paused, or a pause ended, the rate-limit bucket this client shares.
    virtual void on_throttle(const throttle_event&) {}
    /// An upload's body progressed.
    virtual void on_upload_progress(const upload_progress_event&) {}
    /// An upload asks for a new presigned URL.
    virtual void on_upload_refresh(const upload_refresh_event&) {}
    /// An operation ended, after its retries.
    virtual void on_operation_end(const operation_end_event&) {}
};

/// One observer slot, several observers: forwards every event to each, in
/// order (`.observer = std::make_shared<dd::fan_out_observer>(
/// std::vector<std::shared_ptr<dd::observer>>{logger, metrics})`). Null
/// entries are skipped. The list is fixed at construction.
class fan_out_observer final : public observer
{
public:
    /// \param to The observers, called in this order; null entries are dropped.
    explicit fan_out_observer(std::vector<std::shared_ptr<observer>> to) : to_(std::move(to))
    {
        std::erase(to_, nullptr);
    }
    void on_request_start(const request_start_event& e) override { each(&observer::on_request_start, e); }
    void on_response(const response_event& e) override { each(&observer::on_response, e); }
    void on_retry(const retry_event& e) override { each(&observer::on_retry, e); }
    void on_limiter_wait(const limiter_wait_event& e) override { each(&observer::on_limiter_wait, e); }
    void on_throttle(const throttle_event& e) override { each(&observer::on_throttle, e); }
    void on_upload_progress(const upload_progress_event& e) override { each(&observer::on_upload_progress, e); }
    void on_upload_refresh(const upload_refresh_event& e) override { each(&observer::on_upload_refresh, e); }
    void on_operation_end(const operation_end_event& e) override { each(&observer::on_operation_end, e); }

private:
    template <class Event>
    void each(void (observer::*fn)(const Event&), const Event& e)
    {
        for (const auto& o : to_)
            ((*o).*fn)(e);
    }
    std::vector<std::shared_ptr<observer>> to_;
};

/// A URL fit for logs: the query string, fragment and user info removed
/// ("https://u:p@h/p?X-Amz-Signature=..." -> "https://h/p").
/// \param url An absolute URL.
/// \return The URL without query string, fragment and user info.
DIGITAL_DELIVERY_DECL std::string redacted_url(std::string_view url);

/// A low-cardinality name for an error, fit for a metric label or
/// OpenTelemetry's `error.type`: the enumerator's name for the library's own
/// codes ("order_not_found", "connect_timeout", "rate_limited"), "cancelled"
/// for operation_aborted, "connection_refused", "connection_reset",
/// "host_not_found", "eof" and "timed_out" for those system errors, else
/// "_OTHER"; "" for no error.
/// \param ec The error.
/// \return Its name, static storage.
DIGITAL_DELIVERY_DECL std::string_view error_type(const error_code& ec) noexcept;

/// A priority's name.
/// \param p The priority.
/// \return "interactive", "normal" or "background" (static storage).
DIGITAL_DELIVERY_DECL std::string_view to_string(priority p) noexcept;
/// A throttle event's kind's name.
/// \param k The kind.
/// \return "paused" for kind::paused, "resumed" for every other kind (static storage).
DIGITAL_DELIVERY_DECL std::string_view to_string(throttle_event::kind k) noexcept;

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/observe/observer.ipp>
#endif

#endif
