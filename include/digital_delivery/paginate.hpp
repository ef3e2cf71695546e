//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_PAGINATE_HPP
#define DIGITAL_DELIVERY_PAGINATE_HPP

/// \file
/// Pagination of the list endpoints as async ranges (the asynchronous
/// analogue of google-cloud-cpp's StreamRange):
///
/// \code
/// auto orders = dd::paginate(dd::async_list_orders, client, {.status = dd::financial_status::paid, .per_page = 250});
/// while (auto o = co_await orders.async_next())
///     use(*o);                                  // dd::order
///
/// auto pages = dd::paginate_pages(dd::async_list_assets, client, {.per_page = 250});
/// for (;;) {
///     auto [ec, page] = co_await pages.async_next(asio::as_tuple(asio::deferred));
///     if (ec || !page) break;                   // page: dd::asset_list
///     progress(pages.pages_fetched(), *pages.total_pages());
/// }
/// \endcode
///
/// One template for every list endpoint: the items are the one member of the
/// endpoint's list envelope that is a `std::vector` (found with
/// Boost.Describe), the progress numbers come from its `pagination` member.
///
/// \par Laziness and early stop
/// A page is requested only when async_next() needs one and the buffered
/// items are used up: there is no prefetch, so when the caller stops calling
/// async_next() no request is in flight. The range may be destroyed at any
/// time; an async_next() still in flight keeps the range's state alive and
/// completes normally.
///
/// \par Drift
/// The API paginates with page numbers, so items created or deleted while
/// iterating shift the pages: items would be skipped or seen twice. The range
/// checks every page: `total_count` must equal the first page's, and each page
/// must hold exactly `min(per_page, total_count - (page - 1) * per_page)`
/// items. With `drift_policy::fail` (default) the first violation completes
/// async_next() with `workflow_errc::pagination_total_changed` or
/// `workflow_errc::pagination_page_size_mismatch`, the items of that page are
/// not delivered, and every later call completes with the same error (restart
/// the iteration, perhaps with a narrower filter such as `created_at_max`).
/// With `drift_policy::flag` the range goes on and counts the violations
/// (drift_count(), last_drift()); the caller decides afterwards.
///
/// \par Per-operation cancellation
/// Terminal cancellation of async_next() (through the token's cancellation
/// slot) cancels the page request in flight and completes with
/// boost::asio::error::operation_aborted. The range stays usable: the page is
/// requested again (or, if it had already arrived, delivered) by the next
/// call. Any other error leaves the range in the same state: calling
/// async_next() again retries the same page.
///
/// \par Thread safety
/// Like an I/O object: one async_next() at a time (a second one while the
/// first is in flight completes with workflow_errc::operation_in_progress),
/// and the accessors must not race with an async_next() in flight.

#include <digital_delivery/client.hpp>
#include <digital_delivery/detail/endpoint_call.hpp>
#include <digital_delivery/workflow_error.hpp>
#include <digital_delivery/diagnostics.hpp>
#include <digital_delivery/pagination.hpp>
#include <digital_delivery/detail/trailing_args.hpp>
#include <digital_delivery/request_options.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/compose.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/post.hpp>
#include <boost/describe/members.hpp>
#include <boost/mp11/algorithm.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace digital_delivery {

/// What a range does when the list changes under it (see the file comment).
enum class drift_policy
{
    fail,  ///< Complete async_next() with the drift error; the range is then finished.
    flag,  ///< Go on; count the events (drift_count(), last_drift()).
};

/// Options of paginate() / paginate_pages().
struct paginate_options
{
    drift_policy on_drift = drift_policy::fail;  ///< What to do when the list changes under the range.
};

