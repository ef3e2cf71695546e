//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_DETAIL_SCHEDULER_CORE_HPP
#define DIGITAL_DELIVERY_DETAIL_SCHEDULER_CORE_HPP

/// \file
/// The sans-io rate-limit scheduler: a token bucket plus an ordered queue of
/// waiters. No timers, no threads, no locks: every input takes `now`, every
/// output says who may proceed and when to call again. The asynchronous
/// rate_limiter (rate_limiter.hpp) drives it under a mutex.

#include <digital_delivery/impl/rate_limit/sansio/points_source.hpp>
#include <digital_delivery/impl/rate_limit/sansio/token_bucket.hpp>
#include <digital_delivery/rate_limit.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

namespace digital_delivery {


namespace detail {

struct scheduler_config
{
    double capacity = 40;
    std::chrono::duration<double> window = std::chrono::seconds(60);
    std::chrono::steady_clock::duration aging_interval = std::chrono::seconds(10);
    std::chrono::steady_clock::duration max_retry_after = std::chrono::seconds(60);
    bool hold_refill_until_response = false;  ///< rate_limit_params::hold_refill_until_response
    bool probe_first = false;                 ///< rate_limit_params::probe_first
    /// rate_limit_params::background_share: a background request leaves
    /// (1 - share) of the capacity in the source until it has waited one
    /// aging_interval. 1: no reserve.
    double background_share = 1;
};

class scheduler_core
{
public:
    using clock = std::chrono::steady_clock;
    using time_point = clock::time_point;
    using duration = clock::duration;
    using waiter_id = std::uint64_t;

    enum class acquire_status
    {
        granted,               ///< The points were taken; proceed now.
        queued,                ///< Wait; poll() will report the outcome.
        deadline_unreachable,  ///< Even the earliest possible grant is after the deadline.
    };

    /// What poll() decided about one queued waiter.
    struct outcome
    {
        waiter_id id;
        bool granted;  ///< false: its deadline became unreachable.
    };

    scheduler_core(const scheduler_config& cfg, time_point now)
        : cfg_(cfg), bucket_(cfg.capacity, cfg.window, now, cfg.hold_refill_until_response), local_(bucket_),
          learning_(cfg.probe_first)
    {
    }
    scheduler_core(const scheduler_core&) = delete;
    scheduler_core& operator=(const scheduler_core&) = delete;

    /// Takes points from `shared` (a store shared with other processes)
    /// instead of the local bucket; nullptr: back to the local bucket (the
    /// fallback when the store fails). The queue and its order stay local.
    void use_source(std::shared_ptr<points_source> shared)
    {
        shared_ = std::move(shared);
        src_ = shared_ ? shared_.get() : static_cast<points_source*>(&local_);
        scan_needed_ = true;
    }
    bool uses_shared_source() const noexcept { return shared_ != nullptr; }

    /// The local bucket (the only one, or the fallback of a shared store).
    token_bucket& local_bucket() noexcept { return bucket_; }

    /// Points granted from the local bucket in all (local_points::taken).
    double local_taken() const noexcept { return local_.taken(); }

    /// A request refused unprocessed (a 429) while the local bucket serves:
    /// not counted in local_taken() (a shared store's fallback reports that
    /// as debt). A request granted by the shared source before it went away
    /// and refused after is uncounted too: at most the requests in flight then.
    void not_charged(double cost) noexcept
    {
        if (src_ == &local_)
            local_.untake(std::max(cost, 0.0));
    }

    /// Grants `cost` at once if no waiter would go first, no 429 pause holds
    /// and the source has the points; else changes nothing.
    bool try_grant(double cost, priority prio, time_point now)
    {
        cost = std::max(cost, 0.0);
        const key k{now + static_cast<int>(prio) * cfg_.aging_interval, seq_};
        const bool at_front = queue_.empty() || k < queue_.begin()->first;
        if (!at_front || now < pause_end() || probe_holds(now) || !src_->try_take(cost, now, keep(prio, now, cost, now)))
            return false;
        granted_one(now);
        return true;
    }

