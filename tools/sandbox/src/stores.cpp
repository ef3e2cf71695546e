// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Several isolated stores in one process: routing, POST/DELETE /sandbox/stores.
#include "stores.hpp"

#include "detail.hpp"
#include "html.hpp"
#include "options.hpp"

#include <cstdio>
#include <filesystem>
#include <system_error>

namespace dd_sandbox {

namespace json = boost::json;
namespace fs = std::filesystem;
using namespace detail;

namespace {

constexpr std::string_view stores_prefix = "/stores/";
constexpr std::string_view storage_prefix = "/storage/";
constexpr std::string_view manage_path = "/sandbox/stores";
constexpr std::string_view server_path = "/sandbox/server";
constexpr std::string_view page_prefix = "/download-page/";
constexpr std::size_t max_sessions = 10000;

std::string key_hash(std::string_view api_key)
{
    return sha256(api_key);
}

// What the storage answers for an object it does not have.
response no_such_key(std::string_view resource)
{
    response r;
    r.status = 404;
    r.headers.emplace_back("Content-Type", "application/xml");
    r.body = service::s3_error_xml("NoSuchKey", "The specified key does not exist.", resource);
    return r;
}

bool has_control(std::string_view s)
{
    for (unsigned char c : s)
        if (c < 0x20 || c == 0x7F)
            return true;
    return false;
}

} // namespace

store_registry::store_registry(sandbox_config default_cfg, time_point start)
    : default_(std::make_unique<service>(std::move(default_cfg), start))
{
    keys_[key_hash(default_->config().api_key)] = std::string(default_id);
}

store_registry::~store_registry()
{
    for (auto& [id, s] : stores_) {
        s.svc.reset();
        std::error_code ec;
        fs::remove_all(s.dir, ec);
    }
    if (!stores_.empty()) {
        std::error_code ec;
        fs::remove(fs::path(default_->config().data_dir) / "stores", ec);  // only when empty
    }
}

service* store_registry::find(std::string_view id)
{
    if (id == default_id)
        return default_.get();
    auto it = stores_.find(id);
    return it == stores_.end() ? nullptr : it->second.svc.get();
}

bool store_registry::is_storage_upload(std::string_view method, std::string_view target)
{
    return method == "PUT" && (target.starts_with(storage_prefix) || target.starts_with(stores_prefix));
}

std::optional<store_registry::prefixed> store_registry::resolve_prefixed(std::string_view target)
{
    // /stores/<id>/storage/...[?query]
    std::string_view rest = target.substr(stores_prefix.size());
    const auto slash = rest.find('/');
    if (slash == std::string_view::npos)
        return std::nullopt;
    const std::string_view id = rest.substr(0, slash);
    rest.remove_prefix(slash);
    if (!rest.starts_with(storage_prefix) && !rest.starts_with(page_prefix))
        return std::nullopt;
    auto it = stores_.find(id);
    if (it == stores_.end())
        return std::nullopt;
    return prefixed{it->second.svc.get(), it->first, std::string(rest)};
}

service& store_registry::by_token(const request& req)
{
    if (const std::string* token = req.header("X-Auth-Token")) {
        auto k = keys_.find(key_hash(*token));
        if (k != keys_.end())
            if (service* s = find(k->second))
                return *s;
    }
    return *default_;
}

response store_registry::handle(const request& req, time_point now)
{
    const std::string_view target = req.target;
    const std::string_view path = target.substr(0, target.find('?'));
    if (path.starts_with(stores_prefix)) {
        auto p = resolve_prefixed(target);
        if (!p)
            return no_such_key(path);
        request inner = req;
        inner.target = std::move(p->target);
        return p->svc->handle(inner, now);
    }
    if (path.starts_with(storage_prefix))
        return default_->handle(req, now);
    if (path == manage_path || (path.starts_with(manage_path) && path[manage_path.size()] == '/'))
        return manage(req, path, now);
    if (path == server_path && req.method == "GET")
        return server_info(req);
    if (path == service::ui_base || path.starts_with(std::string(service::ui_base) + "/"))
        return ui(req, path, now);
    return by_token(req).handle(req, now);
}

std::variant<response, upload_ticket> store_registry::begin_upload(const request& req, time_point now)
{
    const std::string_view target = req.target;
    if (target.starts_with(stores_prefix)) {
        auto p = resolve_prefixed(target);
        if (!p) {
            response r = no_such_key(target.substr(0, target.find('?')));
            r.close = true;  // like every refusal of a PUT from its header
            return r;
        }
        request inner = req;
        inner.target = std::move(p->target);
        auto begun = p->svc->begin_upload(inner, now);
        if (auto* t = std::get_if<upload_ticket>(&begun))
            t->store_id = p->id;
        return begun;
    }
    auto begun = default_->begin_upload(req, now);
    if (auto* t = std::get_if<upload_ticket>(&begun))
        t->store_id = std::string(default_id);
    return begun;
}

response store_registry::finish_upload(const upload_ticket& t, std::uint64_t received, time_point now)
{
    service* s = t.store_id.empty() ? default_.get() : find(t.store_id);
    if (!s) {  // the store was deleted while the body was on its way
        abort_upload(t);
        return no_such_key(std::string(stores_prefix) + t.store_id + "/storage/" +
                           std::string(service::bucket) + "/" + t.key);
    }
    return s->finish_upload(t, received, now);
}

void store_registry::abort_upload(const upload_ticket& t)
{
    if (service* s = t.store_id.empty() ? default_.get() : find(t.store_id)) {
        s->abort_upload(t);
    } else if (!t.temp_path.empty()) {
        std::error_code ec;
        fs::remove(t.temp_path, ec);
    }
}

response store_registry::manage(const request& req, std::string_view path, time_point now)
{
    const std::string* token = req.header("X-Auth-Token");
    if (!token || !constant_time_equals(*token, default_->config().api_key))
        return error_response(401, "Invalid API key");
    if (path == manage_path) {
        if (req.method == "POST")
            return create_store(req, now);
    } else {
        const std::string_view id = path.substr(manage_path.size() + 1);
        if (!id.empty() && id.find('/') == std::string_view::npos && req.method == "DELETE")
            return delete_store(std::string(id));
    }
    return error_response(404, "Not found");
}

response store_registry::server_info(const request& req) const
{
    const std::string* token = req.header("X-Auth-Token");
    if (!token || !constant_time_equals(*token, default_->config().api_key))
        return error_response(401, "Invalid API key");
    return json_response(200, json::object{{"max_open_files", opt(server_.max_open_files)},
                                           {"connections", server_.connections},
                                           {"accepting", server_.accepting},
                                           {"accept_errors", server_.accept_errors},
                                           {"accept_waits", server_.accept_waits}});
}

std::string store_registry::new_api_key(const std::string& id)
{
    for (;;) {
        const std::uint64_t r = (static_cast<std::uint64_t>(random_()) << 32) ^ random_();
        char buf[17];
        std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(r));
        std::string key = "store-" + id + "-" + buf;
        if (!keys_.contains(key_hash(key)))
            return key;
    }
}

