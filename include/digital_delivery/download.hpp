//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
//
#ifndef DIGITAL_DELIVERY_DOWNLOAD_HPP
#define DIGITAL_DELIVERY_DOWNLOAD_HPP

/// \file
/// The download state of an order (GET /orders/{id}/downloads).

#include <digital_delivery/open_enum.hpp>
#include <digital_delivery/timestamp.hpp>

#include <boost/describe/class.hpp>
#include <boost/describe/enum.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace digital_delivery {

enum class watermark_status
{
    not_applicable,
    processing,  ///< download_url is null; poll again.
    ready,       ///< download_url is the watermarked copy (null if it could not be signed: poll again).
    unknown,
};
BOOST_DESCRIBE_ENUM(watermark_status, not_applicable, processing, ready)

/// One file or licence key of an order.
struct download_entry
{
    std::string id{};
    std::string product_name{};
    std::string file_name{};     ///< "Licence Key" for licence keys.
    std::string file_type{};     ///< MIME type; "licence/key" for licence keys.
    std::int64_t file_size_bytes{};
    std::optional<std::string> download_url{};  ///< Null when not downloadable or while processing.
    bool is_watermarked{};
    open_enum<digital_delivery::watermark_status> watermark_status{};
    std::int64_t download_count{};
    std::optional<std::int64_t> download_limit{};  ///< Empty: unlimited.
    bool download_limit_reached{};
    std::optional<timestamp> expires_at{};
    bool download_expired{};
    bool access_revoked{};
    bool is_preorder{};
    std::optional<timestamp> preorder_available_at{};
    bool preorder_released{};
    bool is_licence_key{};
    std::optional<std::string> licence_key{};
    bool downloadable{};  ///< The master flag.

    /// True while the client should poll again before using download_url:
    /// `processing`, or `ready` without a URL (see the spec's watermark states).
    bool awaiting_watermark() const noexcept
    {
        return watermark_status == digital_delivery::watermark_status::processing ||
               (watermark_status == digital_delivery::watermark_status::ready && downloadable && !download_url);
    }
};
BOOST_DESCRIBE_STRUCT(
    download_entry,
    (),
    (id, product_name, file_name, file_type, file_size_bytes, download_url, is_watermarked, watermark_status, download_count, download_limit, download_limit_reached, expires_at, download_expired, access_revoked, is_preorder, preorder_available_at, preorder_released, is_licence_key, licence_key, downloadable)
)

/// GET /orders/{id}/downloads
struct order_downloads
{
    std::string order_id{};
    std::string order_name{};
    std::vector<download_entry> downloads{};
};
BOOST_DESCRIBE_STRUCT(order_downloads, (), (order_id, order_name, downloads))

}  // namespace digital_delivery

#endif
