//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_ENDPOINT_COST_HPP
#define DIGITAL_DELIVERY_ENDPOINT_COST_HPP

/// \file
/// What a request and an operation cost in rate-limit points, at compile
/// time, from the endpoint descriptors of endpoints.hpp (docs/sync.md, "Cost
/// model"):
///
/// \code
/// static_assert(dd::endpoint_points<dd::endpoints::list_assets> == 1);
/// static_assert(dd::operation_points::upload_asset == 3);  // POST /assets + GET re-read
/// \endcode
///
/// An operation's points are every API request it sends when nothing fails,
/// its re-read included; a presigned storage PUT costs no points. A retry or
/// a refreshed upload URL costs the points of the request it sends again.

#include <digital_delivery/detail/endpoint_call.hpp>
#include <digital_delivery/endpoints.hpp>

#include <cstdint>

namespace digital_delivery {

/// The rate-limit points one request to endpoint `Endpoint` (a descriptor of
/// namespace endpoints, or your own for custom_endpoint) costs: 1 for a GET,
/// 2 for a write, as the API charges.
template <class Endpoint>
inline constexpr int endpoint_points = detail::cost_of<Endpoint>;

/// The points of the library's operations that send several requests, when
/// nothing is retried (the re-reads that are on by default included).
namespace operation_points {

/// async_upload_asset / async_upload_file: POST /assets, the PUT (free), GET
/// /assets/{id} (upload_options::reread_asset).
inline constexpr int upload_asset = endpoint_points<endpoints::create_asset> + endpoint_points<endpoints::get_asset>;

/// async_upload_asset with upload_options::reread_asset = false.
inline constexpr int upload_asset_no_reread = endpoint_points<endpoints::create_asset>;

/// async_replace_asset_body / async_replace_file: POST /assets/{id}/replace,
/// the PUT (free), GET /assets/{id}.
inline constexpr int replace_asset_body =
    endpoint_points<endpoints::replace_asset> + endpoint_points<endpoints::get_asset>;

/// async_delete_asset: DELETE /assets/{id}.
inline constexpr int delete_asset = endpoint_points<endpoints::delete_asset>;

/// async_add_assets / async_remove_assets with the recheck (the default):
/// GET, GET, PATCH /digital_products/{id}.
inline constexpr int edit_product_assets = 2 * endpoint_points<endpoints::get_digital_product> +
                                           endpoint_points<endpoints::update_digital_product>;

/// One page of GET /assets (up to endpoints::list_assets::max_per_page).
inline constexpr int list_assets_page = endpoint_points<endpoints::list_assets>;

/// One page of GET /digital_products (up to endpoints::list_digital_products::max_per_page).
inline constexpr int list_digital_products_page = endpoint_points<endpoints::list_digital_products>;

}  // namespace operation_points

/// The points of listing `items` elements of a list endpoint with its
/// largest page (at least one page: an empty listing is one request).
/// \tparam ListEndpoint endpoints::list_assets, list_digital_products or list_orders.
/// \param items How many elements there are.
/// \return The points of every page.
template <class ListEndpoint>
constexpr std::int64_t listing_points(std::int64_t items) noexcept
{
    static_assert(ListEndpoint::max_per_page > 0, "a list endpoint");
    const std::int64_t pages = items <= 0 ? 1 : (items + ListEndpoint::max_per_page - 1) / ListEndpoint::max_per_page;
    return pages * endpoint_points<ListEndpoint>;
}

}  // namespace digital_delivery

#endif
