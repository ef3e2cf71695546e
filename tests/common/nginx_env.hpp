//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
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
#include <cstdio>
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

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
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

/// A listening socket on 127.0.0.1 with a port the kernel chose: nobody else
/// can take the port between choosing it and using it.
class bound_listener
{
public:
    explicit bound_listener(bool listen = true)
    {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        if (fd_ < 0)
            throw std::runtime_error("socket failed");
        const int one = 1;
        ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
            (listen && ::listen(fd_, 512) != 0) ||
            ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
        {
            ::close(fd_);
            throw std::runtime_error("cannot bind a port on 127.0.0.1");
        }
        port_ = ntohs(a.sin_port);
    }
    bound_listener(const bound_listener&) = delete;
    bound_listener& operator=(const bound_listener&) = delete;
    ~bound_listener() { close(); }

    int fd() const { return fd_; }
    unsigned short port() const { return port_; }
    void close()
    {
        if (fd_ >= 0)
            ::close(fd_);
        fd_ = -1;
    }

private:
    int fd_ = -1;
    unsigned short port_ = 0;
};

/// A port on which connections are refused (bound, never listening, held for
/// the object's lifetime so that no one else can listen on it meanwhile).
class refused_port
{
public:
    unsigned short port() const { return sock_.port(); }

private:
    bound_listener sock_{false};
};

/// Waits (bounded by `limit`) until this process has no connection to
/// 127.0.0.1:`port` that the peer has not closed: every one is in CLOSE_WAIT
/// or gone (read from /proc/net/tcp). Returns true when that is so.
inline bool wait_until_peer_closed(unsigned short port, std::chrono::seconds limit = std::chrono::seconds(30))
{
    char remote[16];
    std::snprintf(remote, sizeof remote, "0100007F:%04X", port);
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;)
    {
        std::ifstream f("/proc/net/tcp");
        std::string line;
        bool open = false;
        while (std::getline(f, line))
        {
            std::istringstream ls(line);
            std::string sl, local, rem, state;
            ls >> sl >> local >> rem >> state;
            if (rem == remote && state == "01")  // ESTABLISHED: not closed by the peer yet
                open = true;
        }
        if (!open)
            return true;
        if (std::chrono::steady_clock::now() >= deadline)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

/// Starts `argv` (argv[0]: the executable's path) in a child process that
/// never outlives this one; `env`: its whole environment (empty: this
/// process's); `quiet`: its stdout and stderr go to /dev/null.
inline pid_t spawn_child(std::vector<std::string> argv, std::vector<std::string> env, bool quiet)
{
    // Prepared before fork(): the child only calls async-signal-safe functions.
    std::vector<char*> args, envp;
    for (auto& a : argv)
        args.push_back(a.data());
    args.push_back(nullptr);
    for (auto& e : env)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0)
        throw std::runtime_error("fork failed");
    if (pid == 0)
    {
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // never outlive the test
        if (quiet)
        {
            const int null = ::open("/dev/null", O_WRONLY);
            if (null >= 0)
            {
                ::dup2(null, 1);
                ::dup2(null, 2);
            }
        }
        if (env.empty())
            ::execv(args[0], args.data());
        else
            ::execve(args[0], args.data(), envp.data());
        ::_exit(127);
    }
    return pid;
}

/// What a server on 127.0.0.1:`port` answers to `request` over a fresh
/// connection: until it closes the connection (or, with `until_close` false,
/// until the first CRLF), bounded by `limit`; empty when nothing listens.
inline std::string ask_local_server(unsigned short port, const std::string& request, bool until_close = true,
                                    std::chrono::seconds limit = std::chrono::seconds(2))
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return {};
    timeval tv{static_cast<time_t>(limit.count()), 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string out;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0)
    {
        if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size()))
        {
            char buf[2048];
            for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
            {
                out.append(buf, static_cast<std::size_t>(n));
                if (!until_close && out.find("\r\n") != std::string::npos)
                    break;
            }
        }
    }
    ::close(fd);
    return out;
}

/// SIGTERM to a child of spawn_child(), then waits for it; `pid` becomes -1.
inline void stop_child(pid_t& pid)
{
    if (pid > 0)
    {
        ::kill(pid, SIGTERM);
        int status = 0;
        ::waitpid(pid, &status, 0);
        pid = -1;
    }
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
    std::unique_ptr<bound_listener> listeners[4];
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
        // nginx inherits these listening sockets (its NGINX variable, the
        // mechanism of its binary upgrade): the ports are ours from bind() on.
        for (auto& l : listeners)
            l = std::make_unique<bound_listener>();
        tls_port = listeners[0]->port();
        tls_close_port = listeners[1]->port();
        mismatch_port = listeners[2]->port();
        plain_port = listeners[3]->port();
        write_conf();
        start_nginx();
    }

    void stop()
    {
        stop_child(nginx_pid);
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
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while ((got = requests_for(tag)) < n && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
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
        // As root, the worker would switch to "nobody" and lose access to this
        // private directory: it stays who we are.
        std::string conf = std::string(::geteuid() == 0 ? "user root;\n" : "") + "daemon off;\nworker_processes 1;\npid " + d + "/nginx.pid;\n"
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
        conf += "    server {\n        listen 127.0.0.1:" + std::to_string(plain_port) + ";\n"
                "        location = /__ready { return 204; }\n" + proxy + "    }\n";
        conf += "}\n";
        write_file(d + "/nginx.conf", conf);
    }

    void start_nginx()
    {
        const std::string conf = dir + "/nginx.conf";
        const std::string err = dir + "/error.log";
        // Prepared before fork(): the child only calls async-signal-safe functions.
        std::string inherited = "NGINX=";
        for (auto& l : listeners)
            inherited += std::to_string(l->fd()) + ";";
        nginx_pid = spawn_child({"/usr/sbin/nginx", "-p", dir, "-c", conf, "-e", err}, {inherited, "PATH=/usr/sbin:/usr/bin:/bin"},
                                false);
        for (auto& l : listeners)
            l->close();  // nginx has them now
        // Ready when it answers: the sockets already listen, so the request
        // waits in the backlog until nginx accepts it (no sleep, no retry).
        const std::string answer = http_get_once(plain_port, "/__ready", std::chrono::seconds(30));
        if (answer.rfind("HTTP/1.1 204", 0) != 0)
        {
            int status = 0;
            if (::waitpid(nginx_pid, &status, WNOHANG) == nginx_pid)
                nginx_pid = -1;
            throw std::runtime_error("nginx did not start (answer '" + answer + "'): " + read_file(err));
        }
    }

    // One request over a fresh connection, read to EOF (bounded by `limit`).
    static std::string http_get_once(unsigned short port, const std::string& path, std::chrono::seconds limit)
    {
        return ask_local_server(port, "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", true,
                                limit);
    }
};

}  // namespace dd_test

#endif
