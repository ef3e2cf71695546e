// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// ddctl: the Digital Delivery Service from the command line, on the library's
// public API (docs/cli.md).
#include "commands.hpp"
#include "watch.hpp"
#include "errors.hpp"
#include "jq_filter.hpp"
#include "output.hpp"
#include "payload.hpp"
#include "settings.hpp"
#include "tracing.hpp"

#include <digital_delivery.hpp>
#include <digital_delivery/beast_transport.hpp>

#include <CLI/CLI.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <boost/version.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <unistd.h>

namespace {

namespace asio = boost::asio;
namespace dd = digital_delivery;
using namespace ddctl;

/// "waiting for rate-limit points" while it happens: armed when a request may
/// be about to wait for the limiter (the command starts, an answer came and
/// another request may follow), disarmed when a request is sent. The library
/// reports a limiter wait when it ends; this says so after a second of it.
class wait_notice
{
public:
    explicit wait_notice(asio::any_io_executor ex) : timer_(std::move(ex)) {}
    bool enabled = true;  ///< off for commands that sleep on purpose (wait-downloads polls)

    void arm()
    {
        if (!enabled)
            return;
        timer_.expires_after(std::chrono::seconds(1));
        timer_.async_wait([](const boost::system::error_code& ec) {
            if (!ec)
                ddctl::notice("rate_limit_wait", "waiting for rate-limit points (the key's budget is shared by every ddctl on this host)...");
        });
    }
    void disarm() { timer_.cancel(); }

private:
    asio::steady_timer timer_;
};

/// Seconds with one decimal, as the notices print them.
std::string seconds(double s)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", s);
    return buf;
}

/// Says on stderr what the client waits for; with --verbose, every request
/// (method, path, status; never a header, so never the key). Called on the
/// io_context's one thread (on_throttle may come from another: it only prints).
class cli_observer final : public dd::observer
{
public:
    cli_observer(bool verbose, std::shared_ptr<wait_notice> notice) : verbose_(verbose), notice_(std::move(notice)) {}

    void on_request_start(const dd::request_start_event& e) override
    {
        notice_->disarm();
        if (verbose_)
            ddctl::notice("request",
                   "> " + std::string(dd::to_string(e.request.method)) + " " + std::string(e.request.server_address) +
                       std::string(e.request.path) + " (attempt " + std::to_string(e.attempt) + ")",
                   {{"method", dd::to_string(e.request.method)}, {"path", e.request.path}, {"attempt", e.attempt}});
    }
    void on_response(const dd::response_event& e) override
    {
        notice_->arm();
        if (verbose_)
        {
            const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(e.duration).count();
            ddctl::notice("response",
                   "< " + std::to_string(e.status) + " " + std::string(dd::to_string(e.request.method)) + " " +
                       std::string(e.request.path) + " (" + std::to_string(ms) + " ms)",
                   {{"status", e.status}, {"method", dd::to_string(e.request.method)}, {"path", e.request.path}, {"ms", ms}});
        }
    }
    void on_retry(const dd::retry_event& e) override
    {
        const double delay = static_cast<double>(e.delay.count()) / 1000;
        ddctl::notice("retry",
               std::string(dd::to_string(e.request.method)) + " " + std::string(e.request.path) + " failed (" +
                   e.reason.message() + "): retrying in " + seconds(delay) + " s",
               {{"method", dd::to_string(e.request.method)},
                {"path", e.request.path},
                {"reason", e.reason.message()},
                {"status", e.status},
                {"attempt", e.attempt},
                {"delay_s", delay}});
    }
    void on_limiter_wait(const dd::limiter_wait_event& e) override
    {
        notice_->disarm();
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(e.waited).count();
        if (ms >= 250 || (verbose_ && ms > 0))
            ddctl::notice("rate_limit_wait",
                   "waited " + seconds(static_cast<double>(ms) / 1000) +
                       " s for rate-limit points (the key's budget is shared by every ddctl on this host)",
                   {{"waited_s", static_cast<double>(ms) / 1000}});
    }
    void on_throttle(const dd::throttle_event& e) override
    {
        if (e.what == dd::throttle_event::kind::paused)
        {
            const double pause = static_cast<double>(e.retry_after.count()) / 1000;
            ddctl::notice("rate_limit_pause", "the API answered 429: requests of this key pause for " + seconds(pause) + " s",
                   {{"pause_s", pause}});
        }
        else if (e.what == dd::throttle_event::kind::store_unavailable)
            ddctl::notice("store_unavailable",
                   "shared rate-limit store unavailable (" + e.message + "): using a share of the budget of our own");
        else if (e.what == dd::throttle_event::kind::store_misconfigured)
            ddctl::notice("store_misconfigured", "shared rate-limit store refuses our configuration (" + e.message +
                                              "): fix it; meanwhile using a share of the budget of our own");
        else if (e.what == dd::throttle_event::kind::store_restored)
            ddctl::notice("store_restored", "shared rate-limit store serves again");
    }

private:
    bool verbose_;
    std::shared_ptr<wait_notice> notice_;
};

