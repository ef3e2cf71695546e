//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_TRACER_HPP
#define DIGITAL_DELIVERY_TRACER_HPP

/// \file
/// Traces: the finished spans the client hands to a `tracer`
/// (client_params::tracer), in the shape of OpenTelemetry's span data model,
/// with no dependency on opentelemetry-cpp (docs/observability.md, "Traces").

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace digital_delivery {

/// A trace id: 16 bytes, never all zero in a valid trace.
using trace_id = std::array<std::uint8_t, 16>;
/// A span id: 8 bytes, never all zero in a valid span.
using span_id = std::array<std::uint8_t, 8>;

/// A span's kind (the values are OTLP's SpanKind).
enum class span_kind : std::uint8_t
{
    internal = 1,  ///< An operation, a rate-limiter wait, a pause before a retry.
    client = 3,    ///< One HTTP attempt.
};

/// A span's status code (the values are OTLP's Status.StatusCode).
enum class span_status : std::uint8_t
{
    unset = 0,  ///< Success, or a caller's cancellation.
    ok = 1,     ///< Never set by the library.
    error = 2,  ///< An HTTP 4xx/5xx or a failure.
};

/// An attribute's value: a string, an integer, a floating-point number or a boolean.
using attribute_value = std::variant<std::string, std::int64_t, double, bool>;

/// One attribute of a span or of a span event (OpenTelemetry's names:
/// "http.request.method", "server.address", ...).
struct attribute
{
    std::string key{};        ///< The attribute's name.
    attribute_value value{};  ///< Its value.
};

/// A timestamped event inside a span (an upload's progress).
struct span_event
{
    std::string name{};                           ///< The event's name.
    std::chrono::system_clock::time_point time{};  ///< When it happened.
    std::vector<attribute> attributes{};          ///< Its attributes.
};

/// A finished span: everything an exporter needs. Secrets never appear in it
/// (no header values, URLs with signatures and user info redacted).
struct span_data
{
    trace_id trace{};          ///< The trace it belongs to.
    span_id id{};              ///< Its own id.
    span_id parent{};          ///< Its parent's id; all zero for a root span.
    std::uint8_t flags = 1;    ///< W3C trace flags (bit 0: sampled).
    std::string trace_state{}; ///< W3C tracestate, as propagated.
    std::string name{};        ///< "GET /orders/{id}", "get_order", ...
    span_kind kind = span_kind::internal;  ///< Client for an HTTP attempt.
    std::chrono::system_clock::time_point start{};  ///< When it started.
    std::chrono::system_clock::time_point end{};    ///< When it ended.
    std::vector<attribute> attributes{};  ///< Its attributes.
    std::vector<span_event> events{};     ///< Its events, in order.
    span_status status = span_status::unset;  ///< Its status code.
    std::string status_message{};  ///< With span_status::error: what happened ("" otherwise).
};

/// Receives the client's finished spans (client_params::tracer). Ready-made:
/// otlp_exporter (<digital_delivery/otlp_exporter.hpp>).
///
/// \par Thread safety
/// on_end is called from whatever thread ends the span: a tracer used by a
/// multi-threaded client must synchronise itself. Never called while the
/// library holds a lock.
///
/// \par Cost
/// on_end is on the request's path: it must not block (queue, then export
/// elsewhere) and must not throw.
class tracer
{
public:
    /// Destroys the tracer.
    virtual ~tracer() = default;
    /// A span ended.
    /// \param span The finished span, the tracer's to keep.
    virtual void on_end(span_data&& span) noexcept = 0;
};

}  // namespace digital_delivery

#endif
