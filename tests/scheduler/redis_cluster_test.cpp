//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// Redis Cluster: three masters (--cluster-enabled, joined with
// redis-cli --cluster create) on free ports of 127.0.0.1, started and
// stopped by this program. The store is given one node; it follows -MOVED to
// the node of its key's slot, and -ASK while that slot is migrated to another
// node mid-run (CLUSTER SETSLOT IMPORTING/MIGRATING, MIGRATE, SETSLOT NODE),
// the bucket's state carried along. Redirections are parsed sans-io, bad
// input included. No test measures time.

#include <digital_delivery/impl/rate_limit/redis_link.hpp>
#include <digital_delivery/impl/rate_limit/sansio/redis_store.hpp>
#include <digital_delivery/redis_rate_limit_store.hpp>

#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "redis_exchange.hpp"
#include "run.hpp"
#include "server_process.hpp"

using namespace digital_delivery;
using namespace digital_delivery::detail;  // the machinery under test is internal
using namespace std::chrono_literals;
namespace asio = boost::asio;

TEST(redis_cluster, redirections_are_read_or_refused)
{
    auto m = parse_redirect("MOVED 3999 127.0.0.1:6381");
    ASSERT_TRUE(m);
    EXPECT_TRUE(m->moved);
    EXPECT_EQ(m->node.host, "127.0.0.1");
    EXPECT_EQ(m->node.port, 6381);
    auto a = parse_redirect("ASK 12 redis-2.internal:7000");
    ASSERT_TRUE(a);
    EXPECT_FALSE(a->moved);
    EXPECT_EQ(a->node.host, "redis-2.internal");
    EXPECT_EQ(a->node.port, 7000);
    auto v6 = parse_redirect("MOVED 1 ::1:7001");
    ASSERT_TRUE(v6);
    EXPECT_EQ(v6->node.host, "::1");
    for (const char* bad : {"MOVED", "MOVED 12", "MOVED 12 host", "MOVED 12 host:", "MOVED 12 :80", "MOVED 12 h:0",
                            "MOVED 12 h:99999", "MOVED 12 h:8x", "ASKING", "ERR MOVED 1 h:1", "NOSCRIPT x", ""})
        EXPECT_FALSE(parse_redirect(bad)) << bad;
}

namespace {

using dd_test::poll_until;
using dd_test::ask_redis;

// The bulk or simple string of a one-line reply, without its framing.
std::string text_of(const std::string& reply)
{
    if (reply.rfind("$", 0) == 0)
    {
        const auto nl = reply.find("\r\n");
        return reply.substr(nl + 2, reply.find("\r\n", nl + 2) - nl - 2);
    }
    return reply.substr(1, reply.find("\r\n") - 1);
}

class redis_cluster_live : public ::testing::Test
{
protected:
    void SetUp() override
    {
        if (!dd_test::have_redis_server() || ::access("/usr/bin/redis-cli", X_OK) != 0)
            GTEST_SKIP() << "redis-server and redis-cli are not installed (tests/install_deps.sh installs them)";
        char tmpl[] = "/tmp/dd-redis-cluster-XXXXXX";
        ASSERT_TRUE(::mkdtemp(tmpl));
        dir = tmpl;
        for (int i = 0; i < 3; ++i)
            nodes.push_back(std::make_unique<dd_test::redis_server>(std::vector<std::string>{
                "--dir", dir, "--cluster-enabled", "yes", "--cluster-config-file", dir + "/nodes-" + std::to_string(i) + ".conf",
                "--cluster-node-timeout", "5000"}));
        std::string create = "/usr/bin/redis-cli --cluster create";
        for (auto& n : nodes)
            create += " 127.0.0.1:" + std::to_string(n->port());
        if (std::system((create + " --cluster-replicas 0 --cluster-yes >'" + dir + "/create.log' 2>&1").c_str()) != 0)
        {
            std::ifstream log(dir + "/create.log");
            FAIL() << create << ":\n" << std::string(std::istreambuf_iterator<char>(log), {});
        }
        for (auto& n : nodes)
            ASSERT_TRUE(poll_until([&] { return ask_redis(n->port(), "CLUSTER INFO\r\n").find("cluster_state:ok") != std::string::npos; }));
    }
    void TearDown() override
    {
        nodes.clear();
        if (!dir.empty())
            (void)std::system(("rm -rf " + dir).c_str());
    }


