//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// Outside the guard: in header-only mode asset.hpp includes impl/model/asset.ipp,
// which includes this file, which then needs asset.hpp's declarations.
#include <digital_delivery/asset.hpp>

#ifndef DIGITAL_DELIVERY_IMPL_INTERNAL_VALIDATION_HPP
#define DIGITAL_DELIVERY_IMPL_INTERNAL_VALIDATION_HPP

// What the validate() overloads beside the models share.

#include <digital_delivery/impl/error/server_messages.hpp>
#include <algorithm>
#include <digital_delivery/id_list.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace digital_delivery {
namespace detail {

inline bool is_blank(std::string_view s) noexcept
{
    return std::all_of(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
}

inline error_code check_byte_size(std::int64_t n, std::string& why)
{
    if (n <= 0 || n > max_asset_byte_size)
    {
        why = "byte_size must be between 1 and 2147483648 (2 GB), got " + std::to_string(n);
        return client_errc::invalid_byte_size;
    }
    return {};
}

inline error_code check_ids(id_list ids, std::string_view field, std::string& why)
{
    for (std::size_t i = 0; i < ids.size(); ++i)
        if (is_blank(ids[i]))
        {
            why = std::string(field) + "[" + std::to_string(i) + "] is empty";
            return client_errc::invalid_argument;
        }
    return {};
}

}  // namespace detail
}  // namespace digital_delivery

#endif
