//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// TLS to Redis, against Debian's redis-server with --tls-port and against
// stunnel in front of a plain redis-server, with certificates this program
// makes with the openssl CLI: a CA and a server certificate for localhost and
// 127.0.0.1, the same request signed with past dates (expired), another CA,
// a client certificate. A good chain (by IP address and by host name), a
// wrong CA, an expired certificate, a wrong name, mutual TLS required and
// missing. Failures of configuration (verification, a certificate refused)
// are reported as such, and no message holds the password.

#include <digital_delivery/impl/rate_limit/rate_limiter.hpp>
#include <digital_delivery/impl/rate_limit/redis_link.hpp>
#include <digital_delivery/impl/rate_limit/sansio/redis_store.hpp>
#include <digital_delivery/redis_rate_limit_store.hpp>

#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "redis_exchange.hpp"
#include "run.hpp"
#include "server_process.hpp"

using namespace digital_delivery;
using namespace digital_delivery::detail;  // the machinery under test is internal
using namespace std::chrono_literals;
namespace asio = boost::asio;

namespace {

constexpr const char* stunnel_exe = "/usr/bin/stunnel4";

// A TCP connection to 127.0.0.1:port is accepted (a TLS port answers nothing
// to a plain PING).
bool accepts(unsigned short port)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return false;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    return ok;
}

void write_file(const std::string& path, const std::string& text)
{
    std::ofstream(path) << text;
}

// The certificates of this program, made once in a directory of its own
// (removed at exit).
struct pki
{
    std::string dir;
    std::string error;  // why they could not be made ("" when they were)
    std::string f(const char* name) const { return dir + "/" + name; }

    pki()
    {
        char tmpl[] = "/tmp/dd-redis-tls-XXXXXX";
        if (!::mkdtemp(tmpl))
        {
            error = "mkdtemp failed";
            return;
        }
        dir = tmpl;
        write_file(f("server.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
        write_file(f("client.ext"), "extendedKeyUsage=clientAuth\n");
        write_file(f("index.txt"), "");
        write_file(f("serial"), "1000\n");
        write_file(f("ca.cnf"), "[ca]\ndefault_ca = dd\n[dd]\ndatabase = " + f("index.txt") + "\nnew_certs_dir = " + dir +
                                    "\nserial = " + f("serial") +
                                    "\ndefault_md = sha256\npolicy = any\nunique_subject = no\n[any]\ncommonName = supplied\n");
        const std::string key = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
        const std::vector<std::string> steps = {
            "openssl req -x509" + key + " -keyout ca.key -out ca.crt -days 30 -subj /CN=dd-test-ca",
            "openssl req -x509" + key + " -keyout other-ca.key -out other-ca.crt -days 30 -subj /CN=dd-test-other-ca",
            "openssl req" + key + " -keyout server.key -out server.csr -subj /CN=localhost",
            "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 30 -extfile server.ext",
            // Valid in January 2020 only.
            "openssl ca -batch -notext -config ca.cnf -cert ca.crt -keyfile ca.key -in server.csr -out expired.crt"
            " -startdate 20200101000000Z -enddate 20200201000000Z -extfile server.ext",
            "openssl req" + key + " -keyout client.key -out client.csr -subj /CN=dd-test-client",
            "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out client.crt -days 30 -extfile client.ext",
            // The same key, encrypted with a passphrase.
            "openssl pkey -in client.key -aes256 -passout pass:dd-test-passphrase -out client-encrypted.key",
        };
        for (const auto& s : steps)
            if (std::system(("cd " + dir + " && " + s + " >/dev/null 2>&1").c_str()) != 0)
            {
                error = "failed: " + s;
                return;
            }
    }
    ~pki()
    {
        if (!dir.empty())
            (void)std::system(("rm -rf " + dir).c_str());
    }
};

const pki& test_pki()
{
    static pki p;
    return p;
}

// redis-server listening with TLS only, on a free port.
class tls_redis
{
public:
    tls_redis(const std::string& cert, bool require_client_certificate, std::vector<std::string> extra = {})
        : proc_(
              [=](unsigned short port) {
                  const auto& k = test_pki();
                  std::vector<std::string> a = {dd_test::redis_server_exe, "--port", "0", "--tls-port", std::to_string(port),
                                                "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                                                "--tls-cert-file", k.f(cert.c_str()), "--tls-key-file", k.f("server.key"),
                                                "--tls-ca-cert-file", k.f("ca.crt"), "--tls-auth-clients",
                                                require_client_certificate ? "yes" : "no"};
                  a.insert(a.end(), extra.begin(), extra.end());
                  return a;
              },
              accepts)
    {
        proc_.start();
    }
    unsigned short port() const { return proc_.port(); }

private:
    dd_test::server_process proc_;
};

// stunnel (server mode) on a free port, in front of a plain Redis.
class stunnel_front
{
public:
    explicit stunnel_front(unsigned short redis_port)
        : proc_(
              [redis_port](unsigned short port) {
                  const auto& k = test_pki();
                  const std::string conf = k.f(("stunnel-" + std::to_string(port) + ".conf").c_str());
                  write_file(conf, "foreground = yes\npid =\ndebug = 3\n[redis]\naccept = 127.0.0.1:" + std::to_string(port) +
                                       "\nconnect = 127.0.0.1:" + std::to_string(redis_port) + "\ncert = " + k.f("server.crt") +
                                       "\nkey = " + k.f("server.key") + "\n");
                  return std::vector<std::string>{stunnel_exe, conf};
              },
              accepts)
    {
        proc_.start();
    }
    unsigned short port() const { return proc_.port(); }

private:
    dd_test::server_process proc_;
};

// A scripted TCP peer on 127.0.0.1 (port 0): accepts connections; with an
// `answer`, sends it once the client's first bytes arrive (a plain-text
// server answering a ClientHello); without one, never answers.
class scripted_peer
{
public:
    explicit scripted_peer(std::string answer = {}) : answer_(std::move(answer))
    {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 8) != 0 ||
            ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
            throw std::runtime_error("cannot listen on 127.0.0.1");
        port_ = ntohs(a.sin_port);
        thread_ = std::thread([this] {
            for (;;)
            {
                const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
                if (c < 0)
                    return;
                held_.push_back(c);
                char buf[4096];
                if (!answer_.empty() && ::read(c, buf, sizeof buf) > 0)
                    (void)::send(c, answer_.data(), answer_.size(), MSG_NOSIGNAL);
            }
        });
    }
    ~scripted_peer()
    {
        ::shutdown(fd_, SHUT_RDWR);  // accept() returns
        thread_.join();
        ::close(fd_);
        for (int c : held_)
            ::close(c);
    }
    unsigned short port() const { return port_; }

private:
    std::string answer_;
    int fd_ = -1;
    unsigned short port_ = 0;
    std::vector<int> held_;
    std::thread thread_;
};

class redis_tls : public ::testing::Test
{
protected:
    void SetUp() override
    {
        if (!dd_test::have_redis_server())
            GTEST_SKIP() << dd_test::redis_server_exe << " is not installed (tests/install_deps.sh installs it)";
        ASSERT_EQ(test_pki().error, "");
    }

