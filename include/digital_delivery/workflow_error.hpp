//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_WORKFLOW_ERROR_HPP
#define DIGITAL_DELIVERY_WORKFLOW_ERROR_HPP

/// \file
/// `workflow_errc`: the errors of the workflow helpers (pagination, asset-list
/// edits), about the data of several responses rather than one.

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/error.hpp>

#include <boost/system/error_category.hpp>

#include <type_traits>

namespace digital_delivery {

/// Failures detected by the workflow helpers (they are about the data the
/// server returned across several requests, not about one response).
/// Category name "digital_delivery.workflow".
enum class workflow_errc : int
{
    /// paginate: `pagination.total_count` differs from the first page's:
    /// items were created or deleted while iterating, so items may be skipped
    /// or repeated.
    pagination_total_changed = 1,

    /// paginate: a page holds fewer (or more) items than `total_count` and
    /// `per_page` imply (a short page before the last one, an empty page
    /// before `total_pages`): the list changed while iterating.
    pagination_page_size_mismatch,

    /// async_next() called while another async_next() of the same range is
    /// still in flight.
    operation_in_progress,

    /// async_add_assets / async_remove_assets: another writer changed the
    /// digital product's assets between our read and our write (seen by the
    /// re-read before the PATCH, or in the PATCH result).
    concurrent_modification,
};

/// \return The category of workflow_errc.
DIGITAL_DELIVERY_DECL const boost::system::error_category& get_workflow_category() noexcept;

/// \param e A workflow_errc. \return It as an error_code (implicit conversions use this).
inline error_code make_error_code(workflow_errc e) noexcept { return {static_cast<int>(e), get_workflow_category()}; }

}  // namespace digital_delivery

namespace boost {
namespace system {
template <>
struct is_error_code_enum<::digital_delivery::workflow_errc> : std::true_type
{
};
}  // namespace system
}  // namespace boost

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/error/workflow_error.ipp>
#endif

#endif
