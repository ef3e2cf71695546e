// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Traces: W3C trace context (parse, format, tracestate truncation), which
// trace headers each attempt sends (with or without a tracer, a parent, extra
// headers, a context provider; never to presigned storage by default), and
// the spans of operations, attempts, rate-limiter waits, backoffs and
// uploads, through the public API over the fake transport.
#include "fixtures.hpp"

#include <digital_delivery/raw_request.hpp>
#include <digital_delivery/testing/virtual_clock.hpp>
#include <digital_delivery/trace_context.hpp>
#include <digital_delivery/tracer.hpp>
#include <digital_delivery/upload.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>

#include <algorithm>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

using namespace fixtures;
using namespace std::chrono_literals;

namespace {

// Keeps every finished span.
class collecting_tracer final : public dd::tracer
{
public:
    std::vector<dd::span_data> spans;

    void on_end(dd::span_data&& s) noexcept override
    {
        std::lock_guard<std::mutex> lk(mtx_);
        spans.push_back(std::move(s));
    }

    const dd::span_data* named(std::string_view name, std::size_t nth = 0) const
    {
        for (const auto& s : spans)
            if (s.name == name && nth-- == 0)
                return &s;
        return nullptr;
    }
    std::size_t count(std::string_view name) const
    {
        std::size_t n = 0;
        for (const auto& s : spans)
            n += s.name == name;
        return n;
    }

private:
    std::mutex mtx_;
};

const dd::attribute_value* attr(const dd::span_data& s, std::string_view key)
{
    for (const auto& a : s.attributes)
        if (a.key == key)
            return &a.value;
    return nullptr;
}

std::string str_attr(const dd::span_data& s, std::string_view key)
{
    const auto* v = attr(s, key);
    return v && std::holds_alternative<std::string>(*v) ? std::get<std::string>(*v) : std::string("(none)");
}

std::int64_t int_attr(const dd::span_data& s, std::string_view key)
{
    const auto* v = attr(s, key);
    return v && std::holds_alternative<std::int64_t>(*v) ? std::get<std::int64_t>(*v) : -1;
}

std::string hex(const std::uint8_t* p, std::size_t n)
{
    static constexpr char digits[] = "0123456789abcdef";
    std::string s;
    for (std::size_t i = 0; i < n; ++i)
    {
        s += digits[p[i] >> 4];
        s += digits[p[i] & 15];
    }
    return s;
}
template <std::size_t N>
std::string hex(const std::array<std::uint8_t, N>& a)
{
    return hex(a.data(), N);
}

std::string header(const dd::http_request& r, std::string_view name)
{
    return std::string(r.headers.find(name).value_or("(none)"));
}

constexpr const char* parent_tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
constexpr const char* parent_trace = "4bf92f3577b34da6a3ce929d0e0e4736";
constexpr const char* parent_span = "00f067aa0ba902b7";

// ---- traceparent and tracestate ----

TEST(trace_context, a_version_00_traceparent_parses)
{
    const auto c = dd::parse_trace_context(parent_tp, "congo=t61rcWkgMzE");
    ASSERT_TRUE(c);
    EXPECT_EQ(hex(c->trace), parent_trace);
    EXPECT_EQ(hex(c->span), parent_span);
    EXPECT_EQ(c->flags, 1);
    EXPECT_TRUE(c->sampled());
    EXPECT_EQ(c->trace_state, "congo=t61rcWkgMzE");
    EXPECT_EQ(dd::format_traceparent(c->trace, c->span, c->flags), parent_tp);
    const auto unsampled = dd::parse_trace_context(" 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00\t");
    ASSERT_TRUE(unsampled);
    EXPECT_FALSE(unsampled->sampled());
}

TEST(trace_context, later_versions_parse_by_the_version_00_rules)
{
    const auto exact = dd::parse_trace_context("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    ASSERT_TRUE(exact);
    EXPECT_EQ(hex(exact->span), parent_span);
    const auto longer = dd::parse_trace_context("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09-what-comes-next");
    ASSERT_TRUE(longer);
    EXPECT_EQ(longer->flags, 9);
    EXPECT_EQ(hex(longer->trace), parent_trace);
    // After the flags, a later version's fields start with '-'.
    EXPECT_FALSE(dd::parse_trace_context("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09x"));
}

TEST(trace_context, invalid_traceparents_are_refused_whole)
{
    const char* bad[] = {
        "",
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",     // version ff
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",     // all-zero trace id
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",     // all-zero span id
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",     // uppercase hex
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01",     // uppercase hex
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0A",     // uppercase flags
        "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",     // not hex
        "0g-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",     // version not hex
        "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",      // trace id too short
        "00-4bf92f3577b34da6a3ce929d0e0e47366-00f067aa0ba902b7-01",    // trace id too long
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b-01",      // span id too short
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",      // flags too short
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-00",  // version 00 has nothing after the flags
        "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",     // separators
        "4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",           // no version, no flags
    };
    for (const char* v : bad)
        EXPECT_FALSE(dd::parse_trace_context(v, "congo=t61rcWkgMzE")) << v;
}

TEST(trace_context, tracestate_members_are_checked_and_empty_ones_skipped)
{
    EXPECT_EQ(dd::normalize_tracestate("rojo=00f067aa0ba902b7 , ,congo=t61rcWkgMzE"), "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
    EXPECT_EQ(dd::normalize_tracestate("tenant1@vendor=x,a_b-c*d/e=1"), "tenant1@vendor=x,a_b-c*d/e=1");
    EXPECT_EQ(dd::normalize_tracestate(""), "");
    // One bad member (uppercase key, no '=', a ',' or '=' in the value, a key
    // twice) and the tracestate cannot be forwarded in part: none.
    for (const char* bad : {"Rojo=1,congo=2", "rojo,congo=2", "rojo=1=2", "rojo=1,rojo=2", "rojo=a\x7f", "@v=1", "t@=1"})
        EXPECT_EQ(dd::normalize_tracestate(bad), "") << bad;
}

TEST(trace_context, tracestate_keeps_32_members_and_512_characters)
{
    std::string many;
    for (int i = 0; i < 40; ++i)
        many += (i ? "," : "") + ("k" + std::to_string(i)) + "=v";
    const std::string kept = dd::normalize_tracestate(many);
    EXPECT_EQ(std::count(kept.begin(), kept.end(), '=') , 32);
    EXPECT_TRUE(kept.starts_with("k0=v,k1=v,")) << kept;
    EXPECT_TRUE(kept.ends_with(",k31=v")) << kept;
    // Too many members, and one of them long but the whole short enough: the
    // last ones go, the long one stays.
    std::string with_long = "long=" + std::string(200, 'x');
    for (int i = 0; i < 32; ++i)
        with_long += ",k" + std::to_string(i) + "=v";
    const std::string kept_long = dd::normalize_tracestate(with_long);
    EXPECT_TRUE(kept_long.starts_with("long=")) << kept_long;
    EXPECT_TRUE(kept_long.ends_with(",k30=v")) << kept_long;

    // 512 characters are kept whole.
    std::string exact;
    for (int i = 0; i < 8; ++i)
        exact += (i ? "," : "") + ("k" + std::to_string(i)) + "=" + std::string(i == 7 ? 61 : 60, 'v');
    ASSERT_EQ(exact.size(), 512u);
    EXPECT_EQ(dd::normalize_tracestate(exact), exact);

    // Too long: the members over 128 characters go first, then members from
    // the end, whole.
    const std::string big = "big=" + std::string(200, 'x');
    std::string mixed = "a=" + std::string(99, '1') + "," + big;
    for (int i = 0; i < 4; ++i)
        mixed += ",m" + std::to_string(i) + "=" + std::string(98, '2');
    const std::string out = dd::normalize_tracestate(mixed);
    EXPECT_EQ(out.find("big="), std::string::npos) << out;
    EXPECT_LE(out.size(), 512u);
    EXPECT_TRUE(out.starts_with("a=")) << out;
    EXPECT_NE(out.find("m2="), std::string::npos) << out;  // 5 x 101 characters and 4 commas fit
    EXPECT_NE(out.find("m3="), std::string::npos) << out;

    std::string tail = "a=1";
    for (int i = 0; i < 6; ++i)
        tail += ",m" + std::to_string(i) + "=" + std::string(100, '2');
    const std::string cut = dd::normalize_tracestate(tail);
    EXPECT_LE(cut.size(), 512u);
    EXPECT_NE(cut.find("m3="), std::string::npos) << cut;
    EXPECT_EQ(cut.find("m5="), std::string::npos) << cut;  // dropped from the end
}

// ---- the client ----

class trace_test : public ::testing::Test
{
protected:
    asio::io_context ioc;
    std::shared_ptr<dd::testing::fake_transport> fake = std::make_shared<dd::testing::fake_transport>(ioc.get_executor());
    std::shared_ptr<collecting_tracer> tr = std::make_shared<collecting_tracer>();
    dd::diagnostics diag;

    // Each test its own key (its own rate-limit bucket).
    dd::client make_client(
        bool traced,
        dd::trace_params tp = {},
        dd::rate_limit_params rl = {.enabled = false},
        dd::retry_params rp = {.initial_backoff = 1ms, .max_backoff = 5ms}
    )
    {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dd::client_params p{.base_url = base_url, .api_key = std::string(api_key) + info->name(), .rate_limit = rl, .retry = rp};
        if (traced)
            p.tracer = tr;
        p.trace = std::move(tp);
        return dd::client(fake, std::move(p));
    }

    template <class F>
    auto run(F&& f)
    {
        return dd_test::run_awaitable(ioc, f(asio::as_tuple(asio::use_awaitable)));
    }

    std::string ok_order() const { return R"({"order":)" + order_json() + "}"; }

    // The upload of "abc" to a presigned URL with user info and signatures,
    // then the re-read.
    dd::error_code upload(dd::client& c, dd::request_options opts = {})
    {
        const std::string url = "https://u:hunter2@storage.example:9000/bucket/a1/manual.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                                "&X-Amz-Credential=AKIAEXAMPLE%2F20240501&X-Amz-Signature=deadbeef&x-id=PutObject";
        script_upload(*fake, url);
        bool done = false;
        dd::error_code uec;
        dd::async_upload_asset(c, std::make_shared<dd::memory_source>("abc"), {.filename = "manual.pdf"},
                               dd::upload_options{}, opts, diag, [&](dd::error_code ec, dd::asset) {
                                   uec = ec;
                                   done = true;
                               });
        dd_test::run(ioc);
        EXPECT_TRUE(done);
        return uec;
    }
};

TEST(trace_params, no_tracer_and_no_provider_by_default)
{
    dd::client_params p;
    EXPECT_EQ(p.tracer, nullptr);
    EXPECT_FALSE(p.trace.context);
    EXPECT_TRUE(p.trace.follow_unsampled_parent);
    EXPECT_FALSE(p.trace.propagate_to_storage);
    EXPECT_FALSE(dd::request_options{}.trace_parent);
}

TEST_F(trace_test, no_tracer_and_no_parent_send_no_trace_header)
{
    auto c = make_client(false);
    fake->expect_any().respond(200, ok_order());
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(c, "o1", t); });
    ASSERT_FALSE(ec);
    EXPECT_EQ(header(fake->requests().at(0), "traceparent"), "(none)");
    EXPECT_EQ(header(fake->requests().at(0), "tracestate"), "(none)");
}

TEST_F(trace_test, a_parent_without_a_tracer_is_forwarded_unchanged_on_every_attempt)
{
    auto c = make_client(false);
    fake->expect_any().respond(503, "busy");
    fake->expect_any().respond(200, ok_order());
    const auto opts_parent = dd::parse_trace_context(parent_tp, "congo=t61rcWkgMzE");
    dd::request_options opts{.trace_parent = opts_parent};
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(c, "o1", opts, t); });
    ASSERT_FALSE(ec);
    ASSERT_EQ(fake->requests().size(), 2u);
    for (const auto& r : fake->requests())
    {
        EXPECT_EQ(header(r, "traceparent"), parent_tp);
        EXPECT_EQ(header(r, "tracestate"), "congo=t61rcWkgMzE");
    }
}