response store_registry::create_store(const request& req, time_point now)
{
    auto body = parse_body(req);
    if (auto* r = std::get_if<response>(&body))
        return std::move(*r);
    const json::value& v = std::get<json::value>(body);
    static const json::object no_fields;
    const json::object* o = v.is_null() ? &no_fields : v.if_object();
    if (!o)
        return error_response(400, "Malformed JSON body");

    std::vector<std::string> args;
    if (const auto* opts = o->if_contains("options"); opts && !opts->is_null()) {
        const auto* arr = opts->if_array();
        if (!arr)
            return errors_response({"options must be an array of strings"});
        for (const auto& e : *arr) {
            if (!e.is_string())
                return errors_response({"options must be an array of strings"});
            args.emplace_back(e.get_string());
        }
    }
    sandbox_config cfg;  // the built-in defaults, not the default store's
    if (auto err = parse_options(args, cfg, nullptr))
        return errors_response({*err});

    std::optional<std::string> api_key;
    if (const auto* k = o->if_contains("api_key"); k && !k->is_null()) {
        if (!k->is_string() || k->get_string().empty())
            return errors_response({"api_key must be a non-empty string"});
        if (has_control(k->get_string()))
            return errors_response({"api_key must not contain control characters"});
        api_key = std::string(k->get_string());
        if (keys_.contains(key_hash(*api_key)))
            return error_response(409, "api_key is already in use");
    }

    // Appended, not "s" + std::to_string(...): g++ 12 at -O3 (Release) reports a
    // false -Wrestrict on that operator+ (an insert at the front).
    std::string id(1, 's');
    id += std::to_string(next_id_);
    cfg.api_key = api_key ? *api_key : new_api_key(id);
    cfg.public_url = origin() + std::string(stores_prefix) + id;
    cfg.data_dir = (fs::path(default_->config().data_dir) / "stores" / id).string();
    // cfg.storage_secret: --storage-secret of the options, else empty: random
    // (service), so that a store never accepts another's presigned URLs (stores
    // with the same --seed have the same ids and object keys).
    std::error_code ec;
    fs::remove_all(cfg.data_dir, ec);  // left over by an earlier process with this --data-dir
    ec.clear();
    fs::create_directories(cfg.data_dir, ec);
    if (ec)
        return error_response(500, "Cannot create the store's data directory: " + ec.message());
    ++next_id_;

    store s;
    s.dir = cfg.data_dir;
    s.key_hash = key_hash(cfg.api_key);
    json::object out{{"id", id},
                     {"api_key", cfg.api_key},
                     {"base_url", origin() + "/api/v1/external"}};
    s.svc = std::make_unique<service>(std::move(cfg), now);
    keys_[s.key_hash] = id;
    stores_.emplace(id, std::move(s));
    return json_response(201, json::object{{"store", std::move(out)}});
}