    static redis_store_params tls_params(unsigned short port, std::string host = "127.0.0.1")
    {
        redis_store_params rp;
        rp.host = std::move(host);
        rp.port = port;
        rp.command_timeout = 5s;  // a TLS handshake on a loaded machine: never the limit tested here
        rp.key_prefix = "dd-tls-test:" + std::to_string(::getpid()) + ":";
        rp.tls.enabled = true;
        rp.tls.ca_file = test_pki().f("ca.crt");
        return rp;
    }

    // One exchange (take one point) on a link of its own.
    static redis_exchange_result take_one(const redis_store_params& rp)
    {
        asio::io_context ioc;
        auto link = std::make_shared<redis_link>(ioc.get_executor(), rp, rp.key_prefix + "bucket");
        return dd_test::take_one_point(ioc, *link);
    }
};

}  // namespace

TEST_F(redis_tls, a_good_chain_serves_by_ip_address_and_by_host_name)
{
    tls_redis server("server.crt", false);
    auto r = take_one(tls_params(server.port()));  // checked against the IP address entry, no SNI
    ASSERT_TRUE(r.reply) << r.why;
    EXPECT_TRUE(r.reply->granted);
    r = take_one(tls_params(server.port(), "localhost"));  // the DNS entry, sent as SNI
    ASSERT_TRUE(r.reply) << r.why;
    // A directory of CAs in OpenSSL's hashed layout serves as well.
    const auto& k = test_pki();
    ASSERT_EQ(std::system(("mkdir -p " + k.f("cas") + " && cp " + k.f("ca.crt") + " " + k.f("cas") + " && openssl rehash " +
                           k.f("cas") + " >/dev/null 2>&1")
                              .c_str()),
              0);
    auto rp = tls_params(server.port());
    rp.tls.ca_file.clear();
    rp.tls.ca_dir = k.f("cas");
    r = take_one(rp);
    ASSERT_TRUE(r.reply) << r.why;
}

