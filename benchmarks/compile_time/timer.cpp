// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Baseline: a translation unit that co_awaits one Asio timer.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace asio = boost::asio;

asio::awaitable<void> wait_once()
{
    asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::milliseconds(1));
    co_await t.async_wait(asio::use_awaitable);
}

int main()
{
    asio::io_context ioc;
    asio::co_spawn(ioc, wait_once(), asio::detached);
    ioc.run();
}
