// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// A user's test program: the sandbox fixture, a store of its own, its clock
// moved forward, and one request with plain sockets to the API's base URL.
// Exit status 0 when every check passes.
#include <digital_delivery/testing/sandbox.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>

namespace ddt = digital_delivery::testing;

namespace {

int failures = 0;

void check(bool ok, const std::string& what)
{
    std::cout << (ok ? "ok:     " : "FAILED: ") << what << '\n';
    if (!ok)
        ++failures;
}

// GET url (http://127.0.0.1:PORT/path) with X-Auth-Token: the whole answer
// (status line, headers, body) read until the server closes.
std::string http_get(const std::string& url, const std::string& api_key)
{
    const std::string scheme = "http://";
    if (url.compare(0, scheme.size(), scheme) != 0)
        throw std::runtime_error("not an http URL: " + url);
    const auto path_begin = url.find('/', scheme.size());
    const std::string authority = url.substr(scheme.size(), path_begin - scheme.size());
    const std::string path = url.substr(path_begin);
    const auto colon = authority.rfind(':');
    const std::string host = authority.substr(0, colon);
    const int port = std::stoi(authority.substr(colon + 1));

    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        throw std::runtime_error("socket failed");
    timeval tv{30, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<unsigned short>(port));
    ::inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
    {
        ::close(fd);
        throw std::runtime_error("cannot connect to " + authority);
    }
    const std::string req = "GET " + path + " HTTP/1.1\r\nHost: " + authority + "\r\nX-Auth-Token: " + api_key +
                            "\r\nConnection: close\r\n\r\n";
    if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size()))
    {
        ::close(fd);
        throw std::runtime_error("send failed");
    }
    std::string answer;
    char buf[4096];
    ssize_t n;
    while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0)
        answer.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    return answer;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

int main()
{
    try
    {
        // The executable comes from digital_delivery_add_sandbox() (the compile definition).
        ddt::sandbox sb({"--seed-orders", "1"});
        check(starts_with(sb.base_url(), "http://127.0.0.1:") && contains(sb.base_url(), "/api/v1/external"),
              "base_url " + sb.base_url());

        const auto store = sb.create_store({"--seed-orders", "3", "--no-rate-limit"});
        check(!store.id.empty() && !store.api_key.empty() && store.api_key != sb.api_key(),
              "create_store: id " + store.id + ", a key of its own");
        check(store.base_url == sb.base_url(), "the store's base_url is the sandbox's");

        const auto before = sb.clock(store);
        const auto after = sb.advance_clock(store, std::chrono::hours(24));
        check(after.offset_ms - before.offset_ms == 24 * 3600 * 1000,
              "advance_clock by 24 h: offset " + std::to_string(after.offset_ms) + " ms, now " + after.now);
        check(sb.clock().offset_ms == 0, "the default store's clock did not move");

        const std::string orders = http_get(store.base_url + "/orders", store.api_key);
        check(starts_with(orders, "HTTP/1.1 200 "), "GET /orders with the store's key: " + orders.substr(0, 15));
        check(contains(orders, "\"total_count\":3"), "the store's 3 orders");
        const std::string refused = http_get(store.base_url + "/orders", "wrong-key");
        check(starts_with(refused, "HTTP/1.1 401 "), "GET /orders with a wrong key: " + refused.substr(0, 15));

        sb.delete_store(store.id);
        bool threw = false;
        try
        {
            sb.delete_store(store.id);
        }
        catch (const std::runtime_error& e)
        {
            threw = contains(e.what(), "HTTP 404");
        }
        check(threw, "deleting it again throws with HTTP 404");

        const pid_t pid = sb.pid();
        sb.stop();
        check(!sb.running() && ::kill(pid, 0) != 0 && errno == ESRCH, "stop(): the process has exited and is reaped");

        threw = false;
        try
        {
            ddt::sandbox missing({}, "k", "/nonexistent/digital-delivery-sandbox");
        }
        catch (const std::runtime_error& e)
        {
            threw = contains(e.what(), "/nonexistent/digital-delivery-sandbox");
        }
        check(threw, "a missing executable throws, naming it");
    }
    catch (const std::exception& e)
    {
        std::cout << "FAILED: exception: " << e.what() << '\n';
        return 1;
    }
    std::cout << (failures ? "FAILED" : "passed") << '\n';
    return failures ? 1 : 0;
}
