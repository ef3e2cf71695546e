// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// What the tests of ddctl share (cli_journal_test.cpp: `assets upload`,
// cli_sync_test.cpp: `assets sync`, cli_test.cpp): relays between ddctl and the
// sandbox that SIGKILL ddctl at an exact moment of its traffic (or slow its
// uploads down), ddctl run as a process with its own environment, and reading
// back what a buyer downloads.
//
// ddctl talks to the sandbox through two relays of the test process: the API's
// (its base URL) and the storage's (the sandbox's --public-url, so presigned
// URLs point at it). For every request that passes, the relay asks the plan's
// `decide` (which relay, the request's head) what to do with it: pass it on;
// kill ddctl before it reaches the sandbox; kill ddctl when the sandbox's
// answer arrives (the sandbox acted, ddctl never hears of it); or forward its
// first N bytes (head included) and kill ddctl then.
#ifndef DD_TESTS_CLI_KILL_RELAY_HPP
#define DD_TESTS_CLI_KILL_RELAY_HPP

#include <digital_delivery/impl/crypto/sha256.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace dd_test {

namespace kill_fs = std::filesystem;

/// What a relay does with one request.
struct kill_decision
{
    enum kind_t
    {
        pass,         ///< forward it, nothing else
        before,       ///< kill ddctl; the request never reaches the sandbox
        on_answer,    ///< forward it; kill ddctl when the sandbox's answer arrives
        after_bytes,  ///< forward its first `offset` bytes (head included), then kill ddctl
    } kind = pass;
    std::size_t offset = 0;
};

/// The process the relays kill and the rule that says when. `decide` is called
/// only while `armed`, once per request, with `storage` (which relay) and the
/// request's head (request line and header fields); killing disarms.
struct kill_plan
{
    std::atomic<pid_t> pid{0};
    std::atomic<bool> armed{false}, fired{false};
    std::function<kill_decision(bool storage, std::string_view head)> decide;

    bool kill_now()
    {
        bool expected = true;
        if (!armed.compare_exchange_strong(expected, false))
            return false;
        pid_t p;
        while ((p = pid.load()) <= 0)
            std::this_thread::yield();
        fired = true;
        ::kill(p, SIGKILL);
        return true;
    }
};

/// A listening socket on 127.0.0.1 with a port the kernel chose (no race for
/// a port): its descriptor, its port in `port`. Throws when it cannot listen.
inline int listen_on_loopback(int& port, int backlog)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, backlog) != 0)
    {
        if (fd >= 0)
            ::close(fd);
        throw std::runtime_error("cannot listen on 127.0.0.1");
    }
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
    return fd;
}

/// 127.0.0.1:port() -> 127.0.0.1:target. `storage`: the storage's relay, else the API's.
/// `pause`: after each read of up to 64 KiB from the client, wait that long
/// (4 ms: about 16 MiB/s, so that a large upload is still running when a test
/// interrupts it, whatever the machine).
class kill_relay
{
public:
    kill_relay(bool storage, kill_plan& p, std::chrono::milliseconds pause = {}) : storage_(storage), pause_(pause), plan_(p)
    {
        fd_ = listen_on_loopback(port_, 64);
        thread_ = std::thread([this] { accept_loop(); });
    }
    kill_relay(const kill_relay&) = delete;
    kill_relay& operator=(const kill_relay&) = delete;
    ~kill_relay()
    {
        ::shutdown(fd_, SHUT_RDWR);
        thread_.join();
        ::close(fd_);
        std::lock_guard<std::mutex> lk(mtx_);
        for (auto& k : conns_)
        {
            ::shutdown(k->c, SHUT_RDWR);
            ::shutdown(k->s, SHUT_RDWR);
        }
        for (auto& t : threads_)
            t.join();
    }
    int port() const { return port_; }
    /// Where connections go (set before the first one).
    void set_target(int port) { target_ = port; }

private:
    struct conn
    {
        int c, s;
        std::atomic<bool> answer_armed{false};  // kill when the server's next bytes arrive
        std::atomic<int> left{2};
    };

