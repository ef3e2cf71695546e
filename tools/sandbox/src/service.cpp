// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Core: plumbing (routing, auth, rate limit, JSON helpers), assets and digital products.
#include "detail.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <system_error>

namespace dd_sandbox {

namespace json = boost::json;
using namespace detail;

namespace {
constexpr std::string_view api_base = "/api/v1/external";
constexpr std::int64_t max_name_length = 255;
constexpr std::int64_t max_url_length = 2048;
} // namespace

// --- request / response ------------------------------------------------------
const std::string* request::header(std::string_view name) const
{
    for (const auto& [k, v] : headers)
        if (iequals(k, name))
            return &v;
    return nullptr;
}

const std::string* response::header(std::string_view name) const
{
    for (const auto& [k, v] : headers)
        if (iequals(k, name))
            return &v;
    return nullptr;
}

// --- detail ------------------------------------------------------------------
namespace detail {

response json_response(int status, const json::value& v)
{
    response r;
    r.status = status;
    r.headers.emplace_back("Content-Type", "application/json; charset=utf-8");
    r.body = json::serialize(v);
    // Boost.JSON serializes a string's bytes as they are. Every string the
    // sandbox stores is valid UTF-8 (JSON input is validated by the parser,
    // derived strings are checked), so this is only a safety net: invalid
    // bytes can only be inside strings (the JSON syntax is ASCII).
    if (!valid_utf8(r.body))
        r.body = to_valid_utf8(r.body);
    return r;
}

response error_response(int status, std::string_view message)
{
    return json_response(status, json::object{{"error", message}});
}

response errors_response(const std::vector<std::string>& errors)
{
    json::array a;
    for (const auto& e : errors)
        a.emplace_back(e);
    return json_response(422, json::object{{"errors", std::move(a)}});
}

response not_found(std::string_view what)
{
    return error_response(404, std::string(what) + " not found");
}

response no_content()
{
    response r;
    r.status = 204;
    return r;
}

const std::string* query_get(const query_params& q, std::string_view name)
{
    const std::string* found = nullptr;
    for (const auto& [k, v] : q)
        if (k == name && !v.empty())
            found = &v;
    return found;
}

std::variant<response, json::value> parse_body(const request& req)
{
    if (req.body.find_first_not_of(" \t\r\n") == std::string::npos)
        return json::value{};
    boost::system::error_code bec;
    json::value v = json::parse(req.body, bec);
    if (bec)
        return error_response(400, "Malformed JSON body");
    return v;
}

std::variant<response, const json::object*> require_root(const json::value& body,
                                                         std::string_view key)
{
    // An empty object is accepted: the contract declares "all fields optional"
    // for PATCH (200, nothing changed), and POST answers its field errors (422).
    if (const auto* o = body.if_object()) {
        if (const auto* inner = o->if_contains(key)) {
            if (const auto* io = inner->if_object())
                return io;
        }
    }
    return error_response(400, "param is missing or the value is empty: " + std::string(key));
}

std::variant<response, json::object> parse_root(const request& req, std::string_view key)
{
    auto body = parse_body(req);
    if (auto* r = std::get_if<response>(&body))
        return std::move(*r);
    auto root = require_root(std::get<json::value>(body), key);
    if (auto* r = std::get_if<response>(&root))
        return std::move(*r);
    return *std::get<const json::object*>(root);
}

field<std::string> string_field(const json::object& o, std::string_view key)
{
    field<std::string> f;
    const auto* v = o.if_contains(key);
    if (!v)
        return f;
    if (v->is_null()) {
        f.state = field_state::null;
    } else if (v->is_string()) {
        f.state = field_state::ok;
        f.value = std::string(v->get_string());
    } else {
        f.state = field_state::bad;
    }
    return f;
}

field<bool> bool_field(const json::object& o, std::string_view key)
{
    field<bool> f;
    const auto* v = o.if_contains(key);
    if (!v)
        return f;
    if (v->is_null()) {
        f.state = field_state::null;
    } else if (v->is_bool()) {
        f.state = field_state::ok;
        f.value = v->get_bool();
    } else {
        f.state = field_state::bad;
    }
    return f;
}

field<std::int64_t> int_field(const json::object& o, std::string_view key)
{
    field<std::int64_t> f;
    const auto* v = o.if_contains(key);
    if (!v)
        return f;
    if (v->is_null()) {
        f.state = field_state::null;
    } else if (v->is_int64()) {
        f.state = field_state::ok;
        f.value = v->get_int64();
    } else if (v->is_uint64() && v->get_uint64() <= static_cast<std::uint64_t>(INT64_MAX)) {
        f.state = field_state::ok;
        f.value = static_cast<std::int64_t>(v->get_uint64());
    } else if (v->is_double() && std::isfinite(v->get_double()) &&
               std::floor(v->get_double()) == v->get_double() &&
               std::fabs(v->get_double()) < 9.0e18) {
        f.state = field_state::ok;
        f.value = static_cast<std::int64_t>(v->get_double());
    } else {
        f.state = field_state::bad;
    }
    return f;
}

std::string humanize(std::string_view key)
{
    std::string s(key);
    if (s.size() > 3 && s.compare(s.size() - 3, 3, "_id") == 0)
        s.resize(s.size() - 3);
    for (char& c : s)
        if (c == '_')
            c = ' ';
    if (!s.empty() && s[0] >= 'a' && s[0] <= 'z')
        s[0] = static_cast<char>(s[0] - 'a' + 'A');
    return s;
}

bool blank(const std::string& s)
{
    return s.find_first_not_of(" \t\r\n") == std::string::npos;
}

paging parse_paging(const query_params& q, std::int64_t max_per_page,
                    std::vector<std::string>& errors)
{
    paging p;
    if (const auto* v = query_get(q, "page")) {
        if (auto n = parse_int64(*v)) {
            if (*n < 1)
                errors.push_back("page must be at least 1");
            else
                p.page = *n;
        } else {
            errors.push_back("page is invalid");
        }
    }
    if (const auto* v = query_get(q, "per_page")) {
        if (auto n = parse_int64(*v)) {
            if (*n < 1 || *n > max_per_page)
                errors.push_back("per_page must be between 1 and " + std::to_string(max_per_page));
            else
                p.per_page = *n;
        } else {
            errors.push_back("per_page is invalid");
        }
    }
    return p;
}

json::object pagination_json(const paging& p, std::size_t total)
{
    const auto t = static_cast<std::int64_t>(total);
    return json::object{{"current_page", p.page},
                        {"per_page", p.per_page},
                        {"total_count", t},
                        {"total_pages", (t + p.per_page - 1) / p.per_page}};
}

std::string content_disposition(std::string_view filename)
{
    std::string quoted;
    bool non_ascii = false;
    for (std::size_t i = 0; i < filename.size(); ++i) {
        const auto c = static_cast<unsigned char>(filename[i]);
        if (c >= 0x80) {
            non_ascii = true;
            if ((c & 0xC0) != 0x80)  // one '_' per UTF-8 sequence
                quoted.push_back('_');
        } else if (c < 0x20 || c == 0x7F) {
            quoted.push_back('_');
        } else {
            if (c == '"' || c == '\\')
                quoted.push_back('\\');
            quoted.push_back(static_cast<char>(c));
        }
    }
    std::string r = "inline; filename=\"" + quoted + "\"";
    if (non_ascii)
        r += "; filename*=UTF-8''" + uri_encode(filename);
    return r;
}

std::optional<std::string> nullable(const field<std::string>& f, const std::optional<std::string>& old)
{
    if (f.state == field_state::ok)
        return f.value;
    if (f.state == field_state::null)
        return std::nullopt;
    return old;
}

json::value opt(const std::optional<std::string>& s)
{
    return s ? json::value(*s) : json::value(nullptr);
}

json::value opt(const std::optional<std::int64_t>& v)
{
    return v ? json::value(*v) : json::value(nullptr);
}

json::value opt_time(const std::optional<time_point>& t)
{
    return t ? json::value(format_iso8601(*t)) : json::value(nullptr);
}

} // namespace detail

// --- token bucket ------------------------------------------------------------
token_bucket::token_bucket(double capacity, double window_seconds)
    : capacity_(capacity), rate_(capacity / window_seconds), tokens_(capacity)
{
}

void token_bucket::refill(time_point now)
{
    if (last_ && now > *last_) {
        const double dt = std::chrono::duration<double>(now - *last_).count();
        tokens_ = std::min(capacity_, tokens_ + dt * rate_);
    }
    if (!last_ || now > *last_)
        last_ = now;
}

token_bucket::decision token_bucket::take(double cost, time_point now)
{
    refill(now);
    decision d{};
    d.limit = static_cast<std::int64_t>(capacity_);
    const double now_s = std::chrono::duration<double>(now.time_since_epoch()).count();
    constexpr double eps = 1e-9;
    if (tokens_ + eps >= cost) {
        tokens_ = std::max(0.0, tokens_ - cost);
        d.allowed = true;
    } else {
        d.allowed = false;
        d.retry_after =
            std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil((cost - tokens_) / rate_ - eps)));
    }
    d.remaining = static_cast<std::int64_t>(std::floor(tokens_ + eps));
    d.reset_unix = static_cast<std::int64_t>(std::ceil(now_s + (capacity_ - tokens_) / rate_ - eps));
    return d;
}

