// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// `ddctl orders watch`: the library's order feed (<digital_delivery/order_feed.hpp>)
// with its checkpoint in ddctl's state directory, events as JSON lines or
// handed to a command (--exec), acknowledged when it exits 0.
#include "watch.hpp"

#include "errors.hpp"
#include "journal.hpp"
#include "output.hpp"
#include "settings.hpp"

#include <digital_delivery/feed_checkpoint.hpp>
#include <digital_delivery/order_feed.hpp>
#include <digital_delivery/redis_feed_checkpoint.hpp>
#include <digital_delivery/sqlite_feed_checkpoint.hpp>
#include <digital_delivery/impl/crypto/sha256.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace ddctl {

namespace asio = boost::asio;

std::string key_fingerprint(const std::string& base_url, const std::string& api_key)
{
    // 16 hex digits of the SHA-256 of the base URL and key (the digest the
    // rate-limit stores and the upload journal name their state by): tells
    // keys apart; the key cannot be read back from it.
    return dd::detail::store_key_digest(base_url, api_key).substr(0, 16);
}

namespace {

struct watch_args
{
    std::string since;
    std::vector<std::string> events{"orders"};
    std::string exec;
    std::string name = "watch";
    double min_interval = 10, max_interval = 60, lookback_interval = 600, lookback_window_hours = 72;
    int max_attempts = 5;
    double retry_initial = 1;
    bool list_dead = false;
    std::string replay;
    bool yes = false;
    std::string checkpoint;                // redis[s]://...: the shared checkpoint
    std::vector<std::string> sentinels;    // host:port of the sentinels
    std::string sentinel_master;
    double lease_ttl = 10;
};

std::uint16_t parse_port(const std::string& s, const std::string& what)
{
    std::uint16_t p = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), p);
    if (ec != std::errc{} || ptr != s.data() + s.size() || p == 0)
        throw cli_error(exit_usage, what + ": '" + s + "' is not a port");
    return p;
}

/// --checkpoint redis[s]://[user:password@]host[:port][/db][?TLS parameters]
/// (the syntax of the rate_limit_store setting), with --sentinel.
dd::redis_store_params parse_checkpoint_url(const watch_args& a)
{
    dd::redis_store_params redis = parse_redis_url(a.checkpoint, "--checkpoint", "", !a.sentinels.empty());
    if (!a.sentinels.empty())
    {
        if (a.sentinel_master.empty())
            throw cli_error(exit_usage, "--sentinel needs --sentinel-master NAME");
        redis.sentinel.master_name = a.sentinel_master;
        redis.sentinel.tls = redis.tls;
        for (const auto& hp : a.sentinels)
        {
            const auto colon = hp.rfind(':');
            if (colon == std::string::npos || colon == 0)
                throw cli_error(exit_usage, "--sentinel: '" + hp + "' is not host:port");
            redis.sentinel.sentinels.push_back({hp.substr(0, colon), parse_port(hp.substr(colon + 1), "--sentinel")});
        }
    }
    else if (!a.sentinel_master.empty())
        throw cli_error(exit_usage, "--sentinel-master needs --sentinel host:port");
    return redis;
}

/// Runs `sh -c cmd` with `input` on its stdin; returns its wait status.
int run_exec(const std::string& cmd, const std::string& input, const std::string& key)
{
    int fds[2];
    if (::pipe(fds) != 0)
        throw cli_error(exit_failure, std::string("--exec: pipe: ") + std::strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[0], 0);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    // The child's stdout is ddctl's stderr: ddctl's stdout stays JSON lines.
    posix_spawn_file_actions_adddup2(&fa, 2, 1);
    const std::string env_key = "DDCTL_EVENT_KEY=" + key;
    std::vector<std::string> env_s;
    for (char** e = environ; e && *e; ++e)
        if (std::strncmp(*e, "DDCTL_EVENT_KEY=", 16) != 0)
            env_s.emplace_back(*e);
    env_s.push_back(env_key);
    std::vector<char*> envp;
    for (auto& s : env_s)
        envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string sh = "/bin/sh", dash_c = "-c", c = cmd;
    char* argv[] = {sh.data(), dash_c.data(), c.data(), nullptr};
    pid_t pid = 0;
    const int rc = ::posix_spawn(&pid, "/bin/sh", &fa, nullptr, argv, envp.data());
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[0]);
    if (rc != 0)
    {
        ::close(fds[1]);
        throw cli_error(exit_failure, std::string("--exec: cannot start /bin/sh: ") + std::strerror(rc));
    }
    // SIGPIPE when the command does not read its stdin: ignored, the write fails.
    struct sigaction ign{}, old{};
    ign.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ign, &old);
    std::size_t off = 0;
    while (off < input.size())
    {
        const ssize_t w = ::write(fds[1], input.data() + off, input.size() - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += static_cast<std::size_t>(w);
    }
    ::close(fds[1]);
    ::sigaction(SIGPIPE, &old, nullptr);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR)
    {
    }
    return status;
}