    void accept_loop()
    {
        for (;;)
        {
            const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
            if (c < 0)
                return;
            const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            sockaddr_in a{};
            a.sin_family = AF_INET;
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            a.sin_port = htons(static_cast<std::uint16_t>(target_.load()));
            if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
            {
                ::close(c);
                ::close(s);
                continue;
            }
            auto k = std::make_shared<conn>();
            k->c = c;
            k->s = s;
            std::lock_guard<std::mutex> lk(mtx_);
            conns_.push_back(k);
            threads_.emplace_back([this, k] { upstream(k); });
            threads_.emplace_back([this, k] { downstream(k); });
        }
    }
    static bool send_all(int to, const char* p, std::size_t n)
    {
        while (n > 0)
        {
            const ssize_t w = ::send(to, p, n, MSG_NOSIGNAL);
            if (w <= 0)
                return false;
            p += w;
            n -= static_cast<std::size_t>(w);
        }
        return true;
    }
    void finish(const std::shared_ptr<conn>& k)
    {
        ::shutdown(k->c, SHUT_RDWR);
        ::shutdown(k->s, SHUT_RDWR);
        if (--k->left == 0)
        {
            ::close(k->c);
            ::close(k->s);
        }
    }
    static std::size_t content_length(std::string_view head)
    {
        for (std::size_t p = head.find("\r\n"); p != std::string_view::npos; p = head.find("\r\n", p + 2))
        {
            const std::string_view name = "\r\ncontent-length:";
            if (head.size() - p > name.size() && ::strncasecmp(head.data() + p, name.data(), name.size()) == 0)
                return std::strtoull(std::string(head.substr(p + name.size(), 24)).c_str(), nullptr, 10);
        }
        return 0;
    }
    // ddctl -> sandbox. A request is its head (up to the blank line) and
    // Content-Length bytes of body.
    void upstream(std::shared_ptr<conn> k)
    {
        std::vector<char> buf(64 * 1024);
        std::string pending;           // bytes read, not yet forwarded (a head being read)
        std::uint64_t left = 0;        // bytes of the current request still to forward, head included
        std::size_t request_bytes = 0; // bytes of the current request forwarded
        kill_decision now;             // what the current request is to do
        bool stop = false;  // ddctl killed, or a socket closed
        while (!stop)
        {
            const ssize_t n = ::read(k->c, buf.data(), buf.size());
            if (n <= 0)
                break;
            pending.append(buf.data(), static_cast<std::size_t>(n));
            while (!pending.empty() && !stop)
            {
                if (left == 0)
                {
                    // a new request: wait for its whole head
                    const auto end = pending.find("\r\n\r\n");
                    if (end == std::string::npos)
                        break;
                    left = end + 4 + content_length(std::string_view(pending).substr(0, end + 2));
                    request_bytes = 0;
                    now = plan_.armed.load() && plan_.decide ? plan_.decide(storage_, std::string_view(pending).substr(0, end))
                                                             : kill_decision{};
                    if (now.kind == kill_decision::before && plan_.kill_now())
                    {
                        stop = true;
                        break;
                    }
                    if (now.kind == kill_decision::on_answer)
                        k->answer_armed = true;
                }
                auto mine = static_cast<std::size_t>(std::min<std::uint64_t>(left, pending.size()));
                if (now.kind == kill_decision::after_bytes && request_bytes <= now.offset &&
                    request_bytes + mine >= now.offset)
                {
                    const std::size_t part = now.offset - request_bytes;
                    send_all(k->s, pending.data(), part);
                    if (plan_.kill_now())
                    {
                        stop = true;
                        break;
                    }
                    now.kind = kill_decision::pass;  // disarmed meanwhile: forward the rest
                    request_bytes += part;
                    left -= part;
                    pending.erase(0, part);
                    mine -= part;
                }
                if (!send_all(k->s, pending.data(), mine))
                {
                    stop = true;
                    break;
                }
                request_bytes += mine;
                left -= mine;
                pending.erase(0, mine);
            }
            if (pause_.count() > 0)
                std::this_thread::sleep_for(pause_);
        }
        finish(k);
    }
    // sandbox -> ddctl
    void downstream(std::shared_ptr<conn> k)
    {
        std::vector<char> buf(64 * 1024);
        for (;;)
        {
            const ssize_t n = ::read(k->s, buf.data(), buf.size());
            if (n <= 0)
                break;
            if (k->answer_armed && plan_.kill_now())
                break;
            if (!send_all(k->c, buf.data(), static_cast<std::size_t>(n)))
                break;
        }
        finish(k);
    }

    int fd_ = -1, port_ = 0;
    std::atomic<int> target_{0};
    bool storage_;
    std::chrono::milliseconds pause_;
    kill_plan& plan_;
    std::thread thread_;
    std::mutex mtx_;
    std::vector<std::shared_ptr<conn>> conns_;
    std::vector<std::thread> threads_;
};

inline int port_of_origin(const std::string& origin) { return std::stoi(origin.substr(origin.rfind(':') + 1)); }

