//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_BEAST_TRANSPORT_HPP
#define DIGITAL_DELIVERY_BEAST_TRANSPORT_HPP

/// \file
/// The default transport: HTTP/1.1 with Boost.Beast over TCP and TLS, with a
/// keep-alive connection pool, per-phase timeouts and per-operation
/// cancellation.
///
/// This header is deliberately light: it includes neither Beast nor OpenSSL
/// nor asio::ssl. The implementation lives in impl/http/beast_transport.ipp and is
/// compiled once: by the translation unit that includes this header in
/// header-only mode, or by <digital_delivery/src.hpp> in separate-compilation
/// mode (DIGITAL_DELIVERY_SEPARATE_COMPILATION).

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/http_message.hpp>
#include <digital_delivery/transport.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace digital_delivery {

/// TLS settings of a beast_transport.
struct beast_tls_params
{
    /// Verify the server's certificate chain and its host name (default: true).
    ///
    /// \warning Setting this to false accepts ANY certificate, including one
    /// presented by an attacker who intercepts the connection: the API key and
    /// every request and response are then readable and modifiable by them.
    /// Only for tests against a local server.
    bool verify_peer = true;

    /// A PEM file of trusted CA certificates (default: empty). When both
    /// ca_file and ca_path are empty the system trust store is used
    /// (OpenSSL's default verify paths).
    std::string ca_file{};

    /// A directory of hashed CA certificates (c_rehash layout) (default: empty).
    std::string ca_path{};
};

/// HTTP proxy settings of a beast_transport (docs/proxies.md). https://
/// requests go through a CONNECT tunnel (TLS end to end with the server),
/// http:// requests are sent to the proxy in absolute form. Uploads to
/// presigned storage URLs follow the same rules.
struct beast_proxy_params
{
    /// The proxy for every request: "http://[user:password@]host[:port]"
    /// (scheme optional, port default 1080; user and password
    /// percent-encoded, sent as Basic Proxy-Authorization and never logged).
    /// Default: empty, no proxy (unless from_environment).
    std::string url{};

    /// Hosts reached directly: names, domain suffixes ("example.com" and
    /// ".example.com" both match example.com and its subdomains) and IP
    /// addresses, separated by commas or spaces; "*" for every host. No CIDR
    /// ranges. Default: empty.
    std::string no_proxy{};

    /// When `url` is empty, read https_proxy / HTTPS_PROXY (for https://),
    /// http_proxy / HTTP_PROXY (for http://) and, when `no_proxy` is empty,
    /// no_proxy / NO_PROXY; lowercase first. Read once, by the constructor.
    /// Default: false (the environment is ignored).
    bool from_environment = false;
};

/// Configuration of a beast_transport. Every default is spelled out.
struct beast_transport_params
{
    /// Connections kept open at the same time per (scheme, host, port)
    /// (default: 8). When all are busy, further requests wait in FIFO order.
    std::size_t max_connections_per_host = 8;

