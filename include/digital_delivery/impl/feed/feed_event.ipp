//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_FEED_FEED_EVENT_IPP
#define DIGITAL_DELIVERY_IMPL_FEED_FEED_EVENT_IPP

#include <digital_delivery/feed_event.hpp>
#include <digital_delivery/impl/json/json_decode.hpp>
#include <digital_delivery/impl/json/json_mapping.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <array>
#include <system_error>

namespace digital_delivery {

namespace detail {
inline constexpr std::array<std::string_view, 8> feed_kind_names{
    "new_order",          "refunded",       "voided",           "download_count_increased",
    "download_limit_reached", "access_revoked", "downloads_expired", "watermark_ready",
};
}  // namespace detail

DIGITAL_DELIVERY_DECL std::string_view to_string(feed_event_kind k) noexcept
{
    const auto i = static_cast<std::size_t>(k);
    return i < detail::feed_kind_names.size() ? detail::feed_kind_names[i] : std::string_view("unknown");
}

DIGITAL_DELIVERY_DECL std::string to_json(const feed_event& e)
{
    namespace json = boost::json;
    json::object o;
    o["key"] = e.key;
    o["kind"] = json::string(to_string(e.kind));
    json::value ord;
    detail::encode_value(ord, e.order);
    o["order"] = std::move(ord);
    o["detected_at"] = json::string(format_timestamp(e.detected_at));
    o["detection_delay_ms"] = static_cast<std::int64_t>(e.detection_delay.count());
    o["attempt"] = e.attempt;
    o["replay"] = e.replay;
    if (e.kind == feed_event_kind::download_count_increased)
        o["previous_download_count"] = e.previous_download_count;
    if (e.kind == feed_event_kind::download_limit_reached)
        o["download_id"] = e.download_id;
    if (e.expires_at)
        o["expires_at"] = json::string(format_timestamp(*e.expires_at));
    return json::serialize(o);
}

DIGITAL_DELIVERY_DECL std::optional<feed_event> feed_event_from_json(std::string_view text)
{
    namespace json = boost::json;
    std::error_code ec;
    json::value v = json::parse(text, ec);
    if (ec || !v.is_object())
        return std::nullopt;
    const json::object& o = v.get_object();
    feed_event e;
    auto str = [&](std::string_view k) -> const json::string* {
        const json::value* p = o.if_contains(k);
        return p ? p->if_string() : nullptr;
    };
    auto int64 = [&](std::string_view k) -> std::optional<std::int64_t> {
        const json::value* p = o.if_contains(k);
        if (p && p->is_int64())
            return p->get_int64();
        if (p && p->is_uint64() && p->get_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
            return static_cast<std::int64_t>(p->get_uint64());
        return std::nullopt;
    };
    const json::string* key = str("key");
    const json::string* kind = str("kind");
    const json::value* ord = o.if_contains("order");
    if (!key || !kind || !ord || !ord->is_object())
        return std::nullopt;
    e.key = std::string(key->data(), key->size());
    bool known = false;
    for (std::size_t i = 0; i < detail::feed_kind_names.size(); ++i)
        if (detail::feed_kind_names[i] == std::string_view(kind->data(), kind->size()))
        {
            e.kind = static_cast<feed_event_kind>(i);
            known = true;
        }
    if (!known)
        return std::nullopt;
    if (detail::decode_json_into(json::serialize(*ord), e.order, nullptr))
        return std::nullopt;
    if (const json::string* d = str("detected_at"))
        if (auto t = parse_timestamp(std::string_view(d->data(), d->size())))
            e.detected_at = *t;
    if (auto d = int64("detection_delay_ms"))
        e.detection_delay = std::chrono::milliseconds(*d);
    if (auto a = int64("attempt"); a && *a >= 1 && *a <= 1000000)
        e.attempt = static_cast<int>(*a);
    if (const json::value* r = o.if_contains("replay"); r && r->is_bool())
        e.replay = r->get_bool();
    if (auto p = int64("previous_download_count"))
        e.previous_download_count = *p;
    if (const json::string* d = str("download_id"))
        e.download_id = std::string(d->data(), d->size());
    if (const json::string* d = str("expires_at"))
        e.expires_at = parse_timestamp(std::string_view(d->data(), d->size()));
    return e;
}

}  // namespace digital_delivery

#endif