// --- service -----------------------------------------------------------------
service::service(sandbox_config cfg, time_point start)
    : cfg_(std::move(cfg)), ids_(cfg_.seed),
      bucket_(cfg_.rate_limit_points, cfg_.rate_limit_window_seconds)
{
    creds_.access_key_id = "SANDBOXAKIDEXAMPLE01";
    creds_.secret_access_key = cfg_.storage_secret.empty() ? random_hex(32) : cfg_.storage_secret;
    while (!cfg_.public_url.empty() && cfg_.public_url.back() == '/')
        cfg_.public_url.pop_back();
    seed_orders(start);
}

service::~service() = default;

std::string service::s3_error_xml(std::string_view code, std::string_view message,
                                  std::string_view resource, std::string_view extra_xml)
{
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>" + xml_escape(code) +
           "</Code><Message>" + xml_escape(message) + "</Message>" + std::string(extra_xml) +
           "<Resource>" + xml_escape(resource) + "</Resource><RequestId>sandbox</RequestId></Error>";
}

response service::handle(const request& req, time_point raw_now)
{
    const time_point now = effective_now(raw_now);
    tick(now);
    const std::string_view target = req.target;
    const auto qpos = target.find('?');
    const std::string_view path = target.substr(0, qpos);
    const std::string_view raw_query =
        qpos == std::string_view::npos ? std::string_view{} : target.substr(qpos + 1);

    if (path.starts_with("/storage/")) {
        if (req.method == "PUT") {
            auto r = begin_upload(req, raw_now);
            if (auto* resp = std::get_if<response>(&r))
                return std::move(*resp);
            auto& t = std::get<upload_ticket>(r);
            {
                std::FILE* f = std::fopen(t.temp_path.c_str(), "wb");
                if (f) {
                    std::fwrite(req.body.data(), 1, req.body.size(), f);
                    std::fclose(f);
                }
            }
            return finish_upload(t, req.body.size(), raw_now);
        }
        return storage_get(req, path, raw_query, now);
    }
    // Names the sandbox (with the Server header the front end adds): what a
    // health route of another service, or a catch-all route, does not say.
    if (path == "/sandbox/health" && req.method == "GET")
        return json_response(200, json::object{{"status", "ok"}, {"service", "digital-delivery-sandbox"}});

    // The buyer's download page: no API key, the link is the capability.
    if (is_download_page(path))
        return download_page(req, path, now);

    const bool api = path == api_base || (path.starts_with(api_base) && path[api_base.size()] == '/');
    const bool sandbox = path.starts_with("/sandbox/");
    if (!api && !sandbox)
        return error_response(404, "Not found");

    const std::string* token = req.header("X-Auth-Token");
    if (!token || !constant_time_equals(*token, cfg_.api_key))
        return error_response(401, "Invalid API key");

    if (sandbox)
        return route_sandbox(req, path, now);

    std::optional<token_bucket::decision> d;
    const int cost = (req.method == "GET" || req.method == "HEAD") ? 1 : 2;
    if (cfg_.rate_limit)
        d = bucket_.take(cost, raw_now);
    ++usage_.requests;
    response r;
    if (d && !d->allowed) {
        ++usage_.rate_limited;
        r = error_response(429, "Rate limit exceeded");
        r.headers.emplace_back("Retry-After", std::to_string(d->retry_after));
    } else {
        usage_.points += cost;
        auto q = parse_query(raw_query, true);
        if (!q)
            r = error_response(400, "Malformed query string");
        else
            r = route_api(req, path.substr(api_base.size()), *q, now);
    }
    if (d) {
        r.headers.emplace_back("X-RateLimit-Limit", std::to_string(d->limit));
        r.headers.emplace_back("X-RateLimit-Remaining", std::to_string(d->remaining));
        r.headers.emplace_back("X-RateLimit-Reset", std::to_string(d->reset_unix));
    }
    return r;
}

