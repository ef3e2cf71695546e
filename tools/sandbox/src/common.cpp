// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
#include "common.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace dd_sandbox {

// --- time --------------------------------------------------------------------
std::int64_t days_from_civil(std::int64_t y, int m, int d)
{
    y -= m <= 2 ? 1 : 0;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const std::int64_t yoe = y - era * 400;
    const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

void civil_from_days(std::int64_t z, std::int64_t& y, int& m, int& d)
{
    z += 719468;
    const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const std::int64_t doe = z - era * 146097;
    const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    y = yoe + era * 400;
    const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const std::int64_t mp = (5 * doy + 2) / 153;
    d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
    m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
    y += m <= 2 ? 1 : 0;
}

namespace {

std::int64_t floor_div(std::int64_t a, std::int64_t b)
{
    std::int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        --q;
    return q;
}

struct civil_time {
    std::int64_t y;
    int mo, d, h, mi, s, ms;
};

civil_time split(time_point t)
{
    const std::int64_t ms_total = t.time_since_epoch().count();
    const std::int64_t days = floor_div(ms_total, 86400000);
    std::int64_t rem = ms_total - days * 86400000;
    civil_time c{};
    civil_from_days(days, c.y, c.mo, c.d);
    c.h = static_cast<int>(rem / 3600000);
    rem %= 3600000;
    c.mi = static_cast<int>(rem / 60000);
    rem %= 60000;
    c.s = static_cast<int>(rem / 1000);
    c.ms = static_cast<int>(rem % 1000);
    return c;
}

bool read_digits(std::string_view s, std::size_t pos, std::size_t n, int& out)
{
    if (pos + n > s.size())
        return false;
    int v = 0;
    for (std::size_t i = pos; i < pos + n; ++i) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    out = v;
    return true;
}

int days_in_month(std::int64_t y, int m)
{
    static constexpr int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
        return 29;
    return dm[m - 1];
}

} // namespace

std::string format_iso8601(time_point t)
{
    const civil_time c = split(t);
    char buf[40];
    std::snprintf(buf, sizeof buf, "%04lld-%02d-%02dT%02d:%02d:%02d.%03dZ",
                  static_cast<long long>(c.y), c.mo, c.d, c.h, c.mi, c.s, c.ms);
    return buf;
}

std::string format_amz_date(time_point t)
{
    const civil_time c = split(t);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04lld%02d%02dT%02d%02d%02dZ", static_cast<long long>(c.y),
                  c.mo, c.d, c.h, c.mi, c.s);
    return buf;
}

std::int64_t unix_seconds(time_point t)
{
    return floor_div(t.time_since_epoch().count(), 1000);
}

std::optional<std::int64_t> parse_date(std::string_view s)
{
    int y = 0, m = 0, d = 0;
    if (s.size() != 10 || s[4] != '-' || s[7] != '-' || !read_digits(s, 0, 4, y) ||
        !read_digits(s, 5, 2, m) || !read_digits(s, 8, 2, d))
        return std::nullopt;
    if (m < 1 || m > 12 || d < 1 || d > days_in_month(y, m))
        return std::nullopt;
    return days_from_civil(y, m, d);
}

std::optional<time_point> parse_iso8601(std::string_view s)
{
    auto days = parse_date(s.substr(0, std::min<std::size_t>(10, s.size())));
    if (!days)
        return std::nullopt;
    std::int64_t ms = *days * 86400000;
    if (s.size() == 10)
        return time_point{std::chrono::milliseconds{ms}};
    std::size_t p = 10;
    if (s[p] != 'T' && s[p] != 't' && s[p] != ' ')
        return std::nullopt;
    ++p;
    int h = 0, mi = 0, sec = 0;
    if (!read_digits(s, p, 2, h) || p + 2 >= s.size() || s[p + 2] != ':' ||
        !read_digits(s, p + 3, 2, mi))
        return std::nullopt;
    p += 5;
    if (p < s.size() && s[p] == ':') {
        if (!read_digits(s, p + 1, 2, sec))
            return std::nullopt;
        p += 3;
    }
    if (h > 23 || mi > 59 || sec > 60)
        return std::nullopt;
    ms += (h * 3600LL + mi * 60LL + sec) * 1000;
    if (p < s.size() && s[p] == '.') {
        ++p;
        int digits = 0, frac = 0;
        while (p < s.size() && s[p] >= '0' && s[p] <= '9') {
            if (digits < 3) {
                frac = frac * 10 + (s[p] - '0');
            }
            ++digits;
            ++p;
        }
        if (digits == 0)
            return std::nullopt;
        for (int i = digits; i < 3; ++i)
            frac *= 10;
        ms += frac;
    }
    if (p >= s.size())
        return std::nullopt; // a zone is required for date-times
    if (s[p] == 'Z' || s[p] == 'z') {
        if (p + 1 != s.size())
            return std::nullopt;
    } else if (s[p] == '+' || s[p] == '-') {
        const int sign = s[p] == '+' ? 1 : -1;
        int oh = 0, om = 0;
        if (!read_digits(s, p + 1, 2, oh))
            return std::nullopt;
        std::size_t q = p + 3;
        if (q < s.size() && s[q] == ':')
            ++q;
        if (!read_digits(s, q, 2, om) || q + 2 != s.size() || oh > 23 || om > 59)
            return std::nullopt;
        ms -= sign * (oh * 3600LL + om * 60LL) * 1000;
    } else {
        return std::nullopt;
    }
    return time_point{std::chrono::milliseconds{ms}};
}

