//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_FEED_SANSIO_FEED_CORE_HPP
#define DIGITAL_DELIVERY_IMPL_FEED_SANSIO_FEED_CORE_HPP

// The order feed's core: no I/O, no clock of its own. The driver
// (impl/feed/order_feed.ipp) asks it which page to read, hands it each page,
// the downloads it asked for and the time, takes the events in order, and
// commits what the core says an acknowledgement (or a dead letter) changes.
// docs/order-feed.md explains the algorithm; the tests drive it with a fake
// server (tests/feed/feed_core_test.cpp).

#include <digital_delivery/detail/saturating_time.hpp>
#include <digital_delivery/download.hpp>
#include <digital_delivery/feed_checkpoint.hpp>
#include <digital_delivery/feed_event.hpp>
#include <digital_delivery/order.hpp>
#include <digital_delivery/timestamp.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace digital_delivery {
namespace detail {

/// The largest page the orders list serves (the spec's per_page maximum).
inline constexpr std::int32_t feed_page_size = 250;

/// How much longer than the look-back window per-order state is kept.
inline constexpr std::chrono::hours feed_retention_margin{24};

/// The created_at_min date that includes every order created at or after `t`
/// whatever time zone the server reads dates in (offsets up to ±24 h): the UTC
/// day of `t`, minus one.
inline date feed_date_floor(timestamp t) noexcept
{
    using namespace std::chrono;
    const auto d = floor<days>(t);
    if (d.time_since_epoch() <= days(-3000000))  // far before year 0: clamp
        return date(year(1), January, day(1));
    return date(sys_days(d - days(1)));
}

/// The start point the feed records for `t`: its whole UTC second. The spec's
/// timestamps are ISO 8601 strings of unstated precision (a server may send
/// seconds or milliseconds), so an order created after `t` can read as earlier
/// than `t` at microseconds; from the whole second it is always included (an
/// order of the same second created just before `t` is included too, once).
inline timestamp feed_start_point(timestamp t) noexcept
{
    using namespace std::chrono;
    if (t < timestamp::min() + seconds(1))
        return timestamp::min();
    return floor<seconds>(t);
}

/// t + d, saturating.
inline timestamp feed_add(timestamp t, std::chrono::milliseconds d) noexcept
{
    using namespace std::chrono;
    const auto us = duration_cast<microseconds>(d).count();
    const auto base = t.time_since_epoch().count();
    if (us > 0 && base > (std::numeric_limits<std::int64_t>::max)() - us)
        return timestamp::max();
    if (us < 0 && base < (std::numeric_limits<std::int64_t>::min)() - us)
        return timestamp::min();
    return t + microseconds(us);
}

class feed_core
{
public:
    enum class scan_kind
    {
        none,
        new_orders,
        lookback,
    };

    explicit feed_core(order_feed_options o) : opts_(std::move(o))
    {
        if (opts_.max_attempts < 1)
            opts_.max_attempts = 1;
        if (opts_.min_interval < std::chrono::milliseconds(1))
            opts_.min_interval = std::chrono::milliseconds(1);
        if (opts_.max_interval < opts_.min_interval)
            opts_.max_interval = opts_.min_interval;
        if (opts_.lookback_window < std::chrono::milliseconds(0))
            opts_.lookback_window = std::chrono::milliseconds(0);
        interval_ = opts_.min_interval;
    }

    const order_feed_options& options() const noexcept { return opts_; }
    const feed_state& state() const noexcept { return state_; }
    const feed_stats& stats() const noexcept { return stats_; }
    feed_stats& stats() noexcept { return stats_; }

    /// Takes the loaded state. On a first run (not initialised), returns the
    /// commit that records the start (it must be durable before anything is
    /// delivered, or a restart would start later and miss what came between).
    std::optional<feed_commit> start(feed_state s, timestamp now)
    {
        state_ = std::move(s);
        if (state_.initialised)
        {
            // A checkpoint recorded with a sub-second start: compare from its
            // whole second too (an order of that second missed before is
            // found by the look-back; ids already acknowledged are skipped).
            state_.horizon = feed_start_point(state_.horizon);
            state_.watermark = (std::max)(state_.horizon, feed_start_point(state_.watermark));
            return std::nullopt;
        }
        const timestamp from = feed_start_point(opts_.since ? *opts_.since : now);
        feed_commit c;
        c.initialise = true;
        c.horizon = from;
        c.watermark = from;
        c.last_lookback = now;
        return c;
    }