namespace {
std::vector<std::string> split_path(std::string_view p)
{
    std::vector<std::string> segs;
    while (!p.empty()) {
        if (p[0] == '/') {
            p.remove_prefix(1);
            continue;
        }
        const auto slash = p.find('/');
        auto seg = percent_decode(p.substr(0, slash), false);
        segs.push_back(seg ? *seg : std::string(p.substr(0, slash)));
        p = slash == std::string_view::npos ? std::string_view{} : p.substr(slash);
    }
    return segs;
}
} // namespace

response service::route_api(const request& req, std::string_view path, const query_params& q,
                            time_point now)
{
    const auto s = split_path(path);
    const std::string& m = req.method;
    const auto n = s.size();
    if (n >= 1 && s[0] == "assets") {
        if (n == 1 && m == "GET") return list_assets(q);
        if (n == 1 && m == "POST") return create_asset(req, now);
        if (n == 2 && m == "GET") return get_asset(s[1]);
        if (n == 2 && (m == "PATCH" || m == "PUT")) return update_asset(s[1], req, now);
        if (n == 2 && m == "DELETE") return delete_asset(s[1]);
        if (n == 3 && s[2] == "replace" && m == "POST") return replace_asset(s[1], req, now);
    } else if (n >= 1 && s[0] == "digital_products") {
        if (n == 1 && m == "GET") return list_digital_products(q);
        if (n == 1 && m == "POST") return create_digital_product(req, now);
        if (n == 2 && m == "GET") return get_digital_product(s[1]);
        if (n == 2 && (m == "PATCH" || m == "PUT")) return update_digital_product(s[1], req, now);
        if (n == 2 && m == "DELETE") return delete_digital_product(s[1]);
        if (n == 3 && s[2] == "notify_buyers" && m == "POST") return notify_buyers(s[1], req, now);
    } else if (n >= 1 && s[0] == "orders") {
        if (n == 1 && m == "GET") return list_orders(q);
        if (n == 2 && m == "GET") return get_order(s[1]);
        if (n == 3 && s[2] == "downloads" && m == "GET") return order_downloads(s[1], now);
        if (n == 3 && s[2] == "attach_assets" && m == "POST") return attach_assets(s[1], req);
        if (n == 3 && s[2] == "detach_assets" && m == "DELETE") return detach_assets(s[1], req);
        if (n == 3 && s[2] == "notify" && m == "POST") return notify_order(s[1], req, now);
    }
    return error_response(404, "Not found");
}