response store_registry::delete_store(const std::string& id)
{
    if (id == default_id)
        return error_response(422, "The default store cannot be deleted");
    auto it = stores_.find(id);
    if (it == stores_.end())
        return not_found("Store");
    keys_.erase(it->second.key_hash);
    const std::string dir = std::move(it->second.dir);
    stores_.erase(it);
    std::error_code ec;
    fs::remove_all(dir, ec);
    return no_content();
}

// --- the store pages: one API-key entry, then a session ------------------------------
namespace {

// The value of cookie `name` in the request's Cookie headers, or null.
std::optional<std::string> cookie(const request& req, std::string_view name)
{
    for (const auto& [k, v] : req.headers) {
        if (!iequals(k, "Cookie"))
            continue;
        std::string_view rest = v;
        while (!rest.empty()) {
            const auto semi = rest.find(';');
            std::string_view pair = rest.substr(0, semi);
            rest = semi == std::string_view::npos ? std::string_view{} : rest.substr(semi + 1);
            while (!pair.empty() && pair.front() == ' ')
                pair.remove_prefix(1);
            const auto eq = pair.find('=');
            if (eq != std::string_view::npos && pair.substr(0, eq) == name)
                return std::string(pair.substr(eq + 1));
        }
    }
    return std::nullopt;
}

std::string set_cookie(std::string_view name, std::string_view value, bool secure, bool remove = false)
{
    std::string c = std::string(name) + "=" + std::string(value) + "; Path=" +
                    std::string(service::ui_base) + "; HttpOnly; SameSite=Strict";
    if (secure)
        c += "; Secure";
    if (remove)
        c += "; Max-Age=0";
    return c;
}

response refused(std::string_view why)
{
    return html::page("Request refused",
                      "<h1>Request refused</h1>\n<p>" + html::escape(why) + "</p>\n<p><a href=\"" +
                          std::string(service::ui_base) + "/\">Back to the store pages</a></p>\n",
                      403);
}

} // namespace

