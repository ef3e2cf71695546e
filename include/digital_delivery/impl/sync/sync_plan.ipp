//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_SYNC_SYNC_PLAN_IPP
#define DIGITAL_DELIVERY_IMPL_SYNC_SYNC_PLAN_IPP

// The sync's error category and the names of its plan's values
// (<digital_delivery/sync_plan.hpp>).

#include <digital_delivery/sync_plan.hpp>

#include <boost/system/error_category.hpp>

#include <string>
#include <string_view>

namespace digital_delivery {

// ---- errors and names ------------------------------------------------------------------

namespace detail {

class sync_category final : public boost::system::error_category
{
public:
    const char* name() const noexcept override { return "digital_delivery.sync"; }
    std::string message(int v) const override
    {
        switch (static_cast<sync_errc>(v))
        {
        case sync_errc::locked: return "another sync of this folder is running (its lock is held)";
        case sync_errc::not_a_directory: return "the folder to sync is not a readable directory";
        case sync_errc::state_inside_tree: return "the state file is inside the folder to sync: keep it outside";
        case sync_errc::deletes_refused_empty: return "deletes refused: the local side is empty";
        case sync_errc::deletes_refused_shrink: return "deletes refused: the local side shrank by more than the threshold";
        case sync_errc::deletes_refused_max: return "deletes refused: more than max_delete planned";
        case sync_errc::linked_asset: return "the asset is linked to a digital product: not deleted";
        case sync_errc::file_changed: return "the file changed between its hash and its upload: skipped";
        case sync_errc::file_too_large: return "the file is larger than 2 GB: skipped";
        case sync_errc::file_unreadable: return "the file cannot be read: skipped";
        case sync_errc::points_exhausted: return "the run's point budget is spent: the rest waits for the next run";
        case sync_errc::quota_exceeded: return "the store's asset quota is reached: no more creates";
        case sync_errc::uploads_failed: return "an upload failed: the planned deletes were not run";
        case sync_errc::ambiguous_adopt: return "several internal assets have this filename and byte_size";
        case sync_errc::action_failed: return "some actions of the sync failed";
        }
        return "unknown sync error";
    }
};

}  // namespace detail

DIGITAL_DELIVERY_DECL const boost::system::error_category& get_sync_category() noexcept
{
    static const detail::sync_category c;
    return c;
}

DIGITAL_DELIVERY_DECL std::string_view to_string(sync_action_kind k) noexcept
{
    switch (k)
    {
    case sync_action_kind::create: return "create";
    case sync_action_kind::replace: return "replace";
    case sync_action_kind::delete_asset: return "delete";
    case sync_action_kind::adopt: return "adopt";
    case sync_action_kind::move: return "move";
    case sync_action_kind::skip: return "skip";
    case sync_action_kind::ambiguous: return "ambiguous";
    }
    return "unknown";
}

DIGITAL_DELIVERY_DECL std::string_view to_string(sync_reason r) noexcept
{
    switch (r)
    {
    case sync_reason::new_file: return "new_file";
    case sync_reason::content_changed: return "content_changed";
    case sync_reason::moved: return "moved";
    case sync_reason::moved_renamed: return "moved_renamed";
    case sync_reason::remote_changed: return "remote_changed";
    case sync_reason::remote_deleted: return "remote_deleted";
    case sync_reason::adopted: return "adopted";
    case sync_reason::local_deleted: return "local_deleted";
    case sync_reason::journal_recovered: return "journal_recovered";
    case sync_reason::refused: return "refused";
    }
    return "unknown";
}

DIGITAL_DELIVERY_DECL std::string_view to_string(sync_outcome o) noexcept
{
    switch (o)
    {
    case sync_outcome::complete: return "complete";
    case sync_outcome::partial: return "partial";
    case sync_outcome::quota_stopped: return "quota_stopped";
    case sync_outcome::failed: return "failed";
    }
    return "unknown";
}

}  // namespace digital_delivery

#endif
