//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
//
// Test environment for the Beast transport: a CA and server certificates made
// with the openssl CLI, a small in-process upstream HTTP server (Beast,
// synchronous, one thread per connection) and an unprivileged nginx in the
// foreground, terminating TLS and proxying to the upstream.
#ifndef DIGITAL_DELIVERY_TESTS_TRANSPORT_TEST_ENV_HPP
#define DIGITAL_DELIVERY_TESTS_TRANSPORT_TEST_ENV_HPP

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <algorithm>
#include <map>
#include <mutex>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

namespace dd_test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

inline unsigned short free_port()
{
    asio::io_context ioc;
    tcp::acceptor a(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    return a.local_endpoint().port();
}

inline void run_or_throw(const std::string& cmd)
{
    if (std::system(cmd.c_str()) != 0)
        throw std::runtime_error("command failed: " + cmd);
}

inline void write_file(const std::string& path, const std::string& text)
{
    std::ofstream f(path);
    f << text;
}

inline std::string read_file(const std::string& path)
{
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

/// In-process upstream. Routes (by target prefix):
///   /echo          → 200, body "METHOD:<request body>", header X-Method
///   /slow?ms=N     → sleeps N ms, then like /echo
///   /big?n=N       → 200 with N bytes of 'x'
///   /upload        → reads the whole body, 200 with the byte count
///   /forbid        → 403 right after the request header, without reading the body, then closes
class upstream
{
public:
    struct state
    {
        std::atomic<std::uint64_t> accepted{0};
        std::atomic<std::uint64_t> upload_bytes{0};
        std::atomic<bool> stopping{false};
        asio::io_context ioc;  // outlives every connection thread's socket
        std::mutex mutex;
        std::vector<std::string> targets;  // request targets received, in order
        bool received(const std::string& target)
        {
            std::lock_guard<std::mutex> lock(mutex);
            return std::find(targets.begin(), targets.end(), target) != targets.end();
        }
    };

    upstream() : st_(std::make_shared<state>()), acc_(st_->ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0))
    {
        port_ = acc_.local_endpoint().port();
        thread_ = std::thread([this] { accept_loop(); });
    }
    ~upstream()
    {
        st_->stopping = true;
        boost::system::error_code ec;
        // Wake the blocking accept with a connection of our own.
        tcp::socket s(st_->ioc);
        s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_), ec);
        thread_.join();
    }
    unsigned short port() const { return port_; }
    state& stats() { return *st_; }

private:
    void accept_loop()
    {
        for (;;)
        {
            boost::system::error_code ec;
            tcp::socket s(st_->ioc);
            acc_.accept(s, ec);
            if (st_->stopping)
                return;
            if (ec)
                continue;
            ++st_->accepted;
            // pair: the socket is destroyed before the state (and its io_context).
            auto p = std::make_unique<std::pair<std::shared_ptr<state>, tcp::socket>>(st_, std::move(s));
            std::thread([p = std::move(p)]() mutable { serve(std::move(p->second), p->first); }).detach();
        }
    }

    static void serve(tcp::socket s, std::shared_ptr<state> st)
    {
        beast::flat_buffer buf;
        boost::system::error_code ec;
        for (;;)
        {
            http::request_parser<http::buffer_body> p;
            p.body_limit(boost::none);
            http::read_header(s, buf, p, ec);
            if (ec)
                return;
            const std::string target(p.get().target());
            const std::string method(p.get().method_string());
            {
                std::lock_guard<std::mutex> lock(st->mutex);
                st->targets.push_back(target);
            }
            if (target.rfind("/forbid", 0) == 0)
            {
                http::response<http::string_body> res{http::status::forbidden, 11};
                res.set(http::field::content_type, "application/xml");
                res.body() = "<Error><Code>SignatureDoesNotMatch</Code></Error>";
                res.keep_alive(false);
                res.prepare_payload();
                http::write(s, res, ec);
                s.shutdown(tcp::socket::shutdown_send, ec);
                // Drain (bounded) so that closing does not reset the peer.
                timeval tv{2, 0};
                ::setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
                char sink[65536];
                while (::recv(s.native_handle(), sink, sizeof sink, 0) > 0)
                {
                }
                return;
            }
            std::string body;
            std::uint64_t count = 0;
            char tmp[65536];
            while (!p.is_done())
            {
                p.get().body().data = tmp;
                p.get().body().size = sizeof tmp;
                http::read(s, buf, p, ec);
                if (ec == http::error::need_buffer)
                    ec = {};
                if (ec)
                    return;
                const std::size_t n = sizeof tmp - p.get().body().size;
                count += n;
                if (body.size() < (1u << 20))
                    body.append(tmp, n);
            }
            http::response<http::string_body> res{http::status::ok, 11};
            res.set("X-Method", method);
            res.set(http::field::content_type, "text/plain");
            if (target.rfind("/slow", 0) == 0)
            {
                const auto at = target.find("ms=");
                const int ms = at == std::string::npos ? 1000 : std::atoi(target.c_str() + at + 3);
                std::this_thread::sleep_for(std::chrono::milliseconds(ms));
                res.body() = method + ":" + body;
            }
            else if (target.rfind("/big", 0) == 0)
            {
                const auto at = target.find("n=");
                const std::size_t n = at == std::string::npos ? 1000 : std::strtoull(target.c_str() + at + 2, nullptr, 10);
                res.body().assign(n, 'x');
            }
            else if (target.rfind("/upload", 0) == 0)
            {
                st->upload_bytes += count;
                res.body() = std::to_string(count);
            }
            else
                res.body() = method + ":" + body;
            res.keep_alive(p.get().keep_alive());
            res.prepare_payload();
            http::write(s, res, ec);
            if (ec || !res.keep_alive())
            {
                s.shutdown(tcp::socket::shutdown_send, ec);
                return;
            }
        }
    }

    std::shared_ptr<state> st_;
    tcp::acceptor acc_;
    unsigned short port_{};
    std::thread thread_;
};

