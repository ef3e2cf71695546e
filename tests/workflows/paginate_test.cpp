// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// paginate / paginate_pages on the fake transport: empty list, one page, many
// pages, drift (total_count changes, short page), early stop, cancellation.
#include "fixtures.hpp"

#include <digital_delivery/paginate.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>

using namespace fixtures;
using namespace std::chrono_literals;

namespace {

std::string orders_page(int first_number, int n, int page, int per, int total, int pages)
{
    std::string s = R"({"orders":[)";
    for (int i = 0; i < n; ++i)
    {
        if (i)
            s += ',';
        s += R"({"id":"o)" + std::to_string(first_number + i) + R"(","name":"#)" + std::to_string(first_number + i) +
             R"(","email":"a@example.com","phone":null,"financial_status":"paid","fulfillment_status":null,)"
             R"("total_price":"1.00","currency":"USD","created_at":"2024-05-01T12:00:00Z","download_count":0})";
    }
    return s + R"(],"pagination":)" + pagination_json(page, per, total, pages) + "}";
}

class paginate_test : public client_test
{
protected:
    std::string orders_target(int page, int per = 2) const
    {
        return target("/orders?status=paid&page=" + std::to_string(page) + "&per_page=" + std::to_string(per));
    }

    // Drains the range; returns the error that ended it.
    template <class Range>
    dd::error_code drain(Range& r, std::vector<std::string>& ids)
    {
        dd::error_code out;
        asio::co_spawn(
            ioc,
            [&]() -> asio::awaitable<void> {
                for (;;)
                {
                    auto [ec, o] = co_await r.async_next(diag, asio::as_tuple(asio::deferred));
                    if (ec || !o)
                    {
                        out = ec;
                        co_return;
                    }
                    ids.push_back(o->id);
                }
            },
            asio::detached
        );
        ioc.restart();
        dd_test::run(ioc);
        return out;
    }

    dd::order_query paid(int per = 2) { return {.status = dd::financial_status::paid, .per_page = per}; }
};

TEST_F(paginate_test, empty_list_sends_one_request_and_ends)
{
    fake->expect(dd::http_method::get, orders_target(1)).respond(200, orders_page(0, 0, 1, 2, 0, 0));
    auto r = dd::paginate(dd::async_list_orders, client, paid());
    EXPECT_TRUE(fake->requests().empty()) << "lazy: nothing before async_next";
    std::vector<std::string> ids;
    EXPECT_FALSE(drain(r, ids));
    EXPECT_TRUE(ids.empty());
    EXPECT_EQ(r.total_count(), 0);
    EXPECT_TRUE(r.finished());
    EXPECT_TRUE(fake->done()) << ::testing::PrintToString(fake->mismatches());
}

TEST_F(paginate_test, one_page)
{
    fake->expect(dd::http_method::get, orders_target(1)).respond(200, orders_page(1, 2, 1, 2, 2, 1));
    auto r = dd::paginate(dd::async_list_orders, client, paid());
    std::vector<std::string> ids;
    EXPECT_FALSE(drain(r, ids));
    EXPECT_EQ(ids, (std::vector<std::string>{"o1", "o2"}));
    EXPECT_EQ(r.total_pages(), 1);
    EXPECT_EQ(r.pages_fetched(), 1);
    EXPECT_TRUE(fake->done()) << ::testing::PrintToString(fake->mismatches());
}

