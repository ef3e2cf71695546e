//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_ENDPOINTS_HPP
#define DIGITAL_DELIVERY_ENDPOINTS_HPP

/// \file
/// The 18 endpoints of the API as compile-time descriptors, and the request
/// function generated from each (`async_` + the descriptor's name; the call
/// shape is in docs/operations.md).
///
/// A descriptor holds what cannot be derived: method, path template, query
/// or body type (and its JSON root), response type, `max_per_page` of list
/// endpoints, and `idempotent` where it differs from the method's rule.
/// Adding an endpoint = a descriptor here plus its models; nothing else.

#include <digital_delivery/asset.hpp>
#include <digital_delivery/detail/endpoint_call.hpp>
#include <digital_delivery/digital_product.hpp>
#include <digital_delivery/download.hpp>
#include <digital_delivery/http_message.hpp>
#include <digital_delivery/order.hpp>

#include <string_view>

namespace digital_delivery {

/// The endpoint descriptors: one struct per endpoint of the API, named as its
/// request function without `async_` (endpoints::get_order: async_get_order).
namespace endpoints {

// ---- assets -------------------------------------------------------------------

/// Descriptor of `GET /assets`: one page of the store's assets (asset_query filters and pages).
struct list_assets : endpoint_defaults
{
    static constexpr http_method method = http_method::get;  ///< The HTTP method.
    static constexpr std::string_view path = "/assets";  ///< The path template, after base_url.
    using query = asset_query;  ///< The query-string type.
    using response = asset_list;  ///< The response type.
    static constexpr int max_per_page = 250;  ///< The largest per_page the API accepts.
};

/// Descriptor of `GET /assets/{id}`: one asset.
struct get_asset : endpoint_defaults
{
    static constexpr http_method method = http_method::get;  ///< The HTTP method.
    static constexpr std::string_view path = "/assets/{id}";  ///< The path template, after base_url.
    using response = asset_envelope;  ///< The response type.
};

/// Descriptor of `POST /assets`: creates an asset; an internal asset's answer carries the upload handle (async_upload_asset uploads too).
struct create_asset : endpoint_defaults
{
    static constexpr http_method method = http_method::post;  ///< The HTTP method.
    static constexpr std::string_view path = "/assets";  ///< The path template, after base_url.
    using body = new_asset;  ///< The JSON body type.
    static constexpr std::string_view body_root = "asset";  ///< The body is sent as {"<root>": body}.
    using response = asset_with_upload;  ///< The response type.
};

/// Descriptor of `PATCH /assets/{id}`: changes an asset's name, external URL or flags.
struct update_asset : endpoint_defaults
{
    static constexpr http_method method = http_method::patch;  ///< The HTTP method.
    static constexpr std::string_view path = "/assets/{id}";  ///< The path template, after base_url.
    using body = asset_update;  ///< The JSON body type.
    static constexpr std::string_view body_root = "asset";  ///< The body is sent as {"<root>": body}.
    using response = asset_envelope;  ///< The response type.
};

/// Descriptor of `DELETE /assets/{id}`: removes an asset and its stored file.
/// A 404 answering a retry after an attempt that may have been processed
/// completes as success, said in diagnostics::client_message
/// (docs/ambiguous-writes.md).
struct delete_asset : endpoint_defaults
{
    static constexpr http_method method = http_method::delete_;  ///< The HTTP method.
    static constexpr std::string_view path = "/assets/{id}";  ///< The path template, after base_url.
    using response = void;  ///< No result: the operation completes with an error code only.
};

/// Descriptor of `POST /assets/{id}/replace`: starts replacing an internal asset's file (async_replace_asset uploads too).
struct replace_asset : endpoint_defaults
{
    static constexpr http_method method = http_method::post;  ///< The HTTP method.
    static constexpr std::string_view path = "/assets/{id}/replace";  ///< The path template, after base_url.
    using body = asset_replacement;  ///< The JSON body type.
    static constexpr std::string_view body_root = "asset";  ///< The body is sent as {"<root>": body}.
    using response = asset_with_upload;  ///< The response type.
    /// Only internal assets are replaced: the answer carries the upload handle.
    static constexpr auto check_result = &detail::require_upload_handle;
};

// ---- digital products ---------------------------------------------------------

/// Descriptor of `GET /digital_products`: one page of digital products.
struct list_digital_products : endpoint_defaults
{
    static constexpr http_method method = http_method::get;  ///< The HTTP method.
    static constexpr std::string_view path = "/digital_products";  ///< The path template, after base_url.
    using query = digital_product_query;  ///< The query-string type.
    using response = digital_product_list;  ///< The response type.
    static constexpr int max_per_page = 100;  ///< The largest per_page the API accepts.
};

/// Descriptor of `GET /digital_products/{id}`: one digital product.
struct get_digital_product : endpoint_defaults
{
    static constexpr http_method method = http_method::get;  ///< The HTTP method.
    static constexpr std::string_view path = "/digital_products/{id}";  ///< The path template, after base_url.
    using response = digital_product_envelope;  ///< The response type.
};

/// Descriptor of `POST /digital_products`: links assets to a storefront product.
struct create_digital_product : endpoint_defaults
{
    static constexpr http_method method = http_method::post;  ///< The HTTP method.
    static constexpr std::string_view path = "/digital_products";  ///< The path template, after base_url.
    using body = new_digital_product;  ///< The JSON body type.
    static constexpr std::string_view body_root = "digital_product";  ///< The body is sent as {"<root>": body}.
    using response = digital_product_envelope;  ///< The response type.
};

/// Descriptor of `PATCH /digital_products/{id}`: changes a digital product.
struct update_digital_product : endpoint_defaults
{
    static constexpr http_method method = http_method::patch;  ///< The HTTP method.
    static constexpr std::string_view path = "/digital_products/{id}";  ///< The path template, after base_url.
    using body = digital_product_update;  ///< The JSON body type.
    static constexpr std::string_view body_root = "digital_product";  ///< The body is sent as {"<root>": body}.
    using response = digital_product_envelope;  ///< The response type.
};

/// Descriptor of `DELETE /digital_products/{id}`: removes a digital product.
/// A 404 answering a retry after an attempt that may have been processed
/// completes as success, said in diagnostics::client_message
/// (docs/ambiguous-writes.md).
struct delete_digital_product : endpoint_defaults
{
    static constexpr http_method method = http_method::delete_;  ///< The HTTP method.
    static constexpr std::string_view path = "/digital_products/{id}";  ///< The path template, after base_url.
    using response = void;  ///< No result: the operation completes with an error code only.
};

/// Descriptor of `POST /digital_products/{id}/notify_buyers`: emails every buyer of a digital product.
struct notify_buyers : endpoint_defaults
{
    static constexpr http_method method = http_method::post;  ///< The HTTP method.
    static constexpr std::string_view path = "/digital_products/{id}/notify_buyers";  ///< The path template, after base_url.
    using body = notify_buyers_request;  ///< The JSON body type.
    static constexpr bool body_optional = true;  ///< The body may be omitted.
    using response = notify_buyers_result;  ///< The response type.
};

// ---- orders ---------------------------------------------------------------------

/// Descriptor of `GET /orders`: one page of orders.
struct list_orders : endpoint_defaults
{
    static constexpr http_method method = http_method::get;  ///< The HTTP method.
    static constexpr std::string_view path = "/orders";  ///< The path template, after base_url.
    using query = order_query;  ///< The query-string type.
    using response = order_list;  ///< The response type.
    static constexpr int max_per_page = 250;  ///< The largest per_page the API accepts.
};

/// Descriptor of `GET /orders/{id}`: one order.
struct get_order : endpoint_defaults
{
    static constexpr http_method method = http_method::get;  ///< The HTTP method.
    static constexpr std::string_view path = "/orders/{id}";  ///< The path template, after base_url.
    using response = order_envelope;  ///< The response type.
};

/// Descriptor of `GET /orders/{id}/downloads`: an order's download links.
struct get_order_downloads : endpoint_defaults
{
    static constexpr http_method method = http_method::get;  ///< The HTTP method.
    static constexpr std::string_view path = "/orders/{id}/downloads";  ///< The path template, after base_url.
    using response = order_downloads;  ///< The response type.
};

/// Descriptor of `POST /orders/{id}/attach_assets`: adds assets to one order.
struct attach_assets : endpoint_defaults
{
    static constexpr http_method method = http_method::post;  ///< The HTTP method.
    static constexpr std::string_view path = "/orders/{id}/attach_assets";  ///< The path template, after base_url.
    using body = asset_ids_request;  ///< The JSON body type.
    using response = attach_assets_result;  ///< The response type.
    static constexpr bool idempotent = true;  ///< Retried like an idempotent request: the API ignores duplicates.
};

/// Descriptor of `DELETE /orders/{id}/detach_assets`: removes assets attached to one order.
struct detach_assets : endpoint_defaults
{
    static constexpr http_method method = http_method::delete_;  ///< The HTTP method.
    static constexpr std::string_view path = "/orders/{id}/detach_assets";  ///< The path template, after base_url.
    using body = asset_ids_request;  ///< The JSON body type.
    using response = detach_assets_result;  ///< The response type (not in the API spec: decoded tolerantly).
};

/// Descriptor of `POST /orders/{id}/notify`: (re-)sends an order's download email.
struct notify_order : endpoint_defaults
{
    static constexpr http_method method = http_method::post;  ///< The HTTP method.
    static constexpr std::string_view path = "/orders/{id}/notify";  ///< The path template, after base_url.
    using body = notify_request;  ///< The JSON body type.
    static constexpr bool body_optional = true;  ///< The body may be omitted.
    using response = notify_result;  ///< The response type.
};

}  // namespace endpoints

// ---- the request functions --------------------------------------------------------

/// Every endpoint of this header, listed once. The request functions
/// `async_<name>` (`async_list_assets`, `async_get_order`, ...) are generated
/// from it, and so are the explicit instantiations that separate compilation
/// compiles in src.hpp.
#define DIGITAL_DELIVERY_ENDPOINTS(X) \
    X(list_assets) \
    X(get_asset) \
    X(create_asset) \
    X(update_asset) \
    X(delete_asset) \
    X(replace_asset) \
    X(list_digital_products) \
    X(get_digital_product) \
    X(create_digital_product) \
    X(update_digital_product) \
    X(delete_digital_product) \
    X(notify_buyers) \
    X(list_orders) \
    X(get_order) \
    X(get_order_downloads) \
    X(attach_assets) \
    X(detach_assets) \
    X(notify_order)

// Each endpoint's name (observers, logs, metrics) is the one of this list.
#define DIGITAL_DELIVERY_DETAIL_REQUEST_FN(name) \
    template <> \
    inline constexpr std::string_view detail::listed_endpoint_name<endpoints::name> = #name; \
    inline constexpr request_fn<endpoints::name> async_##name{};
DIGITAL_DELIVERY_ENDPOINTS(DIGITAL_DELIVERY_DETAIL_REQUEST_FN)
#undef DIGITAL_DELIVERY_DETAIL_REQUEST_FN

/// \var digital_delivery::async_list_assets
/// Lists one page of assets (endpoints::list_assets): `async_list_assets(client,
/// [asset_query], [request_options], [diagnostics&], [token])`, completes with
/// an asset_list. Every page: `paginate(async_list_assets, client, ...)`.

/// \var digital_delivery::async_get_asset
/// Reads one asset (endpoints::get_asset): `async_get_asset(client, id, ...)`,
/// completes with the asset.

/// \var digital_delivery::async_create_asset
/// Creates an asset (endpoints::create_asset): `async_create_asset(client,
/// new_asset, ...)`, completes with an asset_with_upload (an internal asset's
/// upload handle; async_upload_asset creates and uploads in one call).

/// \var digital_delivery::async_update_asset
/// Changes an asset (endpoints::update_asset): `async_update_asset(client, id,
/// asset_update, ...)`, completes with the asset.

/// \var digital_delivery::async_delete_asset
/// Deletes an asset (endpoints::delete_asset): `async_delete_asset(client, id,
/// ...)`, completes with an error code only.

/// \var digital_delivery::async_replace_asset
/// Starts replacing an internal asset's file (endpoints::replace_asset):
/// `async_replace_asset(client, id, asset_replacement, ...)`, completes with an
/// asset_with_upload (async_replace_asset_body uploads too).

/// \var digital_delivery::async_list_digital_products
/// Lists one page of digital products (endpoints::list_digital_products):
/// `async_list_digital_products(client, [digital_product_query], ...)`,
/// completes with a digital_product_list.

/// \var digital_delivery::async_get_digital_product
/// Reads one digital product (endpoints::get_digital_product):
/// `async_get_digital_product(client, id, ...)`, completes with the
/// digital_product.

/// \var digital_delivery::async_create_digital_product
/// Creates a digital product (endpoints::create_digital_product):
/// `async_create_digital_product(client, new_digital_product, ...)`, completes
/// with the digital_product.

/// \var digital_delivery::async_update_digital_product
/// Changes a digital product (endpoints::update_digital_product):
/// `async_update_digital_product(client, id, digital_product_update, ...)`,
/// completes with the digital_product.

/// \var digital_delivery::async_delete_digital_product
/// Deletes a digital product (endpoints::delete_digital_product):
/// `async_delete_digital_product(client, id, ...)`, completes with an error
/// code only.

/// \var digital_delivery::async_notify_buyers
/// Emails every buyer of a digital product (endpoints::notify_buyers):
/// `async_notify_buyers(client, id, [notify_buyers_request], ...)`, completes
/// with a notify_buyers_result.

/// \var digital_delivery::async_list_orders
/// Lists one page of orders (endpoints::list_orders): `async_list_orders(client,
/// [order_query], ...)`, completes with an order_list.

/// \var digital_delivery::async_get_order
/// Reads one order (endpoints::get_order): `async_get_order(client, id, ...)`,
/// completes with the order.

/// \var digital_delivery::async_get_order_downloads
/// Reads an order's downloads (endpoints::get_order_downloads):
/// `async_get_order_downloads(client, id, ...)`, completes with the
/// order_downloads.

/// \var digital_delivery::async_attach_assets
/// Attaches assets to an order (endpoints::attach_assets):
/// `async_attach_assets(client, id, asset_ids_request, ...)`, completes with an
/// attach_assets_result.

/// \var digital_delivery::async_detach_assets
/// Detaches assets from an order (endpoints::detach_assets):
/// `async_detach_assets(client, id, asset_ids_request, ...)`, completes with a
/// detach_assets_result.

/// \var digital_delivery::async_notify_order
/// (Re-)sends an order's download email (endpoints::notify_order):
/// `async_notify_order(client, id, [notify_request], ...)`, completes with a
/// notify_result.

}  // namespace digital_delivery

#endif