TEST_F(trace_test, with_a_tracer_each_attempt_names_its_own_span)
{
    auto c = make_client(true);
    fake->expect_any().respond(503, "busy");
    fake->expect_any().respond(200, ok_order());
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(c, "o1", t); });
    ASSERT_FALSE(ec);
    ASSERT_EQ(fake->requests().size(), 2u);
    ASSERT_EQ(tr->count("GET /orders/{id}"), 2u);
    const dd::span_data& op = *tr->named("get_order");
    EXPECT_EQ(op.parent, dd::span_id{});  // a new trace: the operation is its root
    for (std::size_t i = 0; i < 2; ++i)
    {
        const dd::span_data& a = *tr->named("GET /orders/{id}", i);
        EXPECT_EQ(header(fake->requests()[i], "traceparent"), "00-" + hex(op.trace) + "-" + hex(a.id) + "-01");
        EXPECT_EQ(header(fake->requests()[i], "tracestate"), "(none)");
    }
    EXPECT_NE(tr->named("GET /orders/{id}", 0)->id, tr->named("GET /orders/{id}", 1)->id);
}

TEST_F(trace_test, a_sampled_parent_is_joined_and_its_tracestate_carried)
{
    auto c = make_client(true);
    fake->expect_any().respond(200, ok_order());
    const auto opts_parent = dd::parse_trace_context(parent_tp, "congo=t61rcWkgMzE");
    dd::request_options opts{.trace_parent = opts_parent};
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(c, "o1", opts, t); });
    ASSERT_FALSE(ec);
    const dd::span_data& op = *tr->named("get_order");
    const dd::span_data& a = *tr->named("GET /orders/{id}");
    EXPECT_EQ(hex(op.trace), parent_trace);
    EXPECT_EQ(hex(op.parent), parent_span);
    EXPECT_EQ(op.trace_state, "congo=t61rcWkgMzE");
    EXPECT_EQ(a.trace, op.trace);
    EXPECT_EQ(a.parent, op.id);
    EXPECT_EQ(header(fake->requests().at(0), "traceparent"), "00-" + std::string(parent_trace) + "-" + hex(a.id) + "-01");
    EXPECT_EQ(header(fake->requests().at(0), "tracestate"), "congo=t61rcWkgMzE");
}

