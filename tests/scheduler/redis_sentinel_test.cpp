//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// Redis Sentinel: one master, one replica and three sentinels
// (redis-server --sentinel) on free ports of 127.0.0.1, started and stopped
// by this program. The store finds the master through the sentinels, follows
// a failover forced with SENTINEL FAILOVER and one after the master is
// killed; an unknown master name is a configuration error, no sentinel
// answering an outage. No test measures time: loops wait for outcomes.

#include <digital_delivery/impl/rate_limit/redis_link.hpp>
#include <digital_delivery/impl/rate_limit/sansio/redis_store.hpp>
#include <digital_delivery/redis_rate_limit_store.hpp>

#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "redis_exchange.hpp"
#include "run.hpp"
#include "redis_env.hpp"
#include "server_process.hpp"
#include "temp_dir.hpp"

using namespace digital_delivery;
using namespace digital_delivery::detail;  // the machinery under test is internal
using namespace std::chrono_literals;
namespace asio = boost::asio;

namespace {

const std::string master_name = "dd-test-master";

using dd_test::poll_until;
using dd_test::ask_redis;

class redis_sentinel : public ::testing::Test
{
protected:
    void SetUp() override
    {
        DD_TEST_SKIP_WITHOUT_REDIS();
        ASSERT_FALSE(dir.path.empty());
    }

    static redis_store_params store_params(const std::vector<unsigned short>& sentinel_ports, std::string name = master_name)
    {
        redis_store_params rp;
        rp.key_prefix = "dd-sentinel-test:" + std::to_string(::getpid()) + ":";
        rp.command_timeout = 5s;  // never the limit tested here
        rp.host = "192.0.2.1";    // not used with Sentinel (TEST-NET-1: nothing answers there)
        rp.sentinel.master_name = std::move(name);
        for (auto p : sentinel_ports)
            rp.sentinel.sentinels.push_back({"127.0.0.1", p});
        return rp;
    }


    dd_test::temp_dir dir{"dd-redis-sentinel"};
};

}  // namespace

TEST_F(redis_sentinel, the_store_follows_the_master_through_a_forced_failover_and_a_killed_master)
{
    // In a directory of their own: a replica writes the master's RDB to disk
    // (never in the program's working directory, where the next Redis would load it);
    // start(): every sentinel sees the replica (a forced failover needs one to promote).
    dd_test::redis_sentinel_group g(dir.path, master_name);
    ASSERT_EQ(g.start(), "");
    const std::vector<unsigned short> sentinels = g.sentinel_ports();
    const std::string get_master = "SENTINEL GET-MASTER-ADDR-BY-NAME " + master_name + "\r\n";
    auto master_port_is = [&](unsigned short port) {
        return poll_until([&] { return ask_redis(g.s1.port(), get_master).find("\r\n" + std::to_string(port) + "\r\n") != std::string::npos; });
    };

    asio::io_context ioc;
    const auto rp = store_params(sentinels);
    auto link = std::make_shared<redis_link>(ioc.get_executor(), rp, rp.key_prefix + "bucket");
    auto r = dd_test::take_one_point(ioc, *link);
    ASSERT_TRUE(r.reply) << r.why;
    EXPECT_EQ(ask_redis(g.first.port(), "EXISTS " + link->key() + "\r\n"), ":1\r\n") << "written on the master";

    // A forced failover: the replica becomes the master; the store follows.
    // (Refused with -NOGOODSLAVE until the sentinel has the replica's own
    // word that it is in sync: asked again until accepted.)
    std::string failover;
    ASSERT_TRUE(poll_until([&] { return (failover = ask_redis(g.s2.port(), "SENTINEL FAILOVER " + master_name + "\r\n")).rfind("+OK", 0) == 0; }))
        << failover;
    ASSERT_TRUE(master_port_is(g.second.port()));
    ASSERT_TRUE(poll_until([&] { return ask_redis(g.first.port(), "ROLE\r\n").find("slave") != std::string::npos; }))
        << "the old master is demoted";
    bool served = poll_until([&] { return dd_test::take_one_point(ioc, *link).reply.has_value(); });
    ASSERT_TRUE(served);
    EXPECT_EQ(ask_redis(g.second.port(), "EXISTS " + link->key() + "\r\n"), ":1\r\n") << "the new master holds the bucket";
    EXPECT_NE(ask_redis(g.second.port(), "ROLE\r\n").find("master"), std::string::npos);

    // The master killed: the sentinels promote the other one; meanwhile the
    // store fails (an outage, not a misconfiguration), then is served again.
    ASSERT_TRUE(poll_until([&] { return ask_redis(g.first.port(), "INFO replication\r\n").find("master_link_status:up") != std::string::npos; }));
    g.second.stop();
    r = dd_test::take_one_point(ioc, *link);
    EXPECT_FALSE(r.reply);
    EXPECT_FALSE(r.misconfigured) << r.why;
    ASSERT_TRUE(master_port_is(g.first.port()));
    served = poll_until([&] { return dd_test::take_one_point(ioc, *link).reply.has_value(); });
    ASSERT_TRUE(served);
    EXPECT_EQ(ask_redis(g.first.port(), "EXISTS " + link->key() + "\r\n"), ":1\r\n");
}

TEST_F(redis_sentinel, an_unknown_master_is_a_misconfiguration_and_no_sentinel_an_outage)
{
    dd_test::redis_server master;
    dd_test::sentinel_process s(dir.path, master_name, master.port());
    asio::io_context ioc;
    auto rp = store_params({s.port()}, "no-such-master");
    rp.sentinel.password.clear();
    auto link = std::make_shared<redis_link>(ioc.get_executor(), rp, rp.key_prefix + "bucket");
    auto r = dd_test::take_one_point(ioc, *link);
    EXPECT_FALSE(r.reply);
    EXPECT_TRUE(r.misconfigured);
    EXPECT_NE(r.why.find("does not know a master named no-such-master"), std::string::npos) << r.why;

    // Served through the right name; the sentinel's password is never shown.
    rp = store_params({s.port()});
    link = std::make_shared<redis_link>(ioc.get_executor(), rp, rp.key_prefix + "bucket");
    r = dd_test::take_one_point(ioc, *link);
    ASSERT_TRUE(r.reply) << r.why;

    // No sentinel answers: an outage naming each one.
    dd_test::bound_listener closed(false);
    rp = store_params({closed.port()});
    rp.sentinel.password = "sentinel-secret-3c9d";
    link = std::make_shared<redis_link>(ioc.get_executor(), rp, rp.key_prefix + "bucket");
    r = dd_test::take_one_point(ioc, *link);
    EXPECT_FALSE(r.reply);
    EXPECT_FALSE(r.misconfigured) << r.why;
    EXPECT_NE(r.why.find("sentinel 127.0.0.1:" + std::to_string(closed.port()) + ": connect"), std::string::npos) << r.why;
    EXPECT_EQ(r.why.find("secret"), std::string::npos) << r.why;
}
