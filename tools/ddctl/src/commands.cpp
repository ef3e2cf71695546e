// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
#include "commands.hpp"

#include "errors.hpp"
#include "journal.hpp"
#include "output.hpp"
#include "payload.hpp"
#include "sync.hpp"
#include "watch.hpp"

#include <digital_delivery/raw_request.hpp>
#include <digital_delivery/testing/sandbox_probe.hpp>
#include <digital_delivery/transport.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <strings.h>

namespace ddctl {

namespace asio = boost::asio;

namespace {

enum class kind
{
    read,
    write,
    emails,   ///< a write that emails a customer: confirmed first
    deletes,  ///< a deletion: confirmed first
};

constexpr std::size_t path_ids(std::string_view path)
{
    std::size_t n = 0;
    for (char c : path)
        n += c == '{';
    return n;
}

const output_spec asset_spec{"asset", {}, {}};
const output_spec asset_list_spec{{}, "assets", {"id", "type", "name", "filename", "byte_size", "created_at"}};
const output_spec product_spec{"digital_product", {}, {}};
const output_spec product_list_spec{{}, "digital_products", {"id", "store_product_id", "store_variant_id", "assets", "created_at"}};
const output_spec order_spec{"order", {}, {}};
const output_spec order_list_spec{{}, "orders", {"id", "name", "email", "financial_status", "total_price", "currency", "created_at"}};
const output_spec downloads_spec{{}, "downloads", {"id", "file_name", "watermark_status", "downloadable", "download_count", "download_url"}};
const output_spec whole_spec{{}, {}, {}};

/// Sends one request of an endpoint function and prints the answer.
template <class Fn, class... Args>
asio::awaitable<void> send_and_print(session& s, const output_spec& spec, const Fn& fn, const Args&... args)
{
    dd::diagnostics diag;
    auto result = co_await fn(s.client, args..., s.ropts, diag, asio::as_tuple(asio::deferred));
    s.check(std::get<0>(result), diag);
    if (!s.tap->last_body.empty())  // a 204 has nothing to print
        s.out.document(s.tap->last_body, spec);
}

/// The state of one endpoint subcommand, filled by CLI11.
struct endpoint_args
{
    std::vector<std::string> ids;
    payload_values payload;
    bool all = false;
};

/// What a command does after its answer is printed (given the path's first id).
using after_fn = asio::awaitable<void> (*)(session&, std::string);

/// On the sandbox only (dd::testing::answers_as_the_sandbox, as
/// examples/typical_flow.cpp recognises it): the link of the order's hosted
/// download page on stderr, `ddctl: download page (sandbox): URL`, or with
/// --output json the notice {"notice": {"kind": "download_page", ..., "url": URL}}. stdout is the API's
/// answer either way; nothing is said when the service is not the sandbox or
/// the link cannot be had.
asio::awaitable<void> print_download_page(session& s, std::string order_id)
{
    if (!s.transport || s.dry_run)
        co_return;
    const auto& params = s.client.params();
    auto [hec, health] = co_await dd::async_transport_send(*s.transport, dd::testing::sandbox_health_request(params.base_url),
                                                           asio::as_tuple(asio::deferred));
    if (hec || !dd::testing::answers_as_the_sandbox(health))
        co_return;
    auto [pec, page] = co_await dd::async_transport_send(
        *s.transport, dd::testing::sandbox_download_page_request(params.base_url, params.api_key, order_id),
        asio::as_tuple(asio::deferred));
    const std::string url = pec ? std::string() : dd::testing::download_page_url_of(page);
    if (url.empty())
        co_return;
    notice("download_page", "download page (sandbox): " + url, {{"url", url}});
}

/// `ddctl <resource> <verb>` for the endpoint of `fn`: one positional per
/// {placeholder} of its path, one option per field of its query or body.
template <class D, class Seq>
void endpoint_command(CLI::App& parent, selection& sel, const char* name, const char* help, const char* example,
                      const dd::request_fn<D, Seq>& fn, const output_spec& spec, kind k, const char* what = "",
                      after_fn after = nullptr)
{
    auto* app = add_command(parent, name, help, example);
    auto args = std::make_shared<endpoint_args>();
    constexpr std::size_t n_ids = path_ids(D::path);
    constexpr bool has_query = !std::is_void_v<typename D::query>;
    constexpr bool has_body = !std::is_void_v<typename D::body>;
    if constexpr (n_ids > 0)
        app->add_option("id", args->ids, "the id in " + std::string(D::path))->required()->expected(static_cast<int>(n_ids));
    if constexpr (has_query)
    {
        add_payload_options<typename D::query>(*app, args->payload);
        app->add_flag("--all", args->all, "walk every page (from --page, default 1) and print items as they arrive; "
                                          "--per-page defaults to the largest the API allows");
    }
    if constexpr (has_body)
        add_payload_options<typename D::body>(*app, args->payload);
    app->callback([&sel, args, fn, spec, k, what, after]() {
        if (k == kind::emails || k == kind::deletes)
            sel.confirm = std::string(what) + " " + (args->ids.empty() ? std::string() : args->ids.front());
        sel.write = k != kind::read;
        sel.run = [args, fn, spec, after](session& s) -> asio::awaitable<void> {
            (void)after;  // used by the commands without a query or body only
            if constexpr (has_query)
            {
                typename D::query q{};
                fill_payload(q, args->payload);
                if (!args->all)
                {
                    dd::diagnostics diag;
                    auto [ec, list] = co_await fn(s.client, q, s.ropts, diag, asio::as_tuple(asio::deferred));
                    s.check(ec, diag);
                    const std::size_t n = s.out.page(s.tap->last_body, spec);
                    if (s.out.json())
                        co_return;
                    const auto& p = list.pagination;
                    // With --no-headers stdout holds the rows alone (for awk): the rest on stderr.
                    const std::string about =
                        p.total_count == 0 ? "no " + spec.noun()
                        : n == 0 ? "no " + spec.noun() + " on page " + std::to_string(p.current_page) + " (" +
                                       std::to_string(p.total_count) + " in all, " + std::to_string(p.total_pages) +
                                       (p.total_pages == 1 ? " page)" : " pages)")
                                 : "(page " + std::to_string(p.current_page) + " of " + std::to_string(p.total_pages) +
                                       ", " + std::to_string(p.total_count) + " in all: --page N or --all for more)";
                    if (s.out.headers())
                        std::cout << about << '\n';
                    else
                        notice("page", about);
                    co_return;
                }
                if (!q.per_page)
                    q.per_page = D::max_per_page;
                auto pages = dd::paginate_pages(fn, s.client, q, dd::paginate_options{}, s.ropts);
                std::size_t printed = 0;
                for (;;)
                {
                    dd::diagnostics diag;
                    auto [ec, page] = co_await pages.async_next(diag, asio::as_tuple(asio::deferred));
                    s.check(ec, diag);
                    if (!page)
                        break;
                    printed += s.out.page(s.tap->last_body, spec);
                }
                if (printed == 0 && !s.out.json())
                {
                    if (s.out.headers())
                        std::cout << "no " << spec.noun() << '\n';
                    else
                        notice("page", "no " + spec.noun());
                }
            }
            else if constexpr (has_body)
            {
                typename D::body b{};
                const bool empty = args->payload.empty();
                fill_payload(b, args->payload);
                if constexpr (D::body_optional)
                {
                    if (empty)
                    {
                        co_await send_and_print(s, spec, fn, args->ids.front());
                        co_return;
                    }
                }
                if constexpr (n_ids > 0)
                    co_await send_and_print(s, spec, fn, args->ids.front(), b);
                else
                    co_await send_and_print(s, spec, fn, b);
            }
            else
            {
                co_await send_and_print(s, spec, fn, args->ids.front());
                if (after)
                    co_await after(s, args->ids.front());
                if (D::method == dd::http_method::delete_)
                    notice("deleted", "deleted " + args->ids.front(), {{"id", args->ids.front()}});
            }
        };
    });
}

// ---- uploads ---------------------------------------------------------------------------

/// Upload sizes in binary units (KiB, MiB: what `ls -h` and `curl` show).
std::string human_bytes(double b) { return human_size(b, 1024); }

/// Upload progress on stderr: a bar on a terminal, plain lines otherwise, none with --no-progress.
dd::upload_options progress_options(bool terminal, bool shown)
{
    dd::upload_options o;
    if (!shown)
        return o;
    o.progress_interval = terminal ? std::chrono::milliseconds(200) : std::chrono::milliseconds(1000);
    o.on_progress = [terminal](const dd::upload_progress& p) {
        const double frac = p.total ? static_cast<double>(p.bytes_sent) / static_cast<double>(p.total) : 1.0;
        const double left = p.rate > 0 ? static_cast<double>(p.total - p.bytes_sent) / p.rate : 0;
        char eta[32];
        std::snprintf(eta, sizeof eta, "ETA %.0f s", left);
        const std::string figures = human_bytes(static_cast<double>(p.bytes_sent)) + " / " +
                                    human_bytes(static_cast<double>(p.total)) + "  " + human_bytes(p.rate) + "/s  " + eta;
        if (terminal && !json_notices())
        {
            const int width = 30, filled = static_cast<int>(frac * width);
            std::fprintf(stderr, "\r[%s%s] %3d%%  %s   ", std::string(filled, '#').c_str(),
                         std::string(width - filled, '.').c_str(), static_cast<int>(frac * 100), figures.c_str());
            if (p.bytes_sent == p.total)
                std::fputc('\n', stderr);
        }
        else
            notice("upload_progress",
                   "upload " + std::to_string(static_cast<int>(frac * 100)) + "%: " + std::to_string(p.bytes_sent) + " of " +
                       std::to_string(p.total) + " bytes, " + figures,
                   {{"bytes_sent", p.bytes_sent}, {"total", p.total}});
        std::fflush(stderr);
    };
    return o;
}

struct upload_args
{
    std::string id;  // replace only
    std::string file;
    std::string filename;
    std::string content_type;
    std::string name;
    std::string watermark;  // "", "true", "false"
    bool new_asset = false;  // upload: a new asset even when the journal has this content committed
    payload_values replacement;  // replace without FILE: the endpoint's own body
};

/// Runs an upload (create or replace) and says what it left behind when it failed.
template <class Start>
asio::awaitable<void> run_upload(session& s, const upload_args& a, const Start& start)
{
    dd::error_code ec;
    const auto ex = co_await asio::this_coro::executor;
    auto src = dd::file_source::open(a.file, ec, ex);
    if (!src)
        throw cli_error(exit_usage, "cannot read " + a.file + ": " + ec.message());
    dd::diagnostics diag;
    const dd::upload_options opts = progress_options(s.terminal_err, s.progress);
    auto [uec, asset] = co_await start(src, opts, diag);
    const std::string then = "PUT the " + std::to_string(src->size()) + " bytes of " + a.file + " to the presigned upload URL";
    if (!s.dry_run && uec && !asset.id.empty())
        std::cerr << "ddctl: asset " << asset.id << " exists without its file (" << a.file
                  << " was not stored): delete it with `ddctl assets delete " << asset.id
                  << "` or upload the file again with `ddctl assets replace " << asset.id << " " << a.file << "`\n";
    else if (!s.dry_run && uec == dd::condition::cancelled)
        std::cerr << "ddctl: interrupted before the asset was created (if the create request had reached the "
                     "server, an asset named after the file may exist: see `ddctl assets list --q NAME`)\n";
    s.check(uec, diag, then);
    s.out.document(s.tap->last_body, asset_spec);
}

std::string filename_of(const upload_args& a)
{
    if (!a.filename.empty())
        return a.filename;
    const auto slash = a.file.find_last_of('/');
    return slash == std::string::npos ? a.file : a.file.substr(slash + 1);
}

void upload_options_of(CLI::App& app, upload_args& a)
{
    app.add_option("--filename", a.filename, "the attachment name on download (default: FILE's name)");
    app.add_option("--content-type", a.content_type, "MIME type (default: the API's)");
}

void add_upload_commands(CLI::App& assets, selection& sel)
{
    {
        auto a = std::make_shared<upload_args>();
        auto* app = add_command(assets, "upload", "Create an internal asset and upload FILE as its body (up to 2 GB)",
                                "ddctl assets upload manual.pdf --content-type application/pdf --watermark-asset true");
        app->add_option("file", a->file, "the file to upload")->required();
        upload_options_of(*app, *a);
        app->add_option("--name", a->name, "display name");
        app->add_flag("--new-asset", a->new_asset,
                      "create a new asset even when the upload journal has this content uploaded (docs/cli.md)");
        completes_with(app->add_option("--watermark-asset", a->watermark, "PDF watermarking on delivery (true|false)")
                           ->check(CLI::IsMember({"true", "false"})),
                       {"true", "false"});
        app->callback([&sel, a]() {
            sel.run = [a](session& s) -> asio::awaitable<void> {
                const std::string filename = filename_of(*a);
                dd::upload_asset_params params{.filename = std::string_view(filename)};
                if (!a->content_type.empty())
                    params.content_type = std::string_view(a->content_type);
                if (!a->name.empty())
                    params.name = std::string_view(a->name);
                if (!a->watermark.empty())
                    params.watermark_asset = a->watermark == "true";
                if (!s.dry_run)  // through the upload journal (journal.cpp)
                {
                    co_await journaled_upload(s, a->file, params, progress_options(s.terminal_err, s.progress), a->new_asset);
                    co_return;
                }
                // named: g++ 12 miscompiles a capturing lambda passed inside co_await (docs/compilers.md)
                const auto start = [&](std::shared_ptr<dd::file_source> src, const dd::upload_options& o,
                                       dd::diagnostics& diag) {
                    return dd::async_upload_asset(s.client, src, params, o, s.ropts, diag, asio::as_tuple(asio::deferred));
                };
                co_await run_upload(s, *a, start);
            };
        });
    }
    {
        auto a = std::make_shared<upload_args>();
        auto* app = add_command(assets, "replace",
                                "Replace an internal asset's file: with FILE, upload it; without, only ask for an "
                                "upload URL (POST /assets/{id}/replace)",
                                "ddctl assets replace 3f2a0c1e-... manual-v2.pdf");
        app->add_option("id", a->id, "the asset's id")->required();
        app->add_option("file", a->file, "the new file (omit to only call the endpoint: --filename and --byte-size)");
        add_payload_options<dd::asset_replacement>(*app, a->replacement);
        app->callback([&sel, a]() {
            sel.run = [a](session& s) -> asio::awaitable<void> {
                if (a->file.empty())
                {
                    dd::asset_replacement body{};
                    fill_payload(body, a->replacement);
                    co_await send_and_print(s, whole_spec, dd::async_replace_asset, a->id, body);
                    co_return;
                }
                // With FILE: its name and size; --filename and --content-type as given.
                a->filename = a->replacement.text.count("filename") ? a->replacement.text["filename"] : std::string();
                a->content_type = a->replacement.text.count("content_type") ? a->replacement.text["content_type"] : std::string();
                const std::string filename = filename_of(*a);
                dd::replace_asset_params params{.filename = std::string_view(filename)};
                if (!a->content_type.empty())
                    params.content_type = std::string_view(a->content_type);
                const auto start = [&](std::shared_ptr<dd::file_source> src, const dd::upload_options& o,
                                       dd::diagnostics& diag) {
                    return dd::async_replace_asset_body(s.client, a->id, src, params, o, s.ropts, diag,
                                                        asio::as_tuple(asio::deferred));
                };
                co_await run_upload(s, *a, start);
            };
        });
    }
}

// ---- products add-assets / remove-assets ------------------------------------------------

void add_asset_edit(CLI::App& products, selection& sel, const char* name, const char* help, const char* example, bool add)
{
    struct edit_args
    {
        std::string id;
        std::vector<std::string> ids;
        bool no_recheck = false;
    };
    auto a = std::make_shared<edit_args>();
    auto* app = add_command(products, name, help, example);
    app->add_option("id", a->id, "the digital product's id")->required();
    app->add_option("--asset-ids", a->ids, "asset ids, comma-separated or repeated")->required()->delimiter(',');
    app->add_flag("--no-recheck", a->no_recheck, "do not read the product again right before the PATCH (one GET less; "
                                                 "a concurrent change is then not detected)");
    app->callback([&sel, a, add]() {
        sel.write = true;
        sel.run = [a, add](session& s) -> asio::awaitable<void> {
            const dd::asset_edit_options o{.recheck_before_patch = !a->no_recheck};
            const std::vector<std::string>& ids = a->ids;
            dd::diagnostics diag;
            dd::error_code ec;
            if (add)
            {
                auto [e, p] = co_await dd::async_add_assets(s.client, a->id, ids, o, s.ropts, diag, asio::as_tuple(asio::deferred));
                ec = e;
            }
            else
            {
                auto [e, p] = co_await dd::async_remove_assets(s.client, a->id, ids, o, s.ropts, diag, asio::as_tuple(asio::deferred));
                ec = e;
            }
            s.check(ec, diag, "PATCH /digital_products/" + a->id + " with the whole asset list, changed (and a GET more before, to detect a concurrent change)");
            s.out.document(s.tap->last_body, product_spec);
        };
    });
}

// ---- orders wait-downloads ------------------------------------------------------------

void add_wait_downloads(CLI::App& orders, selection& sel)
{
    struct wait_args
    {
        std::string id;
        double initial = 1, max = 10;
    };
    auto a = std::make_shared<wait_args>();
    auto* app = add_command(orders, "wait-downloads",
                            "Poll an order's downloads until no file is being watermarked (bound it with --timeout)",
                            "ddctl orders wait-downloads 8d1b... --timeout 120 --output json");
    app->add_option("id", a->id, "the order's id")->required();
    app->add_option("--initial-interval", a->initial, "seconds before the second poll (default 1)")->check(CLI::PositiveNumber);
    app->add_option("--max-interval", a->max, "longest wait between polls, seconds (default 10)")->check(CLI::PositiveNumber);
    app->callback([&sel, a]() {
        sel.sleeps = true;
        sel.run = [a](session& s) -> asio::awaitable<void> {
            const dd::watermark_wait_options w{
                .initial_interval = std::chrono::milliseconds(static_cast<long long>(a->initial * 1000)),
                .max_interval = std::chrono::milliseconds(static_cast<long long>(a->max * 1000))};
            dd::diagnostics diag;
            auto [ec, d] = co_await dd::async_wait_for_downloads(s.client, a->id, w, s.ropts, diag, asio::as_tuple(asio::deferred));
            s.check(ec, diag);
            s.out.document(s.tap->last_body, downloads_spec);
        };
    });
}

// ---- request METHOD PATH -------------------------------------------------------------------

struct raw_args
{
    std::string method, path;
    std::vector<std::string> query;
    std::vector<std::string> fields;  // -F
    payload_values body;              // only --data
    bool all = false, include = false;
};

/// --include: the answer's status line and headers, then a blank line.
void print_head(const tap_state& tap)
{
    std::cout << "HTTP/1.1 " << tap.last_status << '\n';
    for (const auto& h : tap.last_headers)
        std::cout << h.name << ": " << h.value << '\n';
    std::cout << '\n';
}

/// Sends one raw request and prints its answer (`--include`: its head first).
asio::awaitable<void> send_raw(session& s, const raw_args& a, const dd::raw_request& r)
{
    dd::diagnostics diag;
    s.tap->last_status = 0;
    auto [ec, v] = co_await dd::async_raw_request(s.client, r, s.ropts, diag, asio::as_tuple(asio::deferred));
    if (a.include && s.tap->last_status && !s.dry_run)
        print_head(*s.tap);
    s.check(ec, diag);
}

/// `request GET PATH --all`: every page, from `page` (default 1), each
/// printed as it arrives: the items of the answer's one list member (next to
/// its `pagination`), as the list commands print theirs.
asio::awaitable<void> walk_raw(session& s, const raw_args& a, dd::raw_query query)
{
    std::int64_t page = 1;
    for (auto it = query.begin(); it != query.end();)
        if (it->first == "page")
        {
            auto [p, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), page);
            if (ec != std::errc{} || p != it->second.data() + it->second.size() || page < 1)
                throw cli_error(exit_usage, "--all: page must be a positive integer, not " + it->second);
            it = query.erase(it);
        }
        else
            ++it;
    query.emplace_back("page", "");
    std::string items;                            // the list member's name, from the first page
    std::vector<std::string> columns;             // the table's, from the first item's scalar fields
    std::optional<std::int64_t> total;            // total_count of the first page
    std::size_t printed = 0;
    for (;;)
    {
        query.back().second = std::to_string(page);
        co_await send_raw(s, a, dd::raw_request{.path = std::string_view(a.path), .query = query});
        const std::string& body = s.tap->last_body;
        const boost::json::value v = parse_body(body);
        const boost::json::object* o = v.if_object();
        const boost::json::object* p = o && o->if_contains("pagination") ? o->at("pagination").if_object() : nullptr;
        if (!p || !p->if_contains("total_pages") || !p->if_contains("total_count") ||
            !p->at("total_pages").is_int64() || !p->at("total_count").is_int64())
            throw cli_error(exit_failure, "--all: the answer to GET " + a.path +
                                              " has no pagination (total_pages, total_count): not a list");
        if (items.empty())
        {
            for (const auto& kv : *o)
                if (kv.value().is_array())
                {
                    if (!items.empty())
                        throw cli_error(exit_failure, "--all: the answer to GET " + a.path + " has several lists (`" +
                                                          items + "`, `" + std::string(kv.key()) + "`)");
                    items = kv.key();
                }
            if (items.empty())
                throw cli_error(exit_failure, "--all: the answer to GET " + a.path + " has no list");
        }
        const auto count = p->at("total_count").as_int64();
        if (total && *total != count)
            throw cli_error(exit_failure, "--all: the list changed while it was walked (" + std::to_string(*total) +
                                              " items, then " + std::to_string(count) +
                                              "): items may have been skipped or repeated; run it again");
        total = count;
        if (columns.empty())
            if (const auto* arr = o->if_contains(items) ? o->at(items).if_array() : nullptr; arr && !arr->empty())
                if (const auto* first = (*arr)[0].if_object())
                    for (const auto& kv : *first)
                        if (!kv.value().is_structured())
                            columns.emplace_back(kv.key());
        const output_spec spec{{}, items, {columns.begin(), columns.end()}};
        printed += s.out.page(body, spec);
        if (page >= p->at("total_pages").as_int64())
            break;
        ++page;
    }
    if (printed == 0 && !s.out.json())
    {
        if (s.out.headers())
            std::cout << "no " << output_spec{{}, items, {}}.noun() << '\n';
        else
            notice("page", "no " + output_spec{{}, items, {}}.noun());
    }
}

void add_raw_request(CLI::App& app, selection& sel)
{
    auto a = std::make_shared<raw_args>();
    auto* cmd = add_command(app, "request", "Send any request to the API (a path relative to the base URL) and print its JSON answer",
                            "ddctl request GET /orders --query per_page=5 --query status=paid\n"
                            "  ddctl request POST /assets -F asset[type]=licence -F asset[name]='Pro key'\n"
                            "  ddctl request GET /assets --all --jq .id\n"
                            "  ddctl request POST /orders/8d1b.../notify --data '{\"email\": \"a@example.com\"}' --dry-run");
    cmd->add_option("method", a->method, "GET, POST, PUT, PATCH or DELETE")
        ->required()
        ->transform(CLI::IsMember({"GET", "POST", "PUT", "PATCH", "DELETE"}, CLI::ignore_case));
    cmd->add_option("path", a->path, "e.g. /orders/ID/downloads (ids percent-encoded)")->required();
    cmd->add_option("--query", a->query, "a query parameter NAME=VALUE (repeatable; encoded by ddctl)");
    cmd->add_option("--data", a->body.data, "the JSON body, @FILE to read it from a file, @- from stdin");
    cmd->add_option("-F,--field", a->fields,
                    "a typed field KEY=VALUE of the JSON body (with GET: a query parameter), repeatable: KEY is NAME, "
                    "NAME[SUB]... or NAME[] (appended to a list); VALUE a number, true, false or null as JSON, "
                    "@FILE (@-: stdin) for a file's content as a string, else a string");
    cmd->add_flag("--all", a->all, "GET only: walk every page (from --query page=N, default 1) and print the items of "
                                   "each as it arrives, as the list commands do");
    cmd->add_flag("-i,--include", a->include, "print the answer's status line and headers before its body");
    cmd->callback([&sel, a]() {
        sel.write = ::strcasecmp(a->method.c_str(), "GET") != 0;
        sel.run = [a](session& s) -> asio::awaitable<void> {
            dd::raw_query query;
            for (const auto& q : a->query)
            {
                const auto eq = q.find('=');
                if (eq == std::string::npos)
                    throw cli_error(exit_usage, "--query takes NAME=VALUE, not " + q);
                query.emplace_back(q.substr(0, eq), q.substr(eq + 1));
            }
            std::string method = a->method;
            for (auto& c : method)
                c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            if (a->all && method != "GET")
                throw cli_error(exit_usage, "--all walks the pages of a GET, not of a " + method);
            std::vector<typed_field> fields;
            for (const auto& f : a->fields)
                fields.push_back(parse_field(f));
            std::string body = read_data(a->body.data);  // any JSON: the client checks it is JSON
            if (!fields.empty() && method == "GET")
                for (const auto& f : fields)
                {
                    if (f.path.size() != 1)
                        throw cli_error(exit_usage, "-F with GET gives query parameters: NAME=VALUE, not NAME[...]");
                    query.emplace_back(f.path.front(), f.text);
                }
            else if (!fields.empty())
            {
                if (!body.empty())
                    throw cli_error(exit_usage, "the body is given by --data or by -F fields, not both");
                body = boost::json::serialize(fields_object(fields));
            }
            if (a->all)
            {
                co_await walk_raw(s, *a, std::move(query));
                co_return;
            }
            dd::raw_request r{.path = std::string_view(a->path), .query = query};
            if (method == "POST")
                r.method = dd::http_method::post;
            else if (method == "PUT")
                r.method = dd::http_method::put;
            else if (method == "PATCH")
                r.method = dd::http_method::patch;
            else if (method == "DELETE")
                r.method = dd::http_method::delete_;
            r.body = std::string_view(body);
            co_await send_raw(s, *a, r);
            if (!s.tap->last_body.empty())  // a 204 has nothing to print
                s.out.document(s.tap->last_body, whole_spec);
        };
    });
}

}  // namespace

