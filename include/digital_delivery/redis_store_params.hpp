//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_REDIS_STORE_PARAMS_HPP
#define DIGITAL_DELIVERY_REDIS_STORE_PARAMS_HPP

/// \file
/// The settings of redis_rate_limit_store (<digital_delivery/redis_rate_limit_store.hpp>).

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace digital_delivery {

/// TLS to Redis (redis_store_params::tls): off by default. On, the server's
/// certificate is verified against the CA (a file, a directory, else the
/// system's store) and the server name; a client certificate and key give
/// mutual TLS.
struct redis_tls_params
{
    /// Speak TLS (e.g. a `rediss://` URL, a server started with `--tls-port`,
    /// AWS ElastiCache with in-transit encryption, Azure Cache for Redis).
    /// Default: false.
    bool enabled = false;

    /// PEM file of the CA certificates to trust. Empty, and `ca_dir` empty
    /// too: the system's default store. Default: empty.
    std::string ca_file{};

    /// Directory of CA certificates in OpenSSL's hashed layout (c_rehash).
    /// Default: empty.
    std::string ca_dir{};

    /// PEM file of the client certificate (its chain may follow), for a
    /// server that requires mutual TLS; with `key_file`. Default: empty.
    std::string cert_file{};

    /// PEM file of the client certificate's private key, not encrypted: an
    /// encrypted key is refused as a configuration error (no passphrase is
    /// ever asked for). Default: empty.
    std::string key_file{};

    /// The name the server's certificate must carry, also sent as SNI.
    /// Empty: the host. An IP address is sent without SNI and checked
    /// against the certificate's IP address entries. Default: empty.
    std::string server_name{};

    /// Verify the server's certificate (chain, dates, name). Turning it off
    /// leaves the connection open to anyone in the path. Default: true.
    bool verify = true;

    /// Time limit of the TLS handshake, within the exchange's
    /// redis_store_params::command_timeout: a server that does not answer
    /// the handshake (e.g. a plain-text port, which waits for a newline)
    /// fails with "TLS handshake: no answer within N ms; is this a
    /// plain-text port?" before the command timeout. Zero: half of
    /// command_timeout. Longer than command_timeout: command_timeout.
    /// Default: zero.
    std::chrono::milliseconds handshake_timeout{0};
};

/// A host and a port (a sentinel's).
struct redis_endpoint
{
    std::string host{};       ///< Host name or IP address.
    std::uint16_t port = 26379;  ///< TCP port. Default: 26379 (Sentinel's).
};

/// Redis Sentinel (redis_store_params::sentinel): the store asks the
/// sentinels where the master named `master_name` is, instead of using
/// redis_store_params::host and port, and asks again after a connection
/// error, a `-READONLY` reply or a master that is no longer one.
struct redis_sentinel_params
{
    /// The sentinels, asked in turn (from the last one that answered) until
    /// one names the master. Empty: no Sentinel. Default: empty.
    std::vector<redis_endpoint> sentinels{};

    /// The master's name in the sentinels' configuration (`sentinel monitor
    /// NAME ...`). One no sentinel knows is a configuration error.
    std::string master_name{};

    /// ACL user name of the sentinels (not the master's: that is
    /// redis_store_params::username); empty: AUTH with the password alone.
    /// Default: empty.
    std::string username{};

    /// Password of the sentinels (not the master's: that is
    /// redis_store_params::password); empty: no AUTH. A secret: never written
    /// to logs, errors or events. Default: empty.
    std::string password{};

    /// TLS to the sentinels. Default: off.
    redis_tls_params tls{};
};

/// Where the Redis store lives and how to reach it (redis_rate_limit_store).
/// The store's key is `key_prefix` + 32 hex digits of a SHA-256 of the
/// normalised base URL and the API key: the key cannot be read back from it.
struct redis_store_params
{
    /// Host name or IP address of the Redis server. Default: "127.0.0.1".
    std::string host = "127.0.0.1";

    /// TCP port. Default: 6379.
    std::uint16_t port = 6379;

    /// ACL user name sent with AUTH (Redis 6 and later); empty: AUTH with the
    /// password alone (the `default` user). Default: empty.
    std::string username{};

    /// Password sent with AUTH; empty: no AUTH. A secret: never written to
    /// logs, errors or throttle events. Default: empty.
    std::string password{};

    /// Database number selected with SELECT (0 is not selected explicitly).
    /// Default: 0.
    int database = 0;

    /// Prepended to every key the store writes (one hash per base URL and
    /// API key). Default: "digital_delivery:rl:".
    std::string key_prefix = "digital_delivery:rl:";

    /// Longest time one exchange with Redis may take, connecting (with AUTH,
    /// SELECT and loading the script) included; past it, the store counts as
    /// unavailable and the fallback bucket serves. Default: 500 ms.
    std::chrono::milliseconds command_timeout{500};

    /// TLS to the server. Default: off (plain TCP).
    redis_tls_params tls{};

    /// Sentinel: the master is found through these sentinels (then `host`
    /// and `port` are not used). Default: none.
    redis_sentinel_params sentinel{};
};

}  // namespace digital_delivery

#endif
