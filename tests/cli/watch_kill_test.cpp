// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// `ddctl orders watch --exec` SIGKILLed at seeded moments while the sandbox
// takes purchases at random moments: every order is handed to the command,
// none is acknowledged twice, and a handler runs again at most once per kill.
// And `orders watch --checkpoint redis://...`: one watcher of two delivers (the
// lease), the other takes over from the shared checkpoint; malformed URLs.
#include "sandbox_process.hpp"
#include "server_process.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
namespace json = boost::json;
using dd_test::sandbox_process;

namespace {

std::string dd_format_day(std::chrono::sys_days d)
{
    const std::chrono::year_month_day ymd(d);
    char buf[16];
    std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                  static_cast<unsigned>(ymd.day()));
    return buf;
}

std::vector<std::string> lines_of(const fs::path& p)
{
    std::vector<std::string> r;
    std::ifstream in(p);
    for (std::string l; std::getline(in, l);)
        if (!l.empty())
            r.push_back(l);
    return r;
}

struct watch_kill_test : ::testing::Test
{
    fs::path dir;

    void SetUp() override
    {
        char tmpl[] = "/tmp/dd_watch_kill_XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir = tmpl;
    }
    void TearDown() override
    {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }

    /// Starts ddctl (stdout appended to `out`, stderr to `err`, else to
    /// dir/stderr.log); returns its pid.
    pid_t start(const sandbox_process& sb, const std::vector<std::string>& args, const fs::path& out, fs::path err = {})
    {
        if (err.empty())
            err = dir / "stderr.log";
        std::vector<std::string> env_s = {
            "DIGITAL_DELIVERY_BASE_URL=" + sb.base_url(),
            "DIGITAL_DELIVERY_API_KEY=sandbox-key",
            "XDG_STATE_HOME=" + (dir / "state").string(),
            "XDG_CONFIG_HOME=" + (dir / "config").string(),
            "HOME=" + dir.string(),
            "PATH=/usr/bin:/bin",
            "DDCTL_TEST_DIR=" + dir.string(),
        };
        std::vector<std::string> argv_s = {DDCTL_EXE};
        argv_s.insert(argv_s.end(), args.begin(), args.end());
        std::vector<char*> argv, envp;
        for (auto& s : argv_s)
            argv.push_back(s.data());
        argv.push_back(nullptr);
        for (auto& s : env_s)
            envp.push_back(s.data());
        envp.push_back(nullptr);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
        posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
        pid_t pid = 0;
        const int rc = ::posix_spawn(&pid, DDCTL_EXE, &fa, nullptr, argv.data(), envp.data());
        posix_spawn_file_actions_destroy(&fa);
        EXPECT_EQ(rc, 0);
        return pid;
    }
};

