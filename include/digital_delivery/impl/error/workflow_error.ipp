//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_WORKFLOW_ERROR_IPP
#define DIGITAL_DELIVERY_IMPL_WORKFLOW_ERROR_IPP

#include <digital_delivery/workflow_error.hpp>

#include <string>

namespace digital_delivery {
namespace detail {

class workflow_category final : public boost::system::error_category
{
public:
    const char* name() const noexcept override { return "digital_delivery.workflow"; }
    std::string message(int ev) const override
    {
        switch (static_cast<workflow_errc>(ev))
        {
        case workflow_errc::pagination_total_changed:
            return "the list's total_count changed while paginating (items may be skipped or repeated)";
        case workflow_errc::pagination_page_size_mismatch:
            return "a page held fewer or more items than total_count and per_page imply (the list changed while paginating)";
        case workflow_errc::operation_in_progress: return "another operation on this object is in progress";
        case workflow_errc::concurrent_modification:
            return "another writer changed the digital product's assets concurrently";
        }
        return "unknown workflow error";
    }
};

}  // namespace detail

DIGITAL_DELIVERY_DECL const boost::system::error_category& get_workflow_category() noexcept
{
    static const detail::workflow_category cat;
    return cat;
}

}  // namespace digital_delivery

#endif
