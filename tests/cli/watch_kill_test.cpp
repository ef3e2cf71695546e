// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// `ddctl orders watch --exec` SIGKILLed at seeded moments while the sandbox
// takes purchases at random moments: every order is handed to the command,
// none is acknowledged twice, and a handler runs again at most once per kill.
#include "sandbox_process.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <atomic>
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
#include <string>
#include <thread>
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

    /// Starts ddctl (stdout appended to `out`); returns its pid.
    pid_t start(const sandbox_process& sb, const std::vector<std::string>& args, const fs::path& out)
    {
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
        posix_spawn_file_actions_addopen(&fa, 2, (dir / "stderr.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
        pid_t pid = 0;
        const int rc = ::posix_spawn(&pid, DDCTL_EXE, &fa, nullptr, argv.data(), envp.data());
        posix_spawn_file_actions_destroy(&fa);
        EXPECT_EQ(rc, 0);
        return pid;
    }
};

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