TEST_F(redis_tls, a_wrong_ca_an_expired_certificate_and_a_wrong_name_fail_verification)
{
    tls_redis server("server.crt", false);
    tls_redis expired("expired.crt", false);
    struct failing
    {
        redis_store_params rp;
        std::string says;
    };
    auto wrong_ca = tls_params(server.port());
    wrong_ca.tls.ca_file = test_pki().f("other-ca.crt");
    auto wrong_name = tls_params(server.port());
    wrong_name.tls.server_name = "redis.other.example";
    auto wrong_ip = tls_params(server.port());
    wrong_ip.tls.server_name = "127.0.0.2";
    // (The wrong CA's words depend on the chain the server sends: "unable to
    // get local issuer certificate", "self-signed certificate in certificate chain".)
    for (const auto& c : {failing{wrong_ca, "certificate"},
                          failing{tls_params(expired.port()), "certificate has expired"},
                          failing{wrong_name, "hostname mismatch"}, failing{wrong_ip, "IP address mismatch"}})
    {
        const auto r = take_one(c.rp);
        EXPECT_FALSE(r.reply);
        EXPECT_TRUE(r.misconfigured) << r.why;
        EXPECT_NE(r.why.find("TLS verification of "), std::string::npos) << r.why;
        EXPECT_NE(r.why.find(c.says), std::string::npos) << r.why;
    }
    // Verification off: served (and open to anyone in the path).
    wrong_ca.tls.verify = false;
    const auto r = take_one(wrong_ca);
    EXPECT_TRUE(r.reply) << r.why;
}

TEST_F(redis_tls, mutual_tls_required_serves_with_a_client_certificate_and_refuses_without)
{
    tls_redis server("server.crt", true);
    auto rp = tls_params(server.port());
    auto r = take_one(rp);
    EXPECT_FALSE(r.reply);
    EXPECT_TRUE(r.misconfigured) << r.why;
    EXPECT_NE(r.why.find("the server asked for a client certificate and none is configured"), std::string::npos) << r.why;
    rp.tls.cert_file = test_pki().f("client.crt");
    rp.tls.key_file = test_pki().f("client.key");
    r = take_one(rp);
    ASSERT_TRUE(r.reply) << r.why;
    // A key file that cannot be read: a configuration error naming the file.
    rp.tls.key_file = test_pki().f("no-such.key");
    r = take_one(rp);
    EXPECT_FALSE(r.reply);
    EXPECT_TRUE(r.misconfigured);
    EXPECT_NE(r.why.find("TLS: cannot load key_file " + rp.tls.key_file), std::string::npos) << r.why;
}

