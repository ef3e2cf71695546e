// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Every completion style, no inline completion, per-operation cancellation,
// and deferred operations that outlive their arguments.
#include "fixtures.hpp"

#include <digital_delivery/raw_request.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/parse.hpp>

#include <algorithm>
#include <optional>

using namespace fixtures;
using namespace std::chrono_literals;

namespace {

// The optional trailing arguments are checked at compile time: in order, at most
// once each, and a string or a diagnostics by value is never taken for a token.
template <class... A>
concept get_order_accepts = requires(dd::client& c, A&&... a) { dd::async_get_order(c, "o1", std::forward<A>(a)...); };
template <class... A>
concept raw_request_accepts = requires(dd::client& c, A&&... a) {
    dd::async_raw_request(c, dd::raw_request{}, std::forward<A>(a)...);
};
template <class... A>
concept wait_accepts = requires(dd::client& c, A&&... a) { dd::async_wait_for_downloads(c, "o1", std::forward<A>(a)...); };
static_assert(get_order_accepts<>);
static_assert(get_order_accepts<dd::request_options, dd::diagnostics&, const asio::deferred_t&>);
static_assert(get_order_accepts<dd::diagnostics&>);
static_assert(!get_order_accepts<dd::diagnostics&, dd::request_options>);   // wrong order
static_assert(!get_order_accepts<dd::diagnostics&, dd::diagnostics&>);       // twice
static_assert(!get_order_accepts<std::string_view>);                          // an id too many
static_assert(!get_order_accepts<dd::diagnostics>);                           // by value
static_assert(!get_order_accepts<dd::request_options, dd::request_options>);
static_assert(raw_request_accepts<>);
static_assert(raw_request_accepts<dd::request_options, dd::diagnostics&, const asio::deferred_t&>);
static_assert(raw_request_accepts<dd::diagnostics&>);
static_assert(!raw_request_accepts<dd::diagnostics&, dd::request_options>);  // wrong order
static_assert(!raw_request_accepts<const char*>);                            // a string is not a token
static_assert(!raw_request_accepts<dd::diagnostics>);
static_assert(!raw_request_accepts<dd::raw_request>);                        // a second request
// The same rule with options of the operation's own, which come first.
static_assert(wait_accepts<>);
static_assert(wait_accepts<dd::watermark_wait_options, dd::request_options, dd::diagnostics&, const asio::deferred_t&>);
static_assert(wait_accepts<dd::request_options, dd::diagnostics&>);
static_assert(!wait_accepts<dd::request_options, dd::watermark_wait_options>);  // own options first
static_assert(!wait_accepts<dd::watermark_wait_options, dd::watermark_wait_options>);

class completion_test : public client_test
{
protected:
    void script_order() { fake->expect_any().respond(200, R"({"order":)" + order_json() + "}"); }
};

TEST_F(completion_test, co_await_with_the_default_token)
{
    script_order();
    std::string name;
    asio::co_spawn(ioc, [&]() -> asio::awaitable<void> { name = (co_await dd::async_get_order(client, "o1")).name; }, asio::detached);
    dd_test::run(ioc);
    EXPECT_EQ(name, "#1001");
}

TEST_F(completion_test, co_await_throws_an_error_that_says_what_happened)
{
    // The default token: the exception carries the request, the status and
    // the server's words, whether or not the caller passed diagnostics.
    fake->expect_any().respond(404, R"({"error":"Order not found"})");
    fake->expect_any().respond(422, R"({"errors":["Name can't be blank","Filename is too long"]})");
    fake->expect_any().respond(404, R"({"error":"Asset not found"})");
    std::vector<std::string> whats;
    std::vector<dd::error_code> codes;
    dd::diagnostics mine;
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            try
            {
                co_await dd::async_get_order(client, "missing");
                ADD_FAILURE() << "no exception";
            }
            catch (const dd::error_with_diagnostics& e)
            {
                whats.push_back(e.what());
                codes.push_back(e.code());
                EXPECT_EQ(e.get_diagnostics().server_message, "Order not found");
            }
            try
            {
                dd::new_asset a{.type = dd::asset_type::licence, .name = "Key"};
                co_await dd::async_create_asset(client, a, mine);
                ADD_FAILURE() << "no exception";
            }
            catch (const dd::error_with_diagnostics& e)
            {
                whats.push_back(e.what());
                codes.push_back(e.code());
            }
            try
            {
                co_await dd::async_delete_asset(client, "a9");  // void(error_code) becomes void(exception_ptr)
                ADD_FAILURE() << "no exception";
            }
            catch (const dd::error_with_diagnostics& e)
            {
                whats.push_back(e.what());
                codes.push_back(e.code());
            }
        },
        asio::detached
    );
    dd_test::run(ioc);
    ASSERT_EQ(whats.size(), 3u);
    EXPECT_EQ(codes[0], dd::api_errc::order_not_found);
    EXPECT_EQ(whats[0].rfind("GET /orders/missing: 404 Order not found", 0), 0u) << whats[0];
    EXPECT_EQ(codes[1], dd::condition::validation);
    EXPECT_EQ(whats[1].rfind("POST /assets: 422 Name can't be blank; Filename is too long", 0), 0u) << whats[1];
    EXPECT_EQ(mine.http_status, 422u);  // the caller's diagnostics are filled too
    EXPECT_EQ(codes[2], dd::api_errc::asset_not_found);
    EXPECT_EQ(whats[2].rfind("DELETE /assets/a9: 404 Asset not found", 0), 0u) << whats[2];
    EXPECT_EQ(mine.host, "dd.example.test");
    for (const auto& w : whats)
    {
        EXPECT_NE(w.find("(dd.example.test)"), std::string::npos) << w;  // which service answered
        EXPECT_EQ(w.find(api_key), std::string::npos) << w;
    }
}

