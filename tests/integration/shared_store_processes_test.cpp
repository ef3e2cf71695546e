// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Issue 16: several processes, one API key, one sandbox store whose bucket is
// time-compressed (40 points per 0.5 s). Each process runs the scheduler_load
// workload (3 GETs for each PATCH, retries off) with its client's points in
// shared memory (shm_rate_limit_store), or in a redis-server this
// program starts on a free port (redis_rate_limit_store). Outcomes only: zero 429
// answers in every process, every request served once. How much of the budget
// the processes use together is a benchmark figure
// (benchmarks/scheduler/multiprocess_bench.cpp).
//
// The processes are this test program again (/proc/self/exe), running the
// disabled test shared_store_processes.DISABLED_worker with its instructions
// in the environment, and writing its outcome to a file.
#include <digital_delivery/impl/rate_limit/rate_limiter.hpp>
#include <digital_delivery/redis_rate_limit_store.hpp>
#include <digital_delivery/shm_rate_limit_store.hpp>
#include <digital_delivery/impl/rate_limit/shm_store.hpp>

#include "run.hpp"
#include "sandbox_process.hpp"
#include "scheduler_load.hpp"
#include "server_process.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace {

constexpr int requests_per_process = 60;  // 75 points each

std::string env(const char* name)
{
    const char* v = std::getenv(name);
    return v ? v : "";
}

}  // namespace

TEST(shared_store_processes, DISABLED_worker)
{
    const std::string out = env("DD_WORKER_OUT");
    if (out.empty())
        GTEST_SKIP() << "started by the other shared_store_processes tests";
    namespace dd = digital_delivery;
    dd::rate_limit_store store = dd::shm_rate_limit_store();
    if (const std::string port = env("DD_WORKER_REDIS_PORT"); !port.empty())
    {
        dd::redis_store_params redis;
        redis.port = static_cast<std::uint16_t>(std::stoi(port));
        redis.key_prefix = env("DD_WORKER_REDIS_PREFIX");
        store = dd::redis_rate_limit_store(std::move(redis));
    }
    const auto r = dd_test::run_scheduler_load(env("DD_WORKER_URL"), env("DD_WORKER_KEY"), 40, 0.5, requests_per_process, true,
                                               [](boost::asio::io_context& ioc) { dd_test::run(ioc); }, std::move(store));
    std::ofstream f(out);
    f << r.setup_ok << ' ' << r.ok << ' ' << r.failed << ' ' << r.refused_429 << ' ' << r.responses << '\n';
}

namespace {

// Runs `n` workers on one sandbox store; `extra`: more environment
// (DD_WORKER_REDIS_*: the Redis store). Checks their outcomes.
void run_workers(int n, const dd_test::sandbox_process::store& store, const std::vector<std::string>& extra)
{
    std::vector<pid_t> pids;
    std::vector<std::string> outs;
    const std::string tmp = ::testing::TempDir();
    for (int i = 0; i < n; ++i)
    {
        outs.push_back(tmp + "dd_shared_store_worker_" + std::to_string(::getpid()) + "_" + std::to_string(i));
        std::remove(outs.back().c_str());
        std::vector<std::string> envs = {"DD_WORKER_OUT=" + outs.back(), "DD_WORKER_URL=" + store.base_url,
                                         "DD_WORKER_KEY=" + store.api_key};
        envs.insert(envs.end(), extra.begin(), extra.end());
        for (char** e = environ; *e; ++e)
            if (std::string_view(*e).rfind("DD_WORKER_", 0) != 0 && std::string_view(*e).rfind("GTEST_", 0) != 0)
                envs.emplace_back(*e);
        std::vector<char*> envp;
        for (auto& e : envs)
            envp.push_back(e.data());
        envp.push_back(nullptr);
        std::string exe = "/proc/self/exe", filter = "--gtest_filter=shared_store_processes.DISABLED_worker",
                    disabled = "--gtest_also_run_disabled_tests";
        char* argv[] = {exe.data(), filter.data(), disabled.data(), nullptr};
        pid_t pid = 0;
        ASSERT_EQ(::posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv, envp.data()), 0);
        pids.push_back(pid);
    }
    for (pid_t pid : pids)
    {
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "worker " << pid;
    }
    int total_ok = 0, total_failed = 0, total_429 = 0, total_responses = 0;
    for (const auto& o : outs)
    {
        std::ifstream f(o);
        int setup_ok = 0, ok = 0, failed = 0, refused = 0, responses = 0;
        ASSERT_TRUE(f >> setup_ok >> ok >> failed >> refused >> responses) << "no outcome from a worker: " << o;
        EXPECT_TRUE(setup_ok);
        total_ok += ok;
        total_failed += failed;
        total_429 += refused;
        total_responses += responses;
        std::remove(o.c_str());
    }
    EXPECT_EQ(total_429, 0) << "one budget shared by " << n << " processes";
    EXPECT_EQ(total_failed, 0);
    EXPECT_EQ(total_ok, n * requests_per_process);
    EXPECT_EQ(total_responses, n * requests_per_process) << "nothing resent, nothing lost";
}

}  // namespace

TEST(shared_store_processes, four_processes_never_see_a_429)
{
    const auto store = dd_test::sandbox_process::shared().create_store(
        {"--rate-limit-points", "40", "--rate-limit-window-seconds", "0.5", "--seed-orders", "5"});
    // A key of this run only: its shared-memory object is new, and removed at the end.
    const std::string shm = digital_delivery::detail::shm_store_name(
        digital_delivery::detail::normalise_base_url(store.base_url), store.api_key);
    ::shm_unlink(shm.c_str());
    run_workers(4, store, {});
    ::shm_unlink(shm.c_str());
}

TEST(shared_store_processes, four_processes_on_redis_never_see_a_429)
{
    if (!dd_test::have_redis_server())
        GTEST_SKIP() << dd_test::redis_server_exe << " is not installed (tests/install_deps.sh installs it)";
    dd_test::redis_server redis;
    const auto store = dd_test::sandbox_process::shared().create_store(
        {"--rate-limit-points", "40", "--rate-limit-window-seconds", "0.5", "--seed-orders", "5"});
    run_workers(4, store, {"DD_WORKER_REDIS_PORT=" + std::to_string(redis.port()),
                           "DD_WORKER_REDIS_PREFIX=dd-test:" + std::to_string(::getpid()) + ":"});
}