TEST_F(trace_test, an_unsampled_parent_is_followed_unless_configured)
{
    const std::string unsampled = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";
    {
        auto c = make_client(true);
        fake->expect_any().respond(200, ok_order());
        const auto opts_parent = dd::parse_trace_context(unsampled);
        dd::request_options opts{.trace_parent = opts_parent};
        auto [ec, o] = run([&](auto t) { return dd::async_get_order(c, "o1", opts, t); });
        ASSERT_FALSE(ec);
        EXPECT_TRUE(tr->spans.empty());
        EXPECT_EQ(header(fake->requests().at(0), "traceparent"), unsampled);
    }
    {
        auto c = make_client(true, {.follow_unsampled_parent = false});
        fake->expect_any().respond(200, ok_order());
        const auto opts_parent = dd::parse_trace_context(unsampled);
        dd::request_options opts{.trace_parent = opts_parent};
        auto [ec, o] = run([&](auto t) { return dd::async_get_order(c, "o1", opts, t); });
        ASSERT_FALSE(ec);
        ASSERT_EQ(tr->spans.size(), 2u);
        const dd::span_data& a = *tr->named("GET /orders/{id}");
        EXPECT_EQ(hex(a.trace), parent_trace);
        EXPECT_EQ(header(fake->requests().at(1), "traceparent"), "00-" + std::string(parent_trace) + "-" + hex(a.id) + "-01");
    }
}