    /// Asks for `cost` points for waiter `id` (unique among queued waiters).
    /// The cost is kept as asked: a cost above the source's capacity (a
    /// fallback bucket smaller than a write, a lowered X-RateLimit-Limit) is
    /// granted once the source holds its capacity, as the source decides
    /// (points_source::try_take).
    acquire_status acquire(
        waiter_id id,
        double cost,
        priority prio,
        std::optional<time_point> deadline,
        time_point now
    )
    {
        if (try_grant(cost, prio, now))
            return acquire_status::granted;
        cost = std::max(cost, 0.0);
        const key k{now + static_cast<int>(prio) * cfg_.aging_interval, seq_++};
        const bool at_back = queue_.empty() || queue_.rbegin()->first < k;
        if (deadline)
        {
            // Points reserved ahead of it: O(1) at the back, O(position) otherwise.
            double ahead = 0;
            if (at_back)
                ahead = total_queued_;
            else
                for (auto it = queue_.begin(); it != queue_.end() && it->first < k; ++it)
                    ahead += it->second.cost;
            if (earliest(ahead + need(cost), now) > *deadline)
                return acquire_status::deadline_unreachable;
        }
        queue_.emplace(k, entry{id, cost, deadline, prio, now});
        index_.emplace(id, k);
        total_queued_ += cost;
        if (deadline)
            ++deadline_waiters_;
        if (!at_back)
            scan_needed_ = true;  // it went ahead of others: their estimates moved later
        return acquire_status::queued;
    }

    /// Removes a queued waiter and releases its reservation (everyone behind
    /// it moves earlier). False if `id` is not queued (already granted or
    /// failed). Call poll() afterwards: the new head may proceed at once.
    bool cancel(waiter_id id)
    {
        auto it = index_.find(id);
        if (it == index_.end())
            return false;
        auto q = queue_.find(it->second);
        erase(q);
        index_.erase(it);
        return true;
    }

    /// Grants what can proceed at `now` (head first, strictly in order), fails
    /// waiters whose deadline can no longer be met, appends both to `out`.
    void poll(time_point now, std::vector<outcome>& out)
    {
        if (now >= pause_end())
        {
            while (!queue_.empty() && !probe_holds(now))
            {
                auto head = queue_.begin();
                const entry& e = head->second;
                if (!src_->try_take(e.cost, now, keep(e.prio, e.enqueued, e.cost, now)))
                    break;
                granted_one(now);
                out.push_back({head->second.id, true});
                index_.erase(head->second.id);
                erase(head);
            }
        }
        if (scan_needed_)
        {
            scan_needed_ = false;
            if (deadline_waiters_ > 0)
                scan_deadlines(now, out);
        }
    }

    /// When poll() should next be called (nullopt: nobody is waiting).
    std::optional<time_point> next_wake(time_point now)
    {
        if (queue_.empty())
            return std::nullopt;
        const entry& e = queue_.begin()->second;
        time_point t = earliest(need(e.cost), now);
        if (const double k = keep(e.prio, e.enqueued, e.cost, now); k > 0)
        {
            // Held by the reserve: until the source holds it as well, or
            // the request has aged out of it, whichever comes first.
            t = std::min(earliest(need(e.cost) + k, now), std::max(t, e.enqueued + cfg_.aging_interval));
        }
        // Held behind a probe: its answer runs the scheduler; this wake only
        // ends a probe nobody reported (probe_timeout()).
        return probe_holds(now) ? std::max(t, probe_at_ + probe_timeout()) : t;
    }

    /// A 429: the server's bucket is empty. With a Retry-After, nothing is
    /// granted before now + min(retry_after, max_retry_after). Returns the new
    /// pause end if the pause was started or extended (a storm of 429s never
    /// shortens it and adds nothing while it already covers the new end).
    std::optional<time_point> on_rate_limited(std::optional<duration> retry_after, time_point now)
    {
        src_->lower_to(0, now);
        from_header_ = false;
        scan_needed_ = true;
        // What the server's bucket holds when the pause ends is unknown
        // again (someone else may be spending it): probe first.
        learning_ = cfg_.probe_first;
        probe_out_ = false;
        if (!retry_after)
            return std::nullopt;
        const duration d = std::clamp(*retry_after, duration::zero(), cfg_.max_retry_after);
        const time_point end = now + d;
        if (d == duration::zero() || end <= paused_until_)
            return std::nullopt;
        paused_until_ = end;
        pause_reported_ = true;
        src_->pause_until(end);
        return end;
    }

