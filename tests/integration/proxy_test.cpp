// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// HTTP proxies in the Beast transport (docs/proxies.md): API calls and an
// upload against the sandbox through a real tinyproxy, with and without Basic
// authentication; https:// through a CONNECT tunnel (TLS nginx of
// nginx_env.hpp); typed failures (407, refused proxy, refused tunnel); the
// environment and NO_PROXY. Two tinyproxy processes (open, and with BasicAuth)
// are started once for the program and stopped at exit.
#include <digital_delivery.hpp>
#include <digital_delivery/beast_transport.hpp>
#include <digital_delivery/impl/http/sansio/proxy.hpp>
#include <digital_delivery/upload.hpp>

#include "nginx_env.hpp"
#include "run.hpp"
#include "sandbox_process.hpp"
#include "server_process.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include <fcntl.h>

namespace dd = digital_delivery;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

constexpr const char* tinyproxy_exe = "/usr/bin/tinyproxy";
constexpr const char* proxy_user = "dd-user";
constexpr const char* proxy_password = "pr0xy-s3cret";

// A tinyproxy on 127.0.0.1. tinyproxy cannot inherit a listening socket, so the
// port is chosen free, then tinyproxy binds it: if someone took it meanwhile,
// tinyproxy exits and another port is tried. It is ready when it answers as
// tinyproxy (not merely when the port accepts).
class tinyproxy
{
public:
    explicit tinyproxy(bool basic_auth) : auth_(basic_auth), dir_(make_dir()), proc_(command(), ready())
    {
        try
        {
            proc_.start();
        }
        catch (const std::exception& e)
        {
            throw std::runtime_error(std::string(e.what()) + ": " + log());
        }
    }
    ~tinyproxy()
    {
        proc_.stop();
        if (std::getenv("DD_KEEP_TEST_DIR") == nullptr)
            std::system(("rm -rf '" + dir_ + "'").c_str());
    }
    tinyproxy(const tinyproxy&) = delete;
    tinyproxy& operator=(const tinyproxy&) = delete;

    unsigned short port() const { return proc_.port(); }
    std::string url() const
    {
        return std::string("http://") + (auth_ ? std::string(proxy_user) + ":" + proxy_password + "@" : "") + "127.0.0.1:" +
               std::to_string(port());
    }
    std::string log() const { return dd_test::read_file(dir_ + "/tinyproxy.log"); }

private:
    static std::string make_dir()
    {
        char tmpl[] = "/tmp/dd-proxy-XXXXXX";
        if (!::mkdtemp(tmpl))
            throw std::runtime_error("mkdtemp failed");
        return tmpl;
    }

    // Writes the configuration for `port`; tinyproxy runs in the foreground.
    std::function<std::vector<std::string>(unsigned short)> command() const
    {
        return [auth = auth_, dir = dir_](unsigned short port) {
            std::string conf = "Port " + std::to_string(port) + "\nListen 127.0.0.1\nTimeout 60\nMaxClients 64\n"
                               "Allow 127.0.0.1\nLogLevel Info\nLogFile \"" + dir + "/tinyproxy.log\"\n";
            if (auth)
                conf += std::string("BasicAuth ") + proxy_user + " " + proxy_password + "\n";
            dd_test::write_file(dir + "/tinyproxy.conf", conf);
            return std::vector<std::string>{tinyproxy_exe, "-d", "-c", dir + "/tinyproxy.conf"};
        };
    }

    // GET / straight to the proxy: tinyproxy answers with its own error page.
    static std::function<bool(unsigned short)> ready()
    {
        return [](unsigned short port) {
            return dd_test::ask_local_server(port, "GET / HTTP/1.0\r\n\r\n").find("tinyproxy") != std::string::npos;
        };
    }

    bool auth_;
    std::string dir_;
    dd_test::server_process proc_;
};

bool have_tinyproxy() { return ::access(tinyproxy_exe, X_OK) == 0; }

tinyproxy& open_proxy()
{
    static tinyproxy p(false);
    return p;
}
tinyproxy& auth_proxy()
{
    static tinyproxy p(true);
    return p;
}
dd_test::environment& tls_env()
{
    static struct holder
    {
        dd_test::environment e;
        holder() { e.start(); }
        ~holder() { e.stop(); }
    } h;
    return h.e;
}

class proxy_test : public ::testing::Test
{
protected:
    void SetUp() override
    {
        if (!have_tinyproxy())
            GTEST_SKIP() << tinyproxy_exe << " is not installed (tests/install_deps.sh installs it)";
    }

