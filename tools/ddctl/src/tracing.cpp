// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
#include "tracing.hpp"

#include <digital_delivery/version.hpp>

#include <cstdlib>
#include <string_view>

namespace ddctl {

namespace {

std::string trim(std::string_view s)
{
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string_view::npos)
        return {};
    return std::string(s.substr(b, s.find_last_not_of(" \t") - b + 1));
}

std::string lower(std::string s)
{
    for (char& c : s)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    return s;
}

}  // namespace

bool otel_pct_decode(const std::string& in, std::string& out)
{
    out.clear();
    for (std::size_t i = 0; i < in.size(); ++i)
    {
        if (in[i] != '%')
        {
            out += in[i];
            continue;
        }
        if (i + 2 >= in.size())
            return false;
        const std::string hex = in.substr(i + 1, 2);
        char* end = nullptr;
        const long v = std::strtol(hex.c_str(), &end, 16);
        if (end != hex.c_str() + 2)
            return false;
        out += static_cast<char>(v);
        i += 2;
    }
    return true;
}

trace_config make_trace_config(const std::string& file, const std::function<const char*(const char*)>& getenv)
{
    auto var = [&](const char* name) {
        const char* v = getenv(name);
        return v ? trim(v) : std::string();
    };
    // The signal's own variable first, then the general one.
    auto either = [&](const char* traces, const char* general) {
        std::string v = var(traces);
        return v.empty() ? var(general) : v;
    };
    trace_config c;
    c.params.file = file;
    c.params.service_name = var("OTEL_SERVICE_NAME");  // "" : the executable's name, ddctl
    if (c.params.service_name.empty())  // the service is ddctl: its version is known
        c.params.service_version = DIGITAL_DELIVERY_VERSION_STRING;
    // A command line tool: spans leave quickly (ddctl flushes before it exits anyway).
    c.params.schedule_delay = std::chrono::milliseconds(1000);
    // A collector that is down costs at most a few seconds at exit.
    c.params.max_attempts = 3;
    c.params.initial_backoff = std::chrono::milliseconds(500);

    const bool disabled = lower(var("OTEL_SDK_DISABLED")) == "true";
    const std::string exporter = lower(var("OTEL_TRACES_EXPORTER"));
    std::string url = var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    if (url.empty())
    {
        url = var("OTEL_EXPORTER_OTLP_ENDPOINT");
        if (!url.empty())
        {
            while (!url.empty() && url.back() == '/')
                url.pop_back();
            url += "/v1/traces";
        }
    }
    if (url.empty() || disabled || exporter == "none")
        return c;
    if (!exporter.empty() && exporter != "otlp")
    {
        c.warnings.push_back("OTEL_TRACES_EXPORTER=" + exporter + ": ddctl exports only otlp; not sending spans");
        return c;
    }
    const std::string protocol = lower(either("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"));
    if (!protocol.empty() && protocol != "http/json" && protocol != "http/protobuf")
        c.warnings.push_back("OTEL_EXPORTER_OTLP_PROTOCOL=" + protocol + ": ddctl sends http/json to " + url);
    c.params.traces_endpoint = url;

    const std::string headers = either("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS");
    std::size_t pos = 0;
    while (pos <= headers.size() && !headers.empty())
    {
        const auto comma = headers.find(',', pos);
        const std::string item = trim(std::string_view(headers).substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
        pos = comma == std::string::npos ? headers.size() + 1 : comma + 1;
        if (item.empty())
            continue;
        const auto eq = item.find('=');
        std::string name = eq == std::string::npos ? std::string() : trim(item.substr(0, eq)), value;
        if (name.empty() || !otel_pct_decode(trim(item.substr(eq + 1)), value))
        {
            // Never the value: it may be a secret.
            c.warnings.push_back("OTEL_EXPORTER_OTLP_HEADERS: an entry that is not name=value is skipped");
            continue;
        }
        c.params.headers.emplace_back(std::move(name), std::move(value));
    }

    const std::string timeout = either("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT");
    if (!timeout.empty())
    {
        char* end = nullptr;
        const long ms = std::strtol(timeout.c_str(), &end, 10);
        if (*end == '\0' && ms > 0)
            c.params.export_timeout = std::chrono::milliseconds(ms);
        else
            c.warnings.push_back("OTEL_EXPORTER_OTLP_TIMEOUT=" + timeout + ": not a number of milliseconds; 10000 used");
    }
    return c;
}

}  // namespace ddctl
