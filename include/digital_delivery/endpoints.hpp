//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
//
#ifndef DIGITAL_DELIVERY_ENDPOINTS_HPP
#define DIGITAL_DELIVERY_ENDPOINTS_HPP

/// \file
/// The 18 endpoints of the API as compile-time descriptors, and the request
/// function generated from each:
///
/// \code
/// namespace dd = digital_delivery;
/// dd::order o = co_await dd::get_order(client, order_id);
/// dd::order_list page = co_await dd::list_orders(client, {.status = dd::financial_status::paid, .per_page = 250});
/// auto [ec, created] = co_await dd::create_asset(client, {.type = dd::asset_type::licence, .name = "Key"},
///                                                asio::as_tuple(asio::deferred));
/// \endcode
///
/// Adding an endpoint = a descriptor here plus its models; nothing else.

#include <digital_delivery/asset.hpp>
#include <digital_delivery/detail/endpoint_call.hpp>
#include <digital_delivery/digital_product.hpp>
#include <digital_delivery/download.hpp>
#include <digital_delivery/http_message.hpp>
#include <digital_delivery/order.hpp>

#include <string_view>

namespace digital_delivery {
namespace endpoints {

// ---- assets -------------------------------------------------------------------

struct list_assets : endpoint_defaults
{
    static constexpr http_method method = http_method::get;
    static constexpr std::string_view path = "/assets";
    using query = asset_query;
    using response = asset_list;
    static constexpr int max_per_page = 250;
    static constexpr int cost = 1;
    static constexpr bool idempotent = true;
};

struct get_asset : endpoint_defaults
{
    static constexpr http_method method = http_method::get;
    static constexpr std::string_view path = "/assets/{id}";
    using response = asset_envelope;
    static constexpr auto result = &asset_envelope::asset;
    static constexpr int cost = 1;
    static constexpr bool idempotent = true;
};

struct create_asset : endpoint_defaults
{
    static constexpr http_method method = http_method::post;
    static constexpr std::string_view path = "/assets";
    using body = new_asset;
    static constexpr std::string_view body_root = "asset";
    using response = asset_with_upload;
    static constexpr bool beta = false;  // internal assets and direct upload are Beta features of it
    static constexpr int cost = 2;
    static constexpr bool idempotent = false;
};

struct update_asset : endpoint_defaults
{
    static constexpr http_method method = http_method::patch;
    static constexpr std::string_view path = "/assets/{id}";
    using body = asset_update;
    static constexpr std::string_view body_root = "asset";
    using response = asset_envelope;
    static constexpr auto result = &asset_envelope::asset;
    static constexpr int cost = 2;
    static constexpr bool idempotent = true;  // same body, same result
};

struct delete_asset : endpoint_defaults
{
    static constexpr http_method method = http_method::delete_;
    static constexpr std::string_view path = "/assets/{id}";
    using response = void;
    static constexpr int cost = 2;
    static constexpr bool idempotent = true;
};

struct replace_asset : endpoint_defaults
{
    static constexpr http_method method = http_method::post;
    static constexpr std::string_view path = "/assets/{id}/replace";
    using body = asset_replacement;
    static constexpr std::string_view body_root = "asset";
    using response = asset_with_upload;
    static constexpr bool beta = true;
    static constexpr int cost = 2;
    static constexpr bool idempotent = false;
};

// ---- digital products ---------------------------------------------------------

struct list_digital_products : endpoint_defaults
{
    static constexpr http_method method = http_method::get;
    static constexpr std::string_view path = "/digital_products";
    using query = digital_product_query;
    using response = digital_product_list;
    static constexpr int max_per_page = 100;
    static constexpr int cost = 1;
    static constexpr bool idempotent = true;
};

struct get_digital_product : endpoint_defaults
{
    static constexpr http_method method = http_method::get;
    static constexpr std::string_view path = "/digital_products/{id}";
    using response = digital_product_envelope;
    static constexpr auto result = &digital_product_envelope::digital_product;
    static constexpr int cost = 1;
    static constexpr bool idempotent = true;
};

struct create_digital_product : endpoint_defaults
{
    static constexpr http_method method = http_method::post;
    static constexpr std::string_view path = "/digital_products";
    using body = new_digital_product;
    static constexpr std::string_view body_root = "digital_product";
    using response = digital_product_envelope;
    static constexpr auto result = &digital_product_envelope::digital_product;
    static constexpr int cost = 2;
    static constexpr bool idempotent = false;
};

struct update_digital_product : endpoint_defaults
{
    static constexpr http_method method = http_method::patch;
    static constexpr std::string_view path = "/digital_products/{id}";
    using body = digital_product_update;
    static constexpr std::string_view body_root = "digital_product";
    using response = digital_product_envelope;
    static constexpr auto result = &digital_product_envelope::digital_product;
    static constexpr int cost = 2;
    static constexpr bool idempotent = true;
};

struct delete_digital_product : endpoint_defaults
{
    static constexpr http_method method = http_method::delete_;
    static constexpr std::string_view path = "/digital_products/{id}";
    using response = void;
    static constexpr int cost = 2;
    static constexpr bool idempotent = true;
};

struct notify_buyers : endpoint_defaults
{
    static constexpr http_method method = http_method::post;
    static constexpr std::string_view path = "/digital_products/{id}/notify_buyers";
    using body = notify_buyers_request;
    static constexpr bool body_optional = true;
    using response = notify_buyers_result;
    static constexpr int cost = 2;
    static constexpr bool idempotent = false;  // sends emails
};

// ---- orders ---------------------------------------------------------------------

struct list_orders : endpoint_defaults
{
    static constexpr http_method method = http_method::get;
    static constexpr std::string_view path = "/orders";
    using query = order_query;
    using response = order_list;
    static constexpr int max_per_page = 250;
    static constexpr int cost = 1;
    static constexpr bool idempotent = true;
};

struct get_order : endpoint_defaults
{
    static constexpr http_method method = http_method::get;
    static constexpr std::string_view path = "/orders/{id}";
    using response = order_envelope;
    static constexpr auto result = &order_envelope::order;
    static constexpr int cost = 1;
    static constexpr bool idempotent = true;
};

struct get_order_downloads : endpoint_defaults
{
    static constexpr http_method method = http_method::get;
    static constexpr std::string_view path = "/orders/{id}/downloads";
    using response = order_downloads;
    static constexpr int cost = 1;
    static constexpr bool idempotent = true;  // (it may start watermark generation; repeating is harmless)
};

struct attach_assets : endpoint_defaults
{
    static constexpr http_method method = http_method::post;
    static constexpr std::string_view path = "/orders/{id}/attach_assets";
    using body = asset_ids_request;
    using response = attach_assets_result;
    static constexpr bool beta = true;
    static constexpr int cost = 2;
    static constexpr bool idempotent = true;  // duplicates are ignored by the API
};

struct detach_assets : endpoint_defaults
{
    static constexpr http_method method = http_method::delete_;
    static constexpr std::string_view path = "/orders/{id}/detach_assets";
    using body = asset_ids_request;
    using response = detach_assets_result;  // not documented: decoded tolerantly
    static constexpr bool beta = true;
    static constexpr int cost = 2;
    static constexpr bool idempotent = true;
};

struct notify_order : endpoint_defaults
{
    static constexpr http_method method = http_method::post;
    static constexpr std::string_view path = "/orders/{id}/notify";
    using body = notify_request;
    static constexpr bool body_optional = true;
    using response = notify_result;
    static constexpr bool beta = true;
    static constexpr int cost = 2;
    static constexpr bool idempotent = false;  // sends an email
};

}  // namespace endpoints

// ---- the request functions --------------------------------------------------------

inline constexpr request_fn<endpoints::list_assets> list_assets{};
inline constexpr request_fn<endpoints::get_asset> get_asset{};
inline constexpr request_fn<endpoints::create_asset> create_asset{};
inline constexpr request_fn<endpoints::update_asset> update_asset{};
inline constexpr request_fn<endpoints::delete_asset> delete_asset{};
inline constexpr request_fn<endpoints::replace_asset> replace_asset{};

inline constexpr request_fn<endpoints::list_digital_products> list_digital_products{};
inline constexpr request_fn<endpoints::get_digital_product> get_digital_product{};
inline constexpr request_fn<endpoints::create_digital_product> create_digital_product{};
inline constexpr request_fn<endpoints::update_digital_product> update_digital_product{};
inline constexpr request_fn<endpoints::delete_digital_product> delete_digital_product{};
inline constexpr request_fn<endpoints::notify_buyers> notify_buyers{};

inline constexpr request_fn<endpoints::list_orders> list_orders{};
inline constexpr request_fn<endpoints::get_order> get_order{};
inline constexpr request_fn<endpoints::get_order_downloads> get_order_downloads{};
inline constexpr request_fn<endpoints::attach_assets> attach_assets{};
inline constexpr request_fn<endpoints::detach_assets> detach_assets{};
inline constexpr request_fn<endpoints::notify_order> notify_order{};

}  // namespace digital_delivery

#endif