    asio::io_context ioc;
    dd::diagnostics diag;
    dd_test::sandbox_process& sb = dd_test::sandbox_process::shared();

    dd::client make_client(const std::string& proxy_url, dd::retry_params retry = {.enabled = false})
    {
        dd::beast_transport_params p;
        p.proxy.url = proxy_url;
        return dd::client(dd::beast_transport(ioc.get_executor(), p),
                          {.base_url = sb.base_url(), .api_key = sb.api_key(), .rate_limit = {.enabled = false}, .retry = retry});
    }

    template <class F>
    auto run(F&& f)
    {
        return dd_test::run_awaitable(ioc, f(asio::as_tuple(asio::use_awaitable)));
    }

    std::string sandbox_authority() const { return sb.origin().substr(std::string("http://").size()); }
};

// ---- configuration (no network) ------------------------------------------------------

TEST(proxy_config, urls_credentials_and_defaults)
{
    dd::detail::proxy_endpoint e;
    std::string why;
    ASSERT_TRUE(dd::detail::parse_proxy_url("http://user:s3cret@proxy.example:3128/", e, why)) << why;
    EXPECT_EQ(e.host, "proxy.example");
    EXPECT_EQ(e.port, "3128");
    EXPECT_EQ(e.authorization, "Basic dXNlcjpzM2NyZXQ=");
    ASSERT_TRUE(dd::detail::parse_proxy_url("proxy.example", e, why)) << why;
    EXPECT_EQ(e.port, "1080");
    EXPECT_EQ(e.authorization, "");
    ASSERT_TRUE(dd::detail::parse_proxy_url("http://a%40b:p%3Aw@[::1]:8080", e, why)) << why;
    EXPECT_EQ(e.host, "::1");
    EXPECT_EQ(e.port, "8080");
    EXPECT_EQ(e.authorization, "Basic " + dd::detail::base64_encode("a@b:p:w"));
    for (const char* bad : {"https://user:s3cret@proxy:443", "socks5://user:s3cret@h:1", "http://user:s3cret@h:99999",
                            "http://user:s3cret@h:1/path", "http://user:s3cret@:8080", "http://us%zzer:s3cret@h:1"})
    {
        SCOPED_TRACE(bad);
        EXPECT_FALSE(dd::detail::parse_proxy_url(bad, e, why));
        EXPECT_EQ(why.find("s3cret"), std::string::npos) << why;
    }
}

TEST(proxy_config, environment_lowercase_first_and_no_proxy)
{
    std::map<std::string, std::string> env = {
        {"HTTPS_PROXY", "http://upper:1"}, {"https_proxy", "http://lower:2"}, {"HTTP_PROXY", "http://plain:3"},
        {"NO_PROXY", "localhost, .internal.example,10.1.2.3:443,[::1]"}};
    auto getenv_fn = [&](const char* n) -> const char* {
        auto it = env.find(n);
        return it == env.end() ? nullptr : it->second.c_str();
    };
    dd::beast_proxy_params p;
    EXPECT_FALSE(dd::detail::make_proxy_config(p, getenv_fn).route(true, "api.example"));  // not opted in
    p.from_environment = true;
    const auto c = dd::detail::make_proxy_config(p, getenv_fn);
    ASSERT_TRUE(c.route(true, "api.example"));
    EXPECT_EQ(c.route(true, "api.example")->host, "lower");
    EXPECT_EQ(c.route(false, "api.example")->host, "plain");
    EXPECT_FALSE(c.route(true, "localhost"));
    EXPECT_FALSE(c.route(true, "internal.example"));
    EXPECT_FALSE(c.route(true, "db.Internal.Example"));
    EXPECT_TRUE(c.route(true, "notinternal.example"));
    EXPECT_FALSE(c.route(true, "10.1.2.3"));
    EXPECT_FALSE(c.route(true, "::1"));
    // An explicit URL wins over the environment; an explicit no_proxy too; "*" bypasses all.
    p.url = "http://given:9";
    p.no_proxy = "*";
    const auto g = dd::detail::make_proxy_config(p, getenv_fn);
    EXPECT_FALSE(g.route(true, "api.example"));
    p.no_proxy = "other.example";
    EXPECT_EQ(dd::detail::make_proxy_config(p, getenv_fn).route(true, "localhost")->host, "given");
    // An unusable URL is refused by the constructor, without its credentials.
    dd::beast_transport_params bad;
    bad.proxy.url = "https://user:s3cret@proxy:443";
    asio::io_context ioc;
    try
    {
        dd::beast_transport t(ioc.get_executor(), bad);
        ADD_FAILURE() << "accepted an https:// proxy";
    }
    catch (const boost::system::system_error& e)
    {
        EXPECT_EQ(e.code(), dd::client_errc::invalid_url);
        EXPECT_EQ(std::string(e.what()).find("s3cret"), std::string::npos) << e.what();
    }
}