TEST_F(trace_test, the_context_provider_is_asked_at_each_operations_start)
{
    int asked = 0;
    auto c = make_client(true, {.context = [&]() -> std::optional<dd::trace_context> {
                                    ++asked;
                                    return dd::parse_trace_context(parent_tp);
                                }});
    fake->expect_any().respond(200, ok_order());
    fake->expect_any().respond(200, ok_order());
    run([&](auto t) { return dd::async_get_order(c, "o1", t); });
    run([&](auto t) { return dd::async_get_order(c, "o2", t); });
    EXPECT_EQ(asked, 2);
    for (const auto& s : tr->spans)
        EXPECT_EQ(hex(s.trace), parent_trace);
    // An explicit parent comes first: the provider is not asked.
    fake->expect_any().respond(200, ok_order());
    const auto opts_parent = dd::parse_trace_context("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    dd::request_options opts{.trace_parent = opts_parent};
    run([&](auto t) { return dd::async_get_order(c, "o3", opts, t); });
    EXPECT_EQ(asked, 2);
    EXPECT_EQ(hex(tr->spans.back().trace), "0af7651916cd43dd8448eb211c80319c");
}

TEST_F(trace_test, a_provider_without_a_tracer_gives_the_parent_to_forward)
{
    auto c = make_client(false, {.context = [] { return dd::parse_trace_context(parent_tp, "a=1"); }});
    fake->expect_any().respond(200, ok_order());
    run([&](auto t) { return dd::async_get_order(c, "o1", t); });
    EXPECT_EQ(header(fake->requests().at(0), "traceparent"), parent_tp);
    EXPECT_EQ(header(fake->requests().at(0), "tracestate"), "a=1");
}

TEST_F(trace_test, extra_headers_traceparent_is_the_parent_and_the_librarys_header_wins)
{
    const dd::http_headers::field fields[] = {{"traceparent", parent_tp}, {"tracestate", "congo=1"}};
    // Without a tracer, the caller's header goes as it is.
    {
        auto c = make_client(false);
        fake->expect_any().respond(200, ok_order());
        dd::request_options opts{.extra_headers = fields};
        run([&](auto t) { return dd::async_get_order(c, "o1", opts, t); });
        EXPECT_EQ(header(fake->requests().at(0), "traceparent"), parent_tp);
    }
    // With one, it is the parent; the header sent names the attempt's span.
    auto c = make_client(true);
    fake->expect_any().respond(200, ok_order());
    dd::request_options opts{.extra_headers = fields};
    run([&](auto t) { return dd::async_get_order(c, "o1", opts, t); });
    const dd::span_data& a = *tr->named("GET /orders/{id}");
    EXPECT_EQ(hex(tr->named("get_order")->parent), parent_span);
    const auto reqs = fake->requests();
    const auto& sent = reqs.at(1);
    EXPECT_EQ(header(sent, "traceparent"), "00-" + std::string(parent_trace) + "-" + hex(a.id) + "-01");
    EXPECT_EQ(header(sent, "tracestate"), "congo=1");
    int traceparents = 0;
    for (const auto& f : sent.headers)
        traceparents += f.name == "traceparent";
    EXPECT_EQ(traceparents, 1);
    // request_options::trace_parent beats the extra header.
    fake->expect_any().respond(200, ok_order());
    const auto both_parent = dd::parse_trace_context("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    dd::request_options both{.extra_headers = fields, .trace_parent = both_parent};
    run([&](auto t) { return dd::async_get_order(c, "o1", both, t); });
    EXPECT_TRUE(header(fake->requests().at(2), "traceparent").starts_with("00-0af7651916cd43dd8448eb211c80319c-"));
    EXPECT_EQ(header(fake->requests().at(2), "tracestate"), "(none)");
}

TEST_F(trace_test, a_parent_built_by_hand_is_checked_before_it_is_sent)
{
    auto c = make_client(false);
    // All-zero ids: no parent, nothing sent.
    fake->expect_any().respond(200, ok_order());
    const dd::trace_context all_zero{};
    dd::request_options zero{.trace_parent = all_zero};
    run([&](auto t) { return dd::async_get_order(c, "o1", zero, t); });
    EXPECT_EQ(header(fake->requests().at(0), "traceparent"), "(none)");
    // A tracestate that is not one (CR LF, an injected header): dropped.
    dd::trace_context by_hand = *dd::parse_trace_context(parent_tp);
    by_hand.trace_state = "a=1\r\nX-Injected: yes";
    fake->expect_any().respond(200, ok_order());
    dd::request_options opts{.trace_parent = by_hand};
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(c, "o1", opts, t); });
    ASSERT_FALSE(ec);
    const auto sent = fake->requests().at(1);
    EXPECT_EQ(header(sent, "traceparent"), parent_tp);
    EXPECT_EQ(header(sent, "tracestate"), "(none)");
    EXPECT_EQ(header(sent, "X-Injected"), "(none)");
}

