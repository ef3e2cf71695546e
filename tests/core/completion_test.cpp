// Every completion style, no inline completion, per-operation cancellation,
// and deferred operations that outlive their arguments.
#include "fixtures.hpp"

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
concept get_order_accepts = requires(dd::client& c, A&&... a) { dd::get_order(c, "o1", std::forward<A>(a)...); };
template <class... A>
concept raw_request_accepts = requires(dd::client& c, A&&... a) {
    dd::async_raw_request(c, dd::http_method::get, "/x", std::forward<A>(a)...);
};
static_assert(get_order_accepts<>);
static_assert(get_order_accepts<dd::request_options, dd::diagnostics&, const asio::deferred_t&>);
static_assert(get_order_accepts<dd::diagnostics&>);
static_assert(!get_order_accepts<dd::diagnostics&, dd::request_options>);   // wrong order
static_assert(!get_order_accepts<dd::diagnostics&, dd::diagnostics&>);       // twice
static_assert(!get_order_accepts<std::string_view>);                          // an id too many
static_assert(!get_order_accepts<dd::diagnostics>);                           // by value
static_assert(!get_order_accepts<dd::request_options, dd::request_options>);
static_assert(raw_request_accepts<>);
static_assert(raw_request_accepts<dd::raw_query, boost::json::value, dd::request_options, dd::diagnostics&, const asio::deferred_t&>);
static_assert(raw_request_accepts<boost::json::object, dd::diagnostics&>);
static_assert(!raw_request_accepts<boost::json::value, dd::raw_query>);       // body before query
static_assert(!raw_request_accepts<boost::json::value, boost::json::array>);  // two bodies
static_assert(!raw_request_accepts<const char*>);                             // a string is not a token
static_assert(!raw_request_accepts<dd::diagnostics>);

class completion_test : public client_test
{
protected:
    void script_order() { fake->expect_any().respond(200, R"({"order":)" + order_json() + "}"); }
};

TEST_F(completion_test, co_await_with_default_deferred_token)
{
    script_order();
    std::string name;
    asio::co_spawn(ioc, [&]() -> asio::awaitable<void> { name = (co_await dd::get_order(client, "o1")).name; }, asio::detached);
    dd_test::run(ioc);
    EXPECT_EQ(name, "#1001");
}

TEST_F(completion_test, co_await_throws_system_error_on_failure)
{
    fake->expect_any().respond(404, R"({"error":"Order not found"})");
    dd::error_code caught;
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            try
            {
                co_await dd::get_order(client, "missing");
            }
            catch (const boost::system::system_error& e)
            {
                caught = e.code();
            }
        },
        asio::detached
    );
    dd_test::run(ioc);
    EXPECT_EQ(caught, dd::api_errc::order_not_found);
}

TEST_F(completion_test, as_tuple_deferred_and_throw_on_error)
{
    fake->expect_any().respond(404, R"({"error":"Order not found"})");
    std::string what;
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            auto [ec, o] = co_await dd::get_order(client, "missing", diag, asio::as_tuple(asio::deferred));
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
            auto [a, b] = co_await (dd::get_order(client, "o1", asio::use_awaitable) && dd::get_order(client, "o2", asio::use_awaitable));
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
    auto fut = dd::get_order(client, "o1", asio::use_future);
    dd_test::run(ioc);
    EXPECT_EQ(fut.get().id, "o1");
    fake->expect_any().respond(404, R"({"error":"Order not found"})");
    auto fut2 = dd::get_order(client, "o1", asio::use_future);
    ioc.restart();
    dd_test::run(ioc);
    EXPECT_THROW(fut2.get(), boost::system::system_error);
}

TEST_F(completion_test, callback_never_runs_inline_and_runs_on_its_executor)
{
    script_order();
    auto strand = asio::make_strand(ioc);
    bool returned = false, called = false, on_strand = false;
    dd::get_order(client, "o1", asio::bind_executor(strand, [&](dd::error_code ec, dd::order o) {
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
    dd::list_orders(client, {.per_page = 0}, [&](dd::error_code ec, dd::order_list) {
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
        dd::asset_update upd{.name = long_name};
        auto deferred = dd::update_asset(client, id, upd);
        std::fill(id.begin(), id.end(), 'X');
        std::fill(upd.name->begin(), upd.name->end(), 'X');
        return deferred;
    }();  // id and upd are freed here
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
    dd::get_order(client, "o1", asio::bind_cancellation_slot(sig.slot(), [&](dd::error_code ec, dd::order) {
                      got = ec;
                      done = true;
                  }));
    asio::steady_timer t(ioc, 10ms);
    t.async_wait([&](dd::error_code) { sig.emit(asio::cancellation_type::terminal); });
    dd_test::run(ioc);
    EXPECT_TRUE(done);
    EXPECT_EQ(got, asio::error::operation_aborted);

    script_order();
    auto [ec, o] = run([&](auto tok) { return dd::get_order(client, "o1", tok); });
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
            auto r = co_await (dd::get_order(client, "o1", asio::use_awaitable) || t.async_wait(asio::use_awaitable));
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
        dd::get_order(client, "o" + std::to_string(i), [&](dd::error_code ec, dd::order) { ok += !ec; });
    dd_test::run(ioc);
    EXPECT_EQ(ok, 50);
}

}  // namespace
