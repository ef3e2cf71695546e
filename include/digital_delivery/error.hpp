//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_ERROR_HPP
#define DIGITAL_DELIVERY_ERROR_HPP

/// \file
/// The error codes of every operation: `client_errc` (found by the client),
/// `api_errc` (answered by the API or its storage), the `condition`s that group
/// them, and the predicates `is_transient` and `is_request_not_sent`.

#include <digital_delivery/detail/config.hpp>

#include <boost/system/error_code.hpp>

#include <type_traits>

namespace digital_delivery {

/// The error code of every operation: Boost.System's.
using error_code = boost::system::error_code;

/// Failures detected by the client itself: bad caller input, transport
/// problems, timeouts and responses it cannot decode. Category name
/// "digital_delivery.client".
enum class client_errc : int
{
    // --- caller input (nothing was sent) ---
    invalid_argument = 1,        ///< A request parameter the API forbids (see diagnostics).
    invalid_path_parameter,      ///< An id that is empty, "." or "..".
    invalid_page,                ///< page < 1.
    invalid_per_page,            ///< per_page < 1 or above the endpoint's maximum.
    invalid_byte_size,           ///< byte_size <= 0 or above 2 GB (2147483648 bytes).
    missing_required_field,      ///< A field the endpoint requires was not set.
    invalid_base_url,            ///< client_params::base_url is not an absolute http(s) URL.
    invalid_url,                 ///< Any other URL the client was asked to use (e.g. an upload URL).

    // --- decoding what the server sent ---
    invalid_json,                ///< The body is not JSON.
    missing_field,               ///< A required field is absent (diagnostics name its path).
    wrong_type,                  ///< A field has an unexpected JSON type or out-of-range value.
    invalid_timestamp,           ///< A timestamp that is not ISO 8601.
    unexpected_status,           ///< A status the API does not document (for example a proxy's 502).

    // --- transport ---
    resolve_timeout,             ///< Name resolution did not finish in time.
    connect_timeout,             ///< TCP connect did not finish in time.
    tls_handshake_timeout,       ///< The TLS handshake did not finish in time.
    request_timeout,             ///< The whole request did not finish in time.
    idle_timeout,                ///< No bytes moved for the idle (stall) timeout.
    tls_certificate_verify_failed, ///< The peer's certificate chain is not trusted.
    tls_hostname_mismatch,       ///< The certificate does not name the host.
    tls_error,                   ///< Any other TLS failure.
    response_too_large,          ///< The response body exceeded the configured limit.
    connection_closed,           ///< The server closed the connection before a full response.
    protocol_error,              ///< The peer did not speak valid HTTP/1.1.

    // --- scheduling and deadlines ---
    deadline_exceeded,           ///< The operation's deadline passed.
    rate_limit_wait_exceeds_deadline, ///< Waiting for rate-limit points could not end before the deadline.

    // --- uploads ---
    source_unreadable,           ///< The upload source cannot be opened or read.
    source_size_mismatch,        ///< The source ended before/after its declared size.
    upload_stalled,              ///< No upload progress for the stall timeout.
    insecure_upload_url,         ///< A plain http:// upload URL under an https:// base URL (nothing was sent to it).

    // --- HTTP proxies (beast_transport_params::proxy; nothing reached the server) ---
    proxy_unreachable,           ///< The proxy refused the connection, or could not be resolved or reached.
    proxy_auth_required,         ///< The proxy answered 407: credentials missing or refused.
    proxy_tunnel_refused,        ///< The proxy answered CONNECT with another non-2xx status, or not with HTTP.

    // --- cassettes (testing::replay_transport, testing::recording_transport) ---
    cassette_no_match,           ///< No recorded exchange matches the request (diagnostics name it and the closest one).
    cassette_unused_exchanges,   ///< A strict replay ended with recorded exchanges never used (diagnostics list them).
    cassette_invalid,            ///< The cassette file cannot be read or written, or is not a cassette this version reads.

    // --- scheduling (continued) ---
    /// A request without a deadline was refused with 429 for longer than
    /// retry_params::max_rate_limited_wait (diagnostics say how long and
    /// what the server said).
    rate_limited_too_long,

    // --- transport (continued) ---
    /// The TCP connection could not be opened, for a reason without a code
    /// of its own (EACCES, EPERM from a firewall rule, ...): nothing was
    /// sent. The transport's explanation (diagnostics::client_message) names
    /// the system's error.
    connect_failed,