    /// Applies a commit that is now durable.
    void committed(const feed_commit& c)
    {
        apply_feed_commit(state_, c);
        if (c.horizon)  // what was pruned is not compared again
            std::erase_if(last_seen_, [&](const auto& kv) { return !state_.orders.count(kv.first); });
    }

    // ---- scans ----------------------------------------------------------

    scan_kind scanning() const noexcept { return scan_; }

    /// The first page of a scan. New-order poll: newest first, from the day
    /// before the watermark's day; look-back: from the day before the window's.
    order_query begin_scan(scan_kind k, timestamp now)
    {
        scan_ = k;
        page_ = 1;
        found_new_.clear();
        found_changes_.clear();
        if (k == scan_kind::new_orders)
        {
            floor_ = state_.watermark;
            ++stats_.polls;
        }
        else
        {
            floor_ = (std::max)(state_.horizon, feed_add(now, -opts_.lookback_window));
            ++stats_.lookbacks;
        }
        min_date_ = feed_date_floor(floor_);
        change_floor_ = feed_add(now, -opts_.lookback_window);
        return query();
    }

    /// Reads one page of the scan. \return The next page's query, or empty
    /// when the scan is over (its events are then queued).
    std::optional<order_query> on_page(const order_list& l, timestamp now)
    {
        ++stats_.points;
        if (scan_ == scan_kind::new_orders)
            ++stats_.poll_pages;
        else
            ++stats_.lookback_pages;
        bool older_seen = false;
        for (const order& o : l.orders)
        {
            consider(o, now);
            if (o.created_at < floor_)
                older_seen = true;
        }
        const bool last = older_seen || l.orders.size() < static_cast<std::size_t>(feed_page_size) ||
                          l.pagination.current_page >= l.pagination.total_pages || page_ >= max_pages;
        if (!last)
        {
            ++page_;
            return query();
        }
        finish_scan(now);
        return std::nullopt;
    }

    /// Abandons the scan in progress (a request failed): what it found is
    /// forgotten, and found again by the next scan.
    void abort_scan()
    {
        for (const auto& e : found_new_)
            queued_keys_.erase(e.key);
        for (const auto& e : found_changes_)
            queued_keys_.erase(e.key);
        found_new_.clear();
        found_changes_.clear();
        silent_new_.clear();
        silent_ = {};
        scan_ = scan_kind::none;
    }

    /// After a scan: the orders whose downloads to read (the downloads group:
    /// orders whose list entry changed), each once.
    std::vector<std::string> take_downloads_reads()
    {
        std::vector<std::string> r(reads_.begin(), reads_.end());
        reads_.clear();
        return r;
    }

    /// Reads one order's downloads (1 point).
    void on_downloads(const order_downloads& d, timestamp now)
    {
        ++stats_.points;
        ++stats_.downloads_reads;
        auto it = state_.orders.find(d.order_id);
        if (it == state_.orders.end())
            return;
        const feed_order_state& k = it->second;
        std::optional<timestamp> earliest;
        bool revoked = false;
        order o = order_of(k);
        for (const download_entry& e : d.downloads)
        {
            if (e.expires_at && (!earliest || *e.expires_at < *earliest))
                earliest = e.expires_at;
            revoked = revoked || e.access_revoked;
            if (e.download_limit_reached && !e.id.empty() &&
                std::find(k.limit_reached.begin(), k.limit_reached.end(), e.id) == k.limit_reached.end())
            {
                feed_event ev = make_event(feed_event_kind::download_limit_reached, o, now);
                ev.download_id = e.id;
                ev.key = "download_limit_reached:" + o.id + ":" + e.id;
                push_event(std::move(ev));
            }
        }
        if (revoked && !k.revoked_reported)
        {
            feed_event ev = make_event(feed_event_kind::access_revoked, o, now);
            ev.key = "access_revoked:" + o.id;
            push_event(std::move(ev));
        }
        if (earliest != k.expires_at)
        {
            feed_order_state u = k;
            u.expires_at = earliest;
            silent_.upserts.push_back(std::move(u));
        }
        check_expiry(now, &d.order_id, earliest);
    }

    /// A followed order's downloads no longer await a watermark (1 point was
    /// spent on the read): queues watermark_ready. Its acknowledgement changes
    /// nothing of the state.
    void on_watermark_ready(const order_downloads& d, timestamp now)
    {
        ++stats_.points;
        ++stats_.downloads_reads;
        order o;
        o.id = d.order_id;
        o.name = d.order_name;
        feed_event e = make_event(feed_event_kind::watermark_ready, o, now);
        e.detection_delay = std::chrono::milliseconds(0);
        e.key = "watermark_ready:" + o.id;
        push_event(std::move(e));
    }