/// The path (and query) of an absolute URL.
inline std::string path_of(const std::string& url)
{
    const auto p = url.find('/', url.find("://") + 3);
    return p == std::string::npos ? "/" : url.substr(p);
}

inline std::string sha_hex(std::string_view data)
{
    digital_delivery::detail::sha256 h;
    h.update(data);
    return digital_delivery::detail::sha256::to_hex(h.finish());
}

/// GET `url` (http://127.0.0.1:PORT/...) with its own Host (presigned URLs sign
/// it); the status and the body (Connection: close, read to the end).
inline std::pair<int, std::string> http_get(const std::string& url)
{
    const auto host_start = url.find("://") + 3;
    const auto path_start = url.find('/', host_start);
    const std::string host = url.substr(host_start, path_start - host_start);
    const int port = std::stoi(host.substr(host.find(':') + 1));
    const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    {
        ::close(s);
        return {0, {}};
    }
    const std::string req = "GET " + url.substr(path_start) + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n";
    ::send(s, req.data(), req.size(), MSG_NOSIGNAL);
    std::string all;
    char buf[65536];
    for (ssize_t n; (n = ::read(s, buf, sizeof buf)) > 0;)
        all.append(buf, static_cast<std::size_t>(n));
    ::close(s);
    const auto end = all.find("\r\n\r\n");
    if (all.size() < 12 || end == std::string::npos || all.find("chunked") < end)
        return {0, all};
    return {std::stoi(all.substr(9, 3)), all.substr(end + 4)};
}

/// A fresh directory under the temporary directory, removed with its content.
struct kill_temp_dir
{
    kill_fs::path path;
    explicit kill_temp_dir(const char* prefix = "ddctl-kill")
    {
        std::string t = (kill_fs::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
        if (!::mkdtemp(t.data()))
            throw std::runtime_error("mkdtemp");
        path = t;
    }
    kill_temp_dir(const kill_temp_dir&) = delete;
    kill_temp_dir& operator=(const kill_temp_dir&) = delete;
    ~kill_temp_dir()
    {
        std::error_code ec;
        kill_fs::remove_all(path, ec);
    }
};

/// Starts `exe args...` with exactly `env` (a variable with an empty value
/// left out), stdin from `input`, stdout to the file `out` and stderr to the
/// file `err`; with `terminal` (a pseudo-terminal's slave side), stdin and
/// stderr on it instead. Throws when it cannot start.
inline pid_t spawn_process(const std::string& exe, const std::vector<std::string>& args,
                           const std::map<std::string, std::string>& env, const kill_fs::path& out, const kill_fs::path& err,
                           const kill_fs::path& input = "/dev/null", int terminal = -1)
{
    std::vector<std::string> envs;
    for (const auto& [k, v] : env)
        if (!v.empty())
            envs.push_back(k + "=" + v);
    std::vector<char*> envp, argv;
    for (auto& e : envs)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string exe_copy = exe;
    argv.push_back(exe_copy.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (terminal >= 0)
        posix_spawn_file_actions_adddup2(&fa, terminal, 0);
    else
        posix_spawn_file_actions_addopen(&fa, 0, input.c_str(), O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (terminal >= 0)
        posix_spawn_file_actions_adddup2(&fa, terminal, 2);
    else
        posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid = -1;
    const int spawned = ::posix_spawn(&pid, exe_copy.c_str(), &fa, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    if (spawned != 0)
        throw std::runtime_error("cannot start " + exe);
    return pid;
}

/// Waits for `pid`: its exit status, or 128 + the signal that ended it.
inline int wait_process(pid_t pid)
{
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR)
    {
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/// What a ddctl run left: its exit status (128 + signal when killed), stdout, stderr.
struct ddctl_run
{
    int status = -1;
    std::string out, err;
};

/// Runs `exe args...` with exactly `env`, stdin /dev/null, stdout and stderr
/// in files of `dir`; `p.pid` is set while it runs.
inline ddctl_run run_ddctl(const std::string& exe, const std::vector<std::string>& args,
                           const std::map<std::string, std::string>& env, const kill_fs::path& dir, kill_plan& p)
{
    const kill_fs::path out = dir / "ddctl-out", err = dir / "ddctl-err";
    const pid_t pid = spawn_process(exe, args, env, out, err);
    p.pid = pid;
    const int status = wait_process(pid);
    p.pid = 0;
    std::ifstream o(out), e(err);
    std::stringstream so, se;
    so << o.rdbuf();
    se << e.rdbuf();
    return {status, so.str(), se.str()};
}

}  // namespace dd_test

#endif
