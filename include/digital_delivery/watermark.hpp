//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_WATERMARK_HPP
#define DIGITAL_DELIVERY_WATERMARK_HPP

/// \file
/// Waiting for watermarked downloads.
///
/// The first `GET /orders/{id}/downloads` of an order starts the PDF
/// watermarking of its eligible files (`watermark_status` `processing`,
/// `download_url` null); the API recommends polling until they are `ready`.
/// async_wait_for_downloads() does that:
///
/// \code
/// dd::order_downloads d = co_await dd::async_wait_for_downloads(client, order_id,
///     dd::request_options{.deadline = std::chrono::steady_clock::now() + 2min});
/// for (const auto& e : d.downloads) use(e.download_url);
/// \endcode
///
/// It polls (first at once, then after `initial_interval`, growing by
/// `multiplier` up to `max_interval`) until no entry is awaiting_watermark(),
/// and completes with that last response. Polls are sent at
/// `priority::background` with the caller's other request options.
///
/// \par Shared polls
/// Concurrent waits for the same order on the same client share one poll
/// loop: one request per poll, whatever the number of waiters, and all of
/// them complete with the same final downloads. The loop uses the options
/// (intervals, request options) of the wait that started it; each wait keeps
/// its own deadline and cancellation. When the last waiter leaves (deadline,
/// cancellation), the poll in flight is cancelled and the loop stops.
///
/// \par Errors
///  - the deadline (request_options::deadline) passes first:
///    client_errc::deadline_exceeded;
///  - a poll fails (after the client's own retries): that error, for every
///    waiter of the loop (e.g. api_errc::order_not_found);
///  - terminal cancellation: boost::asio::error::operation_aborted (only this
///    wait; the others go on).
///
/// Completion signature `void(error_code, order_downloads)`.
///
/// \par Thread safety
/// Waits may be started from several threads; the loop of an order runs on a
/// strand of the client's executor.

#include <digital_delivery/client.hpp>
#include <digital_delivery/detail/client_impl.hpp>
#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/download.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/detail/trailing_args.hpp>
#include <digital_delivery/diagnostics.hpp>
#include <digital_delivery/request_options.hpp>
#include <digital_delivery/string_ref.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/deferred.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace digital_delivery {

/// Options of async_wait_for_downloads.
struct watermark_wait_options
{
    /// Delay before the second poll (the first one is sent at once).
    std::chrono::milliseconds initial_interval{1000};
    /// Growth of the delay after each poll that still shows processing.
    double multiplier = 1.5;
    /// Upper bound of the delay.
    std::chrono::milliseconds max_interval{10000};
};

namespace detail {

using downloads_handler = boost::asio::any_completion_handler<void(error_code, order_downloads)>;

/// True when some entry still needs another poll.
DIGITAL_DELIVERY_DECL bool any_awaiting_watermark(const order_downloads& d) noexcept;

/// The delay after `current` (pure; unit-testable).
DIGITAL_DELIVERY_DECL std::chrono::milliseconds next_poll_interval(std::chrono::milliseconds current, const watermark_wait_options& o) noexcept;

DIGITAL_DELIVERY_DECL void async_wait_for_downloads_impl(
    std::shared_ptr<client_impl> impl,
    std::string order_id,
    watermark_wait_options opts,
    stored_request_options ropts,
    diagnostics* diag,
    downloads_handler h
);

/// Poll loops alive now (for tests).
DIGITAL_DELIVERY_DECL std::size_t active_watermark_polls();

struct wait_downloads_initiation
{
    template <class Handler>
    void operator()(
        Handler&& h,
        diagnostics* diag,
        std::shared_ptr<client_impl> impl,
        std::string order_id,
        watermark_wait_options opts,
        stored_request_options ropts
    ) const
    {
        async_wait_for_downloads_impl(
            std::move(impl), std::move(order_id), std::move(opts), std::move(ropts), diag,
            downloads_handler(std::forward<Handler>(h))
        );
    }
};

}  // namespace detail

/// Polls GET /orders/{id}/downloads until no entry awaits its watermark.
/// See the file comment. Call shape (docs/operations.md):
/// `async_wait_for_downloads(client, order_id, [watermark_wait_options],
/// [request_options], [diagnostics&], [token])`. Completes with the order's
/// downloads as last read.
/// \param c The client.
/// \param order_id The order.
/// \param rest [watermark_wait_options], [request_options], [diagnostics&], [token].
/// \return What the completion token makes of the operation (an awaitable by default).
template <class... Rest>
    requires(detail::trailing<watermark_wait_options, Rest...>::template valid<>())
auto async_wait_for_downloads(client& c, string_ref order_id, Rest&&... rest)
{
    auto t = detail::make_trailing<watermark_wait_options>(std::forward<Rest>(rest)...);
    const watermark_wait_options* o = t.op_options();
    const request_options* r = t.options();
    return t.template initiate<void(error_code, order_downloads)>(
        detail::wait_downloads_initiation{},
        detail::access::impl(c),
        std::string(order_id.view()),
        o ? *o : watermark_wait_options{},
        detail::stored_request_options(r)
    );
}

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/workflows/watermark.ipp>
#endif

#endif