TEST_F(trace_test, an_invalid_parent_is_ignored_and_the_request_goes_on)
{
    auto c = make_client(true);
    const dd::http_headers::field fields[] = {{"traceparent", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}};
    fake->expect_any().respond(200, ok_order());
    dd::request_options opts{.extra_headers = fields};
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(c, "o1", opts, t); });
    ASSERT_FALSE(ec);
    const dd::span_data& op = *tr->named("get_order");
    EXPECT_EQ(op.parent, dd::span_id{});  // a new trace
    EXPECT_NE(hex(op.trace), parent_trace);
    EXPECT_TRUE(header(fake->requests().at(0), "traceparent").starts_with("00-" + hex(op.trace)));
}

TEST_F(trace_test, an_attempt_span_has_the_http_client_attributes)
{
    auto c = make_client(true);
    fake->expect_any().respond(200, R"({"orders":[],"pagination":)" + pagination_json() + "}");
    dd::order_query q;
    q.email = "ada@example.com";
    auto [ec, o] = run([&](auto t) { return dd::async_list_orders(c, q, t); });
    ASSERT_FALSE(ec) << ec.message();
    ASSERT_EQ(tr->spans.size(), 2u);
    const dd::span_data& a = tr->spans[0];
    const dd::span_data& op = tr->spans[1];
    EXPECT_EQ(a.name, "GET /orders");
    EXPECT_EQ(a.kind, dd::span_kind::client);
    EXPECT_EQ(a.parent, op.id);
    EXPECT_EQ(a.status, dd::span_status::unset);
    EXPECT_EQ(str_attr(a, "http.request.method"), "GET");
    EXPECT_EQ(str_attr(a, "server.address"), "dd.example.test");
    EXPECT_EQ(int_attr(a, "server.port"), 443);
    EXPECT_EQ(str_attr(a, "url.template"), "/orders");
    EXPECT_EQ(str_attr(a, "url.full"), fake->requests().at(0).url);
    EXPECT_EQ(int_attr(a, "http.response.status_code"), 200);
    EXPECT_EQ(attr(a, "http.request.resend_count"), nullptr);
    EXPECT_EQ(attr(a, "error.type"), nullptr);
    EXPECT_EQ(op.name, "list_orders");
    EXPECT_EQ(op.kind, dd::span_kind::internal);
    EXPECT_LE(op.start, a.start);
    EXPECT_GE(op.end, a.end);
    // Nothing secret.
    for (const auto& s : tr->spans)
        for (const auto& at : s.attributes)
            if (const auto* v = std::get_if<std::string>(&at.value))
            {
                EXPECT_EQ(v->find("sk_test_SECRET"), std::string::npos) << at.key;
            }
}

