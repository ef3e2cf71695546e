//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// One exchange of the Redis store's link, run to its end: what the TLS,
// Sentinel and Cluster tests ask of a link.
#ifndef DIGITAL_DELIVERY_TESTS_REDIS_EXCHANGE_HPP
#define DIGITAL_DELIVERY_TESTS_REDIS_EXCHANGE_HPP

#include <digital_delivery/impl/rate_limit/redis_link.hpp>
#include <digital_delivery/impl/rate_limit/sansio/redis_store.hpp>

#include <boost/asio/io_context.hpp>

#include <chrono>

#include "run.hpp"

namespace dd_test {

/// Takes one point of a bucket of 1000 per 600 s through `link` (whose
/// executor is `ioc`'s); returns the exchange's outcome.
inline digital_delivery::detail::redis_exchange_result take_one_point(boost::asio::io_context& ioc,
                                                                     digital_delivery::detail::redis_link& link)
{
    using namespace digital_delivery::detail;
    gcra_request take;
    take.take = 1;
    redis_exchange_result out;
    link.async_exchange(gcra_arguments(take, 1000, std::chrono::seconds(600), false),
                        [&](redis_exchange_result r) { out = std::move(r); });
    run(ioc);
    return out;
}

}  // namespace dd_test

#endif
