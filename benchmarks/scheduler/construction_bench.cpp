//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// Constructing many clients in one process (issue 16): N clients, each with
// its own API key (one store each, the many-tenants case), or all with one
// key. Prints the wall time of constructing them all and the heap bytes each
// client keeps (live bytes after construction / N, counted by a replaced
// global operator new). Not a test: timing is only ever reported here.
//
//   digital_delivery_construction_bench [N...]     (default: 1000 10000 20000 100000)

#include <digital_delivery/client.hpp>
#include <digital_delivery/testing/fake_transport.hpp>

#include <boost/asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace {
std::atomic<long long> g_live{0};
}

void* operator new(std::size_t n)
{
    void* p = std::malloc(n + 16);
    if (!p)
        throw std::bad_alloc();
    *static_cast<std::size_t*>(p) = n;
    g_live.fetch_add(static_cast<long long>(n), std::memory_order_relaxed);
    return static_cast<char*>(p) + 16;
}
void operator delete(void* p) noexcept
{
    if (!p)
        return;
    char* b = static_cast<char*>(p) - 16;
    g_live.fetch_sub(static_cast<long long>(*reinterpret_cast<std::size_t*>(b)), std::memory_order_relaxed);
    std::free(b);
}
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }

namespace dd = digital_delivery;

static void run(std::size_t n, bool distinct_keys)
{
    boost::asio::io_context ioc;
    auto ft = std::make_shared<dd::testing::fake_transport>(ioc.get_executor());
    std::vector<dd::client> clients;
    clients.reserve(n);
    std::vector<std::string> keys;
    keys.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
        keys.push_back("key-" + std::to_string(distinct_keys ? i : 0));
    const long long before = g_live.load();
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < n; ++i)
        clients.emplace_back(dd::any_transport(ft), dd::client_params{.base_url = "https://dd.example.com/api/v1/external", .api_key = keys[i]});
    const auto t1 = std::chrono::steady_clock::now();
    const long long bytes = g_live.load() - before;
    clients.clear();
    const auto t2 = std::chrono::steady_clock::now();
    std::printf("%-13s N=%7zu  construct %9.3f s  (%6.2f us/client)  heap %6lld B/client  destroy %7.3f s\n",
                distinct_keys ? "distinct-keys" : "one-key", n,
                std::chrono::duration<double>(t1 - t0).count(),
                std::chrono::duration<double, std::micro>(t1 - t0).count() / static_cast<double>(n),
                bytes / static_cast<long long>(n), std::chrono::duration<double>(t2 - t1).count());
    std::fflush(stdout);
}

int main(int argc, char** argv)
{
    std::vector<std::size_t> ns;
    for (int i = 1; i < argc; ++i)
        ns.push_back(std::strtoull(argv[i], nullptr, 10));
    if (ns.empty())
        ns = {1000, 10000, 20000, 100000};
    for (auto n : ns)
        run(n, true);
    for (auto n : ns)
        run(n, false);
}
