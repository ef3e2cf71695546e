// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The compile-time target of a call site (docs/performance.md, "A call site"):
// a translation unit that includes the umbrella header and co_awaits one call,
// no transport. run.sh compiles it with TUS=call.
#include <digital_delivery.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

namespace asio = boost::asio;
namespace dd = digital_delivery;

asio::awaitable<void> one_call(dd::client& c)
{
    dd::order o = co_await dd::async_get_order(c, "o1");
    (void)o;
}

void run(dd::client& c, asio::io_context& ioc)
{
    asio::co_spawn(ioc, one_call(c), asio::detached);
    ioc.run();
}
