//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_INTERNAL_GCRA_STORE_HPP
#define DIGITAL_DELIVERY_IMPL_INTERNAL_GCRA_STORE_HPP

/// \file
/// A rate-limit bucket shared by several processes: GCRA (the generic cell
/// rate algorithm) on one theoretical arrival time (TAT), updated with
/// compare-and-swap only. There is no lock, so a process that dies at any
/// instant, a grant half-computed included, leaves a valid state behind: a
/// CAS either happened or did not. Sans-io: every call takes `now`, so the
/// tests drive it on a virtual clock.
///
/// The cell is plain lock-free atomics that may live in shared memory
/// (shm_store). All zeros is a valid initial state (a full bucket, no pause,
/// refilling), so a segment fresh from ftruncate needs no initialisation, and
/// no process can die half-way through one.
///
/// Model, equivalent to token_bucket's: the balance at t is
/// (t + W - max(TAT, t)) / T, with W the window and T = W / capacity the time
/// one point takes to come back. Taking c points sets TAT = max(TAT, t) + c T
/// if the result is at most t + W. Times are steady_clock nanoseconds
/// (CLOCK_MONOTONIC, the same for every process of a host).

#include <digital_delivery/impl/rate_limit/sansio/points_source.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>

namespace digital_delivery {
namespace detail {

struct gcra_cell
{
    /// Theoretical arrival time, ns.
    std::atomic<std::int64_t> tat{0};
    /// 0: refilling; 1: a thaw in progress (or a thawing process died), also
    /// refilling; otherwise the instant refill stopped (hold_refill_until_response).
    std::atomic<std::int64_t> frozen_since{0};
    /// End of the latest 429 pause, ns (0: none).
    std::atomic<std::int64_t> paused_until{0};
    /// Acquires granted (observability, tests).
    std::atomic<std::uint64_t> grants{0};
};

static_assert(std::atomic<std::int64_t>::is_always_lock_free, "the shared bucket needs lock-free 64-bit atomics");

/// A process's view of a shared cell: its capacity and window (every process
/// of a key should use the same), the cell itself elsewhere.
class gcra_points : public points_source
{
public:
    gcra_points(gcra_cell& cell, double capacity, std::chrono::duration<double> window, bool hold) noexcept
        : cell_(cell),
          hold_(hold),
          window_ns_(std::max<std::int64_t>(1, std::llround(std::max(window.count(), 1e-9) * 1e9))),
          capacity_(capacity > 0 ? capacity : 1)
    {
    }

    double capacity() const noexcept override { return capacity_; }
    void set_capacity(double c, time_point) noexcept override { capacity_ = c > 0 ? c : 1; }

    double available(time_point now) noexcept override
    {
        const std::int64_t t = effective(ns(now));
        const std::int64_t tat = cell_.tat.load(std::memory_order_acquire);
        return static_cast<double>(t + window_ns_ - std::max(tat, t)) / per_point();
    }

    bool try_take(double cost, time_point now, double keep = 0) noexcept override
    {
        cost = std::min(cost, capacity());  // a larger cost would never fit: taken as the capacity
        const std::int64_t n = ns(now);
        if (n < cell_.paused_until.load(std::memory_order_acquire))
            return false;
        const std::int64_t c = points_ns(cost);
        // The reserve is checked in the same CAS as the take: the balance
        // after it, (t + W - next) / T, stays at least `keep`.
        const std::int64_t reserve = keep > 0 ? points_ns(std::min(keep, capacity())) : 0;
        for (;;)
        {
            const std::int64_t t = effective(n);
            std::int64_t tat = cell_.tat.load(std::memory_order_acquire);
            const std::int64_t base = std::max(tat, t);
            const std::int64_t next = base + c;
            if (next - window_ns_ + reserve > t + slack_ns)
                return false;
            if (cell_.tat.compare_exchange_weak(tat, next, std::memory_order_acq_rel))
            {
                cell_.grants.fetch_add(1, std::memory_order_relaxed);
                if (hold_ && tat <= t)
                {
                    // From a full bucket: no refill until a response (thaw).
                    std::int64_t f = 0;
                    if (!cell_.frozen_since.compare_exchange_strong(f, n, std::memory_order_acq_rel) && f == 1)
                        cell_.frozen_since.compare_exchange_strong(f, n, std::memory_order_acq_rel);
                }
                return true;
            }
        }
    }

