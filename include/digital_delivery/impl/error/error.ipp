//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_ERROR_IPP
#define DIGITAL_DELIVERY_IMPL_ERROR_IPP

#include <digital_delivery/error.hpp>
#include <digital_delivery/impl/error/server_messages.hpp>

#include <boost/asio/error.hpp>

#include <string>
#include <string_view>

namespace digital_delivery {
namespace detail {

inline const char* client_errc_message(int ev) noexcept
{
    switch (static_cast<client_errc>(ev))
    {
    case client_errc::invalid_argument: return "Invalid request argument";
    case client_errc::invalid_path_parameter: return "Invalid path parameter (empty, '.' or '..')";
    case client_errc::invalid_page: return "page must be at least 1";
    case client_errc::invalid_per_page: return "per_page is outside the endpoint's bounds";
    case client_errc::invalid_byte_size: return "byte_size must be positive and at most 2 GB (2147483648 bytes)";
    case client_errc::missing_required_field: return "A required request field is missing";
    case client_errc::invalid_base_url: return "base_url is not an absolute http(s) URL";
    case client_errc::invalid_url: return "Invalid URL";
    case client_errc::invalid_json: return "The response body is not valid JSON";
    case client_errc::missing_field: return "A required field is missing from the response";
    case client_errc::wrong_type: return "A response field has an unexpected type or value";
    case client_errc::invalid_timestamp: return "A response timestamp is not ISO 8601";
    case client_errc::unexpected_status: return "The server answered with an undocumented HTTP status";
    case client_errc::resolve_timeout: return "Name resolution timed out";
    case client_errc::connect_timeout: return "Connecting timed out";
    case client_errc::tls_handshake_timeout: return "The TLS handshake timed out";
    case client_errc::request_timeout: return "The request timed out";
    case client_errc::idle_timeout: return "The connection was idle for too long";
    case client_errc::tls_certificate_verify_failed: return "The server's TLS certificate could not be verified";
    case client_errc::tls_hostname_mismatch: return "The server's TLS certificate does not match the host name";
    case client_errc::tls_error: return "TLS failure";
    case client_errc::response_too_large: return "The response body exceeds the configured limit";
    case client_errc::connection_closed: return "The server closed the connection before a complete response";
    case client_errc::protocol_error: return "The server's response is not valid HTTP/1.1";
    case client_errc::deadline_exceeded: return "The operation's deadline passed";
    case client_errc::rate_limit_wait_exceeds_deadline:
        return "Waiting for rate-limit points cannot finish before the deadline";
    case client_errc::source_unreadable: return "The upload source cannot be read";
    case client_errc::source_size_mismatch: return "The upload source's size differs from the declared byte size";
    case client_errc::upload_stalled: return "The upload made no progress for the stall timeout";
    case client_errc::insecure_upload_url:
        return "The upload URL is plain http:// under an https:// base URL (see upload_options::allow_insecure_upload_url)";
    case client_errc::proxy_unreachable: return "The HTTP proxy could not be reached (refused, not resolved or timed out)";
    case client_errc::proxy_auth_required: return "The HTTP proxy requires authentication or refused the credentials (407)";
    case client_errc::proxy_tunnel_refused: return "The HTTP proxy refused to open a tunnel (CONNECT was not answered with 2xx)";
    case client_errc::cassette_no_match: return "No exchange recorded in the cassette matches the request";
    case client_errc::cassette_unused_exchanges: return "Exchanges recorded in the cassette were never replayed";
    case client_errc::cassette_invalid: return "The cassette cannot be read or written, or is not a cassette this version reads";
    case client_errc::rate_limited_too_long:
        return "The server's rate limit refused the request for longer than retry_params::max_rate_limited_wait";
    case client_errc::connect_failed: return "The connection could not be opened (nothing was sent)";
    case client_errc::checkpoint_lease_lost:
        return "The feed checkpoint's lease was lost (another watcher may hold it): the feed stopped";
    case client_errc::checkpoint_unavailable: return "The feed checkpoint's store could not be reached or did not answer in time";
    case client_errc::checkpoint_invalid: return "The feed checkpoint's store holds a record that is not valid";
    }
    return "Unknown digital_delivery client error";
}

inline const char* api_errc_message(int ev) noexcept
{
    if (const auto known = server_message_of(static_cast<api_errc>(ev)); !known.empty())
        return known.data();
    switch (static_cast<api_errc>(ev))
    {
    case api_errc::not_found: return "Not found";
    case api_errc::validation_failed: return "Validation failed";
    case api_errc::asset_storage_limit_exceeded: return "The plan's asset storage limit is exceeded";
    case api_errc::asset_count_limit_exceeded: return "The plan's asset count limit is exceeded";
    case api_errc::rate_limited: return "Rate limit exceeded";
    case api_errc::bad_request: return "Bad request";
    case api_errc::server_error: return "Server error";
    case api_errc::storage_signature_mismatch: return "Storage refused the upload: SignatureDoesNotMatch";
    case api_errc::storage_request_expired: return "Storage refused the request: the presigned URL has expired";
    case api_errc::storage_access_denied: return "Storage refused the request: access denied";
    case api_errc::storage_error: return "Storage error";
    default: break;  // the known server messages, above
    }
    return "Unknown digital_delivery API error";
}

class client_category_impl final : public boost::system::error_category
{
public:
    // Fixed ids keep categories unique even if the library is linked twice.
    constexpr client_category_impl() noexcept : error_category(0x6464636c69656e74ULL) {}
    const char* name() const noexcept override { return "digital_delivery.client"; }
    std::string message(int ev) const override { return client_errc_message(ev); }
    const char* message(int ev, char*, std::size_t) const noexcept override { return client_errc_message(ev); }
    boost::system::error_condition default_error_condition(int ev) const noexcept override;
};

class api_category_impl final : public boost::system::error_category
{
public:
    constexpr api_category_impl() noexcept : error_category(0x6464617069657272ULL) {}
    const char* name() const noexcept override { return "digital_delivery.api"; }
    std::string message(int ev) const override { return api_errc_message(ev); }
    const char* message(int ev, char*, std::size_t) const noexcept override { return api_errc_message(ev); }
    boost::system::error_condition default_error_condition(int ev) const noexcept override;
};

inline const char* condition_message(int ev) noexcept
{
    switch (static_cast<condition>(ev))
    {
    case condition::invalid_input: return "invalid input";
    case condition::not_found: return "not found";
    case condition::validation: return "validation failed";
    case condition::quota_exceeded: return "quota exceeded";
    case condition::unauthorized: return "unauthorized";
    case condition::rate_limited: return "rate limited";
    case condition::timeout: return "timeout";
    case condition::decode: return "decode failure";
    case condition::transport: return "transport failure";
    case condition::storage: return "storage failure";
    case condition::cancelled: return "cancelled";
    }
    return "unknown condition";
}

inline bool client_in_condition(client_errc e, condition c) noexcept
{
    switch (c)
    {
    case condition::invalid_input:
        return (e >= client_errc::invalid_argument && e <= client_errc::invalid_url) ||
               e == client_errc::insecure_upload_url;
    case condition::decode:
        return e >= client_errc::invalid_json && e <= client_errc::invalid_timestamp;
    case condition::timeout:
        return (e >= client_errc::resolve_timeout && e <= client_errc::idle_timeout) ||
               e == client_errc::deadline_exceeded || e == client_errc::rate_limit_wait_exceeds_deadline ||
               e == client_errc::upload_stalled || e == client_errc::rate_limited_too_long;
    case condition::transport:
        return (e >= client_errc::resolve_timeout && e <= client_errc::protocol_error) ||
               e == client_errc::unexpected_status || is_proxy_failure(e) || e == client_errc::connect_failed;
    case condition::rate_limited:
        return e == client_errc::rate_limit_wait_exceeds_deadline || e == client_errc::rate_limited_too_long;
    default: return false;
    }
}

inline bool api_in_condition(api_errc e, condition c) noexcept
{
    switch (c)
    {
    case condition::not_found:
        return e == api_errc::not_found || e == api_errc::order_not_found || e == api_errc::asset_not_found ||
               e == api_errc::digital_product_not_found;
    case condition::validation: return e >= api_errc::validation_failed && e <= api_errc::asset_count_limit_exceeded;
    case condition::quota_exceeded:
        return e == api_errc::asset_storage_limit_exceeded || e == api_errc::asset_count_limit_exceeded;
    case condition::unauthorized: return e == api_errc::invalid_api_key;
    case condition::rate_limited: return e == api_errc::rate_limited;
    case condition::storage: return e >= api_errc::storage_signature_mismatch && e <= api_errc::storage_error;
    default: return false;
    }
}

// asio's TLS categories ("asio.ssl", "asio.ssl.stream"), known by name so that
// this file does not include OpenSSL's headers.
inline bool is_tls_category(const boost::system::error_category& c) noexcept
{
    const std::string_view name = c.name();
    return name == "asio.ssl" || name.rfind("asio.ssl.", 0) == 0;
}

class condition_category_impl final : public boost::system::error_category
{
public:
    constexpr condition_category_impl() noexcept : error_category(0x6464636f6e646974ULL) {}
    const char* name() const noexcept override { return "digital_delivery.condition"; }
    std::string message(int ev) const override { return condition_message(ev); }
    bool equivalent(const boost::system::error_code& code, int cond) const noexcept override
    {
        const auto c = static_cast<condition>(cond);
        if (code.category() == get_client_category())
            return client_in_condition(static_cast<client_errc>(code.value()), c);
        if (code.category() == get_api_category())
            return api_in_condition(static_cast<api_errc>(code.value()), c);
        const bool aborted = code == boost::asio::error::operation_aborted;
        if (c == condition::cancelled)
            return aborted;
        if (c == condition::timeout)
            return code == boost::asio::error::timed_out;
        if (c == condition::transport)
            return (code.category() == boost::asio::error::get_system_category() && !aborted) ||
                   code.category() == boost::asio::error::get_netdb_category() ||
                   code.category() == boost::asio::error::get_addrinfo_category() ||
                   code.category() == boost::asio::error::get_misc_category() ||
                   is_tls_category(code.category());
        return false;
    }
};

inline boost::system::error_condition client_category_impl::default_error_condition(int ev) const noexcept
{
    return {ev, *this};
}
inline boost::system::error_condition api_category_impl::default_error_condition(int ev) const noexcept
{
    return {ev, *this};
}

}  // namespace detail

DIGITAL_DELIVERY_DECL const boost::system::error_category& get_client_category() noexcept
{
    static constexpr detail::client_category_impl c;
    return c;
}

DIGITAL_DELIVERY_DECL const boost::system::error_category& get_api_category() noexcept
{
    static constexpr detail::api_category_impl c;
    return c;
}

DIGITAL_DELIVERY_DECL const boost::system::error_category& get_condition_category() noexcept
{
    static constexpr detail::condition_category_impl c;
    return c;
}

DIGITAL_DELIVERY_DECL bool is_request_not_sent(const error_code& ec) noexcept
{
    namespace ae = boost::asio::error;
    if (ec.category() == get_client_category())
    {
        const auto e = static_cast<client_errc>(ec.value());
        return (e >= client_errc::invalid_argument && e <= client_errc::invalid_url) ||
               e == client_errc::insecure_upload_url || e == client_errc::resolve_timeout || e == client_errc::connect_timeout ||
               e == client_errc::tls_handshake_timeout || e == client_errc::tls_certificate_verify_failed ||
               e == client_errc::tls_hostname_mismatch || e == client_errc::rate_limit_wait_exceeds_deadline ||
               e == client_errc::rate_limited_too_long || e == client_errc::connect_failed ||
               detail::is_proxy_failure(e) || e == client_errc::cassette_no_match;
    }
    if (ec.category() == get_api_category())
        return static_cast<api_errc>(ec.value()) == api_errc::rate_limited;  // refused, not processed
    return ec == ae::connection_refused || ec == ae::host_not_found || ec == ae::host_not_found_try_again ||
           ec == ae::network_unreachable || ec == ae::host_unreachable || ec == ae::no_data ||
           ec == boost::system::errc::address_not_available;
}

DIGITAL_DELIVERY_DECL bool is_transient(const error_code& ec) noexcept
{
    namespace ae = boost::asio::error;
    if (ec.category() == get_client_category())
    {
        const auto e = static_cast<client_errc>(ec.value());
        return (e >= client_errc::resolve_timeout && e <= client_errc::idle_timeout) ||
               e == client_errc::connection_closed || e == client_errc::proxy_unreachable ||
               e == client_errc::connect_failed;
    }
    if (ec.category() == get_api_category())
    {
        const auto e = static_cast<api_errc>(ec.value());
        return e == api_errc::rate_limited || e == api_errc::server_error;
    }
    return ec == ae::connection_refused || ec == ae::connection_reset || ec == ae::connection_aborted ||
           ec == ae::broken_pipe || ec == ae::eof || ec == ae::timed_out || ec == ae::host_not_found_try_again ||
           ec == ae::network_unreachable || ec == ae::host_unreachable || ec == ae::network_reset ||
           ec == ae::network_down;
}

}  // namespace digital_delivery

#endif