// An encrypted client key is refused as a configuration error, with no
// passphrase prompt: without a terminal, and with one (a child process whose
// controlling terminal is a pty: OpenSSL's own prompt would appear there and
// block on reading it).
TEST_F(redis_tls, an_encrypted_client_key_is_refused_without_a_prompt)
{
    tls_redis server("server.crt", true);
    auto rp = tls_params(server.port());
    rp.tls.cert_file = test_pki().f("client.crt");
    rp.tls.key_file = test_pki().f("client-encrypted.key");
    const auto expect_refused = [&](const redis_exchange_result& r) {
        EXPECT_FALSE(r.reply);
        EXPECT_TRUE(r.misconfigured) << r.why;
        EXPECT_NE(r.why.find("TLS: cannot load key_file " + rp.tls.key_file + ": the key is encrypted"), std::string::npos)
            << r.why;
    };
    expect_refused(take_one(rp));

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DD_TEST_UNDER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(DD_TEST_UNDER_TSAN)
    // TSan cannot run a child that starts threads after a fork of a
    // multi-threaded process ("starting new threads after multi-threaded fork
    // is not supported"): the terminal half runs in the other builds.
    GTEST_SKIP() << "the child on a pty: not under ThreadSanitizer";
#endif
    int master = -1;
    const pid_t child = ::forkpty(&master, nullptr, nullptr, nullptr);
    ASSERT_GE(child, 0) << "forkpty";
    if (child == 0)
    {
        const auto r = take_one(rp);
        const bool ok = !r.reply && r.misconfigured && r.why.find("the key is encrypted") != std::string::npos;
        ::_exit(ok ? 0 : 1);
    }
    std::string screen;
    int status = -1;
    for (int waited = 0; waited < 200 && status < 0; ++waited)  // at most 20 s
    {
        // (once the child has closed the terminal, poll returns at once with
        // POLLHUP and read fails: wait the 100 ms then)
        pollfd p{master, POLLIN, 0};
        ssize_t n = 0;
        char buf[512];
        if (::poll(&p, 1, 100) > 0 && (n = ::read(master, buf, sizeof buf)) > 0)
            screen.append(buf, static_cast<std::size_t>(n));
        else if (n < 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        int st = 0;
        if (::waitpid(child, &st, WNOHANG) == child)
            status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    }
    if (status < 0)
    {
        ::kill(child, SIGKILL);
        ::waitpid(child, nullptr, 0);
    }
    ::close(master);
    EXPECT_EQ(screen.find("pass phrase"), std::string::npos) << "prompted on the terminal: " << screen;
    EXPECT_EQ(status, 0) << "the child with a terminal did not end refused (blocked on a prompt?): " << screen;
}

// TLS to a port that speaks plain text: a server that answers nothing (a
// plain-text Redis waits for a newline) fails on the handshake's own time
// limit, shorter than command_timeout, saying so; a server that answers in
// plain text (-ERR) is reported at once as such.
TEST_F(redis_tls, tls_to_a_plain_text_port_says_so)
{
    scripted_peer silent;
    auto rp = tls_params(silent.port());  // command_timeout 5 s
    rp.tls.handshake_timeout = 300ms;
    auto r = take_one(rp);
    EXPECT_FALSE(r.reply);
    EXPECT_NE(r.why.find("TLS handshake: no answer within 300 ms; is this a plain-text port?"), std::string::npos) << r.why;
    EXPECT_EQ(r.why.find("command_timeout"), std::string::npos) << r.why;
    // The default: half of command_timeout.
    rp.tls.handshake_timeout = 0ms;
    rp.command_timeout = 600ms;
    r = take_one(rp);
    EXPECT_NE(r.why.find("TLS handshake: no answer within 300 ms"), std::string::npos) << r.why;

    scripted_peer plain("-ERR unknown command\r\n");
    r = take_one(tls_params(plain.port()));
    EXPECT_FALSE(r.reply);
    EXPECT_TRUE(r.misconfigured) << r.why;
    EXPECT_NE(r.why.find("the server answered in plain text (\"-ERR "), std::string::npos) << r.why;
    EXPECT_NE(r.why.find("is this a plain-text port?"), std::string::npos) << r.why;

    // A real plain-text Redis: one way or the other, the message says so.
    dd_test::redis_server real;
    rp = tls_params(real.port());
    rp.tls.handshake_timeout = 1s;
    r = take_one(rp);
    EXPECT_FALSE(r.reply);
    EXPECT_NE(r.why.find("is this a plain-text port?"), std::string::npos) << r.why;
}

TEST_F(redis_tls, stunnel_in_front_of_a_plain_redis_with_auth)
{
    if (::access(stunnel_exe, X_OK) != 0)
        GTEST_SKIP() << stunnel_exe << " is not installed (tests/install_deps.sh installs it)";
    dd_test::redis_server plain({"--requirepass", "tls-secret-81f0"});
    stunnel_front front(plain.port());
    auto rp = tls_params(front.port(), "localhost");
    rp.password = "tls-secret-81f0";
    auto r = take_one(rp);
    ASSERT_TRUE(r.reply) << r.why;
    rp.password = "wrong-secret-0a3c";
    r = take_one(rp);
    EXPECT_FALSE(r.reply);
    EXPECT_TRUE(r.misconfigured);
    EXPECT_NE(r.why.find("WRONGPASS"), std::string::npos) << r.why;
    EXPECT_EQ(r.why.find("secret"), std::string::npos) << r.why;
}

// Through the limiter: a certificate that fails verification is reported as
// store_misconfigured, the fallback serving meanwhile; a plain client on the
// TLS port is an outage.
TEST_F(redis_tls, a_verification_failure_reaches_the_limiter_as_a_misconfiguration)
{
    tls_redis expired("expired.crt", false);
    asio::io_context ioc;
    for (bool tls : {true, false})
    {
        rate_limit_params p;
        auto rp = tls_params(expired.port());
        rp.tls.enabled = tls;
        p.store = redis_rate_limit_store(rp);
        std::vector<throttle_event> events;
        p.on_throttle = [&](const throttle_event& e) { events.push_back(e); };
        auto lim = unshared_rate_limiter(ioc.get_executor(), "https://redis-tls-test.example.com/" + std::to_string(tls), "the-api-key", p);
        std::optional<error_code> got;
        lim->async_acquire(1, priority::normal, std::nullopt, [&](error_code ec) { got = ec; });
        dd_test::run(ioc);
        ASSERT_TRUE(got);
        EXPECT_FALSE(*got) << "the fallback serves";
        ASSERT_EQ(events.size(), 1u);
        EXPECT_EQ(events[0].what, tls ? throttle_event::kind::store_misconfigured : throttle_event::kind::store_unavailable)
            << events[0].message;
        EXPECT_EQ(lim->snapshot().store, tls ? rate_limit_store_state::misconfigured : rate_limit_store_state::unavailable);
    }
}