    /// A followed order's downloads still await a watermark (1 point).
    void on_watermark_pending() noexcept
    {
        ++stats_.points;
        ++stats_.downloads_reads;
    }

    /// Queues downloads_expired for the orders whose earliest expires_at has
    /// passed (no request: the dates were read before).
    void check_expiry(timestamp now) { check_expiry(now, nullptr, std::nullopt); }

    /// What the scan found that is committed without an event (a group not
    /// delivered, an expiry date read): the driver commits it before it
    /// delivers the next event. Empty when there is nothing.
    feed_commit take_silent()
    {
        feed_commit c = std::move(silent_);
        silent_ = {};
        return c;
    }

    /// After a look-back scan and its events: records the scan and prunes the
    /// per-order state that left the retention (window + 1 day; never past the
    /// watermark nor past an order still to be delivered).
    feed_commit end_lookback(timestamp now)
    {
        feed_commit c;
        c.last_lookback = now;
        timestamp h = (std::min)(feed_add(now, -(opts_.lookback_window + feed_retention_margin)), state_.watermark);
        for (const auto& e : queue_)
            if (e.kind == feed_event_kind::new_order)
                h = (std::min)(h, e.order.created_at);
        h = feed_start_point(h);  // pruned and compared at whole seconds, like the start
        if (h > state_.horizon)
            c.horizon = h;
        return c;
    }

    // ---- delivery -------------------------------------------------------

    bool has_event() const noexcept { return !queue_.empty(); }
    std::size_t queued() const noexcept { return queue_.size(); }

    /// The next event (has_event() must be true).
    const feed_event& front() const noexcept { return queue_.front(); }

    /// When the front event may be delivered again after a failure.
    std::optional<timestamp> retry_at() const noexcept { return retry_at_; }

    /// Counts a delivery of the front event.
    void delivering() noexcept
    {
        ++stats_.delivered;
        retry_at_.reset();
    }

    /// The commit that acknowledges the front event.
    feed_commit ack_commit() const
    {
        feed_commit c;
        const feed_event& e = queue_.front();
        apply_event(c, e);
        if (e.replay)
            c.remove_dead.push_back(e.key);
        return c;
    }

    /// The front event's commit is durable: applies it and drops the event.
    void acknowledged(const feed_commit& c)
    {
        committed(c);
        ++stats_.acknowledged;
        queued_keys_.erase(queue_.front().key);
        queue_.pop_front();
        retry_at_.reset();
    }

    struct failure
    {
        /// Set when the attempts are exhausted: commit it, then call dead_lettered.
        std::optional<feed_commit> dead;
        /// Otherwise: the delay before the next attempt.
        std::chrono::milliseconds retry_after{0};
    };

    /// The handler failed on the front event.
    failure fail_front(std::string_view why, timestamp now)
    {
        feed_event& e = queue_.front();
        failure f;
        if (e.attempt >= opts_.max_attempts)
        {
            feed_commit c;
            apply_event(c, e);
            feed_dead_letter d;
            d.key = e.key;
            d.event_json = to_json(e);
            d.error = std::string(why.substr(0, 1000));
            d.attempts = e.attempt;
            d.at = now;
            c.add_dead.push_back(std::move(d));
            f.dead = std::move(c);
            return f;
        }
        auto delay = opts_.retry_initial;
        for (int i = 1; i < e.attempt && delay < opts_.retry_max; ++i)
            delay *= 2;
        f.retry_after = (std::min)(delay, opts_.retry_max);
        ++e.attempt;
        retry_at_ = feed_add(now, f.retry_after);
        return f;
    }

    /// The dead letter's commit is durable.
    void dead_lettered(const feed_commit& c)
    {
        committed(c);
        ++stats_.dead_lettered;
        queued_keys_.erase(queue_.front().key);
        queue_.pop_front();
        retry_at_.reset();
    }

    /// Puts a dead letter back at the front of the queue. \return False when
    /// there is no dead letter with that key (or it cannot be read).
    bool replay(const std::string& key)
    {
        auto it = state_.dead_letters.find(key);
        if (it == state_.dead_letters.end())
            return false;
        auto ev = feed_event_from_json(it->second.event_json);
        if (!ev)
            return false;
        ev->replay = true;
        ev->attempt = 1;
        queued_keys_.insert(ev->key);
        queue_.push_front(std::move(*ev));
        retry_at_.reset();
        return true;
    }