    // --- shared feed checkpoints (redis_feed_checkpoint) ---
    /// The checkpoint's lease was lost (not renewed in time, or another
    /// watcher holds it): the order feed stops; nothing acknowledged is lost.
    checkpoint_lease_lost,
    /// The checkpoint's store could not be reached or did not answer in time
    /// (redis_feed_checkpoint::last_error() says why).
    checkpoint_unavailable,
    /// The checkpoint's store holds a record out of range or not in the
    /// checkpoint's format.
    checkpoint_invalid,
};

/// Failures the Digital Delivery API (or its storage) reports. Category name
/// "digital_delivery.api". The diagnostics carry the server's own message.
enum class api_errc : int
{
    invalid_api_key = 1,              ///< 401 "Invalid API key" (or any 401).
    not_found,                        ///< 404 that is none of the specific ones below.
    order_not_found,                  ///< 404 "Order not found".
    asset_not_found,                  ///< 404 "Asset not found".
    digital_product_not_found,        ///< 404 "Digital product not found".
    validation_failed,                ///< 422 whose message is none of the specific ones below.
    external_url_blank,               ///< 422 "External url can't be blank".
    preorder_launch_date_too_soon,    ///< 422 "Preorder launch date must be in the future".
    asset_ids_invalid,                ///< 422 "asset_ids must be a non-empty array".
    order_has_no_email,               ///< 422 "Order has no customer email. Provide an email parameter."
    asset_not_internal,               ///< 422 "Only internal assets can have their file replaced".
    no_orders_to_notify,              ///< 422 "This digital product has no orders to notify".
    asset_storage_limit_exceeded,     ///< 422 with code asset_storage_limit_exceeded.
    asset_count_limit_exceeded,       ///< 422 with code asset_count_limit_exceeded.
    rate_limited,                     ///< 429; diagnostics carry Retry-After.
    bad_request,                      ///< 400 (malformed body; not documented by the API).
    server_error,                     ///< 5xx.
    storage_signature_mismatch,       ///< Storage 403 SignatureDoesNotMatch.
    storage_request_expired,          ///< Storage 403 AccessDenied "Request has expired".
    storage_access_denied,            ///< Any other storage 403.
    storage_error,                    ///< Any other storage failure (4xx/5xx with an S3 XML body).
};

/// Coarse groups that any of our codes (and some Asio codes) compare equal
/// to: `if (ec == digital_delivery::condition::not_found)`.
enum class condition : int
{
    invalid_input = 1,   ///< Caller input rejected before sending.
    not_found,           ///< Any 404.
    validation,          ///< Any 422 (including quota failures).
    quota_exceeded,      ///< The plan's storage or asset-count quota.
    unauthorized,        ///< 401.
    rate_limited,        ///< 429 or a rate-limit wait that could not finish in time.
    timeout,             ///< Any timeout or deadline.
    decode,              ///< The response could not be decoded.
    transport,           ///< Network, TLS or HTTP protocol failure (not a cancellation).
    storage,             ///< The object storage refused an upload or download.
    cancelled,           ///< The operation was cancelled (asio::error::operation_aborted).
};

/// \return The category of client_errc, "digital_delivery.client".
DIGITAL_DELIVERY_DECL const boost::system::error_category& get_client_category() noexcept;
/// \return The category of api_errc.
DIGITAL_DELIVERY_DECL const boost::system::error_category& get_api_category() noexcept;
/// \return The category of condition.
DIGITAL_DELIVERY_DECL const boost::system::error_category& get_condition_category() noexcept;

/// \param e A client_errc. \return It as an error_code (implicit conversions use this).
inline error_code make_error_code(client_errc e) noexcept { return {static_cast<int>(e), get_client_category()}; }
/// \param e An api_errc. \return It as an error_code (implicit conversions use this).
inline error_code make_error_code(api_errc e) noexcept { return {static_cast<int>(e), get_api_category()}; }
/// \param e A condition. \return It as an error_condition (comparisons with an error_code use this).
inline boost::system::error_condition make_error_condition(condition e) noexcept
{
    return {static_cast<int>(e), get_condition_category()};
}

namespace detail {
/// client_errc::proxy_unreachable, proxy_auth_required or proxy_tunnel_refused.
constexpr bool is_proxy_failure(client_errc e) noexcept
{
    return e >= client_errc::proxy_unreachable && e <= client_errc::proxy_tunnel_refused;
}
/// One of the cassette codes (testing/cassette.hpp).
constexpr bool is_cassette_failure(client_errc e) noexcept
{
    return e >= client_errc::cassette_no_match && e <= client_errc::cassette_invalid;
}
}  // namespace detail

/// True when retrying the same request later may succeed (429, 5xx, the
/// transport's timeouts, connection failures; not deadline_exceeded nor
/// upload_stalled). Whether a retry is *safe* also depends on the
/// endpoint's idempotency; see docs/rate-limiting.md.
/// \param ec An error code.
/// \return True exactly for: client_errc::resolve_timeout, connect_timeout,
/// tls_handshake_timeout, request_timeout, idle_timeout, connection_closed,
/// proxy_unreachable, connect_failed; api_errc::rate_limited, server_error;
/// the socket errors
/// connection_refused, connection_reset, connection_aborted, broken_pipe,
/// eof, timed_out, host_not_found_try_again, network_unreachable,
/// host_unreachable, network_reset, network_down.
DIGITAL_DELIVERY_DECL bool is_transient(const error_code& ec) noexcept;

/// True when the server certainly did not process the request: it never
/// reached the server (caller input, resolve, connect, TLS handshake, proxy,
/// a rate-limit wait), or the API refused it unprocessed (a 429). Such a
/// request may be resent even when it is not idempotent. The retry policy
/// and a transport rely on the same list; it is stated once, with the phase
/// each code belongs to, in docs/transport.md, "The not-sent codes":
/// client_errc::invalid_argument through invalid_url, insecure_upload_url,
/// resolve_timeout, connect_timeout, tls_handshake_timeout,
/// tls_certificate_verify_failed, tls_hostname_mismatch, connect_failed,
/// proxy_unreachable, proxy_auth_required, proxy_tunnel_refused,
/// rate_limit_wait_exceeds_deadline, rate_limited_too_long,
/// cassette_no_match; api_errc::rate_limited; the socket errors
/// connection_refused, network_unreachable, host_unreachable,
/// address_not_available (EADDRNOTAVAIL), host_not_found,
/// host_not_found_try_again, no_data. Nothing else.
/// \param ec An error code.
/// \return Whether `ec` is one of those codes.
DIGITAL_DELIVERY_DECL bool is_request_not_sent(const error_code& ec) noexcept;

}  // namespace digital_delivery

namespace boost {
namespace system {
template <>
struct is_error_code_enum<::digital_delivery::client_errc> : std::true_type
{
};
template <>
struct is_error_code_enum<::digital_delivery::api_errc> : std::true_type
{
};
template <>
struct is_error_condition_enum<::digital_delivery::condition> : std::true_type
{
};
}  // namespace system
}  // namespace boost

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/error/error.ipp>
#endif

#endif
