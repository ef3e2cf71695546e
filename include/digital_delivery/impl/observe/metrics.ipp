//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_METRICS_IPP
#define DIGITAL_DELIVERY_IMPL_METRICS_IPP

#include <digital_delivery/metrics.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace digital_delivery {
namespace detail {

inline duration_histogram make_histogram(const std::vector<double>& bounds)
{
    duration_histogram h;
    h.bounds = bounds;
    h.counts.assign(bounds.size() + 1, 0);
    return h;
}

inline void observe(duration_histogram& h, std::chrono::steady_clock::duration d)
{
    const double s = std::chrono::duration<double>(d).count();
    std::size_t i = 0;
    while (i < h.bounds.size() && s > h.bounds[i])
        ++i;
    ++h.counts[i];
    ++h.count;
    h.sum += s;
}

// Prometheus text format helpers.
inline void prom_escape(std::string& out, std::string_view v)
{
    for (char c : v)
    {
        if (c == '\\')
            out += "\\\\";
        else if (c == '"')
            out += "\\\"";
        else if (c == '\n')
            out += "\\n";
        else
            out += c;
    }
}

// The shortest text that reads back as `v` ("0.005", not "0.0050000000000000001").
inline std::string prom_double(double v)
{
    char buf[40];
    for (int precision = 6; precision <= 17; ++precision)
    {
        std::snprintf(buf, sizeof buf, "%.*g", precision, v);
        if (std::strtod(buf, nullptr) == v)
            break;
    }
    return buf;
}

struct prom_labels
{
    std::string text;  // without braces
    prom_labels& add(std::string_view k, std::string_view v)
    {
        if (!text.empty())
            text += ',';
        text += k;
        text += "=\"";
        prom_escape(text, v);
        text += '"';
        return *this;
    }
};

inline void prom_header(std::string& out, std::string_view name, std::string_view type, std::string_view help)
{
    out += "# HELP ";
    out += name;
    out += ' ';
    out += help;
    out += "\n# TYPE ";
    out += name;
    out += ' ';
    out += type;
    out += '\n';
}

inline void prom_sample(std::string& out, std::string_view name, const std::string& labels, std::string_view value)
{
    out += name;
    if (!labels.empty())
    {
        out += '{';
        out += labels;
        out += '}';
    }
    out += ' ';
    out += value;
    out += '\n';
}

inline void prom_histogram(std::string& out, std::string_view name, const std::string& labels, const duration_histogram& h)
{
    std::uint64_t cum = 0;
    const std::string bucket = std::string(name) + "_bucket";
    for (std::size_t i = 0; i < h.counts.size(); ++i)
    {
        cum += h.counts[i];
        std::string l = labels;
        if (!l.empty())
            l += ',';
        l += "le=\"";
        l += i < h.bounds.size() ? prom_double(h.bounds[i]) : std::string("+Inf");
        l += '"';
        prom_sample(out, bucket, l, std::to_string(cum));
    }
    prom_sample(out, std::string(name) + "_sum", labels, prom_double(h.sum));
    prom_sample(out, std::string(name) + "_count", labels, std::to_string(h.count));
}

}  // namespace detail

DIGITAL_DELIVERY_DECL std::vector<double> metrics_observer::default_buckets()
{
    return {0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10};
}

DIGITAL_DELIVERY_DECL metrics_observer::metrics_observer() : metrics_observer(default_buckets()) {}

DIGITAL_DELIVERY_DECL metrics_observer::metrics_observer(std::vector<double> bounds) : bounds_(std::move(bounds))
{
    std::sort(bounds_.begin(), bounds_.end());
    bounds_.erase(std::unique(bounds_.begin(), bounds_.end()), bounds_.end());
    data_.limiter_wait = detail::make_histogram(bounds_);
}

DIGITAL_DELIVERY_DECL metrics_snapshot metrics_observer::snapshot() const
{
    std::lock_guard<std::mutex> lk(mtx_);
    return data_;
}

DIGITAL_DELIVERY_DECL void metrics_observer::on_response(const response_event& e)
{
    const std::string_view method = to_string(e.request.method);
    const std::string_view et = error_type(e.error);
    std::lock_guard<std::mutex> lk(mtx_);
    auto it = std::find_if(data_.requests.begin(), data_.requests.end(), [&](const metrics_snapshot::request_series& s) {
        return s.status == e.status && s.endpoint == e.request.endpoint && s.error_type == et && s.method == method &&
               s.server_address == e.request.server_address;
    });
    if (it == data_.requests.end())
    {
        metrics_snapshot::request_series s;
        s.endpoint = std::string(e.request.endpoint);
        s.method = std::string(method);
        s.server_address = std::string(e.request.server_address);
        s.status = e.status;
        s.error_type = std::string(et);
        s.duration = detail::make_histogram(bounds_);
        data_.requests.push_back(std::move(s));
        it = data_.requests.end() - 1;
    }
    detail::observe(it->duration, e.duration);
    if (e.status == 429)
        ++data_.rate_limited_responses;
    if (e.request.endpoint == "upload_body" && e.status >= 200 && e.status < 300)
        data_.upload_bytes += e.request_bytes;
}

DIGITAL_DELIVERY_DECL void metrics_observer::on_retry(const retry_event& e)
{
    const std::string_view reason = error_type(e.reason);
    std::lock_guard<std::mutex> lk(mtx_);
    auto it = std::find_if(data_.retries.begin(), data_.retries.end(), [&](const metrics_snapshot::retry_series& s) {
        return s.endpoint == e.request.endpoint && s.reason == reason;
    });
    if (it == data_.retries.end())
    {
        data_.retries.push_back({std::string(e.request.endpoint), std::string(reason), 0});
        it = data_.retries.end() - 1;
    }
    ++it->count;
}

