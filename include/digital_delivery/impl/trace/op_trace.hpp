//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_TRACE_OP_TRACE_HPP
#define DIGITAL_DELIVERY_IMPL_TRACE_OP_TRACE_HPP

// One operation's trace, without I/O: its parent, its INTERNAL span, the
// CLIENT span of the attempt in flight, the INTERNAL span of a wait (rate
// limiter, backoff), the trace headers of each attempt. The drivers
// (impl/engine/client_impl.ipp, impl/upload/upload.ipp) create one only when
// a tracer, a context provider or a parent is there, and pass the times
// (detail::clock::system_now(), which moves with a test's virtual clock).
// Span names and attributes follow the OpenTelemetry HTTP client conventions
// (docs/observability.md, "Traces").

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/http_message.hpp>
#include <digital_delivery/trace_context.hpp>
#include <digital_delivery/tracer.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace digital_delivery {
namespace detail {

/// A random trace id (never all zero): a per-thread generator seeded from
/// std::random_device.
DIGITAL_DELIVERY_DECL trace_id new_trace_id() noexcept;
/// A random span id (never all zero).
DIGITAL_DELIVERY_DECL span_id new_span_id() noexcept;

/// An absolute URL for `url.full`: without user info, and the value of every
/// query parameter that may carry a secret (signatures, credentials, tokens,
/// keys: is_secret_query_key) replaced by "REDACTED".
DIGITAL_DELIVERY_DECL std::string redacted_url_full(std::string_view url);

/// Whether a query parameter's name says its value is secret (ASCII case
/// ignored): sig, signature, token, key, code, password, secret,
/// x-amz-signature, x-amz-credential, x-amz-security-token, x-goog-signature,
/// x-goog-credential, or any name containing signature, credential, token,
/// secret, password or apikey / api_key / accesskey.
DIGITAL_DELIVERY_DECL bool is_secret_query_key(std::string_view key) noexcept;

/// Whether a context can be a parent: its trace and span ids are not all zero.
DIGITAL_DELIVERY_DECL bool is_valid_context(const trace_context& c) noexcept;

/// Sets `traceparent` (version 00, the context's ids and flags) and
/// `tracestate` (normalize_tracestate of the context's; removed when empty).
DIGITAL_DELIVERY_DECL void set_trace_headers(http_headers& h, const trace_context& c);

/// `server.address` (the host name, an IPv6 address without its brackets)
/// and `server.port` (the URL's, else the scheme's) of an absolute URL.
struct server_endpoint
{
    std::string address;
    std::int64_t port = 0;
};
DIGITAL_DELIVERY_DECL server_endpoint server_of(std::string_view url);

/// One operation's spans and trace headers.
class op_trace
{
public:
    using time_point = std::chrono::system_clock::time_point;

    /// The trace of an operation named `name` starting at `now`: null when
    /// there is nothing to do (no tracer and no parent). `parent` may be null
    /// (a new trace, or the provider's parent: trace_params::context).
    DIGITAL_DELIVERY_DECL static std::unique_ptr<op_trace> start(
        tracer* sink,
        const trace_params& params,
        const trace_context* parent,
        std::string_view name,
        time_point now
    );

    /// Whether spans are recorded (a tracer, and a sampled parent or none, or
    /// trace_params::follow_unsampled_parent off).
    bool recording() const noexcept { return sink_ != nullptr; }

    /// The context an operation nested in this one joins: this operation's
    /// span when recording, else the parent forwarded.
    DIGITAL_DELIVERY_DECL trace_context nested() const;

    /// Sets `traceparent` (the attempt's span when recording, else the
    /// parent) and `tracestate` (or removes a tracestate when there is none),
    /// replacing the caller's fields of those names.
    DIGITAL_DELIVERY_DECL void inject(http_headers& h) const;

    /// An attempt starts: a CLIENT span "{method} {url_template}" ("{method}"
    /// when the template is empty) with the HTTP attributes; `attempt`
    /// counts from 1 (http.request.resend_count from the second).
    DIGITAL_DELIVERY_DECL void attempt_start(
        http_method method,
        std::string_view url_template,
        std::string_view url,
        std::string_view server_address,
        std::int64_t server_port,
        unsigned attempt,
        time_point now
    );

    /// Adds an attribute to the attempt's span (when one is open).
    DIGITAL_DELIVERY_DECL void attempt_attribute(std::string_view key, attribute_value v);

    /// Adds an event to the attempt's span (when one is open); at most
    /// max_events are kept, the later ones counted in the span's
    /// "digital_delivery.dropped_events" attribute.
    DIGITAL_DELIVERY_DECL void attempt_event(span_event e);

    /// The attempt ended: `status` the response's status (0: none), `ec` the
    /// attempt's error (a transport failure, or the status as an error).
    /// operation_aborted (the caller's cancellation) leaves the status unset.
    DIGITAL_DELIVERY_DECL void attempt_end(unsigned status, error_code ec, time_point now);

    /// A wait starts: an INTERNAL span `name` ("rate_limit_wait", "backoff")
    /// with `reason` (digital_delivery.wait.reason), `points` (>0: the points
    /// asked, digital_delivery.rate_limit.points) and the planned delay
    /// (digital_delivery.wait.planned_ms, when >= 0).
    DIGITAL_DELIVERY_DECL void wait_start(
        std::string_view name,
        std::string_view reason,
        int points,
        std::chrono::milliseconds planned,
        time_point now
    );

    /// Adds an attribute to the wait's span (when one is open).
    DIGITAL_DELIVERY_DECL void wait_attribute(std::string_view key, attribute_value v);

    /// The wait ended (`ec`: how the limiter or the timer completed); its
    /// duration goes into digital_delivery.wait.ms. A wait that ended
    /// without an error in less than `dropped_below` is dropped (a limiter's
    /// queue that granted at once).
    DIGITAL_DELIVERY_DECL void wait_end(
        error_code ec,
        time_point now,
        std::chrono::milliseconds dropped_below = std::chrono::milliseconds(0)
    );

    /// The operation ended with `ec`: an open attempt or wait ends too, then
    /// the operation's span.
    DIGITAL_DELIVERY_DECL void end(error_code ec, time_point now);

    static constexpr std::size_t max_events = 128;

private:
    DIGITAL_DELIVERY_DECL span_data child(std::string name, span_kind kind, time_point now) const;
    // `describe`: set the status description (not for an attempt answered 4xx/5xx).
    DIGITAL_DELIVERY_DECL void emit(span_data& s, error_code ec, time_point now, bool describe = true);

    tracer* sink_ = nullptr;  // null: not recording, the parent only forwarded
    trace_context parent_;   // trace id, parent span, flags, tracestate
    bool has_parent_ = false;
    span_data op_;
    std::optional<span_data> attempt_, wait_;
    std::int64_t dropped_events_ = 0;
};

}  // namespace detail
}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/trace/op_trace.ipp>
#endif

#endif
