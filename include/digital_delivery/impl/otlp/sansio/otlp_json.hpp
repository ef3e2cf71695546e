//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_TRACE_SANSIO_OTLP_JSON_HPP
#define DIGITAL_DELIVERY_IMPL_TRACE_SANSIO_OTLP_JSON_HPP

// Finished spans as an OTLP/HTTP JSON ExportTraceServiceRequest
// (opentelemetry-proto, collector/trace/v1/trace_service.proto, with the
// OTLP JSON mapping: lowerCamelCase field names, trace and span ids as
// lowercase hex, 64-bit integers as decimal strings, enums as integers,
// fields with their default value left out), and what to do after a POST.

#include <digital_delivery/impl/json/json_text.hpp>
#include <digital_delivery/tracer.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>

namespace digital_delivery {
namespace detail {

/// Appends `bytes` as lowercase hex.
template <std::size_t N>
void append_hex(std::string& out, const std::array<std::uint8_t, N>& bytes)
{
    static constexpr char hex[] = "0123456789abcdef";
    char buf[2 * N];
    for (std::size_t i = 0; i < N; ++i)
    {
        buf[2 * i] = hex[bytes[i] >> 4];
        buf[2 * i + 1] = hex[bytes[i] & 15];
    }
    out.append(buf, sizeof buf);
}

/// Appends `v` in decimal.
inline void append_int(std::string& out, std::int64_t v)
{
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr);
}

template <std::size_t N>
bool all_zero(const std::array<std::uint8_t, N>& bytes) noexcept
{
    for (std::uint8_t b : bytes)
        if (b != 0)
            return false;
    return true;
}

/// Nanoseconds since the Unix epoch as a JSON string ("1700000000000000000");
/// a time before the epoch (never set) is written as "0".
inline void append_unix_nano(std::string& out, std::chrono::system_clock::time_point t)
{
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
    out += '"';
    append_int(out, ns > 0 ? ns : 0);
    out += '"';
}

/// One AnyValue: {"stringValue":...}, {"intValue":"42"}, {"doubleValue":1.5}, {"boolValue":true}.
inline void append_any_value(std::string& out, const attribute_value& v)
{
    if (const auto* s = std::get_if<std::string>(&v))
    {
        out += "{\"stringValue\":";
        append_json_string(out, *s);
    }
    else if (const auto* i = std::get_if<std::int64_t>(&v))
    {
        out += "{\"intValue\":\"";
        append_int(out, *i);
        out += '"';
    }
    else if (const auto* d = std::get_if<double>(&v))
    {
        out += "{\"doubleValue\":";
        if (std::isnan(*d))
            out += "\"NaN\"";
        else if (std::isinf(*d))
            out += *d > 0 ? "\"Infinity\"" : "\"-Infinity\"";
        else
        {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.17g", *d);
            out += buf;
        }
    }
    else
    {
        out += "{\"boolValue\":";
        out += std::get<bool>(v) ? "true" : "false";
    }
    out += '}';
}

/// `"attributes":[{"key":...,"value":{...}},...]`, nothing for none.
inline void append_attributes(std::string& out, const std::vector<attribute>& attrs)
{
    if (attrs.empty())
        return;
    out += ",\"attributes\":[";
    for (std::size_t i = 0; i < attrs.size(); ++i)
    {
        if (i)
            out += ',';
        out += "{\"key\":";
        append_json_string(out, attrs[i].key);
        out += ",\"value\":";
        append_any_value(out, attrs[i].value);
        out += '}';
    }
    out += ']';
}

/// One Span object.
inline void append_span(std::string& out, const span_data& s)
{
    out += "{\"traceId\":\"";
    append_hex(out, s.trace);
    out += "\",\"spanId\":\"";
    append_hex(out, s.id);
    out += '"';
    if (!s.trace_state.empty())
    {
        out += ",\"traceState\":";
        append_json_string(out, s.trace_state);
    }
    if (!all_zero(s.parent))
    {
        out += ",\"parentSpanId\":\"";
        append_hex(out, s.parent);
        out += '"';
    }
    out += ",\"name\":";
    append_json_string(out, s.name);
    out += ",\"kind\":";
    append_int(out, static_cast<int>(s.kind));
    out += ",\"startTimeUnixNano\":";
    append_unix_nano(out, s.start);
    out += ",\"endTimeUnixNano\":";
    append_unix_nano(out, s.end);
    append_attributes(out, s.attributes);
    if (!s.events.empty())
    {
        out += ",\"events\":[";
        for (std::size_t i = 0; i < s.events.size(); ++i)
        {
            if (i)
                out += ',';
            out += "{\"timeUnixNano\":";
            append_unix_nano(out, s.events[i].time);
            out += ",\"name\":";
            append_json_string(out, s.events[i].name);
            append_attributes(out, s.events[i].attributes);
            out += '}';
        }
        out += ']';
    }
    out += ",\"status\":{";
    if (s.status != span_status::unset)
    {
        if (!s.status_message.empty())
        {
            out += "\"message\":";
            append_json_string(out, s.status_message);
            out += ',';
        }
        out += "\"code\":";
        append_int(out, static_cast<int>(s.status));
    }
    out += "}}";
}

/// The fixed part of every request: the resource and the instrumentation scope.
struct otlp_resource
{
    std::string service_name;   ///< Resource attribute service.name.
    std::string scope_name;     ///< InstrumentationScope.name, and the resource's telemetry.sdk.name.
    std::string scope_version;  ///< InstrumentationScope.version, and the resource's telemetry.sdk.version.
    std::string service_version{};  ///< Resource attribute service.version (empty: not sent).
};

/// One ExportTraceServiceRequest holding `spans`, on one line (no newline).
inline std::string encode_otlp_json(std::span<const span_data> spans, const otlp_resource& r)
{
    std::string out;
    out.reserve(256 + spans.size() * 512);
    // The resource: service.name first, then what OpenTelemetry's SDKs set
    // (semantic conventions, "telemetry.sdk.*" and "service.version").
    out += "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\",\"value\":{\"stringValue\":";
    append_json_string(out, r.service_name);
    if (!r.service_version.empty())
    {
        out += "}},{\"key\":\"service.version\",\"value\":{\"stringValue\":";
        append_json_string(out, r.service_version);
    }
    out += "}},{\"key\":\"telemetry.sdk.name\",\"value\":{\"stringValue\":";
    append_json_string(out, r.scope_name);
    out += "}},{\"key\":\"telemetry.sdk.language\",\"value\":{\"stringValue\":\"cpp\"";
    out += "}},{\"key\":\"telemetry.sdk.version\",\"value\":{\"stringValue\":";
    append_json_string(out, r.scope_version);
    out += "}}]},\"scopeSpans\":[{\"scope\":{\"name\":";
    append_json_string(out, r.scope_name);
    out += ",\"version\":";
    append_json_string(out, r.scope_version);
    out += "},\"spans\":[";
    for (std::size_t i = 0; i < spans.size(); ++i)
    {
        if (i)
            out += ',';
        append_span(out, spans[i]);
    }
    out += "]}]}]}";
    return out;
}

/// What the exporter does after one POST of a batch (OTLP/HTTP: 429, 502,
/// 503 and 504 and failures to reach the collector are retryable; any other
/// status but 2xx drops the batch).
enum class otlp_post_outcome
{
    delivered,  ///< 2xx.
    retry,      ///< Send again after a pause, if attempts are left.
    rejected,   ///< Dropped: the collector refused the data (400 and the like).
};

/// The outcome of a POST that completed with `failed` (no response) or `status`.
inline otlp_post_outcome classify_otlp_post(bool failed, unsigned status) noexcept
{
    if (failed || status == 0)
        return otlp_post_outcome::retry;
    if (status >= 200 && status < 300)
        return otlp_post_outcome::delivered;
    if (status == 429 || status == 502 || status == 503 || status == 504)
        return otlp_post_outcome::retry;
    return otlp_post_outcome::rejected;
}

/// The spans a collector's 2xx answer says it rejected: the
/// ExportTraceServiceResponse's partialSuccess.rejectedSpans (an int64, so a
/// decimal string or a number in JSON); 0 when absent or unreadable.
inline std::uint64_t rejected_spans(std::string_view body) noexcept
{
    if (body.find("rejectedSpans") == std::string_view::npos)
        return 0;
    try
    {
        boost::system::error_code ec;
        const boost::json::value v = boost::json::parse(body, ec);
        const auto* top = ec ? nullptr : v.if_object();
        const auto* partial = top ? top->if_contains("partialSuccess") : nullptr;
        const auto* ps = partial ? partial->if_object() : nullptr;
        const auto* r = ps ? ps->if_contains("rejectedSpans") : nullptr;
        if (!r)
            return 0;
        if (const auto* u = r->if_uint64())
            return *u;
        if (const auto* i = r->if_int64())
            return *i > 0 ? static_cast<std::uint64_t>(*i) : 0;
        if (const auto* str = r->if_string())
        {
            std::uint64_t n = 0;
            const auto res = std::from_chars(str->data(), str->data() + str->size(), n);
            return res.ec == std::errc() && res.ptr == str->data() + str->size() ? n : 0;
        }
    }
    catch (...)
    {
    }
    return 0;
}

}  // namespace detail
}  // namespace digital_delivery

#endif
