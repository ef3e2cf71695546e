// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// digital-delivery-sandbox: several isolated stores in one process. The
// registry owns the default store (configured by the command line) and the
// stores created with POST /sandbox/stores, and routes every request to one of
// them:
//   - /stores/<id>/storage/... (the presigned URLs of a created store, whose
//     public_url is <origin>/stores/<id>): to that store, without the prefix;
//     an unknown store id is S3's 404 NoSuchKey;
//   - /sandbox/stores[/<id>]: creating and deleting stores (default store's key);
//   - /stores/<id>/download-page/...: the buyer's download page of that store;
//   - /sandbox/ui/...: the store pages behind a session (one API-key entry, then
//     an HttpOnly SameSite=Strict cookie; every POST carries the session's CSRF
//     token), for the store whose key was entered;
//   - everything else by X-Auth-Token to the store with that API key; an unknown
//     or missing key, and /storage/..., go to the default store (which answers
//     401 where a key is needed).
// Sans-io like service; not thread-safe (the front end is single-threaded).
#pragma once

#include "service.hpp"

#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>

namespace dd_sandbox {

// What the front end reports about the process (GET /sandbox/server).
struct server_state {
    std::optional<std::int64_t> max_open_files;  // soft RLIMIT_NOFILE; none: unlimited
    std::uint64_t accept_errors = 0;  // failed accept() calls (EMFILE, ENFILE, ...)
    std::uint64_t accept_waits = 0;   // waits (accept_retry_delay) started after one
    bool accepting = true;            // false while waiting after a failed accept
    std::int64_t connections = 0;     // open client connections
};

class store_registry {
public:
    // default_cfg configures the default store; its public_url is the origin of
    // the created stores (their public_url is <origin>/stores/<id>) and their
    // data directories are <data_dir>/stores/<id>.
    store_registry(sandbox_config default_cfg, time_point start);
    // Removes the data directories of the created stores that are left.
    ~store_registry();
    store_registry(const store_registry&) = delete;
    store_registry& operator=(const store_registry&) = delete;

    // Every request except a storage PUT streamed by the front end (see begin_upload).
    response handle(const request& req, time_point now);

    // The same two-phase upload as service's, for the default store's /storage/
    // and the created stores' /stores/<id>/storage/.
    static bool is_storage_upload(std::string_view method, std::string_view target);
    std::variant<response, upload_ticket> begin_upload(const request& header_only, time_point now);
    response finish_upload(const upload_ticket& t, std::uint64_t received, time_point now);
    void abort_upload(const upload_ticket& t);

    static constexpr std::string_view default_id = "default";

    service& default_store() { return *default_; }
    // The store with this id ("default" for the default store), or null.
    service* find(std::string_view id);
    std::size_t created_count() const { return stores_.size(); }
    std::size_t session_count() const { return sessions_.size(); }
    static constexpr std::string_view session_cookie = "dd_sandbox_session";
    static constexpr std::string_view login_cookie = "dd_sandbox_login";
    // Scheme://host[:port][/path] of the default store: base of every store's URLs.
    const std::string& origin() const { return default_->config().public_url; }
    // Kept up to date by the front end.
    server_state& server() { return server_; }

private:
    struct store {
        std::unique_ptr<service> svc;
        std::string dir;
        std::string key_hash;
    };
    response manage(const request& req, std::string_view path, time_point now);
    response create_store(const request& req, time_point now);
    response delete_store(const std::string& id);
    // The store a /stores/<id>/... target names, and the target without the prefix.
    struct prefixed {
        service* svc = nullptr;
        std::string id;
        std::string target;
    };
    std::optional<prefixed> resolve_prefixed(std::string_view target);
    service& by_token(const request& req);
    std::string new_api_key(const std::string& id);

    response server_info(const request& req) const;

    // The store pages: login, logout, sessions, CSRF; the pages themselves are the
    // service's (service::ui).
    struct ui_session {
        std::string store_id;
        std::string csrf;
    };
    response ui(const request& req, std::string_view path, time_point now);
    response login_page(int status, std::string_view error);
    std::unordered_map<std::string, ui_session> sessions_;  // sha256(cookie) -> session
    std::uint64_t sessions_created_ = 0;

    server_state server_;
    std::unique_ptr<service> default_;
    std::map<std::string, store, std::less<>> stores_;                  // id -> store
    std::unordered_map<std::string, std::string> keys_;  // sha256(api key) -> id
    std::uint64_t next_id_ = 1;
    std::random_device random_;
};

} // namespace dd_sandbox
