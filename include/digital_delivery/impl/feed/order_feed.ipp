//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_FEED_ORDER_FEED_IPP
#define DIGITAL_DELIVERY_IMPL_FEED_ORDER_FEED_IPP

// The order feed's driver: one coroutine per operation moves the sans-io core
// (feed/sansio/feed_core.hpp) with GET /orders and GET /orders/{id}/downloads
// at priority::background, the checkpoint's commits and a timer.

#include <digital_delivery/order_feed.hpp>
#include <digital_delivery/detail/clock.hpp>
#include <digital_delivery/endpoints.hpp>
#include <digital_delivery/impl/feed/sansio/feed_core.hpp>
#include <digital_delivery/request_options.hpp>
#include <digital_delivery/watermark.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <exception>
#include <map>
#include <tuple>

namespace digital_delivery {
namespace detail {

class order_feed_impl : public std::enable_shared_from_this<order_feed_impl>
{
public:
    using awaitable_ec = boost::asio::awaitable<error_code>;

    order_feed_impl(client& c, std::shared_ptr<feed_checkpoint> cp, order_feed_options o)
        : client_(c), cp_(std::move(cp)), core_(std::move(o)), timer_(c.get_executor())
    {
    }

    boost::asio::any_io_executor executor() const { return client_.get_executor(); }

    void follow(std::string order_id)
    {
        follows_[std::move(order_id)] = follow_state{now(), watermark_wait_options{}.initial_interval};
    }
    const feed_core& core() const noexcept { return core_; }

    static timestamp now()
    {
        return std::chrono::time_point_cast<std::chrono::microseconds>(detail::clock::system_now());
    }

    boost::asio::awaitable<std::tuple<error_code, feed_event>> next()
    {
        error_code ec = co_await ensure_started();
        if (ec)
            co_return std::tuple<error_code, feed_event>{ec, feed_event{}};
        for (;;)
        {
            // A shared checkpoint whose lease is lost: another watcher
            // delivers from now on; this one stops.
            if (ec = cp_->guard_error(); ec)
                co_return std::tuple<error_code, feed_event>{ec, feed_event{}};
            ec = co_await commit_silent();
            if (ec)
                co_return std::tuple<error_code, feed_event>{ec, feed_event{}};
            core_.check_expiry(now());
            if (core_.has_event())
            {
                if (auto r = core_.retry_at(); r && now() < *r)
                {
                    co_await sleep_until(*r);
                    continue;
                }
                if (ec = cp_->guard_error(); ec)
                    co_return std::tuple<error_code, feed_event>{ec, feed_event{}};
                core_.delivering();
                co_return std::tuple<error_code, feed_event>{error_code{}, core_.front()};
            }
            ec = co_await finish_lookback();
            if (ec)
                co_return std::tuple<error_code, feed_event>{ec, feed_event{}};
            ec = co_await poll_follows();
            if (ec)
                co_return std::tuple<error_code, feed_event>{ec, feed_event{}};
            if (core_.has_event())
                continue;
            const timestamp n = now();
            if (core_.lookback_due(n))
            {
                ec = co_await scan(feed_core::scan_kind::lookback);
                if (ec)
                    co_return std::tuple<error_code, feed_event>{ec, feed_event{}};
                lookback_pending_ = true;
                continue;
            }
            if (!next_poll_ || n >= *next_poll_)
            {
                ec = co_await scan(feed_core::scan_kind::new_orders);
                next_poll_ = feed_add(now(), core_.poll_delay());
                if (ec)
                    co_return std::tuple<error_code, feed_event>{ec, feed_event{}};
                continue;
            }
            timestamp wake = (std::min)(*next_poll_, core_.next_lookback());
            for (const auto& [id, f] : follows_)
                wake = (std::min)(wake, f.next);
            co_await sleep_until(wake);
        }
    }

    awaitable_ec ack(const std::string& key)
    {
        if (!core_.has_event() || core_.front().key != key)
            co_return error_code(client_errc::invalid_argument);
        feed_commit c = core_.ack_commit();
        error_code ec = co_await commit(c);
        if (ec)
            co_return ec;
        core_.acknowledged(c);
        error_code e2 = co_await finish_lookback();
        co_return e2;
    }

    boost::asio::awaitable<std::tuple<error_code, bool>> fail(const std::string& key, const std::string& reason)
    {
        if (!core_.has_event() || core_.front().key != key)
            co_return std::tuple<error_code, bool>{client_errc::invalid_argument, false};
        auto f = core_.fail_front(reason, now());
        if (!f.dead)
            co_return std::tuple<error_code, bool>{error_code{}, false};
        error_code ec = co_await commit(*f.dead);
        if (ec)
            co_return std::tuple<error_code, bool>{ec, false};
        core_.dead_lettered(*f.dead);
        co_return std::tuple<error_code, bool>{error_code{}, true};
    }

