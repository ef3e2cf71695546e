//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_CASSETTE_IPP
#define DIGITAL_DELIVERY_IMPL_CASSETTE_IPP

#include <digital_delivery/testing/cassette.hpp>

#include <digital_delivery/detail/clock.hpp>
#include <digital_delivery/error_with_diagnostics.hpp>
#include <digital_delivery/http_message.hpp>
#include <digital_delivery/impl/http/sansio/header_rules.hpp>
#include <digital_delivery/impl/crypto/sha256.hpp>
#include <digital_delivery/impl/http/sansio/header_values.hpp>
#include <digital_delivery/rate_limit.hpp>
#include <digital_delivery/timestamp.hpp>

#include <boost/asio/append.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/system_executor.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <variant>

namespace digital_delivery {
namespace detail {
namespace cassette {

using namespace ::digital_delivery::testing;
namespace json = boost::json;
namespace core = ::digital_delivery::detail;

// The cassette format's version (docs/cassettes.md).
inline constexpr std::int64_t cassette_version = 1;
inline constexpr std::string_view redacted = "REDACTED";
// What masked values compare as when matching requests.
inline constexpr std::string_view wildcard = "*";

inline bool listed(std::string_view name, std::initializer_list<std::string_view> builtin, const std::vector<std::string>& more)
{
    return std::any_of(builtin.begin(), builtin.end(), [&](std::string_view b) { return core::iequals(b, name); }) ||
           std::any_of(more.begin(), more.end(), [&](const std::string& m) { return core::iequals(m, name); });
}

// Credentials and signatures of presigned URLs (S3, GCS, Azure) and of APIs.
inline bool secret_query_parameter(std::string_view name, const cassette_options& o)
{
    return listed(name,
                  {"X-Amz-Signature", "X-Amz-Credential", "X-Amz-Security-Token", "Signature", "AWSAccessKeyId",
                   "X-Goog-Signature", "X-Goog-Credential", "GoogleAccessId", "sig", "token", "access_token", "api_key",
                   "apikey", "key"},
                  o.masked_query_parameters);
}

inline bool secret_header(std::string_view name, const cassette_options& o)
{
    return listed(name,
                  {"X-Auth-Token", "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-Amz-Security-Token",
                   "X-Api-Key"},
                  o.masked_headers);
}

// Fields a transport adds or that only concern one connection: noise in review.
inline bool unrecorded_header(std::string_view name, bool request)
{
    return request ? listed(name, {"Host", "Content-Length", "User-Agent"}, {})
                   : listed(name, {"Content-Length", "Connection", "Keep-Alive", "Transfer-Encoding"}, {});
}

inline bool masked_field(std::string_view name, const cassette_options& o)
{
    return listed(name, {}, o.masked_fields);
}

struct url_parts
{
    std::string_view path;
    std::string_view query;
};

// Path and query of an absolute URL (or of an origin-form target); the
// scheme, user info, host and port are no part of a match.
inline url_parts split_url(std::string_view url)
{
    if (const auto scheme = url.find("://"); scheme != std::string_view::npos)
    {
        const auto slash = url.find('/', scheme + 3);
        url = slash == std::string_view::npos ? std::string_view("/") : url.substr(slash);
    }
    url = url.substr(0, url.find('#'));
    const auto q = url.find('?');
    if (q == std::string_view::npos)
        return {url, {}};
    return {url.substr(0, q), url.substr(q + 1)};
}

inline bool valid_utf8(std::string_view s) noexcept
{
    for (std::size_t i = 0; i < s.size();)
    {
        const auto c = static_cast<unsigned char>(s[i]);
        const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (n == 0 || i + n > s.size())
            return false;
        for (std::size_t k = 1; k < n; ++k)
            if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2)
                return false;
        i += n;
    }
    return true;
}

inline std::string to_hex(std::string_view s)
{
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(2 * s.size());
    for (unsigned char c : s)
    {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

inline std::optional<std::string> from_hex(std::string_view s)
{
    const auto digit = [](char c) -> int {
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    };
    if (s.size() % 2)
        return std::nullopt;
    std::string out;
    for (std::size_t i = 0; i < s.size(); i += 2)
    {
        const int hi = digit(s[i]), lo = digit(s[i + 1]);
        if (hi < 0 || lo < 0)
            return std::nullopt;
        out += static_cast<char>(hi * 16 + lo);
    }
    return out;
}

// The text of `s` inside a JSON string (escaped as the serializer writes it).
inline std::string json_escaped(std::string_view s)
{
    std::string q = json::serialize(json::string(s));
    return q.substr(1, q.size() - 2);
}

// Replaces values by placeholders. While recording, the same value gets the
// same placeholder throughout the cassette, and every secret value seen is
// remembered so that the whole file can be scrubbed of it. While replaying
// (wildcards), every masked value becomes "*": requests then compare equal
// whatever their secrets and masked fields hold.
class cassette_masker
{
public:
    cassette_masker(const cassette_options& o, bool wildcards) : opts_(o), wildcards_(wildcards) {}

    std::string query(std::string_view q)
    {
        std::string out;
        while (!q.empty())
        {
            const auto amp = q.find('&');
            const std::string_view pair = q.substr(0, amp);
            q = amp == std::string_view::npos ? std::string_view() : q.substr(amp + 1);
            if (!out.empty())
                out += '&';
            const auto eq = pair.find('=');
            const std::string_view name = pair.substr(0, eq);
            if (eq == std::string_view::npos)
                out.append(pair);
            else if (secret_query_parameter(name, opts_))
                out.append(name).append("=").append(secret(pair.substr(eq + 1)));
            else if (masked_field(name, opts_))
                out.append(name).append("=").append(placeholder(name, pair.substr(eq + 1)));
            else
                out.append(pair);
        }
        return out;
    }

    // A URL appearing in a body or a header: its user info (a proxy's or a
    // server's credentials) and its query masked.
    std::string url(std::string_view u)
    {
        const auto scheme = u.find("://");
        if (scheme == std::string_view::npos)
            return std::string(u);
        std::string out(u.substr(0, scheme + 3));
        u.remove_prefix(scheme + 3);
        const auto authority_end = std::min(u.find_first_of("/?#"), u.size());
        if (const auto at = u.substr(0, authority_end).rfind('@'); at != std::string_view::npos)
        {
            out.append(secret(u.substr(0, at)));
            u.remove_prefix(at);
        }
        const auto q = u.find('?');
        if (q == std::string_view::npos)
            return out.append(u);
        const auto hash = u.find('#', q);
        out.append(u.substr(0, q + 1));
        out += query(u.substr(q + 1, hash == std::string_view::npos ? std::string_view::npos : hash - q - 1));
        if (hash != std::string_view::npos)
            out.append(u.substr(hash));
        return out;
    }

    json::object headers(const http_headers& h, bool request)
    {
        json::object out;
        for (const auto f : h)
        {
            if (unrecorded_header(f.name, request))
                continue;
            json::string value(secret_header(f.name, opts_) ? secret(f.value) : url(f.value));
            if (auto* prev = out.if_contains(f.name))
            {
                if (!prev->is_array())
                    *prev = json::array{std::move(*prev)};
                prev->as_array().emplace_back(std::move(value));
            }
            else
                out.emplace(f.name, std::move(value));
        }
        return out;
    }

    void body(json::value& v, std::string_view key = {})
    {
        if (auto* o = v.if_object())
        {
            for (auto& kv : *o)
                if (kv.value().is_string() && masked_field(kv.key(), opts_))
                    kv.value() = json::string(placeholder(kv.key(), kv.value().get_string()));
                else
                    body(kv.value(), kv.key());
        }
        else if (auto* a = v.if_array())
        {
            for (auto& e : *a)
                body(e, key);
        }
        else if (auto* s = v.if_string(); s && s->find("://") != json::string::npos &&
                                         (s->find('?') != json::string::npos || s->find('@') != json::string::npos))
        {
            *s = url(*s);
        }
    }

    // A text body (an object storage's XML error may echo the signature and
    // the request it signed).
    std::string text(std::string_view t)
    {
        std::string out(t);
        for (std::string_view element : {"SignatureProvided", "StringToSign", "StringToSignBytes", "CanonicalRequest",
                                          "CanonicalRequestBytes", "AWSAccessKeyId"})
        {
            const std::string open = "<" + std::string(element) + ">", close = "</" + std::string(element) + ">";
            for (auto b = out.find(open); b != std::string::npos; b = out.find(open, b + 1))
            {
                const auto e = out.find(close, b + open.size());
                if (e == std::string::npos)
                    break;
                const std::string inner = out.substr(b + open.size(), e - b - open.size());
                out.replace(b + open.size(), inner.size(), secret(inner));
            }
        }
        return out;
    }

    // The last line of defence over the whole serialized cassette: every
    // secret value seen (the API key, signatures) and every masked value long
    // enough to be unambiguous, wherever it appears.
    std::string scrub(std::string doc) const
    {
        std::vector<std::pair<std::string, std::string>> subs;
        for (const auto& s : secrets_)
            if (s.size() >= 8)
                subs.emplace_back(json_escaped(s), std::string(redacted));
        for (const auto& [value, ph] : placeholders_)
            if (value.size() >= 6)
                subs.emplace_back(json_escaped(value), ph);
        std::sort(subs.begin(), subs.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
        for (const auto& [from, to] : subs)
            for (auto p = doc.find(from); p != std::string::npos; p = doc.find(from, p + to.size()))
                doc.replace(p, from.size(), to);
        return doc;
    }

private:
    std::string secret(std::string_view value)
    {
        if (!wildcards_ && !value.empty() && value != redacted)
            secrets_.emplace(value);
        return std::string(wildcards_ ? wildcard : redacted);
    }

    std::string placeholder(std::string_view field, std::string_view value)
    {
        if (wildcards_)
            return std::string(wildcard);
        if (value.rfind("MASKED-", 0) == 0)  // masked already (a replayed value sent again)
            return std::string(value);
        auto it = placeholders_.find(value);
        if (it == placeholders_.end())
            it = placeholders_.emplace(std::string(value), "MASKED-" + std::string(field) + "-" + std::to_string(placeholders_.size() + 1)).first;
        return it->second;
    }

    const cassette_options& opts_;
    bool wildcards_;
    std::map<std::string, std::string, std::less<>> placeholders_;
    std::set<std::string, std::less<>> secrets_;
};

// A body as recorded: {"json": value} when it is JSON, {"text": "..."} when
// it is UTF-8 text, {"hex": "..."} otherwise; nothing when empty.
inline void record_body(json::object& into, std::string_view body, const http_headers& headers, cassette_masker& m)
{
    if (body.empty())
        return;
    const auto ct = headers.find("Content-Type").value_or("");
    if (ct.find("json") != std::string_view::npos || body.front() == '{' || body.front() == '[')
    {
        error_code ec;
        json::value v = json::parse(body, ec);
        if (!ec)
        {
            m.body(v);
            into.emplace("json", std::move(v));
            return;
        }
    }
    if (valid_utf8(body))
        into.emplace("text", m.text(body));
    else
        into.emplace("hex", to_hex(body));
}

// The body a recorded entry holds, as sent on the wire again.
inline std::optional<std::string> replayed_body(const json::object& o)
{
    if (const auto* v = o.if_contains("json"))
        return json::serialize(*v);
    if (const auto* v = o.if_contains("text"))
        return v->is_string() ? std::optional<std::string>(std::string(v->get_string())) : std::nullopt;
    if (const auto* v = o.if_contains("hex"))
        return v->is_string() ? from_hex(v->get_string()) : std::nullopt;
    return std::string();
}

inline void pretty(std::string& out, const json::value& v, int depth)
{
    const auto newline = [&](int d) {
        out += '\n';
        out.append(static_cast<std::size_t>(2 * d), ' ');
    };
    if (const auto* o = v.if_object(); o && !o->empty())
    {
        out += '{';
        bool first = true;
        for (const auto& kv : *o)
        {
            if (!first)
                out += ',';
            first = false;
            newline(depth + 1);
            out += json::serialize(json::string(kv.key()));
            out += ": ";
            pretty(out, kv.value(), depth + 1);
        }
        newline(depth);
        out += '}';
    }
    else if (const auto* a = v.if_array(); a && !a->empty())
    {
        out += '[';
        for (std::size_t i = 0; i < a->size(); ++i)
        {
            if (i)
                out += ',';
            newline(depth + 1);
            pretty(out, (*a)[i], depth + 1);
        }
        newline(depth);
        out += ']';
    }
    else
    {
        out += json::serialize(v);
    }
}

// "Sun, 06 Nov 1994 08:49:37 GMT"
inline std::string format_imf_fixdate(std::chrono::sys_seconds t)
{
    using namespace std::chrono;
    static constexpr const char* days_of_week[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static constexpr const char* months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                             "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    const auto day = floor<days>(t);
    const year_month_day ymd(day);
    const hh_mm_ss<seconds> hms(t - day);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s, %02u %s %04d %02d:%02d:%02d GMT", days_of_week[weekday(day).c_encoding()],
                  static_cast<unsigned>(ymd.day()), months[static_cast<unsigned>(ymd.month()) - 1],
                  static_cast<int>(ymd.year()), static_cast<int>(hms.hours().count()),
                  static_cast<int>(hms.minutes().count()), static_cast<int>(hms.seconds().count()));
    return buf;
}

inline std::string iso_seconds(std::chrono::system_clock::time_point t)
{
    return format_timestamp(std::chrono::floor<std::chrono::seconds>(t));
}

inline const boost::system::error_category* category_named(std::string_view name)
{
    const boost::system::error_category* known[] = {
        &boost::system::system_category(),      &boost::system::generic_category(),
        &boost::asio::error::get_netdb_category(), &boost::asio::error::get_addrinfo_category(),
        &boost::asio::error::get_misc_category(), &get_client_category(),
        &get_api_category()};
    for (const auto* c : known)
        if (name == c->name())
            return c;
    return nullptr;
}

[[noreturn]] inline void refuse_cassette(const std::string& path, const std::string& why)
{
    diagnostics d;
    d.client_message = "cassette " + path + ": " + why;
    throw error_with_diagnostics(client_errc::cassette_invalid, std::move(d));
}

// A streaming body on its way to the inner transport: counted and hashed,
// never kept.
class hashing_source final : public body_source
{
public:
    explicit hashing_source(std::shared_ptr<body_source> inner) : inner_(std::move(inner)) {}

    std::uint64_t size() const noexcept override { return inner_->size(); }

    void async_read_some(boost::asio::mutable_buffer buf, read_handler handler) override
    {
        // The inner source completes through the handler's executor: keep it.
        auto ex = boost::asio::get_associated_executor(handler, boost::asio::system_executor());
        inner_->async_read_some(
            buf,
            boost::asio::bind_executor(
                ex,
                [this, buf, h = std::move(handler)](error_code ec, std::size_t n) mutable {
                    if (!ec)
                    {
                        hash_.update(std::string_view(static_cast<const char*>(buf.data()), n));
                        read_ += n;
                    }
                    std::move(h)(ec, n);
                }
            )
        );
    }

    error_code rewind() override
    {
        hash_ = core::sha256();
        read_ = 0;
        return inner_->rewind();
    }

    json::object summary()
    {
        return {{"size", read_}, {"sha256", core::sha256::to_hex(hash_.finish())}};
    }

private:
    std::shared_ptr<body_source> inner_;
    core::sha256 hash_;
    std::uint64_t read_ = 0;
};

// What the request looks like in the cassette (its streaming body aside).
inline json::object record_request(const http_request& req, cassette_masker& m)
{
    const auto parts = split_url(req.url);
    json::object r;
    r.emplace("method", to_string(req.method));
    r.emplace("path", parts.path);
    if (!parts.query.empty())
        r.emplace("query", m.query(parts.query));
    r.emplace("headers", m.headers(req.headers, true));
    if (!req.body_stream)
        record_body(r, req.body, req.headers, m);
    return r;
}

inline json::object record_error(error_code ec)
{
    return {{"category", ec.category().name()}, {"value", ec.value()}, {"message", ec.message()}};
}

class cassette_recorder
{
public:
    cassette_recorder(any_transport inner, std::string path, cassette_options o)
        : inner_(std::move(inner)), path_(std::move(path)), opts_(std::move(o)), masker_(opts_, false)
    {
        if (!inner_)
            refuse_cassette(path_, "no transport to record");
    }

    any_transport& inner() noexcept { return inner_; }
    const std::string& path() const noexcept { return path_; }

    std::size_t size() const
    {
        std::lock_guard<std::mutex> lk(mtx_);
        return static_cast<std::size_t>(std::count_if(slots_.begin(), slots_.end(), [](const auto& s) { return s.has_value(); }));
    }

    // The exchange's place in the cassette: the order requests were sent in.
    std::pair<std::size_t, json::object> begin(const http_request& req)
    {
        std::lock_guard<std::mutex> lk(mtx_);
        if (!started_)
            started_ = core::clock::system_now();
        slots_.emplace_back();
        return {slots_.size() - 1, record_request(req, masker_)};
    }

    // Records the exchange and rewrites the file; false (and `why`) when it
    // cannot be written.
    bool end(std::size_t slot, json::object request, hashing_source* stream, error_code ec, const http_response& resp, std::string& why)
    {
        std::lock_guard<std::mutex> lk(mtx_);
        if (ec == boost::asio::error::operation_aborted)
            return true;  // the caller's doing, not the server's
        if (stream)
            request.emplace("stream", stream->summary());
        json::object entry;
        entry.emplace("request", std::move(request));
        if (ec)
        {
            entry.emplace("error", record_error(ec));
        }
        else
        {
            json::object r;
            r.emplace("status", resp.status);
            r.emplace("headers", masker_.headers(resp.headers, false));
            record_body(r, resp.body, resp.headers, masker_);
            entry.emplace("response", std::move(r));
        }
        slots_[slot] = std::move(entry);
        return write(why);
    }

private:
    bool write(std::string& why) const
    {
        json::array exchanges;
        for (const auto& s : slots_)
            if (s)
                exchanges.emplace_back(*s);
        const json::value doc = json::object{
            {"version", cassette_version},
            {"recorded_at", iso_seconds(started_.value_or(core::clock::system_now()))},
            {"exchanges", std::move(exchanges)}};
        std::string text;
        pretty(text, doc, 0);
        text = masker_.scrub(std::move(text));
        text += '\n';
        const std::string tmp = path_ + ".tmp";
        {
            std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
            f << text;
            f.flush();
            if (!f)
            {
                why = "cannot write cassette " + tmp + ": " + std::strerror(errno);
                return false;
            }
        }
        std::error_code fec;
        std::filesystem::rename(tmp, path_, fec);
        if (fec)
        {
            why = "cannot write cassette " + path_ + ": " + fec.message();
            return false;
        }
        return true;
    }

    any_transport inner_;
    std::string path_;
    cassette_options opts_;
    mutable std::mutex mtx_;
    cassette_masker masker_;
    std::vector<std::optional<json::object>> slots_;
    std::optional<std::chrono::system_clock::time_point> started_;
};

struct recorded_exchange
{
    std::string label;  // "#3 GET /path?query"
    std::string method, path, query;  // query and body: masked with wildcards
    std::string body;
    error_code error;
    http_response response;
    std::optional<std::chrono::sys_seconds> recorded_at;
    bool used = false;
};

// The request's body as matched: JSON with its masked values as wildcards,
// text as is, a stream as its size and SHA-256.
inline std::string body_key(std::string_view body, const http_headers& headers, cassette_masker& m)
{
    json::object o;
    record_body(o, body, headers, m);
    return o.empty() ? std::string() : json::serialize(o);
}

inline std::size_t edit_distance(std::string_view a, std::string_view b)
{
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
    {
        std::size_t diag = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j)
        {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

// Shifts the times of a replayed response's headers by `delta`: a response
// replayed years later must not announce a reset years ahead (or behind).
inline void shift_times(http_headers& h, std::chrono::seconds delta)
{
    http_headers out;
    for (const auto f : h)
    {
        std::string value(f.value);
        const bool date = core::iequals(f.name, "Date") || core::iequals(f.name, "Retry-After") ||
                          core::iequals(f.name, "X-RateLimit-Reset");
        if (date)
        {
            if (const auto when = core::parse_imf_fixdate(f.value))
                value = format_imf_fixdate(*when + delta);
            else if (const auto n = core::parse_int64(f.value); n && *n >= 1000000000 && core::iequals(f.name, "X-RateLimit-Reset"))
                value = std::to_string(*n + delta.count());
        }
        out.add(f.name, value);
    }
    h = std::move(out);
}

// A presigned URL's expiry in a replayed body ("expires_at" next to "url",
// the upload handle of POST /assets) moves with the headers' times: replayed
// later, the URL must not look expired (the client would refresh it).
inline void shift_url_expiry(json::value& v, std::chrono::seconds delta)
{
    if (auto* o = v.if_object())
    {
        auto* exp = o->if_contains("expires_at");
        if (exp && exp->is_string() && o->contains("url"))
            if (const auto t = parse_timestamp(exp->get_string()))
                *exp = json::string(format_timestamp(*t + delta));
        for (auto& kv : *o)
            shift_url_expiry(kv.value(), delta);
    }
    else if (auto* a = v.if_array())
    {
        for (auto& e : *a)
            shift_url_expiry(e, delta);
    }
}

inline void shift_body_times(std::string& body, std::chrono::seconds delta)
{
    if (delta.count() == 0 || body.find("\"expires_at\"") == std::string::npos)
        return;
    error_code ec;
    json::value v = json::parse(body, ec);
    if (ec)
        return;
    shift_url_expiry(v, delta);
    body = json::serialize(v);
}

// "GET /path?query"
inline std::string describe(std::string_view method, std::string_view path, std::string_view query)
{
    std::string d = std::string(method) + " " + std::string(path);
    if (!query.empty())
        d.append("?").append(query);
    return d;
}

class cassette_player
{
public:
    cassette_player(boost::asio::any_io_executor ex, const std::string& path, cassette_options o)
        : ex_(std::move(ex)), path_(path), opts_(std::move(o)), matcher_(opts_, true)
    {
        std::ifstream f(path, std::ios::binary);
        if (!f)
            refuse_cassette(path, std::string("cannot be read: ") + std::strerror(errno));
        std::stringstream ss;
        ss << f.rdbuf();
        error_code ec;
        const json::value doc = json::parse(ss.str(), ec);
        if (ec || !doc.is_object())
            refuse_cassette(path, "not JSON (" + ec.message() + ")");
        const auto* version = doc.as_object().if_contains("version");
        if (!version || !version->is_int64() || version->get_int64() != cassette_version)
            refuse_cassette(path, "not a cassette of version " + std::to_string(cassette_version));
        std::optional<std::chrono::sys_seconds> recorded_at;
        if (const auto* r = doc.as_object().if_contains("recorded_at"); r && r->is_string())
            if (const auto t = parse_timestamp(r->get_string()))
                recorded_at = std::chrono::floor<std::chrono::seconds>(*t);
        const auto* list = doc.as_object().if_contains("exchanges");
        if (!list || !list->is_array())
            refuse_cassette(path, "no \"exchanges\" array");
        for (const auto& e : list->get_array())
        {
            try
            {
                load(e.as_object(), recorded_at);
            }
            catch (const std::exception& x)
            {
                refuse_cassette(path, "exchange #" + std::to_string(exchanges_.size() + 1) + " is malformed (" + x.what() + ")");
            }
        }
    }

    const boost::asio::any_io_executor& executor() const noexcept { return ex_; }

    // The matching exchange (marked used), or the explanation of the mismatch.
    std::variant<recorded_exchange*, std::string> match(const http_request& req, const std::string& body)
    {
        std::lock_guard<std::mutex> lk(mtx_);
        const auto parts = split_url(req.url);
        const std::string method(to_string(req.method)), query = matcher_.query(parts.query);
        const auto same = [&](const recorded_exchange& x, bool with_body) {
            return x.method == method && x.path == parts.path && x.query == query && (!with_body || x.body == body);
        };
        recorded_exchange* found = nullptr;
        if (opts_.order == match_order::recorded)
        {
            if (next_ < exchanges_.size() && same(exchanges_[next_], opts_.match_body))
                found = &exchanges_[next_++];
        }
        else
        {
            for (auto& x : exchanges_)
                if (!x.used && same(x, opts_.match_body))
                {
                    found = &x;
                    break;
                }
        }
        if (found)
        {
            found->used = true;
            return found;
        }
        std::string why = describe(method, parts.path, query) + " matches no exchange of cassette " +
                          std::filesystem::path(path_).filename().string();
        const recorded_exchange* closest = nullptr;
        if (opts_.order == match_order::recorded)
            closest = next_ < exchanges_.size() ? &exchanges_[next_] : nullptr;
        else
        {
            const std::string target = method + " " + std::string(parts.path) + "?" + query;
            std::size_t best = std::size_t(-1);
            for (const auto& x : exchanges_)
            {
                const std::size_t d = edit_distance(target, x.method + " " + x.path + "?" + x.query) + (x.used ? 1000 : 0);
                if (d < best)
                    best = d, closest = &x;
            }
        }
        if (!closest)
            why += opts_.order == match_order::recorded ? "; every recorded exchange was used" : "; the cassette is empty";
        else
        {
            why += opts_.order == match_order::recorded ? "; expected next: " : "; closest: ";
            why += closest->label;
            if (closest->used)
                why += " (already used)";
            else if (same(*closest, false))
                why += " (the body differs)";
        }
        mismatches_.push_back(why);
        return why;
    }

    std::vector<std::string> unused() const
    {
        std::lock_guard<std::mutex> lk(mtx_);
        std::vector<std::string> out;
        for (const auto& x : exchanges_)
            if (!x.used)
                out.push_back(x.label);
        return out;
    }

    std::vector<std::string> mismatches() const
    {
        std::lock_guard<std::mutex> lk(mtx_);
        return mismatches_;
    }

    std::string request_body_key(const http_request& req)
    {
        std::lock_guard<std::mutex> lk(mtx_);
        return opts_.match_body ? body_key(req.body, req.headers, matcher_) : std::string();
    }

    bool match_body() const noexcept { return opts_.match_body; }

private:
    void load(const json::object& e, std::optional<std::chrono::sys_seconds> cassette_time)
    {
        recorded_exchange x;
        const auto& rq = e.at("request").as_object();
        x.method = std::string(rq.at("method").as_string());
        x.path = std::string(rq.at("path").as_string());
        if (const auto* q = rq.if_contains("query"))
            x.query = matcher_.query(q->as_string());
        if (const auto* s = rq.if_contains("stream"))
            x.body = "stream " + json::serialize(*s);
        else if (opts_.match_body)
        {
            json::object b;
            for (const char* k : {"json", "text", "hex"})
                if (const auto* v = rq.if_contains(k))
                    b.emplace(k, *v);
            if (auto* j = b.if_contains("json"))
                matcher_.body(*j);
            if (auto* t = b.if_contains("text"))
                *t = matcher_.text(t->as_string());
            x.body = b.empty() ? std::string() : json::serialize(b);
        }
        x.label = "#" + std::to_string(exchanges_.size() + 1) + " " + describe(x.method, x.path, x.query);
        if (const auto* err = e.if_contains("error"))
        {
            const auto& eo = err->as_object();
            const auto* cat = category_named(eo.at("category").as_string());
            if (!cat)
                throw std::invalid_argument("unknown error category " + std::string(eo.at("category").as_string()));
            x.error = error_code(static_cast<int>(eo.at("value").to_number<std::int64_t>()), *cat);
        }
        else
        {
            const auto& rs = e.at("response").as_object();
            x.response.status = rs.at("status").to_number<unsigned>();
            for (const auto& h : rs.at("headers").as_object())
            {
                if (h.value().is_array())
                    for (const auto& v : h.value().get_array())
                        x.response.headers.add(h.key(), v.as_string());
                else
                    x.response.headers.add(h.key(), h.value().as_string());
            }
            auto body = replayed_body(rs);
            if (!body)
                throw std::invalid_argument("the response body is neither json, text nor hex");
            x.response.body = std::move(*body);
            x.recorded_at = cassette_time;
            if (const auto date = x.response.headers.find("Date"))
                if (const auto t = core::parse_imf_fixdate(*date))
                    x.recorded_at = *t;
        }
        exchanges_.push_back(std::move(x));
    }

    boost::asio::any_io_executor ex_;
    std::string path_;
    cassette_options opts_;
    mutable std::mutex mtx_;
    cassette_masker matcher_;
    std::vector<recorded_exchange> exchanges_;
    std::size_t next_ = 0;
    std::vector<std::string> mismatches_;
};

// Completes through the handler's executor (ours when it has none), never inline.
inline void complete_later(const boost::asio::any_io_executor& ex, transport_handler h, error_code ec, http_response r)
{
    boost::asio::post(ex, boost::asio::append(std::move(h), ec, std::move(r)));
}

inline void answer(const std::shared_ptr<cassette_player>& p, const http_request& req, const std::string& body, transport_handler h)
{
    auto m = p->match(req, body);
    if (auto* why = std::get_if<std::string>(&m))
    {
        http_response explanation;
        explanation.body = std::move(*why);
        return complete_later(p->executor(), std::move(h), client_errc::cassette_no_match, std::move(explanation));
    }
    const recorded_exchange& x = *std::get<recorded_exchange*>(m);
    if (x.error)
        return complete_later(p->executor(), std::move(h), x.error, http_response{});
    http_response r = x.response;
    if (x.recorded_at)
    {
        const auto now = std::chrono::floor<std::chrono::seconds>(core::clock::system_now());
        shift_times(r.headers, now - *x.recorded_at);
        shift_body_times(r.body, now - *x.recorded_at);
    }
    complete_later(p->executor(), std::move(h), {}, std::move(r));
}

// Reads a streaming body to its end like a server would (progress reported,
// a failing source failing the exchange), hashing it for the match. Terminal
// cancellation stops it at the next piece.
struct drain_state
{
    drain_state(std::shared_ptr<cassette_player> pl, http_request r, transport_handler handler)
        : p(std::move(pl)), req(std::move(r)), h(std::move(handler))
    {
    }
    std::shared_ptr<cassette_player> p;
    http_request req;
    transport_handler h;
    std::vector<char> buf = std::vector<char>(65536);
    std::uint64_t sent = 0;
    core::sha256 hash;
    std::atomic<bool> cancelled{false};
};

// The exchange is over: the cancellation handler goes before the completion.
inline void finish_drain(const std::shared_ptr<drain_state>& st, error_code ec, http_response r = {})
{
    if (auto slot = boost::asio::get_associated_cancellation_slot(st->h); slot.is_connected())
        slot.clear();
    complete_later(st->p->executor(), std::move(st->h), ec, std::move(r));
}

inline void drain(std::shared_ptr<drain_state> st)
{
    auto* src = st->req.body_stream.get();
    const auto ex = st->p->executor();
    src->async_read_some(
        boost::asio::buffer(st->buf),
        boost::asio::bind_executor(ex, [st](error_code ec, std::size_t n) mutable {
            if (st->cancelled)
                return finish_drain(st, boost::asio::error::operation_aborted);
            if (ec == boost::asio::error::eof || (!ec && n == 0))
            {
                if (auto slot = boost::asio::get_associated_cancellation_slot(st->h); slot.is_connected())
                    slot.clear();
                const json::object summary{{"size", st->sent}, {"sha256", core::sha256::to_hex(st->hash.finish())}};
                const std::string key = "stream " + json::serialize(summary);
                return answer(st->p, st->req, key, std::move(st->h));
            }
            if (ec)
                return finish_drain(st, ec);
            st->sent += n;
            if (st->p->match_body())
                st->hash.update(std::string_view(st->buf.data(), n));
            if (st->req.on_body_progress)
                st->req.on_body_progress(st->sent);
            drain(std::move(st));
        })
    );
}

inline void start_drain(std::shared_ptr<cassette_player> p, http_request req, transport_handler h)
{
    auto st = std::make_shared<drain_state>(std::move(p), std::move(req), std::move(h));
    if (auto slot = boost::asio::get_associated_cancellation_slot(st->h); slot.is_connected())
    {
        std::weak_ptr<drain_state> w = st;
        slot.assign([w](boost::asio::cancellation_type t) {
            if ((t & boost::asio::cancellation_type::terminal) != boost::asio::cancellation_type::none)
                if (auto s = w.lock())
                    s->cancelled = true;
        });
    }
    drain(std::move(st));
}

}  // namespace cassette
}  // namespace detail

namespace testing {

DIGITAL_DELIVERY_DECL record_mode record_mode_from_env(record_mode fallback, const char* variable)
{
    const char* v = std::getenv(variable);
    if (!v || !*v)
        return fallback;
    const std::string_view s(v);
    if (s == "once")
        return record_mode::once;
    if (s == "none")
        return record_mode::none;
    if (s == "all")
        return record_mode::all;
    throw std::invalid_argument(std::string(variable) + "=" + std::string(s) + ": expected once, none or all");
}

// ---- recording_transport ----

DIGITAL_DELIVERY_DECL recording_transport::recording_transport(any_transport inner, std::string path, cassette_options options)
    : impl_(std::make_shared<detail::cassette::cassette_recorder>(std::move(inner), std::move(path), std::move(options)))
{
}

DIGITAL_DELIVERY_DECL boost::asio::any_io_executor recording_transport::get_executor() const
{
    return impl_->inner().get_executor();
}

DIGITAL_DELIVERY_DECL void recording_transport::async_send(http_request req, transport_handler h)
{
    auto [slot, request] = impl_->begin(req);
    std::shared_ptr<detail::cassette::hashing_source> stream;
    if (req.body_stream)
    {
        stream = std::make_shared<detail::cassette::hashing_source>(std::move(req.body_stream));
        req.body_stream = stream;
    }
    // The caller's executor and cancellation slot stay the inner transport's
    // to honour.
    auto ex = boost::asio::get_associated_executor(h, impl_->inner().get_executor());
    auto cancel = boost::asio::get_associated_cancellation_slot(h);
    impl_->inner().async_send(
        std::move(req),
        transport_handler(boost::asio::bind_cancellation_slot(
            cancel,
            boost::asio::bind_executor(
                ex,
                [rec = impl_, slot = slot, request = std::move(request), stream, h = std::move(h)](error_code ec, http_response r) mutable {
                    std::string why;
                    if (!rec->end(slot, std::move(request), stream.get(), ec, r, why))
                    {
                        http_response explanation;
                        explanation.body = std::move(why);
                        return std::move(h)(error_code(client_errc::cassette_invalid), std::move(explanation));
                    }
                    std::move(h)(ec, std::move(r));
                }
            )
        ))
    );
}

DIGITAL_DELIVERY_DECL std::size_t recording_transport::size() const { return impl_->size(); }

DIGITAL_DELIVERY_DECL const std::string& recording_transport::path() const noexcept { return impl_->path(); }

// ---- replay_transport ----

DIGITAL_DELIVERY_DECL replay_transport::replay_transport(boost::asio::any_io_executor ex, const std::string& path, cassette_options options)
    : impl_(std::make_shared<detail::cassette::cassette_player>(std::move(ex), path, std::move(options)))
{
}

DIGITAL_DELIVERY_DECL boost::asio::any_io_executor replay_transport::get_executor() const { return impl_->executor(); }

DIGITAL_DELIVERY_DECL void replay_transport::async_send(http_request req, transport_handler h)
{
    if (req.body_stream)
        return detail::cassette::start_drain(impl_, std::move(req), std::move(h));
    const std::string body = impl_->request_body_key(req);
    detail::cassette::answer(impl_, req, body, std::move(h));
}

DIGITAL_DELIVERY_DECL std::vector<std::string> replay_transport::unused() const { return impl_->unused(); }

DIGITAL_DELIVERY_DECL std::vector<std::string> replay_transport::mismatches() const { return impl_->mismatches(); }

DIGITAL_DELIVERY_DECL error_code replay_transport::verify(diagnostics& diag) const
{
    const auto list = [](const std::vector<std::string>& items) {
        std::string s;
        for (const auto& i : items)
            s.append(s.empty() ? "" : "; ").append(i);
        return s;
    };
    diag.clear();
    if (const auto m = impl_->mismatches(); !m.empty())
    {
        diag.client_message = std::to_string(m.size()) + " request(s) matched no recorded exchange: " + list(m);
        return client_errc::cassette_no_match;
    }
    if (const auto u = impl_->unused(); !u.empty())
    {
        diag.client_message = std::to_string(u.size()) + " recorded exchange(s) never used: " + list(u);
        return client_errc::cassette_unused_exchanges;
    }
    return {};
}

DIGITAL_DELIVERY_DECL void replay_transport::verify() const
{
    diagnostics d;
    if (const auto ec = verify(d))
        throw error_with_diagnostics(ec, std::move(d));
}

// ---- cassette_transport ----

DIGITAL_DELIVERY_DECL cassette_transport::cassette_transport(
    boost::asio::any_io_executor ex,
    std::string path,
    record_mode mode,
    const std::function<any_transport()>& make_inner,
    cassette_options options
)
{
    const bool record = mode == record_mode::all || (mode == record_mode::once && !std::filesystem::exists(path));
    if (record)
        recorder_.emplace(make_inner(), std::move(path), std::move(options));
    else
        player_.emplace(std::move(ex), path, std::move(options));
}

DIGITAL_DELIVERY_DECL boost::asio::any_io_executor cassette_transport::get_executor() const
{
    return recorder_ ? recorder_->get_executor() : player_->get_executor();
}

DIGITAL_DELIVERY_DECL void cassette_transport::async_send(http_request req, transport_handler h)
{
    if (recorder_)
        recorder_->async_send(std::move(req), std::move(h));
    else
        player_->async_send(std::move(req), std::move(h));
}

DIGITAL_DELIVERY_DECL error_code cassette_transport::verify(diagnostics& diag) const
{
    diag.clear();
    return player_ ? player_->verify(diag) : error_code();
}

DIGITAL_DELIVERY_DECL void cassette_transport::verify() const
{
    if (player_)
        player_->verify();
}

}  // namespace testing
}  // namespace digital_delivery

#endif
