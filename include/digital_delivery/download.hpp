//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
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

/// Where a download entry's watermarked copy is.
enum class watermark_status
{
    not_applicable,  ///< No watermark for this file: download_url is the file itself.
    processing,  ///< download_url is null; poll again.
    ready,       ///< download_url is the watermarked copy (null if it could not be signed: poll again).
    unknown,     ///< A status this version does not know (see open_enum::str()).
};
BOOST_DESCRIBE_ENUM(watermark_status, not_applicable, processing, ready)

/// One file or licence key of an order. Decoded tolerantly (see asset.hpp).
/// `downloadable` is true only when the entry is not expired, not over its
/// limit, not revoked and released.
struct download_entry
{
    std::string id{};            ///< UUID. Required.
    std::string product_name{};  ///< The product the file belongs to.
    std::string file_name{};     ///< "Licence Key" for licence keys.
    std::string file_type{};     ///< MIME type; "licence/key" for licence keys.
    std::int64_t file_size_bytes{};  ///< 0 for external links and licence keys.
    std::optional<std::string> download_url{};  ///< Null when not downloadable or while processing.
    bool is_watermarked{};  ///< The file is personalised with the buyer's details.
    open_enum<digital_delivery::watermark_status> watermark_status{};  ///< Where the watermarked copy is.
    std::int64_t download_count{};  ///< Downloads of this file for this order.
    std::optional<std::int64_t> download_limit{};  ///< Empty: unlimited.
    bool download_limit_reached{};  ///< download_count reached download_limit.
    std::optional<timestamp> expires_at{};  ///< Empty: no expiry.
    bool download_expired{};  ///< Now is past expires_at.
    bool access_revoked{};  ///< Access was revoked (e.g. after a refund).
    bool is_preorder{};  ///< The file belongs to a preorder product.
    std::optional<timestamp> preorder_available_at{};  ///< Release date; empty for non-preorder items.
    bool preorder_released{};  ///< Released, or not a preorder.
    bool is_licence_key{};  ///< The entry is a licence key, not a file.
    std::optional<std::string> licence_key{};  ///< The key, once one is assigned.
    bool downloadable{};  ///< The master flag.

    /// True while the client should poll again before using download_url:
    /// `processing`, or `ready` and downloadable without a URL (see the
    /// spec's watermark states).
    /// \return Whether to poll again.
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

/// GET /orders/{id}/downloads: an order's files and licence keys.
struct order_downloads
{
    std::string order_id{};                   ///< The order's UUID. Required.
    std::string order_name{};                 ///< The order's name, e.g. "#1001".
    std::vector<download_entry> downloads{};  ///< One entry per file or key. Required.
};
BOOST_DESCRIBE_STRUCT(order_downloads, (), (order_id, order_name, downloads))

}  // namespace digital_delivery

#endif