    /// True once after a pause reported by on_rate_limited() has ended.
    bool take_resumed(time_point now) noexcept
    {
        if (pause_reported_ && now >= paused_until_)
        {
            pause_reported_ = false;
            return true;
        }
        return false;
    }

    /// Folds in the server's X-RateLimit-* figures. Conservative: the local
    /// balance is only ever lowered (a stale or reordered header can never add
    /// points), and the capacity only ever lowered below the configured one.
    /// Returns true when the estimate changed.
    bool observe(const rate_limit_snapshot& s, time_point now)
    {
        bool changed = false;
        if (s.limit || s.remaining || s.reset)
            last_header_ = s;
        if (s.limit && *s.limit > 0 && static_cast<double>(*s.limit) < src_->capacity())
        {
            src_->set_capacity(static_cast<double>(*s.limit), now);
            changed = true;
        }
        if (s.remaining && src_->lower_to(static_cast<double>(*s.remaining), now))
        {
            from_header_ = true;
            changed = true;
        }
        if (changed)
            scan_needed_ = true;
        return changed;
    }

    /// The server answered a request (any status but 429; its X-RateLimit-*
    /// figures, if any, folded in by observe() first): what the server's
    /// bucket holds is known, and every waiter may go as the estimate allows.
    /// An answer during a 429 pause says nothing about the bucket when the
    /// pause ends: only one after it counts.
    void on_answer(time_point now) noexcept
    {
        if (learning_ && (probe_out_ || now >= pause_end()))
        {
            learning_ = probe_out_ = false;
            scan_needed_ = true;
        }
    }

    /// A request ended without an answer (a transport failure, a timeout, a
    /// cancellation; or its points were refunded): if a probe was out, the
    /// next waiter goes first instead (nothing hangs on a probe that failed).
    void on_unanswered() noexcept { probe_out_ = false; }

    /// True while a probe is out and its answer awaited: nothing else is
    /// granted (rate_limit_params::probe_first).
    bool probing() const noexcept { return learning_ && probe_out_; }

    /// The source's estimates moved by themselves (a remote store answered):
    /// the next poll checks every waiter's deadline against them again.
    void source_changed() noexcept { scan_needed_ = true; }

    /// Gives back points of a request that provably never reached the server.
    void refund(double cost, time_point now)
    {
        on_unanswered();
        src_->give_back(std::max(cost, 0.0), now);
        if (src_->thaw(now))
            scan_needed_ = true;
    }

    /// A response (or a final transport failure) came back: refilling, frozen
    /// since a take from a full bucket, resumes (token_bucket::thaw).
    void on_response(time_point now)
    {
        if (src_->thaw(now))
            scan_needed_ = true;
    }

    /// Snapshot for observability: the local estimate, or the server's figures
    /// when they set the estimate and nothing was granted since.
    rate_limit_snapshot snapshot(time_point now, std::chrono::system_clock::time_point sys_now)
    {
        rate_limit_snapshot s;
        const double avail = src_->available(now);
        s.limit = static_cast<std::int64_t>(src_->capacity());
        s.remaining = static_cast<std::int64_t>(std::floor(std::max(0.0, avail) + token_bucket::epsilon));
        const auto to_full = std::chrono::duration_cast<std::chrono::system_clock::duration>(
            src_->time_to_reach(src_->capacity(), now));
        s.reset = sys_now + to_full;
        s.source = rate_limit_source::estimate;
        s.observed_at = sys_now;
        if (from_header_ && last_header_)
        {
            if (last_header_->limit)
                s.limit = last_header_->limit;
            if (last_header_->reset)
                s.reset = last_header_->reset;
            s.source = rate_limit_source::header;
        }
        return s;
    }

    double available(time_point now) { return src_->available(now); }
    double capacity() const noexcept { return src_->capacity(); }
    double reserved() const noexcept { return queue_.empty() ? 0.0 : total_queued_; }
    std::size_t queued() const noexcept { return queue_.size(); }
    time_point paused_until() const noexcept { return pause_end(); }
    /// A 429 pause: ours, or one another process recorded in the shared source.
    time_point pause_end() const noexcept { return std::max(paused_until_, src_->paused_until()); }
    bool is_queued(waiter_id id) const { return index_.count(id) != 0; }
    std::optional<waiter_id> head() const
    {
        if (queue_.empty())
            return std::nullopt;
        return queue_.begin()->second.id;
    }

