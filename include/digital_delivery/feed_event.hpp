//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_FEED_EVENT_HPP
#define DIGITAL_DELIVERY_FEED_EVENT_HPP

/// \file
/// What an order feed (order_feed.hpp) delivers, and the options of a feed.

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/order.hpp>
#include <digital_delivery/timestamp.hpp>

#include <boost/describe/enum.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace digital_delivery {

/// The kinds of event an order feed delivers.
enum class feed_event_kind
{
    new_order,                ///< An order the feed had not delivered (group orders).
    refunded,                 ///< The list shows financial_status refunded (group changes).
    voided,                   ///< The list shows financial_status voided (group changes).
    download_count_increased, ///< The list shows a higher download_count (group changes).
    download_limit_reached,   ///< A download entry reached its limit (group downloads; one read).
    access_revoked,           ///< The order's download access was revoked (group downloads; one read).
    downloads_expired,        ///< The earliest expires_at read for the order has passed (group downloads; no request).
    watermark_ready,          ///< No download entry of a followed order awaits its watermark (order_feed::follow).
};
BOOST_DESCRIBE_ENUM(feed_event_kind, new_order, refunded, voided, download_count_increased, download_limit_reached,
                    access_revoked, downloads_expired, watermark_ready)

/// The groups of events a feed delivers (order_feed_options::events), combined with |.
enum class feed_events : unsigned
{
    orders = 1,     ///< new_order.
    changes = 2,    ///< refunded, voided, download_count_increased.
    downloads = 4,  ///< download_limit_reached, access_revoked, downloads_expired (reads GET /orders/{id}/downloads).
    all = 7,        ///< Everything.
};

/// \param a A group of events.
/// \param b Another group.
/// \return The union of two groups.
constexpr feed_events operator|(feed_events a, feed_events b) noexcept
{
    return static_cast<feed_events>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}

/// \param set The groups chosen.
/// \param g The group asked about.
/// \return True when `set` contains `g`.
constexpr bool has(feed_events set, feed_events g) noexcept
{
    return (static_cast<unsigned>(set) & static_cast<unsigned>(g)) != 0;
}

/// One event of an order feed.
struct feed_event
{
    /// Unique per event of a feed, stable across restarts: `new_order:<order id>`,
    /// `refunded:<id>`, `voided:<id>`, `download_count:<id>:<count>`,
    /// `download_limit_reached:<id>:<entry id>`, `access_revoked:<id>`,
    /// `downloads_expired:<id>`, `watermark_ready:<id>`. A consumer that makes its side effect
    /// idempotent on this key turns at-least-once into exactly-once.
    std::string key{};
    feed_event_kind kind{};                    ///< What happened.
    digital_delivery::order order{};           ///< The order's list entry when the feed saw it (watermark_ready: its id and name only).
    std::int64_t previous_download_count = 0;  ///< download_count_increased: the count acknowledged before.
    std::string download_id{};                 ///< download_limit_reached: the download entry.
    std::optional<timestamp> expires_at{};     ///< downloads_expired: the expiry that passed.
    timestamp detected_at{};                   ///< When the feed saw it (wall clock).
    /// How late the feed saw it: for new_order, detected_at − created_at; for a
    /// change, detected_at − the last time the feed saw the order without it
    /// (an upper bound; zero when not known, e.g. after a restart).
    std::chrono::milliseconds detection_delay{0};
    int attempt = 1;      ///< 1 for the first delivery; more after order_feed::async_fail or a replay.
    bool replay = false;  ///< Delivered again from the dead letters (order_feed::async_replay).
};

/// The options of an order feed.
struct order_feed_options
{
    /// What to deliver.
    feed_events events = feed_events::orders | feed_events::changes;
    /// Orders created before this are not delivered (`ddctl orders watch --since`).
    /// Counted from its whole UTC second: see "The start point" in docs/order-feed.md.
    /// Empty: the feed's first start. Read only on a first run (an empty checkpoint).
    std::optional<timestamp> since{};
    /// The shortest delay between two new-order polls (after activity).
    std::chrono::milliseconds min_interval{std::chrono::seconds(10)};
    /// The longest delay between two new-order polls (while nothing happens;
    /// each idle poll doubles the delay up to this).
    std::chrono::milliseconds max_interval{std::chrono::seconds(60)};
    /// How far back the look-back scan reads (orders created within it are
    /// compared with what was delivered: refunds, downloads, late orders).
    std::chrono::milliseconds lookback_window{std::chrono::hours(72)};
    /// The delay between two look-back scans.
    std::chrono::milliseconds lookback_interval{std::chrono::minutes(10)};
    /// Delivery attempts of an event before it is dead-lettered (at least 1).
    int max_attempts = 5;
    /// The delay before the second attempt; doubles per attempt.
    std::chrono::milliseconds retry_initial{std::chrono::seconds(1)};
    /// The longest delay between attempts.
    std::chrono::milliseconds retry_max{std::chrono::seconds(60)};
};

/// What a feed has spent and found (order_feed::stats()).
struct feed_stats
{
    std::uint64_t points = 0;           ///< Rate-limit points of the feed's requests (GETs: 1 each).
    std::uint64_t poll_pages = 0;       ///< GET /orders pages of the new-order polls.
    std::uint64_t polls = 0;            ///< New-order polls.
    std::uint64_t lookback_pages = 0;   ///< GET /orders pages of the look-back scans.
    std::uint64_t lookbacks = 0;        ///< Look-back scans.
    std::uint64_t downloads_reads = 0;  ///< GET /orders/{id}/downloads reads.
    std::uint64_t delivered = 0;        ///< Events handed out (attempts included).
    std::uint64_t acknowledged = 0;     ///< Events acknowledged.
    std::uint64_t dead_lettered = 0;    ///< Events dead-lettered.
};

/// \return The event as one line of JSON (no newline): `key`, `kind`,
/// `order` (the Order shape of the API), `detected_at`, `detection_delay_ms`,
/// `attempt`, `replay`, and per kind `previous_download_count`, `download_id`,
/// `expires_at`.
/// \param e The event.
DIGITAL_DELIVERY_DECL std::string to_json(const feed_event& e);

/// Reads an event written by to_json (e.g. a dead letter's event_json).
/// \param text The JSON.
/// \return The event, or empty when `text` is not one.
DIGITAL_DELIVERY_DECL std::optional<feed_event> feed_event_from_json(std::string_view text);

/// \param k The kind.
/// \return The kind's name ("new_order", ...).
DIGITAL_DELIVERY_DECL std::string_view to_string(feed_event_kind k) noexcept;

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/feed/feed_event.ipp>
#endif

#endif
