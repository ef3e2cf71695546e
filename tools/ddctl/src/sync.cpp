// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
#include "sync.hpp"

#include "errors.hpp"
#include "journal.hpp"
#include "output.hpp"
#include "session.hpp"

#include <digital_delivery/error_with_diagnostics.hpp>
#include <digital_delivery/sqlite_sync_manifest.hpp>
#include <digital_delivery/sqlite_upload_journal.hpp>
#include <digital_delivery/sync.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/resource.h>

namespace ddctl {

namespace asio = boost::asio;
namespace json = boost::json;

std::string human_duration(double seconds)
{
    if (!(seconds > 0))
        return "0 s";
    const double capped = std::min(seconds, 99999.0 * 3600);
    const auto s = static_cast<std::int64_t>(std::ceil(capped));
    const std::int64_t h = s / 3600, m = (s % 3600) / 60, r = s % 60;
    if (h > 0)
        return std::to_string(h) + " h " + std::to_string(m) + " min";
    if (m > 0)
        return std::to_string(m) + " min " + std::to_string(r) + " s";
    return std::to_string(r) + " s";
}

namespace {

/// Sizes in decimal units (KB, MB: what file managers and the API's byte_size speak).
std::string human_size(double b) { return ddctl::human_size(b, 1000); }

/// The command line of `assets check` / `assets sync`.
struct sync_args
{
    bool apply = false;  // sync (else check)
    std::string dir;
    bool delete_remote = false;
    std::optional<std::size_t> max_delete;
    double max_shrink_percent = 50;
    bool delete_linked = false;
    std::vector<std::string> include, exclude;
    std::string adopt;  // "", "trust", "replace"
    bool reupload_moved = false;
    bool hidden = false;
    bool symlinks = false;
    std::string product;
    unsigned transfers = 4;
    std::optional<std::int64_t> max_points;
    // the include/exclude rules in command-line order (filled after parsing)
    std::vector<dd::sync_rule> rules;
};

/// CPU seconds of this process so far (user + system).
double cpu_seconds()
{
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

dd::sync_options options_of(const sync_args& a)
{
    dd::sync_options o;
    o.rules = a.rules;
    o.hidden = a.hidden;
    o.symlinks = a.symlinks;
    o.rename_replace = a.reupload_moved;
    o.delete_remote = a.delete_remote;
    o.max_delete = a.max_delete;
    o.max_shrink = a.max_shrink_percent / 100.0;
    o.delete_linked = a.delete_linked;
    o.adopt = a.adopt == "replace" ? dd::sync_adopt::replace : a.adopt == "trust" ? dd::sync_adopt::trust : dd::sync_adopt::off;
    if (!a.product.empty())
        o.product_id = a.product;
    return o;
}

/// The client's rate: points per second, and the balance it has now.
struct pace
{
    double rate = 0;        // points per second (0: no limit known)
    double capacity = 0;
    double balance = 0;     // points available now (estimate)
};

pace pace_of(const session& s)
{
    pace p;
    const auto& rl = s.client.params().rate_limit;
    if (!rl.enabled || !(rl.window.count() > 0))
        return p;
    p.capacity = rl.capacity;
    p.rate = rl.capacity / rl.window.count();
    const auto snap = s.client.rate_limit();
    p.balance = snap.remaining ? static_cast<double>(*snap.remaining) : p.capacity;
    return p;
}

/// Seconds until `points` more points are spent at `p`, from its balance.
double points_eta(std::int64_t points, const pace& p)
{
    if (p.rate <= 0 || points <= 0)
        return 0;
    return std::max(0.0, static_cast<double>(points) - p.balance) / p.rate;
}

json::object action_json(const dd::sync_action& a)
{
    json::object o{{"action", dd::to_string(a.kind)},
                   {"reason", dd::to_string(a.reason)},
                   {"path", a.path},
                   {"points", a.points},
                   {"bytes", a.bytes}};
    if (!a.from_path.empty())
        o["from"] = a.from_path;
    if (!a.asset_id.empty())
        o["asset_id"] = a.asset_id;
    if (a.error)
        o["error"] = a.error.message();
    if (!a.message.empty())
        o["message"] = a.message;
    if (!a.candidates.empty())
    {
        json::array c;
        for (const auto& id : a.candidates)
            c.emplace_back(id);
        o["candidates"] = std::move(c);
    }
    return o;
}

/// One line for people: "create  docs/manual.pdf  3.2 MB  3 points  (new_file)".
std::string action_line(const dd::sync_action& a)
{
    std::string line = std::string(dd::to_string(a.kind));
    line.resize(std::max<std::size_t>(line.size(), 9), ' ');
    line += ' ';
    if (!a.from_path.empty())
        line += a.from_path + " -> ";
    line += a.path;
    if (a.bytes)
        line += "  " + human_size(static_cast<double>(a.bytes));
    if (a.points)
        line += "  " + std::to_string(a.points) + " points";
    line += "  (" + std::string(dd::to_string(a.reason));
    if (!a.asset_id.empty())
        line += ", asset " + a.asset_id;
    line += ")";
    if (!a.message.empty())
        line += ": " + a.message;
    else if (a.error)
        line += ": " + a.error.message();
    for (const auto& c : a.candidates)
        line += "\n          candidate asset " + c;
    return line;
}

/// "listing 2 GETs (2 points); 120 create (360 points with re-reads), 15 replace (45),
/// 3 delete (6); 413 points ≈ 9 min 20 s at 40 per 60 s from the current balance; 3.2 GB to upload"
std::string plan_summary(const dd::sync_plan& plan, const pace& p, const dd::client_params& params)
{
    const auto& t = plan.totals;
    std::string s = "listing " + std::to_string(plan.listing_requests) + " GET" + (plan.listing_requests == 1 ? "" : "s") +
                    " (" + std::to_string(plan.listing_points) + " point" + (plan.listing_points == 1 ? "" : "s") + "); ";
    std::int64_t create_points = 0, replace_points = 0, delete_points = 0;
    for (const auto& a : plan.actions)
        if (a.kind == dd::sync_action_kind::create)
            create_points += a.points;
        else if (a.kind == dd::sync_action_kind::replace)
            replace_points += a.points;
        else if (a.kind == dd::sync_action_kind::delete_asset)
            delete_points += a.points;
    s += std::to_string(t.create) + " create (" + std::to_string(create_points) + " points with re-reads), " +
         std::to_string(t.replace) + " replace (" + std::to_string(replace_points) + "), " + std::to_string(t.delete_asset) +
         " delete (" + std::to_string(delete_points) + ")";
    if (t.move)
        s += ", " + std::to_string(t.move) + " moved";
    if (t.adopt)
        s += ", " + std::to_string(t.adopt) + " adopted";
    if (t.skip)
        s += ", " + std::to_string(t.skip) + " skipped";
    if (t.ambiguous)
        s += ", " + std::to_string(t.ambiguous) + " ambiguous";
    s += ", " + std::to_string(t.unchanged) + " unchanged";
    if (!plan.unfinished.empty())
        s += ", " + std::to_string(plan.unfinished.size()) + " interrupted upload" + (plan.unfinished.size() == 1 ? "" : "s") +
             " to finish (up to " + std::to_string(plan.recovery_points) + " points)";
    if (plan.product_points)
        s += ", product links (" + std::to_string(plan.product_points) + ")";
    const std::int64_t points = t.points + plan.recovery_points;
    s += "; " + std::to_string(points) + " points";
    if (p.rate > 0)
    {
        char per[64];
        std::snprintf(per, sizeof per, "%g per %g s", params.rate_limit.capacity, params.rate_limit.window.count());
        s += " ≈ " + human_duration(points_eta(points, p)) + " at " + per + " from the current balance";
    }
    s += "; " + human_size(static_cast<double>(t.bytes)) + " to upload";
    return s;
}

json::object totals_json(const dd::sync_totals& t)
{
    return json::object{{"create", t.create},   {"replace", t.replace},     {"delete", t.delete_asset},
                        {"adopt", t.adopt},     {"move", t.move},           {"skip", t.skip},
                        {"ambiguous", t.ambiguous}, {"unchanged", t.unchanged}, {"points", t.points},
                        {"bytes", t.bytes}};
}

/// The progress display of a run: one line on a terminal (rewritten), a
/// notice every few seconds otherwise, none with --no-progress.
class progress_display
{
public:
    progress_display(const session& s, const dd::sync_plan& plan)
        : s_(s), shown_(s.progress), terminal_(s.terminal_err && !json_notices()), start_(clock::now())
    {
        for (const auto& a : plan.actions)
            if (a.kind == dd::sync_action_kind::create || a.kind == dd::sync_action_kind::replace ||
                a.kind == dd::sync_action_kind::delete_asset)
                ++actions_;
    }

    void on(const dd::sync_event& e)
    {
        if (e.kind == dd::sync_event_kind::action_done || e.kind == dd::sync_event_kind::action_failed ||
            e.kind == dd::sync_event_kind::action_skipped)
            if (e.action && (e.action->kind == dd::sync_action_kind::create || e.action->kind == dd::sync_action_kind::replace ||
                             e.action->kind == dd::sync_action_kind::delete_asset))
                ++finished_;
        last_ = e;
        last_.message = {};
        if (!shown_)
            return;
        const auto now = clock::now();
        const bool end_of_action = e.kind != dd::sync_event_kind::action_progress;
        if (now - shown_at_ < (terminal_ ? std::chrono::milliseconds(200) : std::chrono::seconds(2)) && !(terminal_ && end_of_action))
            return;
        shown_at_ = now;
        show(now);
    }

    void finish()
    {
        if (shown_ && terminal_ && drawn_)
            std::fputs("\n", stderr);
    }

    /// Clears the terminal line before something else is written to stdout/stderr.
    void clear_line()
    {
        if (shown_ && terminal_ && drawn_)
            std::fputs("\r\033[K", stderr);
    }

private:
    using clock = std::chrono::steady_clock;

    void show(clock::time_point now)
    {
        const double elapsed = std::chrono::duration<double>(now - start_).count();
        const auto& e = last_;
        const std::int64_t points_left = std::max<std::int64_t>(0, e.points_total - e.points_spent);
        const double eta_points = points_eta(points_left, pace_of(s_));
        const std::uint64_t bytes_left = e.bytes_total > e.bytes_done ? e.bytes_total - e.bytes_done : 0;
        const double byte_rate = elapsed > 0.5 ? static_cast<double>(e.bytes_done) / elapsed : 0;
        const std::string eta_bytes = bytes_left == 0 ? "0 s" : byte_rate > 0 ? human_duration(static_cast<double>(bytes_left) / byte_rate) : "?";
        const std::string line = std::to_string(finished_) + "/" + std::to_string(actions_) + " actions, " +
                                 human_size(static_cast<double>(e.bytes_done)) + " / " + human_size(static_cast<double>(e.bytes_total)) +
                                 ", " + std::to_string(e.points_spent) + " / " + std::to_string(e.points_total) +
                                 " points; ETA " + human_duration(eta_points) + " by points, " + eta_bytes + " by bytes";
        if (terminal_)
        {
            std::fprintf(stderr, "\r\033[K%s", line.c_str());
            std::fflush(stderr);
            drawn_ = true;
        }
        else
            notice("sync_progress", "sync " + line,
                   {{"actions_done", finished_},
                    {"actions", actions_},
                    {"bytes_done", e.bytes_done},
                    {"bytes_total", e.bytes_total},
                    {"points_spent", e.points_spent},
                    {"points_total", e.points_total},
                    {"eta_points_s", static_cast<std::int64_t>(std::ceil(eta_points))},
                    {"eta_bytes_s", bytes_left == 0 ? std::int64_t(0) : byte_rate > 0 ? static_cast<std::int64_t>(std::ceil(static_cast<double>(bytes_left) / byte_rate)) : std::int64_t(-1)}});
    }

    const session& s_;
    bool shown_, terminal_;
    bool drawn_ = false;
    clock::time_point start_, shown_at_{};
    std::uint64_t actions_ = 0, finished_ = 0;
    dd::sync_event last_{};
};

/// The whole command: plan (and print it), then, for `sync`, apply.
asio::awaitable<void> run_sync(session& s, const sync_args& a)
{
    namespace fs = std::filesystem;
    std::error_code fec;
    const fs::path root = fs::absolute(a.dir, fec).lexically_normal();
    std::string root_s = root.string();
    while (root_s.size() > 1 && root_s.back() == '/')
        root_s.pop_back();
    if (fec || !fs::is_directory(root_s, fec))
        throw cli_error(exit_usage, a.dir + " is not a directory");

    // The state (upload journal, manifest, the folder's lock) stays out of the
    // folder: refused before anything is created.
    const std::string state_dir = state_directory([](const char* n) { return std::getenv(n); });
    const std::string journal_path = journal_file(state_dir, s.client.params().base_url, s.client.params().api_key);
    {
        std::error_code cec;
        const fs::path canon_state = fs::weakly_canonical(state_dir, cec);
        const fs::path canon_root = fs::canonical(root_s, cec);
        if (!cec)
        {
            const auto rel = canon_state.lexically_relative(canon_root);
            if (!rel.empty() && *rel.begin() != "..")
                throw cli_error(exit_refused, "the upload journal " + journal_path + " is inside " + root_s +
                                                  ": its state must stay out of the folder (set XDG_STATE_HOME elsewhere)");
        }
    }

    const dd::sync_options opts = options_of(a);
    dd::request_options ropts = s.ropts;
    ropts.prio = dd::priority::background;
    dd::diagnostics diag;
    if (s.dry_run)
    {
        // A dry run writes nothing, locally either: no state directory, journal
        // or lock file is created or opened (the plan needs the listing, which
        // a dry run does not send: it prints that first request and stops).
        auto [lec, remote] = co_await dd::async_list_sync_remote(s.client, opts, ropts, diag, asio::as_tuple(asio::deferred));
        s.check(lec, diag, a.apply ? "plan and apply the sync (`ddctl assets check` prints the plan)" : "print the plan");
        co_return;
    }

    // One sync of a folder at a time (the folder's lock, without waiting),
    // then the journal (its own lock: `assets upload` of the same key waits).
    make_state_directory();
    std::optional<dd::sync_folder_lock> lock;
    try
    {
        lock.emplace(journal_path, root_s);
    }
    catch (const dd::error_with_diagnostics& e)
    {
        if (e.code() == dd::sync_errc::locked)
            throw cli_error(exit_refused, "another `ddctl assets sync` of " + root_s + " is running (lock " +
                                              e.get_diagnostics().client_message + ")");
        throw cli_error(exit_failure, "sync lock: " + std::string(e.what()));
    }
    auto j = open_journal_for(s);
    std::optional<dd::sqlite_sync_manifest> manifest;
    try
    {
        manifest.emplace(j->journal->state(), root_s);
    }
    catch (const dd::error_with_diagnostics& e)
    {
        throw cli_error(exit_failure, "sync manifest: " + e.get_diagnostics().client_message);
    }

    // The plan's steps one by one (what async_plan_sync does), so that the local
    // side (manifest, scan, compare) is timed apart from the remote listing.
    auto lap = [wall = std::chrono::steady_clock::now(), cpu = cpu_seconds()]() mutable {
        const auto w = std::chrono::steady_clock::now();
        const double c = cpu_seconds();
        const json::object r{{"ms", static_cast<std::int64_t>(std::chrono::duration<double, std::milli>(w - wall).count())},
                             {"cpu_ms", static_cast<std::int64_t>((c - cpu) * 1000)}};
        wall = w;
        cpu = c;
        return r;
    };
    std::vector<dd::sync_manifest_entry> entries;
    try
    {
        entries = manifest->entries();
    }
    catch (const dd::error_with_diagnostics& e)
    {
        throw cli_error(exit_failure, "sync manifest: " + e.get_diagnostics().client_message);
    }
    dd::error_code sec;
    const dd::sync_local_tree tree = dd::scan_sync_tree(root_s, entries, opts, sec);
    if (sec)
        throw cli_error(exit_usage, a.dir + " is not a readable directory (" + sec.message() + ")");
    json::object timing{{"manifest_and_scan", lap()}};
    if (s.progress)
        notice("sync_listing", "listing the store's assets" +
                                   (opts.delete_remote ? std::string(" and digital products") : std::string()) + "...");
    auto [lec, remote] = co_await dd::async_list_sync_remote(s.client, opts, ropts, diag, asio::as_tuple(asio::deferred));
    s.check(lec, diag);
    timing["listing"] = lap();
    dd::sync_journal_state js;
    try
    {
        js = dd::read_sync_journal(*j->journal, tree, entries);
    }
    catch (const dd::error_with_diagnostics& e)
    {
        throw cli_error(exit_failure, "upload journal: " + e.get_diagnostics().client_message);
    }
    const dd::sync_plan plan = dd::plan_sync_with_journal(tree, entries, remote, js, opts);
    timing["compare"] = lap();

    const pace p = pace_of(s);
    const bool json_out = s.out.json();
    const auto& tot = plan.totals;
    json::object summary{{"root", root_s},
                         {"listing_requests", plan.listing_requests},
                         {"listing_points", plan.listing_points},
                         {"planned", totals_json(tot)},
                         {"points", tot.points + plan.recovery_points},
                         {"eta_points_s", static_cast<std::int64_t>(std::ceil(points_eta(tot.points + plan.recovery_points, p)))},
                         {"timing", timing}};
    if (plan.deletes_refused)
        summary["deletes_refused"] = plan.deletes_refused.message();

    if (!a.apply)
    {
        // `assets check`: the plan, its cost; nothing written
        for (const auto& act : plan.actions)
            if (json_out)
                s.out.value(action_json(act));
            else
                std::cout << action_line(act) << '\n';
        if (json_out)
            s.out.value(json::object{{"summary", summary}});
        else
            std::cout << plan_summary(plan, p, s.client.params()) << '\n';
        std::cout.flush();
        if (plan.deletes_refused)
            throw cli_error(exit_refused, "deletes refused: " + plan.deletes_refused.message() +
                                              " (see --max-delete, --max-shrink, --delete-linked)");
        co_return;
    }

    // `assets sync`: the plan in one line, deletes confirmed, then the apply.
    if (!json_out)
        notice("sync_plan", plan_summary(plan, p, s.client.params()));
    if (tot.delete_asset > 0 && !plan.deletes_refused)
        s.confirm("delete " + std::to_string(tot.delete_asset) + " asset" + (tot.delete_asset == 1 ? "" : "s") +
                  " whose file is gone from " + root_s);

    // what the plan itself leaves out (too large, unreadable, a kept linked asset, a
    // refused delete, an ambiguous adoption): said once, before the run
    for (const auto& act : plan.actions)
        if (act.kind == dd::sync_action_kind::skip || act.kind == dd::sync_action_kind::ambiguous)
        {
            if (json_out)
            {
                json::object o = action_json(act);
                o["result"] = "skipped";
                s.out.value(o);
            }
            else
                std::cout << "skipped  " << action_line(act) << '\n';
        }
    std::cout.flush();

    progress_display shown(s, plan);
    bool changed_during_run = false;
    dd::sync_apply_options ao;
    ao.transfers = std::max(1u, a.transfers);
    ao.max_points = a.max_points;
    ao.on_event = [&](const dd::sync_event& e) {
        if (e.action && (e.kind == dd::sync_event_kind::action_done || e.kind == dd::sync_event_kind::action_failed ||
                         e.kind == dd::sync_event_kind::action_skipped))
        {
            if (e.kind == dd::sync_event_kind::action_skipped && e.error == dd::sync_errc::file_changed)
                changed_during_run = true;
            shown.clear_line();
            const char* result = e.kind == dd::sync_event_kind::action_done     ? "done"
                                 : e.kind == dd::sync_event_kind::action_failed ? "failed"
                                                                                : "skipped";
            if (json_out)
            {
                json::object o = action_json(*e.action);
                o["result"] = result;
                if (!e.asset_id.empty())
                    o["asset_id"] = std::string(e.asset_id);
                if (e.error)
                    o["error"] = e.error.message();
                if (!e.message.empty())
                    o["message"] = std::string(e.message);
                s.out.value(o);
            }
            else
            {
                std::string line = std::string(result) + "  " + action_line(*e.action);
                if (e.kind == dd::sync_event_kind::action_done && e.action->asset_id.empty() && !e.asset_id.empty())
                    line += "  -> asset " + std::string(e.asset_id);
                if (e.kind != dd::sync_event_kind::action_done && !e.message.empty())
                    line += " [" + std::string(e.message) + "]";
                std::cout << line << '\n';
                std::cout.flush();
            }
        }
        else if (e.kind == dd::sync_event_kind::stopping)
        {
            shown.clear_line();
            notice("sync_stopping", "stopping: " + (e.message.empty() ? e.error.message() : std::string(e.message)) +
                                        "; the uploads in flight finish");
        }
        shown.on(e);
    };
    auto [aec, result] =
        co_await dd::async_apply_sync(s.client, *j->journal, *manifest, plan, ao, ropts, diag, asio::as_tuple(asio::deferred));
    shown.finish();

    summary["done"] = totals_json(result.done);
    summary["outcome"] = dd::to_string(result.outcome);
    summary["failed"] = result.failed;
    summary["not_started"] = result.not_started;
    summary["recovered"] = result.recovered;
    if (json_out)
        s.out.value(json::object{{"summary", summary}});
    else
    {
        const auto& d = result.done;
        notice("sync_done", std::string(dd::to_string(result.outcome)) + ": " + std::to_string(d.create) + " created, " +
                                std::to_string(d.replace) + " replaced, " + std::to_string(d.delete_asset) + " deleted, " +
                                std::to_string(d.move) + " moved, " + std::to_string(d.adopt) + " adopted, " +
                                std::to_string(result.failed) + " failed, " + std::to_string(result.not_started) +
                                " left for the next run; " + std::to_string(d.points) + " points, " +
                                human_size(static_cast<double>(d.bytes)) + " uploaded");
    }

    switch (result.outcome)
    {
    case dd::sync_outcome::partial:
        throw cli_error(exit_partial, "stopped at --max-points " + std::to_string(a.max_points.value_or(0)) + ": " +
                                          std::to_string(result.not_started) + " actions left; run the same command again to resume");
    case dd::sync_outcome::quota_stopped:
    {
        // which quota: the refused action's own error (asset_count_limit_exceeded
        // or asset_storage_limit_exceeded) and the server's words
        std::string which = diag.server_message.empty() ? aec.message() : diag.server_message;
        for (const auto& r : result.results)
            if (!r.done && r.error == dd::condition::quota_exceeded)
            {
                which = r.message.empty() ? r.error.message() : r.message;
                break;
            }
        const std::uint64_t left = result.failed + result.not_started;
        cli_error err(exit_quota, "the store's quota stopped the uploads: " + which + "; " + std::to_string(left) + " action" +
                                      (left == 1 ? "" : "s") + " left; free space or raise the plan, then run again");
        err.status = diag.http_status;
        throw err;
    }
    case dd::sync_outcome::failed:
    {
        // the first failure says the class (transport, rate limit, ...)
        int code = exit_partial;
        std::string why;
        for (const auto& r : result.results)
            if (!r.done && r.error && r.error != dd::sync_errc::points_exhausted && r.error != dd::sync_errc::file_changed &&
                r.error != dd::sync_errc::uploads_failed)
            {
                code = exit_code_for(r.error);
                why = r.message.empty() ? r.error.message() : r.message;
                break;
            }
        if (code == exit_failure || code == exit_interrupted)
            code = code == exit_interrupted ? exit_interrupted : exit_partial;
        throw cli_error(code, std::to_string(result.failed) + " action" + (result.failed == 1 ? "" : "s") + " failed" +
                                  (why.empty() ? std::string() : " (first: " + why + ")") +
                                  "; the journal keeps them: run the same command again to resume");
    }
    case dd::sync_outcome::complete: break;
    }
    if (aec && aec != dd::sync_errc::points_exhausted)
        s.check(aec, diag);
    if (plan.deletes_refused)
        throw cli_error(exit_refused, "deletes refused: " + plan.deletes_refused.message() +
                                          " (see --max-delete, --max-shrink, --delete-linked); the uploads are done");
    if (changed_during_run)
        throw cli_error(exit_partial, "files changed during the run were skipped; run the same command again to upload them");
}

/// The options of both commands.
void sync_options_of(CLI::App& app, sync_args& a, CLI::Option*& include, CLI::Option*& exclude)
{
    app.add_option("dir", a.dir, "the folder")->required();
    app.add_flag("--delete", a.delete_remote,
                 "delete the assets of files removed from the folder (off by default; asks first, or --yes)");
    app.add_option("--max-delete", a.max_delete, "refuse every delete when more than N are planned")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--max-shrink", a.max_shrink_percent,
                   "refuse every delete when the folder lost more than PERCENT of the files the last sync saw (default 50)")
        ->check(CLI::Range(0.0, 100.0));
    app.add_flag("--delete-linked", a.delete_linked, "also delete assets linked to a digital product");
    include = app.add_option("--include", a.include,
                             "sync only the paths GLOB matches (with --exclude: the first rule that matches decides)")
                  ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    exclude = app.add_option("--exclude", a.exclude, "leave out the paths GLOB matches (`*.tmp`, `drafts/**`)")
                  ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    app.add_flag("--adopt{trust}", a.adopt,
                 "take an existing internal asset of the same filename and size as a new file's (--adopt=replace: "
                 "and upload the file into it)")
        ->check(CLI::IsMember({"trust", "replace"}));
    app.add_flag("--reupload-moved", a.reupload_moved,
                 "upload a moved file again (replace) so its asset's filename follows the new name");
    app.add_flag("--hidden", a.hidden, "include files and folders whose name starts with '.'");
    app.add_flag("--follow-symlinks", a.symlinks, "follow symbolic links to files and folders");
    app.add_option("--product", a.product, "link the synced assets to this digital product (and unlink the deleted ones)");
}

/// The include/exclude rules in the order of the command line.
std::vector<dd::sync_rule> rules_in_order(const CLI::App& app, const CLI::Option* include, const CLI::Option* exclude)
{
    std::vector<dd::sync_rule> rules;
    std::size_t i = 0, e = 0;
    const auto& inc = include->results();
    const auto& exc = exclude->results();
    for (const CLI::Option* o : app.parse_order())
        if (o == include && i < inc.size())
            rules.push_back({true, inc[i++]});
        else if (o == exclude && e < exc.size())
            rules.push_back({false, exc[e++]});
    return rules;
}

}  // namespace

void add_sync_commands(CLI::App& assets, selection& sel)
{
    {
        auto a = std::make_shared<sync_args>();
        auto* app = add_command(assets, "check",
                                "Print what `assets sync DIR` would do and what it costs (reads the store's assets; writes nothing)",
                                "ddctl assets check ./deliverables --delete");
        CLI::Option *include = nullptr, *exclude = nullptr;
        sync_options_of(*app, *a, include, exclude);
        app->callback([&sel, a, app, include, exclude]() {
            a->rules = rules_in_order(*app, include, exclude);
            sel.run = [a](session& s) -> asio::awaitable<void> { co_await run_sync(s, *a); };
        });
    }
    {
        auto a = std::make_shared<sync_args>();
        a->apply = true;
        auto* app = add_command(assets, "sync",
                                "Make the store's internal assets hold the folder's files: create, replace (same id), "
                                "and with --delete delete; resumes after an interruption",
                                "ddctl assets sync ./deliverables --product 8c1d2e3f-... --max-points 400");
        CLI::Option *include = nullptr, *exclude = nullptr;
        sync_options_of(*app, *a, include, exclude);
        app->add_option("--transfers", a->transfers, "uploads at the same time (default 4)")->check(CLI::Range(1u, 64u));
        app->add_option("--max-points", a->max_points,
                        "stop starting actions once the run would spend more than N rate-limit points (exit 8; the next run resumes)")
            ->check(CLI::PositiveNumber);
        app->callback([&sel, a, app, include, exclude]() {
            a->rules = rules_in_order(*app, include, exclude);
            sel.write = true;
            sel.sleeps = true;  // paced on purpose: the progress display shows the points-ETA, no wait notices
            sel.run = [a](session& s) -> asio::awaitable<void> { co_await run_sync(s, *a); };
        });
    }
}

}  // namespace ddctl