response service::route_sandbox(const request& req, std::string_view path, time_point now)
{
    const auto s = split_path(path);
    const std::string& m = req.method;
    const auto n = s.size();
    if (n == 2 && s[1] == "purchases" && m == "POST") return purchase(req, now);
    if (n == 4 && s[1] == "orders" && s[3] == "refund" && m == "POST")
        return set_financial_status(s[2], "refunded");
    if (n == 4 && s[1] == "orders" && s[3] == "cancel" && m == "POST")
        return set_financial_status(s[2], "voided");
    if (n == 4 && s[1] == "orders" && s[3] == "download_page" && m == "GET") {
        if (!orders_.count(s[2]))
            return not_found("Order");
        return json_response(200, json::object{{"order_id", s[2]}, {"download_page_url", download_page_url(s[2])}});
    }
    if (n == 2 && s[1] == "outbox" && m == "GET") return outbox();
    if (n == 2 && s[1] == "outbox" && m == "DELETE") {
        outbox_.clear();
        return no_content();
    }
    if (n == 2 && s[1] == "usage" && m == "GET")
        return json_response(200, json::object{{"requests", usage_.requests},
                                               {"points", usage_.points},
                                               {"rate_limited", usage_.rate_limited}});
    if (n == 2 && s[1] == "usage" && m == "DELETE") {
        usage_ = {};
        return no_content();
    }
    if (n == 2 && s[1] == "clock" && m == "POST") return advance_clock(req, now);
    if (n == 2 && s[1] == "clock" && m == "GET")
        return json_response(200, json::object{{"now", format_iso8601(now)},
                                               {"offset_ms", offset_.count()}});
    return error_response(404, "Not found");
}

// --- JSON shapes -------------------------------------------------------------
json::object service::asset_json(const asset& a) const
{
    return json::object{{"id", a.id},
                        {"type", a.type},
                        {"name", opt(a.name)},
                        {"filename", opt(a.filename)},
                        {"external_url", opt(a.external_url)},
                        {"content_type", opt(a.content_type)},
                        {"byte_size", a.byte_size},
                        {"watermark_asset", a.watermark_asset},
                        {"autogenerate_licence_key", a.autogenerate_licence_key},
                        {"created_at", format_iso8601(a.created_at)},
                        {"updated_at", format_iso8601(a.updated_at)}};
}

json::object service::asset_summary_json(const asset& a) const
{
    return json::object{{"id", a.id},
                        {"type", a.type},
                        {"name", opt(a.name)},
                        {"filename", opt(a.filename)},
                        {"external_url", opt(a.external_url)},
                        {"content_type", opt(a.content_type)},
                        {"byte_size", a.byte_size},
                        {"created_at", format_iso8601(a.created_at)}};
}

json::object service::attach_summary_json(const asset& a) const
{
    return json::object{{"id", a.id},
                        {"type", a.type},
                        {"name", opt(a.name)},
                        {"filename", opt(a.filename)},
                        {"content_type", opt(a.content_type)},
                        {"byte_size", a.byte_size}};
}

json::object service::digital_product_json(const digital_product& d) const
{
    json::array assets;
    for (const auto& id : d.asset_ids)
        if (auto it = assets_.find(id); it != assets_.end())
            assets.push_back(asset_summary_json(it->second));
    return json::object{{"id", d.id},
                        {"store_product_id", opt(d.store_product_id)},
                        {"store_variant_id", opt(d.store_variant_id)},
                        {"assets", std::move(assets)},
                        {"upsert_always", d.upsert_always},
                        {"custom_message", opt(d.custom_message)},
                        {"preorder_enabled", d.preorder_enabled},
                        {"preorder_launch_date", opt_time(d.preorder_launch_date)},
                        {"preorder_subject", opt(d.preorder_subject)},
                        {"preorder_heading", opt(d.preorder_heading)},
                        {"preorder_description", opt(d.preorder_description)},
                        {"created_at", format_iso8601(d.created_at)},
                        {"updated_at", format_iso8601(d.updated_at)}};
}

json::object service::upload_json(const pending_upload& u, time_point now) const
{
    const header_list headers{{"Content-Type", u.content_type},
                              {"Content-Disposition", content_disposition(u.filename)}};
    json::object h;
    for (const auto& [k, v] : headers)
        h[k] = v;
    return json::object{
        {"method", "PUT"},
        {"url", presign("PUT", u.key, headers, now, cfg_.upload_url_ttl_seconds)},
        {"headers", std::move(h)},
        {"expires_at", format_iso8601(u.expires_at)}};
}

std::string service::host_of_public_url() const
{
    std::string_view u = cfg_.public_url;
    if (auto p = u.find("://"); p != std::string_view::npos)
        u.remove_prefix(p + 3);
    return std::string(u.substr(0, u.find('/')));
}

std::string service::presign(std::string_view method, const std::string& key,
                             const header_list& signed_headers, time_point now,
                             std::int64_t ttl) const
{
    const std::string path = "/storage/" + std::string(bucket) + "/" + uri_encode(key, true);
    std::vector<std::pair<std::string, std::string>> hs{{"host", host_of_public_url()}};
    for (const auto& [k, v] : signed_headers)
        hs.emplace_back(to_lower(k), v);
    // X-Amz-Date has second precision: sign with the truncated time.
    const auto secs = std::chrono::floor<std::chrono::seconds>(now);
    return cfg_.public_url + path + "?" +
           sigv4_presign_query(method, path, hs, time_point{secs}, ttl, creds_);
}

std::int64_t service::footprint(const asset& a)
{
    std::int64_t n = a.byte_size;
    if (a.replacement)
        n = std::max(n, a.replacement->byte_size);
    return n;
}

std::int64_t service::storage_used() const
{
    return storage_used_;
}