TEST_F(paginate_test, many_pages_in_a_plain_co_await_loop)
{
    fake->expect(dd::http_method::get, orders_target(1)).respond(200, orders_page(1, 2, 1, 2, 5, 3));
    fake->expect(dd::http_method::get, orders_target(2)).respond(200, orders_page(3, 2, 2, 2, 5, 3));
    fake->expect(dd::http_method::get, orders_target(3)).respond(200, orders_page(5, 1, 3, 2, 5, 3));
    auto orders = dd::paginate(dd::async_list_orders, client, {.status = dd::financial_status::paid, .per_page = 2});
    std::vector<std::string> names;
    std::vector<std::int64_t> progress;
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            while (auto o = co_await orders.async_next())
            {
                names.push_back(o->name);
                progress.push_back(orders.pages_fetched());
            }
        },
        asio::detached
    );
    dd_test::run(ioc);
    EXPECT_EQ(names, (std::vector<std::string>{"#1", "#2", "#3", "#4", "#5"}));
    EXPECT_EQ(progress, (std::vector<std::int64_t>{1, 1, 2, 2, 3}));
    EXPECT_EQ(orders.total_count(), 5);
    EXPECT_FALSE(orders.drifted());
    EXPECT_TRUE(fake->done()) << ::testing::PrintToString(fake->mismatches());
}

TEST_F(paginate_test, start_page_and_request_options_are_kept)
{
    fake->expect(dd::http_method::get, target("/orders?page=2&per_page=2")).respond(200, orders_page(3, 2, 2, 2, 4, 2));
    // The range keeps its own copy of the options (and of the header fields).
    auto r = [&] {
        std::string value = "t1";
        const dd::http_headers::field trace[] = {{"X-Trace", value}};
        const dd::request_options opts{.extra_headers = trace};
        auto range = dd::paginate(dd::async_list_orders, client, {.page = 2, .per_page = 2}, opts);
        value.assign(value.size(), 'X');
        return range;
    }();
    std::vector<std::string> ids;
    EXPECT_FALSE(drain(r, ids));
    EXPECT_EQ(ids.size(), 2u);
    EXPECT_EQ(last_request().headers.find("X-Trace").value_or(""), "t1");
    EXPECT_TRUE(fake->done()) << ::testing::PrintToString(fake->mismatches());
}

// The query is omittable when options follow, like every other optional payload.
TEST_F(paginate_test, options_without_a_query)
{
    fake->expect(dd::http_method::get, target("/orders?page=1")).respond(200, orders_page(1, 1, 1, 25, 1, 1));
    const dd::http_headers::field trace[] = {{"X-Trace", "t2"}};
    const dd::request_options opts{.extra_headers = trace};
    auto r = dd::paginate(dd::async_list_orders, client, dd::paginate_options{.on_drift = dd::drift_policy::flag}, opts);
    std::vector<std::string> ids;
    EXPECT_FALSE(drain(r, ids));
    EXPECT_EQ(ids.size(), 1u);
    EXPECT_EQ(last_request().headers.find("X-Trace").value_or(""), "t2");
    fake->expect(dd::http_method::get, target("/assets?page=1")).respond(200, R"({"assets":[],"pagination":{"current_page":1,"per_page":25,"total_count":0,"total_pages":0}})");
    auto pages = dd::paginate_pages(dd::async_list_assets, client, opts);
    auto [ec, page] = run([&](auto t) { return pages.async_next(t); });
    EXPECT_FALSE(ec);
    EXPECT_TRUE(fake->done()) << ::testing::PrintToString(fake->mismatches());
}

TEST_F(paginate_test, the_query_is_copied_when_the_range_is_made)
{
    // The query refers to the caller's strings; the range must not.
    fake->expect(dd::http_method::get, target("/orders?q=ada%40example.com&page=1&per_page=2")).respond(200, orders_page(1, 2, 1, 2, 3, 2));
    fake->expect(dd::http_method::get, target("/orders?q=ada%40example.com&page=2&per_page=2")).respond(200, orders_page(3, 1, 2, 2, 3, 2));
    auto r = [&] {
        std::string who(16, ' ');
        who = "ada@example.com";
        auto range = dd::paginate(dd::async_list_orders, client, {.q = who, .per_page = 2});
        who.assign(who.size(), 'X');
        return range;
    }();
    std::vector<std::string> ids;
    EXPECT_FALSE(drain(r, ids));
    EXPECT_EQ(ids.size(), 3u);
    EXPECT_TRUE(fake->done()) << ::testing::PrintToString(fake->mismatches());
}

