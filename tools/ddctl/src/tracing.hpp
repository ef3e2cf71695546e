// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// ddctl's spans: --trace FILE, and the OpenTelemetry exporter variables
// (docs/cli.md, "Traces").
#ifndef DDCTL_TRACING_HPP
#define DDCTL_TRACING_HPP

#include <digital_delivery/otlp_exporter.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ddctl {

/// What --trace and the environment ask for.
struct trace_config
{
    digital_delivery::otlp_exporter_params params;  ///< the file, the collector's URL, headers, service.name
    std::vector<std::string> warnings;             ///< variables ddctl reads but cannot follow (one line each)
    bool enabled() const { return !params.file.empty() || !params.traces_endpoint.empty(); }
};

/// Reads OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER,
/// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/traces),
/// OTEL_EXPORTER_OTLP_TRACES_HEADERS / _HEADERS, OTEL_EXPORTER_OTLP_TRACES_TIMEOUT
/// / _TIMEOUT, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL / _PROTOCOL and OTEL_SERVICE_NAME
/// through `getenv`; `file` is --trace's value ("" without it).
trace_config make_trace_config(const std::string& file, const std::function<const char*(const char*)>& getenv);

/// Percent-decodes a header value of OTEL_EXPORTER_OTLP_HEADERS; false when malformed.
bool otel_pct_decode(const std::string& in, std::string& out);

}  // namespace ddctl

#endif