TEST_F(trace_test, a_raw_request_has_no_url_template)
{
    auto c = make_client(true);
    fake->expect_any().respond(200, R"({"shop":{}})");
    dd::raw_request r{.method = dd::http_method::get, .path = "/shop"};
    auto [ec, v] = run([&](auto t) { return dd::async_raw_request(c, r, t); });
    ASSERT_FALSE(ec);
    ASSERT_EQ(tr->spans.size(), 2u);
    EXPECT_EQ(tr->spans[0].name, "GET");
    EXPECT_EQ(attr(tr->spans[0], "url.template"), nullptr);
    EXPECT_EQ(str_attr(tr->spans[0], "url.full"), std::string(base_url) + "/shop");
    EXPECT_EQ(tr->spans[1].name, "raw_request");
}

TEST_F(trace_test, a_503_then_200_gives_two_attempts_a_backoff_and_a_resend_count)
{
    auto c = make_client(true);
    fake->expect_any().respond(503, "<html>busy</html>");
    fake->expect_any().respond(200, ok_order());
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(c, "o1", t); });
    ASSERT_FALSE(ec);
    std::vector<std::string> names;
    for (const auto& s : tr->spans)
        names.push_back(s.name);
    EXPECT_EQ(names, (std::vector<std::string>{"GET /orders/{id}", "backoff", "GET /orders/{id}", "get_order"}));
    const dd::span_data& first = tr->spans[0];
    const dd::span_data& wait = tr->spans[1];
    const dd::span_data& second = tr->spans[2];
    const dd::span_data& op = tr->spans[3];
    EXPECT_EQ(first.status, dd::span_status::error);
    EXPECT_EQ(int_attr(first, "http.response.status_code"), 503);
    EXPECT_EQ(str_attr(first, "error.type"), "server_error");
    EXPECT_EQ(attr(first, "http.request.resend_count"), nullptr);
    EXPECT_EQ(int_attr(second, "http.request.resend_count"), 1);
    EXPECT_EQ(second.status, dd::span_status::unset);
    EXPECT_EQ(wait.kind, dd::span_kind::internal);
    EXPECT_EQ(str_attr(wait, "digital_delivery.wait.reason"), "backoff");
    EXPECT_EQ(str_attr(wait, "digital_delivery.retry.cause"), "server_error");
    EXPECT_LE(int_attr(wait, "digital_delivery.wait.planned_ms"), 5);
    EXPECT_GE(int_attr(wait, "digital_delivery.wait.ms"), 0);
    for (const auto* s : {&first, &wait, &second})
    {
        EXPECT_EQ(s->parent, op.id);
        EXPECT_EQ(s->trace, op.trace);
    }
    EXPECT_EQ(op.status, dd::span_status::unset);
}

TEST_F(trace_test, a_429_pause_is_a_retry_after_span)
{
    auto c = make_client(true, {}, {.enabled = false}, {.initial_backoff = 1ms, .max_backoff = 5ms});
    fake->expect_any().respond(429, R"({"error":"Rate limit exceeded"})").header("Retry-After", "3");
    fake->expect_any().respond(200, ok_order());
    dd::testing::virtual_clock vc;
    auto fut = asio::co_spawn(ioc, dd::async_get_order(c, "o1", asio::as_tuple(asio::use_awaitable)), asio::use_future);
    vc.run_for(ioc, 4s, 100ms);
    auto [ec, o] = dd_test::wait(ioc, fut);
    ASSERT_FALSE(ec);
    const dd::span_data* wait = tr->named("backoff");
    ASSERT_TRUE(wait);
    EXPECT_EQ(str_attr(*wait, "digital_delivery.wait.reason"), "retry_after");
    EXPECT_EQ(str_attr(*wait, "digital_delivery.retry.cause"), "rate_limited");
    EXPECT_EQ(int_attr(*wait, "digital_delivery.wait.planned_ms"), 3000);
    EXPECT_GE(int_attr(*wait, "digital_delivery.wait.ms"), 3000);
    EXPECT_EQ(wait->end - wait->start >= 3s, true);
    EXPECT_EQ(str_attr(*tr->named("GET /orders/{id}"), "error.type"), "rate_limited");
}

