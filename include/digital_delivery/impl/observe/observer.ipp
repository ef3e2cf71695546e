//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_OBSERVER_IPP
#define DIGITAL_DELIVERY_IMPL_OBSERVER_IPP

#include <digital_delivery/detail/clock.hpp>
#include <digital_delivery/observer.hpp>

#include <boost/asio/error.hpp>

#include <iterator>

namespace digital_delivery {

DIGITAL_DELIVERY_DECL std::optional<rate_limit_snapshot> response_event::rate_limit() const
{
    if (!headers_)
        return std::nullopt;
    return parse_rate_limit_headers(*headers_, detail::clock::system_now());
}

DIGITAL_DELIVERY_DECL std::string redacted_url(std::string_view url)
{
    url = url.substr(0, url.find_first_of("?#"));
    const auto scheme = url.find("://");
    if (scheme == std::string_view::npos)
        return std::string(url);
    const auto start = scheme + 3;
    const auto path = url.find('/', start);
    const std::string_view authority = url.substr(start, path == std::string_view::npos ? std::string_view::npos : path - start);
    std::string out(url.substr(0, start));
    if (const auto at = authority.rfind('@'); at != std::string_view::npos)
        out += authority.substr(at + 1);
    else
        out += authority;
    if (path != std::string_view::npos)
        out += url.substr(path);
    return out;
}

DIGITAL_DELIVERY_DECL std::string_view error_type(const error_code& ec) noexcept
{
    static constexpr std::string_view client_names[] = {
        "invalid_argument", "invalid_path_parameter", "invalid_page", "invalid_per_page", "invalid_byte_size",
        "missing_required_field", "invalid_base_url", "invalid_url", "invalid_json", "missing_field", "wrong_type",
        "invalid_timestamp", "unexpected_status", "resolve_timeout", "connect_timeout", "tls_handshake_timeout",
        "request_timeout", "idle_timeout", "tls_certificate_verify_failed", "tls_hostname_mismatch", "tls_error",
        "response_too_large", "connection_closed", "protocol_error", "deadline_exceeded",
        "rate_limit_wait_exceeds_deadline", "source_unreadable", "source_size_mismatch", "upload_stalled",
        "insecure_upload_url", "proxy_unreachable", "proxy_auth_required", "proxy_tunnel_refused",
        "cassette_no_match", "cassette_unused_exchanges", "cassette_invalid", "rate_limited_too_long",
        "connect_failed"};
    static constexpr std::string_view api_names[] = {
        "invalid_api_key", "not_found", "order_not_found", "asset_not_found", "digital_product_not_found",
        "validation_failed", "external_url_blank", "preorder_launch_date_too_soon", "asset_ids_invalid",
        "order_has_no_email", "asset_not_internal", "no_orders_to_notify", "asset_storage_limit_exceeded",
        "asset_count_limit_exceeded", "rate_limited", "bad_request", "server_error", "storage_signature_mismatch",
        "storage_request_expired", "storage_access_denied", "storage_error"};
    if (!ec)
        return {};
    const int v = ec.value();
    if (ec.category() == get_client_category())
        return v >= 1 && v <= static_cast<int>(std::size(client_names)) ? client_names[v - 1] : std::string_view("_OTHER");
    if (ec.category() == get_api_category())
        return v >= 1 && v <= static_cast<int>(std::size(api_names)) ? api_names[v - 1] : std::string_view("_OTHER");
    if (ec == boost::asio::error::operation_aborted)
        return "cancelled";
    if (ec == boost::asio::error::connection_refused)
        return "connection_refused";
    if (ec == boost::asio::error::connection_reset)
        return "connection_reset";
    if (ec == boost::asio::error::host_not_found)
        return "host_not_found";
    if (ec == boost::asio::error::eof)
        return "eof";
    if (ec == boost::asio::error::timed_out)
        return "timed_out";
    return "_OTHER";
}

DIGITAL_DELIVERY_DECL std::string_view to_string(priority p) noexcept
{
    switch (p)
    {
    case priority::interactive: return "interactive";
    case priority::normal: return "normal";
    case priority::background: return "background";
    }
    return "unknown";
}

DIGITAL_DELIVERY_DECL std::string_view to_string(throttle_event::kind k) noexcept
{
    switch (k)
    {
    case throttle_event::kind::paused: return "paused";
    case throttle_event::kind::resumed: return "resumed";
    case throttle_event::kind::store_unavailable: return "store_unavailable";
    case throttle_event::kind::store_restored: return "store_restored";
    case throttle_event::kind::store_misconfigured: return "store_misconfigured";
    }
    return "unknown";
}

}  // namespace digital_delivery

#endif