    boost::asio::awaitable<std::tuple<error_code>> ack_tuple(const std::string& key)
    {
        error_code ec = co_await ack(key);
        co_return std::tuple<error_code>{ec};
    }

    boost::asio::awaitable<std::tuple<error_code>> replay_tuple(const std::string& key)
    {
        error_code ec = co_await replay(key);
        co_return std::tuple<error_code>{ec};
    }

    awaitable_ec replay(const std::string& key)
    {
        error_code ec = co_await ensure_started();
        if (ec)
            co_return ec;
        co_return core_.replay(key) ? error_code{} : error_code(client_errc::invalid_argument);
    }

private:
    awaitable_ec ensure_started()
    {
        if (started_)
            co_return error_code{};
        auto tok = boost::asio::as_tuple(boost::asio::use_awaitable);
        auto [ec, st] = co_await boost::asio::async_initiate<decltype(tok), void(error_code, feed_state)>(
            [this](auto h) { cp_->async_load(executor(), std::move(h)); }, tok);
        if (ec)
            co_return ec;
        if (auto first = core_.start(std::move(st), now()))
        {
            error_code e2 = co_await commit(*first);
            if (e2)
                co_return e2;
            core_.committed(*first);
        }
        started_ = true;
        co_return error_code{};
    }

    awaitable_ec commit(const feed_commit& c)
    {
        auto tok = boost::asio::as_tuple(boost::asio::use_awaitable);
        auto [ec] = co_await boost::asio::async_initiate<decltype(tok), void(error_code)>(
            [this, &c](auto h) { cp_->async_commit(executor(), c, std::move(h)); }, tok);
        co_return ec;
    }

    awaitable_ec commit_silent()
    {
        feed_commit s = core_.take_silent();
        if (s.empty())
            co_return error_code{};
        error_code ec = co_await commit(s);
        if (ec)
            co_return ec;
        core_.committed(s);
        co_return error_code{};
    }

    // The look-back's end (its time, the pruning) is committed once its
    // events are acknowledged, so that a crash before repeats the scan.
    awaitable_ec finish_lookback()
    {
        if (!lookback_pending_ || core_.has_event())
            co_return error_code{};
        feed_commit c = core_.end_lookback(now());
        error_code ec = co_await commit(c);
        if (ec)
            co_return ec;
        core_.committed(c);
        lookback_pending_ = false;
        co_return error_code{};
    }

    awaitable_ec scan(feed_core::scan_kind k)
    {
        const request_options ro{.prio = priority::background};
        order_query q = core_.begin_scan(k, now());
        for (;;)
        {
            auto [ec, page] = co_await async_list_orders(client_, q, ro, boost::asio::as_tuple(boost::asio::use_awaitable));
            if (ec)
            {
                core_.abort_scan();
                co_return ec;
            }
            auto n = core_.on_page(page, now());
            if (!n)
                break;
            q = *n;
        }
        for (const std::string& id : core_.take_downloads_reads())
        {
            auto [ec, d] = co_await async_get_order_downloads(client_, id, ro, boost::asio::as_tuple(boost::asio::use_awaitable));
            if (ec)
                continue;  // the next change of the order reads it again
            if (d.order_id.empty())
                d.order_id = id;
            core_.on_downloads(d, now());
        }
        co_return error_code{};
    }

    // The followed orders whose read is due: GET /orders/{id}/downloads, with
    // the watermark waiter's schedule (watermark_wait_options' defaults).
    awaitable_ec poll_follows()
    {
        const request_options ro{.prio = priority::background};
        for (auto it = follows_.begin(); it != follows_.end();)
        {
            if (now() < it->second.next)
            {
                ++it;
                continue;
            }
            const std::string id = it->first;
            auto [ec, d] = co_await async_get_order_downloads(client_, id, ro, boost::asio::as_tuple(boost::asio::use_awaitable));
            it = follows_.find(id);
            if (it == follows_.end())
                continue;
            if (ec == api_errc::order_not_found || ec == api_errc::not_found)
            {
                it = follows_.erase(it);
                continue;
            }
            if (ec)
                co_return ec;
            if (d.order_id.empty())
                d.order_id = id;
            if (!any_awaiting_watermark(d))
            {
                core_.on_watermark_ready(d, now());
                it = follows_.erase(it);
                continue;
            }
            core_.on_watermark_pending();
            it->second.next = feed_add(now(), it->second.interval);
            it->second.interval = next_poll_interval(it->second.interval, watermark_wait_options{});
            ++it;
        }
        co_return error_code{};
    }