std::string service::new_object_key(const std::string& asset_id, const std::string& filename)
{
    std::string safe = filename;
    for (char& c : safe)
        if (c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20)
            c = '_';
    if (safe.empty() || safe == "." || safe == "..")
        safe = "file";
    std::string key = "assets/" + asset_id + "/" + ids_.uuid_v4() + "/" + safe;
    upload_keys_[key] = asset_id;
    return key;
}

void service::remove_file(const std::string& path)
{
    if (path.empty())
        return;
    std::error_code ec;
    std::filesystem::remove(path, ec);
}

// --- assets ------------------------------------------------------------------
namespace {

bool valid_content_type(const std::string& s)
{
    const auto slash = s.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == s.size() || s.size() > 255)
        return false;
    for (unsigned char c : s)
        if (c < 0x20 || c >= 0x7F)
            return false;
    return true;
}

bool has_control(const std::string& s)
{
    return std::any_of(s.begin(), s.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == 0x7F;
    });
}

bool valid_http_url(const std::string& s)
{
    std::string_view v = s;
    std::size_t p = 0;
    if (v.starts_with("https://"))
        p = 8;
    else if (v.starts_with("http://"))
        p = 7;
    else
        return false;
    if (p >= v.size() || v[p] == '/' || v[p] == '?' || v[p] == '#')
        return false;
    return std::none_of(v.begin(), v.end(), [](char c) {
        return static_cast<unsigned char>(c) <= 0x20 || c == 0x7F;
    });
}

// filename derived from the last path segment of a URL
std::optional<std::string> filename_from_url(const std::string& url)
{
    std::string_view v = url;
    v = v.substr(0, v.find_first_of("?#"));
    if (auto p = v.find("://"); p != std::string_view::npos)
        v.remove_prefix(p + 3);
    const auto slash = v.find('/');
    if (slash == std::string_view::npos)
        return std::nullopt;
    v.remove_prefix(slash);
    const auto last = v.rfind('/');
    std::string_view seg = v.substr(last + 1);
    if (seg.empty())
        return std::nullopt;
    // Decoded when that gives UTF-8 text without control characters (like the
    // filename of an internal asset); else the segment as written (ASCII or
    // valid UTF-8: the URL came from a JSON string): "%ff.pdf" stays "%ff.pdf".
    auto d = percent_decode(seg, false);
    if (d && valid_utf8(*d) && !has_control(*d))
        return *d;
    return std::string(seg);
}

std::optional<std::string> guess_content_type(const std::optional<std::string>& filename)
{
    if (!filename)
        return std::nullopt;
    const auto dot = filename->rfind('.');
    if (dot == std::string::npos)
        return std::nullopt;
    const std::string ext = to_lower(filename->substr(dot + 1));
    static const std::pair<const char*, const char*> table[] = {
        {"pdf", "application/pdf"}, {"zip", "application/zip"},   {"epub", "application/epub+zip"},
        {"mp3", "audio/mpeg"},      {"wav", "audio/wav"},         {"mp4", "video/mp4"},
        {"png", "image/png"},       {"jpg", "image/jpeg"},        {"jpeg", "image/jpeg"},
        {"txt", "text/plain"},      {"csv", "text/csv"},          {"json", "application/json"}};
    for (const auto& [e, t] : table)
        if (ext == e)
            return std::string(t);
    return std::nullopt;
}

void check_length(const std::optional<std::string>& v, std::string_view label, std::int64_t max,
                  std::vector<std::string>& errors)
{
    if (v && static_cast<std::int64_t>(v->size()) > max)
        errors.push_back(std::string(label) + " is too long (maximum is " + std::to_string(max) +
                         " characters)");
}

// filename + byte_size + content_type of internal create/replace
struct file_fields {
    std::string filename;
    std::int64_t byte_size = 0;
    std::optional<std::string> content_type;
};

file_fields read_file_fields(const json::object& o, std::vector<std::string>& errors)
{
    file_fields out;
    auto fn = string_field(o, "filename");
    if (fn.state == field_state::bad)
        errors.push_back("Filename is invalid");
    else if (!fn.ok() || blank(fn.value))
        errors.push_back("Filename can't be blank");
    else if (has_control(fn.value))
        errors.push_back("Filename is invalid");
    else
        out.filename = fn.value;
    check_length(fn.ok() ? std::optional<std::string>(fn.value) : std::nullopt, "Filename",
                 max_name_length, errors);

    const auto* bs = o.if_contains("byte_size");
    auto bi = int_field(o, "byte_size");
    if (!bs || bs->is_null())
        errors.push_back("Byte size can't be blank");
    else if (!bs->is_number())
        errors.push_back("Byte size is not a number");
    else if (!bi.ok())
        errors.push_back("Byte size must be an integer");
    else if (bi.value <= 0)
        errors.push_back("Byte size must be greater than 0");
    else if (bi.value > service::max_byte_size)
        errors.push_back("Byte size must be less than or equal to 2147483648");
    else
        out.byte_size = bi.value;

    auto ct = string_field(o, "content_type");
    if (ct.state == field_state::bad || (ct.ok() && !blank(ct.value) && !valid_content_type(ct.value)))
        errors.push_back("Content type is invalid");
    else if (ct.ok() && !blank(ct.value))
        out.content_type = ct.value;
    return out;
}

} // namespace

