// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// digital-delivery-sandbox: the sans-io core. Every piece of behaviour (routing,
// auth, rate limit, validation, pagination, state, quotas, storage signatures,
// downloads, watermarking, outbox) lives here; the caller passes parsed
// requests and the current time and gets responses back. No sockets, no sleeps.
#pragma once

#include "common.hpp"

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace dd_sandbox {

struct sandbox_config {
    std::string api_key = "sandbox-key";
    std::string public_url = "http://127.0.0.1";  // scheme://host[:port], no trailing slash
    std::string data_dir;                          // where uploaded files live (must exist)
    double rate_limit_points = 40;
    double rate_limit_window_seconds = 60;
    bool rate_limit = true;
    std::int64_t quota_storage_bytes = 10LL * 1024 * 1024 * 1024;
    std::int64_t quota_asset_count = 1000;
    std::uint64_t seed = 42;
    int seed_orders = 1000;
    bool watermark = true;
    std::int64_t watermark_delay_ms = 2000;
    std::optional<std::int64_t> download_days;
    std::optional<std::int64_t> download_limit;
    std::int64_t upload_url_ttl_seconds = 3600;
    std::int64_t download_url_ttl_seconds = 300;
    std::string shop_name = "Sandbox Store";
    // SigV4 secret of the presigned storage URLs (--storage-secret); empty: 32
    // random bytes drawn when the store is created, so that no two stores (of
    // one process or of two) accept each other's URLs and nobody can sign one
    // from the seed.
    std::string storage_secret;
};

using header_list = std::vector<std::pair<std::string, std::string>>;

struct request {
    std::string method;  // "GET", "POST", ...
    std::string target;  // origin-form: path[?query], as received
    header_list headers;
    std::string body;
    const std::string* header(std::string_view name) const;
};

struct response {
    int status = 200;
    header_list headers;
    std::string body;
    // When set, the body is this file (streamed by the front end), of file_size bytes.
    std::string file_path;
    std::uint64_t file_size = 0;
    bool close = false;  // close the connection after the response
    const std::string* header(std::string_view name) const;
};

// A storage PUT whose header was accepted: the front end streams exactly
// `length` bytes into `temp_path`, then calls finish_upload (or abort_upload).
struct upload_ticket {
    std::string store_id;  // set by store_registry: the store that accepted it
    std::string asset_id;
    std::string key;
    std::string temp_path;
    std::uint64_t length = 0;
    bool expect_continue = false;
};

class token_bucket {
public:
    token_bucket(double capacity, double window_seconds);
    struct decision {
        bool allowed;
        std::int64_t limit;
        std::int64_t remaining;
        std::int64_t reset_unix;   // when the bucket is full again
        std::int64_t retry_after;  // seconds, when !allowed
    };
    decision take(double cost, time_point now);

private:
    void refill(time_point now);
    double capacity_;
    double rate_;  // points per second
    double tokens_;
    std::optional<time_point> last_;
};

class service {
public:
    service(sandbox_config cfg, time_point start);
    ~service();
    service(const service&) = delete;
    service& operator=(const service&) = delete;

    // Every request except a storage PUT (see begin_upload).
    response handle(const request& req, time_point now);

    static bool is_storage_upload(std::string_view method, std::string_view target);
    // Header-only phase of a storage PUT: signature, expiry, lengths checked here.
    std::variant<response, upload_ticket> begin_upload(const request& header_only, time_point now);
    // `received` = bytes actually written to ticket.temp_path.
    response finish_upload(const upload_ticket& t, std::uint64_t received, time_point now);
    void abort_upload(const upload_ticket& t);

    const sandbox_config& config() const { return cfg_; }

    // --- pages (service_pages.cpp) -------------------------------------------------
    // The hosted download page of an order: <public_url>/download-page/<order id>/<token>,
    // the token an HMAC of the order id under the store's storage secret (no API key:
    // the link is the buyer's capability). Empty for an unknown order.
    std::string download_page_url(const std::string& order_id) const;
    // Whether a target is one of the buyer's pages (served without an API key).
    static bool is_download_page(std::string_view path);

    // The store's pages (outbox, assets, products, orders, clock) for a session that
    // the store_registry has authenticated; `csrf` is the session's token, which
    // every state-changing form carries (the registry checked it on a POST).
    // `sub` is the path under /sandbox/ui ("" or "/outbox", ...), `form` the
    // decoded query (GET) or form body (POST); `now` the machine's time, as for handle.
    response ui(const request& req, std::string_view sub, const query_params& form,
                std::string_view csrf, time_point now);
    static constexpr std::string_view ui_base = "/sandbox/ui";
    time_point effective_now(time_point now) const { return now + offset_; }

    // S3 XML error body.
    static std::string s3_error_xml(std::string_view code, std::string_view message,
                                    std::string_view resource, std::string_view extra_xml = {});

    static constexpr std::string_view bucket = "sandbox-assets";
    static constexpr std::int64_t max_byte_size = 2147483648LL;
    // POST /sandbox/clock cannot move the clock past 9999-12-31T23:59:59.999Z.
    static constexpr std::int64_t max_clock_ms = 253402300799999LL;

private:
    struct pending_upload {
        std::string key;
        std::string filename;
        std::string content_type;
        std::int64_t byte_size = 0;
        time_point expires_at;
    };
    struct asset {
        std::string id;
        std::uint64_t seq = 0;
        std::string type;
        std::optional<std::string> name, filename, external_url, content_type;
        std::int64_t byte_size = 0;
        bool watermark_asset = false;
        bool autogenerate_licence_key = false;
        time_point created_at, updated_at;
        // storage
        std::string object_key;  // current object (internal)
        bool uploaded = false;
        std::string file_path;
        std::optional<pending_upload> replacement;  // replace in progress
        std::uint64_t generation = 0;               // bumps when the body changes
    };
    struct digital_product {
        std::string id;
        std::uint64_t seq = 0;
        std::optional<std::int64_t> store_product_id, store_variant_id;
        std::vector<std::string> asset_ids;
        bool upsert_always = false;
        std::optional<std::string> custom_message;
        bool preorder_enabled = false;
        std::optional<time_point> preorder_launch_date;
        std::optional<std::string> preorder_subject, preorder_heading, preorder_description;
        time_point created_at, updated_at;
        bool preorder_launched = false;  // launch emails queued
    };
    struct line_item {
        std::int64_t product_id;
        std::optional<std::int64_t> variant_id;
    };
    struct order {
        std::string id;
        std::int64_t number = 0;
        std::string name;
        std::string email;
        std::string customer_name;
        std::optional<std::string> phone, financial_status, fulfillment_status, total_price, currency;
        time_point created_at;
        std::vector<line_item> items;
        std::vector<std::string> attached_asset_ids;
        std::int64_t download_count = 0;
    };
    struct entry {
        std::string id;
        std::string order_id, digital_product_id, asset_id;  // digital_product_id empty = attached
        std::int64_t download_count = 0;
        std::optional<std::string> licence_key;
        std::optional<time_point> watermark_started;
        std::uint64_t watermark_generation = 0;
        std::string watermark_path;  // ready copy
    };
    struct email {
        std::string kind, to, subject, body, order_id;
        time_point queued_at;
        std::uint64_t number = 0;  // 1, 2, ... in queueing order (the outbox page's links)
    };
    struct derived {  // flags of one download entry
        std::optional<time_point> expires_at;
        bool download_expired = false;
        bool download_limit_reached = false;
        bool access_revoked = false;
        bool is_preorder = false;
        std::optional<time_point> preorder_available_at;
        bool preorder_released = true;
        bool downloadable = false;
        bool watermark_eligible = false;
    };

    // What a buyer can do with one download entry, in words (the page) and in the
    // API's flags: derived from the same `entry_view`.
    enum class entry_state { ready, processing, limit_reached, expired, revoked, not_released, unavailable };
    // One download entry as GET /orders/{id}/downloads and the download page show it.
    // Computing it has a buyer's visit's effects: watermarking starts (or restarts
    // after a replacement); the entry itself (and its licence key) exists already.
    struct entry_view {
        const entry* e = nullptr;
        const asset* a = nullptr;
        derived d;
        std::string product_name, file_name, file_type;
        std::int64_t file_size_bytes = 0;
        std::string watermark_status;  // not_applicable, processing, ready
        bool is_licence = false;
        std::optional<std::string> licence_key;
        // A link exists: external_url (an external asset) or the storage object
        // storage_key (presigned when the JSON is made or the page's link followed).
        std::optional<std::string> external_url;
        std::optional<std::string> storage_key;
        entry_state state = entry_state::unavailable;
    };
    entry_view view_entry(entry& e, order& o, const asset& a, const digital_product* dp, time_point now);

    // plumbing
    response route_api(const request& req, std::string_view path, const query_params& q,
                       time_point now);
    response route_sandbox(const request& req, std::string_view path, time_point now);
    response storage_get(const request& req, std::string_view path, std::string_view raw_query,
                         time_point now);
    std::optional<response> verify_presigned(const request& req, std::string_view path,
                                             std::string_view raw_query, time_point now);
    void tick(time_point now);  // time-driven transitions (preorder launch emails)

    // assets
    response list_assets(const query_params& q);
    response get_asset(const std::string& id);
    response create_asset(const request& req, time_point now);
    response update_asset(const std::string& id, const request& req, time_point now);
    response delete_asset(const std::string& id);
    response replace_asset(const std::string& id, const request& req, time_point now);
    // digital products
    response list_digital_products(const query_params& q);
    response get_digital_product(const std::string& id);
    response create_digital_product(const request& req, time_point now);
    response update_digital_product(const std::string& id, const request& req, time_point now);
    response delete_digital_product(const std::string& id);
    response notify_buyers(const std::string& id, const request& req, time_point now);
    // orders
    response list_orders(const query_params& q);
    response get_order(const std::string& id);
    response order_downloads(const std::string& id, time_point now);
    response attach_assets(const std::string& id, const request& req);
    response detach_assets(const std::string& id, const request& req);
    response notify_order(const std::string& id, const request& req, time_point now);
    // sandbox
    response purchase(const request& req, time_point now);
    // One order of a purchase (created_at chosen), as JSON.
    boost::json::object purchase_one(std::int64_t product, std::optional<std::int64_t> variant, const std::string& email,
                                     const std::optional<std::string>& customer, const std::string& status,
                                     time_point created, time_point now);
    response set_financial_status(const std::string& id, const char* status);
    response outbox() const;
    response advance_clock(const request& req, time_point now);
    // Moves the clock on by `seconds` (finite, >= 0); the error's words otherwise.
    std::optional<std::string> advance_clock_by(double seconds, time_point now);
    // pages (service_pages.cpp)
    std::string page_token(const std::string& order_id) const;
    response download_page(const request& req, std::string_view path, time_point now);
    std::string render_download_page(order& o, time_point now);
    std::string email_html(const email& m, std::string_view csrf) const;

    // helpers
    boost::json::object asset_json(const asset& a) const;
    boost::json::object asset_summary_json(const asset& a) const;
    boost::json::object attach_summary_json(const asset& a) const;
    response edit_attachments(const std::string& id, const request& req, bool attach);
    boost::json::object digital_product_json(const digital_product& d) const;
    boost::json::object order_json(const order& o) const;
    boost::json::object upload_json(const pending_upload& u, time_point now) const;
    boost::json::object entry_json(entry& e, order& o, const asset& a, const digital_product* dp,
                                   time_point now);
    std::string ensure_watermark_copy(entry& e, const order& o, const asset& a);
    derived derive(const entry& e, const order& o, const asset& a, const digital_product* dp,
                   time_point now) const;
    struct entry_ref {
        entry* e;
        const asset* a;
        const digital_product* dp;  // null for order-level attachments
    };
    std::vector<entry_ref> order_entries(const order& o);
    entry& ensure_entry(const order& o, const std::string& dp_id, const asset& a, bool upsert_always);
    bool linked(const digital_product& d, const order& o) const;
    std::int64_t storage_used() const;
    static std::int64_t footprint(const asset& a);
    std::string new_object_key(const std::string& asset_id, const std::string& filename);
    std::string presign(std::string_view method, const std::string& key,
                        const header_list& signed_headers, time_point now, std::int64_t ttl) const;
    std::string host_of_public_url() const;
    void queue_email(std::string kind, const order& o, std::string subject, std::string body,
                     std::string to, time_point now);
    std::string render(std::string_view tmpl, const order& o) const;
    void remove_file(const std::string& path);
    std::string product_title(std::int64_t product_id) const;
    void seed_orders(time_point now);

    sandbox_config cfg_;
    id_generator ids_;
    token_bucket bucket_;
    // GET /sandbox/usage: the API requests this store answered past the key
    // check, the points they cost (GET/HEAD 1, others 2; counted also with
    // --no-rate-limit) and how many of them were refused with 429.
    struct usage_counts {
        std::int64_t requests = 0;
        std::int64_t points = 0;
        std::int64_t rate_limited = 0;
    } usage_;
    sigv4_credentials creds_;
    std::chrono::milliseconds offset_{0};
    std::uint64_t seq_ = 0;
    std::int64_t next_order_number_ = 1001;
    std::map<std::string, asset> assets_;
    // Sum of footprint() over assets_, kept by every change of an asset's
    // byte_size or replacement (create, replace, its upload, delete), so the
    // quota check costs O(1) however many assets the store holds.
    std::int64_t storage_used_ = 0;
    std::map<std::string, digital_product> digital_products_;
    std::map<std::string, order> orders_;
    std::map<std::string, entry> entries_;            // key: order|dp|asset
    std::map<std::string, std::string> entry_keys_;   // entry id -> key
    std::map<std::string, std::string> upload_keys_;  // object key -> asset id
    std::map<std::string, std::string> returning_keys_;  // dp|asset|email -> licence key
    std::map<std::int64_t, std::string> product_titles_;
    std::vector<email> outbox_;
    std::uint64_t emails_queued_ = 0;
};

} // namespace dd_sandbox
