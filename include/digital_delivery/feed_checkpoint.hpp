//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_FEED_CHECKPOINT_HPP
#define DIGITAL_DELIVERY_FEED_CHECKPOINT_HPP

/// \file
/// Where an order feed (order_feed.hpp) keeps what it has delivered: the
/// checkpoint's state, the change a commit makes to it, the interface a store
/// implements (feed_checkpoint), a base for stores with quick blocking calls
/// (sync_feed_checkpoint) and the in-memory store (memory_feed_checkpoint).
/// docs/order-feed.md describes what is kept and for how long.

#include <digital_delivery/error.hpp>
#include <digital_delivery/timestamp.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/append.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace digital_delivery {

/// What the feed knows of one order it has delivered (the look-back compares
/// each list entry with it). Kept while the order is inside the retention
/// (order_feed_options::lookback_window plus one day, and never past the
/// feed's watermark), then pruned.
struct feed_order_state
{
    std::string id{};                   ///< The order's id.
    timestamp created_at{};             ///< The order's created_at.
    std::string financial_status{};     ///< As last acknowledged ("" when the list had none).
    std::int64_t download_count = 0;    ///< As last acknowledged.
    std::optional<timestamp> expires_at{};  ///< Earliest expires_at of its download entries, when read.
    bool expired_reported = false;      ///< A downloads_expired event was acknowledged.
    bool revoked_reported = false;      ///< An access_revoked event was acknowledged.
    std::vector<std::string> limit_reached{};  ///< Download entries whose download_limit_reached was acknowledged.
};

/// An event whose handler kept failing (order_feed_options::max_attempts),
/// kept until it is replayed and acknowledged.
struct feed_dead_letter
{
    std::string key{};         ///< The event's key (feed_event::key).
    std::string event_json{};  ///< The event as JSON (to_json(const feed_event&)).
    std::string error{};       ///< What the last attempt reported.
    int attempts = 0;          ///< Attempts made.
    timestamp at{};            ///< When it was dead-lettered.
};

/// A feed's durable state: loaded once when the feed starts.
struct feed_state
{
    /// False for a store that has never been committed to (the feed's first run).
    bool initialised = false;
    /// Orders created before this are never delivered (the start, then the
    /// retention's edge as it moves).
    timestamp horizon{};
    /// The newest created_at of an acknowledged new order (or the start).
    timestamp watermark{};
    /// When the last look-back scan finished.
    std::optional<timestamp> last_lookback{};
    /// Orders delivered and still inside the retention, by id.
    std::map<std::string, feed_order_state> orders{};
    /// Events waiting for a replay, by key.
    std::map<std::string, feed_dead_letter> dead_letters{};
};

/// One atomic change of a feed_state: a store applies all of it or nothing,
/// and completes when it is durable.
struct feed_commit
{
    bool initialise = false;                  ///< Set initialised.
    std::optional<timestamp> horizon{};       ///< New horizon: also removes every order created before it.
    std::optional<timestamp> watermark{};     ///< New watermark.
    std::optional<timestamp> last_lookback{};  ///< New last_lookback.
    std::vector<feed_order_state> upserts{};  ///< Orders added or replaced (by id).
    std::vector<feed_dead_letter> add_dead{};  ///< Dead letters added (or replaced, by key).
    std::vector<std::string> remove_dead{};   ///< Dead letters removed (by key).

    /// \return True when the commit changes nothing.
    bool empty() const noexcept
    {
        return !initialise && !horizon && !watermark && !last_lookback && upserts.empty() && add_dead.empty() &&
               remove_dead.empty();
    }
};

/// Applies `c` to `s` (what every store does, in one transaction).
/// \param s The state.
/// \param c The change.
inline void apply_feed_commit(feed_state& s, const feed_commit& c)
{
    if (c.initialise)
        s.initialised = true;
    if (c.horizon)
    {
        s.horizon = *c.horizon;
        std::erase_if(s.orders, [&](const auto& kv) { return kv.second.created_at < *c.horizon; });
    }
    if (c.watermark)
        s.watermark = *c.watermark;
    if (c.last_lookback)
        s.last_lookback = *c.last_lookback;
    for (const auto& o : c.upserts)
        s.orders[o.id] = o;
    for (const auto& d : c.add_dead)
        s.dead_letters[d.key] = d;
    for (const auto& k : c.remove_dead)
        s.dead_letters.erase(k);
}