/// The option named `word` (`--name`, `-n`) of `app` or of a parent, if it takes a value.
const CLI::Option* value_option(const CLI::App* app, const std::string& word)
{
    for (const CLI::App* a = app; a; a = a->get_parent())
        for (const auto* o : a->get_options())
            if (o->check_name(word) && o->get_type_size() != 0)
                return o;
    return nullptr;
}

/// `ddctl __complete WORDS...`: what may follow WORDS (for the bash, zsh and
/// fish completion scripts): after an option that takes a value, its values
/// when they are a known set (nothing otherwise: the shell completes file
/// names); else the subcommands and options, and the line `:files` when the
/// next positional argument is a FILE (the shell then offers file names for
/// a word that does not start with `-`), `:dirs` when it is a DIR (folder names).
void complete(CLI::App& root, const std::vector<std::string>& words)
{
    CLI::App* app = &root;
    std::size_t after = 0;  // the words after the last subcommand
    for (std::size_t i = 0; i < words.size(); ++i)
        if (CLI::App* sub = [&]() -> CLI::App* {
                for (auto* s : app->get_subcommands([](const CLI::App*) { return true; }))
                    if (s->get_name() == words[i])
                        return s;
                return nullptr;
            }())
            app = sub, after = i + 1;
    if (!words.empty() && words.back().starts_with("-") && words.back().find('=') == std::string::npos)
        for (const CLI::App* a = app; a; a = a->get_parent())
            for (const auto* o : a->get_options())
                if (o->check_name(words.back()) && o->get_type_size() != 0)  // takes a value
                {
                    if (const auto* values = completion_values(o))
                        for (const auto& v : *values)
                            std::cout << v << '\n';
                    return;
                }
    // The positional arguments typed so far (an option's value is none).
    std::size_t typed = 0;
    for (std::size_t i = after; i < words.size(); ++i)
        if (!words[i].starts_with("-"))
            ++typed;
        else if (words[i].find('=') == std::string::npos && value_option(app, words[i]))
            ++i;
    const CLI::App* const_app = app;
    for (const auto* o : const_app->get_options([](const CLI::Option* o) { return o->get_positional() && !o->nonpositional(); }))
    {
        const auto n = static_cast<std::size_t>(std::max(o->get_items_expected_max(), 1));
        if (typed >= n)
        {
            typed -= n;
            continue;
        }
        if (o->get_name(true) == "file")
            std::cout << ":files\n";
        else if (o->get_name(true) == "dir")
            std::cout << ":dirs\n";
        break;
    }
    for (auto* s : app->get_subcommands([](const CLI::App* a) { return !a->get_group().empty(); }))
        std::cout << s->get_name() << '\n';
    for (const CLI::App* a = app; a; a = a->get_parent())
        for (const auto* o : a->get_options())
            for (const auto& n : o->get_lnames())
                std::cout << "--" << n << '\n';
}

struct global_options
{
    config_flags config;
    std::string output = "table";
    std::string jq;
    table_options table;
    bool no_headers = false;
    bool verbose = false, dry_run = false, yes = false, no_progress = false;
    std::string trace;  ///< --trace FILE
    double timeout = 0;
};

