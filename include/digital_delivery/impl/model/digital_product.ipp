//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_DIGITAL_PRODUCT_IPP
#define DIGITAL_DELIVERY_IMPL_DIGITAL_PRODUCT_IPP

// Caller input the API forbids, refused before anything is sent.

#include <digital_delivery/digital_product.hpp>
#include <digital_delivery/impl/model/validation.hpp>

namespace digital_delivery {

DIGITAL_DELIVERY_DECL error_code validate(const new_digital_product& p, std::string& why)
{
    if (p.store_product_id <= 0)
    {
        why = "store_product_id is required (a positive storefront product id)";
        return client_errc::missing_required_field;
    }
    if (p.asset_ids.empty())
    {
        why = "asset_ids is required (at least one asset id)";
        return client_errc::missing_required_field;
    }
    if (auto ec = detail::check_ids(p.asset_ids, "asset_ids", why))
        return ec;
    if (p.preorder_enabled.value_or(false))
    {
        if (!p.preorder_launch_date)
        {
            why = "a preorder requires preorder_launch_date";
            return client_errc::missing_required_field;
        }
        if (!p.custom_message || detail::is_blank(*p.custom_message))
        {
            why = "a preorder requires custom_message";
            return client_errc::missing_required_field;
        }
    }
    return {};
}
DIGITAL_DELIVERY_DECL error_code validate(const digital_product_update& p, std::string& why)
{
    if (p.asset_ids)
        if (auto ec = detail::check_ids(*p.asset_ids, "asset_ids", why))
            return ec;
    // Enabling a preorder in an update: the server may already hold the date
    // and the message, so only an explicitly blank message is refused here.
    if (p.preorder_enabled.value_or(false) && p.custom_message && detail::is_blank(*p.custom_message))
    {
        why = "a preorder requires a non-blank custom_message";
        return client_errc::invalid_argument;
    }
    return {};
}

}  // namespace digital_delivery

#endif
