// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Smoke test (label integration): starts the real digital-delivery-sandbox on
// 127.0.0.1 port 0, waits for "listening on", does two keep-alive GETs over a raw
// socket and one storage PUT refusal, then stops it with SIGTERM. And a store
// of its own in the program's shared sandbox (sandbox_process::shared()).
#include "sandbox_process.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <csignal>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

namespace {

struct child {
    pid_t pid = -1;
    int out = -1;
    ~child()
    {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
        if (out >= 0)
            ::close(out);
    }
};

std::string read_line(int fd, std::chrono::seconds timeout)
{
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 100) <= 0)
            continue;
        char c;
        if (::read(fd, &c, 1) != 1)
            break;
        if (c == '\n')
            return line;
        line.push_back(c);
    }
    return line;
}

int connect_to(int port)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(fd);
        return -1;
    }
    timeval tv{10, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

bool send_all(int fd, const std::string& s)
{
    std::size_t off = 0;
    while (off < s.size()) {
        const auto n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
        if (n <= 0)
            return false;
        off += static_cast<std::size_t>(n);
    }
    return true;
}

// Reads one HTTP response with a Content-Length body.
std::string read_response(int fd, std::string& pending)
{
    for (;;) {
        const auto hdr_end = pending.find("\r\n\r\n");
        if (hdr_end != std::string::npos) {
            std::size_t len = 0;
            const auto cl = pending.find("Content-Length: ");
            if (cl != std::string::npos && cl < hdr_end)
                len = std::stoul(pending.substr(cl + 16));
            if (pending.size() >= hdr_end + 4 + len) {
                std::string r = pending.substr(0, hdr_end + 4 + len);
                pending.erase(0, hdr_end + 4 + len);
                return r;
            }
        }
        char buf[4096];
        const auto n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0)
            return pending;
        pending.append(buf, static_cast<std::size_t>(n));
    }
}

} // namespace

TEST(SandboxSmoke, StartsServesAndStops)
{
    int pipefd[2];
    ASSERT_EQ(::pipe(pipefd), 0);
    child c;
    c.pid = ::fork();
    ASSERT_GE(c.pid, 0);
    if (c.pid == 0) {
        ::dup2(pipefd[1], 1);
        ::close(pipefd[0]);
        ::close(pipefd[1]);
        ::execl(DIGITAL_DELIVERY_SANDBOX_EXE, DIGITAL_DELIVERY_SANDBOX_EXE, "--host", "127.0.0.1", "--port", "0", "--seed-orders", "5",
                static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::close(pipefd[1]);
    c.out = pipefd[0];
    const std::string line = read_line(c.out, std::chrono::seconds(20));
    ASSERT_EQ(line.rfind("listening on http://127.0.0.1:", 0), 0u) << line;
    const int port = std::stoi(line.substr(line.rfind(':') + 1));
    ASSERT_GT(port, 0);

    const int fd = connect_to(port);
    ASSERT_GE(fd, 0);
    std::string pending;
    ASSERT_TRUE(send_all(fd, "GET /api/v1/external/orders?per_page=2 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                             "X-Auth-Token: sandbox-key\r\n\r\n"));
    std::string r = read_response(fd, pending);
    EXPECT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r;
    EXPECT_NE(r.find("X-RateLimit-Limit: 40\r\n"), std::string::npos) << r;
    EXPECT_NE(r.find("\"total_count\":5"), std::string::npos) << r;
    // keep-alive: a second request on the same connection
    ASSERT_TRUE(send_all(fd, "GET /api/v1/external/orders HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
    r = read_response(fd, pending);
    EXPECT_EQ(r.rfind("HTTP/1.1 401 Unauthorized\r\n", 0), 0u) << r;
    EXPECT_NE(r.find("{\"error\":\"Invalid API key\"}"), std::string::npos);
    ::close(fd);

    // storage: an unsigned PUT is refused from its header, before any body is sent
    const int fd2 = connect_to(port);
    ASSERT_GE(fd2, 0);
    pending.clear();
    ASSERT_TRUE(send_all(fd2, "PUT /storage/sandbox-assets/assets/x/y/z.pdf HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                              "Content-Length: 1000000\r\nExpect: 100-continue\r\n\r\n"));
    r = read_response(fd2, pending);
    EXPECT_EQ(r.rfind("HTTP/1.1 403 Forbidden\r\n", 0), 0u) << r;
    EXPECT_NE(r.find("<Code>AccessDenied</Code>"), std::string::npos) << r;
    ::close(fd2);

    ASSERT_EQ(::kill(c.pid, SIGTERM), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(c.pid, &status, 0), c.pid);
    c.pid = -1;
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(SandboxSmoke, SharedProcessCreatesAStoreForATest)
{
    auto& sb = dd_test::sandbox_process::shared();
    const auto store = sb.create_store({"--seed-orders", "3"});
    EXPECT_EQ(store.origin, sb.origin());
    EXPECT_EQ(store.base_url, sb.origin() + "/api/v1/external");
    EXPECT_FALSE(store.id.empty());
    EXPECT_NE(store.api_key, sb.api_key());
    const int port = std::stoi(sb.origin().substr(sb.origin().rfind(':') + 1));

    const int fd = connect_to(port);
    ASSERT_GE(fd, 0);
    std::string pending;
    ASSERT_TRUE(send_all(fd, "GET /api/v1/external/orders?per_page=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                             "X-Auth-Token: " + store.api_key + "\r\n\r\n"));
    std::string r = read_response(fd, pending);
    EXPECT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r;
    EXPECT_NE(r.find("\"total_count\":3"), std::string::npos) << r;  // this store's orders
    // the built-in rate limit (the default store has --no-rate-limit)
    EXPECT_NE(r.find("X-RateLimit-Limit: 40\r\n"), std::string::npos) << r;
    ::close(fd);

    // refusals throw with the status and the body
    try {
        sb.create_store({"--port", "1"});
        ADD_FAILURE() << "a process flag was taken as a store option";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("HTTP 422"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("--port configures the whole process"), std::string::npos) << e.what();
    }
    sb.delete_store(store.id);
    EXPECT_THROW(sb.delete_store(store.id), std::runtime_error);
}
