//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_FEED_SANSIO_FEED_LEASE_HPP
#define DIGITAL_DELIVERY_IMPL_FEED_SANSIO_FEED_LEASE_HPP

/// \file
/// The lease of a shared feed checkpoint (redis_feed_checkpoint), sans-io:
/// which call is due (acquire while on standby, renew while holding), what
/// each reply means, and whether the lease still holds at a given time. The
/// caller passes every time (an injectable clock); the class does no I/O.
///
/// The rules (docs/order-feed.md, "One active watcher of N"):
/// - The store keeps the lease as a key with a time to live (`ttl`), set by
///   the store when the acquire or renewal arrives. The holder counts its
///   lease from when it *sent* the call (earlier than the store's start), so
///   it stops believing it holds the lease no later than the store frees it.
/// - The holder renews every `renew_every`; a renewal without an answer is
///   retried every `retry_every` until the lease runs out: then it is lost.
///   A renewal refused (another holds the key, or it expired) loses it at once.
/// - A watcher on standby tries to acquire every `poll_every`, or as soon as
///   the holder's remaining time (the store's answer) has run out if sooner.
///   A holder that dies is replaced at most ttl + poll_every (+ one call's
///   time) after its last renewal was sent.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>

namespace digital_delivery {
namespace detail {

/// The lease's timing (redis_feed_lease_params).
struct feed_lease_timing
{
    std::chrono::milliseconds ttl{10000};
    std::chrono::milliseconds renew_every{3000};
    std::chrono::milliseconds poll_every{1000};
    std::chrono::milliseconds retry_every{500};
};

class feed_lease
{
public:
    using time_point = std::chrono::steady_clock::time_point;
    using ms = std::chrono::milliseconds;

    enum class phase
    {
        standby,  ///< Not held: acquiring, or waiting for the holder's lease to run out.
        held,     ///< Held (until valid_until()).
        lost,     ///< Was held and is no more: the feed stops (final).
    };

    enum class call
    {
        none,
        acquire,
        renew,
    };

    explicit feed_lease(feed_lease_timing t) : t_(sane(t)) {}

    const feed_lease_timing& timing() const noexcept { return t_; }
    phase state() const noexcept { return phase_; }
    /// The fencing token of the lease held (or last held): 0 before any.
    std::int64_t token() const noexcept { return token_; }
    /// When the lease held runs out unless renewed.
    time_point valid_until() const noexcept { return valid_until_; }
    /// When the lease was acquired (the acquire's answer).
    std::optional<time_point> acquired_at() const noexcept { return acquired_at_; }
    /// The latest time the holder seen on standby could hold its lease
    /// (when its remaining time, as the store told, runs out).
    std::optional<time_point> holder_expiry() const noexcept { return holder_expiry_; }

    /// The call due at `now` (none while one is in flight, or before its time).
    call due(time_point now) const noexcept
    {
        if (in_flight_ || phase_ == phase::lost || now < next_)
            return call::none;
        return phase_ == phase::held ? call::renew : call::acquire;
    }

    /// When due() can next answer something other than none (while nothing
    /// is in flight); also when a held lease runs out.
    time_point wake() const noexcept
    {
        return phase_ == phase::held ? (std::min)(next_, valid_until_) : next_;
    }

    /// The call `c` is sent at `now`.
    void sending(call c, time_point now) noexcept
    {
        in_flight_ = true;
        sent_ = c;
        sent_at_ = now;
    }

    /// The acquire succeeded: held from when it was sent, with `token`.
    /// \param now When the answer arrived.
    void acquired(std::int64_t token, time_point now) noexcept
    {
        in_flight_ = false;
        if (phase_ == phase::lost)
            return;
        phase_ = phase::held;
        token_ = token;
        valid_until_ = sent_at_ + t_.ttl;
        next_ = sent_at_ + t_.renew_every;
        acquired_at_ = now;
    }

    /// The acquire found another holder, whose lease has `remaining` left.
    void busy(ms remaining, time_point now) noexcept
    {
        in_flight_ = false;
        if (phase_ != phase::standby)
            return;
        remaining = (std::max)(remaining, ms(0));
        holder_expiry_ = now + remaining;
        // As soon as the holder's lease can have run out, and at least every poll.
        next_ = now + (std::min)(t_.poll_every, remaining + ms(1));
    }

    /// The renewal was accepted: the lease runs ttl from when it was sent.
    void renewed() noexcept
    {
        in_flight_ = false;
        if (phase_ != phase::held || sent_at_ >= valid_until_)
            return;  // sent after the lease ran out locally: lost already (holds())
        valid_until_ = sent_at_ + t_.ttl;
        next_ = sent_at_ + t_.renew_every;
    }

    /// The renewal was refused (the key names another holder, or none): lost.
    void refused() noexcept
    {
        in_flight_ = false;
        if (phase_ == phase::held)
            phase_ = phase::lost;
    }

    /// The call got no answer (an outage): tried again after retry_every (a
    /// held lease stays held until it runs out).
    void failed(time_point now) noexcept
    {
        in_flight_ = false;
        if (phase_ == phase::lost)
            return;
        next_ = now + (phase_ == phase::held ? t_.retry_every : (std::min)(t_.retry_every, t_.poll_every));
        if (phase_ == phase::held && next_ > valid_until_)
            next_ = valid_until_;
    }

    /// The store refused a commit: another watcher has the lease.
    void fenced() noexcept
    {
        if (phase_ == phase::held)
            phase_ = phase::lost;
    }

    /// True while the lease is held at `now`; a held lease that ran out
    /// becomes lost.
    bool holds(time_point now) noexcept
    {
        if (phase_ == phase::held && now >= valid_until_)
            phase_ = phase::lost;
        return phase_ == phase::held;
    }

private:
    static feed_lease_timing sane(feed_lease_timing t) noexcept
    {
        t.ttl = (std::max)(t.ttl, ms(10));
        if (t.renew_every <= ms(0) || t.renew_every >= t.ttl)
            t.renew_every = t.ttl / 3;
        t.poll_every = (std::max)(t.poll_every, ms(1));
        t.retry_every = (std::max)(t.retry_every, ms(1));
        return t;
    }

    feed_lease_timing t_;
    phase phase_ = phase::standby;
    bool in_flight_ = false;
    call sent_ = call::none;
    time_point sent_at_{};
    time_point next_{};
    time_point valid_until_{};
    std::int64_t token_ = 0;
    std::optional<time_point> acquired_at_;
    std::optional<time_point> holder_expiry_;
};

}  // namespace detail
}  // namespace digital_delivery

#endif
