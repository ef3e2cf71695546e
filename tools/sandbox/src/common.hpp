// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// digital-delivery-sandbox: small helpers shared by the sans-io core and the
// front end (time, ids, percent-encoding, SHA-256/HMAC, AWS SigV4).
// No Beast, no Asio here.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dd_sandbox {

using time_point = std::chrono::time_point<std::chrono::system_clock, std::chrono::milliseconds>;
using query_params = std::vector<std::pair<std::string, std::string>>;

// --- time --------------------------------------------------------------------
std::int64_t days_from_civil(std::int64_t y, int m, int d);
void civil_from_days(std::int64_t z, std::int64_t& y, int& m, int& d);
// 2026-11-22T10:00:00.000Z
std::string format_iso8601(time_point t);
// YYYY-MM-DD[THH:MM[:SS[.fff]]](Z|+HH:MM|-HH:MM)  (a date alone is midnight UTC)
std::optional<time_point> parse_iso8601(std::string_view s);
// YYYY-MM-DD -> days since 1970-01-01 (strict)
std::optional<std::int64_t> parse_date(std::string_view s);
// 20130524T000000Z
std::string format_amz_date(time_point t);
std::optional<time_point> parse_amz_date(std::string_view s);
std::int64_t unix_seconds(time_point t);

// --- strings -----------------------------------------------------------------
std::string to_lower(std::string_view s);
bool iequals(std::string_view a, std::string_view b);
bool icontains(std::string_view haystack, std::string_view needle);
std::optional<std::int64_t> parse_int64(std::string_view s);

// AWS UriEncode: everything except A-Z a-z 0-9 - _ . ~ is %XX (upper hex);
// '/' kept when keep_slash.
std::string uri_encode(std::string_view s, bool keep_slash = false);
// nullopt on a bad %-escape
std::optional<std::string> percent_decode(std::string_view s, bool plus_as_space);
// Splits a raw query string (without '?') into decoded pairs; nullopt on bad escapes.
std::optional<query_params> parse_query(std::string_view raw, bool plus_as_space);
// XML text: & < > " ' escaped; bytes that are not UTF-8, and the control
// characters XML 1.0 forbids, become U+FFFD (the sandbox never emits invalid UTF-8).
std::string xml_escape(std::string_view s);
// Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
bool valid_utf8(std::string_view s);
// s with every byte that does not start a valid UTF-8 sequence replaced by U+FFFD.
std::string to_valid_utf8(std::string_view s);

// --- crypto (OpenSSL) --------------------------------------------------------
std::string sha256(std::string_view data);                     // raw 32 bytes
std::string hmac_sha256(std::string_view key, std::string_view data); // raw 32 bytes
std::string hex(std::string_view bytes);
bool constant_time_equals(std::string_view a, std::string_view b);
// `bytes` bytes from OpenSSL's CSPRNG, lowercase hex; throws when it fails.
std::string random_hex(std::size_t bytes);

// --- ids ---------------------------------------------------------------------
class id_generator {
public:
    explicit id_generator(std::uint64_t seed) : rng_(seed) {}
    std::string uuid_v4();
    std::string licence_key(); // XXXXX-XXXXX-XXXXX-XXXXX
    std::uint64_t next() { return rng_(); }
    std::mt19937_64& engine() { return rng_; }

private:
    std::mt19937_64 rng_;
};

// --- AWS Signature Version 4, query-string authentication --------------------
struct sigv4_credentials {
    std::string access_key_id;
    std::string secret_access_key;
    std::string region = "us-east-1";
    std::string service = "s3";
};

struct sigv4_parts {
    std::string canonical_request;
    std::string string_to_sign;
    std::string signature; // lowercase hex
};

// Canonical query string of params (decoded pairs), X-Amz-Signature excluded.
std::string sigv4_canonical_query(const query_params& params);

// headers: (lowercase name, value) of the signed headers, any order.
sigv4_parts sigv4_sign(std::string_view method, std::string_view canonical_uri,
                       const query_params& params,
                       const std::vector<std::pair<std::string, std::string>>& headers,
                       std::string_view amz_date, const sigv4_credentials& creds,
                       std::string_view payload_hash = "UNSIGNED-PAYLOAD");

// Builds the full presigned query string (already encoded, without '?').
// headers: signed headers (lowercase name, value), must include "host".
std::string sigv4_presign_query(std::string_view method, std::string_view canonical_uri,
                                const std::vector<std::pair<std::string, std::string>>& headers,
                                time_point now, std::int64_t expires_seconds,
                                const sigv4_credentials& creds);

} // namespace dd_sandbox