TEST_F(paginate_test, pages_range_skips_nothing_and_reports_progress)
{
    fake->expect(dd::http_method::get, orders_target(1)).respond(200, orders_page(1, 2, 1, 2, 3, 2));
    fake->expect(dd::http_method::get, orders_target(2)).respond(200, orders_page(3, 1, 2, 2, 3, 2));
    auto pages = dd::paginate_pages(dd::async_list_orders, client, paid());
    std::vector<std::size_t> sizes;
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            while (auto p = co_await pages.async_next())
                sizes.push_back(p->orders.size());
        },
        asio::detached
    );
    dd_test::run(ioc);
    EXPECT_EQ(sizes, (std::vector<std::size_t>{2, 1}));
    EXPECT_EQ(pages.total_pages(), 2);
    EXPECT_TRUE(fake->done());
}

TEST_F(paginate_test, total_count_change_is_a_typed_error)
{
    fake->expect(dd::http_method::get, orders_target(1)).respond(200, orders_page(1, 2, 1, 2, 4, 2));
    fake->expect(dd::http_method::get, orders_target(2)).respond(200, orders_page(4, 2, 2, 2, 5, 3));
    auto r = dd::paginate(dd::async_list_orders, client, paid());
    std::vector<std::string> ids;
    EXPECT_EQ(drain(r, ids), dd::workflow_errc::pagination_total_changed);
    EXPECT_EQ(ids, (std::vector<std::string>{"o1", "o2"})) << "the drifted page is not delivered";
    // Sticky: the range is finished with that error, no further request.
    ids.clear();
    EXPECT_EQ(drain(r, ids), dd::workflow_errc::pagination_total_changed);
    EXPECT_EQ(fake->requests().size(), 2u);
    EXPECT_TRUE(r.finished());
}

TEST_F(paginate_test, short_page_before_the_last_is_a_typed_error)
{
    fake->expect(dd::http_method::get, orders_target(1)).respond(200, orders_page(1, 2, 1, 2, 6, 3));
    fake->expect(dd::http_method::get, orders_target(2)).respond(200, orders_page(3, 1, 2, 2, 6, 3));
    auto r = dd::paginate(dd::async_list_orders, client, paid());
    std::vector<std::string> ids;
    EXPECT_EQ(drain(r, ids), dd::workflow_errc::pagination_page_size_mismatch);
    EXPECT_EQ(ids.size(), 2u);
}

TEST_F(paginate_test, short_last_page_is_checked_too)
{
    fake->expect(dd::http_method::get, orders_target(1)).respond(200, orders_page(1, 2, 1, 2, 3, 2));
    fake->expect(dd::http_method::get, orders_target(2)).respond(200, orders_page(3, 0, 2, 2, 3, 2));
    auto r = dd::paginate(dd::async_list_orders, client, paid());
    std::vector<std::string> ids;
    EXPECT_EQ(drain(r, ids), dd::workflow_errc::pagination_page_size_mismatch);
}

TEST_F(paginate_test, drift_policy_flag_goes_on_and_counts)
{
    fake->expect(dd::http_method::get, orders_target(1)).respond(200, orders_page(1, 2, 1, 2, 6, 3));
    fake->expect(dd::http_method::get, orders_target(2)).respond(200, orders_page(3, 1, 2, 2, 6, 3));
    fake->expect(dd::http_method::get, orders_target(3)).respond(200, orders_page(5, 2, 3, 2, 7, 4));
    fake->expect(dd::http_method::get, orders_target(4)).respond(200, orders_page(7, 1, 4, 2, 7, 4));
    auto r = dd::paginate(dd::async_list_orders, client, paid(), dd::paginate_options{.on_drift = dd::drift_policy::flag});
    std::vector<std::string> ids;
    EXPECT_FALSE(drain(r, ids));
    EXPECT_EQ(ids.size(), 6u);
    EXPECT_EQ(r.drift_count(), 3);  // short page 2, total changed on 3 and 4
    EXPECT_EQ(r.last_drift(), dd::workflow_errc::pagination_total_changed);
    EXPECT_TRUE(fake->done());
}