std::optional<time_point> parse_amz_date(std::string_view s)
{
    int y = 0, m = 0, d = 0, h = 0, mi = 0, sec = 0;
    if (s.size() != 16 || s[8] != 'T' || s[15] != 'Z' || !read_digits(s, 0, 4, y) ||
        !read_digits(s, 4, 2, m) || !read_digits(s, 6, 2, d) || !read_digits(s, 9, 2, h) ||
        !read_digits(s, 11, 2, mi) || !read_digits(s, 13, 2, sec))
        return std::nullopt;
    if (m < 1 || m > 12 || d < 1 || d > days_in_month(y, m) || h > 23 || mi > 59 || sec > 60)
        return std::nullopt;
    const std::int64_t ms = (days_from_civil(y, m, d) * 86400 + h * 3600LL + mi * 60LL + sec) * 1000;
    return time_point{std::chrono::milliseconds{ms}};
}

// --- strings -----------------------------------------------------------------
std::string to_lower(std::string_view s)
{
    std::string r(s);
    for (char& c : r)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    return r;
}

bool iequals(std::string_view a, std::string_view b)
{
    return a.size() == b.size() && to_lower(a) == to_lower(b);
}

bool icontains(std::string_view haystack, std::string_view needle)
{
    return to_lower(haystack).find(to_lower(needle)) != std::string::npos;
}

std::optional<std::int64_t> parse_int64(std::string_view s)
{
    // [+-]digits, within [INT64_MIN, INT64_MAX]; nothing else (no spaces, no
    // exponent). Accumulates negatively so that INT64_MIN is representable.
    if (s.empty())
        return std::nullopt;
    std::size_t i = 0;
    bool neg = false;
    if (s[0] == '-' || s[0] == '+') {
        neg = s[0] == '-';
        i = 1;
        if (s.size() == 1)
            return std::nullopt;
    }
    constexpr std::int64_t min = INT64_MIN;
    std::int64_t v = 0;  // <= 0
    for (; i < s.size(); ++i) {
        if (s[i] < '0' || s[i] > '9')
            return std::nullopt;
        const int d = s[i] - '0';
        if (v < (min + d) / 10)
            return std::nullopt;  // v * 10 - d < INT64_MIN
        v = v * 10 - d;
    }
    if (neg)
        return v;
    if (v == min)
        return std::nullopt;
    return -v;
}

std::string uri_encode(std::string_view s, bool keep_slash)
{
    static constexpr char hexd[] = "0123456789ABCDEF";
    std::string r;
    r.reserve(s.size() * 3);
    for (unsigned char c : s) {
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
            r.push_back(static_cast<char>(c));
        } else {
            r.push_back('%');
            r.push_back(hexd[c >> 4]);
            r.push_back(hexd[c & 15]);
        }
    }
    return r;
}

std::optional<std::string> percent_decode(std::string_view s, bool plus_as_space)
{
    auto hexval = [](char c) -> int {
        if (c >= '0' && c <= '9')
            return c - '0';
        if (c >= 'a' && c <= 'f')
            return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
            return c - 'A' + 10;
        return -1;
    };
    std::string r;
    r.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%') {
            if (i + 2 >= s.size())
                return std::nullopt;
            const int a = hexval(s[i + 1]);
            const int b = hexval(s[i + 2]);
            if (a < 0 || b < 0)
                return std::nullopt;
            r.push_back(static_cast<char>(a * 16 + b));
            i += 2;
        } else if (plus_as_space && s[i] == '+') {
            r.push_back(' ');
        } else {
            r.push_back(s[i]);
        }
    }
    return r;
}

