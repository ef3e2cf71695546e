// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Core: the pages. The buyer's hosted download page (no API key: its link is the
// capability) and the store's pages behind a session (the store_registry
// authenticates it and checks the CSRF token of every POST). The download
// entries and their states come from view_entry, the code behind
// GET /orders/{id}/downloads.
#include "detail.hpp"
#include "html.hpp"

#include <algorithm>
#include <charconv>
#include <string>

namespace dd_sandbox {

namespace json = boost::json;
using namespace detail;

namespace {

constexpr std::string_view page_prefix = "/download-page/";
constexpr std::int64_t orders_per_page = 50;

std::vector<std::string_view> split(std::string_view p)
{
    std::vector<std::string_view> out;
    while (!p.empty()) {
        const auto slash = p.find('/');
        out.push_back(p.substr(0, slash));
        p = slash == std::string_view::npos ? std::string_view{} : p.substr(slash + 1);
    }
    return out;
}

response invalid_link()
{
    return html::page("Download link not valid",
                      "<h1>This download link is not valid</h1>\n<p>Check that the whole link "
                      "from your email was opened, or ask the store for a new email.</p>\n",
                      404);
}

const char* state_class(std::string_view s)
{
    if (s == "ready")
        return "state-ready";
    if (s == "processing")
        return "state-processing";
    if (s == "not_released" || s == "unavailable")
        return "state-waiting";
    return "state-blocked";
}

std::string csrf_field(std::string_view csrf)
{
    return "<input type=\"hidden\" name=\"csrf\" value=\"" + html::escape(csrf) + "\">";
}

std::string td(std::string_view label, std::string_view html_content)
{
    return "<td data-label=\"" + html::escape(label) + "\">" + std::string(html_content) + "</td>";
}

std::optional<double> parse_seconds(const std::string& s)
{
    double v = 0;
    const char* b = s.data();
    const char* e = b + s.size();
    auto [p, ec] = std::from_chars(b, e, v);
    if (ec != std::errc() || p != e)
        return std::nullopt;
    return v;
}

std::string_view state_name(int s)
{
    static constexpr std::string_view names[] = {"ready",   "processing",   "limit_reached",
                                                 "expired", "revoked",      "not_released",
                                                 "unavailable"};
    return names[s];
}

} // namespace

// --- the buyer's download page ---------------------------------------------------
std::string service::page_token(const std::string& order_id) const
{
    // 128 bits of an HMAC under the store's storage secret: unguessable, stable
    // for the store's lifetime (and across runs with --storage-secret).
    return hex(hmac_sha256(creds_.secret_access_key, "download-page|" + order_id)).substr(0, 32);
}

std::string service::download_page_url(const std::string& order_id) const
{
    if (!orders_.count(order_id))
        return {};
    return cfg_.public_url + std::string(page_prefix) + uri_encode(order_id) + "/" +
           page_token(order_id);
}

bool service::is_download_page(std::string_view path)
{
    return path.starts_with(page_prefix);
}

response service::download_page(const request& req, std::string_view path, time_point now)
{
    if (req.method != "GET" && req.method != "HEAD") {
        response r = html::page("Method not allowed", "<h1>Method not allowed</h1>\n", 405);
        r.headers.emplace_back("Allow", "GET, HEAD");
        return r;
    }
    // <order id>/<token>[/files/<entry id>]
    const auto parts = split(path.substr(page_prefix.size()));
    if (parts.size() != 2 && !(parts.size() == 4 && parts[2] == "files"))
        return invalid_link();
    const auto order_id = percent_decode(parts[0], false);
    if (!order_id)
        return invalid_link();
    auto it = orders_.find(*order_id);
    if (it == orders_.end() || !constant_time_equals(parts[1], page_token(*order_id)))
        return invalid_link();
    order& o = it->second;
    if (parts.size() == 2) {
        html::page_options opts;
        opts.header_html = "<p class=\"brand\">" + html::value(cfg_.shop_name) + "</p>";
        return html::page("Downloads for order " + o.name + " - " + cfg_.shop_name,
                          render_download_page(o, now), opts);
    }
    // A download link of the page: a fresh presigned URL, minted now (a page left
    // open keeps working); the storage counts the download when it is fetched.
    for (const auto& ref : order_entries(o)) {
        if (ref.e->id != parts[3])
            continue;
        const entry_view v = view_entry(*ref.e, o, *ref.a, ref.dp, now);
        if (v.storage_key)
            return html::see_other(presign("GET", *v.storage_key, {}, now, cfg_.download_url_ttl_seconds));
        if (v.external_url)
            return html::see_other(*v.external_url);
        const std::string back = download_page_url(o.id);
        return html::page("File not available",
                          "<h1>This file cannot be downloaded now</h1>\n<p>" +
                              html::value(v.file_name) + ": see its state on <a href=\"" +
                              html::escape(back) + "\">your download page</a>.</p>\n",
                          403);
    }
    return invalid_link();
}

std::string service::render_download_page(order& o, time_point now)
{
    std::string b;
    b += "<h1>Your downloads: order " + html::value(o.name) + "</h1>\n";
    b += "<p class=\"note\">Sandbox: opening this page has the effects of the customer's visit "
         "(watermarking starts, licence keys are assigned); each download link makes a new "
         "storage link when it is followed, and the download is counted.</p>\n";
    const auto refs = order_entries(o);
    if (refs.empty())
        b += "<p>There are no files in this order.</p>\n";
    std::size_t i = 0;
    int section = 0;
    while (i < refs.size()) {
        const digital_product* dp = refs[i].dp;
        ++section;
        const std::string hid = "p" + std::to_string(section);
        const std::string title = dp && dp->store_product_id ? product_title(*dp->store_product_id)
                                                             : std::string("Additional files");
        b += "<section class=\"card\" aria-labelledby=\"" + hid + "\">\n<h2 id=\"" + hid + "\">" +
             html::value(title) + "</h2>\n";
        if (dp && dp->preorder_enabled && dp->preorder_launch_date && now < *dp->preorder_launch_date) {
            b += "<div class=\"preorder\">";
            if (dp->preorder_heading && !blank(*dp->preorder_heading))
                b += "<h3>" + html::value(*dp->preorder_heading) + "</h3>";
            if (dp->preorder_description && !blank(*dp->preorder_description))
                b += "<p class=\"message\">" + html::value(*dp->preorder_description) + "</p>";
            b += "<p>Available from " + html::date(*dp->preorder_launch_date) + ".</p></div>\n";
        }
        if (dp && dp->custom_message && !blank(*dp->custom_message))
            b += "<p class=\"message\">" + html::value(*dp->custom_message) + "</p>\n";
        b += "<ul class=\"files\">\n";
        for (; i < refs.size() && refs[i].dp == dp; ++i) {
            const auto& ref = refs[i];
            const entry_view v = view_entry(*ref.e, o, *ref.a, ref.dp, now);
            const std::string_view state = state_name(static_cast<int>(v.state));
            std::string words, detail;
            switch (v.state) {
            case entry_state::ready: words = "Ready"; break;
            case entry_state::processing:
                words = "Being watermarked";
                detail = "Your copy is being prepared; reload this page in a moment.";
                break;
            case entry_state::limit_reached:
                words = "Download limit reached";
                detail = "Downloaded " + std::to_string(ref.e->download_count) + " of " +
                         std::to_string(cfg_.download_limit.value_or(0)) + " times.";
                break;
            case entry_state::expired:
                words = "Expired";
                detail = "The download period ended on " + html::date(*v.d.expires_at) + ".";
                break;
            case entry_state::revoked:
                words = "Access revoked";
                detail = "The order was refunded or cancelled.";
                break;
            case entry_state::not_released:
                words = "Not yet released";
                detail = "Available from " + html::date(*v.d.preorder_available_at) + ".";
                break;
            case entry_state::unavailable:
                words = "Not available yet";
                detail = "The store has not uploaded this file yet.";
                break;
            }
            b += "<li class=\"file\" data-state=\"" + std::string(state) + "\"><span class=\"name\">" +
                 html::value(v.file_name) + "</span>";
            b += "<span class=\"state " + std::string(state_class(state)) + "\">" + words + "</span>";
            if (v.state == entry_state::ready && !v.is_licence) {
                b += "<a class=\"button\" href=\"" +
                     html::escape(download_page_url(o.id) + "/files/" + ref.e->id) + "\"" +
                     (v.external_url ? " rel=\"noreferrer\"" : "") + ">Download<span class=\"sr-only\"> " +
                     html::value(v.file_name) + "</span></a>";
            }
            std::string facts;
            if (!v.is_licence && v.file_size_bytes > 0)
                facts = html::escape(v.file_type) + ", " + html::bytes(v.file_size_bytes);
            else if (!v.is_licence && v.external_url)
                facts = "External link";
            if (v.d.watermark_eligible)
                facts += std::string(facts.empty() ? "" : "; ") + "watermarked for you";
            if (v.state == entry_state::ready && !v.is_licence && cfg_.download_limit)
                facts += std::string(facts.empty() ? "" : "; ") + "downloaded " +
                         std::to_string(ref.e->download_count) + " of " +
                         std::to_string(*cfg_.download_limit) + " times";
            if (v.state == entry_state::ready && !v.is_licence && v.d.expires_at)
                facts += std::string(facts.empty() ? "" : "; ") + "available until " + html::date(*v.d.expires_at);
            if (!facts.empty())
                b += "<p class=\"detail\">" + facts + "</p>";
            if (!detail.empty())
                b += "<p class=\"detail\">" + detail + "</p>";
            if (v.is_licence) {
                if (v.licence_key && v.state != entry_state::revoked)
                    b += "<p class=\"detail\">Licence key: <code class=\"key\">" +
                         html::escape(*v.licence_key) + "</code></p>";
                else if (!v.licence_key)
                    b += "<p class=\"detail\">No licence key has been assigned.</p>";
            }
            b += "</li>\n";
        }
        b += "</ul>\n</section>\n";
    }
    return b;
}

// --- the store's pages ---------------------------------------------------------------
std::string service::email_html(const email& m, std::string_view) const
{
    std::string b;
    b += "<h1>" + html::value(m.subject) + "</h1>\n<dl>";
    b += "<dt>From</dt><dd>" + html::value(cfg_.shop_name) + "</dd>";
    b += "<dt>To</dt><dd>" + html::value(m.to) + "</dd>";
    b += "<dt>Kind</dt><dd>" + html::escape(m.kind) + "</dd>";
    b += "<dt>Queued</dt><dd>" + html::date(m.queued_at) + "</dd>";
    if (auto it = orders_.find(m.order_id); it != orders_.end())
        b += "<dt>Order</dt><dd><a href=\"" + html::escape(download_page_url(m.order_id)) +
             "\">Download page of order " + html::value(it->second.name) + "</a></dd>";
    b += "</dl>\n<section class=\"card\" aria-label=\"Email body\"><div class=\"body\">" +
         html::linkify(m.body) + "</div></section>\n";
    return b;
}

response service::ui(const request& req, std::string_view sub, const query_params& form,
                     std::string_view csrf, time_point raw_now)
{
    const time_point now = effective_now(raw_now);
    tick(now);
    const std::string base(ui_base);
    auto header = [&](std::string_view current) {
        std::string h = "<p class=\"brand\">" + html::value(cfg_.shop_name) + " <span>(sandbox)</span></p>";
        h += "<nav aria-label=\"Store pages\"><ul>";
        const std::pair<std::string_view, std::string_view> links[] = {
            {"", "Overview"}, {"/outbox", "Outbox"}, {"/assets", "Assets"},
            {"/products", "Digital products"}, {"/orders", "Orders"}};
        for (const auto& [p, name] : links)
            h += "<li><a href=\"" + base + std::string(p.empty() ? "/" : p) + "\"" +
                 (p == current ? " aria-current=\"page\"" : "") + ">" + std::string(name) + "</a></li>";
        h += "<li><form method=\"post\" action=\"" + base + "/logout\">" + csrf_field(csrf) +
             "<button type=\"submit\">Log out</button></form></li></ul></nav>";
        h += "<p class=\"clock\">Sandbox clock: " + html::date(now) + "</p>";
        return h;
    };
    auto show = [&](std::string_view current, std::string title, std::string main_html, bool wide = false,
                    int status = 200) {
        html::page_options opts;
        opts.status = status;
        opts.wide = wide;
        opts.header_html = header(current);
        return html::page(title + " - " + cfg_.shop_name + " (sandbox)", main_html, opts);
    };
    const std::string* field_value = nullptr;
    auto get = [&](std::string_view name) {
        field_value = query_get(form, name);
        return field_value;
    };

    if (req.method == "POST") {
        if (sub == "/clock") {
            const std::string* s = get("advance_seconds");
            std::optional<double> secs = s ? parse_seconds(*s) : std::nullopt;
            std::optional<std::string> err = secs ? advance_clock_by(*secs, now)
                                                  : std::optional<std::string>("advance_seconds must be a non-negative number");
            if (err)
                return show("", "Clock not moved",
                            "<h1>The clock was not moved</h1>\n<p class=\"error\" role=\"alert\">" +
                                html::escape(*err) + "</p>\n<p><a href=\"" + base + "/\">Back</a></p>\n",
                            false, 422);
            return html::see_other(base + "/");
        }
        if (sub == "/outbox/clear") {
            outbox_.clear();
            return html::see_other(base + "/outbox");
        }
        return show("", "Not found", "<h1>Not found</h1>\n", false, 404);
    }
    if (req.method != "GET" && req.method != "HEAD")
        return show("", "Method not allowed", "<h1>Method not allowed</h1>\n", false, 405);

    if (sub.empty() || sub == "/") {
        std::string b = "<h1>Store overview</h1>\n";
        b += "<section class=\"card\" aria-labelledby=\"clock\"><h2 id=\"clock\">Sandbox clock</h2>";
        b += "<p>Now: " + html::date(now) + " (offset " + std::to_string(offset_.count() / 1000) +
             " s from the machine's clock)</p>";
        b += "<p class=\"note\">Moving the clock on releases preorders, expires downloads and "
             "finishes watermarking, as time passing would.</p>";
        b += "<form method=\"post\" action=\"" + base + "/clock\" class=\"row\">" + csrf_field(csrf);
        const std::pair<int, std::string_view> steps[] = {
            {60, "+1 minute"}, {3600, "+1 hour"}, {86400, "+1 day"}, {30 * 86400, "+30 days"}};
        for (const auto& [secs, label] : steps)
            b += "<button class=\"button secondary\" type=\"submit\" name=\"advance_seconds\" value=\"" +
                 std::to_string(secs) + "\">" + std::string(label) + "</button>";
        b += "</form>";
        b += "<form method=\"post\" action=\"" + base + "/clock\">" + csrf_field(csrf) +
             "<label for=\"advance\">Advance by seconds</label><div class=\"row\">"
             "<input id=\"advance\" name=\"advance_seconds\" type=\"number\" min=\"0\" step=\"any\" "
             "inputmode=\"decimal\" required><button class=\"button\" type=\"submit\">Advance the clock</button>"
             "</div></form></section>\n";
        b += "<section class=\"card\" aria-labelledby=\"counts\"><h2 id=\"counts\">This store</h2><ul>";
        b += "<li><a href=\"" + base + "/outbox\">" + std::to_string(outbox_.size()) + " emails in the outbox</a></li>";
        b += "<li><a href=\"" + base + "/assets\">" + std::to_string(assets_.size()) + " assets</a></li>";
        b += "<li><a href=\"" + base + "/products\">" + std::to_string(digital_products_.size()) +
             " digital products</a></li>";
        b += "<li><a href=\"" + base + "/orders\">" + std::to_string(orders_.size()) + " orders</a></li>";
        b += "</ul></section>\n";
        return show("", "Overview", b);
    }
    if (sub == "/outbox") {
        std::string b = "<h1>Outbox</h1>\n";
        if (outbox_.empty()) {
            b += "<p>No email has been queued.</p>\n";
        } else {
            b += "<form method=\"post\" action=\"" + base + "/outbox/clear\">" + csrf_field(csrf) +
                 "<p><button class=\"button secondary\" type=\"submit\">Clear the outbox</button></p></form>\n";
            b += "<table class=\"stack\"><caption class=\"sr-only\">Queued emails, newest first</caption>"
                 "<thead><tr><th scope=\"col\">Subject</th><th scope=\"col\">To</th><th scope=\"col\">Kind</th>"
                 "<th scope=\"col\">Queued</th></tr></thead><tbody>\n";
            for (auto it = outbox_.rbegin(); it != outbox_.rend(); ++it) {
                b += "<tr>" +
                     td("Subject", "<a href=\"" + base + "/outbox/" + std::to_string(it->number) + "\">" +
                                       html::value(it->subject) + "</a>") +
                     td("To", html::value(it->to)) + td("Kind", html::escape(it->kind)) +
                     td("Queued", html::date(it->queued_at)) + "</tr>\n";
            }
            b += "</tbody></table>\n";
        }
        return show("/outbox", "Outbox", b, true);
    }
    if (sub.starts_with("/outbox/")) {
        const auto n = parse_int64(sub.substr(8));
        for (const auto& m : outbox_)
            if (n && static_cast<std::int64_t>(m.number) == *n)
                return show("/outbox", "Email: " + m.subject, email_html(m, csrf) +
                            "<p><a href=\"" + base + "/outbox\">Back to the outbox</a></p>\n");
        return show("/outbox", "Email not found",
                    "<h1>Email not found</h1>\n<p>It may have been cleared. <a href=\"" + base +
                        "/outbox\">Back to the outbox</a></p>\n",
                    false, 404);
    }
    if (sub == "/assets") {
        std::vector<const asset*> list;
        for (const auto& [id, a] : assets_)
            list.push_back(&a);
        sort_newest_first(list);
        std::string b = "<h1>Assets</h1>\n";
        if (list.empty())
            b += "<p>No assets.</p>\n";
        else {
            b += "<table class=\"stack\"><caption class=\"sr-only\">Assets, newest first</caption><thead><tr>"
                 "<th scope=\"col\">Name</th><th scope=\"col\">Type</th><th scope=\"col\">File</th>"
                 "<th scope=\"col\">Size</th><th scope=\"col\">Options</th><th scope=\"col\">Id</th></tr></thead><tbody>\n";
            for (const asset* a : list) {
                std::string file = a->type == "external" ? html::value(a->external_url.value_or(""))
                                                         : html::value(a->filename.value_or("")) +
                                                               (a->content_type ? " (" + html::escape(*a->content_type) + ")" : "");
                if (a->type == "internal" && !a->uploaded)
                    file += " - not uploaded";
                std::string options;
                if (a->watermark_asset)
                    options += "watermarked";
                if (a->autogenerate_licence_key)
                    options += std::string(options.empty() ? "" : ", ") + "licence keys generated";
                b += "<tr id=\"asset-" + html::escape(a->id) + "\">" + td("Name", html::value(a->name.value_or(""))) +
                     td("Type", html::escape(a->type)) + td("File", file) +
                     td("Size", a->type == "internal" ? html::bytes(a->byte_size) : "") +
                     td("Options", options) + td("Id", "<code>" + html::escape(a->id) + "</code>") + "</tr>\n";
            }
            b += "</tbody></table>\n";
        }
        return show("/assets", "Assets", b, true);
    }
    if (sub == "/products") {
        std::vector<const digital_product*> list;
        for (const auto& [id, d] : digital_products_)
            list.push_back(&d);
        sort_newest_first(list);
        std::string b = "<h1>Digital products</h1>\n";
        if (list.empty())
            b += "<p>No digital products.</p>\n";
        else {
            b += "<table class=\"stack\"><caption class=\"sr-only\">Digital products, newest first</caption><thead><tr>"
                 "<th scope=\"col\">Store product</th><th scope=\"col\">Assets</th><th scope=\"col\">Message</th>"
                 "<th scope=\"col\">Preorder</th><th scope=\"col\">Id</th></tr></thead><tbody>\n";
            for (const digital_product* d : list) {
                std::string product = d->store_product_id
                                          ? html::value(product_title(*d->store_product_id)) + " (" +
                                                std::to_string(*d->store_product_id) +
                                                (d->store_variant_id ? ", variant " + std::to_string(*d->store_variant_id) : "") + ")"
                                          : std::string("none");
                std::string links;
                for (const auto& aid : d->asset_ids)
                    if (auto it = assets_.find(aid); it != assets_.end())
                        links += std::string(links.empty() ? "" : ", ") + "<a href=\"" + base + "/assets#asset-" +
                                 html::escape(aid) + "\">" +
                                 html::value(it->second.name.value_or(it->second.filename.value_or(aid))) + "</a>";
                std::string pre;
                if (d->preorder_enabled && d->preorder_launch_date)
                    pre = "until " + html::date(*d->preorder_launch_date) +
                          (d->preorder_heading ? ": " + html::value(*d->preorder_heading) : "");
                b += "<tr>" + td("Store product", product) + td("Assets", links) +
                     td("Message", "<span class=\"message\">" + html::value(d->custom_message.value_or("")) + "</span>") +
                     td("Preorder", pre) + td("Id", "<code>" + html::escape(d->id) + "</code>") + "</tr>\n";
            }
            b += "</tbody></table>\n";
        }
        return show("/products", "Digital products", b, true);
    }
    if (sub == "/orders") {
        std::int64_t pg = 1;
        if (const auto* p = get("page"))
            pg = std::max<std::int64_t>(1, parse_int64(*p).value_or(1));
        std::vector<const order*> list;
        for (const auto& [id, o] : orders_)
            list.push_back(&o);
        std::sort(list.begin(), list.end(), [](const order* x, const order* y) {
            return x->created_at != y->created_at ? x->created_at > y->created_at : x->number > y->number;
        });
        const auto total = static_cast<std::int64_t>(list.size());
        const std::int64_t pages = std::max<std::int64_t>(1, (total + orders_per_page - 1) / orders_per_page);
        pg = std::min(pg, pages);
        std::string b = "<h1>Orders</h1>\n<p>" + std::to_string(total) + " orders, newest first; page " +
                        std::to_string(pg) + " of " + std::to_string(pages) + ".</p>\n";
        if (total > 0) {
            b += "<table class=\"stack\"><caption class=\"sr-only\">Orders, newest first</caption><thead><tr>"
                 "<th scope=\"col\">Order</th><th scope=\"col\">Customer</th><th scope=\"col\">Status</th>"
                 "<th scope=\"col\">Created</th><th scope=\"col\">Downloads</th></tr></thead><tbody>\n";
            const std::int64_t first = (pg - 1) * orders_per_page;
            for (std::int64_t k = first; k < std::min(total, first + orders_per_page); ++k) {
                const order* o = list[static_cast<std::size_t>(k)];
                b += "<tr>" +
                     td("Order", "<a href=\"" + html::escape(download_page_url(o->id)) + "\">" +
                                     html::value(o->name) + "<span class=\"sr-only\"> download page</span></a>") +
                     td("Customer", html::value(o->customer_name) + "<br>" + html::value(o->email)) +
                     td("Status", html::escape(o->financial_status.value_or("")) +
                                      (o->fulfillment_status ? ", " + html::escape(*o->fulfillment_status) : "")) +
                     td("Created", html::date(o->created_at)) + td("Downloads", std::to_string(o->download_count)) +
                     "</tr>\n";
            }
            b += "</tbody></table>\n";
        }
        if (pages > 1) {
            b += "<nav aria-label=\"Pages of orders\"><p>";
            if (pg > 1)
                b += "<a href=\"" + base + "/orders?page=" + std::to_string(pg - 1) + "\">Newer orders</a> ";
            if (pg < pages)
                b += "<a href=\"" + base + "/orders?page=" + std::to_string(pg + 1) + "\">Older orders</a>";
            b += "</p></nav>\n";
        }
        return show("/orders", "Orders", b, true);
    }
    return show("", "Not found", "<h1>Page not found</h1>\n", false, 404);
}

} // namespace dd_sandbox