response service::list_assets(const query_params& q)
{
    std::vector<std::string> errors;
    const auto* type = query_get(q, "type");
    if (type && *type != "external" && *type != "licence")
        errors.push_back("type is invalid");
    const paging p = parse_paging(q, 250, errors);
    if (!errors.empty())
        return errors_response(errors);
    const auto* needle = query_get(q, "q");
    std::vector<const asset*> hits;
    for (const auto& [id, a] : assets_) {
        if (type && a.type != *type)
            continue;
        if (needle && !(a.name && icontains(*a.name, *needle)) &&
            !(a.filename && icontains(*a.filename, *needle)))
            continue;
        hits.push_back(&a);
    }
    sort_newest_first(hits);
    return json_response(200, page_json(hits, p, "assets", [&](const asset& x) { return asset_json(x); }));
}

response service::get_asset(const std::string& id)
{
    return get_one(assets_, id, "Asset", "asset", [&](const asset& x) { return asset_json(x); });
}

response service::create_asset(const request& req, time_point now)
{
    auto root = parse_root(req, "asset");
    if (auto* r = std::get_if<response>(&root))
        return std::move(*r);
    const json::object& o = std::get<json::object>(root);

    std::vector<std::string> errors;
    asset a;
    auto type = string_field(o, "type");
    if (!type.present() || type.state == field_state::null || (type.ok() && blank(type.value))) {
        errors.push_back("Type can't be blank");
        errors.push_back("Type is not included in the list");
    } else if (!type.ok() ||
               (type.value != "internal" && type.value != "external" && type.value != "licence")) {
        errors.push_back("Type is not included in the list");
    } else {
        a.type = type.value;
    }
    auto name = string_field(o, "name");
    if (name.state == field_state::bad)
        errors.push_back("Name is invalid");
    a.name = nullable(name, std::nullopt);
    check_length(a.name, "Name", max_name_length, errors);
    auto wm = bool_field(o, "watermark_asset");
    if (wm.state == field_state::bad)
        errors.push_back("Watermark asset is invalid");
    a.watermark_asset = wm.ok() && wm.value;
    auto ag = bool_field(o, "autogenerate_licence_key");
    if (ag.state == field_state::bad)
        errors.push_back("Autogenerate licence key is invalid");
    a.autogenerate_licence_key = ag.ok() && ag.value;

    file_fields ff;
    if (a.type == "internal") {
        ff = read_file_fields(o, errors);
        a.filename = ff.filename;
        a.byte_size = ff.byte_size;
        a.content_type = ff.content_type.value_or("application/octet-stream");
    } else if (a.type == "external") {
        auto url = string_field(o, "external_url");
        if (url.state == field_state::bad)
            errors.push_back("External url is invalid");
        else if (!url.ok() || blank(url.value))
            errors.push_back("External url can't be blank");
        else if (static_cast<std::int64_t>(url.value.size()) > max_url_length)
            check_length(url.value, "External url", max_url_length, errors);
        else if (!valid_http_url(url.value))
            errors.push_back("External url is invalid");
        else
            a.external_url = url.value;
        a.filename = a.external_url ? filename_from_url(*a.external_url) : std::nullopt;
        a.content_type = guess_content_type(a.filename);
    } else if (a.type == "licence") {
        a.filename = "Licence Key";
        a.content_type = "licence/key";
    }
    if (!errors.empty())
        return errors_response(errors);

    if (static_cast<std::int64_t>(assets_.size()) + 1 > cfg_.quota_asset_count)
        return json_response(422, json::object{{"error", "Asset count limit exceeded"},
                                               {"code", "asset_count_limit_exceeded"}});
    if (storage_used() + a.byte_size > cfg_.quota_storage_bytes)
        return json_response(422, json::object{{"error", "Asset storage limit exceeded"},
                                               {"code", "asset_storage_limit_exceeded"}});

    a.id = ids_.uuid_v4();
    a.seq = ++seq_;
    a.created_at = a.updated_at = now;
    json::object out;
    if (a.type == "internal") {
        pending_upload u{new_object_key(a.id, *a.filename), *a.filename, *a.content_type,
                         a.byte_size, std::chrono::floor<std::chrono::seconds>(now) + std::chrono::seconds(cfg_.upload_url_ttl_seconds)};
        a.object_key = u.key;
        out["asset"] = asset_json(a);
        out["upload"] = upload_json(u, now);
    } else {
        out["asset"] = asset_json(a);
    }
    storage_used_ += footprint(a);
    assets_.emplace(a.id, std::move(a));
    return json_response(201, out);
}

