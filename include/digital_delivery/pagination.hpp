//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_PAGINATION_HPP
#define DIGITAL_DELIVERY_PAGINATION_HPP

/// \file
/// `pagination`: the page facts of every list response (this page, its size, the
/// totals).

#include <boost/describe/class.hpp>

#include <cstdint>

namespace digital_delivery {

/// The `pagination` object of every list response.
struct pagination
{
    std::int64_t current_page{};  ///< This page's number, from 1. Required.
    std::int64_t per_page{};      ///< Items per page. Required.
    std::int64_t total_count{};  ///< All items matching the filters. Required.
    std::int64_t total_pages{};   ///< Pages of per_page items. Required.
};
BOOST_DESCRIBE_STRUCT(pagination, (), (current_page, per_page, total_count, total_pages))

}  // namespace digital_delivery

#endif