TEST_F(trace_test, a_wait_for_rate_limit_points_is_a_span)
{
    dd::testing::virtual_clock vc;
    // 1 point per 10 s: the second GET waits for the bucket.
    auto c = make_client(true, {}, {.capacity = 1, .window = 10s, .probe_first = false});
    fake->expect_any().respond(200, ok_order());
    fake->expect_any().respond(200, ok_order());
    auto first = asio::co_spawn(ioc, dd::async_get_order(c, "o1", asio::as_tuple(asio::use_awaitable)), asio::use_future);
    auto second = asio::co_spawn(ioc, dd::async_get_order(c, "o2", dd::request_options{.prio = dd::priority::background}, asio::as_tuple(asio::use_awaitable)), asio::use_future);
    vc.run_for(ioc, 15s, 100ms);
    ASSERT_FALSE(std::get<0>(dd_test::wait(ioc, first)));
    ASSERT_FALSE(std::get<0>(dd_test::wait(ioc, second)));
    ASSERT_EQ(tr->count("rate_limit_wait"), 1u);
    const dd::span_data& w = *tr->named("rate_limit_wait");
    EXPECT_EQ(w.kind, dd::span_kind::internal);
    EXPECT_EQ(str_attr(w, "digital_delivery.wait.reason"), "rate_limit");
    EXPECT_EQ(int_attr(w, "digital_delivery.rate_limit.points"), 1);
    EXPECT_EQ(str_attr(w, "digital_delivery.priority"), "background");
    EXPECT_GE(int_attr(w, "digital_delivery.wait.ms"), 5000);
    EXPECT_EQ(w.status, dd::span_status::unset);
    // Its parent is the second operation, whose attempt follows it.
    const dd::span_data* op2 = tr->named("get_order", 1);
    ASSERT_TRUE(op2);
    EXPECT_EQ(w.parent, op2->id);
    const dd::span_data* a2 = tr->named("GET /orders/{id}", 1);
    ASSERT_TRUE(a2);
    EXPECT_EQ(a2->parent, op2->id);
    EXPECT_GE(a2->start, w.end);
}

TEST_F(trace_test, a_callers_cancellation_leaves_the_status_unset)
{
    auto c = make_client(true);
    fake->expect_any().hang();
    asio::cancellation_signal sig;
    dd::error_code got;
    dd::async_get_order(c, "o1", asio::bind_cancellation_slot(sig.slot(), [&](dd::error_code ec, dd::order) { got = ec; }));
    ioc.poll();
    sig.emit(asio::cancellation_type::terminal);
    dd_test::run(ioc);
    EXPECT_EQ(got, asio::error::operation_aborted);
    ASSERT_EQ(tr->spans.size(), 2u);
    for (const auto& s : tr->spans)
    {
        EXPECT_EQ(s.status, dd::span_status::unset) << s.name;
        EXPECT_EQ(attr(s, "error.type"), nullptr) << s.name;
    }
}

TEST_F(trace_test, a_failure_is_an_error_on_the_attempt_and_the_operation)
{
    auto c = make_client(true);
    fake->expect_any().respond(404, R"({"error":"Order not found"})");
    auto [ec, o] = run([&](auto t) { return dd::async_get_order(c, "missing", t); });
    EXPECT_EQ(ec, dd::api_errc::order_not_found);
    for (const auto& s : tr->spans)
    {
        EXPECT_EQ(s.status, dd::span_status::error) << s.name;
        EXPECT_EQ(str_attr(s, "error.type"), "order_not_found") << s.name;
        // The CLIENT span's status code (404) says why: no description there
        // (the HTTP conventions); the operation's span has one.
        if (s.kind == dd::span_kind::client)
            EXPECT_EQ(s.status_message, "") << s.name;
        else
            EXPECT_NE(s.status_message, "") << s.name;
    }
    EXPECT_TRUE(std::any_of(tr->spans.begin(), tr->spans.end(), [](const auto& s) { return s.kind == dd::span_kind::client; }));
    // A request refused before sending: the operation's span alone.
    tr->spans.clear();
    auto [ec2, o2] = run([&](auto t) { return dd::async_get_order(c, "..", t); });
    EXPECT_EQ(ec2, dd::client_errc::invalid_path_parameter);
    ASSERT_EQ(tr->spans.size(), 1u);
    EXPECT_EQ(tr->spans[0].name, "get_order");
    EXPECT_EQ(tr->spans[0].status, dd::span_status::error);
}