namespace detail {

template <class T>
struct is_std_vector : std::false_type
{
};
template <class T, class A>
struct is_std_vector<std::vector<T, A>> : std::true_type
{
};

template <class Md>
using described_member_t = decltype(member_type_of(Md::pointer));

template <class Md>
using is_items_member = is_std_vector<described_member_t<Md>>;

template <class Md>
using is_pagination_member = std::is_same<described_member_t<Md>, pagination>;

/// The shape of a list envelope: its one vector member and its pagination.
template <class Envelope>
struct list_traits
{
    using members = boost::describe::describe_members<Envelope, boost::describe::mod_public>;
    using item_members = boost::mp11::mp_copy_if<members, is_items_member>;
    using pagination_members = boost::mp11::mp_copy_if<members, is_pagination_member>;
    static_assert(boost::mp11::mp_size<item_members>::value == 1, "a list envelope has exactly one std::vector member");
    static_assert(boost::mp11::mp_size<pagination_members>::value == 1, "a list envelope has one pagination member");
    static constexpr auto items = boost::mp11::mp_front<item_members>::pointer;
    static constexpr auto page_info = boost::mp11::mp_front<pagination_members>::pointer;
    using vector_type = decltype(member_type_of(items));
    using item_type = typename vector_type::value_type;
};

/// Checks one page against the first one. Pure: unit-testable without I/O.
/// Returns the drift it shows, if any.
inline error_code check_page(const pagination& first, const pagination& pg, std::int64_t requested_page, std::size_t n_items)
{
    if (pg.total_count != first.total_count)
        return workflow_errc::pagination_total_changed;
    if (pg.per_page > 0)
    {
        std::int64_t expected = pg.total_count - (requested_page - 1) * pg.per_page;
        if (expected < 0)
            expected = 0;
        if (expected > pg.per_page)
            expected = pg.per_page;
        if (static_cast<std::int64_t>(n_items) != expected)
            return workflow_errc::pagination_page_size_mismatch;
    }
    return {};
}

template <class D>
struct paginate_state
{
    using envelope = typename D::response;
    using traits = list_traits<envelope>;
    using item_type = typename traits::item_type;
    using query_type = typename D::query;

    // The query refers to the caller's strings: it is checked and encoded
    // here, once; each page request then only sets `page`.
    paginate_state(std::shared_ptr<client_impl> i, const query_type& q, const request_options* o, paginate_options po)
        : impl(std::move(i)), opts(o), popts(po)
    {
        next_page = q.page ? *q.page : 1;
        query_type with_page = q;
        using page_t = typename decltype(with_page.page)::value_type;
        with_page.page.emplace(static_cast<page_t>(1));
        // `page` is checked by the range (the first page asked for), the rest by the endpoint.
        endpoint_ops<D>::encode_query(with_page, params, invalid, invalid_why);
        if (q.page && *q.page < 1)
        {
            invalid = client_errc::invalid_page;
            invalid_why = "page must be at least 1";
        }
        for (std::size_t k = 0; k < params.size(); ++k)
            if (params[k].first == "page")
                page_index = k;
    }

    std::shared_ptr<client_impl> impl{};
    query_params params{};         // the encoded query; params[page_index] is the page
    std::size_t page_index = 0;
    error_code invalid{};          // the query's own error (sent with the first request instead)
    std::string invalid_why{};
    stored_request_options opts{};
    paginate_options popts{};

    std::int64_t next_page = 1;       // the page the next request asks for
    std::int64_t requested_page = 0;  // the page of the request in flight / pending
    std::int64_t pages_fetched = 0;
    std::int64_t items_received = 0;
    bool busy = false;
    bool finished = false;
    error_code sticky{};  // drift under drift_policy::fail
    std::optional<pagination> first, last;
    std::int64_t drift_count = 0;
    error_code last_drift{};

    std::optional<envelope> pending{};  // a page received but not yet absorbed
    std::vector<item_type> buffer{};    // items of the current page (item ranges)
    std::size_t pos = 0;

