//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
//
#ifndef DIGITAL_DELIVERY_DETAIL_VALIDATE_HPP
#define DIGITAL_DELIVERY_DETAIL_VALIDATE_HPP

// Caller input the API forbids, rejected before anything is sent. Found by
// the request functions through ADL (`validate(payload, why)`); a payload
// type without an overload is not checked beyond page/per_page.

#include <digital_delivery/asset.hpp>
#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/digital_product.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/order.hpp>

#include <string>

namespace digital_delivery {

DIGITAL_DELIVERY_DECL error_code validate(const new_asset& a, std::string& why);
DIGITAL_DELIVERY_DECL error_code validate(const asset_update& a, std::string& why);
DIGITAL_DELIVERY_DECL error_code validate(const asset_replacement& a, std::string& why);
DIGITAL_DELIVERY_DECL error_code validate(const asset_query& q, std::string& why);
DIGITAL_DELIVERY_DECL error_code validate(const new_digital_product& p, std::string& why);
DIGITAL_DELIVERY_DECL error_code validate(const digital_product_update& p, std::string& why);
DIGITAL_DELIVERY_DECL error_code validate(const asset_ids_request& r, std::string& why);
DIGITAL_DELIVERY_DECL error_code validate(const notify_request& r, std::string& why);

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/validate.ipp>
#endif

#endif