TEST_F(trace_test, an_upload_has_its_create_put_and_reread_under_its_span)
{
    auto c = make_client(true);
    ASSERT_FALSE(upload(c)) << diag.to_string();
    const dd::span_data* up = tr->named("upload_asset");
    const dd::span_data* create = tr->named("create_asset");
    const dd::span_data* create_attempt = tr->named("POST /assets");
    const dd::span_data* put = tr->named("PUT");
    const dd::span_data* reread = tr->named("get_asset");
    ASSERT_TRUE(up && create && create_attempt && put && reread);
    EXPECT_EQ(up->parent, dd::span_id{});
    EXPECT_EQ(create->parent, up->id);
    EXPECT_EQ(create_attempt->parent, create->id);
    EXPECT_EQ(put->parent, up->id);
    EXPECT_EQ(reread->parent, up->id);
    for (const auto& s : tr->spans)
        EXPECT_EQ(s.trace, up->trace) << s.name;
    EXPECT_EQ(put->kind, dd::span_kind::client);
    EXPECT_EQ(int_attr(*put, "http.request.body.size"), 3);
    EXPECT_EQ(int_attr(*put, "http.response.status_code"), 200);
    EXPECT_EQ(str_attr(*put, "server.address"), "storage.example");
    EXPECT_EQ(int_attr(*put, "server.port"), 9000);
    EXPECT_EQ(attr(*put, "url.template"), nullptr);
    // The presigned URL without its user info and secrets.
    EXPECT_EQ(str_attr(*put, "url.full"),
              "https://storage.example:9000/bucket/a1/manual.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256"
              "&X-Amz-Credential=REDACTED&X-Amz-Signature=REDACTED&x-id=PutObject");
    // Progress as events of the PUT.
    ASSERT_FALSE(put->events.empty());
    const dd::span_event& last = put->events.back();
    EXPECT_EQ(last.name, "upload.progress");
    ASSERT_EQ(last.attributes.size(), 2u);
    EXPECT_EQ(std::get<std::int64_t>(last.attributes[0].value), 3);
    EXPECT_EQ(std::get<std::int64_t>(last.attributes[1].value), 3);
    // No trace header to the presigned URL; the API requests have theirs.
    const auto reqs = fake->requests();
    ASSERT_EQ(reqs.size(), 3u);
    EXPECT_EQ(header(reqs[1], "traceparent"), "(none)");
    EXPECT_EQ(header(reqs[0], "traceparent"), "00-" + hex(up->trace) + "-" + hex(create_attempt->id) + "-01");
    for (const auto& s : tr->spans)
        for (const auto& at : s.attributes)
            if (const auto* v = std::get_if<std::string>(&at.value))
            {
                EXPECT_EQ(v->find("deadbeef"), std::string::npos) << at.key;
                EXPECT_EQ(v->find("hunter2"), std::string::npos) << at.key;
                EXPECT_EQ(v->find("AKIAEXAMPLE"), std::string::npos) << at.key;
            }
}

TEST_F(trace_test, an_upload_asks_the_provider_once_and_its_requests_join_its_span)
{
    int asked = 0;
    auto c = make_client(true, {.context = [&] {
                                    ++asked;
                                    return dd::parse_trace_context(parent_tp);
                                }});
    ASSERT_FALSE(upload(c)) << diag.to_string();
    EXPECT_EQ(asked, 1);
    const dd::span_data* up = tr->named("upload_asset");
    ASSERT_TRUE(up);
    EXPECT_EQ(hex(up->parent), parent_span);
    EXPECT_EQ(tr->named("create_asset")->parent, up->id);
    EXPECT_EQ(tr->named("get_asset")->parent, up->id);
}

TEST_F(trace_test, storage_gets_the_trace_headers_only_when_configured)
{
    auto c = make_client(true, {.propagate_to_storage = true});
    ASSERT_FALSE(upload(c)) << diag.to_string();
    const dd::span_data* put = tr->named("PUT");
    ASSERT_TRUE(put);
    EXPECT_EQ(header(fake->requests().at(1), "traceparent"), "00-" + hex(put->trace) + "-" + hex(put->id) + "-01");
}

TEST_F(trace_test, an_upload_forwards_its_parent_without_a_tracer_but_not_to_storage)
{
    auto c = make_client(false);
    const auto opts_parent = dd::parse_trace_context(parent_tp);
    dd::request_options opts{.trace_parent = opts_parent};
    ASSERT_FALSE(upload(c, opts)) << diag.to_string();
    const auto reqs = fake->requests();
    ASSERT_EQ(reqs.size(), 3u);
    EXPECT_EQ(header(reqs[0], "traceparent"), parent_tp);
    EXPECT_EQ(header(reqs[1], "traceparent"), "(none)");
    EXPECT_EQ(header(reqs[2], "traceparent"), parent_tp);
}

}  // namespace