TEST_F(paginate_test, early_stop_leaves_nothing_in_flight)
{
    fake->expect(dd::http_method::get, orders_target(1)).respond(200, orders_page(1, 2, 1, 2, 6, 3));
    {
        auto r = dd::paginate(dd::async_list_orders, client, paid());
        asio::co_spawn(
            ioc,
            [&]() -> asio::awaitable<void> {
                auto o = co_await r.async_next();
                EXPECT_TRUE(o);
                o = co_await r.async_next();
                EXPECT_TRUE(o);
                // stop here: the second page is never requested
            },
            asio::detached
        );
        dd_test::run(ioc);
    }
    EXPECT_EQ(fake->requests().size(), 1u);
    EXPECT_TRUE(fake->done());
}

TEST_F(paginate_test, cancellation_mid_iteration_then_resume)
{
    fake->expect(dd::http_method::get, orders_target(1)).respond(200, orders_page(1, 2, 1, 2, 4, 2));
    fake->expect(dd::http_method::get, orders_target(2)).hang();
    fake->expect(dd::http_method::get, orders_target(2)).respond(200, orders_page(3, 2, 2, 2, 4, 2));
    auto r = dd::paginate(dd::async_list_orders, client, paid());
    asio::cancellation_signal sig;
    std::vector<std::string> ids;
    dd::error_code cancelled;
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            ids.push_back((co_await r.async_next())->id);
            ids.push_back((co_await r.async_next())->id);
            auto [ec, o] = co_await r.async_next(asio::bind_cancellation_slot(sig.slot(), asio::as_tuple(asio::use_awaitable)));
            cancelled = ec;
            EXPECT_FALSE(o);
            while (auto o2 = co_await r.async_next())
                ids.push_back(o2->id);
        },
        asio::detached
    );
    // Let the hanging request start, then cancel it.
    for (int i = 0; i < 50 && fake->requests().size() < 2; ++i)
        ioc.run_one();
    ASSERT_EQ(fake->requests().size(), 2u);
    sig.emit(asio::cancellation_type::terminal);
    dd_test::run(ioc);
    EXPECT_EQ(cancelled, asio::error::operation_aborted);
    EXPECT_EQ(ids, (std::vector<std::string>{"o1", "o2", "o3", "o4"}));
    EXPECT_TRUE(fake->done()) << ::testing::PrintToString(fake->mismatches());
}

TEST_F(paginate_test, destroying_the_range_mid_request_is_safe)
{
    fake->expect(dd::http_method::get, orders_target(1)).delay(20ms).respond(200, orders_page(1, 2, 1, 2, 2, 1));
    std::optional<std::string> got;
    {
        auto r = dd::paginate(dd::async_list_orders, client, paid());
        r.async_next([&](dd::error_code ec, std::optional<dd::order> o) {
            EXPECT_FALSE(ec);
            if (o)
                got = o->id;
        });
    }  // destroyed while the request is in flight
    dd_test::run(ioc);
    EXPECT_EQ(got, "o1");
}

TEST_F(paginate_test, concurrent_async_next_is_refused)
{
    fake->expect(dd::http_method::get, orders_target(1)).delay(10ms).respond(200, orders_page(1, 2, 1, 2, 2, 1));
    auto r = dd::paginate(dd::async_list_orders, client, paid());
    dd::error_code e1, e2;
    r.async_next([&](dd::error_code ec, std::optional<dd::order>) { e1 = ec; });
    r.async_next([&](dd::error_code ec, std::optional<dd::order>) { e2 = ec; });
    dd_test::run(ioc);
    EXPECT_FALSE(e1);
    EXPECT_EQ(e2, dd::workflow_errc::operation_in_progress);
}