    // ---- schedule -------------------------------------------------------

    /// The delay before the next new-order poll.
    std::chrono::milliseconds poll_delay() const noexcept { return interval_; }

    /// \return True when a look-back scan is due.
    bool lookback_due(timestamp now) const noexcept
    {
        return !state_.last_lookback || now >= feed_add(*state_.last_lookback, opts_.lookback_interval);
    }

    /// When the next look-back is due.
    timestamp next_lookback() const noexcept
    {
        return state_.last_lookback ? feed_add(*state_.last_lookback, opts_.lookback_interval) : timestamp::min();
    }

    /// Pages one scan reads at most (a server that never ends its list).
    static constexpr std::int32_t max_pages = 1000000;

private:
    order_query query() const
    {
        order_query q;
        q.created_at_min = min_date_;
        q.sort = order_sort::created_at_desc;
        q.per_page = feed_page_size;
        q.page = page_;
        return q;
    }

    static std::string status_of(const order& o)
    {
        return o.financial_status ? std::string(o.financial_status->str()) : std::string();
    }

    static order order_of(const feed_order_state& k)
    {
        order o;
        o.id = k.id;
        o.created_at = k.created_at;
        o.download_count = k.download_count;
        return o;
    }

    feed_event make_event(feed_event_kind kind, const order& o, timestamp now) const
    {
        feed_event e;
        e.kind = kind;
        e.order = o;
        e.detected_at = now;
        timestamp since = o.created_at;
        if (kind != feed_event_kind::new_order)
        {
            auto it = last_seen_.find(o.id);
            since = it == last_seen_.end() ? now : it->second;
        }
        const auto d = now - since;
        e.detection_delay = d > std::chrono::microseconds(0)
                                ? std::chrono::duration_cast<std::chrono::milliseconds>(d)
                                : std::chrono::milliseconds(0);
        return e;
    }

    void push_event(feed_event e)
    {
        if (!queued_keys_.insert(e.key).second)
            return;
        if (scan_ != scan_kind::none)
            found_changes_.push_back(std::move(e));
        else
            queue_.push_back(std::move(e));
    }

    // One list entry, in any scan.
    void consider(const order& o, timestamp now)
    {
        if (o.id.empty() || o.created_at < state_.horizon)
            return;
        auto it = state_.orders.find(o.id);
        if (it == state_.orders.end())
        {
            last_seen_[o.id] = now;
            const std::string key = "new_order:" + o.id;
            if (queued_keys_.count(key) || silent_new_.count(o.id))
                return;
            if (has(opts_.events, feed_events::orders))
            {
                queued_keys_.insert(key);
                feed_event e = make_event(feed_event_kind::new_order, o, now);
                e.key = key;
                found_new_.push_back(std::move(e));
            }
            else
            {
                // Not delivered, but known from now on (the changes need it).
                silent_new_.insert(o.id);
                feed_order_state k;
                k.id = o.id;
                k.created_at = o.created_at;
                k.financial_status = status_of(o);
                k.download_count = o.download_count;
                silent_.upserts.push_back(std::move(k));
                if (o.created_at > state_.watermark &&
                    (!silent_.watermark || o.created_at > *silent_.watermark))
                    silent_.watermark = o.created_at;
            }
            return;
        }
        const feed_order_state& k = it->second;
        if (o.created_at < change_floor_)
            return;  // changes are looked for inside the look-back window only
        const std::string st = status_of(o);
        bool changed = false;
        feed_order_state quiet = k;
        bool quiet_change = false;
        if ((st == "refunded" || st == "voided") && st != k.financial_status)
        {
            changed = true;
            if (has(opts_.events, feed_events::changes))
            {
                feed_event e = make_event(st == "refunded" ? feed_event_kind::refunded : feed_event_kind::voided, o, now);
                e.key = st + ":" + o.id;
                push_event(std::move(e));
            }
            else
            {
                quiet.financial_status = st;
                quiet_change = true;
            }
        }
        if (o.download_count > k.download_count)
        {
            changed = true;
            if (has(opts_.events, feed_events::changes))
            {
                feed_event e = make_event(feed_event_kind::download_count_increased, o, now);
                e.previous_download_count = k.download_count;
                e.key = "download_count:" + o.id + ":" + std::to_string(o.download_count);
                push_event(std::move(e));
            }
            else
            {
                quiet.download_count = o.download_count;
                quiet_change = true;
            }
        }
        if (quiet_change)
            silent_.upserts.push_back(std::move(quiet));
        if (changed && has(opts_.events, feed_events::downloads))
            reads_.insert(o.id);
        if (!changed)
            last_seen_[o.id] = now;
    }

