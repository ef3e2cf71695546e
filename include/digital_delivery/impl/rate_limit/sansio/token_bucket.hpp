//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_DETAIL_TOKEN_BUCKET_HPP
#define DIGITAL_DELIVERY_DETAIL_TOKEN_BUCKET_HPP

/// \file
/// A sans-io token bucket: no clock of its own, every call takes `now`.

#include <algorithm>
#include <chrono>
#include <cmath>

namespace digital_delivery {
namespace detail {

/// Points refill continuously at capacity / window, up to capacity. The
/// balance may be lowered below zero (a 429 or a server header says the
/// bucket is emptier than we thought); it then refills from there.
class token_bucket
{
public:
    using clock = std::chrono::steady_clock;
    using time_point = clock::time_point;
    using duration = clock::duration;

    /// Tolerance for floating-point comparisons (a wake-up computed for
    /// "exactly one point" must find one point).
    static constexpr double epsilon = 1e-9;

    /// `hold_after_full`: after a take from a full bucket, refill waits for
    /// thaw() (see freeze_if_full()).
    token_bucket(double capacity, std::chrono::duration<double> window, time_point now, bool hold_after_full = false) noexcept
        : hold_after_full_(hold_after_full),
          capacity_(capacity > 0 ? capacity : 1),
          per_second_(capacity_ / (window.count() > 0 ? window.count() : 1.0)),
          window_(window.count() > 0 ? window : std::chrono::duration<double>(1.0)),
          tokens_(capacity_),
          last_(now)
    {
    }

    double capacity() const noexcept { return capacity_; }
    double per_second() const noexcept { return per_second_; }

    /// Changes the capacity (the window stays); the balance is capped.
    void set_capacity(double capacity, time_point now) noexcept
    {
        refill(now);
        capacity_ = capacity > 0 ? capacity : 1;
        per_second_ = capacity_ / window_.count();
        tokens_ = std::min(tokens_, capacity_);
    }

    /// Brings the balance up to `now` (time never goes backwards here).
    /// No refill while frozen (see take_from_full()).
    void refill(time_point now) noexcept
    {
        if (now <= last_)
            return;
        if (frozen_)
        {
            if (now - frozen_since_ < max_freeze())
            {
                last_ = now;
                return;
            }
            frozen_ = false;  // no response came back: resume, never crediting the frozen time
            last_ = now;
            return;
        }
        const double dt = std::chrono::duration<double>(now - last_).count();
        tokens_ = std::min(capacity_, tokens_ + dt * per_second_);
        last_ = now;
    }

    /// Resumes refilling (a response arrived: the server has debited at least
    /// the first request taken from a full bucket). Returns true if it was frozen.
    bool thaw(time_point now) noexcept
    {
        if (!frozen_)
            return false;
        refill(now);
        frozen_ = false;
        last_ = std::max(last_, now);
        return true;
    }

    bool frozen() const noexcept { return frozen_; }

    /// The balance at `now` (may be negative).
    double available(time_point now) noexcept
    {
        refill(now);
        return tokens_;
    }

    /// Takes `cost` if available at `now`.
    bool try_take(double cost, time_point now) noexcept
    {
        refill(now);
        if (tokens_ + epsilon < cost)
            return false;
        freeze_if_full();
        tokens_ -= cost;
        return true;
    }

    /// Takes `cost` unconditionally (the balance may go negative).
    void take(double cost, time_point now) noexcept
    {
        refill(now);
        freeze_if_full();
        tokens_ -= cost;
    }

    /// Gives points back (never above capacity).
    void give_back(double cost, time_point now) noexcept
    {
        refill(now);
        tokens_ = std::min(capacity_, tokens_ + cost);
    }

    /// Lowers the balance to `value` if it is higher; never raises it.
    /// Returns true when the balance changed.
    bool lower_to(double value, time_point now) noexcept
    {
        refill(now);
        if (value + epsilon >= tokens_)
            return false;
        tokens_ = value;
        return true;
    }

    /// How long from `now` until the balance reaches `target` (zero if it
    /// already has). `target` above capacity is reachable only as a sum of
    /// several sequential grants; the result is then the lower bound.
    duration time_to_reach(double target, time_point now) noexcept
    {
        refill(now);
        const double missing = target - tokens_;
        if (missing <= epsilon)
            return duration::zero();
        const std::chrono::duration<double> secs(missing / per_second_);
        return std::chrono::ceil<duration>(secs);
    }

private:
    // Taking from a full bucket: the server's bucket is (almost surely) full
    // too, and stays clamped at capacity, refilling nothing, until our first
    // request reaches it. Refill counted from our own take would be refill the
    // server never had (measured: 2 points too many in a 40-point burst when
    // the first request took 25 ms to arrive). So refill waits for the first
    // response (thaw()), or max_freeze() if none comes.
    void freeze_if_full() noexcept
    {
        if (hold_after_full_ && !frozen_ && tokens_ + epsilon >= capacity_)
        {
            frozen_ = true;
            frozen_since_ = last_;
        }
    }
    duration max_freeze() const noexcept
    {
        return std::chrono::duration_cast<duration>(std::chrono::duration<double>(std::max(window_.count(), 1.0)));
    }

    bool hold_after_full_;
    double capacity_;
    double per_second_;
    std::chrono::duration<double> window_;
    double tokens_;
    time_point last_;
    bool frozen_ = false;
    time_point frozen_since_{};
};

}  // namespace detail
}  // namespace digital_delivery

#endif