CLI::App* add_command(CLI::App& parent, const char* name, const char* help, const char* example)
{
    auto* app = parent.add_subcommand(name, help);
    app->footer(std::string("Example:\n  ") + example +
                "\n\nGlobal options (--output, --dry-run, --yes, --profile, --timeout, --verbose, ...): ddctl --help");
    app->fallthrough();
    return app;
}

void add_api_commands(CLI::App& root, selection& sel)
{
    auto* assets = add_command(root, "assets", "Files, external links and licence keys",
                               "ddctl assets list --type licence --output json");
    assets->require_subcommand(1);
    endpoint_command(*assets, sel, "list", "List assets (GET /assets)", "ddctl assets list --q manual --all",
                     dd::async_list_assets, asset_list_spec, kind::read);
    endpoint_command(*assets, sel, "get", "Show an asset (GET /assets/{id})", "ddctl assets get 3f2a0c1e-...",
                     dd::async_get_asset, asset_spec, kind::read);
    endpoint_command(*assets, sel, "create",
                     "Create an asset (POST /assets); for an internal one it prints the upload URL (see also `assets upload`)",
                     "ddctl assets create --type licence --name 'Pro key' --autogenerate-licence-key true",
                     dd::async_create_asset, whole_spec, kind::write);
    endpoint_command(*assets, sel, "update", "Change an asset (PATCH /assets/{id})",
                     "ddctl assets update 3f2a0c1e-... --name 'Manual (2nd edition)'", dd::async_update_asset, asset_spec,
                     kind::write);
    endpoint_command(*assets, sel, "delete", "Delete an asset (DELETE /assets/{id}); asks first",
                     "ddctl assets delete 3f2a0c1e-... --yes", dd::async_delete_asset, whole_spec, kind::deletes,
                     "deletes asset");
    add_upload_commands(*assets, sel);
    add_recover_command(*assets, sel);
    add_sync_commands(*assets, sel);  // assets check, assets sync (sync.cpp)

    auto* products = add_command(root, "products", "Digital products: assets linked to a storefront product",
                                 "ddctl products list --store-product-id 7500000001111");
    products->require_subcommand(1);
    endpoint_command(*products, sel, "list", "List digital products (GET /digital_products)",
                     "ddctl products list --all --output json", dd::async_list_digital_products, product_list_spec, kind::read);
    endpoint_command(*products, sel, "get", "Show a digital product (GET /digital_products/{id})",
                     "ddctl products get 5c9e...", dd::async_get_digital_product, product_spec, kind::read);
    endpoint_command(*products, sel, "create", "Link assets to a storefront product (POST /digital_products)",
                     "ddctl products create --store-product-id 7500000001111 --asset-ids 3f2a...,9b0c...",
                     dd::async_create_digital_product, product_spec, kind::write);
    endpoint_command(*products, sel, "update",
                     "Change a digital product (PATCH /digital_products/{id}); --asset-ids replaces the whole list",
                     "ddctl products update 5c9e... --custom-message 'Thank you!'", dd::async_update_digital_product,
                     product_spec, kind::write);
    endpoint_command(*products, sel, "delete", "Delete a digital product (DELETE /digital_products/{id}); asks first",
                     "ddctl products delete 5c9e... --yes", dd::async_delete_digital_product, whole_spec, kind::deletes,
                     "deletes digital product");
    add_asset_edit(*products, sel, "add-assets",
                   "Link more assets to a digital product (read, append, PATCH the whole list; not atomic: a concurrent "
                   "change is detected, not prevented)",
                   "ddctl products add-assets 5c9e... --asset-ids 3f2a...", true);
    add_asset_edit(*products, sel, "remove-assets", "Unlink assets from a digital product (read, remove, PATCH the whole list)",
                   "ddctl products remove-assets 5c9e... --asset-ids 3f2a...", false);
    endpoint_command(*products, sel, "notify-buyers",
                     "Email every buyer of a digital product (POST /digital_products/{id}/notify_buyers); asks first",
                     "ddctl products notify-buyers 5c9e... --subject 'New version' --yes", dd::async_notify_buyers, whole_spec,
                     kind::emails, "emails every buyer of digital product");

    auto* orders = add_command(root, "orders", "Orders of the store, their downloads and attached files",
                               "ddctl orders list --status paid --created-at-min 2026-11-01");
    orders->require_subcommand(1);
    endpoint_command(*orders, sel, "list", "List orders (GET /orders)", "ddctl orders list --email ada@ --sort name_asc --all",
                     dd::async_list_orders, order_list_spec, kind::read);
    // On the sandbox, also the link of the order's download page (stderr).
    endpoint_command(*orders, sel, "get", "Show an order (GET /orders/{id})", "ddctl orders get 8d1b...", dd::async_get_order,
                     order_spec, kind::read, "", print_download_page);
    endpoint_command(*orders, sel, "downloads", "Show an order's files and their state (GET /orders/{id}/downloads)",
                     "ddctl orders downloads 8d1b...", dd::async_get_order_downloads, downloads_spec, kind::read);
    add_wait_downloads(*orders, sel);
    add_watch(*orders, sel);
    endpoint_command(*orders, sel, "attach", "Attach assets to an order (POST /orders/{id}/attach_assets)",
                     "ddctl orders attach 8d1b... --asset-ids 3f2a...", dd::async_attach_assets, whole_spec, kind::write);
    endpoint_command(*orders, sel, "detach", "Detach assets from an order (DELETE /orders/{id}/detach_assets)",
                     "ddctl orders detach 8d1b... --asset-ids 3f2a...", dd::async_detach_assets, whole_spec, kind::write);
    endpoint_command(*orders, sel, "notify", "Email the customer their download links (POST /orders/{id}/notify); asks first",
                     "ddctl orders notify 8d1b... --email other@example.com --yes", dd::async_notify_order, whole_spec,
                     kind::emails, "emails the customer of order");

    add_raw_request(root, sel);
}

}  // namespace ddctl