TEST_F(completion_test, as_tuple_deferred_and_throw_on_error)
{
    fake->expect_any().respond(404, R"({"error":"Order not found"})");
    std::string what;
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            auto [ec, o] = co_await dd::async_get_order(client, "missing", diag, asio::as_tuple(asio::deferred));
            try
            {
                dd::throw_on_error(ec, diag);
            }
            catch (const dd::error_with_diagnostics& e)
            {
                what = e.what();
                EXPECT_EQ(e.get_diagnostics().server_message, "Order not found");
            }
        },
        asio::detached
    );
    dd_test::run(ioc);
    EXPECT_NE(what.find("GET /orders/missing: 404"), std::string::npos) << what;
}

TEST_F(completion_test, use_awaitable_and_awaitable_operators)
{
    script_order();
    script_order();
    int n = 0;
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            using namespace asio::experimental::awaitable_operators;
            auto [a, b] = co_await (dd::async_get_order(client, "o1", asio::use_awaitable) && dd::async_get_order(client, "o2", asio::use_awaitable));
            n = static_cast<int>(a.download_count + b.download_count);
        },
        asio::detached
    );
    dd_test::run(ioc);
    EXPECT_EQ(n, 6);
}

TEST_F(completion_test, use_future)
{
    script_order();
    auto fut = dd::async_get_order(client, "o1", asio::use_future);
    dd_test::run(ioc);
    EXPECT_EQ(fut.get().id, "o1");
    fake->expect_any().respond(404, R"({"error":"Order not found"})");
    auto fut2 = dd::async_get_order(client, "o1", asio::use_future);
    ioc.restart();
    dd_test::run(ioc);
    EXPECT_THROW(fut2.get(), boost::system::system_error);
}

TEST_F(completion_test, callback_never_runs_inline_and_runs_on_its_executor)
{
    script_order();
    auto strand = asio::make_strand(ioc);
    bool returned = false, called = false, on_strand = false;
    dd::async_get_order(client, "o1", asio::bind_executor(strand, [&](dd::error_code ec, dd::order o) {
                      called = true;
                      on_strand = strand.running_in_this_thread();
                      EXPECT_TRUE(returned);  // the initiating call had returned
                      EXPECT_FALSE(ec);
                      EXPECT_EQ(o.id, "o1");
                  }));
    returned = true;
    EXPECT_FALSE(called);
    dd_test::run(ioc);
    EXPECT_TRUE(called);
    EXPECT_TRUE(on_strand);

    // A request refused before sending also completes asynchronously.
    called = false;
    returned = false;
    dd::async_list_orders(client, {.per_page = 0}, [&](dd::error_code ec, dd::order_list) {
        called = true;
        EXPECT_TRUE(returned);
        EXPECT_EQ(ec, dd::client_errc::invalid_per_page);
    });
    returned = true;
    EXPECT_FALSE(called);
    ioc.restart();
    dd_test::run(ioc);
    EXPECT_TRUE(called);
}