    boost::asio::awaitable<void> sleep_until(timestamp t)
    {
        const auto d = t - now();
        timer_.expires_after(d > std::chrono::microseconds(0) ? std::chrono::duration_cast<clock::duration>(d)
                                                              : clock::duration::zero());
        auto [ec] = co_await timer_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
        if (ec == boost::asio::error::operation_aborted)
            throw boost::system::system_error(ec);
    }

    client& client_;
    std::shared_ptr<feed_checkpoint> cp_;
    feed_core core_;
    detail::timer timer_;
    bool started_ = false;
    bool lookback_pending_ = false;
    std::optional<timestamp> next_poll_;
    struct follow_state
    {
        timestamp next;
        std::chrono::milliseconds interval;
    };
    std::map<std::string, follow_state> follows_;
};

// Runs `op` on the feed's executor and completes `h` with its result; a
// cancellation (terminal) ends it with operation_aborted.
template <class Result, class Handler, class Make>
void feed_spawn(const std::shared_ptr<order_feed_impl>& f, Handler h, Make make)
{
    auto slot = boost::asio::get_associated_cancellation_slot(h);
    boost::asio::co_spawn(
        f->executor(),
        [f, make = std::move(make)]() { return make(*f); },
        boost::asio::bind_cancellation_slot(
            slot,
            [f, h = std::move(h)](std::exception_ptr ep, Result r) mutable {
                if (ep)
                {
                    error_code ec = boost::asio::error::operation_aborted;
                    try
                    {
                        std::rethrow_exception(ep);
                    }
                    catch (const boost::system::system_error& e)
                    {
                        ec = e.code();
                    }
                    catch (...)
                    {
                    }
                    std::get<0>(r) = ec;
                }
                std::apply(std::move(h), std::move(r));
            }));
}

}  // namespace detail

DIGITAL_DELIVERY_DECL std::shared_ptr<detail::order_feed_impl> detail::make_order_feed(
    client& c, std::shared_ptr<feed_checkpoint> cp, order_feed_options o)
{
    return std::make_shared<order_feed_impl>(c, std::move(cp), std::move(o));
}

DIGITAL_DELIVERY_DECL void detail::feed_next(std::shared_ptr<order_feed_impl> f,
                                             boost::asio::any_completion_handler<void(error_code, feed_event)> h)
{
    feed_spawn<std::tuple<error_code, feed_event>>(f, std::move(h), [](order_feed_impl& x) { return x.next(); });
}

DIGITAL_DELIVERY_DECL void detail::feed_ack(std::shared_ptr<order_feed_impl> f, std::string key,
                                            boost::asio::any_completion_handler<void(error_code)> h)
{
    feed_spawn<std::tuple<error_code>>(f, std::move(h), [key = std::move(key)](order_feed_impl& x) { return x.ack_tuple(key); });
}

DIGITAL_DELIVERY_DECL void detail::feed_fail(std::shared_ptr<order_feed_impl> f, std::string key, std::string reason,
                                             boost::asio::any_completion_handler<void(error_code, bool)> h)
{
    feed_spawn<std::tuple<error_code, bool>>(
        f, std::move(h),
        [key = std::move(key), reason = std::move(reason)](order_feed_impl& x) { return x.fail(key, reason); });
}

DIGITAL_DELIVERY_DECL void detail::feed_replay(std::shared_ptr<order_feed_impl> f, std::string key,
                                               boost::asio::any_completion_handler<void(error_code)> h)
{
    feed_spawn<std::tuple<error_code>>(f, std::move(h), [key = std::move(key)](order_feed_impl& x) { return x.replay_tuple(key); });
}

DIGITAL_DELIVERY_DECL void detail::feed_follow(order_feed_impl& f, std::string order_id)
{
    f.follow(std::move(order_id));
}

DIGITAL_DELIVERY_DECL feed_stats detail::feed_get_stats(const order_feed_impl& f)
{
    return f.core().stats();
}

DIGITAL_DELIVERY_DECL std::vector<feed_dead_letter> detail::feed_get_dead_letters(const order_feed_impl& f)
{
    std::vector<feed_dead_letter> r;
    for (const auto& [k, d] : f.core().state().dead_letters)
        r.push_back(d);
    return r;
}

}  // namespace digital_delivery

#endif