std::string describe_status(int status)
{
    if (WIFEXITED(status))
        return "exit status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status))
        return "killed by signal " + std::to_string(WTERMSIG(status));
    return "wait status " + std::to_string(status);
}

dd::feed_events parse_events(const std::vector<std::string>& v)
{
    unsigned m = 0;
    for (const auto& s : v)
    {
        std::stringstream ss(s);
        std::string part;
        while (std::getline(ss, part, ','))
        {
            if (part == "orders")
                m |= static_cast<unsigned>(dd::feed_events::orders);
            else if (part == "changes")
                m |= static_cast<unsigned>(dd::feed_events::changes);
            else if (part == "downloads")
                m |= static_cast<unsigned>(dd::feed_events::downloads);
            else if (part == "all")
                m |= static_cast<unsigned>(dd::feed_events::all);
            else
                throw cli_error(exit_usage, "--events: '" + part + "' is not orders, changes, downloads or all");
        }
    }
    if (m == 0)
        throw cli_error(exit_usage, "--events: nothing to watch");
    return static_cast<dd::feed_events>(m);
}

std::chrono::milliseconds ms(double seconds)
{
    return std::chrono::milliseconds(static_cast<long long>(std::llround(seconds * 1000)));
}

asio::awaitable<void> watch(session& s, const watch_args& a)
{
    dd::order_feed_options o;
    o.events = parse_events(a.events);
    o.min_interval = ms(a.min_interval);
    o.max_interval = ms(std::max(a.max_interval, a.min_interval));
    o.lookback_interval = ms(a.lookback_interval);
    o.lookback_window = ms(a.lookback_window_hours * 3600);
    o.max_attempts = a.max_attempts;
    o.retry_initial = ms(a.retry_initial);
    std::optional<dd::date> since;
    if (!a.since.empty())
    {
        since = dd::parse_date(a.since);
        if (!since)
            throw cli_error(exit_usage, "--since: '" + a.since + "' is not a date (YYYY-MM-DD)");
        o.since = dd::timestamp(std::chrono::sys_days(*since));
    }
    if (!a.checkpoint.empty())
    {
        // The shared checkpoint: one active watcher of N (docs/order-feed.md).
        if (a.list_dead || !a.replay.empty())
            throw cli_error(exit_usage, std::string(a.list_dead ? "--dead-letters" : "--replay") +
                                            " reads the local checkpoint: not with --checkpoint");
        dd::redis_feed_lease_params lp;
        lp.ttl = ms(a.lease_ttl);
        auto rcp = std::make_shared<dd::redis_feed_checkpoint>(parse_checkpoint_url(a), a.name, lp);
        ddctl::notice("standby", "standing by for the lease of consumer " + a.name + " (takeover within " +
                                     std::to_string(rcp->takeover_bound().count()) + " ms of a holder's death)");
        dd::order_feed feed(s.client, rcp, o);
        for (;;)
        {
            auto [ec, e] = co_await feed.async_next(asio::as_tuple(asio::deferred));
            if (ec == asio::error::operation_aborted || ec == dd::condition::cancelled)
            {
                // Ctrl-C: the lease is released before the event loop stops,
                // so that a standby takes over at its next poll, not after
                // --lease-ttl (the checkpoint's destructor could only post it).
                co_await asio::this_coro::reset_cancellation_state();
                auto [cec] = co_await rcp->async_close(co_await asio::this_coro::executor, asio::as_tuple(asio::deferred));
                if (cec)
                    ddctl::notice("lease", "the lease was not released (" + cec.message() + ": " +
                                               rcp->status().last_error + "): a standby takes over when it runs out");
                throw cli_error(exit_interrupted, "interrupted: stopped watching (nothing unacknowledged is lost)");
            }
            if (ec == dd::client_errc::checkpoint_lease_lost)
                throw cli_error(exit_failure, "the lease was lost: another watcher of " + a.name +
                                                  " delivers now (nothing acknowledged is lost)");
            if (ec == dd::client_errc::checkpoint_unavailable || ec == dd::client_errc::checkpoint_invalid)
                throw cli_error(exit_failure, "checkpoint: " + ec.message() + ": " + rcp->status().last_error);
            if (ec)
            {
                dd::diagnostics none;
                s.check(ec, none);
            }
            const std::string line = dd::to_json(e);
            const int status = a.exec.empty() ? 0 : run_exec(a.exec, line + "\n", e.key);
            if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
            {
                if (a.exec.empty())
                {
                    std::cout << line << '\n';
                    std::cout.flush();
                }
                auto [aec] = co_await feed.async_ack(e, asio::as_tuple(asio::deferred));
                if (aec)
                    throw cli_error(exit_failure, "checkpoint: " + aec.message() + " " + rcp->status().last_error);
                if (!a.exec.empty())
                {
                    std::cout << line << '\n';
                    std::cout.flush();
                }
                continue;
            }
            const std::string why = describe_status(status);
            auto [fec2, dead] = co_await feed.async_fail(e, why, asio::as_tuple(asio::deferred));
            if (fec2)
                throw cli_error(exit_failure, "checkpoint: " + fec2.message() + " " + rcp->status().last_error);
            std::cerr << "ddctl: " << e.key << ": --exec " << why << (dead ? ": dead-lettered" : ": will retry") << '\n';
        }
    }
    // A dry run creates no state: without a checkpoint file it runs as a first
    // run on a checkpoint in memory (it stops at the first request anyway).
    const std::string dir =
        s.dry_run ? state_directory([](const char* n) { return std::getenv(n); }) : make_state_directory();
    const std::string file = dir + "/watch-" + (s.profile.empty() ? std::string("default") : s.profile) + "-" +
                             s.key_fingerprint + ".db";
    std::shared_ptr<dd::sync_feed_checkpoint> cp;
    std::error_code fec;
    const bool in_memory = s.dry_run && !std::filesystem::exists(file, fec);
    if (in_memory)
        cp = std::make_shared<dd::memory_feed_checkpoint>();
    else
        try
        {
            cp = std::make_shared<dd::sqlite_feed_checkpoint>(file, a.name);
        }
        catch (const std::exception& e)
        {
            throw cli_error(exit_failure, std::string("checkpoint ") + file + ": " + e.what());
        }
    dd::feed_state st;
    if (auto ec = cp->load(st))
        throw cli_error(exit_failure, "checkpoint " + file + ": " + ec.message());
    if (a.list_dead)
    {
        for (const auto& [k, d] : st.dead_letters)
        {
            boost::json::object j{{"key", d.key},
                                  {"error", d.error},
                                  {"attempts", d.attempts},
                                  {"at", dd::format_timestamp(d.at)},
                                  {"event", boost::json::parse(d.event_json)}};
            std::cout << boost::json::serialize(j) << '\n';
        }
        std::cout.flush();
        co_return;
    }
    if (!st.initialised && since)
    {
        // A first run over past orders: say what it costs before it starts.
        dd::order_query q{.created_at_min = dd::date(std::chrono::sys_days(*since) - std::chrono::days(1)), .per_page = 1};
        dd::request_options ro = s.ropts;
        ro.prio = dd::priority::background;
        dd::diagnostics diag;
        auto [ec, l] = co_await dd::async_list_orders(s.client, q, ro, diag, asio::as_tuple(asio::deferred));
        s.check(ec, diag);
        const auto n = l.pagination.total_count;
        std::cerr << "ddctl: first run since " << a.since << ": up to " << n << " orders to deliver, about "
                  << (1 + (n + 249) / 250) << " points (1 per 250 orders; the rate limit is "
                  << "40 points per 60 s); checkpoint " << file << '\n';
    }
    else if (in_memory)
        std::cerr << "ddctl: watching (dry run: no checkpoint " << file << " created)\n";
    else
        std::cerr << "ddctl: watching (checkpoint " << file << ")\n";

    dd::order_feed feed(s.client, cp, o);
    if (!a.replay.empty())
    {
        auto [ec] = co_await feed.async_replay(a.replay, asio::as_tuple(asio::deferred));
        if (ec)
            throw cli_error(ec == dd::client_errc::invalid_argument ? exit_usage : exit_failure,
                            "--replay: no dead letter " + a.replay);
    }
    for (;;)
    {
        auto [ec, e] = co_await feed.async_next(asio::as_tuple(asio::deferred));
        if (ec == asio::error::operation_aborted || ec == dd::condition::cancelled)
            throw cli_error(exit_interrupted, "interrupted: stopped watching (nothing unacknowledged is lost)");
        if (ec)
        {
            dd::diagnostics none;
            s.check(ec, none);
        }
        const std::string line = dd::to_json(e);
        if (a.exec.empty())
        {
            std::cout << line << '\n';
            std::cout.flush();
            auto [aec] = co_await feed.async_ack(e, asio::as_tuple(asio::deferred));
            if (aec)
                throw cli_error(exit_failure, "checkpoint " + file + ": " + aec.message());
            continue;
        }
        const int status = run_exec(a.exec, line + "\n", e.key);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        {
            auto [aec] = co_await feed.async_ack(e, asio::as_tuple(asio::deferred));
            if (aec)
                throw cli_error(exit_failure, "checkpoint " + file + ": " + aec.message());
            std::cout << line << '\n';
            std::cout.flush();
        }
        else
        {
            const std::string why = describe_status(status);
            auto [fec2, dead] = co_await feed.async_fail(e, why, asio::as_tuple(asio::deferred));
            if (fec2)
                throw cli_error(exit_failure, "checkpoint " + file + ": " + fec2.message());
            std::cerr << "ddctl: " << e.key << ": --exec " << why
                      << (dead ? ": dead-lettered (ddctl orders watch --dead-letters; --replay KEY)" : ": will retry") << '\n';
        }
    }
}

}  // namespace