response service::update_asset(const std::string& id, const request& req, time_point now)
{
    auto it = assets_.find(id);
    if (it == assets_.end())
        return not_found("Asset");
    auto root = parse_root(req, "asset");
    if (auto* r = std::get_if<response>(&root))
        return std::move(*r);
    const json::object& o = std::get<json::object>(root);
    asset a = it->second;
    std::vector<std::string> errors;

    auto name = string_field(o, "name");
    if (name.state == field_state::bad)
        errors.push_back("Name is invalid");
    a.name = nullable(name, a.name);
    if (name.present())
        check_length(a.name, "Name", max_name_length, errors);
    auto url = string_field(o, "external_url");
    if (url.present()) {
        if (a.type != "external") {
            errors.push_back("External url can only be set on external assets");
        } else if (url.state == field_state::bad) {
            errors.push_back("External url is invalid");
        } else if (!url.ok() || blank(url.value)) {
            errors.push_back("External url can't be blank");
        } else if (static_cast<std::int64_t>(url.value.size()) > max_url_length) {
            check_length(url.value, "External url", max_url_length, errors);
        } else if (!valid_http_url(url.value)) {
            errors.push_back("External url is invalid");
        } else {
            a.external_url = url.value;
            a.filename = filename_from_url(url.value);
            a.content_type = guess_content_type(a.filename);
        }
    }
    auto wm = bool_field(o, "watermark_asset");
    if (wm.state == field_state::bad || wm.state == field_state::null)
        errors.push_back("Watermark asset is invalid");
    else if (wm.ok())
        a.watermark_asset = wm.value;
    auto ag = bool_field(o, "autogenerate_licence_key");
    if (ag.state == field_state::bad || ag.state == field_state::null)
        errors.push_back("Autogenerate licence key is invalid");
    else if (ag.ok())
        a.autogenerate_licence_key = ag.value;
    if (!errors.empty())
        return errors_response(errors);
    const asset& old = it->second;
    // Like Rails: updated_at moves only when a value changes ({"asset":{}} changes nothing).
    if (a.name != old.name || a.external_url != old.external_url || a.filename != old.filename ||
        a.content_type != old.content_type || a.watermark_asset != old.watermark_asset ||
        a.autogenerate_licence_key != old.autogenerate_licence_key)
        a.updated_at = now;
    it->second = std::move(a);
    return json_response(200, json::object{{"asset", asset_json(it->second)}});
}

response service::delete_asset(const std::string& id)
{
    auto it = assets_.find(id);
    if (it == assets_.end())
        return not_found("Asset");
    asset& a = it->second;
    remove_file(a.file_path);
    upload_keys_.erase(a.object_key);
    if (a.replacement)
        upload_keys_.erase(a.replacement->key);
    for (auto& [dpid, d] : digital_products_)
        std::erase(d.asset_ids, id);
    for (auto& [oid, o] : orders_)
        std::erase(o.attached_asset_ids, id);
    for (auto e = entries_.begin(); e != entries_.end();) {
        if (e->second.asset_id == id) {
            remove_file(e->second.watermark_path);
            entry_keys_.erase(e->second.id);
            e = entries_.erase(e);
        } else {
            ++e;
        }
    }
    storage_used_ -= footprint(it->second);
    assets_.erase(it);
    return no_content();
}

response service::replace_asset(const std::string& id, const request& req, time_point now)
{
    auto it = assets_.find(id);
    if (it == assets_.end())
        return not_found("Asset");
    asset& a = it->second;
    if (a.type != "internal")
        return error_response(422, "Only internal assets can have their file replaced");
    auto root = parse_root(req, "asset");
    if (auto* r = std::get_if<response>(&root))
        return std::move(*r);
    std::vector<std::string> errors;
    file_fields ff = read_file_fields(std::get<json::object>(root), errors);
    if (!errors.empty())
        return errors_response(errors);
    const std::int64_t others = storage_used() - footprint(a);
    const std::int64_t growth = std::max<std::int64_t>(0, ff.byte_size - a.byte_size);
    if (others + a.byte_size + growth > cfg_.quota_storage_bytes)
        return json_response(422, json::object{{"error", "Asset storage limit exceeded"},
                                               {"code", "asset_storage_limit_exceeded"}});
    if (a.replacement)
        upload_keys_.erase(a.replacement->key);
    pending_upload u{new_object_key(a.id, ff.filename), ff.filename,
                     ff.content_type.value_or(a.content_type.value_or("application/octet-stream")),
                     ff.byte_size, std::chrono::floor<std::chrono::seconds>(now) + std::chrono::seconds(cfg_.upload_url_ttl_seconds)};
    storage_used_ -= footprint(a);
    a.replacement = u;
    storage_used_ += footprint(a);
    return json_response(200, json::object{{"asset", asset_json(a)}, {"upload", upload_json(u, now)}});
}

