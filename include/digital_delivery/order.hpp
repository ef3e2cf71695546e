//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_ORDER_HPP
#define DIGITAL_DELIVERY_ORDER_HPP

/// \file
/// Orders (read from the storefront), their filters, and the bodies of the
/// order actions (attach, detach, notify).

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/id_list.hpp>
#include <digital_delivery/asset.hpp>
#include <digital_delivery/open_enum.hpp>
#include <digital_delivery/pagination.hpp>
#include <digital_delivery/string_ref.hpp>
#include <digital_delivery/timestamp.hpp>

#include <boost/describe/class.hpp>
#include <boost/describe/enum.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace digital_delivery {

/// An order's financial status (the storefront's payment state).
enum class financial_status
{
    paid,                ///< "paid".
    pending,             ///< "pending".
    partially_paid,      ///< "partially_paid".
    partially_refunded,  ///< "partially_refunded".
    refunded,            ///< "refunded".
    voided,              ///< "voided".
    authorized,          ///< "authorized".
    unknown,             ///< A status this version does not know (see open_enum::str()).
};
BOOST_DESCRIBE_ENUM(financial_status, paid, pending, partially_paid, partially_refunded, refunded, voided, authorized)

/// Sort orders of GET /orders.
enum class order_sort
{
    created_at_desc,  ///< The server's default.
    created_at_asc,   ///< Oldest first.
    name_asc,         ///< By name, ascending.
    name_desc,        ///< By name, descending.
    unknown,          ///< Not a sort order: open_enum's placeholder, never sent.
};
BOOST_DESCRIBE_ENUM(order_sort, created_at_desc, created_at_asc, name_asc, name_desc)

/// An order of the storefront, as the orders endpoints return it. Decoded
/// tolerantly (see asset.hpp).
struct order
{
    std::string id{};     ///< UUID. Required.
    std::string name{};   ///< e.g. "#1001".
    std::string email{};  ///< Customer email.
    std::optional<std::string> phone{};  ///< Customer phone.
    std::optional<open_enum<digital_delivery::financial_status>> financial_status{};  ///< Payment state.
    std::optional<std::string> fulfillment_status{};  ///< "fulfilled", "partial", ... (the full list is not documented).
    std::optional<std::string> total_price{};         ///< Decimal amount as text, e.g. "19.99".
    std::optional<std::string> currency{};            ///< ISO 4217.
    timestamp created_at{};         ///< When the order was created in the storefront.
    std::int64_t download_count{};  ///< Across all files of the order.
};
BOOST_DESCRIBE_STRUCT(
    order,
    (),
    (id, name, email, phone, financial_status, fulfillment_status, total_price, currency, created_at, download_count)
)

/// GET /orders query. Unset fields are not sent.
struct order_query
{
    std::optional<string_ref> q{};      ///< Partial match on order name/number or email.
    std::optional<string_ref> email{};  ///< Partial match on email.
    std::optional<financial_status> status{};        ///< Only orders of this financial status.
    std::optional<std::int64_t> store_product_id{};  ///< Only orders that bought this storefront product.
    std::optional<string_ref> digital_product_id{};  ///< Only orders linked to this digital product.
    std::optional<date> created_at_min{};  ///< Created on or after (YYYY-MM-DD).
    std::optional<date> created_at_max{};  ///< Created on or before.
    std::optional<std::int32_t> page{};      ///< >= 1.
    std::optional<std::int32_t> per_page{};  ///< 1 .. 250.
    std::optional<order_sort> sort{};        ///< Server default: created_at_desc.
};
BOOST_DESCRIBE_STRUCT(
    order_query,
    (),
    (q, email, status, store_product_id, digital_product_id, created_at_min, created_at_max, page, per_page, sort)
)

/// POST /orders/{id}/attach_assets (Beta) and DELETE /orders/{id}/detach_assets (Beta) body.
struct asset_ids_request
{
    id_list asset_ids{};  ///< Non-empty.
};
BOOST_DESCRIBE_STRUCT(asset_ids_request, (), (asset_ids))

/// POST /orders/{id}/notify (Beta) body (optional).
struct notify_request
{
    std::optional<string_ref> email{};  ///< Overrides the recipient.
};
BOOST_DESCRIBE_STRUCT(notify_request, (), (email))

// ---- response envelopes ---------------------------------------------------

/// GET /orders: one page of orders.
struct order_list
{
    std::vector<order> orders{};                ///< The page's orders. Required.
    digital_delivery::pagination pagination{};  ///< Where this page is. Required.
};
BOOST_DESCRIBE_STRUCT(order_list, (), (orders, pagination))

/// `{"order": ...}`
struct order_envelope
{
    digital_delivery::order order{};  ///< The order. Required.
};
BOOST_DESCRIBE_STRUCT(order_envelope, (), (order))

/// POST /orders/{id}/attach_assets: the order and every asset attached to it.
struct attach_assets_result
{
    digital_delivery::order order{};                ///< The order. Required.
    std::vector<attached_asset> attached_assets{};  ///< Includes assets attached earlier. Required.
};
BOOST_DESCRIBE_STRUCT(attach_assets_result, (), (order, attached_assets))

/// DELETE /orders/{id}/detach_assets. The API does not document this
/// response; we expect the attach shape (the remaining attachments) and
/// decode it tolerantly: every field is optional and an empty body is fine.
struct detach_assets_result
{
    std::optional<digital_delivery::order> order{};                ///< The order, when the response has it.
    std::optional<std::vector<attached_asset>> attached_assets{};  ///< The attachments left, when the response has them.
};
BOOST_DESCRIBE_STRUCT(detach_assets_result, (), (order, attached_assets))

/// POST /orders/{id}/notify
struct notify_result
{
    digital_delivery::order order{};  ///< The order. Required.
    bool notified{};  ///< True when the email was queued.
    timestamp notified_at{};          ///< When the notification was queued.
};
BOOST_DESCRIBE_STRUCT(notify_result, (), (order, notified, notified_at))


// ---- validation: input the API forbids, refused before anything is sent --------
// (found by the request functions through ADL; the reason goes to diagnostics)

/// Checks an attach/detach body before it is sent: at least one id, none blank.
/// \param v The body.
/// \param why Set to the reason on failure.
/// \return Empty, or api_errc::asset_ids_invalid (no id, the code the API
/// would answer), client_errc::invalid_argument (a blank id).
DIGITAL_DELIVERY_DECL error_code validate(const asset_ids_request& v, std::string& why);
/// Checks a POST /orders/{id}/notify body before it is sent: an email, when
/// set, is not blank.
/// \param v The body.
/// \param why Set to the reason on failure.
/// \return Empty, or client_errc::invalid_argument.
DIGITAL_DELIVERY_DECL error_code validate(const notify_request& v, std::string& why);

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/model/order.ipp>
#endif

#endif