DIGITAL_DELIVERY_DECL void metrics_observer::on_limiter_wait(const limiter_wait_event& e)
{
    std::lock_guard<std::mutex> lk(mtx_);
    detail::observe(data_.limiter_wait, e.waited);
    if (data_.store_fallback && !e.error && e.points > 0)
        data_.fallback_points += static_cast<std::uint64_t>(e.points);
}

DIGITAL_DELIVERY_DECL void metrics_observer::on_spans_dropped(std::uint64_t n)
{
    std::lock_guard<std::mutex> lk(mtx_);
    data_.spans_dropped += n;
}

DIGITAL_DELIVERY_DECL void metrics_observer::on_throttle(const throttle_event& e)
{
    using kind = throttle_event::kind;
    std::lock_guard<std::mutex> lk(mtx_);
    switch (e.what)
    {
    case kind::paused:
        ++data_.throttle_pauses;
        break;
    case kind::resumed:
        break;
    case kind::store_unavailable:
    case kind::store_misconfigured:
        data_.store_fallback = true;
        break;
    case kind::store_restored:
        data_.store_fallback = false;
        break;
    }
}

DIGITAL_DELIVERY_DECL void metrics_observer::on_operation_end(const operation_end_event& e)
{
    const std::string_view method = to_string(e.request.method);
    const std::string_view et = error_type(e.error);
    std::lock_guard<std::mutex> lk(mtx_);
    auto it = std::find_if(data_.operations.begin(), data_.operations.end(), [&](const metrics_snapshot::operation_series& s) {
        return s.endpoint == e.request.endpoint && s.error_type == et && s.method == method;
    });
    if (it == data_.operations.end())
    {
        metrics_snapshot::operation_series s;
        s.endpoint = std::string(e.request.endpoint);
        s.method = std::string(method);
        s.error_type = std::string(et);
        s.duration = detail::make_histogram(bounds_);
        data_.operations.push_back(std::move(s));
        it = data_.operations.end() - 1;
    }
    detail::observe(it->duration, e.duration);
}

DIGITAL_DELIVERY_DECL std::string metrics_observer::to_prometheus(const metrics_snapshot& s)
{
    using detail::prom_labels;
    std::string out;
    out.reserve(4096);

    constexpr std::string_view req = "http_client_request_duration_seconds";
    detail::prom_header(out, req, "histogram", "Duration of HTTP client requests (one per attempt).");
    for (const auto& r : s.requests)
    {
        prom_labels l;
        l.add("http_request_method", r.method);
        if (r.status)
            l.add("http_response_status_code", std::to_string(r.status));
        l.add("server_address", r.server_address).add("endpoint", r.endpoint);
        if (!r.error_type.empty())
            l.add("error_type", r.error_type);
        detail::prom_histogram(out, req, l.text, r.duration);
    }

    constexpr std::string_view op = "dd_client_operation_duration_seconds";
    detail::prom_header(out, op, "histogram", "Duration of client operations, retries and rate-limit waits included.");
    for (const auto& o : s.operations)
    {
        prom_labels l;
        l.add("endpoint", o.endpoint).add("http_request_method", o.method);
        if (!o.error_type.empty())
            l.add("error_type", o.error_type);
        detail::prom_histogram(out, op, l.text, o.duration);
    }

    constexpr std::string_view rt = "dd_client_retries_total";
    detail::prom_header(out, rt, "counter", "Retries scheduled, by endpoint and the failed attempt's error.");
    for (const auto& r : s.retries)
        detail::prom_sample(out, rt, prom_labels().add("endpoint", r.endpoint).add("reason", r.reason).text, std::to_string(r.count));

    detail::prom_header(out, "dd_client_rate_limited_responses_total", "counter", "Responses with status 429.");
    detail::prom_sample(out, "dd_client_rate_limited_responses_total", {}, std::to_string(s.rate_limited_responses));
    detail::prom_header(out, "dd_client_rate_limit_pauses_total", "counter", "Pauses of the rate-limit bucket after a 429.");
    detail::prom_sample(out, "dd_client_rate_limit_pauses_total", {}, std::to_string(s.throttle_pauses));
    detail::prom_header(out, "dd_client_rate_limiter_wait_seconds", "histogram", "Time requests waited for rate-limit points.");
    detail::prom_histogram(out, "dd_client_rate_limiter_wait_seconds", {}, s.limiter_wait);
    detail::prom_header(out, "dd_client_upload_bytes_total", "counter", "Body bytes of uploads the storage accepted.");
    detail::prom_sample(out, "dd_client_upload_bytes_total", {}, std::to_string(s.upload_bytes));
    detail::prom_header(out, "dd_client_rate_limit_store_fallback", "gauge",
                        "1 while the fallback bucket serves in place of the shared rate-limit store, else 0.");
    detail::prom_sample(out, "dd_client_rate_limit_store_fallback", {}, s.store_fallback ? "1" : "0");
    detail::prom_header(out, "dd_client_rate_limit_fallback_points_total", "counter",
                        "Rate-limit points the fallback bucket granted while the shared store did not serve.");
    detail::prom_sample(out, "dd_client_rate_limit_fallback_points_total", {}, std::to_string(s.fallback_points));
    detail::prom_header(out, "dd_client_spans_dropped_total", "counter",
                        "Finished spans an otlp_exporter dropped (queue full, collector down, slow or refusing).");
    detail::prom_sample(out, "dd_client_spans_dropped_total", {}, std::to_string(s.spans_dropped));
    return out;
}

}  // namespace digital_delivery

#endif