    // Takes a received page into account; returns its drift (if any).
    error_code absorb(envelope& env)
    {
        const pagination& pg = env.*traits::page_info;
        const auto n = (env.*traits::items).size();
        ++pages_fetched;
        items_received += static_cast<std::int64_t>(n);
        if (!first)
            first = pg;
        last = pg;
        error_code drift = check_page(*first, pg, requested_page, n);
        next_page = requested_page + 1;
        finished = n == 0 || requested_page >= pg.total_pages;
        if (drift)
        {
            ++drift_count;
            last_drift = drift;
            if (popts.on_drift == drift_policy::fail)
            {
                sticky = drift;
                finished = true;
            }
        }
        return drift;
    }
};

/// One async_next(): `Items` delivers one item, otherwise one page.
template <class D, bool Items>
struct paginate_next_op
{
    using state = paginate_state<D>;
    using envelope = typename state::envelope;
    using value_type = std::conditional_t<Items, typename state::item_type, envelope>;

    std::shared_ptr<state> st{};
    diagnostics* diag{};  // the caller's, or null
    bool started = false;
    bool rejected = false;

    // Start, and resumption after a post().
    template <class Self>
    void operator()(Self& self)
    {
        if (!started)
        {
            started = true;
            rejected = st->busy;
            st->busy = true;
            // Never complete inline from the initiating call.
            if (rejected || !must_fetch())
            {
                auto ex = st->impl->get_executor();
                boost::asio::post(ex, std::move(self));
                return;
            }
            fetch(self);
            return;
        }
        if (rejected)
        {
            self.complete(workflow_errc::operation_in_progress, std::optional<value_type>());
            return;
        }
        advance(self);
    }

    // A page request completed.
    template <class Self>
    void operator()(Self& self, error_code ec, envelope env)
    {
        if (ec)
            return finish(self, ec);
        st->pending.emplace(std::move(env));
        if (self.get_cancellation_state().cancelled() != boost::asio::cancellation_type::none)
            return finish(self, boost::asio::error::operation_aborted);  // kept in `pending` for the next call
        advance(self);
    }

private:
    // True when nothing buffered can answer this call.
    bool must_fetch() const
    {
        if constexpr (Items)
            if (st->pos < st->buffer.size())
                return false;
        return !st->pending && !st->sticky && !st->finished;
    }

    template <class Self>
    void finish(Self& self, error_code ec, std::optional<value_type> v = {})
    {
        st->busy = false;
        self.complete(ec, std::move(v));
    }

    template <class Self>
    void advance(Self& self)
    {
        state& s = *st;
        for (;;)
        {
            if constexpr (Items)
            {
                if (s.pos < s.buffer.size())
                {
                    std::optional<value_type> v(std::move(s.buffer[s.pos++]));
                    if (s.pos == s.buffer.size())
                    {
                        s.buffer.clear();
                        s.pos = 0;
                    }
                    return finish(self, {}, std::move(v));
                }
            }
            if (s.pending)
            {
                envelope env = std::move(*s.pending);
                s.pending.reset();
                const error_code drift = s.absorb(env);
                if (drift && s.popts.on_drift == drift_policy::fail)
                    return finish(self, drift);
                auto& items = env.*state::traits::items;
                if (items.empty())
                    continue;
                if constexpr (Items)
                {
                    s.buffer = std::move(items);
                    s.pos = 0;
                    continue;
                }
                else
                {
                    return finish(self, {}, std::optional<value_type>(std::move(env)));
                }
            }
            if (s.sticky)
                return finish(self, s.sticky);
            if (s.finished)
                return finish(self, {});
            return fetch(self);
        }
    }

    template <class Self>
    void fetch(Self& self)
    {
        state& s = *st;
        s.requested_page = s.next_page;
        query_params q = s.params;
        q[s.page_index].second = std::to_string(s.requested_page);
        prepared_request p;
        s.impl->prepare(p, endpoint_info_of<D>(), {}, &q, {}, &s.opts.get());
        if (s.invalid && !p.error)
        {
            p.error = s.invalid;
            p.error_message = s.invalid_why;
        }
        // (`s` is the shared state, not part of `self`: it stays valid when `self` is moved.)
        auto impl = s.impl;
        endpoint_ops<D>::launch(std::move(impl), std::move(p), diag, typename endpoint_ops<D>::handler_type(std::move(self)));
    }
};

template <class D>
concept list_endpoint = !std::is_void_v<typename D::query> && requires(typename D::query q) {
    q.page;
    q.per_page;
};

/// What both range types share.
template <class D>
class range_base
{
public:
    range_base(range_base&&) noexcept = default;
    range_base& operator=(range_base&&) noexcept = default;
    range_base(const range_base&) = delete;
    range_base& operator=(const range_base&) = delete;

