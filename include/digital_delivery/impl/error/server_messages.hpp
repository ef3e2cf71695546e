//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// Outside the guard: in header-only mode error.hpp includes impl/error/error.ipp,
// which includes this file, which must then see api_errc.
#include <digital_delivery/error.hpp>

#ifndef DIGITAL_DELIVERY_IMPL_INTERNAL_SERVER_MESSAGES_HPP
#define DIGITAL_DELIVERY_IMPL_INTERNAL_SERVER_MESSAGES_HPP

// The one table of the server's messages that name a failure precisely: the
// error category's messages, the classification of responses and the
// client-side refusals that anticipate the server all read it.

#include <array>
#include <string_view>

namespace digital_delivery {
namespace detail {

struct known_server_message
{
    api_errc code;
    std::string_view text;  // exactly as the API writes it
};

inline constexpr std::array<known_server_message, 10> known_server_messages{{
    {api_errc::invalid_api_key, "Invalid API key"},
    {api_errc::order_not_found, "Order not found"},
    {api_errc::asset_not_found, "Asset not found"},
    {api_errc::digital_product_not_found, "Digital product not found"},
    {api_errc::external_url_blank, "External url can't be blank"},
    {api_errc::preorder_launch_date_too_soon, "Preorder launch date must be in the future"},
    {api_errc::asset_ids_invalid, "asset_ids must be a non-empty array"},
    {api_errc::order_has_no_email, "Order has no customer email. Provide an email parameter."},
    {api_errc::asset_not_internal, "Only internal assets can have their file replaced"},
    {api_errc::no_orders_to_notify, "This digital product has no orders to notify"},
}};

/// The server's message for `code`, or empty. (NUL-terminated: literals.)
constexpr std::string_view server_message_of(api_errc code) noexcept
{
    for (const auto& m : known_server_messages)
        if (m.code == code)
            return m.text;
    return {};
}

/// The code a server message names, or api_errc{} (compared after trimming).
constexpr api_errc api_errc_of_message(std::string_view text) noexcept
{
    for (const auto& m : known_server_messages)
        if (m.text == text)
            return m.code;
    return api_errc{};
}

}  // namespace detail
}  // namespace digital_delivery

#endif
