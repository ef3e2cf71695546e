// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Core: orders, downloads (derived flags, watermarking), storage (SigV4),
// sandbox control endpoints, outbox and seeding.
#include "detail.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

namespace dd_sandbox {

namespace json = boost::json;
namespace fs = std::filesystem;
using namespace detail;

namespace {

constexpr const char* financial_statuses[] = {"paid",     "pending", "partially_paid",
                                              "partially_refunded", "refunded", "voided",
                                              "authorized"};

bool valid_financial_status(std::string_view s)
{
    return std::any_of(std::begin(financial_statuses), std::end(financial_statuses),
                       [&](const char* v) { return s == v; });
}

std::int64_t day_of(time_point t)
{
    const auto ms = t.time_since_epoch().count();
    return ms >= 0 ? ms / 86400000 : -((-ms + 86399999) / 86400000);
}

const std::string default_subject = "Your downloads from {{ shop.name }} - order {{ order.name }}";
const std::string default_body =
    "Hi {{ customer.name }},\n\nThank you for your order {{ order.name }}. Your files are ready on "
    "your download page.\n\n{{ shop.name }}";
const std::string default_preorder_subject = "Your pre-order from {{ shop.name }} is available";
const std::string default_preorder_body =
    "Hi {{ customer.name }},\n\nThe pre-order in order {{ order.name }} is now available on your "
    "download page.\n\n{{ shop.name }}";

response s3_error(int status, std::string_view code, std::string_view message,
                  std::string_view resource, std::string_view extra = {})
{
    response r;
    r.status = status;
    r.headers.emplace_back("Content-Type", "application/xml");
    r.body = service::s3_error_xml(code, message, resource, extra);
    return r;
}

} // namespace

// --- JSON --------------------------------------------------------------------
json::object service::order_json(const order& o) const
{
    return json::object{{"id", o.id},
                        {"name", o.name},
                        {"email", o.email},
                        {"phone", opt(o.phone)},
                        {"financial_status", opt(o.financial_status)},
                        {"fulfillment_status", opt(o.fulfillment_status)},
                        {"total_price", opt(o.total_price)},
                        {"currency", opt(o.currency)},
                        {"created_at", format_iso8601(o.created_at)},
                        {"download_count", o.download_count}};
}

std::string service::product_title(std::int64_t product_id) const
{
    if (auto it = product_titles_.find(product_id); it != product_titles_.end())
        return it->second;
    return "Product " + std::to_string(product_id);
}

std::string service::render(std::string_view tmpl, const order& o) const
{
    std::string out;
    std::size_t i = 0;
    while (i < tmpl.size()) {
        const auto open = tmpl.find("{{", i);
        if (open == std::string_view::npos) {
            out.append(tmpl.substr(i));
            break;
        }
        const auto close = tmpl.find("}}", open + 2);
        if (close == std::string_view::npos) {
            out.append(tmpl.substr(i));
            break;
        }
        out.append(tmpl.substr(i, open - i));
        std::string_view var = tmpl.substr(open + 2, close - open - 2);
        while (!var.empty() && var.front() == ' ')
            var.remove_prefix(1);
        while (!var.empty() && var.back() == ' ')
            var.remove_suffix(1);
        if (var == "order.name")
            out += o.name;
        else if (var == "customer.name")
            out += o.customer_name;
        else if (var == "shop.name")
            out += cfg_.shop_name;
        else
            out.append(tmpl.substr(open, close + 2 - open));
        i = close + 2;
    }
    return out;
}

void service::queue_email(std::string kind, const order& o, std::string subject, std::string body,
                          std::string to, time_point now)
{
    // Every email links to the order's hosted download page (docs/sandbox.md).
    std::string text = render(body, o);
    text += "\n\nYour download page: " + download_page_url(o.id);
    outbox_.push_back(email{std::move(kind), std::move(to), render(subject, o), std::move(text),
                            o.id, now, ++emails_queued_});
}

response service::outbox() const
{
    json::array arr;
    for (const auto& e : outbox_)
        arr.push_back(json::object{{"kind", e.kind},
                                   {"to", e.to},
                                   {"subject", e.subject},
                                   {"body", e.body},
                                   {"order_id", e.order_id},
                                   {"download_page_url", download_page_url(e.order_id)},
                                   {"queued_at", format_iso8601(e.queued_at)}});
    return json_response(200, json::object{{"emails", std::move(arr)}});
}

// --- links and entries -------------------------------------------------------
bool service::linked(const digital_product& d, const order& o) const
{
    if (!d.store_product_id)
        return false;
    return std::any_of(o.items.begin(), o.items.end(), [&](const line_item& li) {
        return li.product_id == *d.store_product_id &&
               (!d.store_variant_id || li.variant_id == d.store_variant_id);
    });
}

service::entry& service::ensure_entry(const order& o, const std::string& dp_id, const asset& a,
                                      bool upsert_always)
{
    const std::string key = o.id + "|" + dp_id + "|" + a.id;
    auto it = entries_.find(key);
    if (it != entries_.end())
        return it->second;
    entry e;
    e.id = ids_.uuid_v4();
    e.order_id = o.id;
    e.digital_product_id = dp_id;
    e.asset_id = a.id;
    if (a.type == "licence" && a.autogenerate_licence_key) {
        if (upsert_always || o.email.empty()) {
            e.licence_key = ids_.licence_key();
        } else {
            const std::string rk = dp_id + "|" + a.id + "|" + to_lower(o.email);
            auto [r, inserted] = returning_keys_.try_emplace(rk);
            if (inserted)
                r->second = ids_.licence_key();
            e.licence_key = r->second;
        }
    }
    entry_keys_[e.id] = key;
    return entries_.emplace(key, std::move(e)).first->second;
}

std::vector<service::entry_ref> service::order_entries(const order& o)
{
    std::vector<const digital_product*> dps;
    for (const auto& [id, d] : digital_products_)
        if (linked(d, o))
            dps.push_back(&d);
    std::sort(dps.begin(), dps.end(),
              [](const digital_product* x, const digital_product* y) { return x->seq < y->seq; });
    std::vector<entry_ref> out;
    for (const auto* d : dps)
        for (const auto& aid : d->asset_ids)
            if (auto it = assets_.find(aid); it != assets_.end())
                out.push_back({&ensure_entry(o, d->id, it->second, d->upsert_always), &it->second, d});
    for (const auto& aid : o.attached_asset_ids)
        if (auto it = assets_.find(aid); it != assets_.end())
            out.push_back({&ensure_entry(o, "", it->second, false), &it->second, nullptr});
    return out;
}

service::derived service::derive(const entry& e, const order& o, const asset& a,
                                 const digital_product* dp, time_point now) const
{
    derived d;
    if (cfg_.download_days)
        d.expires_at = o.created_at + std::chrono::hours(24 * *cfg_.download_days);
    d.download_expired = d.expires_at && now > *d.expires_at;
    d.download_limit_reached = cfg_.download_limit && e.download_count >= *cfg_.download_limit;
    d.access_revoked = o.financial_status &&
                       (*o.financial_status == "refunded" || *o.financial_status == "voided");
    d.is_preorder = dp && dp->preorder_enabled && dp->preorder_launch_date;
    if (d.is_preorder) {
        d.preorder_available_at = dp->preorder_launch_date;
        d.preorder_released = now >= *dp->preorder_launch_date;
    }
    d.downloadable = !d.download_expired && !d.download_limit_reached && !d.access_revoked &&
                     d.preorder_released;
    d.watermark_eligible = cfg_.watermark && a.watermark_asset && a.type == "internal" &&
                           a.content_type == "application/pdf" && a.uploaded;
    return d;
}

std::string service::ensure_watermark_copy(entry& e, const order& o, const asset& a)
{
    if (!e.watermark_path.empty() && fs::exists(e.watermark_path))
        return e.watermark_path;
    std::error_code ec;
    fs::create_directories(fs::path(cfg_.data_dir) / "watermarked", ec);
    const fs::path out = fs::path(cfg_.data_dir) / "watermarked" /
                         (e.id + "-" + std::to_string(a.generation) + ".pdf");
    fs::copy_file(a.file_path, out, fs::copy_options::overwrite_existing, ec);
    if (ec)
        return {};
    std::ofstream f(out, std::ios::app | std::ios::binary);
    f << "\n% Watermarked for " << (o.customer_name.empty() ? o.email : o.customer_name) << " <"
      << o.email << "> order " << o.name << "\n";
    if (!f)
        return {};
    e.watermark_path = out.string();
    return e.watermark_path;
}

service::entry_view service::view_entry(entry& e, order& o, const asset& a,
                                        const digital_product* dp, time_point now)
{
    entry_view v;
    v.e = &e;
    v.a = &a;
    v.d = derive(e, o, a, dp, now);
    const derived& d = v.d;
    v.watermark_status = "not_applicable";
    bool wm_ready = false;
    if (d.watermark_eligible) {
        if (!e.watermark_started || e.watermark_generation != a.generation) {
            remove_file(e.watermark_path);
            e.watermark_path.clear();
            e.watermark_started = now;
            e.watermark_generation = a.generation;
        }
        if (now >= *e.watermark_started + std::chrono::milliseconds(cfg_.watermark_delay_ms)) {
            wm_ready = !ensure_watermark_copy(e, o, a).empty();
            v.watermark_status = "ready";
        } else {
            v.watermark_status = "processing";
        }
    }
    v.is_licence = a.type == "licence";
    v.file_name = v.is_licence ? "Licence Key" : a.filename.value_or(a.name.value_or("file"));
    v.product_name = dp && dp->store_product_id ? product_title(*dp->store_product_id)
                                                : std::string("Additional files");
    v.file_type = v.is_licence ? std::string("licence/key")
                               : a.content_type.value_or("application/octet-stream");
    v.file_size_bytes = a.type == "internal" ? a.byte_size : 0;
    if (v.is_licence)
        v.licence_key = e.licence_key;
    if (d.downloadable) {
        if (a.type == "external")
            v.external_url = a.external_url;
        else if (a.type == "internal" && a.uploaded && (!d.watermark_eligible || wm_ready))
            v.storage_key = "downloads/" + e.id + "/" + v.file_name;
    }
    // In words, the first that applies: what stops every download, then what
    // only delays this file.
    if (d.access_revoked)
        v.state = entry_state::revoked;
    else if (d.download_expired)
        v.state = entry_state::expired;
    else if (d.download_limit_reached)
        v.state = entry_state::limit_reached;
    else if (!d.preorder_released)
        v.state = entry_state::not_released;
    else if (v.watermark_status == "processing")
        v.state = entry_state::processing;
    else if (v.external_url || v.storage_key || (v.is_licence && v.licence_key))
        v.state = entry_state::ready;
    else
        v.state = entry_state::unavailable;
    return v;
}

json::object service::entry_json(entry& e, order& o, const asset& a, const digital_product* dp,
                                 time_point now)
{
    const entry_view v = view_entry(e, o, a, dp, now);
    const derived& d = v.d;
    json::value url = nullptr;
    if (v.external_url)
        url = *v.external_url;
    else if (v.storage_key)
        url = presign("GET", *v.storage_key, {}, now, cfg_.download_url_ttl_seconds);
    return json::object{
        {"id", e.id},
        {"product_name", v.product_name},
        {"file_name", v.file_name},
        {"file_type", v.file_type},
        {"file_size_bytes", v.file_size_bytes},
        {"download_url", std::move(url)},
        {"is_watermarked", d.watermark_eligible},
        {"watermark_status", v.watermark_status},
        {"download_count", e.download_count},
        {"download_limit", opt(cfg_.download_limit)},
        {"download_limit_reached", d.download_limit_reached},
        {"expires_at", opt_time(d.expires_at)},
        {"download_expired", d.download_expired},
        {"access_revoked", d.access_revoked},
        {"is_preorder", d.is_preorder},
        {"preorder_available_at", opt_time(d.preorder_available_at)},
        {"preorder_released", d.preorder_released},
        {"is_licence_key", v.is_licence},
        {"licence_key", opt(v.licence_key)},
        {"downloadable", d.downloadable}};
}

// --- orders ------------------------------------------------------------------
response service::list_orders(const query_params& q)
{
    std::vector<std::string> errors;
    const auto* status = query_get(q, "status");
    if (status && !valid_financial_status(*status))
        errors.push_back("status is invalid");
    std::optional<std::int64_t> sp;
    if (const auto* v = query_get(q, "store_product_id")) {
        sp = parse_int64(*v);
        if (!sp)
            errors.push_back("store_product_id is invalid");
    }
    std::optional<std::int64_t> dmin, dmax;
    if (const auto* v = query_get(q, "created_at_min")) {
        dmin = parse_date(*v);
        if (!dmin)
            errors.push_back("created_at_min is invalid");
    }
    if (const auto* v = query_get(q, "created_at_max")) {
        dmax = parse_date(*v);
        if (!dmax)
            errors.push_back("created_at_max is invalid");
    }
    std::string sort = "created_at_desc";
    if (const auto* v = query_get(q, "sort")) {
        if (*v != "created_at_desc" && *v != "created_at_asc" && *v != "name_asc" && *v != "name_desc")
            errors.push_back("sort is invalid");
        else
            sort = *v;
    }
    const paging p = parse_paging(q, 250, errors);
    if (!errors.empty())
        return errors_response(errors);

    const auto* needle = query_get(q, "q");
    const auto* email = query_get(q, "email");
    const digital_product* dp = nullptr;
    const auto* dp_id = query_get(q, "digital_product_id");
    if (dp_id) {
        auto it = digital_products_.find(*dp_id);
        dp = it == digital_products_.end() ? nullptr : &it->second;
    }
    std::vector<const order*> hits;
    for (const auto& [id, o] : orders_) {
        if (needle && !icontains(o.name, *needle) && !icontains(o.email, *needle))
            continue;
        if (email && !icontains(o.email, *email))
            continue;
        if (status && o.financial_status != *status)
            continue;
        if (sp && std::none_of(o.items.begin(), o.items.end(),
                               [&](const line_item& li) { return li.product_id == *sp; }))
            continue;
        if (dp_id && (!dp || !linked(*dp, o)))
            continue;
        if (dmin && day_of(o.created_at) < *dmin)
            continue;
        if (dmax && day_of(o.created_at) > *dmax)
            continue;
        hits.push_back(&o);
    }
    auto by_created = [](const order* x, const order* y) {
        return x->created_at != y->created_at ? x->created_at < y->created_at : x->number < y->number;
    };
    auto by_name = [](const order* x, const order* y) {
        return x->number != y->number ? x->number < y->number : x->name < y->name;
    };
    if (sort == "created_at_asc")
        std::sort(hits.begin(), hits.end(), by_created);
    else if (sort == "created_at_desc")
        std::sort(hits.begin(), hits.end(), [&](auto x, auto y) { return by_created(y, x); });
    else if (sort == "name_asc")
        std::sort(hits.begin(), hits.end(), by_name);
    else
        std::sort(hits.begin(), hits.end(), [&](auto x, auto y) { return by_name(y, x); });

    return json_response(200, page_json(hits, p, "orders", [&](const order& x) { return order_json(x); }));
}

response service::get_order(const std::string& id)
{
    return get_one(orders_, id, "Order", "order", [&](const order& x) { return order_json(x); });
}

response service::order_downloads(const std::string& id, time_point now)
{
    auto it = orders_.find(id);
    if (it == orders_.end())
        return not_found("Order");
    order& o = it->second;
    json::array arr;
    for (const auto& ref : order_entries(o))
        arr.push_back(entry_json(*ref.e, o, *ref.a, ref.dp, now));
    return json_response(200, json::object{{"order_id", o.id},
                                           {"order_name", o.name},
                                           {"downloads", std::move(arr)}});
}

namespace {
// asset_ids of attach/detach: a non-empty array of strings
std::optional<std::vector<std::string>> read_asset_ids(const json::value& body)
{
    const auto* o = body.if_object();
    const auto* v = o ? o->if_contains("asset_ids") : nullptr;
    const auto* arr = v ? v->if_array() : nullptr;
    if (!arr || arr->empty())
        return std::nullopt;
    std::vector<std::string> ids;
    for (const auto& e : *arr) {
        if (!e.is_string())
            return std::nullopt;
        ids.emplace_back(e.get_string());
    }
    return ids;
}
} // namespace

response service::attach_assets(const std::string& id, const request& req)
{
    return edit_attachments(id, req, true);
}

// Detach: the same body as attach ({"asset_ids": [...]}, non-empty); ids not
// attached are ignored; answers with the remaining attachments (docs/sandbox.md).
response service::detach_assets(const std::string& id, const request& req)
{
    return edit_attachments(id, req, false);
}

response service::edit_attachments(const std::string& id, const request& req, bool attach)
{
    auto it = orders_.find(id);
    if (it == orders_.end())
        return not_found("Order");
    auto body = parse_body(req);
    if (auto* r = std::get_if<response>(&body))
        return std::move(*r);
    auto ids = read_asset_ids(std::get<json::value>(body));
    if (!ids)
        return errors_response({"asset_ids must be a non-empty array"});
    order& o = it->second;
    if (attach) {
        for (const auto& aid : *ids)
            if (!assets_.count(aid))
                return errors_response({"Asset ids contain unknown assets"});
        for (const auto& aid : *ids)
            if (std::find(o.attached_asset_ids.begin(), o.attached_asset_ids.end(), aid) ==
                o.attached_asset_ids.end()) {
                o.attached_asset_ids.push_back(aid);
                ensure_entry(o, "", assets_.at(aid), false);
            }
    } else {
        for (const auto& aid : *ids)
            std::erase(o.attached_asset_ids, aid);
    }
    json::array attached;
    for (const auto& aid : o.attached_asset_ids)
        attached.push_back(attach_summary_json(assets_.at(aid)));
    return json_response(200, json::object{{"order", order_json(o)}, {"attached_assets", std::move(attached)}});
}

response service::notify_order(const std::string& id, const request& req, time_point now)
{
    auto it = orders_.find(id);
    if (it == orders_.end())
        return not_found("Order");
    auto body = parse_body(req);
    if (auto* r = std::get_if<response>(&body))
        return std::move(*r);
    const json::value& b = std::get<json::value>(body);
    std::string to = it->second.email;
    if (const auto* o = b.if_object()) {
        auto e = string_field(*o, "email");
        if (e.state == field_state::bad)
            return errors_response({"Email is invalid"});
        if (e.ok() && !blank(e.value))
            to = e.value;
    } else if (!b.is_null()) {
        return error_response(400, "Malformed JSON body");
    }
    if (blank(to))
        return error_response(422, "Order has no customer email. Provide an email parameter.");
    queue_email("notify", it->second, default_subject, default_body, to, now);
    return json_response(200, json::object{{"order", order_json(it->second)},
                                           {"notified", true},
                                           {"notified_at", format_iso8601(now)}});
}

response service::notify_buyers(const std::string& id, const request& req, time_point now)
{
    auto it = digital_products_.find(id);
    if (it == digital_products_.end())
        return not_found("Digital product");
    auto body = parse_body(req);
    if (auto* r = std::get_if<response>(&body))
        return std::move(*r);
    const json::value& b = std::get<json::value>(body);
    std::string subject = default_subject, text = default_body;
    if (const auto* o = b.if_object()) {
        std::vector<std::string> errors;
        auto s = string_field(*o, "subject");
        auto t = string_field(*o, "body");
        if (s.state == field_state::bad)
            errors.push_back("Subject is invalid");
        if (t.state == field_state::bad)
            errors.push_back("Body is invalid");
        if (!errors.empty())
            return errors_response(errors);
        if (s.ok() && !blank(s.value))
            subject = s.value;
        if (t.ok() && !blank(t.value))
            text = t.value;
    } else if (!b.is_null()) {
        return error_response(400, "Malformed JSON body");
    }
    std::vector<const order*> buyers;
    for (const auto& [oid, o] : orders_)
        if (linked(it->second, o))
            buyers.push_back(&o);
    if (buyers.empty())
        return error_response(422, "This digital product has no orders to notify");
    std::sort(buyers.begin(), buyers.end(),
              [](const order* x, const order* y) { return x->number < y->number; });
    std::int64_t count = 0;
    for (const auto* o : buyers) {
        if (o->email.empty())
            continue;
        queue_email("notify_buyers", *o, subject, text, o->email, now);
        ++count;
    }
    return json_response(202, json::object{{"digital_product_id", id}, {"notified_count", count}});
}

// --- time-driven transitions ----------------------------------------------------
void service::tick(time_point now)
{
    for (auto& [id, d] : digital_products_) {
        if (!d.preorder_enabled || !d.preorder_launch_date || d.preorder_launched ||
            now < *d.preorder_launch_date)
            continue;
        d.preorder_launched = true;
        std::vector<const order*> buyers;
        for (const auto& [oid, o] : orders_)
            if (linked(d, o) && !o.email.empty())
                buyers.push_back(&o);
        std::sort(buyers.begin(), buyers.end(),
                  [](const order* x, const order* y) { return x->number < y->number; });
        for (const auto* o : buyers)
            queue_email("preorder", *o,
                        d.preorder_subject && !blank(*d.preorder_subject) ? *d.preorder_subject
                                                                          : default_preorder_subject,
                        default_preorder_body, o->email, *d.preorder_launch_date);
    }
}

// --- sandbox control ---------------------------------------------------------------
response service::purchase(const request& req, time_point now)
{
    auto body = parse_body(req);
    if (auto* r = std::get_if<response>(&body))
        return std::move(*r);
    const auto* o = std::get<json::value>(body).if_object();
    if (!o)
        return error_response(400, "Malformed JSON body");
    std::vector<std::string> errors;
    auto sp = int_field(*o, "store_product_id");
    if (!sp.present() || sp.state == field_state::null)
        errors.push_back("Store product can't be blank");
    else if (!sp.ok())
        errors.push_back("Store product is not a number");
    auto sv = int_field(*o, "store_variant_id");
    if (sv.state == field_state::bad)
        errors.push_back("Store variant is not a number");
    auto em = string_field(*o, "email");
    if (em.state == field_state::bad)
        errors.push_back("Email is invalid");
    auto cn = string_field(*o, "customer_name");
    if (cn.state == field_state::bad)
        errors.push_back("Customer name is invalid");
    auto fs_ = string_field(*o, "financial_status");
    if (fs_.state == field_state::bad || (fs_.ok() && !valid_financial_status(fs_.value)))
        errors.push_back("Financial status is not included in the list");
    // Sandbox-only: a chosen created_at (an order that reaches the service
    // late, or at a day's boundary) and several identical purchases at once.
    std::optional<time_point> created;
    auto ca = string_field(*o, "created_at");
    if (ca.state == field_state::bad || (ca.ok() && !(created = parse_iso8601(ca.value))))
        errors.push_back("Created at is invalid");
    auto cnt = int_field(*o, "count");
    if (cnt.state == field_state::bad || (cnt.ok() && (cnt.value < 1 || cnt.value > 1000)))
        errors.push_back("Count must be between 1 and 1000");
    if (!errors.empty())
        return errors_response(errors);
    const std::int64_t count = cnt.ok() ? cnt.value : 1;
    json::array made;
    json::object last;
    for (std::int64_t n = 0; n < count; ++n)
    {
        last = purchase_one(sp.value, sv.ok() ? std::optional<std::int64_t>(sv.value) : std::nullopt,
                            em.ok() ? em.value : std::string(),
                            cn.ok() && !blank(cn.value) ? std::optional<std::string>(cn.value) : std::nullopt,
                            fs_.ok() ? fs_.value : std::string("paid"), created.value_or(now), now);
        if (cnt.ok())
            made.push_back(last);
    }
    json::object out{{"order", std::move(last)}};
    if (cnt.ok())
        out["orders"] = std::move(made);
    return json_response(201, std::move(out));
}

json::object service::purchase_one(std::int64_t product, std::optional<std::int64_t> variant, const std::string& email,
                                   const std::optional<std::string>& customer, const std::string& status,
                                   time_point created, time_point now)
{
    order ord;
    ord.id = ids_.uuid_v4();
    ord.number = next_order_number_++;
    ord.name = "#" + std::to_string(ord.number);
    ord.email = email;
    if (customer)
        ord.customer_name = *customer;
    else if (!ord.email.empty())
        ord.customer_name = ord.email.substr(0, ord.email.find('@'));
    else
        ord.customer_name = "Customer";
    ord.financial_status = status;
    ord.total_price = "19.00";
    ord.currency = "USD";
    ord.created_at = created;
    ord.items.push_back({product, variant});
    const std::string oid = ord.id;
    order& stored = orders_.emplace(oid, std::move(ord)).first->second;
    const auto delivered = order_entries(stored);  // delivery: assigns licence keys now
    bool any_dp = std::any_of(delivered.begin(), delivered.end(),
                              [](const entry_ref& r) { return r.dp != nullptr; });
    if (any_dp && !stored.email.empty())
        queue_email("delivery", stored, default_subject, default_body, stored.email, now);
    return order_json(stored);
}

response service::set_financial_status(const std::string& id, const char* status)
{
    auto it = orders_.find(id);
    if (it == orders_.end())
        return not_found("Order");
    it->second.financial_status = status;
    return json_response(200, json::object{{"order", order_json(it->second)}});
}

std::optional<std::string> service::advance_clock_by(double seconds, time_point now)
{
    if (!(seconds >= 0) || !std::isfinite(seconds))
        return "advance_seconds must be a non-negative number";
    // The clock stops at the last millisecond of year 9999 (ISO 8601 with four
    // year digits); refused before any conversion, so nothing can overflow.
    const std::int64_t room = max_clock_ms - std::min(max_clock_ms, now.time_since_epoch().count());
    const double wanted_ms = seconds * 1000.0;
    if (!(wanted_ms <= static_cast<double>(room)) || std::llround(wanted_ms) > room)
        return "advance_seconds is too large: the sandbox clock cannot go past " +
               format_iso8601(time_point{std::chrono::milliseconds{max_clock_ms}});
    const auto ms = std::chrono::milliseconds(std::llround(wanted_ms));
    offset_ += ms;
    tick(now + ms);
    return std::nullopt;
}

response service::advance_clock(const request& req, time_point now)
{
    auto body = parse_body(req);
    if (auto* r = std::get_if<response>(&body))
        return std::move(*r);
    const auto* o = std::get<json::value>(body).if_object();
    const auto* v = o ? o->if_contains("advance_seconds") : nullptr;
    if (!v || !v->is_number())
        return errors_response({"advance_seconds must be a non-negative number"});
    const auto before = offset_;
    if (auto err = advance_clock_by(v->to_number<double>(), now))
        return errors_response({*err});
    const auto moved = offset_ - before;
    return json_response(200, json::object{{"now", format_iso8601(now + moved)},
                                           {"offset_ms", offset_.count()}});
}

// --- storage -----------------------------------------------------------------
bool service::is_storage_upload(std::string_view method, std::string_view target)
{
    return method == "PUT" && target.starts_with("/storage/");
}

std::optional<response> service::verify_presigned(const request& req, std::string_view path,
                                                   std::string_view raw_query, time_point now)
{
    const std::string resource(path);
    auto params = parse_query(raw_query, false);
    if (!params)
        return s3_error(400, "InvalidArgument", "Malformed query string", resource);
    auto get = [&](std::string_view k) -> const std::string* {
        for (const auto& [pk, pv] : *params)
            if (pk == k)
                return &pv;
        return nullptr;
    };
    const auto* alg = get("X-Amz-Algorithm");
    const auto* cred = get("X-Amz-Credential");
    const auto* date = get("X-Amz-Date");
    const auto* expires = get("X-Amz-Expires");
    const auto* signed_headers = get("X-Amz-SignedHeaders");
    const auto* sig = get("X-Amz-Signature");
    if (!alg && !cred && !date && !expires && !signed_headers && !sig)
        return s3_error(403, "AccessDenied", "Access Denied", resource);
    if (!alg || !cred || !date || !expires || !signed_headers || !sig)
        return s3_error(400, "AuthorizationQueryParametersError",
                        "Query-string authentication version 4 requires the X-Amz-Algorithm, "
                        "X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and "
                        "X-Amz-Expires parameters.",
                        resource);
    if (*alg != "AWS4-HMAC-SHA256")
        return s3_error(400, "AuthorizationQueryParametersError",
                        "X-Amz-Algorithm only supports \"AWS4-HMAC-SHA256\"", resource);
    const auto t = parse_amz_date(*date);
    const auto exp = parse_int64(*expires);
    if (!t)
        return s3_error(400, "AuthorizationQueryParametersError",
                        "X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"",
                        resource);
    if (!exp || *exp < 1 || *exp > 604800)
        return s3_error(400, "AuthorizationQueryParametersError",
                        "X-Amz-Expires must be between 1 and 604800 seconds", resource);
    if (cred->substr(0, cred->find('/')) != creds_.access_key_id)
        return s3_error(403, "InvalidAccessKeyId",
                        "The AWS Access Key Id you provided does not exist in our records.", resource);
    if (now > *t + std::chrono::seconds(*exp))
        return s3_error(403, "AccessDenied", "Request has expired", resource,
                        "<X-Amz-Expires>" + std::to_string(*exp) + "</X-Amz-Expires><Expires>" +
                            format_iso8601(*t + std::chrono::seconds(*exp)) +
                            "</Expires><ServerTime>" + format_iso8601(now) + "</ServerTime>");
    // The scope of the credential must be ours (date/region/service).
    const std::string expected_scope = creds_.access_key_id + "/" + date->substr(0, 8) + "/" +
                                       creds_.region + "/" + creds_.service + "/aws4_request";
    std::vector<std::pair<std::string, std::string>> hs;
    std::string_view names = *signed_headers;
    bool has_host = false;
    while (!names.empty()) {
        const auto semi = names.find(';');
        const std::string name = to_lower(names.substr(0, semi));
        names = semi == std::string_view::npos ? std::string_view{} : names.substr(semi + 1);
        const std::string* v = req.header(name);
        has_host = has_host || name == "host";
        hs.emplace_back(name, v ? *v : std::string());
    }
    auto decoded = percent_decode(path, false);
    const std::string canonical_uri = decoded ? uri_encode(*decoded, true) : resource;
    const auto parts = sigv4_sign(req.method, canonical_uri, *params, hs, *date, creds_);
    if (!has_host || *cred != expected_scope || !constant_time_equals(parts.signature, *sig))
        return s3_error(403, "SignatureDoesNotMatch",
                        "The request signature we calculated does not match the signature you "
                        "provided. Check your key and signing method.",
                        resource,
                        "<AWSAccessKeyId>" + xml_escape(creds_.access_key_id) +
                            "</AWSAccessKeyId><StringToSign>" + xml_escape(parts.string_to_sign) +
                            "</StringToSign><CanonicalRequest>" +
                            xml_escape(parts.canonical_request) + "</CanonicalRequest>");
    return std::nullopt;
}

std::variant<response, upload_ticket> service::begin_upload(const request& req, time_point raw_now)
{
    const time_point now = effective_now(raw_now);
    tick(now);
    const std::string_view target = req.target;
    const auto qpos = target.find('?');
    const std::string_view path = target.substr(0, qpos);
    const std::string_view raw_query =
        qpos == std::string_view::npos ? std::string_view{} : target.substr(qpos + 1);
    auto fail = [](response r) {
        r.close = true;
        return r;
    };
    const std::string* te = req.header("Transfer-Encoding");
    const std::string* cl = req.header("Content-Length");
    if ((te && !iequals(*te, "identity")) || !cl)
        return fail(s3_error(411, "MissingContentLength",
                             "You must provide the Content-Length HTTP header.", path));
    const auto length = parse_int64(*cl);
    if (!length || *length < 0)
        return fail(s3_error(400, "InvalidArgument", "Invalid Content-Length", path));
    if (auto err = verify_presigned(req, path, raw_query, now))
        return fail(std::move(*err));

    const std::string prefix = "/storage/" + std::string(bucket) + "/";
    auto decoded = percent_decode(path, false);
    std::string key;
    if (decoded && decoded->starts_with(prefix))
        key = decoded->substr(prefix.size());
    auto k = upload_keys_.find(key);
    if (k == upload_keys_.end())
        return fail(s3_error(403, "AccessDenied", "The asset of this upload no longer exists", path));
    const asset& a = assets_.at(k->second);
    const std::int64_t expected =
        a.replacement && a.replacement->key == key ? a.replacement->byte_size : a.byte_size;
    if (*length != expected)
        return fail(s3_error(400, "BadDigest",
                             "The Content-Length you specified does not match the byte_size "
                             "declared for the asset (" + std::to_string(expected) + ").",
                             path));
    std::error_code ec;
    fs::create_directories(fs::path(cfg_.data_dir) / "tmp", ec);
    upload_ticket t;
    t.asset_id = a.id;
    t.key = key;
    t.temp_path = (fs::path(cfg_.data_dir) / "tmp" / (ids_.uuid_v4() + ".part")).string();
    t.length = static_cast<std::uint64_t>(*length);
    const std::string* expect = req.header("Expect");
    t.expect_continue = expect && iequals(*expect, "100-continue");
    return t;
}

void service::abort_upload(const upload_ticket& t)
{
    remove_file(t.temp_path);
}

response service::finish_upload(const upload_ticket& t, std::uint64_t received, time_point raw_now)
{
    const time_point now = effective_now(raw_now);
    const std::string resource = "/storage/" + std::string(bucket) + "/" + t.key;
    if (received != t.length) {
        abort_upload(t);
        auto r = s3_error(400, "IncompleteBody",
                          "You did not provide the number of bytes specified by the Content-Length "
                          "HTTP header.",
                          resource);
        r.close = true;
        return r;
    }
    auto k = upload_keys_.find(t.key);
    auto it = assets_.find(t.asset_id);
    if (k == upload_keys_.end() || it == assets_.end()) {
        abort_upload(t);
        return s3_error(403, "AccessDenied", "The asset of this upload no longer exists", resource);
    }
    asset& a = it->second;
    std::error_code ec;
    fs::create_directories(fs::path(cfg_.data_dir) / "objects", ec);
    const std::string final_path =
        (fs::path(cfg_.data_dir) / "objects" / (a.id + "-" + std::to_string(a.generation + 1))).string();
    fs::rename(t.temp_path, final_path, ec);
    if (ec) {
        abort_upload(t);
        return s3_error(500, "InternalError", "We encountered an internal error. Please try again.",
                        resource);
    }
    if (a.replacement && a.replacement->key == t.key) {
        storage_used_ -= footprint(a);
        remove_file(a.file_path);
        upload_keys_.erase(a.object_key);
        a.object_key = a.replacement->key;
        a.filename = a.replacement->filename;
        a.content_type = a.replacement->content_type;
        a.byte_size = a.replacement->byte_size;
        a.replacement.reset();
        storage_used_ += footprint(a);
        a.updated_at = now;
    } else if (a.file_path != final_path) {
        remove_file(a.file_path);
    }
    a.file_path = final_path;
    a.uploaded = true;
    ++a.generation;
    response r;
    r.status = 200;
    r.headers.emplace_back("ETag", "\"" + hex(sha256(a.id + std::to_string(a.generation))).substr(0, 32) + "\"");
    return r;
}

response service::storage_get(const request& req, std::string_view path, std::string_view raw_query,
                              time_point now)
{
    if (req.method != "GET" && req.method != "HEAD")
        return s3_error(405, "MethodNotAllowed",
                        "The specified method is not allowed against this resource.", path);
    if (auto err = verify_presigned(req, path, raw_query, now))
        return std::move(*err);
    auto decoded = percent_decode(path, false);
    const std::string prefix = "/storage/" + std::string(bucket) + "/downloads/";
    if (!decoded || !decoded->starts_with(prefix))
        return s3_error(404, "NoSuchKey", "The specified key does not exist.", path);
    const std::string rest = decoded->substr(prefix.size());
    const std::string entry_id = rest.substr(0, rest.find('/'));
    auto ek = entry_keys_.find(entry_id);
    if (ek == entry_keys_.end())
        return s3_error(404, "NoSuchKey", "The specified key does not exist.", path);
    entry& e = entries_.at(ek->second);
    auto oi = orders_.find(e.order_id);
    auto ai = assets_.find(e.asset_id);
    if (oi == orders_.end() || ai == assets_.end())
        return s3_error(404, "NoSuchKey", "The specified key does not exist.", path);
    const digital_product* dp = nullptr;
    if (!e.digital_product_id.empty()) {
        auto di = digital_products_.find(e.digital_product_id);
        if (di == digital_products_.end())
            return s3_error(404, "NoSuchKey", "The specified key does not exist.", path);
        dp = &di->second;
    }
    const derived d = derive(e, oi->second, ai->second, dp, now);
    if (!d.downloadable)
        return s3_error(403, "AccessDenied", "Access Denied", path);
    std::string file;
    if (d.watermark_eligible) {
        if (e.watermark_generation == ai->second.generation)
            file = e.watermark_path;  // never the un-watermarked original
    } else {
        file = ai->second.file_path;
    }
    std::error_code ec;
    const auto size = file.empty() ? 0 : fs::file_size(file, ec);
    if (file.empty() || ec)
        return s3_error(404, "NoSuchKey", "The specified key does not exist.", path);
    if (req.method == "GET") {
        ++e.download_count;
        ++oi->second.download_count;
    }
    response r;
    r.headers.emplace_back("Content-Type", ai->second.content_type.value_or("application/octet-stream"));
    std::string cd = content_disposition(ai->second.filename.value_or("file"));
    cd.replace(0, 6, "attachment");
    r.headers.emplace_back("Content-Disposition", cd);
    r.file_path = file;
    r.file_size = size;
    return r;
}

// --- seeding -----------------------------------------------------------------
void service::seed_orders(time_point now)
{
    static const char* titles[] = {
        "The Sourdough Handbook (PDF)", "Lo-fi Beats Vol. 1",         "Watercolour Brush Pack",
        "Learn Rust in 30 Days",         "Wedding Invitation Template", "Minimal Lightroom Presets",
        "Synthwave Sample Pack",         "Budget Planner Spreadsheet",  "Knitting Patterns: Winter",
        "Indie Game Soundtrack",         "Photography Field Guide",     "Yoga at Home (Video Course)",
        "Font Family: Grotesk Pro",      "Resume Template Bundle",      "Kids Colouring Book",
        "Podcast Intro Jingles",         "Vector Icon Set",             "Home Workout eBook",
        "Tarot Deck Artwork",            "Desktop Wallpaper Pack"};
    constexpr int product_count = 20;
    std::int64_t product_ids[product_count];
    for (int i = 0; i < product_count; ++i) {
        product_ids[i] = 7500000000000LL + (i + 1) * 1111LL;
        product_titles_[product_ids[i]] = titles[i];
    }
    static const char* first[] = {"Ada",   "Alan",   "Grace", "Linus", "Margaret", "Ken",
                                  "Barbara", "Dennis", "Frances", "Edsger", "Radia", "Bjarne",
                                  "Hedy",  "Tim",    "Katherine", "John"};
    static const char* last[] = {"Lovelace", "Turing",  "Hopper",  "Torvalds", "Hamilton",
                                 "Thompson", "Liskov",  "Ritchie", "Allen",    "Dijkstra",
                                 "Perlman",  "Stroustrup", "Lamarr", "Berners-Lee", "Johnson",
                                 "McCarthy"};
    std::mt19937_64 rng(cfg_.seed * 0x9E3779B97F4A7C15ULL + 12345);
    auto uniform = [&](std::int64_t lo, std::int64_t hi) {
        return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
    };
    const int n = std::max(0, cfg_.seed_orders);
    struct customer {
        std::string name, email;
        std::optional<std::string> phone;
    };
    std::vector<customer> customers;
    const int ncust = std::max(1, n / 3);
    for (int i = 0; i < ncust; ++i) {
        const char* f = first[uniform(0, 15)];
        const char* l = last[uniform(0, 15)];
        customer c;
        c.name = std::string(f) + " " + l;
        c.email = to_lower(std::string(f) + "." + l) + std::to_string(i + 1) + "@example.com";
        if (uniform(0, 99) >= 35) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "+1 555-01%02d", static_cast<int>(uniform(0, 99)));
            c.phone = buf;
        }
        customers.push_back(std::move(c));
    }
    std::vector<std::int64_t> ages(static_cast<std::size_t>(n));
    for (auto& a : ages)
        a = uniform(0, 365LL * 86400 * 1000 - 1);
    std::sort(ages.begin(), ages.end(), std::greater<>());  // oldest first -> lowest number
    for (int i = 0; i < n; ++i) {
        order o;
        o.id = ids_.uuid_v4();
        o.number = next_order_number_++;
        o.name = "#" + std::to_string(o.number);
        const customer& c = customers[static_cast<std::size_t>(uniform(0, ncust - 1))];
        o.email = c.email;
        o.customer_name = c.name;
        o.phone = c.phone;
        if (i < 7) {
            o.financial_status = financial_statuses[i];
        } else {
            const auto r = uniform(0, 99);
            o.financial_status = r < 55   ? "paid"
                                 : r < 63 ? "pending"
                                 : r < 68 ? "partially_paid"
                                 : r < 74 ? "partially_refunded"
                                 : r < 82 ? "refunded"
                                 : r < 88 ? "voided"
                                          : "authorized";
        }
        const auto fr = uniform(0, 99);
        if (fr < 60)
            o.fulfillment_status = "fulfilled";
        else if (fr < 70)
            o.fulfillment_status = "partial";
        char price[32];
        std::snprintf(price, sizeof price, "%lld.%02lld", static_cast<long long>(uniform(1, 199)),
                      static_cast<long long>(uniform(0, 99)));
        o.total_price = price;
        const auto cr = uniform(0, 99);
        o.currency = cr < 70 ? "USD" : cr < 85 ? "EUR" : cr < 95 ? "GBP" : "CAD";
        o.created_at = now - std::chrono::milliseconds(ages[static_cast<std::size_t>(i)]);
        const auto items = uniform(1, 3);
        for (std::int64_t k = 0; k < items; ++k) {
            const auto pi = uniform(0, product_count - 1);
            if (std::any_of(o.items.begin(), o.items.end(),
                            [&](const line_item& li) { return li.product_id == product_ids[pi]; }))
                continue;
            o.items.push_back({product_ids[pi], 42000000000000LL + pi * 10 + uniform(1, 3)});
        }
        orders_.emplace(o.id, std::move(o));
    }
}

} // namespace dd_sandbox
