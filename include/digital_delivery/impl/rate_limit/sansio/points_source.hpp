//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_INTERNAL_POINTS_SOURCE_HPP
#define DIGITAL_DELIVERY_IMPL_INTERNAL_POINTS_SOURCE_HPP

/// \file
/// Where the scheduler's points come from (issue 16): the process's own
/// token bucket, or a store shared with other processes (shared memory). The
/// scheduler (scheduler_core) keeps ordering its local waiters; a source only
/// grants points. Sans-io: every call takes `now`.

#include <digital_delivery/impl/rate_limit/sansio/token_bucket.hpp>

#include <algorithm>

#include <chrono>

namespace digital_delivery {
namespace detail {

class points_source
{
public:
    using clock = std::chrono::steady_clock;
    using time_point = clock::time_point;
    using duration = clock::duration;

    virtual ~points_source() = default;

    virtual double capacity() const noexcept = 0;
    /// Lowers the capacity (a smaller X-RateLimit-Limit); the window stays.
    virtual void set_capacity(double capacity, time_point now) noexcept = 0;
    /// The balance at `now` (may be negative).
    virtual double available(time_point now) noexcept = 0;
    /// Takes `cost` if the balance allows it at `now` and leaves at least
    /// `keep` points in the source after the take (the reserve a background
    /// request may not touch: rate_limit_params::background_share; 0: none).
    /// A cost above the capacity is the source's to handle: the local bucket
    /// takes it whole once it is full (its balance goes below zero), a shared
    /// store takes at most its capacity.
    virtual bool try_take(double cost, time_point now, double keep = 0) noexcept = 0;
    /// Lowers the balance to `value` if higher; never raises it.
    virtual bool lower_to(double value, time_point now) noexcept = 0;
    /// Gives points back (never above capacity).
    virtual void give_back(double cost, time_point now) noexcept = 0;
    /// A response came back: refill, held since a take from a full bucket, resumes.
    virtual bool thaw(time_point now) noexcept = 0;
    /// How long from `now` until the balance reaches `target` (a lower bound).
    virtual duration time_to_reach(double target, time_point now) noexcept = 0;
    /// The end of a 429 pause recorded in the source (by any process); the
    /// epoch when none.
    virtual time_point paused_until() const noexcept { return {}; }
    /// Records a 429 pause for every user of the source (never shortens one).
    virtual void pause_until(time_point) noexcept {}
};

/// The process's own bucket (today's behaviour, the default).
class local_points final : public points_source
{
public:
    explicit local_points(token_bucket& b) noexcept : b_(b) {}
    double capacity() const noexcept override { return b_.capacity(); }
    void set_capacity(double c, time_point now) noexcept override { b_.set_capacity(c, now); }
    double available(time_point now) noexcept override { return b_.available(now); }
    /// A cost above the capacity (a fallback bucket smaller than a write)
    /// is taken whole once the bucket is full: the balance goes below zero
    /// and refills from there, so the points granted over time stay the
    /// bucket's refill, and taken() (the debt a shared store's fallback
    /// reports) counts what the server is charged.
    bool try_take(double cost, time_point now, double keep = 0) noexcept override
    {
        if (cost <= 0)
            return true;  // free: nothing to take, whatever the balance
        const double need = std::min(cost, b_.capacity());
        if (keep > 0 && b_.available(now) + token_bucket::epsilon < need + keep)
            return false;
        if (!b_.try_take(need, now))
            return false;
        if (cost > need)
            b_.take(cost - need, now);
        taken_ += cost;
        return true;
    }
    bool lower_to(double v, time_point now) noexcept override { return b_.lower_to(v, now); }
    void give_back(double cost, time_point now) noexcept override { b_.give_back(cost, now); }
    bool thaw(time_point now) noexcept override { return b_.thaw(now); }
    duration time_to_reach(double target, time_point now) noexcept override { return b_.time_to_reach(target, now); }

    /// Points granted from this bucket in all (refunds not subtracted, 429s
    /// subtracted: untake): a shared store's fallback reports them as debt
    /// when the store is back.
    double taken() const noexcept { return taken_; }
    /// A grant the server refused unprocessed: not counted in taken() (its
    /// points stay spent in the bucket: the 429 emptied it anyway).
    void untake(double cost) noexcept { taken_ = std::max(0.0, taken_ - cost); }

private:
    token_bucket& b_;
    double taken_ = 0;
};

}  // namespace detail
}  // namespace digital_delivery

#endif
