//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_SYNC_SANSIO_SYNC_APPLY_CORE_HPP
#define DIGITAL_DELIVERY_IMPL_SYNC_SANSIO_SYNC_APPLY_CORE_HPP

// The apply's rules, without I/O: which action a free transfer slot takes
// next, when the run stops starting actions (max_points, a quota), when the
// deletes may run (every upload of the run succeeded), and how the run
// ended. The driver (impl/sync/sync.ipp) runs `transfers` workers that each
// loop take() -> carry out -> finish().

#include <digital_delivery/error.hpp>
#include <digital_delivery/sync_plan.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace digital_delivery {
namespace detail {

class sync_apply_core
{
public:
    enum class next_kind
    {
        local,   // adopt / move: manifest writes only
        upload,  // create / replace through the journal
        remove,  // delete_asset
        done,    // nothing for this worker now (the run may still have work in flight)
    };
    struct next
    {
        next_kind kind = next_kind::done;
        std::size_t index = 0;
    };

    sync_apply_core(const sync_plan& p, std::optional<std::int64_t> max_points) : plan_(p), max_points_(max_points)
    {
        for (std::size_t i = 0; i < p.actions.size(); ++i)
            switch (p.actions[i].kind)
            {
            case sync_action_kind::move:
            case sync_action_kind::adopt: local_.push_back(i); break;
            case sync_action_kind::create:
            case sync_action_kind::replace: uploads_.push_back(i); break;
            case sync_action_kind::delete_asset: deletes_.push_back(i); break;
            default: break;
            }
    }

    /// The next action for a free worker.
    next take()
    {
        if (next_local_ < local_.size())
            return {next_kind::local, local_[next_local_++]};
        if (next_upload_ < uploads_.size())
        {
            if (stop_)
                return {};
            return start(uploads_, next_upload_, next_kind::upload);
        }
        // Deletes: only once every upload of the run ended, all of them well.
        if (in_flight_ > 0 || upload_failed_ || stop_ || next_delete_ >= deletes_.size())
            return {};
        return start(deletes_, next_delete_, next_kind::remove);
    }

    /// An action taken by take() ended.
    /// \param i Its index.
    /// \param ec Its error (none: done). sync_errc::file_changed is a skip, not a failure.
    void finish(std::size_t i, error_code ec)
    {
        const sync_action& a = plan_.actions[i];
        const bool counted = a.kind == sync_action_kind::create || a.kind == sync_action_kind::replace ||
                             a.kind == sync_action_kind::delete_asset;
        if (counted && in_flight_ > 0)
            --in_flight_;
        if (!ec)
            return;
        if (ec == sync_errc::file_changed)
        {
            ++skipped_;
            return;
        }
        ++failed_;
        if (a.kind == sync_action_kind::create || a.kind == sync_action_kind::replace)
            upload_failed_ = true;
        if (ec == api_errc::asset_storage_limit_exceeded || ec == api_errc::asset_count_limit_exceeded)
            stop(make_error_code(sync_errc::quota_exceeded));
    }

    /// Stops starting uploads and deletes (in-flight ones finish).
    void stop(error_code why)
    {
        if (!stop_)
            stop_ = why;
    }

    /// \return Why the run stopped starting actions (none: it did not).
    error_code stopped() const noexcept { return stop_; }
    /// \return Points charged by take() so far.
    std::int64_t points() const noexcept { return points_; }
    /// \return Actions in flight.
    std::size_t in_flight() const noexcept { return in_flight_; }
    /// \return Actions that failed.
    std::uint64_t failed() const noexcept { return failed_; }
    /// \return Actions never started (left for the next run).
    std::uint64_t not_started() const noexcept
    {
        return (local_.size() - next_local_) + (uploads_.size() - next_upload_) + (deletes_.size() - next_delete_);
    }

    /// How the run ended, and its error (none only for complete).
    std::pair<sync_outcome, error_code> outcome() const noexcept
    {
        if (stop_ == sync_errc::quota_exceeded)
            return {sync_outcome::quota_stopped, stop_};
        if (stop_ == sync_errc::points_exhausted)
            return {sync_outcome::partial, stop_};
        if (stop_)
            return {sync_outcome::failed, stop_};
        if (failed_ > 0)
            return {sync_outcome::failed, make_error_code(upload_failed_ && !deletes_.empty() ? sync_errc::uploads_failed
                                                                                                : sync_errc::action_failed)};
        return {sync_outcome::complete, {}};
    }

private:
    // Starts `queue[at]` when its points fit the budget (then in flight).
    next start(const std::vector<std::size_t>& queue, std::size_t& at, next_kind kind)
    {
        const std::size_t i = queue[at];
        if (!charge(plan_.actions[i].points))
            return {};
        ++at;
        ++in_flight_;
        return {kind, i};
    }

    bool charge(std::int64_t p)
    {
        if (max_points_ && points_ + p > *max_points_)
        {
            stop(make_error_code(sync_errc::points_exhausted));
            return false;
        }
        points_ += p;
        return true;
    }

    const sync_plan& plan_;
    std::optional<std::int64_t> max_points_;
    std::vector<std::size_t> local_, uploads_, deletes_;
    std::size_t next_local_ = 0, next_upload_ = 0, next_delete_ = 0, in_flight_ = 0;
    std::int64_t points_ = 0;
    std::uint64_t failed_ = 0, skipped_ = 0;
    bool upload_failed_ = false;
    error_code stop_{};
};

}  // namespace detail
}  // namespace digital_delivery

#endif