TEST_F(paginate_test, request_errors_leave_the_range_retryable)
{
    fake->expect(dd::http_method::get, orders_target(1)).respond(500, R"({"error":"boom"})");
    fake->expect(dd::http_method::get, orders_target(1)).respond(200, orders_page(1, 1, 1, 2, 1, 1));
    auto r = dd::paginate(dd::async_list_orders, client, paid());
    std::vector<std::string> ids;
    EXPECT_EQ(drain(r, ids), dd::api_errc::server_error);
    EXPECT_EQ(diag.http_status, 500u) << "async_next(diagnostics&) fills them";
    EXPECT_EQ(diag.server_message, "boom");
    EXPECT_FALSE(drain(r, ids));
    EXPECT_EQ(ids, (std::vector<std::string>{"o1"}));
}

TEST_F(paginate_test, invalid_per_page_is_refused_before_sending)
{
    auto r = dd::paginate(dd::async_list_orders, client, {.per_page = 1000});
    std::vector<std::string> ids;
    EXPECT_EQ(drain(r, ids), dd::client_errc::invalid_per_page);
    EXPECT_TRUE(fake->requests().empty());
}

TEST_F(paginate_test, generic_over_list_endpoints)
{
    fake->expect(dd::http_method::get, target("/assets?page=1&per_page=1"))
        .respond(200, R"({"assets":[)" + asset_json() + R"(],"pagination":)" + pagination_json(1, 1, 1, 1) + "}");
    fake->expect(dd::http_method::get, target("/digital_products?page=1"))
        .respond(200, R"({"digital_products":[)" + digital_product_json() + R"(],"pagination":)" + pagination_json(1, 25, 1, 1) + "}");
    auto assets = dd::paginate(dd::async_list_assets, client, {.per_page = 1});
    auto products = dd::paginate(dd::async_list_digital_products, client);
    static_assert(std::is_same_v<decltype(assets)::value_type, dd::asset>);
    static_assert(std::is_same_v<decltype(products)::value_type, dd::digital_product>);
    std::string a, p;
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            while (auto x = co_await assets.async_next())
                a += x->id;
            while (auto x = co_await products.async_next())
                p += x->id;
        },
        asio::detached
    );
    dd_test::run(ioc);
    EXPECT_EQ(a, "a1");
    EXPECT_EQ(p, "dp1");
    EXPECT_TRUE(fake->done()) << ::testing::PrintToString(fake->mismatches());
}

TEST_F(paginate_test, every_completion_style)
{
    for (int i = 0; i < 3; ++i)
        fake->expect_any().respond(200, orders_page(1, 1, 1, 2, 1, 1));
    auto r1 = dd::paginate(dd::async_list_orders, client, paid());
    auto r2 = dd::paginate(dd::async_list_orders, client, paid());
    auto r3 = dd::paginate(dd::async_list_orders, client, paid());
    auto f = r3.async_next(asio::use_future);
    std::string s;
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            s += (co_await r1.async_next(asio::use_awaitable))->id;
            auto op = r2.async_next();  // deferred: nothing runs until awaited
            s += (co_await std::move(op))->id;
        },
        asio::detached
    );
    dd_test::run(ioc);
    EXPECT_EQ(s, "o1o1");
    EXPECT_EQ(f.get()->id, "o1");
}

TEST(paginate_check_page, pure_checks)
{
    dd::pagination first{1, 10, 25, 3};
    EXPECT_FALSE(dd::detail::check_page(first, first, 1, 10));
    EXPECT_FALSE(dd::detail::check_page(first, {3, 10, 25, 3}, 3, 5));
    EXPECT_EQ(dd::detail::check_page(first, {3, 10, 25, 3}, 3, 4), dd::workflow_errc::pagination_page_size_mismatch);
    EXPECT_EQ(dd::detail::check_page(first, {2, 10, 26, 3}, 2, 10), dd::workflow_errc::pagination_total_changed);
    EXPECT_FALSE(dd::detail::check_page(first, {4, 10, 25, 3}, 4, 0)) << "beyond the last page: empty is right";
}

}  // namespace