/// Certificates, upstream and nginx for the whole test suite.
class environment
{
public:
    std::string dir;
    unsigned short tls_port{};        // TLS, keep-alive (1000 requests per connection)
    unsigned short tls_close_port{};  // TLS, keepalive_requests 2, keepalive_timeout 1s
    unsigned short mismatch_port{};   // TLS, certificate for wrong.example only
    unsigned short plain_port{};      // plain HTTP
    std::unique_ptr<upstream> up;
    pid_t nginx_pid = -1;

    std::string ca_file() const { return dir + "/ca.pem"; }
    std::string other_ca_file() const { return dir + "/other_ca.pem"; }
    std::string access_log() const { return dir + "/access.log"; }

    void start()
    {
        char tmpl[] = "/tmp/dd-transport-XXXXXX";
        if (!::mkdtemp(tmpl))
            throw std::runtime_error("mkdtemp failed");
        dir = tmpl;
        make_certs();
        up = std::make_unique<upstream>();
        tls_port = free_port();
        tls_close_port = free_port();
        mismatch_port = free_port();
        plain_port = free_port();
        write_conf();
        start_nginx();
    }

    void stop()
    {
        if (nginx_pid > 0)
        {
            ::kill(nginx_pid, SIGTERM);
            int status = 0;
            ::waitpid(nginx_pid, &status, 0);
            nginx_pid = -1;
        }
        up.reset();
        if (!dir.empty() && std::getenv("DD_KEEP_TEST_DIR") == nullptr)
            std::system(("rm -rf '" + dir + "'").c_str());
    }

    /// Distinct nginx connection serial numbers ($connection) of the access
    /// log lines whose URI contains `tag`: the connections the client opened.
    std::size_t connections_for(const std::string& tag) const
    {
        std::ifstream f(access_log());
        std::set<std::string> conns;
        std::string line;
        while (std::getline(f, line))
        {
            if (line.find(tag) == std::string::npos)
                continue;
            conns.insert(line.substr(0, line.find(' ')));
        }
        return conns.size();
    }