/// The interface of a feed's durable store. The feed calls one operation at a
/// time, from its executor. async_commit completes (with no error) only once
/// the change is durable: acknowledging an event *is* that commit. A store
/// shared by several processes (one active watcher) fails a commit it cannot
/// guard with an error; the feed then stops with that error.
class feed_checkpoint
{
public:
    virtual ~feed_checkpoint() = default;

    /// Reads the state (a default feed_state, not initialised, for an empty store).
    /// \param ex The feed's executor (the store may run on its own; it completes `h` through `h`'s executor).
    /// \param h Completes with the state; never inline.
    virtual void async_load(boost::asio::any_io_executor ex,
                            boost::asio::any_completion_handler<void(error_code, feed_state)> h) = 0;

    /// Applies `c` atomically and durably (see apply_feed_commit).
    /// \param ex The feed's executor.
    /// \param c The change.
    /// \param h Completes once it is durable; never inline.
    virtual void async_commit(boost::asio::any_io_executor ex, feed_commit c,
                              boost::asio::any_completion_handler<void(error_code)> h) = 0;

    /// Empty while the store can guard the feed's commits; once it no longer
    /// can (a shared store whose lease was lost: client_errc::checkpoint_lease_lost),
    /// why. The feed checks it before it delivers each event and stops with
    /// it. Called from the feed's executor: thread-safe. Default: always empty.
    /// \return The error, or empty.
    virtual error_code guard_error() const { return {}; }
};

/// A base for stores whose calls are quick and blocking (a local file): they
/// implement load() and commit(); the asynchronous operations run them and
/// complete through the handler's executor.
class sync_feed_checkpoint : public feed_checkpoint
{
public:
    /// Reads the state.
    /// \param out Set to the state.
    /// \return Empty, or why it could not be read.
    virtual error_code load(feed_state& out) = 0;
    /// Applies `c` atomically and durably.
    /// \param c The change.
    /// \return Empty once durable, or why not (then nothing of `c` was applied).
    virtual error_code commit(const feed_commit& c) = 0;

    void async_load(boost::asio::any_io_executor ex,
                    boost::asio::any_completion_handler<void(error_code, feed_state)> h) override
    {
        feed_state s;
        const error_code ec = load(s);
        boost::asio::post(ex, boost::asio::append(std::move(h), ec, std::move(s)));
    }

    void async_commit(boost::asio::any_io_executor ex, feed_commit c,
                      boost::asio::any_completion_handler<void(error_code)> h) override
    {
        const error_code ec = commit(c);
        boost::asio::post(ex, boost::asio::append(std::move(h), ec));
    }
};

/// A checkpoint in memory: for tests, and for a feed that need not survive
/// its process. `fail_commits` makes the next commits fail (nothing applied)
/// to test what a feed does when its store refuses.
class memory_feed_checkpoint : public sync_feed_checkpoint
{
public:
    error_code load(feed_state& out) override
    {
        std::lock_guard<std::mutex> lk(mtx_);
        out = state_;
        return {};
    }

    error_code commit(const feed_commit& c) override
    {
        std::lock_guard<std::mutex> lk(mtx_);
        if (fail_commits_ > 0)
        {
            --fail_commits_;
            return make_error_code(std::errc::io_error);
        }
        apply_feed_commit(state_, c);
        ++commits_;
        return {};
    }

    /// \return A copy of the committed state.
    feed_state state() const
    {
        std::lock_guard<std::mutex> lk(mtx_);
        return state_;
    }

    /// \return Commits applied so far.
    std::size_t commits() const
    {
        std::lock_guard<std::mutex> lk(mtx_);
        return commits_;
    }

    /// Makes the next `n` commits fail with std::errc::io_error.
    /// \param n How many.
    void fail_commits(int n)
    {
        std::lock_guard<std::mutex> lk(mtx_);
        fail_commits_ = n;
    }

private:
    mutable std::mutex mtx_;
    feed_state state_;
    std::size_t commits_ = 0;
    int fail_commits_ = 0;
};

}  // namespace digital_delivery

#endif