// --- digital products ----------------------------------------------------------
namespace {

struct dp_input {
    std::vector<std::string> errors;
    bool launch_date_given = false;
};

// Shared by create and update: applies the fields present in o onto d.
template <class Exists, class DP>
void apply_dp_fields(const json::object& o, bool creating, Exists asset_exists, DP& d, dp_input& in)
{
    auto& errors = in.errors;
    if (creating) {
        auto sp = int_field(o, "store_product_id");
        if (!sp.present() || sp.state == field_state::null)
            errors.push_back("Store product can't be blank");
        else if (!sp.ok())
            errors.push_back("Store product is not a number");
        else
            d.store_product_id = sp.value;
        auto sv = int_field(o, "store_variant_id");
        if (sv.state == field_state::bad)
            errors.push_back("Store variant is not a number");
        else if (sv.ok())
            d.store_variant_id = sv.value;
    }
    if (const auto* ids = o.if_contains("asset_ids"); ids || creating) {
        const json::array* arr = ids ? ids->if_array() : nullptr;
        if (!arr || arr->empty()) {
            errors.push_back("Asset ids can't be blank");
        } else {
            std::vector<std::string> list;
            bool unknown = false;
            for (const auto& v : *arr) {
                if (!v.is_string() || !asset_exists(std::string(v.get_string()))) {
                    unknown = true;
                    continue;
                }
                std::string s(v.get_string());
                if (std::find(list.begin(), list.end(), s) == list.end())
                    list.push_back(std::move(s));
            }
            if (unknown)
                errors.push_back("Asset ids contain unknown assets");
            else
                d.asset_ids = std::move(list);
        }
    }
    auto ua = bool_field(o, "upsert_always");
    if (ua.state == field_state::bad)
        errors.push_back("Upsert always is invalid");
    else if (ua.ok())
        d.upsert_always = ua.value;
    auto pe = bool_field(o, "preorder_enabled");
    if (pe.state == field_state::bad)
        errors.push_back("Preorder enabled is invalid");
    else if (pe.ok())
        d.preorder_enabled = pe.value;
    else if (pe.state == field_state::null)
        d.preorder_enabled = false;
    auto text = [&](const char* key, std::optional<std::string>& target) {
        auto f = string_field(o, key);
        if (f.state == field_state::bad)
            errors.push_back(humanize(key) + " is invalid");
        else
            target = nullable(f, target);
    };
    text("custom_message", d.custom_message);
    text("preorder_subject", d.preorder_subject);
    text("preorder_heading", d.preorder_heading);
    text("preorder_description", d.preorder_description);
    auto ld = string_field(o, "preorder_launch_date");
    if (ld.state == field_state::bad) {
        errors.push_back("Preorder launch date is invalid");
    } else if (ld.state == field_state::null) {
        d.preorder_launch_date.reset();
    } else if (ld.ok()) {
        if (auto t = parse_iso8601(ld.value)) {
            d.preorder_launch_date = *t;
            in.launch_date_given = true;
        } else if (blank(ld.value)) {
            d.preorder_launch_date.reset();
        } else {
            errors.push_back("Preorder launch date is invalid");
        }
    }
}

template <class DP>
void check_preorder(const DP& d, bool check_lead, time_point now, std::vector<std::string>& errors)
{
    if (d.preorder_enabled) {
        if (!d.preorder_launch_date)
            errors.push_back("Preorder launch date can't be blank");
        if (!d.custom_message || blank(*d.custom_message))
            errors.push_back("Custom message can't be blank");
    }
    if (check_lead && d.preorder_launch_date && *d.preorder_launch_date < now + std::chrono::hours(2))
        errors.push_back("Preorder launch date must be in the future");
}
} // namespace

response service::list_digital_products(const query_params& q)
{
    std::vector<std::string> errors;
    std::optional<std::int64_t> sp;
    if (const auto* v = query_get(q, "store_product_id")) {
        sp = parse_int64(*v);
        if (!sp)
            errors.push_back("store_product_id is invalid");
    }
    const paging p = parse_paging(q, 100, errors);
    if (!errors.empty())
        return errors_response(errors);
    std::vector<const digital_product*> hits;
    for (const auto& [id, d] : digital_products_)
        if (!sp || d.store_product_id == sp)
            hits.push_back(&d);
    sort_newest_first(hits);
    return json_response(200, page_json(hits, p, "digital_products", [&](const digital_product& x) { return digital_product_json(x); }));
}

response service::get_digital_product(const std::string& id)
{
    return get_one(digital_products_, id, "Digital product", "digital_product",
                   [&](const digital_product& x) { return digital_product_json(x); });
}

response service::create_digital_product(const request& req, time_point now)
{
    auto root = parse_root(req, "digital_product");
    if (auto* r = std::get_if<response>(&root))
        return std::move(*r);
    digital_product d;
    dp_input in;
    apply_dp_fields(std::get<json::object>(root), true,
                    [this](const std::string& id) { return assets_.count(id) > 0; }, d, in);
    check_preorder(d, in.launch_date_given, now, in.errors);
    if (!in.errors.empty())
        return errors_response(in.errors);
    d.id = ids_.uuid_v4();
    d.seq = ++seq_;
    d.created_at = d.updated_at = now;
    d.preorder_launched = d.preorder_launch_date && *d.preorder_launch_date <= now;
    auto out = digital_product_json(d);
    digital_products_.emplace(d.id, std::move(d));
    return json_response(201, json::object{{"digital_product", std::move(out)}});
}

response service::update_digital_product(const std::string& id, const request& req, time_point now)
{
    auto it = digital_products_.find(id);
    if (it == digital_products_.end())
        return not_found("Digital product");
    auto root = parse_root(req, "digital_product");
    if (auto* r = std::get_if<response>(&root))
        return std::move(*r);
    digital_product d = it->second;
    dp_input in;
    apply_dp_fields(std::get<json::object>(root), false,
                    [this](const std::string& aid) { return assets_.count(aid) > 0; }, d, in);
    const bool newly_enabled = d.preorder_enabled && !it->second.preorder_enabled;
    check_preorder(d, in.launch_date_given || newly_enabled, now, in.errors);
    if (!in.errors.empty())
        return errors_response(in.errors);
    if (d.preorder_launch_date != it->second.preorder_launch_date || newly_enabled)
        d.preorder_launched = d.preorder_launch_date && *d.preorder_launch_date <= now;
    const digital_product& old = it->second;
    if (d.asset_ids != old.asset_ids || d.upsert_always != old.upsert_always ||
        d.custom_message != old.custom_message || d.preorder_enabled != old.preorder_enabled ||
        d.preorder_launch_date != old.preorder_launch_date || d.preorder_subject != old.preorder_subject ||
        d.preorder_heading != old.preorder_heading || d.preorder_description != old.preorder_description)
        d.updated_at = now;
    it->second = std::move(d);
    return json_response(200, json::object{{"digital_product", digital_product_json(it->second)}});
}

response service::delete_digital_product(const std::string& id)
{
    auto it = digital_products_.find(id);
    if (it == digital_products_.end())
        return not_found("Digital product");
    digital_products_.erase(it);
    return no_content();
}

} // namespace dd_sandbox