    /// Name resolution (default: 10 s) → client_errc::resolve_timeout.
    std::chrono::milliseconds resolve_timeout{10'000};

    /// TCP connect, all resolved addresses together (default: 10 s)
    /// → client_errc::connect_timeout.
    std::chrono::milliseconds connect_timeout{10'000};

    /// TLS handshake (default: 10 s) → client_errc::tls_handshake_timeout.
    std::chrono::milliseconds tls_handshake_timeout{10'000};

    /// Whole request, from the call until the last response byte, when
    /// http_request::timeout is zero (default: default_request_timeout, 30 s)
    /// → client_errc::request_timeout. It includes waiting for a connection,
    /// the phases above (each of which also has its own limit) and, for
    /// uploads, sending the body: set http_request::timeout for big uploads.
    /// When it runs out before the request is written (waiting for a
    /// connection, connecting, TLS handshake), the code is that phase's
    /// (connect_timeout, resolve_timeout, tls_handshake_timeout): nothing
    /// was sent.
    std::chrono::milliseconds request_timeout{default_request_timeout};

    /// A pooled connection that stayed unused this long is closed instead of
    /// being reused (default: 4 s, below the common server defaults: Node.js
    /// and Apache close idle connections after 5 s). A server's
    /// `Keep-Alive: timeout=N` shortens it to N − 1 s. Before any reuse the
    /// connection is checked without blocking: one the server closed, or on
    /// which it sent anything unasked, is discarded. Expiry is checked when
    /// the pool is used (no timer stays pending, so an idle pool never keeps
    /// io_context::run() from returning); destroying the last transport
    /// handle closes everything.
    std::chrono::milliseconds idle_timeout{4'000};

    /// Largest response body accepted (default: 16 MiB: the largest list page
    /// of the API is about 110 KB, so this leaves ample headroom)
    /// → client_errc::response_too_large.
    std::uint64_t response_body_limit = 16u * 1024u * 1024u;

    /// Read buffer reserved per connection and reused across its requests
    /// (default: 64 KiB).
    std::size_t read_buffer_size = 64u * 1024u;

    /// Chunk size used to stream a body_source (default: 64 KiB; one buffer
    /// per upload, so memory stays bounded whatever the body size).
    std::size_t upload_chunk_size = 64u * 1024u;

    /// While a streaming body is sent, the connection's `TCP_NOTSENT_LOWAT`
    /// (where the platform has it; Linux, macOS): the kernel keeps at most this
    /// many not-yet-transmitted bytes queued, so the body goes out from the
    /// writing thread instead of piling up in the send queue and being pushed
    /// out by the receiver's acknowledgements (docs/uploads.md, "Performance").
    /// Restored to the system default when the body is sent. 0 leaves the
    /// socket alone. Default: 16 KiB.
    std::size_t upload_send_lowat = 16u * 1024u;

    /// With `Expect: 100-continue`, how long to wait for the interim response
    /// before sending the body anyway (default: 1 s).
    std::chrono::milliseconds expect_continue_timeout{1'000};

    /// User-Agent sent when the request has none (default: default_user_agent,
    /// "digital_delivery/0.1").
    std::string user_agent = default_user_agent;

    /// TLS settings (default: verify against the system trust store).
    beast_tls_params tls{};

    /// HTTP proxy (default: none; see beast_proxy_params::from_environment).
    /// Failures: client_errc::proxy_unreachable, proxy_auth_required,
    /// proxy_tunnel_refused.
    beast_proxy_params proxy{};
};

namespace detail {
class beast_transport_impl;
}

/// HTTP/1.1 transport over Boost.Beast. A copyable handle: copies share one
/// connection pool.
///
/// \par Thread safety
/// async_send may be called from any thread. All state is serialized on one
/// internal strand, so the executor may be a multi-threaded io_context.
///
/// \par Per-operation cancellation
/// The handler's cancellation slot is honoured for terminal cancellation at
/// every stage (waiting for a connection, resolving, connecting, TLS
/// handshake, writing, reading). The operation completes with
/// boost::asio::error::operation_aborted; a connection interrupted in the
/// middle of a request is closed, never reused.
///
/// \par Errors
/// invalid_url, resolve_timeout, connect_timeout, tls_handshake_timeout
/// (each of those three even when the request's own timeout ran out in that
/// phase), connect_failed, request_timeout, tls_certificate_verify_failed,
/// tls_hostname_mismatch, tls_error, response_too_large, connection_closed,
/// protocol_error (all client_errc); the socket errors of the not-sent list
/// (docs/transport.md), such as boost::asio::error::connection_refused, as
/// they are. Each failure comes with a one-line explanation (host, port,
/// phase, the system's words) in the response's body. HTTP statuses are not
/// errors.
class beast_transport
{
public:
    /// Creates a transport running its I/O on `ex`. Throws
    /// boost::system::system_error if a custom trust store (tls.ca_file,
    /// tls.ca_path) cannot be loaded, or client_errc::invalid_url if the
    /// proxy URL (given or from the environment) is unusable. The system trust store is loaded on the
    /// first HTTPS connection (a failure there → client_errc::tls_error).
    /// \param ex Where the transport's I/O runs.
    /// \param params Timeouts, pool, TLS, proxy.
    DIGITAL_DELIVERY_DECL explicit beast_transport(boost::asio::any_io_executor ex, beast_transport_params params = {});

    /// \return The executor passed to the constructor.
    DIGITAL_DELIVERY_DECL boost::asio::any_io_executor get_executor() const;

    /// Sends `req` and completes with the response (or an error and status 0).
    /// Never completes inline; completes through the handler's associated
    /// executor.
    /// \param req The request.
    /// \param handler Called with the response, or an error and status 0.
    DIGITAL_DELIVERY_DECL void async_send(http_request req, transport_handler handler);

    /// \return The parameters in use.
    DIGITAL_DELIVERY_DECL const beast_transport_params& params() const noexcept;

private:
    std::shared_ptr<detail::beast_transport_impl> impl_;
};

static_assert(transport<beast_transport>);

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/http/beast_transport.ipp>
#endif

#endif
