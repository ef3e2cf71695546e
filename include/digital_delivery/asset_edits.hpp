//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_ASSET_EDITS_HPP
#define DIGITAL_DELIVERY_ASSET_EDITS_HPP

/// \file
/// Adding assets to, and removing assets from, a digital product.
///
/// The API has no add/remove: `PATCH /digital_products/{id}` with `asset_ids`
/// REPLACES the whole list. These helpers do what the API documentation
/// recommends: read the current list (GET), change it, and PATCH the full
/// list.
///
/// \code
/// const std::vector<std::string> added{asset_id}, removed{old_id};
/// dd::digital_product p = co_await dd::async_add_assets(client, product_id, added);
/// auto [ec, q] = co_await dd::async_remove_assets(client, product_id, removed, asio::as_tuple(asio::deferred));
/// if (ec == dd::workflow_errc::concurrent_modification) { /* someone else edited it: re-read and decide */ }
/// \endcode
///
/// \par Not atomic
/// Another writer can change the product between our GET and our PATCH; the
/// PATCH then overwrites its change (lost update). The API offers no
/// conditional write, so this cannot be prevented; the helpers narrow the
/// window and report what they can see:
///  - with `asset_edit_options::recheck_before_patch` (default), the product
///    is read again right before the PATCH; if its asset list or
///    `updated_at` changed, nothing is written and the operation completes
///    with `workflow_errc::concurrent_modification` and the re-read product;
///  - after the PATCH, the returned asset list must be exactly the intended
///    one (same ids, same order); otherwise the operation completes with
///    `workflow_errc::concurrent_modification` and the PATCH result (the
///    write did happen, and another write interleaved with it).
/// A writer that changes the product between the re-read and the PATCH is
/// not detected.
///
/// \par Semantics
///  - add: ids already linked are kept where they are; new ids are appended
///    in the given order (duplicates dropped);
///  - remove: every given id is removed; ids not linked are ignored;
///  - when the list would not change, no PATCH is sent and the operation
///    completes with the product as read;
///  - removing the last asset sends an empty list, which the API may refuse
///    (422).
/// Requests: 1 GET (+1 GET with recheck) + 1 PATCH, each sent with the
/// request options (their deadline bounds the whole operation, as it is one
/// time point).
///
/// Completion signature `void(error_code, digital_product)`.
///
/// \par Per-operation cancellation
/// Terminal cancellation interrupts the request in flight and completes with
/// boost::asio::error::operation_aborted. It is also checked right before the
/// PATCH: a cancellation requested before then guarantees nothing was written.

#include <digital_delivery/client.hpp>
#include <digital_delivery/detail/client_impl.hpp>
#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/workflow_error.hpp>
#include <digital_delivery/diagnostics.hpp>
#include <digital_delivery/digital_product.hpp>
#include <digital_delivery/id_list.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/detail/trailing_args.hpp>
#include <digital_delivery/request_options.hpp>
#include <digital_delivery/string_ref.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/deferred.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace digital_delivery {

/// Options of async_add_assets / async_remove_assets.
struct asset_edit_options
{
    /// Read the product again right before the PATCH to detect a concurrent
    /// writer (one more GET, 1 point).
    bool recheck_before_patch = true;
};

namespace detail {

enum class asset_edit_kind
{
    add,
    remove,
};

using asset_edit_handler = boost::asio::any_completion_handler<void(error_code, digital_product)>;

/// The new asset list (pure; unit-testable).
DIGITAL_DELIVERY_DECL std::vector<std::string> edited_asset_ids(
    const std::vector<std::string>& current,
    const std::vector<std::string>& ids,
    asset_edit_kind kind
);

/// The asset ids of a product, in order.
DIGITAL_DELIVERY_DECL std::vector<std::string> asset_ids_of(const digital_product& p);

DIGITAL_DELIVERY_DECL void async_edit_assets(
    std::shared_ptr<client_impl> impl,
    std::string product_id,
    std::vector<std::string> ids,
    asset_edit_kind kind,
    asset_edit_options opts,
    stored_request_options request,
    diagnostics* diag,
    asset_edit_handler h
);

struct asset_edit_initiation
{
    template <class Handler>
    void operator()(
        Handler&& h,
        diagnostics* diag,
        std::shared_ptr<client_impl> impl,
        std::string product_id,
        std::vector<std::string> ids,
        asset_edit_kind kind,
        asset_edit_options opts,
        stored_request_options request
    ) const
    {
        async_edit_assets(
            std::move(impl), std::move(product_id), std::move(ids), kind, std::move(opts), std::move(request), diag,
            asset_edit_handler(std::forward<Handler>(h))
        );
    }
};

template <class Trailing>
auto initiate_asset_edit(client& c, std::string_view id, id_list ids, asset_edit_kind kind, Trailing t)
{
    const asset_edit_options* o = t.op_options();
    const request_options* r = t.options();
    return t.template initiate<void(error_code, digital_product)>(
        asset_edit_initiation{}, access::impl(c), std::string(id), std::vector<std::string>(ids.begin(), ids.end()), kind,
        o ? *o : asset_edit_options{}, stored_request_options(r)
    );
}

}  // namespace detail

/// Links `asset_ids` to the digital product (read, append, PATCH the full
/// list). NOT atomic: see the file comment. Call shape (docs/operations.md):
/// `async_add_assets(client, product_id, asset_ids, [asset_edit_options],
/// [request_options], [diagnostics&], [token])`; the request options and
/// diagnostics apply to each request (GET, GET, PATCH), the deadline to the
/// whole operation. Completes with the digital product as PATCHed.
/// \param c The client.
/// \param digital_product_id The digital product.
/// \param asset_ids The assets to link.
/// \param rest [asset_edit_options], [request_options], [diagnostics&], [token].
/// \return What the completion token makes of the operation (an awaitable by default).
template <class... Rest>
    requires(detail::trailing<asset_edit_options, Rest...>::template valid<id_list>())
auto async_add_assets(client& c, string_ref digital_product_id, id_list asset_ids, Rest&&... rest)
{
    return detail::initiate_asset_edit(
        c, digital_product_id, asset_ids, detail::asset_edit_kind::add,
        detail::make_trailing<asset_edit_options>(std::forward<Rest>(rest)...)
    );
}

/// Unlinks `asset_ids` from the digital product (read, remove, PATCH the
/// full list). NOT atomic: see the file comment. Same call shape as
/// async_add_assets.
/// \param c The client.
/// \param digital_product_id The digital product.
/// \param asset_ids The assets to unlink.
/// \param rest [asset_edit_options], [request_options], [diagnostics&], [token].
/// \return What the completion token makes of the operation (an awaitable by default).
template <class... Rest>
    requires(detail::trailing<asset_edit_options, Rest...>::template valid<id_list>())
auto async_remove_assets(client& c, string_ref digital_product_id, id_list asset_ids, Rest&&... rest)
{
    return detail::initiate_asset_edit(
        c, digital_product_id, asset_ids, detail::asset_edit_kind::remove,
        detail::make_trailing<asset_edit_options>(std::forward<Rest>(rest)...)
    );
}

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/workflows/asset_edits.ipp>
#endif

#endif