    /// `total_count` of the first page (all items matching the filters);
    /// empty until the first page arrived.
    std::optional<std::int64_t> total_count() const
    {
        return st_->first ? std::optional<std::int64_t>(st_->first->total_count) : std::nullopt;
    }
    /// `total_pages` of the newest page; empty until the first page arrived.
    std::optional<std::int64_t> total_pages() const
    {
        return st_->last ? std::optional<std::int64_t>(st_->last->total_pages) : std::nullopt;
    }
    /// The `pagination` object of the newest page.
    const std::optional<pagination>& last_pagination() const noexcept { return st_->last; }
    /// Pages received so far (for progress: pages_fetched() / *total_pages()).
    std::int64_t pages_fetched() const noexcept { return st_->pages_fetched; }
    /// Items received so far (buffered ones included).
    std::int64_t items_received() const noexcept { return st_->items_received; }
    /// True once the last page was received (or a drift error ended the range).
    bool finished() const noexcept { return st_->finished && !st_->pending; }
    /// Drift events seen (at most 1 with drift_policy::fail).
    std::int64_t drift_count() const noexcept { return st_->drift_count; }
    bool drifted() const noexcept { return st_->drift_count != 0; }
    /// The newest drift event (a workflow_errc), or no error.
    error_code last_drift() const noexcept { return st_->last_drift; }

protected:
    explicit range_base(std::shared_ptr<paginate_state<D>> st) : st_(std::move(st)) {}
    std::shared_ptr<paginate_state<D>> st_;
};

}  // namespace detail

/// An async range over a list endpoint: its items (`Items` = true,
/// item_range<D>) or its pages, the list envelopes such as order_list
/// (page_range<D>; empty pages are never delivered). See the file comment.
///
/// Accessors, from an internal base class (not listed below): total_count(),
/// total_pages(), last_pagination(), pages_fetched(), items_received(),
/// finished(), drift_count(), drifted(), last_drift().
template <class D, bool Items>
class basic_list_range : public detail::range_base<D>
{
public:
    /// An item (an order, an asset...) or a page (order_list...).
    using value_type =
        std::conditional_t<Items, typename detail::paginate_state<D>::item_type, typename D::response>;
    /// The completion signature of async_next().
    using signature = void(error_code, std::optional<value_type>);

private:
    struct next_initiation
    {
        template <class Handler>
        void operator()(Handler&& h, diagnostics* diag, std::shared_ptr<detail::paginate_state<D>> st) const
        {
            auto ex = st->impl->get_executor();
            boost::asio::async_compose<Handler, signature>(detail::paginate_next_op<D, Items>{std::move(st), diag}, h, ex);
        }
    };

public:

    /// The next item (or page), or an empty optional at the end. Call shape:
    /// `async_next([diagnostics&], [token])`; completion signature
    /// `void(error_code, std::optional<value_type>)`.
    /// \param rest [diagnostics&], [token].
    /// \return What the completion token makes of the operation (an awaitable by default).
    template <class... Rest>
        requires(detail::trailing<void, Rest...>::template valid<>() &&
                 detail::trailing<void, Rest...>::index(detail::trailing_kind::options) == sizeof...(Rest))
    auto async_next(Rest&&... rest)
    {
        auto t = detail::make_trailing<void>(std::forward<Rest>(rest)...);
        return t.template initiate<signature>(next_initiation{}, this->st_);
    }

    /// \private Made by paginate() / paginate_pages().
    explicit basic_list_range(std::shared_ptr<detail::paginate_state<D>> st) : detail::range_base<D>(std::move(st)) {}
};

/// An async range over the items of a list endpoint.
template <class D>
using item_range = basic_list_range<D, true>;