TEST_F(completion_test, deferred_operation_owns_its_arguments)
{
    // A deferred operation is initiated later than it is created: whatever the
    // caller passed (the id, the payload) must be copied at creation. The
    // caller's strings are overwritten and then freed before the initiation:
    // a kept reference would send the overwritten bytes, or read freed memory
    // (which ASan reports). The strings are long, so they live on the heap.
    const std::string long_id(200, 'i');
    const std::string long_name(300, 'n');
    fake->expect(dd::http_method::patch, target("/assets/" + long_id)).respond(200, R"({"asset":)" + asset_json() + "}");
    auto op = [&] {
        std::string id = long_id;
        std::string name = long_name;
        dd::asset_update upd{.name = name};
        auto deferred = dd::async_update_asset(client, id, upd, asio::deferred);
        std::fill(id.begin(), id.end(), 'X');
        std::fill(name.begin(), name.end(), 'X');
        return deferred;
    }();  // id, name and upd are freed here
    std::optional<dd::error_code> got;
    std::move(op)([&](dd::error_code ec, dd::asset) { got = ec; });
    dd_test::run(ioc);
    ASSERT_TRUE(got);
    EXPECT_FALSE(*got) << got->message();
    ASSERT_EQ(fake->requests().size(), 1u);
    EXPECT_EQ(fake->requests()[0].url, std::string(base_url) + "/assets/" + long_id);
    const auto body = boost::json::parse(fake->requests()[0].body);
    EXPECT_EQ(body.at("asset").at("name").as_string(), long_name);
}

TEST_F(completion_test, terminal_cancellation_then_client_still_works)
{
    fake->expect_any().hang();
    asio::cancellation_signal sig;
    dd::error_code got;
    bool done = false;
    dd::async_get_order(client, "o1", asio::bind_cancellation_slot(sig.slot(), [&](dd::error_code ec, dd::order) {
                      got = ec;
                      done = true;
                  }));
    asio::steady_timer t(ioc, 10ms);
    t.async_wait([&](dd::error_code) { sig.emit(asio::cancellation_type::terminal); });
    dd_test::run(ioc);
    EXPECT_TRUE(done);
    EXPECT_EQ(got, asio::error::operation_aborted);

    script_order();
    auto [ec, o] = run([&](auto tok) { return dd::async_get_order(client, "o1", tok); });
    EXPECT_FALSE(ec);
    EXPECT_EQ(o.id, "o1");
}

TEST_F(completion_test, awaitable_or_timeout_cancels_the_request)
{
    fake->expect_any().hang();
    bool timed_out = false;
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            using namespace asio::experimental::awaitable_operators;
            asio::steady_timer t(co_await asio::this_coro::executor, 20ms);
            auto r = co_await (dd::async_get_order(client, "o1", asio::use_awaitable) || t.async_wait(asio::use_awaitable));
            timed_out = r.index() == 1;
        },
        asio::detached
    );
    dd_test::run(ioc);
    EXPECT_TRUE(timed_out);
}

TEST_F(completion_test, delayed_response_with_many_concurrent_requests)
{
    for (int i = 0; i < 50; ++i)
        fake->expect_any().respond(200, R"({"order":)" + order_json() + "}").delay(std::chrono::milliseconds(i % 5));
    int ok = 0;
    for (int i = 0; i < 50; ++i)
    {
        const std::string id = "o" + std::to_string(i);
        dd::async_get_order(client, id, [&](dd::error_code ec, dd::order) { ok += !ec; });
    }
    dd_test::run(ioc);
    EXPECT_EQ(ok, 50);
}

}  // namespace
