//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// An external server for a test (tinyproxy, redis-server): started on a free
// port of 127.0.0.1, never outliving the test program, stopped (SIGTERM, then
// waited for) by stop() or the destructor. A port chosen free can be taken by
// someone else before the server binds it: the server then exits, and start()
// tries another port.
#ifndef DIGITAL_DELIVERY_TESTS_SERVER_PROCESS_HPP
#define DIGITAL_DELIVERY_TESTS_SERVER_PROCESS_HPP

#include "nginx_env.hpp"

#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace dd_test {

class server_process
{
public:
    /// `argv(port)`: the command line (argv[0] is the executable's path);
    /// `ready(port)`: true once the server answers.
    server_process(std::function<std::vector<std::string>(unsigned short)> argv,
                   std::function<bool(unsigned short)> ready)
        : argv_(std::move(argv)), ready_(std::move(ready))
    {
    }
    ~server_process() { stop(); }
    server_process(const server_process&) = delete;
    server_process& operator=(const server_process&) = delete;

    unsigned short port() const { return port_; }
    bool running() const { return pid_ > 0; }

    /// Starts on a free port (a few attempts); throws if it never answers.
    void start()
    {
        for (int attempt = 0; attempt < 20; ++attempt)
        {
            {
                bound_listener probe(false);
                port_ = probe.port();
            }
            if (start_on(port_))
                return;
        }
        throw std::runtime_error("the server did not start: " + argv_(port_).front());
    }

    /// Starts again on the port of the previous start (a restart).
    bool restart() { return start_on(port_); }

    /// SIGTERM, then waits for the process to exit.
    void stop() { stop_child(pid_); }

private:
    bool start_on(unsigned short port)
    {
        stop();
        pid_ = spawn_child(argv_(port), {}, true);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (std::chrono::steady_clock::now() < deadline)
        {
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_)
            {
                pid_ = -1;
                return false;  // could not bind (the port was taken)
            }
            if (ready_(port))
                return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        stop();
        return false;
    }

    std::function<std::vector<std::string>(unsigned short)> argv_;
    std::function<bool(unsigned short)> ready_;
    unsigned short port_ = 0;
    pid_t pid_ = -1;
};

/// A redis-server of the test program on 127.0.0.1 (no persistence);
/// `extra`: more arguments (e.g. {"--requirepass", "..."}).
inline constexpr const char* redis_server_exe = "/usr/bin/redis-server";

inline bool have_redis_server() { return ::access(redis_server_exe, X_OK) == 0; }

class redis_server
{
public:
    explicit redis_server(std::vector<std::string> extra = {})
        : proc_(
              [extra](unsigned short port) {
                  std::vector<std::string> a = {redis_server_exe, "--port", std::to_string(port), "--bind", "127.0.0.1",
                                                "--save", "", "--appendonly", "no"};
                  a.insert(a.end(), extra.begin(), extra.end());
                  return a;
              },
              [](unsigned short port) {
                  // Any RESP answer (+PONG, or -NOAUTH with a password set).
                  const auto r = ask_local_server(port, "PING\r\n", false);
                  return !r.empty() && (r[0] == '+' || r[0] == '-');
              })
    {
        proc_.start();
    }
    unsigned short port() const { return proc_.port(); }
    void stop() { proc_.stop(); }
    bool restart() { return proc_.restart(); }

private:
    server_process proc_;
};

/// One command to a local Redis (sentinel, cluster node), its first reply.
inline std::string ask_redis(unsigned short port, const std::string& command)
{
    return ask_local_server(port, command, false);
}

/// Polls `done` every 50 ms, at most `polls` times (a bound on tries, never
/// an assertion on time): true once it holds.
template <class F>
bool poll_until(F done, int polls = 600)
{
    for (int i = 0; i < polls; ++i)
    {
        if (done())
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return done();
}

}  // namespace dd_test

#endif