    bool lower_to(double value, time_point now) noexcept override
    {
        const std::int64_t t = effective(ns(now));
        const std::int64_t floor_tat = t + window_ns_ - points_ns(std::max(value, -1e9));
        return raise_tat(floor_tat, t);
    }

    void give_back(double cost, time_point now) noexcept override
    {
        const std::int64_t t = effective(ns(now));
        const std::int64_t c = points_ns(std::max(cost, 0.0));
        std::int64_t tat = cell_.tat.load(std::memory_order_acquire);
        while (tat > t)
        {
            const std::int64_t next = std::max(tat - c, t);
            if (cell_.tat.compare_exchange_weak(tat, next, std::memory_order_acq_rel))
                return;
        }
    }

    bool thaw(time_point now) noexcept override { return thaw_ns(ns(now)); }

    duration time_to_reach(double target, time_point now) noexcept override
    {
        const std::int64_t n = ns(now);
        std::int64_t tat = cell_.tat.load(std::memory_order_acquire);
        const std::int64_t f = cell_.frozen_since.load(std::memory_order_acquire);
        if (f > 1 && n > f)
            tat += n - f;  // as if thawed now (a lower bound, like token_bucket's)
        const std::int64_t wait = tat - window_ns_ + points_ns(target) - n;
        return wait <= 0 ? duration::zero() : std::chrono::duration_cast<duration>(std::chrono::nanoseconds(wait));
    }

    time_point paused_until() const noexcept override
    {
        return time_point(std::chrono::duration_cast<duration>(
            std::chrono::nanoseconds(cell_.paused_until.load(std::memory_order_acquire))));
    }

    void pause_until(time_point end) noexcept override
    {
        const std::int64_t e = ns(end);
        std::int64_t cur = cell_.paused_until.load(std::memory_order_acquire);
        while (cur < e && !cell_.paused_until.compare_exchange_weak(cur, e, std::memory_order_acq_rel))
        {
        }
    }

    std::uint64_t grants() const noexcept { return cell_.grants.load(std::memory_order_relaxed); }

private:
    // A grant computed for "exactly enough points" must be found (token_bucket::epsilon).
    static constexpr std::int64_t slack_ns = 1;

    static std::int64_t ns(time_point t) noexcept
    {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
    }
    double per_point() const noexcept { return static_cast<double>(window_ns_) / capacity_; }
    std::int64_t points_ns(double points) const noexcept
    {
        return static_cast<std::int64_t>(std::ceil(points * per_point()));
    }

    // The time refill counts up to: `n`, or the instant refill stopped while
    // held (an expired hold thaws first, never crediting the held time).
    std::int64_t effective(std::int64_t n) noexcept
    {
        const std::int64_t f = cell_.frozen_since.load(std::memory_order_acquire);
        if (f <= 1 || n <= f)
            return n;
        if (n - f < window_ns_)
            return f;
        thaw_ns(n);
        return n;
    }

    bool thaw_ns(std::int64_t n) noexcept
    {
        std::int64_t f = cell_.frozen_since.load(std::memory_order_acquire);
        if (f <= 1)
            return false;
        if (!cell_.frozen_since.compare_exchange_strong(f, 1, std::memory_order_acq_rel))
            return false;  // another process thaws it
        if (n > f)
            cell_.tat.fetch_add(n - f, std::memory_order_acq_rel);  // refill restarts from n
        std::int64_t one = 1;
        cell_.frozen_since.compare_exchange_strong(one, 0, std::memory_order_acq_rel);  // unless held again since
        return true;
    }

    bool raise_tat(std::int64_t floor_tat, std::int64_t t) noexcept
    {
        std::int64_t tat = cell_.tat.load(std::memory_order_acquire);
        while (std::max(tat, t) < floor_tat)
            if (cell_.tat.compare_exchange_weak(tat, floor_tat, std::memory_order_acq_rel))
                return true;
        return false;
    }

    gcra_cell& cell_;
    bool hold_;
    std::int64_t window_ns_;
    double capacity_;
};

}  // namespace detail
}  // namespace digital_delivery

#endif
