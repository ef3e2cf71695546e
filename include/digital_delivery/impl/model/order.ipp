//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_ORDER_IPP
#define DIGITAL_DELIVERY_IMPL_ORDER_IPP

// Caller input the API forbids, refused before anything is sent.

#include <digital_delivery/order.hpp>
#include <digital_delivery/impl/model/validation.hpp>

namespace digital_delivery {

DIGITAL_DELIVERY_DECL error_code validate(const asset_ids_request& r, std::string& why)
{
    if (r.asset_ids.empty())
    {
        // The code of the API's own answer; the words say nothing was sent.
        why = "asset_ids must be a non-empty array (refused before sending)";
        return api_errc::asset_ids_invalid;
    }
    return detail::check_ids(r.asset_ids, "asset_ids", why);
}
DIGITAL_DELIVERY_DECL error_code validate(const notify_request& r, std::string& why)
{
    if (r.email && detail::is_blank(*r.email))
    {
        why = "email, when given, must not be blank";
        return client_errc::invalid_argument;
    }
    return {};
}

}  // namespace digital_delivery

#endif
