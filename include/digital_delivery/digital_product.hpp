//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
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

/// A digital product: a storefront product (or one variant) linked to the
/// assets its buyers receive. Decoded tolerantly (see asset.hpp).
struct digital_product
{
    std::string id{};                                ///< UUID. Required.
    std::optional<std::int64_t> store_product_id{};  ///< The storefront's numeric product id.
    std::optional<std::int64_t> store_variant_id{};  ///< Empty: linked at product level (all variants).
    std::vector<asset_summary> assets{};  ///< The linked assets. Required.
    bool upsert_always{};  ///< A new copy of the assets per order (e.g. unique licence keys).
    std::optional<std::string> custom_message{};        ///< Shown on the download page.
    bool preorder_enabled{};                            ///< The product is a preorder.
    std::optional<timestamp> preorder_launch_date{};    ///< When preorder content becomes available.
    std::optional<std::string> preorder_subject{};      ///< Subject of the email sent at launch.
    std::optional<std::string> preorder_heading{};      ///< Download page heading while the preorder is on.
    std::optional<std::string> preorder_description{};  ///< Download page text while the preorder is on.
    timestamp created_at{};                             ///< When the product was created.
    timestamp updated_at{};                             ///< When the product last changed.
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
    std::int64_t store_product_id{};                 ///< The storefront's product id. Required (positive).
    std::optional<std::int64_t> store_variant_id{};  ///< Omit to link all variants.
    id_list asset_ids{};                             ///< The assets to link. Required (at least one).
    std::optional<bool> upsert_always{};             ///< A new copy of the assets per order (server default false).
    std::optional<string_ref> custom_message{};      ///< Shown on the download page; required for a preorder.
    std::optional<bool> preorder_enabled{};          ///< Make it a preorder (server default false).
    std::optional<timestamp> preorder_launch_date{}; ///< Required for a preorder (at least 2 hours ahead).
    std::optional<string_ref> preorder_subject{};    ///< Subject of the email sent at launch.
    std::optional<string_ref> preorder_heading{};    ///< Download page heading while the preorder is on.
    std::optional<string_ref> preorder_description{};  ///< Download page text while the preorder is on.
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
    std::optional<id_list> asset_ids{};                ///< The new, complete list of linked assets.
    std::optional<bool> upsert_always{};               ///< A new copy of the assets per order.
    std::optional<string_ref> custom_message{};        ///< Shown on the download page.
    std::optional<bool> preorder_enabled{};            ///< Make it, or stop it being, a preorder.
    std::optional<timestamp> preorder_launch_date{};   ///< When preorder content becomes available.
    std::optional<string_ref> preorder_subject{};      ///< Subject of the email sent at launch.
    std::optional<string_ref> preorder_heading{};      ///< Download page heading while the preorder is on.
    std::optional<string_ref> preorder_description{};  ///< Download page text while the preorder is on.
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
    std::optional<string_ref> subject{};  ///< Default: the store's email settings.
    std::optional<string_ref> body{};     ///< Default: the store's email settings.
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

/// GET /digital_products: one page of digital products.
struct digital_product_list
{
    std::vector<digital_product> digital_products{};  ///< The page's products. Required.
    digital_delivery::pagination pagination{};        ///< Where this page is. Required.
};
BOOST_DESCRIBE_STRUCT(digital_product_list, (), (digital_products, pagination))

/// `{"digital_product": ...}`
struct digital_product_envelope
{
    digital_delivery::digital_product digital_product{};  ///< The product. Required.
};
BOOST_DESCRIBE_STRUCT(digital_product_envelope, (), (digital_product))

/// POST /digital_products/{id}/notify_buyers (202)
struct notify_buyers_result
{
    std::string digital_product_id{};  ///< The product whose buyers are notified. Required.
    std::int64_t notified_count{};  ///< Orders queued.
};
BOOST_DESCRIBE_STRUCT(notify_buyers_result, (), (digital_product_id, notified_count))


// ---- validation: input the API forbids, refused before anything is sent --------
// (found by the request functions through ADL; the reason goes to diagnostics)

/// Checks a POST /digital_products body before it is sent (the rules above;
/// no asset id blank).
/// \param v The body.
/// \param why Set to the reason on failure.
/// \return Empty, or client_errc::missing_required_field, client_errc::invalid_argument.
DIGITAL_DELIVERY_DECL error_code validate(const new_digital_product& v, std::string& why);
/// Checks a PATCH /digital_products/{id} body before it is sent: no asset id
/// blank, and a preorder enabled with a custom_message set has a non-blank one.
/// \param v The body.
/// \param why Set to the reason on failure.
/// \return Empty, or client_errc::invalid_argument.
DIGITAL_DELIVERY_DECL error_code validate(const digital_product_update& v, std::string& why);

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/model/digital_product.ipp>
#endif

#endif
