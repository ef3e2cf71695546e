//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_ORDER_FEED_HPP
#define DIGITAL_DELIVERY_ORDER_FEED_HPP

/// \file
/// The order feed: new orders and their changes, each delivered once per
/// consumer, acknowledged into a durable checkpoint, within a stated share of
/// the rate limit. Opt-in (not in <digital_delivery.hpp>). docs/order-feed.md.

#include <digital_delivery/client.hpp>
#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/feed_checkpoint.hpp>
#include <digital_delivery/feed_event.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/deferred.hpp>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace digital_delivery {

namespace detail {
class order_feed_impl;
DIGITAL_DELIVERY_DECL std::shared_ptr<order_feed_impl> make_order_feed(
    client& c, std::shared_ptr<feed_checkpoint> cp, order_feed_options o);
DIGITAL_DELIVERY_DECL void feed_next(std::shared_ptr<order_feed_impl> f,
                                     boost::asio::any_completion_handler<void(error_code, feed_event)> h);
DIGITAL_DELIVERY_DECL void feed_ack(std::shared_ptr<order_feed_impl> f, std::string key,
                                    boost::asio::any_completion_handler<void(error_code)> h);
DIGITAL_DELIVERY_DECL void feed_fail(std::shared_ptr<order_feed_impl> f, std::string key, std::string reason,
                                     boost::asio::any_completion_handler<void(error_code, bool)> h);
DIGITAL_DELIVERY_DECL void feed_replay(std::shared_ptr<order_feed_impl> f, std::string key,
                                       boost::asio::any_completion_handler<void(error_code)> h);
DIGITAL_DELIVERY_DECL void feed_follow(order_feed_impl& f, std::string order_id);
DIGITAL_DELIVERY_DECL feed_stats feed_get_stats(const order_feed_impl& f);
DIGITAL_DELIVERY_DECL std::vector<feed_dead_letter> feed_get_dead_letters(const order_feed_impl& f);
}  // namespace detail

/// A durable feed of a store's orders for one consumer.
///
/// Pull events with async_next, acknowledge each with async_ack once its work
/// is done (the acknowledgement is the checkpoint's durable commit), or report
/// a failure with async_fail (retried with backoff, then dead-lettered).
/// Events come one at a time: async_next hands out the same event again until
/// it is acknowledged or failed. The feed's requests are GETs at
/// priority::background; it polls for new orders (1 point when nothing is new)
/// every min_interval to max_interval, and runs a look-back scan every
/// lookback_interval. One operation at a time, on the client's executor.
///
/// \par Example
/// \code
/// auto cp = std::make_shared<digital_delivery::memory_feed_checkpoint>();
/// digital_delivery::order_feed feed(client, cp);
/// for (;;) {
///     auto ev = co_await feed.async_next(asio::use_awaitable);
///     provision(ev);                                // your work
///     co_await feed.async_ack(ev, asio::use_awaitable);
/// }
/// \endcode
class order_feed
{
public:
    /// \param c The client (its rate limiter and retries are the feed's); it
    /// must outlive the feed and its operations.
    /// \param cp The checkpoint: one per consumer. The feed keeps it alive.
    /// \param o The options.
    order_feed(client& c, std::shared_ptr<feed_checkpoint> cp, order_feed_options o = {})
        : impl_(detail::make_order_feed(c, std::move(cp), std::move(o)))
    {
    }

    /// Waits for the next event: loads the checkpoint on the first call (and
    /// records the start on a first run), polls, and completes with the event,
    /// or with the error of a request or of the checkpoint (after the client's
    /// own retries; nothing is lost: call again to resume).
    /// \param token Completion token for `void(error_code, feed_event)`.
    /// \return What the completion token makes of the operation.
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_next(CompletionToken&& token = {})
    {
        return boost::asio::async_initiate<CompletionToken, void(error_code, feed_event)>(
            [impl = impl_](auto h) { detail::feed_next(impl, std::move(h)); }, token);
    }

    /// Acknowledges `e` (the event async_next last returned): completes once
    /// the checkpoint's commit is durable. Until then a crash delivers `e` again.
    /// \param e The event.
    /// \param token Completion token for `void(error_code)`.
    /// \return What the completion token makes of the operation.
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_ack(const feed_event& e, CompletionToken&& token = {})
    {
        return boost::asio::async_initiate<CompletionToken, void(error_code)>(
            [impl = impl_, key = e.key](auto h) mutable { detail::feed_ack(impl, std::move(key), std::move(h)); },
            token);
    }

    /// Reports that the handler failed on `e`: it is delivered again after a
    /// backoff (retry_initial, doubling up to retry_max), or, after
    /// max_attempts, committed to the dead letters and the feed goes on.
    /// \param e The event.
    /// \param reason Kept with a dead letter (at most 1000 bytes).
    /// \param token Completion token for `void(error_code, bool dead_lettered)`.
    /// \return What the completion token makes of the operation.
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_fail(const feed_event& e, std::string reason, CompletionToken&& token = {})
    {
        return boost::asio::async_initiate<CompletionToken, void(error_code, bool)>(
            [impl = impl_, key = e.key, r = std::move(reason)](auto h) mutable {
                detail::feed_fail(impl, std::move(key), std::move(r), std::move(h));
            },
            token);
    }

    /// Puts a dead letter back: the next async_next returns it (replay set);
    /// acknowledged, it leaves the dead letters.
    /// \param key The dead letter's key.
    /// \param token Completion token for `void(error_code)`: client_errc::invalid_argument when there is none.
    /// \return What the completion token makes of the operation.
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_replay(std::string key, CompletionToken&& token = {})
    {
        return boost::asio::async_initiate<CompletionToken, void(error_code)>(
            [impl = impl_, k = std::move(key)](auto h) mutable { detail::feed_replay(impl, std::move(k), std::move(h)); },
            token);
    }

    /// Follows an order's watermarks: from the next async_next on, the feed
    /// reads GET /orders/{id}/downloads (1 point, priority::background) on the
    /// schedule of async_wait_for_downloads (1 s, then ×1.5 up to 10 s) until
    /// no entry awaits its watermark, then delivers watermark_ready. Reading an
    /// order's downloads starts its watermark generation. Follows are kept in
    /// memory only (not in the checkpoint): follow again after a restart. Call
    /// it on the client's executor, between the feed's operations.
    /// \param order_id The order.
    void follow(std::string order_id) { detail::feed_follow(*impl_, std::move(order_id)); }

    /// \return The dead letters (after the first async_next or async_replay has loaded the checkpoint).
    std::vector<feed_dead_letter> dead_letters() const { return detail::feed_get_dead_letters(*impl_); }

    /// \return What the feed has spent and found.
    feed_stats stats() const { return detail::feed_get_stats(*impl_); }

private:
    std::shared_ptr<detail::order_feed_impl> impl_;
};

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/feed/order_feed.ipp>
#endif

#endif