void add_watch(CLI::App& orders, selection& sel)
{
    auto a = std::make_shared<watch_args>();
    auto* app = add_command(orders, "watch",
                            "Watch new orders and their changes: JSON lines on stdout, or each event to a command "
                            "(--exec), acknowledged in a checkpoint in $XDG_STATE_HOME/ddctl/",
                            "ddctl orders watch --events orders,changes --exec './provision.sh'");
    app->add_option("--since", a->since, "first run only: deliver the orders created since this date (YYYY-MM-DD, UTC)");
    app->add_option("--events", a->events, "orders, changes, downloads or all, comma-separated (default orders)")
        ->delimiter(',');
    app->add_option("--exec", a->exec,
                    "run this shell command per event, the event's JSON on its stdin (and DDCTL_EVENT_KEY in its "
                    "environment); exit status 0 acknowledges it, anything else retries it, then dead-letters it");
    app->add_option("--name", a->name, "the consumer's name in the checkpoint (default watch): one checkpoint per name");
    app->add_option("--min-interval", a->min_interval, "seconds between polls after activity (default 10)")
        ->check(CLI::PositiveNumber);
    app->add_option("--max-interval", a->max_interval, "seconds between polls while idle (default 60)")
        ->check(CLI::PositiveNumber);
    app->add_option("--lookback-interval", a->lookback_interval, "seconds between look-back scans (default 600)")
        ->check(CLI::PositiveNumber);
    app->add_option("--lookback-hours", a->lookback_window_hours, "how far the look-back reads, hours (default 72)")
        ->check(CLI::PositiveNumber);
    app->add_option("--max-attempts", a->max_attempts, "--exec attempts before an event is dead-lettered (default 5)")
        ->check(CLI::PositiveNumber);
    app->add_option("--retry-delay", a->retry_initial, "seconds before the second attempt, doubling (default 1)")
        ->check(CLI::PositiveNumber);
    app->add_flag("--dead-letters", a->list_dead, "print the dead letters (JSON lines) and exit");
    app->add_option("--replay", a->replay, "deliver this dead letter again first (its key)");
    app->add_option("--checkpoint", a->checkpoint,
                    "keep the checkpoint in Redis, shared by several watchers of which one delivers (a lease): "
                    "redis://[user:password@]host[:port][/db], rediss://...?ca_file=F&cert_file=F&key_file=F&server_name=N");
    app->add_option("--sentinel", a->sentinels, "with --checkpoint: find the Redis master through these sentinels (host:port)")
        ->delimiter(',');
    app->add_option("--sentinel-master", a->sentinel_master, "with --sentinel: the master's name");
    app->add_option("--lease-ttl", a->lease_ttl,
                    "with --checkpoint: seconds the lease lasts without renewal (default 10); a dead holder is replaced "
                    "within it + 1.5 s")
        ->check(CLI::PositiveNumber);
    app->callback([&sel, a]() {
        sel.sleeps = true;
        sel.run = [a](session& s) -> asio::awaitable<void> { co_await watch(s, *a); };
    });
}

}  // namespace ddctl