/// An async range over the pages of a list endpoint.
template <class D>
using page_range = basic_list_range<D, false>;

namespace detail {

template <class D, class... Rest>
std::shared_ptr<paginate_state<D>> make_paginate_state(client& c, const typename D::query& query, Rest&&... rest)
{
    static_assert(
        trailing<paginate_options, Rest...>::index(trailing_kind::diag) == sizeof...(Rest) &&
            trailing<paginate_options, Rest...>::index(trailing_kind::token) == sizeof...(Rest),
        "paginate(fn, client, [query], [paginate_options], [request_options]): diagnostics and the completion "
        "token go to async_next()"
    );
    auto t = make_trailing<paginate_options>(std::forward<Rest>(rest)...);
    const paginate_options* po = t.op_options();
    return std::make_shared<paginate_state<D>>(access::impl(c), query, t.options(), po ? *po : paginate_options{});
}

}  // namespace detail

/// The items of a list endpoint (async_list_orders, async_list_assets,
/// async_list_digital_products), page after page, with the caller's filters:
/// `paginate(fn, client, [query], [paginate_options], [request_options])`.
/// `query.page` (when set) is the first page; `query.per_page` is kept for
/// every request. Nothing is sent before the first async_next(). The request
/// options are sent with every page request.
/// \param c The client.
/// \param query The filters (and first page, page size).
/// \param rest [paginate_options], [request_options].
/// \return The range; nothing is sent yet.
template <class D, std::size_t... I, class... Rest>
    requires(detail::list_endpoint<D> && detail::trailing<paginate_options, Rest...>::template valid<>())
item_range<D> paginate(const request_fn<D, std::index_sequence<I...>>&, client& c, typename D::query query = {}, Rest&&... rest)
{
    return item_range<D>(detail::make_paginate_state<D>(c, query, std::forward<Rest>(rest)...));
}

/// The pages of a list endpoint; see paginate().
/// \param c The client.
/// \param query The filters (and first page, page size).
/// \param rest [paginate_options], [request_options].
/// \return The range; nothing is sent yet.
template <class D, std::size_t... I, class... Rest>
    requires(detail::list_endpoint<D> && detail::trailing<paginate_options, Rest...>::template valid<>())
page_range<D> paginate_pages(const request_fn<D, std::index_sequence<I...>>&, client& c, typename D::query query = {}, Rest&&... rest)
{
    return page_range<D>(detail::make_paginate_state<D>(c, query, std::forward<Rest>(rest)...));
}

/// Without a query, options first: `paginate(fn, client, paginate_options{...})`.
/// \param c The client.
/// \param first paginate_options or request_options.
/// \param rest The other options.
/// \return The range; nothing is sent yet.
template <class D, std::size_t... I, class First, class... Rest>
    requires(detail::list_endpoint<D> && !std::is_convertible_v<First&&, typename D::query> &&
             detail::trailing<paginate_options, First, Rest...>::template valid<>())
item_range<D> paginate(const request_fn<D, std::index_sequence<I...>>&, client& c, First&& first, Rest&&... rest)
{
    return item_range<D>(
        detail::make_paginate_state<D>(c, typename D::query{}, std::forward<First>(first), std::forward<Rest>(rest)...)
    );
}

/// Without a query, options first; see paginate().
/// \param c The client.
/// \param first paginate_options or request_options.
/// \param rest The other options.
/// \return The range; nothing is sent yet.
template <class D, std::size_t... I, class First, class... Rest>
    requires(detail::list_endpoint<D> && !std::is_convertible_v<First&&, typename D::query> &&
             detail::trailing<paginate_options, First, Rest...>::template valid<>())
page_range<D> paginate_pages(const request_fn<D, std::index_sequence<I...>>&, client& c, First&& first, Rest&&... rest)
{
    return page_range<D>(
        detail::make_paginate_state<D>(c, typename D::query{}, std::forward<First>(first), std::forward<Rest>(rest)...)
    );
}

}  // namespace digital_delivery

#endif