std::optional<query_params> parse_query(std::string_view raw, bool plus_as_space)
{
    query_params out;
    while (!raw.empty()) {
        const auto amp = raw.find('&');
        const std::string_view part = raw.substr(0, amp);
        raw = amp == std::string_view::npos ? std::string_view{} : raw.substr(amp + 1);
        if (part.empty())
            continue;
        const auto eq = part.find('=');
        auto k = percent_decode(part.substr(0, eq), plus_as_space);
        auto v = percent_decode(eq == std::string_view::npos ? std::string_view{} : part.substr(eq + 1),
                                plus_as_space);
        if (!k || !v)
            return std::nullopt;
        out.emplace_back(std::move(*k), std::move(*v));
    }
    return out;
}

namespace {
// Length of the valid UTF-8 sequence at s[i], or 0.
std::size_t utf8_sequence(std::string_view s, std::size_t i)
{
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80)
        return 1;
    std::size_t n = 0;
    std::uint32_t cp = 0;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (i + n > s.size())
        return 0;
    for (std::size_t k = 1; k < n; ++k) {
        const auto cc = static_cast<unsigned char>(s[i + k]);
        if ((cc & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (cc & 0x3F);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}
constexpr std::string_view replacement_character = "\xEF\xBF\xBD";  // U+FFFD
} // namespace

bool valid_utf8(std::string_view s)
{
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = utf8_sequence(s, i);
        if (n == 0)
            return false;
        i += n;
    }
    return true;
}

std::string to_valid_utf8(std::string_view s)
{
    std::string r;
    r.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = utf8_sequence(s, i);
        if (n == 0) {
            r += replacement_character;
            ++i;
        } else {
            r.append(s.substr(i, n));
            i += n;
        }
    }
    return r;
}

std::string xml_escape(std::string_view s)
{
    std::string r;
    for (std::size_t i = 0; i < s.size();) {
        const char c = s[i];
        const std::size_t n = utf8_sequence(s, i);
        if (n == 0 || (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r')) {
            r += replacement_character;
            ++i;
            continue;
        }
        switch (c) {
        case '<': r += "&lt;"; break;
        case '>': r += "&gt;"; break;
        case '&': r += "&amp;"; break;
        case '"': r += "&quot;"; break;
        case '\'': r += "&apos;"; break;
        default: r.append(s.substr(i, n));
        }
        i += n;
    }
    return r;
}

// --- crypto ------------------------------------------------------------------
std::string sha256(std::string_view data)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr) != 1)
        throw std::runtime_error("EVP_Digest failed");
    return std::string(reinterpret_cast<const char*>(md), len);
}

std::string hmac_sha256(std::string_view key, std::string_view data)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
              reinterpret_cast<const unsigned char*>(data.data()), data.size(), md, &len))
        throw std::runtime_error("HMAC failed");
    return std::string(reinterpret_cast<const char*>(md), len);
}

std::string hex(std::string_view bytes)
{
    static constexpr char hexd[] = "0123456789abcdef";
    std::string r;
    r.reserve(bytes.size() * 2);
    for (unsigned char c : bytes) {
        r.push_back(hexd[c >> 4]);
        r.push_back(hexd[c & 15]);
    }
    return r;
}

bool constant_time_equals(std::string_view a, std::string_view b)
{
    if (a.size() != b.size())
        return false;
    unsigned char diff = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

std::string random_hex(std::size_t bytes)
{
    std::string raw(bytes, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes)) != 1)
        throw std::runtime_error("RAND_bytes failed");
    return hex(raw);
}

// --- ids ---------------------------------------------------------------------
std::string id_generator::uuid_v4()
{
    unsigned char b[16];
    const std::uint64_t hi = rng_(), lo = rng_();
    for (int i = 0; i < 8; ++i) {
        b[i] = static_cast<unsigned char>(hi >> (8 * i));
        b[8 + i] = static_cast<unsigned char>(lo >> (8 * i));
    }
    b[6] = static_cast<unsigned char>((b[6] & 0x0F) | 0x40);
    b[8] = static_cast<unsigned char>((b[8] & 0x3F) | 0x80);
    const std::string h = hex(std::string_view(reinterpret_cast<const char*>(b), 16));
    return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
           "-" + h.substr(20, 12);
}