std::string text_of(const fs::path& p)
{
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

int wait_exit(pid_t pid)
{
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR)
    {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// The order ids of the new_order events a watcher printed (key "new_order:ID").
std::vector<std::string> delivered(const fs::path& out)
{
    std::vector<std::string> r;
    for (const auto& l : lines_of(out))
    {
        const std::string key(json::parse(l).at("key").as_string());
        if (key.rfind("new_order:", 0) == 0)
            r.push_back(key.substr(10));
    }
    return r;
}

// Two watchers on one Redis checkpoint (a password in the URL): the first
// delivers the orders bought, the second stands by while the first holds the
// lease, then takes over when it stops (Ctrl-C: it releases the lease), from
// the shared checkpoint (nothing again). Malformed --checkpoint URLs: usage errors. The password is never printed.
TEST_F(watch_kill_test, redis_checkpoint_one_watcher_delivers_the_other_stands_by_then_takes_over)
{
    if (!dd_test::have_redis_server())
        GTEST_SKIP() << "no " << dd_test::redis_server_exe;
    const std::string password = "watch-secret-Qx9";
    dd_test::redis_server redis({"--requirepass", password});
    sandbox_process sb({"--seed-orders", "0", "--no-rate-limit"});
    const auto today = std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now());
    const std::string url = "redis://:" + password + "@127.0.0.1:" + std::to_string(redis.port());
    const std::vector<std::string> args = {"orders", "watch", "--checkpoint", url, "--since", dd_format_day(today - std::chrono::days(1)),
                                           "--min-interval", "0.05", "--max-interval", "0.2", "--rate-limit-store", "in-process",
                                           // a minute: the standby takes over within the test only
                                           // because a holder stopped with Ctrl-C releases its lease
                                           "--lease-ttl", "60",
                                           // printed once acknowledged: what one printed, the other never gets
                                           "--exec", "cat > /dev/null"};
    std::set<std::string> bought;
    auto buy = [&](int n) {
        auto resp = sb.request("POST", "/sandbox/purchases", R"({"store_product_id": 7500000001111, "count": )" + std::to_string(n) + "}");
        ASSERT_EQ(resp.status, 201) << resp.body;
        const json::value v = json::parse(resp.body);
        for (const auto& o : v.at("orders").as_array())
            bought.insert(std::string(o.at("id").as_string()));
    };
    auto has_all = [](const fs::path& out, const std::set<std::string>& want) {
        return [out, want] {
            std::set<std::string> got;
            for (const auto& id : delivered(out))
                got.insert(id);
            for (const auto& id : want)
                if (!got.count(id))
                    return false;
            return true;
        };
    };

    buy(3);
    const fs::path a_out = dir / "a.out", a_err = dir / "a.err", b_out = dir / "b.out", b_err = dir / "b.err";
    const pid_t a = start(sb, args, a_out, a_err);
    EXPECT_TRUE(dd_test::poll_until(has_all(a_out, bought))) << text_of(a_err);

    // the second watcher, same checkpoint and name: it stands by; the first delivers what comes
    const pid_t b = start(sb, args, b_out, b_err);
    EXPECT_TRUE(dd_test::poll_until([&] { return text_of(b_err).find("standing by for the lease of consumer watch") != std::string::npos; }))
        << text_of(b_err);
    buy(2);
    EXPECT_TRUE(dd_test::poll_until(has_all(a_out, bought))) << text_of(a_err);
    EXPECT_TRUE(lines_of(b_out).empty()) << "the watcher on standby delivered: " << text_of(b_out);

    // the first stops (Ctrl-C), releasing its lease: the second takes over
    // from the checkpoint at its next poll, long before the lease's minute
    ::kill(a, SIGINT);
    EXPECT_EQ(wait_exit(a), 130) << text_of(a_err);
    buy(1);
    const auto by_a = delivered(a_out);
    std::set<std::string> newest;  // the order bought after the first stopped
    for (const auto& id : bought)
        if (std::find(by_a.begin(), by_a.end(), id) == by_a.end())
            newest.insert(id);
    EXPECT_EQ(newest.size(), 1u);
    EXPECT_TRUE(dd_test::poll_until(has_all(b_out, newest))) << text_of(b_err);
    ::kill(b, SIGINT);
    EXPECT_EQ(wait_exit(b), 130) << text_of(b_err);

    // every order delivered once, by one watcher or the other
    std::map<std::string, int> times;
    for (const auto& out : {a_out, b_out})
        for (const auto& id : delivered(out))
            ++times[id];
    EXPECT_EQ(times.size(), bought.size());
    for (const auto& [id, n] : times)
        EXPECT_EQ(n, 1) << id << " delivered " << n << " times";

    // malformed URLs: a usage error (exit 2) that says what is wrong, without the password
    const std::vector<std::pair<std::string, std::string>> malformed = {
        {"http://:" + password + "@127.0.0.1:6379", "not a redis[s]://"},
        {"redis://:" + password + "@127.0.0.1:6379/zero", "the Redis database must be a number"},
        {"redis://:" + password + "@127.0.0.1:6379?ca_file=/x", "TLS parameters need a rediss:// URL"},
        {"redis://:" + password + "@127.0.0.1:port", "not a redis[s]://"},
        {"redis://:" + password + "@127.0.0.1:99999", "the port must be a number from 1 to 65535"},
    };
    for (const auto& [bad, says] : malformed)
    {
        const fs::path out = dir / "bad.out", err = dir / "bad.err";
        fs::remove(err);
        const pid_t p = start(sb, {"orders", "watch", "--checkpoint", bad}, out, err);
        EXPECT_EQ(wait_exit(p), 2) << bad << ": " << text_of(err);
        EXPECT_NE(text_of(err).find("--checkpoint: " + says), std::string::npos) << bad << ": " << text_of(err);
        EXPECT_EQ(text_of(err).find(password), std::string::npos) << "the password printed: " << text_of(err);
    }
    for (const auto& e : {a_err, b_err})
        EXPECT_EQ(text_of(e).find(password), std::string::npos) << "the password printed: " << text_of(e);
}

TEST_F(watch_kill_test, sigkilled_ten_times_every_order_is_delivered_and_none_acknowledged_twice)
{
    // 40 points per second (the window shortened), no seeded orders.
    sandbox_process sb({"--seed-orders", "0", "--rate-limit-window-seconds", "1"});
    const auto today = std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now());
    const std::string since = dd_format_day(today - std::chrono::days(1));
    const std::vector<std::string> args = {
        "orders", "watch", "--since", since, "--min-interval", "0.05", "--max-interval", "0.2",
        // The handler records the key, then takes a moment: kills land before,
        // during and after it, and between it and the acknowledgement.
        "--exec", "echo \"$DDCTL_EVENT_KEY\" >> \"$DDCTL_TEST_DIR/handled.log\"; sleep 0.01"};
    const fs::path acked = dir / "acked.log";  // ddctl prints an event after its acknowledgement

    std::mt19937 rng(46);
    std::mutex mtx;
    std::set<std::string> purchased;
    std::atomic<bool> stop{false};
    auto buyer_seed = rng();
    std::thread buyer([&] {
        std::mt19937 r(buyer_seed);
        while (!stop)
        {
            std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 120)(r)));
            const int n = std::uniform_int_distribution<int>(1, 3)(r);
            auto resp = sb.request("POST", "/sandbox/purchases",
                                   R"({"store_product_id": 7500000001111, "count": )" + std::to_string(n) + "}");
            if (resp.status != 201)
                continue;
            auto v = json::parse(resp.body);
            std::lock_guard<std::mutex> lk(mtx);
            for (const auto& o : v.at("orders").as_array())
                purchased.insert(std::string(o.at("id").as_string()));
        }
    });

    const int kills = 12;
    for (int i = 0; i < kills; ++i)
    {
        const pid_t pid = start(sb, args, acked);
        std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(30, 400)(rng)));
        ::kill(pid, SIGKILL);
        int status = 0;
        ::waitpid(pid, &status, 0);
        EXPECT_TRUE(WIFSIGNALED(status)) << "run " << i << " ended on its own: " << status;
    }
    stop = true;
    buyer.join();

    // A last run, not killed, until every order is handled.
    const pid_t pid = start(sb, args, acked);
    auto handled_all = [&] {
        std::set<std::string> h;
        for (const auto& k : lines_of(dir / "handled.log"))
            h.insert(k);
        for (const auto& id : purchased)
            if (!h.count("new_order:" + id))
                return false;
        return true;
    };
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!handled_all() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the last acknowledgement
    ::kill(pid, SIGINT);
    int status = 0;
    ::waitpid(pid, &status, 0);

    ASSERT_GT(purchased.size(), 20u);
    EXPECT_TRUE(handled_all()) << lines_of(dir / "stderr.log").size() << " stderr lines";
    // None acknowledged twice.
    std::map<std::string, int> acks;
    for (const auto& l : lines_of(acked))
        ++acks[std::string(json::parse(l).at("key").as_string())];
    for (const auto& [k, n] : acks)
        EXPECT_EQ(n, 1) << k << " acknowledged " << n << " times";
    // A handler ran twice only for an event whose acknowledgement a kill lost.
    std::map<std::string, int> runs;
    for (const auto& k : lines_of(dir / "handled.log"))
        ++runs[k];
    int repeats = 0;
    for (const auto& [k, n] : runs)
        repeats += n - 1;
    EXPECT_LE(repeats, kills);
    EXPECT_EQ(runs.size(), purchased.size());
}

}  // namespace
