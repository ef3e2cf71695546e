//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_FEED_SQLITE_FEED_CHECKPOINT_IPP
#define DIGITAL_DELIVERY_IMPL_FEED_SQLITE_FEED_CHECKPOINT_IPP

#include <digital_delivery/sqlite_feed_checkpoint.hpp>

#include <array>
#include <chrono>
#include <string_view>

namespace digital_delivery {
namespace detail {

inline constexpr std::array<std::string_view, 3> feed_migrations{
    "CREATE TABLE dd_feed(consumer TEXT PRIMARY KEY NOT NULL, horizon INTEGER NOT NULL, watermark INTEGER NOT NULL, "
    "last_lookback INTEGER)",
    "CREATE TABLE dd_feed_order(consumer TEXT NOT NULL, id TEXT NOT NULL, created_at INTEGER NOT NULL, "
    "financial_status TEXT NOT NULL, download_count INTEGER NOT NULL, expires_at INTEGER, "
    "expired_reported INTEGER NOT NULL, revoked_reported INTEGER NOT NULL, limit_reached TEXT NOT NULL, "
    "PRIMARY KEY(consumer, id)) WITHOUT ROWID",
    "CREATE TABLE dd_feed_dead(consumer TEXT NOT NULL, key TEXT NOT NULL, event_json TEXT NOT NULL, "
    "error TEXT NOT NULL, attempts INTEGER NOT NULL, at INTEGER NOT NULL, PRIMARY KEY(consumer, key)) WITHOUT ROWID",
};

inline std::int64_t feed_us(timestamp t) noexcept { return t.time_since_epoch().count(); }
inline timestamp feed_ts(std::int64_t us) noexcept { return timestamp(std::chrono::microseconds(us)); }

inline std::string feed_join(const std::vector<std::string>& v)
{
    std::string s;
    for (const auto& x : v)
    {
        if (!s.empty())
            s += '\n';
        s += x;
    }
    return s;
}

inline std::vector<std::string> feed_split(const std::string& s)
{
    std::vector<std::string> r;
    std::size_t b = 0;
    while (b < s.size())
    {
        std::size_t e = s.find('\n', b);
        if (e == std::string::npos)
            e = s.size();
        if (e > b)
            r.push_back(s.substr(b, e - b));
        b = e + 1;
    }
    return r;
}

}  // namespace detail

DIGITAL_DELIVERY_DECL sqlite_feed_checkpoint::sqlite_feed_checkpoint(std::string path, std::string consumer,
                                                                     const sqlite_state_options& o)
    : db_(std::move(path), o), consumer_(std::move(consumer))
{
    db_.migrate("order_feed", detail::feed_migrations);
}

DIGITAL_DELIVERY_DECL error_code sqlite_feed_checkpoint::load(feed_state& out)
{
    try
    {
        feed_state s;
        auto m = db_.prepare("SELECT horizon, watermark, last_lookback FROM dd_feed WHERE consumer = ?");
        m.bind(1, consumer_);
        if (m.step())
        {
            s.initialised = true;
            s.horizon = detail::feed_ts(m.column_int64(0));
            s.watermark = detail::feed_ts(m.column_int64(1));
            if (!m.is_null(2))
                s.last_lookback = detail::feed_ts(m.column_int64(2));
        }
        auto o = db_.prepare(
            "SELECT id, created_at, financial_status, download_count, expires_at, expired_reported, revoked_reported, "
            "limit_reached FROM dd_feed_order WHERE consumer = ?");
        o.bind(1, consumer_);
        while (o.step())
        {
            feed_order_state k;
            k.id = o.column_text(0);
            k.created_at = detail::feed_ts(o.column_int64(1));
            k.financial_status = o.column_text(2);
            k.download_count = o.column_int64(3);
            if (!o.is_null(4))
                k.expires_at = detail::feed_ts(o.column_int64(4));
            k.expired_reported = o.column_int64(5) != 0;
            k.revoked_reported = o.column_int64(6) != 0;
            k.limit_reached = detail::feed_split(o.column_text(7));
            s.orders[k.id] = std::move(k);
        }
        auto d = db_.prepare("SELECT key, event_json, error, attempts, at FROM dd_feed_dead WHERE consumer = ?");
        d.bind(1, consumer_);
        while (d.step())
        {
            feed_dead_letter l;
            l.key = d.column_text(0);
            l.event_json = d.column_text(1);
            l.error = d.column_text(2);
            const std::int64_t a = d.column_int64(3);
            if (a < 0 || a > 1000000)
                return state_errc::invalid_record;
            l.attempts = static_cast<int>(a);
            l.at = detail::feed_ts(d.column_int64(4));
            s.dead_letters[l.key] = std::move(l);
        }
        out = std::move(s);
        return {};
    }
    catch (const error_with_diagnostics& e)
    {
        return e.code();
    }
}

DIGITAL_DELIVERY_DECL error_code sqlite_feed_checkpoint::commit(const feed_commit& c)
{
    try
    {
        auto tx = db_.begin();
        if (c.initialise)
            db_.prepare("INSERT INTO dd_feed(consumer, horizon, watermark, last_lookback) VALUES (?, ?, ?, NULL) "
                        "ON CONFLICT(consumer) DO NOTHING")
                .bind(1, consumer_)
                .bind(2, detail::feed_us(c.horizon.value_or(timestamp{})))
                .bind(3, detail::feed_us(c.watermark.value_or(timestamp{})))
                .run();
        if (c.horizon)
        {
            db_.prepare("UPDATE dd_feed SET horizon = ? WHERE consumer = ?").bind(1, detail::feed_us(*c.horizon)).bind(2, consumer_).run();
            db_.prepare("DELETE FROM dd_feed_order WHERE consumer = ? AND created_at < ?")
                .bind(1, consumer_)
                .bind(2, detail::feed_us(*c.horizon))
                .run();
        }
        if (c.watermark)
            db_.prepare("UPDATE dd_feed SET watermark = ? WHERE consumer = ?").bind(1, detail::feed_us(*c.watermark)).bind(2, consumer_).run();
        if (c.last_lookback)
            db_.prepare("UPDATE dd_feed SET last_lookback = ? WHERE consumer = ?")
                .bind(1, detail::feed_us(*c.last_lookback))
                .bind(2, consumer_)
                .run();
        for (const auto& k : c.upserts)
        {
            auto st = db_.prepare(
                "INSERT OR REPLACE INTO dd_feed_order(consumer, id, created_at, financial_status, download_count, "
                "expires_at, expired_reported, revoked_reported, limit_reached) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
            st.bind(1, consumer_).bind(2, k.id).bind(3, detail::feed_us(k.created_at)).bind(4, k.financial_status);
            st.bind(5, k.download_count);
            if (k.expires_at)
                st.bind(6, detail::feed_us(*k.expires_at));
            else
                st.bind(6, nullptr);
            st.bind(7, k.expired_reported ? 1 : 0).bind(8, k.revoked_reported ? 1 : 0).bind(9, detail::feed_join(k.limit_reached));
            st.run();
        }
        for (const auto& d : c.add_dead)
            db_.prepare("INSERT OR REPLACE INTO dd_feed_dead(consumer, key, event_json, error, attempts, at) "
                        "VALUES (?, ?, ?, ?, ?, ?)")
                .bind(1, consumer_)
                .bind(2, d.key)
                .bind(3, d.event_json)
                .bind(4, d.error)
                .bind(5, d.attempts)
                .bind(6, detail::feed_us(d.at))
                .run();
        for (const auto& k : c.remove_dead)
            db_.prepare("DELETE FROM dd_feed_dead WHERE consumer = ? AND key = ?").bind(1, consumer_).bind(2, k).run();
        tx.commit();
        return {};
    }
    catch (const error_with_diagnostics& e)
    {
        return e.code();
    }
}

}  // namespace digital_delivery

#endif