    void finish_scan(timestamp now)
    {
        // New orders in creation order: the server lists newest first (ties in
        // its order), so reverse, then sort by created_at keeping ties' order.
        std::reverse(found_new_.begin(), found_new_.end());
        std::stable_sort(found_new_.begin(), found_new_.end(), [](const feed_event& a, const feed_event& b) {
            return a.order.created_at < b.order.created_at;
        });
        const bool activity = !found_new_.empty() || !found_changes_.empty();
        for (auto& e : found_new_)
            queue_.push_back(std::move(e));
        for (auto& e : found_changes_)
            queue_.push_back(std::move(e));
        found_new_.clear();
        found_changes_.clear();
        silent_new_.clear();
        if (scan_ == scan_kind::new_orders)
        {
            if (activity)
                interval_ = opts_.min_interval;
            else
                interval_ = (std::min)(interval_ * 2, opts_.max_interval);
        }
        else if (activity)
            interval_ = opts_.min_interval;
        (void)now;
        scan_ = scan_kind::none;
    }

    void check_expiry(timestamp now, const std::string* just_read, std::optional<timestamp> read_expiry)
    {
        if (!has(opts_.events, feed_events::downloads))
            return;
        auto one = [&](const feed_order_state& k, std::optional<timestamp> exp) {
            if (!exp || *exp > now || k.expired_reported)
                return;
            const std::string key = "downloads_expired:" + k.id;
            if (queued_keys_.count(key))
                return;
            feed_event e = make_event(feed_event_kind::downloads_expired, order_of(k), now);
            e.key = key;
            e.expires_at = exp;
            e.detection_delay = std::chrono::duration_cast<std::chrono::milliseconds>(now - *exp);
            queued_keys_.insert(key);
            queue_.push_back(std::move(e));
        };
        if (just_read)
        {
            auto it = state_.orders.find(*just_read);
            if (it != state_.orders.end())
                one(it->second, read_expiry);
            return;
        }
        for (const auto& [id, k] : state_.orders)
            one(k, k.expires_at);
    }

    // What acknowledging `e` changes in the state.
    void apply_event(feed_commit& c, const feed_event& e) const
    {
        if (e.kind == feed_event_kind::watermark_ready)
            return;  // follows are not kept: nothing to commit
        auto it = state_.orders.find(e.order.id);
        feed_order_state k;
        if (it != state_.orders.end())
            k = it->second;
        else
        {
            k.id = e.order.id;
            k.created_at = e.order.created_at;
            k.financial_status = status_of(e.order);
            k.download_count = e.order.download_count;
        }
        switch (e.kind)
        {
        case feed_event_kind::new_order:
            if (e.order.created_at > state_.watermark)
                c.watermark = e.order.created_at;
            break;
        case feed_event_kind::refunded:
        case feed_event_kind::voided:
            k.financial_status = status_of(e.order);
            break;
        case feed_event_kind::download_count_increased:
            k.download_count = (std::max)(k.download_count, e.order.download_count);
            break;
        case feed_event_kind::download_limit_reached:
            if (std::find(k.limit_reached.begin(), k.limit_reached.end(), e.download_id) == k.limit_reached.end())
                k.limit_reached.push_back(e.download_id);
            break;
        case feed_event_kind::access_revoked:
            k.revoked_reported = true;
            break;
        case feed_event_kind::downloads_expired:
            k.expired_reported = true;
            break;
        case feed_event_kind::watermark_ready:
            break;
        }
        // An order older than the horizon is not kept (it would be pruned).
        if (k.created_at >= state_.horizon)
            c.upserts.push_back(std::move(k));
    }

    order_feed_options opts_;
    feed_state state_;
    feed_stats stats_;
    std::deque<feed_event> queue_;
    std::set<std::string> queued_keys_;
    std::optional<timestamp> retry_at_;
    std::map<std::string, timestamp> last_seen_;
    std::chrono::milliseconds interval_{};

    scan_kind scan_ = scan_kind::none;
    std::int32_t page_ = 1;
    timestamp floor_{};
    timestamp change_floor_{};
    date min_date_{};
    std::vector<feed_event> found_new_;
    std::vector<feed_event> found_changes_;
    std::set<std::string> reads_;
    std::set<std::string> silent_new_;
    feed_commit silent_;
};

}  // namespace detail
}  // namespace digital_delivery

#endif