/// A failure on stderr: `ddctl: LINE`, or with --output json one JSON object
/// {"error": {"code": EXIT CODE, "status": HTTP STATUS|null, "message": LINE, "request": "METHOD PATH"|null}}.
void report(bool json, int code, const std::string& message, unsigned status = 0, const std::string& request = {})
{
    if (!json)
    {
        std::cerr << "ddctl: " << message << '\n';
        return;
    }
    boost::json::object e;
    e["code"] = code;
    e["status"] = status ? boost::json::value(status) : boost::json::value(nullptr);
    e["message"] = message;
    e["request"] = request.empty() ? boost::json::value(nullptr) : boost::json::value(request);
    std::cerr << boost::json::serialize(boost::json::object{{"error", std::move(e)}}) << '\n';
}

/// `--version`: ddctl's, the library's and Boost's.
std::string version_line()
{
    return std::string("ddctl ") + DIGITAL_DELIVERY_VERSION_STRING + " (digital_delivery " + DIGITAL_DELIVERY_VERSION_STRING +
           ", Boost " + std::to_string(BOOST_VERSION / 100000) + "." + std::to_string(BOOST_VERSION / 100 % 1000) + "." +
           std::to_string(BOOST_VERSION % 100) + ")";
}

}  // namespace

int main(int argc, char** argv)
{
    CLI::App app{"ddctl: the Digital Delivery Service from the command line (docs/cli.md)", "ddctl"};
    app.footer("Configuration: DIGITAL_DELIVERY_BASE_URL, DIGITAL_DELIVERY_API_KEY, or a profile of "
               "$XDG_CONFIG_HOME/ddctl/config (see `ddctl config show`).\n"
               "Exit codes: 0 ok, 1 other failure, 2 usage, 3 not found, 4 validation refused, 5 authentication, "
               "6 rate limit or deadline, 7 transport, 8 sync partial (resumable), 9 sync refused, 10 sync stopped by a quota, "
               "130 interrupted.\n"
               "Example:\n  ddctl orders list --status paid --output json");
    app.require_subcommand(1);
    app.fallthrough();
    app.set_version_flag("--version", version_line(), "print ddctl's version, the library's and Boost's, and exit");
    global_options g;
    app.add_option("--profile", g.config.profile, "the config file's profile (default: $DDCTL_PROFILE, else `default`)");
    app.add_option("--config", g.config.config_file, "the config file (default: $DDCTL_CONFIG, else $XDG_CONFIG_HOME/ddctl/config)");
    app.add_option("--base-url", g.config.base_url, "the API's base URL, ending in /api/v1/external");
    app.add_option("--api-key-file", g.config.api_key_file, "read the API key from the first line of this file");
    app.add_option("--rate-limit-store", g.config.rate_limit_store,
                   "where the key's rate-limit budget is shared: shared-memory (every process of this host, default), "
                   "in-process, or redis://[user:password@]host[:port][/db] (every host; "
                   "rediss://...?ca_file=F&cert_file=F&key_file=F&server_name=N for TLS)");
    app.add_option("--rate-limit-points", g.config.rate_limit_points, "the key's budget in points (default 40)");
    app.add_option("--rate-limit-window", g.config.rate_limit_window, "seconds to refill the whole budget (default 60)");
    completes_with(app.add_option("-o,--output", g.output,
                                  "table (for people, default) or json (the API's JSON: one document, or one line per list item)")
                       ->check(CLI::IsMember({"table", "json"})),
                   {"table", "json"});
    app.add_option("--jq", g.jq, "a jq program run on each JSON document, or each item of a list (implies --output json); "
                                 "strings are printed as text, other values as JSON, one per line");
    app.add_option("--columns", g.table.columns, "the columns of a table, comma-separated (any field of the items)")
        ->delimiter(',');
    app.add_flag("--no-headers", g.no_headers, "tables without their header line");
    app.add_option("--timeout", g.timeout, "give up after this many seconds (the whole operation, waits included)")
        ->check(CLI::PositiveNumber);
    app.add_flag("-v,--verbose", g.verbose, "print every request and answer line (method, path, status) on stderr");
    app.add_flag("-n,--dry-run", g.dry_run, "print the request that would be sent (method, path, body) and send nothing");
    app.add_flag("-y,--yes", g.yes, "do not ask before a write that emails a customer or deletes");
    app.add_flag("--no-progress", g.no_progress, "no upload progress on stderr");
    app.add_option("--trace", g.trace, "write the command's spans to FILE (OTLP JSON, one request per line, appended); "
                                       "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT sends them to a collector")
        ->type_name("FILE");

    selection sel;
    add_api_commands(app, sel);
    auto* config = add_command(app, "config", "The configuration ddctl would use", "ddctl --profile staging config show");
    config->require_subcommand(1);
    bool show_config = false, init_config = false;
    std::vector<std::string> set_config;
    add_command(*config, "show", "Each setting, and where it came from (the key redacted)", "ddctl config show")
        ->callback([&] { show_config = true; });
    auto* set = add_command(*config, "set",
                            "Write one setting into the profile (--profile, else `default`) of the config file (mode "
                            "0600, replaced atomically); the key only by `config init` or api_key_file",
                            "ddctl --profile staging config set rate_limit_store redis://ci-redis.internal:6379");
    set->add_option("name", set_config, "base_url, api_key_file, rate_limit_store, rate_limit_points or rate_limit_window")
        ->required()
        ->expected(2);
    add_command(*config, "init",
                "Write a profile: asks for the base URL and the profile, reads the key from stdin (not echoed on a "
                "terminal) or takes --api-key-file",
                "ddctl config init    # or: ddctl --base-url URL --profile shop config init < key.txt")
        ->callback([&] { init_config = true; });
    // `ddctl __complete WORDS...` (for the scripts of completion/): the words
    // as typed, not parsed (they may end with an option missing its value)
    if (argc > 1 && std::string_view(argv[1]) == "__complete")
    {
        complete(app, std::vector<std::string>(argv + 2, argv + argc));
        return exit_ok;
    }

    try
    {
        app.parse(argc, argv);
    }
    catch (const CLI::ParseError& e)
    {
        if (e.get_exit_code() != 0 && g.output == "json")
        {
            report(true, exit_usage, e.what());
            return exit_usage;
        }
        const int r = app.exit(e);
        return r == 0 ? exit_ok : exit_usage;
    }
    const bool json_errors = g.output == "json";
    set_json_notices(json_errors);

    asio::io_context ioc;
    int code = exit_ok;
    try
    {
        // a malformed --jq program is refused before anything is sent
        std::optional<jq_filter> filter;
        if (!g.jq.empty())
            filter.emplace(g.jq);
        g.table.headers = !g.no_headers;
        if (!set_config.empty() || init_config)
        {
            if (init_config)
            {
                const std::string done = config_init(g.config);  // before "ddctl: ": it may ask first
                ddctl::notice("config", done);
            }
            else
            {
                const auto [file, profile] = config_target(g.config);
                write_settings(file, profile, {{set_config[0], set_config[1]}});
                ddctl::notice("config", "wrote " + set_config[0] + " to [" + profile + "] of " + file);
            }
            return exit_ok;
        }
        const settings cfg = resolve_settings(g.config);
        if (show_config)
        {
            std::cout << describe(cfg);
            return exit_ok;
        }
        dd::client_params params = make_client_params(cfg);
        auto notice = std::make_shared<wait_notice>(ioc.get_executor());
        notice->enabled = !sel.sleeps;
        params.observer = std::make_shared<cli_observer>(g.verbose, notice);
        auto tap = std::make_shared<tap_state>();
        tap->api_prefix = params.base_url;
        while (!tap->api_prefix.empty() && tap->api_prefix.back() == '/')
            tap->api_prefix.pop_back();
        std::optional<dd::any_transport> wire;
        if (g.dry_run)
        {
            params.rate_limit.enabled = false;  // sends nothing: spends nothing of the shared budget
            params.retry.enabled = false;
        }
        else
            wire.emplace(dd::beast_transport(ioc.get_executor(), dd::beast_transport_params{}));
        // Spans (--trace FILE, OTEL_EXPORTER_OTLP_*): none of a dry run, which sends nothing.
        std::shared_ptr<dd::otlp_exporter> exporter;
        if (!g.dry_run)
        {
            trace_config tc = make_trace_config(g.trace, [](const char* n) { return std::getenv(n); });
            for (const auto& w : tc.warnings)
                ddctl::notice("warning", w);
            if (tc.enabled())
            {
                try
                {
                    exporter = std::make_shared<dd::otlp_exporter>(std::move(tc.params));
                }
                catch (const std::exception& e)
                {
                    throw cli_error(exit_usage, std::string("--trace: ") + e.what());
                }
                params.tracer = exporter;
            }
        }
        const dd::any_transport tapped(tap_transport(ioc.get_executor(), std::move(wire), tap));
        dd::client client(tapped, std::move(params));

        printer out(std::cout, g.output == "json", filter ? &*filter : nullptr, g.table);
        session s{client, tap, out};
        s.transport = &tapped;
        s.ropts.prio = dd::priority::interactive;
        // TRACEPARENT / TRACESTATE (the OpenTelemetry environment carriers): a
        // traced script's span is the parent of the command's operations.
        std::optional<dd::trace_context> parent;
        if (const char* tp = std::getenv("TRACEPARENT"); tp && *tp)
        {
            const char* ts = std::getenv("TRACESTATE");
            parent = dd::parse_trace_context(tp, ts ? ts : "");
            if (parent)
                s.ropts.trace_parent = parent;
            else
                ddctl::notice("warning", "TRACEPARENT is not a W3C traceparent (version-traceid-spanid-flags): ignored");
        }
        if (g.timeout > 0)
            s.ropts.deadline = std::chrono::steady_clock::now() +
                               std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(g.timeout));
        s.dry_run = g.dry_run;
        s.yes = g.yes;
        s.terminal_in = ::isatty(0) && ::isatty(2);
        s.terminal_err = ::isatty(2);
        s.progress = !g.no_progress;
        s.profile = cfg.profile;
        s.key_fingerprint = key_fingerprint(cfg.get("base_url").value, cfg.get("api_key").value);

        if (!sel.confirm.empty())
            s.confirm(sel.confirm);

        // Ctrl-C: terminal cancellation of the running operation (the library's
        // per-operation cancellation); a second one ends the process at once.
        asio::cancellation_signal cancel;
        bool interrupted = false, done = false;
        asio::signal_set signals(ioc, SIGINT, SIGTERM);
        std::function<void(const boost::system::error_code&, int)> on_signal = [&](const boost::system::error_code& ec, int) {
            if (ec || done)
                return;
            if (interrupted)
                std::_Exit(exit_interrupted);
            interrupted = true;
            if (!json_errors)
                std::fputc('\n', stderr);  // after a progress bar or ^C
            ddctl::notice("interrupted", "interrupted: cancelling");
            cancel.emit(asio::cancellation_type::terminal);
            signals.async_wait(on_signal);
        };
        signals.async_wait(on_signal);

        notice->arm();
        auto run = [&]() -> asio::awaitable<int> {
            co_await sel.run(s);
            co_return exit_ok;
        };
        asio::co_spawn(ioc, run(), asio::bind_cancellation_slot(cancel.slot(), [&](std::exception_ptr e, int r) {
                           done = true;
                           code = r;
                           try
                           {
                               if (e)
                                   std::rethrow_exception(e);
                           }
                           catch (const dry_run_done&)
                           {
                               code = exit_ok;
                           }
                           catch (const cli_error& err)
                           {
                               code = interrupted ? exit_interrupted : err.code;
                               std::string line = err.what();
                               if (interrupted && sel.write)
                                   line += json_errors ? "; " : "\nddctl: ";
                               if (interrupted && sel.write)
                                   line += "interrupted during a write: if the request had already reached the server "
                                           "it may have been applied; look before sending it again";
                               report(json_errors, code, line, err.status, err.request);
                           }
                           catch (const std::exception& err)
                           {
                               code = exit_failure;
                               report(json_errors, code, err.what());
                           }
                           signals.cancel();
                           notice->disarm();
                           ioc.stop();  // idle pooled connections keep timers: stop, do not drain
                       }));
        ioc.run();
        if (exporter)
        {
            // Every span out before ddctl exits, within a bound: a collector
            // that is down does not hold the shell.
            const bool flushed = exporter->shutdown(std::chrono::seconds(5));
            const auto st = exporter->stats();
            if (!flushed || st.dropped())
                ddctl::notice("trace", "spans not exported: " + (st.dropped() ? std::to_string(st.dropped()) : std::string("some")) +
                                    (exporter->traces_url().empty() ? std::string() : " (collector " + exporter->traces_url() + ")"));
        }
    }
    catch (const cli_error& e)
    {
        report(json_errors, e.code, e.what(), e.status, e.request);
        return e.code;
    }
    catch (const std::exception& e)
    {
        report(json_errors, exit_failure, e.what());
        return exit_failure;
    }
    return code;
}