    /// nginx logs a request after sending its response: wait (bounded) until
    /// `n` lines with `tag` are there.
    std::size_t wait_for_requests(const std::string& tag, std::size_t n) const
    {
        std::size_t got = 0;
        for (int i = 0; i < 200 && (got = requests_for(tag)) < n; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        return got;
    }

    std::size_t requests_for(const std::string& tag) const
    {
        std::ifstream f(access_log());
        std::size_t n = 0;
        std::string line;
        while (std::getline(f, line))
            if (line.find(tag) != std::string::npos)
                ++n;
        return n;
    }

private:
    void make_certs()
    {
        const std::string d = dir;
        const std::string q = " >/dev/null 2>&1";
        const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
        run_or_throw("cd '" + d + "' && openssl req -x509" + ec +
                     " -keyout ca.key -out ca.pem -days 2 -subj /CN=dd-test-ca -addext basicConstraints=critical,CA:TRUE"
                     " -addext keyUsage=critical,keyCertSign,cRLSign" + q);
        run_or_throw("cd '" + d + "' && openssl req -x509" + ec +
                     " -keyout other_ca.key -out other_ca.pem -days 2 -subj /CN=dd-other-ca"
                     " -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign" + q);
        auto leaf = [&](const std::string& name, const std::string& cn, const std::string& san) {
            write_file(d + "/" + name + ".ext", "subjectAltName=" + san +
                                                     "\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\n"
                                                     "extendedKeyUsage=serverAuth\n");
            run_or_throw("cd '" + d + "' && openssl req -new" + ec + " -keyout " + name + ".key -out " + name +
                         ".csr -subj /CN=" + cn + q);
            run_or_throw("cd '" + d + "' && openssl x509 -req -in " + name + ".csr -CA ca.pem -CAkey ca.key"
                         " -CAcreateserial -days 2 -out " + name + ".pem -extfile " + name + ".ext" + q);
        };
        leaf("server", "localhost", "IP:127.0.0.1,DNS:localhost");
        leaf("wrong", "wrong.example", "DNS:wrong.example");
    }

    void write_conf()
    {
        const std::string d = dir;
        const std::string up_addr = "127.0.0.1:" + std::to_string(up->port());
        const std::string proxy = "        location / {\n"
                                  "            proxy_pass http://" + up_addr + ";\n"
                                  "            proxy_request_buffering off;\n"
                                  "            proxy_buffering off;\n"
                                  "            proxy_http_version 1.1;\n"
                                  "            proxy_set_header Connection \"\";\n"
                                  "            proxy_read_timeout 60s;\n"
                                  "        }\n";
        auto tls_server = [&](unsigned short port, const std::string& cert, const std::string& extra) {
            return "    server {\n        listen 127.0.0.1:" + std::to_string(port) + " ssl;\n"
                   "        ssl_certificate " + d + "/" + cert + ".pem;\n"
                   "        ssl_certificate_key " + d + "/" + cert + ".key;\n" + extra + proxy + "    }\n";
        };
        std::string conf = "daemon off;\nmaster_process off;\nworker_processes 1;\npid " + d + "/nginx.pid;\n"
                           "error_log " + d + "/error.log warn;\n"
                           "events { worker_connections 512; }\n"
                           "http {\n"
                           "    client_body_temp_path " + d + "/client_body;\n"
                           "    proxy_temp_path " + d + "/proxy;\n"
                           "    fastcgi_temp_path " + d + "/fastcgi;\n"
                           "    uwsgi_temp_path " + d + "/uwsgi;\n"
                           "    scgi_temp_path " + d + "/scgi;\n"
                           "    log_format conns '$connection $connection_requests $request_method $request_uri $status';\n"
                           "    access_log " + d + "/access.log conns;\n"
                           "    client_max_body_size 0;\n"
                           "    keepalive_requests 1000;\n";
        conf += tls_server(tls_port, "server", "");
        conf += tls_server(tls_close_port, "server", "        keepalive_requests 2;\n        keepalive_timeout 1s;\n");
        conf += tls_server(mismatch_port, "wrong", "");
        conf += "    server {\n        listen 127.0.0.1:" + std::to_string(plain_port) + ";\n" + proxy + "    }\n";
        conf += "}\n";
        write_file(d + "/nginx.conf", conf);
    }

    void start_nginx()
    {
        const std::string conf = dir + "/nginx.conf";
        const std::string err = dir + "/error.log";
        nginx_pid = ::fork();
        if (nginx_pid < 0)
            throw std::runtime_error("fork failed");
        if (nginx_pid == 0)
        {
            ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // never outlive the test
            ::execl("/usr/sbin/nginx", "nginx", "-p", dir.c_str(), "-c", conf.c_str(), "-e", err.c_str(),
                    static_cast<char*>(nullptr));
            ::_exit(127);
        }
        // Wait until every port accepts connections.
        asio::io_context ioc;
        for (unsigned short port : {tls_port, tls_close_port, mismatch_port, plain_port})
        {
            bool ok = false;
            for (int i = 0; i < 200 && !ok; ++i)
            {
                tcp::socket s(ioc);
                boost::system::error_code ec;
                s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), ec);
                ok = !ec;
                if (!ok)
                {
                    int status = 0;
                    if (::waitpid(nginx_pid, &status, WNOHANG) == nginx_pid)
                    {
                        nginx_pid = -1;
                        throw std::runtime_error("nginx exited: " + read_file(err));
                    }
                    std::this_thread::sleep_for(std::chrono::milliseconds(25));
                }
            }
            if (!ok)
                throw std::runtime_error("nginx did not start: " + read_file(err));
        }
    }
};

}  // namespace dd_test

#endif
