// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The peer TU's job done with the library: the client over the default Beast
// transport and one co_awaited call (issue 25, point 4). Compiled header-only
// (the transport's and the client's implementation compile here) and with
// separate compilation (they compile once, in src.hpp). Same shape as the
// timer and peer TUs: one awaitable<void> spawned with detached.
#include <digital_delivery.hpp>
#include <digital_delivery/beast_transport.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <cstdio>

namespace asio = boost::asio;
namespace dd = digital_delivery;

asio::awaitable<void> print_order(dd::client& c)
{
    dd::order o = co_await dd::async_get_order(c, "o1");
    std::printf("%s\n", o.name.c_str());
}

int main(int argc, char** argv)
{
    asio::io_context ioc;
    dd::client c(dd::beast_transport(ioc.get_executor()),
                 {.base_url = argc > 1 ? argv[1] : "https://api.example.com/api/v1/external", .api_key = "key"});
    asio::co_spawn(ioc, print_order(c), asio::detached);
    ioc.run();
}
