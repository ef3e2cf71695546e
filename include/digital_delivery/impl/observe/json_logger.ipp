//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_JSON_LOGGER_IPP
#define DIGITAL_DELIVERY_IMPL_JSON_LOGGER_IPP

#include <digital_delivery/detail/clock.hpp>
#include <digital_delivery/impl/json/json_text.hpp>
#include <digital_delivery/json_logger.hpp>
#include <digital_delivery/timestamp.hpp>

#include <boost/asio/error.hpp>

#include <chrono>
#include <cstdio>
#include <ostream>

namespace digital_delivery {
namespace detail {

// Builds one JSON object, key by key.
class json_line
{
public:
    json_line(log_level l, std::string_view event)
    {
        s_.reserve(256);
        s_ += "{\"time\":\"";
        s_ += format_timestamp(std::chrono::time_point_cast<std::chrono::microseconds>(detail::clock::system_now()));
        s_ += "\",\"level\":\"";
        s_ += to_string(l);
        s_ += "\",\"event\":\"";
        s_ += event;
        s_ += '"';
    }

    json_line& str(std::string_view key, std::string_view v)
    {
        key_(key);
        s_ += '"';
        escape(v);
        s_ += '"';
        return *this;
    }
    json_line& str_if(std::string_view key, std::string_view v) { return v.empty() ? *this : str(key, v); }
    json_line& num(std::string_view key, std::uint64_t v)
    {
        key_(key);
        s_ += std::to_string(v);
        return *this;
    }
    json_line& inum(std::string_view key, std::int64_t v)
    {
        key_(key);
        s_ += std::to_string(v);
        return *this;
    }
    json_line& ms(std::string_view key, std::chrono::steady_clock::duration d)
    {
        key_(key);
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.3f", std::chrono::duration<double, std::milli>(d).count());
        s_ += buf;
        return *this;
    }
    json_line& request(const request_info& r)
    {
        str("endpoint", r.endpoint);
        str("http.request.method", to_string(r.method));
        str("url.template", r.path_template);
        str_if("url.path", r.path);
        str_if("id", r.id);
        return str("server.address", r.server_address);
    }
    json_line& error(error_code ec)
    {
        if (!ec)
            return *this;
        str("error.type", error_type(ec));
        return str("error.message", ec.message());
    }
    std::string done()
    {
        s_ += '}';
        return std::move(s_);
    }

private:
    void key_(std::string_view k)
    {
        s_ += ",\"";
        s_ += k;
        s_ += "\":";
    }
    void escape(std::string_view v) { append_json_escaped(s_, v); }
    std::string s_;
};

}  // namespace detail

DIGITAL_DELIVERY_DECL std::string_view to_string(log_level l) noexcept
{
    switch (l)
    {
    case log_level::debug: return "debug";
    case log_level::info: return "info";
    case log_level::warning: return "warning";
    case log_level::error: return "error";
    case log_level::off: return "off";
    }
    return "unknown";
}

DIGITAL_DELIVERY_DECL json_logger::json_logger(std::ostream& os, log_level min_level) : os_(&os), min_(min_level) {}

DIGITAL_DELIVERY_DECL json_logger::json_logger(sink_type sink, log_level min_level) : sink_(std::move(sink)), min_(min_level) {}

DIGITAL_DELIVERY_DECL void json_logger::write(log_level l, const std::string& line)
{
    if (sink_)
    {
        sink_(l, line);
        return;
    }
    if (os_)
    {
        std::lock_guard<std::mutex> lk(mtx_);
        (*os_ << line << '\n').flush();
    }
}

DIGITAL_DELIVERY_DECL void json_logger::on_request_start(const request_start_event& e)
{
    constexpr auto l = log_level::debug;
    if (!enabled(l))
        return;
    write(l, detail::json_line(l, "request.start").request(e.request).num("attempt", e.attempt).str("priority", to_string(e.prio)).done());
}

DIGITAL_DELIVERY_DECL void json_logger::on_response(const response_event& e)
{
    const auto l = !e.error ? log_level::debug : log_level::warning;
    if (!enabled(l))
        return;
    detail::json_line j(l, "response");
    j.request(e.request).num("attempt", e.attempt);
    if (e.status)
        j.num("http.response.status_code", e.status);
    j.ms("duration_ms", e.duration).num("http.request.body.size", e.request_bytes).num("http.response.body.size", e.response_bytes);
    if (auto rl = e.rate_limit())
    {
        if (rl->limit)
            j.inum("ratelimit.limit", *rl->limit);
        if (rl->remaining)
            j.inum("ratelimit.remaining", *rl->remaining);
    }
    write(l, j.error(e.error).done());
}

DIGITAL_DELIVERY_DECL void json_logger::on_retry(const retry_event& e)
{
    constexpr auto l = log_level::warning;
    if (!enabled(l))
        return;
    detail::json_line j(l, "retry");
    j.request(e.request).num("attempt", e.attempt);
    if (e.status)
        j.num("http.response.status_code", e.status);
    write(l, j.num("delay_ms", static_cast<std::uint64_t>(e.delay.count())).error(e.reason).done());
}

DIGITAL_DELIVERY_DECL void json_logger::on_limiter_wait(const limiter_wait_event& e)
{
    const auto l = e.error ? log_level::warning : log_level::debug;
    if (!enabled(l))
        return;
    write(l, detail::json_line(l, "ratelimit.wait")
                 .request(e.request)
                 .inum("points", e.points)
                 .str("priority", to_string(e.prio))
                 .ms("waited_ms", e.waited)
                 .error(e.error)
                 .done());
}

DIGITAL_DELIVERY_DECL void json_logger::on_throttle(const throttle_event& e)
{
    using kind = throttle_event::kind;
    // A pause and a shared store that stopped serving are warnings, their
    // ends news; a store refusing the configuration is an error to fix.
    log_level l = log_level::info;
    std::string_view event;
    switch (e.what)
    {
    case kind::paused: l = log_level::warning; event = "ratelimit.paused"; break;
    case kind::resumed: event = "ratelimit.resumed"; break;
    case kind::store_unavailable: l = log_level::warning; event = "ratelimit.store_unavailable"; break;
    case kind::store_restored: event = "ratelimit.store_restored"; break;
    case kind::store_misconfigured: l = log_level::error; event = "ratelimit.store_misconfigured"; break;
    }
    if (!enabled(l))
        return;
    detail::json_line j(l, event);
    if (e.what == kind::paused)
        j.num("retry_after_ms", static_cast<std::uint64_t>(e.retry_after.count()));
    if (e.what == kind::store_unavailable || e.what == kind::store_misconfigured)
        j.str("message", e.message);
    write(l, j.num("waiting", e.waiting).done());
}

DIGITAL_DELIVERY_DECL void json_logger::on_upload_progress(const upload_progress_event& e)
{
    constexpr auto l = log_level::debug;
    if (!enabled(l))
        return;
    write(l, detail::json_line(l, "upload.progress")
                 .str("asset_id", e.asset_id)
                 .str("server.address", e.server_address)
                 .str("url.path", e.path)
                 .num("bytes_sent", e.progress.bytes_sent)
                 .num("total", e.progress.total)
                 .num("attempt", e.progress.attempt)
                 .done());
}

DIGITAL_DELIVERY_DECL void json_logger::on_upload_refresh(const upload_refresh_event& e)
{
    constexpr auto l = log_level::info;
    if (!enabled(l))
        return;
    write(l, detail::json_line(l, "upload.refresh").str("asset_id", e.asset_id).str("reason", e.reason).done());
}

DIGITAL_DELIVERY_DECL void json_logger::on_operation_end(const operation_end_event& e)
{
    const auto l = !e.error ? log_level::info
                   : e.error == boost::asio::error::operation_aborted ? log_level::warning
                                                                       : log_level::error;
    if (!enabled(l))
        return;
    detail::json_line j(l, "operation.end");
    j.request(e.request).num("attempts", e.attempts).ms("duration_ms", e.duration);
    if (e.diag && e.diag->http_status)
        j.num("http.response.status_code", static_cast<std::uint64_t>(e.diag->http_status));
    j.error(e.error);
    if (e.error && e.diag)
        j.str("diagnostics", e.diag->to_string());
    write(l, j.done());
}

}  // namespace digital_delivery

#endif