// ---- through tinyproxy -----------------------------------------------------------------

TEST_F(proxy_test, api_calls_go_through_the_proxy)
{
    auto c = make_client(open_proxy().url());
    auto [ec, orders] = run([&](auto t) { return dd::async_list_orders(c, {.per_page = 5}, diag, t); });
    ASSERT_FALSE(ec) << diag.to_string();
    auto [cec, created] = run([&](auto t) { return dd::async_create_asset(c, {.type = dd::asset_type::licence, .name = "via proxy"}, diag, t); });
    ASSERT_FALSE(cec) << cec.message() << " " << diag.to_string();
    auto [gec, got] = run([&](auto t) { return dd::async_get_asset(c, created.asset.id, diag, t); });
    ASSERT_FALSE(gec) << diag.to_string();
    EXPECT_EQ(got.name, "via proxy");
    const std::string log = open_proxy().log();
    EXPECT_NE(log.find("GET http://" + sandbox_authority() + "/api/v1/external/orders?per_page=5"), std::string::npos) << log;
    EXPECT_NE(log.find("POST http://" + sandbox_authority() + "/api/v1/external/assets"), std::string::npos) << log;
}

TEST_F(proxy_test, an_upload_goes_through_an_authenticating_proxy)
{
    auto c = make_client(auth_proxy().url());
    const std::string body(200 * 1024, 'p');
    bool done = false;
    dd::error_code uec;
    dd::asset a;
    dd::async_upload_asset(c, std::make_shared<dd::memory_source>(body), {.filename = "via-proxy.pdf", .content_type = "application/pdf"},
                           dd::upload_options{}, diag, [&](dd::error_code ec, dd::asset r) {
                               uec = ec;
                               a = std::move(r);
                               done = true;
                           });
    dd_test::run(ioc);
    ASSERT_TRUE(done);
    ASSERT_FALSE(uec) << diag.to_string();
    EXPECT_EQ(a.byte_size, static_cast<std::int64_t>(body.size()));
    const std::string log = auth_proxy().log();
    EXPECT_NE(log.find("POST http://" + sandbox_authority() + "/api/v1/external/assets"), std::string::npos) << log;
    EXPECT_NE(log.find("PUT http://" + sandbox_authority() + "/"), std::string::npos) << log;
}

TEST_F(proxy_test, missing_or_wrong_credentials_are_proxy_auth_required)
{
    const std::string plain = "http://127.0.0.1:" + std::to_string(auth_proxy().port());
    const std::string wrong = std::string("http://") + proxy_user + ":wr0ng-pw@127.0.0.1:" + std::to_string(auth_proxy().port());
    for (const std::string& url : {plain, wrong})
    {
        SCOPED_TRACE(url);
        auto c = make_client(url, {});  // retries on: a 407 is not retried
        auto [ec, o] = run([&](auto t) { return dd::async_get_order(c, "any", diag, t); });
        EXPECT_EQ(ec, dd::client_errc::proxy_auth_required) << ec.message();
        EXPECT_EQ(ec, dd::condition::transport);
        EXPECT_EQ(diag.attempts, 1u);
        const std::string text = diag.to_string();
        EXPECT_NE(text.find("proxy"), std::string::npos) << text;
        EXPECT_EQ(text.find("wr0ng-pw"), std::string::npos) << text;
        EXPECT_EQ(text.find(sb.api_key()), std::string::npos) << text;
    }
}

TEST_F(proxy_test, a_proxy_that_refuses_connections_is_proxy_unreachable)
{
    dd_test::refused_port nobody;
    auto c = make_client("http://127.0.0.1:" + std::to_string(nobody.port()));
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(c, "any", diag, t); });
    EXPECT_EQ(ec, dd::client_errc::proxy_unreachable) << ec.message();
    EXPECT_TRUE(dd::is_request_not_sent(ec));
    EXPECT_TRUE(dd::is_transient(ec));
}

