//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
//
#ifndef DIGITAL_DELIVERY_DIGITAL_PRODUCT_HPP
#define DIGITAL_DELIVERY_DIGITAL_PRODUCT_HPP

/// \file
/// Digital products: assets linked to a storefront product or variant.

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/id_list.hpp>
#include <digital_delivery/asset.hpp>
#include <digital_delivery/pagination.hpp>
#include <digital_delivery/string_ref.hpp>
#include <digital_delivery/timestamp.hpp>

#include <boost/describe/class.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace digital_delivery {

struct digital_product
{
    std::string id{};
    std::optional<std::int64_t> store_product_id{};
    std::optional<std::int64_t> store_variant_id{};  ///< Empty: linked at product level (all variants).
    std::vector<asset_summary> assets{};
    bool upsert_always{};  ///< A new copy of the assets per order (e.g. unique licence keys).
    std::optional<std::string> custom_message{};
    bool preorder_enabled{};
    std::optional<timestamp> preorder_launch_date{};
    std::optional<std::string> preorder_subject{};
    std::optional<std::string> preorder_heading{};
    std::optional<std::string> preorder_description{};
    timestamp created_at{};
    timestamp updated_at{};
};
BOOST_DESCRIBE_STRUCT(
    digital_product,
    (),
    (id, store_product_id, store_variant_id, assets, upsert_always, custom_message, preorder_enabled, preorder_launch_date, preorder_subject, preorder_heading, preorder_description, created_at, updated_at)
)

/// POST /digital_products body. Rules checked before sending (client_errc::
/// missing_required_field): store_product_id (positive) and asset_ids (at
/// least one id) present; preorder_enabled requires preorder_launch_date and
/// custom_message.
/// (The server also requires the launch date to be at least 2 hours ahead.)
struct new_digital_product
{
    std::int64_t store_product_id{};
    std::optional<std::int64_t> store_variant_id{};  ///< Omit to link all variants.
    id_list asset_ids{};
    std::optional<bool> upsert_always{};
    std::optional<string_ref> custom_message{};
    std::optional<bool> preorder_enabled{};
    std::optional<timestamp> preorder_launch_date{};
    std::optional<string_ref> preorder_subject{};
    std::optional<string_ref> preorder_heading{};
    std::optional<string_ref> preorder_description{};
};
BOOST_DESCRIBE_STRUCT(
    new_digital_product,
    (),
    (store_product_id, store_variant_id, asset_ids, upsert_always, custom_message, preorder_enabled, preorder_launch_date, preorder_subject, preorder_heading, preorder_description)
)

/// PATCH /digital_products/{id} body. Only the fields you set are sent;
/// asset_ids, when set, REPLACES the whole list (see add_assets/remove_assets
/// helpers for edits).
struct digital_product_update
{
    std::optional<id_list> asset_ids{};
    std::optional<bool> upsert_always{};
    std::optional<string_ref> custom_message{};
    std::optional<bool> preorder_enabled{};
    std::optional<timestamp> preorder_launch_date{};
    std::optional<string_ref> preorder_subject{};
    std::optional<string_ref> preorder_heading{};
    std::optional<string_ref> preorder_description{};
};
BOOST_DESCRIBE_STRUCT(
    digital_product_update,
    (),
    (asset_ids, upsert_always, custom_message, preorder_enabled, preorder_launch_date, preorder_subject, preorder_heading, preorder_description)
)

/// POST /digital_products/{id}/notify_buyers body (optional). Both fields may
/// use {{ order.name }}, {{ customer.name }}, {{ shop.name }}.
struct notify_buyers_request
{
    std::optional<string_ref> subject{};
    std::optional<string_ref> body{};
};
BOOST_DESCRIBE_STRUCT(notify_buyers_request, (), (subject, body))

/// GET /digital_products query.
struct digital_product_query
{
    std::optional<std::int64_t> store_product_id{};  ///< Includes variant-level links.
    std::optional<std::int32_t> page{};              ///< >= 1.
    std::optional<std::int32_t> per_page{};          ///< 1 .. 100.
};
BOOST_DESCRIBE_STRUCT(digital_product_query, (), (store_product_id, page, per_page))

/// GET /digital_products
struct digital_product_list
{
    std::vector<digital_product> digital_products{};
    digital_delivery::pagination pagination{};
};
BOOST_DESCRIBE_STRUCT(digital_product_list, (), (digital_products, pagination))

/// `{"digital_product": ...}`
struct digital_product_envelope
{
    digital_delivery::digital_product digital_product{};
};
BOOST_DESCRIBE_STRUCT(digital_product_envelope, (), (digital_product))

/// POST /digital_products/{id}/notify_buyers (202)
struct notify_buyers_result
{
    std::string digital_product_id{};
    std::int64_t notified_count{};  ///< Orders queued.
};
BOOST_DESCRIBE_STRUCT(notify_buyers_result, (), (digital_product_id, notified_count))


// ---- validation: input the API forbids, refused before anything is sent --------
// (found by the request functions through ADL; the reason goes to diagnostics)

DIGITAL_DELIVERY_DECL error_code validate(const new_digital_product& v, std::string& why);
DIGITAL_DELIVERY_DECL error_code validate(const digital_product_update& v, std::string& why);

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/model/digital_product.ipp>
#endif

#endif