    /// Earliest time at which `points` more points can have been granted, from
    /// the current balance (a lower bound, honouring the pause).
    /// What the source must hold before a request of `cost` can be taken: the
    /// cost, or the capacity when the cost is larger (taken from a full source).
    double need(double cost) const noexcept { return std::min(cost, src_->capacity()); }

    /// The points a request of class `prio`, waiting since `enqueued`, must
    /// leave in the source when it takes `cost` at `now`: a background
    /// request's reserve, (1 - background_share) of the capacity, until it
    /// has waited one aging_interval (then it is a normal request: never
    /// starved); never so much that the request would not fit a full source.
    double keep(priority prio, time_point enqueued, double cost, time_point now) const noexcept
    {
        if (prio != priority::background || !(cfg_.background_share < 1) || now - enqueued >= cfg_.aging_interval)
            return 0;
        const double cap = src_->capacity();
        const double reserve = (1 - std::max(cfg_.background_share, 0.0)) * cap;
        return std::max(0.0, std::min(reserve, cap - need(cost)));
    }

    time_point earliest(double points, time_point now)
    {
        const time_point by_refill = now + src_->time_to_reach(points, now);
        return std::max(by_refill, pause_end());
    }

private:
    struct key
    {
        time_point virtual_time;  // enqueue time + class * aging_interval
        std::uint64_t seq;
        bool operator<(const key& o) const noexcept
        {
            return virtual_time < o.virtual_time || (virtual_time == o.virtual_time && seq < o.seq);
        }
    };
    struct entry
    {
        waiter_id id;
        double cost;
        std::optional<time_point> deadline;
        priority prio;
        time_point enqueued;
    };
    using queue_type = std::map<key, entry>;

    // A probe is out and its answer awaited. A probe never reported (a
    // driver that lost it) holds the others for probe_timeout() at most.
    bool probe_holds(time_point now) noexcept
    {
        if (probing() && now >= probe_at_ + probe_timeout())
            probe_out_ = false;
        return probing();
    }

    duration probe_timeout() const noexcept
    {
        return std::chrono::duration_cast<duration>(cfg_.window);
    }

    void granted_one(time_point now) noexcept
    {
        from_header_ = false;
        if (learning_)
        {
            probe_out_ = true;
            probe_at_ = now;
        }
    }

    void erase(queue_type::iterator it)
    {
        total_queued_ -= it->second.cost;
        if (it->second.deadline)
            --deadline_waiters_;
        queue_.erase(it);
        if (queue_.empty())
            total_queued_ = 0;  // no drift
    }

    void scan_deadlines(time_point now, std::vector<outcome>& out)
    {
        double cum = 0;
        for (auto it = queue_.begin(); it != queue_.end();)
        {
            const double c = cum + it->second.cost;
            if (it->second.deadline && earliest(cum + need(it->second.cost), now) > *it->second.deadline)
            {
                out.push_back({it->second.id, false});
                index_.erase(it->second.id);
                auto next = std::next(it);
                erase(it);
                it = next;
                continue;
            }
            cum = c;
            ++it;
        }
    }

    scheduler_config cfg_;
    token_bucket bucket_;
    local_points local_;
    std::shared_ptr<points_source> shared_;
    points_source* src_ = &local_;
    queue_type queue_;
    std::unordered_map<waiter_id, key> index_;
    double total_queued_ = 0;
    std::size_t deadline_waiters_ = 0;
    std::uint64_t seq_ = 0;
    time_point paused_until_{};
    bool pause_reported_ = false;
    bool scan_needed_ = false;
    bool from_header_ = false;
    bool learning_ = false;   // the server's bucket is unknown: one request at a time
    bool probe_out_ = false;  // that request was granted, its answer not yet seen
    time_point probe_at_{};
    std::optional<rate_limit_snapshot> last_header_;
};

}  // namespace detail
}  // namespace digital_delivery

#endif