TEST_F(proxy_test, https_goes_through_a_connect_tunnel_with_and_without_credentials)
{
    auto& env = tls_env();
    for (tinyproxy* px : {&open_proxy(), &auth_proxy()})
    {
        dd::beast_transport_params p;
        p.tls.ca_file = env.ca_file();
        p.proxy.url = px->url();
        dd::beast_transport t(ioc.get_executor(), p);
        const std::string tag = std::string("/via-tunnel-") + (px == &open_proxy() ? "open" : "auth");
        dd::http_request req;
        req.url = "https://127.0.0.1:" + std::to_string(env.tls_port) + tag;
        req.timeout = 30s;
        auto [ec, r] = dd_test::run_awaitable(ioc, dd::async_transport_send(t, std::move(req), asio::as_tuple(asio::use_awaitable)));
        ioc.restart();
        ASSERT_FALSE(ec) << ec.message();
        EXPECT_EQ(r.status, 200u);
        EXPECT_TRUE(env.up->stats().received(tag));
        EXPECT_NE(px->log().find("CONNECT 127.0.0.1:" + std::to_string(env.tls_port)), std::string::npos) << px->log();
    }
}

TEST_F(proxy_test, a_refused_tunnel_is_typed)
{
    dd_test::refused_port nobody;
    dd::beast_transport_params p;
    p.proxy.url = open_proxy().url();
    dd::beast_transport t(ioc.get_executor(), p);
    dd::http_request req;
    req.url = "https://127.0.0.1:" + std::to_string(nobody.port()) + "/x";
    req.timeout = 30s;
    auto [ec, r] = dd_test::run_awaitable(ioc, dd::async_transport_send(t, std::move(req), asio::as_tuple(asio::use_awaitable)));
    EXPECT_EQ(ec, dd::client_errc::proxy_tunnel_refused) << ec.message();
    EXPECT_GE(r.status, 400u);  // tinyproxy's own answer to CONNECT (500 "Unable to connect")

    // Without credentials through the authenticating proxy: 407 to CONNECT.
    ioc.restart();
    p.proxy.url = "http://127.0.0.1:" + std::to_string(auth_proxy().port());
    dd::beast_transport t2(ioc.get_executor(), p);
    dd::http_request req2;
    req2.url = "https://127.0.0.1:" + std::to_string(nobody.port()) + "/x";
    auto [ec2, r2] = dd_test::run_awaitable(ioc, dd::async_transport_send(t2, std::move(req2), asio::as_tuple(asio::use_awaitable)));
    EXPECT_EQ(ec2, dd::client_errc::proxy_auth_required) << ec2.message();
    EXPECT_EQ(r2.status, 407u);

    // Wrong credentials: tinyproxy answers CONNECT with 401.
    ioc.restart();
    p.proxy.url = std::string("http://") + proxy_user + ":wr0ng-pw@127.0.0.1:" + std::to_string(auth_proxy().port());
    dd::beast_transport t3(ioc.get_executor(), p);
    dd::http_request req3;
    req3.url = "https://127.0.0.1:" + std::to_string(nobody.port()) + "/x";
    auto [ec3, r3] = dd_test::run_awaitable(ioc, dd::async_transport_send(t3, std::move(req3), asio::as_tuple(asio::use_awaitable)));
    EXPECT_EQ(ec3, dd::client_errc::proxy_auth_required) << ec3.message();
}

TEST_F(proxy_test, the_environment_is_read_on_request_and_no_proxy_bypasses)
{
    ::setenv("http_proxy", open_proxy().url().c_str(), 1);
    ::unsetenv("no_proxy");
    ::unsetenv("NO_PROXY");
    auto send = [&](const dd::beast_transport_params& p, const std::string& tag) {
        dd::beast_transport t(ioc.get_executor(), p);
        dd::http_request req;
        req.url = sb.origin() + "/sandbox/health?probe=" + tag;
        req.timeout = 30s;
        auto [ec, r] = dd_test::run_awaitable(ioc, dd::async_transport_send(t, std::move(req), asio::as_tuple(asio::use_awaitable)));
        ioc.restart();
        EXPECT_FALSE(ec) << ec.message();
        EXPECT_EQ(r.status, 200u);
    };
    dd::beast_transport_params p;
    send(p, "env-ignored");
    p.proxy.from_environment = true;
    send(p, "env-used");
    p.proxy.no_proxy = "127.0.0.1";
    send(p, "env-bypassed");
    ::unsetenv("http_proxy");
    const std::string log = open_proxy().log();
    EXPECT_EQ(log.find("probe=env-ignored"), std::string::npos) << log;
    EXPECT_NE(log.find("probe=env-used"), std::string::npos) << log;
    EXPECT_EQ(log.find("probe=env-bypassed"), std::string::npos) << log;
}

}  // namespace
