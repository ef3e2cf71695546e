//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
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

    token_bucket(double capacity, std::chrono::duration<double> window, time_point now) noexcept
        : capacity_(capacity > 0 ? capacity : 1),
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
    void refill(time_point now) noexcept
    {
        if (now <= last_)
            return;
        const double dt = std::chrono::duration<double>(now - last_).count();
        tokens_ = std::min(capacity_, tokens_ + dt * per_second_);
        last_ = now;
    }

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
        tokens_ -= cost;
        return true;
    }

    /// Takes `cost` unconditionally (the balance may go negative).
    void take(double cost, time_point now) noexcept
    {
        refill(now);
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
    double capacity_;
    double per_second_;
    std::chrono::duration<double> window_;
    double tokens_;
    time_point last_;
};

}  // namespace detail
}  // namespace digital_delivery

#endif