std::string id_generator::licence_key()
{
    static constexpr char alphabet[] = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    std::string r;
    for (int g = 0; g < 4; ++g) {
        if (g)
            r.push_back('-');
        for (int i = 0; i < 5; ++i)
            r.push_back(alphabet[rng_() % 32]);
    }
    return r;
}

// --- SigV4 -------------------------------------------------------------------
std::string sigv4_canonical_query(const query_params& params)
{
    std::vector<std::pair<std::string, std::string>> enc;
    for (const auto& [k, v] : params)
        if (k != "X-Amz-Signature")
            enc.emplace_back(uri_encode(k), uri_encode(v));
    std::sort(enc.begin(), enc.end());
    std::string r;
    for (const auto& [k, v] : enc) {
        if (!r.empty())
            r.push_back('&');
        r += k;
        r.push_back('=');
        r += v;
    }
    return r;
}

namespace {
std::string trim_spaces(std::string_view v)
{
    // trim and collapse sequential spaces, as SigV4 requires
    std::string r;
    bool space = false;
    for (char c : v) {
        if (c == ' ' || c == '\t') {
            space = !r.empty();
        } else {
            if (space)
                r.push_back(' ');
            space = false;
            r.push_back(c);
        }
    }
    return r;
}
} // namespace

sigv4_parts sigv4_sign(std::string_view method, std::string_view canonical_uri,
                       const query_params& params,
                       const std::vector<std::pair<std::string, std::string>>& headers,
                       std::string_view amz_date, const sigv4_credentials& creds,
                       std::string_view payload_hash)
{
    auto hs = headers;
    for (auto& [k, v] : hs) {
        k = to_lower(k);
        v = trim_spaces(v);
    }
    std::sort(hs.begin(), hs.end());
    std::string canonical_headers, signed_headers;
    for (const auto& [k, v] : hs) {
        canonical_headers += k + ":" + v + "\n";
        if (!signed_headers.empty())
            signed_headers.push_back(';');
        signed_headers += k;
    }
    sigv4_parts out;
    out.canonical_request = std::string(method) + "\n" + std::string(canonical_uri) + "\n" +
                            sigv4_canonical_query(params) + "\n" + canonical_headers + "\n" +
                            signed_headers + "\n" + std::string(payload_hash);
    const std::string date(amz_date.substr(0, 8));
    const std::string scope = date + "/" + creds.region + "/" + creds.service + "/aws4_request";
    out.string_to_sign = "AWS4-HMAC-SHA256\n" + std::string(amz_date) + "\n" + scope + "\n" +
                         hex(sha256(out.canonical_request));
    std::string k = hmac_sha256("AWS4" + creds.secret_access_key, date);
    k = hmac_sha256(k, creds.region);
    k = hmac_sha256(k, creds.service);
    k = hmac_sha256(k, "aws4_request");
    out.signature = hex(hmac_sha256(k, out.string_to_sign));
    return out;
}

std::string sigv4_presign_query(std::string_view method, std::string_view canonical_uri,
                                const std::vector<std::pair<std::string, std::string>>& headers,
                                time_point now, std::int64_t expires_seconds,
                                const sigv4_credentials& creds)
{
    const std::string amz_date = format_amz_date(now);
    std::vector<std::string> names;
    for (const auto& h : headers)
        names.push_back(to_lower(h.first));
    std::sort(names.begin(), names.end());
    std::string signed_headers;
    for (const auto& n : names) {
        if (!signed_headers.empty())
            signed_headers.push_back(';');
        signed_headers += n;
    }
    query_params params{
        {"X-Amz-Algorithm", "AWS4-HMAC-SHA256"},
        {"X-Amz-Credential", creds.access_key_id + "/" + amz_date.substr(0, 8) + "/" +
                                 creds.region + "/" + creds.service + "/aws4_request"},
        {"X-Amz-Date", amz_date},
        {"X-Amz-Expires", std::to_string(expires_seconds)},
        {"X-Amz-SignedHeaders", signed_headers},
    };
    const auto parts = sigv4_sign(method, canonical_uri, params, headers, amz_date, creds);
    return sigv4_canonical_query(params) + "&X-Amz-Signature=" + parts.signature;
}

} // namespace dd_sandbox
