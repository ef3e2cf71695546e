//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_INTERNAL_OBSERVE_HPP
#define DIGITAL_DELIVERY_IMPL_INTERNAL_OBSERVE_HPP

// Builds the observer's events from the request operation's state. Only ever
// called after the caller tested that an observer is installed: the hot path
// without one is a null test per event site (client_impl.ipp, upload.ipp).

#include <digital_delivery/detail/client_impl.hpp>
#include <digital_delivery/observer.hpp>

#include <boost/asio/error.hpp>

#include <chrono>
#include <string>
#include <string_view>

namespace digital_delivery {
namespace detail {

/// The segment of `path` that the first {placeholder} of `tmpl` stands for.
inline std::string_view first_path_id(std::string_view tmpl, std::string_view path) noexcept
{
    const auto open = tmpl.find('{');
    if (open == std::string_view::npos || tmpl.empty())
        return {};
    // Placeholders are whole segments: count the '/' before it.
    std::size_t seg = 0;
    for (std::size_t i = 0; i < open; ++i)
        seg += tmpl[i] == '/';
    std::size_t pos = 0;
    for (std::size_t k = 0; k < seg; ++k)
    {
        pos = path.find('/', pos);
        if (pos == std::string_view::npos)
            return {};
        ++pos;
    }
    const auto end = path.find('/', pos);
    return path.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
}

/// The explanation a transport gives with a failure (docs/transport.md,
/// "Explaining a failure"): the failed response's body, one line, when the
/// transport set no status (a proxy's refusal carries the proxy's status and
/// is described below). Empty when the transport said nothing.
inline std::string_view transport_explanation(error_code ec, const http_response& r) noexcept
{
    if (!ec || r.status != 0 || ec == boost::asio::error::operation_aborted)
        return {};
    std::string_view why = r.body;
    if (const auto nl = why.find_first_of("\r\n"); nl != std::string_view::npos)
        why = why.substr(0, nl);
    return why.substr(0, 1024);
}

/// A transport failure the diagnostics explain: a proxy's refusal
/// (client_errc::proxy_*, from beast_transport), with the proxy's status when
/// it answered, or the transport's own explanation.
inline void describe_transport_failure(diagnostics* d, error_code ec, const http_response& r)
{
    if (!d)
        return;
    if (ec.category() == get_client_category() && is_proxy_failure(static_cast<client_errc>(ec.value())) && r.status)
        d->client_message = "the HTTP proxy answered " + std::to_string(r.status) + ": " + ec.message();
    else if (const auto why = transport_explanation(ec, r); !why.empty())
        d->client_message = std::string(why);
    else if (ec.category() == get_client_category() && is_proxy_failure(static_cast<client_errc>(ec.value())))
        d->client_message = ec.message();
}

inline request_info observed_request(const prepared_request& p, std::string_view host) noexcept
{
    request_info r;
    r.endpoint = p.endpoint.empty() ? std::string_view("raw") : p.endpoint;
    r.method = p.method;
    r.path_template = p.path_template.empty() ? std::string_view(p.path) : p.path_template;
    r.path = p.path;
    r.id = first_path_id(p.path_template, p.path);
    r.server_address = host;
    return r;
}

inline void notify_limiter_wait(observer& o, const request_info& req, int points, priority prio, std::chrono::steady_clock::duration waited, error_code ec)
{
    limiter_wait_event e;
    e.request = req;
    e.points = points;
    e.prio = prio;
    e.waited = waited;
    e.error = ec;
    o.on_limiter_wait(e);
}

inline void notify_request_start(observer& o, const request_info& req, priority prio, unsigned attempt)
{
    request_start_event e;
    e.request = req;
    e.attempt = attempt;
    e.prio = prio;
    o.on_request_start(e);
}

inline void notify_response(
    observer& o,
    const request_info& req,
    unsigned attempt,
    error_code ec,
    const http_response& resp,
    std::chrono::steady_clock::duration d,
    std::size_t request_bytes
)
{
    response_event e;
    e.request = req;
    e.attempt = attempt;
    e.status = ec && resp.status == 0 ? 0 : resp.status;
    e.error = ec;
    e.duration = d;
    e.request_bytes = request_bytes;
    e.response_bytes = resp.body.size();
    e.headers_ = &resp.headers;
    o.on_response(e);
}

inline void notify_retry(observer& o, const request_info& req, unsigned attempt, error_code ec, unsigned status, std::chrono::milliseconds delay)
{
    retry_event e;
    e.request = req;
    e.attempt = attempt;
    e.reason = ec;
    e.status = status;
    e.delay = delay;
    o.on_retry(e);
}

inline void notify_end(
    observer& o,
    const request_info& req,
    error_code ec,
    const diagnostics* diag,
    unsigned attempts,
    std::chrono::steady_clock::duration d
)
{
    static const diagnostics none;
    operation_end_event e;
    e.request = req;
    e.error = ec;
    e.diag = diag ? diag : &none;
    e.attempts = attempts;
    e.duration = d;
    o.on_operation_end(e);
}

}  // namespace detail
}  // namespace digital_delivery

#endif
