//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// Redis for the tests: a skip when redis-server is missing; for the tests
// that follow a failover (the rate-limit store's, the feed checkpoint's) a
// Sentinel process, and a group of a master, its replica and three
// sentinels that all see the replica. Every process on a free port of
// 127.0.0.1 (server_process.hpp).
#ifndef DIGITAL_DELIVERY_TESTS_REDIS_ENV_HPP
#define DIGITAL_DELIVERY_TESTS_REDIS_ENV_HPP

#include "server_process.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

/// In a fixture's SetUp: skips the test when redis-server is not installed.
#define DD_TEST_SKIP_WITHOUT_REDIS()                                                                                  \
    do                                                                                                                 \
    {                                                                                                                  \
        if (!dd_test::have_redis_server())                                                                             \
            GTEST_SKIP() << dd_test::redis_server_exe << " is not installed (tests/install_deps.sh installs it)";     \
    } while (0)

namespace dd_test {

/// A sentinel of the master `master_name` at `master_port`, its
/// configuration file in `dir` (Sentinel rewrites it). Quorum 2, down after
/// 1 s, failover timeout 5 s.
class sentinel_process
{
public:
    sentinel_process(std::string dir, std::string master_name, unsigned short master_port)
        : proc_(
              [dir, master_name, master_port](unsigned short port) {
                  const std::string conf = dir + "/sentinel-" + std::to_string(port) + ".conf";
                  std::ofstream(conf) << "port " << port << "\nbind 127.0.0.1\ndaemonize no\n"
                                      << "sentinel monitor " << master_name << " 127.0.0.1 " << master_port << " 2\n"
                                      << "sentinel down-after-milliseconds " << master_name << " 1000\n"
                                      << "sentinel failover-timeout " << master_name << " 5000\n"
                                      << "sentinel parallel-syncs " << master_name << " 1\n";
                  return std::vector<std::string>{redis_server_exe, conf, "--sentinel"};
              },
              [](unsigned short port) { return ask_redis(port, "PING\r\n").rfind("+PONG", 0) == 0; })
    {
        proc_.start();
    }
    unsigned short port() const { return proc_.port(); }

private:
    server_process proc_;
};

/// A master (`first`), its replica (`second`) and three sentinels of the
/// master (`s1`, `s2`, `s3`), in `dir` (the replica writes the master's RDB
/// there, never in the program's working directory). start() links the
/// replica and waits until every sentinel sees it (a failover needs one to
/// promote); it says what did not come up (empty: all did).
class redis_sentinel_group
{
public:
    redis_sentinel_group(const std::string& dir, const std::string& master_name)
        : first({"--dir", dir}),
          second({"--dir", dir, "--replicaof", "127.0.0.1", "0"}),  // a replica once told whose
          s1(dir, master_name, first.port()),
          s2(dir, master_name, first.port()),
          s3(dir, master_name, first.port()),
          name_(master_name)
    {
    }

    /// \return Empty when the group is up, else what failed.
    std::string start()
    {
        if (ask_redis(second.port(), "REPLICAOF 127.0.0.1 " + std::to_string(first.port()) + "\r\n").rfind("+OK", 0) != 0)
            return "REPLICAOF refused";
        if (!poll_until([&] {
                return ask_redis(second.port(), "INFO replication\r\n").find("master_link_status:up") != std::string::npos;
            }))
            return "the replica never linked to the master";
        for (auto port : sentinel_ports())
            if (!poll_until([&] {
                    return ask_redis(port, "SENTINEL REPLICAS " + name_ + "\r\n").find(std::to_string(second.port())) !=
                           std::string::npos;
                }))
                return "sentinel " + std::to_string(port) + " never saw the replica";
        return {};
    }

    /// \return The sentinels' ports.
    std::vector<unsigned short> sentinel_ports() const { return {s1.port(), s2.port(), s3.port()}; }

    redis_server first, second;
    sentinel_process s1, s2, s3;

private:
    std::string name_;
};

}  // namespace dd_test

#endif
