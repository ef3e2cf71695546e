//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
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
namespace endpoints {

// ---- assets -------------------------------------------------------------------

struct list_assets : endpoint_defaults
{
    static constexpr http_method method = http_method::get;
    static constexpr std::string_view path = "/assets";
    using query = asset_query;
    using response = asset_list;
    static constexpr int max_per_page = 250;
};

struct get_asset : endpoint_defaults
{
    static constexpr http_method method = http_method::get;
    static constexpr std::string_view path = "/assets/{id}";
    using response = asset_envelope;
};

struct create_asset : endpoint_defaults
{
    static constexpr http_method method = http_method::post;
    static constexpr std::string_view path = "/assets";
    using body = new_asset;
    static constexpr std::string_view body_root = "asset";
    using response = asset_with_upload;
};

struct update_asset : endpoint_defaults
{
    static constexpr http_method method = http_method::patch;
    static constexpr std::string_view path = "/assets/{id}";
    using body = asset_update;
    static constexpr std::string_view body_root = "asset";
    using response = asset_envelope;
};

struct delete_asset : endpoint_defaults
{
    static constexpr http_method method = http_method::delete_;
    static constexpr std::string_view path = "/assets/{id}";
    using response = void;
};

struct replace_asset : endpoint_defaults
{
    static constexpr http_method method = http_method::post;
    static constexpr std::string_view path = "/assets/{id}/replace";
    using body = asset_replacement;
    static constexpr std::string_view body_root = "asset";
    using response = asset_with_upload;
    /// Only internal assets are replaced: the answer carries the upload handle.
    static constexpr auto check_result = &detail::require_upload_handle;
};

// ---- digital products ---------------------------------------------------------

struct list_digital_products : endpoint_defaults
{
    static constexpr http_method method = http_method::get;
    static constexpr std::string_view path = "/digital_products";
    using query = digital_product_query;
    using response = digital_product_list;
    static constexpr int max_per_page = 100;
};

struct get_digital_product : endpoint_defaults
{
    static constexpr http_method method = http_method::get;
    static constexpr std::string_view path = "/digital_products/{id}";
    using response = digital_product_envelope;
};

struct create_digital_product : endpoint_defaults
{
    static constexpr http_method method = http_method::post;
    static constexpr std::string_view path = "/digital_products";
    using body = new_digital_product;
    static constexpr std::string_view body_root = "digital_product";
    using response = digital_product_envelope;
};

struct update_digital_product : endpoint_defaults
{
    static constexpr http_method method = http_method::patch;
    static constexpr std::string_view path = "/digital_products/{id}";
    using body = digital_product_update;
    static constexpr std::string_view body_root = "digital_product";
    using response = digital_product_envelope;
};

struct delete_digital_product : endpoint_defaults
{
    static constexpr http_method method = http_method::delete_;
    static constexpr std::string_view path = "/digital_products/{id}";
    using response = void;
};

struct notify_buyers : endpoint_defaults
{
    static constexpr http_method method = http_method::post;
    static constexpr std::string_view path = "/digital_products/{id}/notify_buyers";
    using body = notify_buyers_request;
    static constexpr bool body_optional = true;
    using response = notify_buyers_result;
};

// ---- orders ---------------------------------------------------------------------

struct list_orders : endpoint_defaults
{
    static constexpr http_method method = http_method::get;
    static constexpr std::string_view path = "/orders";
    using query = order_query;
    using response = order_list;
    static constexpr int max_per_page = 250;
};

struct get_order : endpoint_defaults
{
    static constexpr http_method method = http_method::get;
    static constexpr std::string_view path = "/orders/{id}";
    using response = order_envelope;
};

struct get_order_downloads : endpoint_defaults
{
    static constexpr http_method method = http_method::get;
    static constexpr std::string_view path = "/orders/{id}/downloads";
    using response = order_downloads;
};

struct attach_assets : endpoint_defaults
{
    static constexpr http_method method = http_method::post;
    static constexpr std::string_view path = "/orders/{id}/attach_assets";
    using body = asset_ids_request;
    using response = attach_assets_result;
    static constexpr bool idempotent = true;  // duplicates are ignored by the API
};

struct detach_assets : endpoint_defaults
{
    static constexpr http_method method = http_method::delete_;
    static constexpr std::string_view path = "/orders/{id}/detach_assets";
    using body = asset_ids_request;
    using response = detach_assets_result;  // not documented: decoded tolerantly
};

struct notify_order : endpoint_defaults
{
    static constexpr http_method method = http_method::post;
    static constexpr std::string_view path = "/orders/{id}/notify";
    using body = notify_request;
    static constexpr bool body_optional = true;
    using response = notify_result;
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

}  // namespace digital_delivery

#endif