response store_registry::login_page(int status, std::string_view error)
{
    const std::string token = random_hex(16);
    std::string b = "<h1>Sandbox store pages</h1>\n";
    b += "<p>Enter a store's API key (the X-Auth-Token of its API requests) to see its outbox, "
         "assets, digital products and orders. The key is sent once, in this form's body; the "
         "pages then use a session cookie.</p>\n";
    if (!error.empty())
        b += "<p class=\"error\" role=\"alert\">" + html::escape(error) + "</p>\n";
    b += "<form method=\"post\" action=\"" + std::string(service::ui_base) + "/login\" class=\"card\">"
         "<input type=\"hidden\" name=\"csrf\" value=\"" + token + "\">"
         "<label for=\"api_key\">API key</label>"
         "<input id=\"api_key\" name=\"api_key\" type=\"password\" autocomplete=\"off\" required>"
         "<p><button class=\"button\" type=\"submit\">Open the store pages</button></p></form>\n";
    response r = html::page("Sandbox store pages", b, status);
    r.headers.emplace_back("Set-Cookie", set_cookie(login_cookie, token, origin().starts_with("https:")));
    return r;
}

response store_registry::ui(const request& req, std::string_view path, time_point now)
{
    const std::string base(service::ui_base);
    const bool secure = origin().starts_with("https:");
    const std::string_view sub = path.substr(base.size());
    const std::string_view target = req.target;
    const auto qpos = target.find('?');
    const bool post = req.method == "POST";
    std::optional<query_params> form = post ? parse_query(req.body, true)
                                            : parse_query(qpos == std::string_view::npos
                                                              ? std::string_view{}
                                                              : target.substr(qpos + 1),
                                                          true);
    if (!form)
        return html::page("Bad request", "<h1>Bad request</h1>\n<p>The form could not be read.</p>\n",
                          400);
    auto field = [&](std::string_view name) -> std::string {
        const std::string* v = query_get(*form, name);
        return v ? *v : std::string();
    };

    // The session of the request, if any and if its store still exists.
    std::string session_hash;
    ui_session* session = nullptr;
    if (auto id = cookie(req, session_cookie); id && !id->empty()) {
        session_hash = sha256(*id);
        if (auto it = sessions_.find(session_hash); it != sessions_.end()) {
            if (find(it->second.store_id))
                session = &it->second;
            else
                sessions_.erase(it);  // its store was deleted
        }
    }

    if (sub == "/login") {
        if (req.method == "GET" || req.method == "HEAD")
            return session ? html::see_other(base + "/") : login_page(200, {});
        if (!post)
            return refused("Method not allowed.");
        // Login CSRF: the form's token must be the one set with the form (double submit).
        const auto expected = cookie(req, login_cookie);
        const std::string given = field("csrf");
        if (!expected || expected->empty() || !constant_time_equals(*expected, given))
            return refused("The form's token is missing or does not match: open the login page again.");
        const std::string key = field("api_key");
        auto k = key.empty() ? keys_.end() : keys_.find(key_hash(key));
        if (k == keys_.end() || !find(k->second))
            return login_page(401, "This API key is not the key of a store of this sandbox.");
        if (sessions_.size() >= max_sessions)
            sessions_.erase(sessions_.begin());
        const std::string id = random_hex(32);
        sessions_[sha256(id)] = ui_session{k->second, random_hex(32)};
        ++sessions_created_;
        response r = html::see_other(base + "/");
        r.headers.emplace_back("Set-Cookie", set_cookie(session_cookie, id, secure));
        r.headers.emplace_back("Set-Cookie", set_cookie(login_cookie, "", secure, true));
        return r;
    }
    if (!session) {
        if (req.method == "GET" || req.method == "HEAD")
            return html::see_other(base + "/login");
        return refused("There is no session: log in with the store's API key first.");
    }
    if (post) {
        // Every state-changing form carries the session's token.
        if (!constant_time_equals(field("csrf"), session->csrf))
            return refused("The form's token is missing or stale: reload the page and try again.");
        if (sub == "/logout") {
            sessions_.erase(session_hash);
            response r = html::see_other(base + "/login");
            r.headers.emplace_back("Set-Cookie", set_cookie(session_cookie, "", secure, true));
            return r;
        }
    }
    service* svc = find(session->store_id);
    return svc->ui(req, sub, *form, session->csrf, now);
}

} // namespace dd_sandbox