    // The node serving `key`'s slot: the one that does not redirect a read of it.
    std::size_t owner_of_key()
    {
        for (std::size_t i = 0; i < nodes.size(); ++i)
            if (ask_redis(nodes[i]->port(), "EXISTS " + key + "\r\n").rfind("-MOVED", 0) != 0)
                return i;
        return nodes.size();
    }

    std::string dir;
    std::vector<std::unique_ptr<dd_test::redis_server>> nodes;
    std::string key;
};

}  // namespace

TEST_F(redis_cluster_live, the_store_follows_moved_and_ask_while_its_slot_migrates)
{
    asio::io_context ioc;
    redis_store_params rp;
    rp.port = nodes[0]->port();
    rp.key_prefix = "dd-cluster-test:" + std::to_string(::getpid()) + ":";
    rp.command_timeout = 5s;  // never the limit tested here
    auto link = std::make_shared<redis_link>(ioc.get_executor(), rp, rp.key_prefix + "bucket");
    key = link->key();
    const long slot = std::stol(ask_redis(nodes[0]->port(), "CLUSTER KEYSLOT " + key + "\r\n").substr(1));
    const std::size_t source = owner_of_key();
    ASSERT_LT(source, nodes.size());
    // Given another node than the owner when possible: the first exchange follows -MOVED.
    if (source == 0)
    {
        rp.port = nodes[1]->port();
        link = std::make_shared<redis_link>(ioc.get_executor(), rp, rp.key_prefix + "bucket");
    }
    double balance = 1000;
    auto take = [&](const char* when) {
        const auto r = dd_test::take_one_point(ioc, *link);
        EXPECT_TRUE(r.reply) << when << ": " << r.why;
        if (!r.reply)
            return;
        EXPECT_TRUE(r.reply->granted) << when;
        EXPECT_LT(r.reply->balance, balance) << when << ": the bucket's state carried along";
        balance = r.reply->balance;
    };
    take("through -MOVED");
    take("on the owner");
    EXPECT_EQ(ask_redis(nodes[source]->port(), "EXISTS " + key + "\r\n"), ":1\r\n");

    // The slot migrates to another node, mid-run.
    const std::size_t target = (source + 1) % nodes.size();
    const auto id = [&](std::size_t i) { return text_of(ask_redis(nodes[i]->port(), "CLUSTER MYID\r\n")); };
    const std::string s = std::to_string(slot);
    ASSERT_EQ(ask_redis(nodes[target]->port(), "CLUSTER SETSLOT " + s + " IMPORTING " + id(source) + "\r\n"), "+OK\r\n");
    ASSERT_EQ(ask_redis(nodes[source]->port(), "CLUSTER SETSLOT " + s + " MIGRATING " + id(target) + "\r\n"), "+OK\r\n");
    take("migrating, the key still on the source");
    ASSERT_EQ(ask_redis(nodes[source]->port(),
                  "MIGRATE 127.0.0.1 " + std::to_string(nodes[target]->port()) + " " + key + " 0 5000\r\n"),
              "+OK\r\n");
    take("the key moved, the slot not yet: -ASK");
    take("-ASK again (one command at a time)");
    for (std::size_t i = 0; i < nodes.size(); ++i)
        ASSERT_EQ(ask_redis(nodes[i]->port(), "CLUSTER SETSLOT " + s + " NODE " + id(target) + "\r\n"), "+OK\r\n") << i;
    take("the slot moved: -MOVED");
    take("on the new owner");
    EXPECT_EQ(ask_redis(nodes[target]->port(), "EXISTS " + key + "\r\n"), ":1\r\n");
    EXPECT_NEAR(balance, 1000 - 7, 0.5) << "seven points taken in all, none lost or doubled";
}
