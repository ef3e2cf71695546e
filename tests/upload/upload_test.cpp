// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Uploads over the fake transport: request shapes, sources, retries, URL
// refresh, progress, stall/deadline, cancellation, completion styles; and the
// sans-io core (progress throttle, post-PUT decisions).
#include <digital_delivery.hpp>
#include <digital_delivery/impl/upload/sansio/upload_core.hpp>
#include <digital_delivery/testing/fake_transport.hpp>
#include <digital_delivery/testing/virtual_clock.hpp>
#include <digital_delivery/upload.hpp>

#include "run.hpp"
#include "test_data.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/append.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

namespace dd = digital_delivery;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

constexpr const char* base_url = "https://dd.example.test/api/v1/external";
constexpr const char* api_key = "sk_test_SECRET_123";
constexpr const char* put_url =
    "https://storage.example/bucket/assets/a1/u/manual.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=deadbeef";
constexpr const char* put_target = "/bucket/assets/a1/u/manual.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=deadbeef";
constexpr const char* put_url2 = "https://storage.example/bucket/assets/a1/v/manual.pdf?X-Amz-Signature=cafe";

std::string iso(std::chrono::system_clock::time_point t)
{
    return dd::format_timestamp(std::chrono::time_point_cast<std::chrono::microseconds>(t));
}

std::string asset_json(std::int64_t size = 3, const std::string& filename = "manual.pdf")
{
    return R"({"id":"a1","type":"internal","name":null,"filename":")" + filename +
           R"(","external_url":null,"content_type":"application/pdf","byte_size":)" + std::to_string(size) +
           R"(,"watermark_asset":false,"autogenerate_licence_key":false,"created_at":"2026-11-22T10:00:00.000Z","updated_at":"2026-11-22T10:00:00.000Z"})";
}

std::string with_upload(std::int64_t size, const char* url = put_url, std::chrono::system_clock::time_point exp = std::chrono::system_clock::now() + 1h)
{
    return R"({"asset":)" + asset_json(size) + R"(,"upload":{"method":"PUT","url":")" + url +
           R"(","headers":{"Content-Type":"application/pdf","Content-Disposition":"inline; filename=\"manual.pdf\""},"expires_at":")" +
           iso(exp) + R"("}})";
}

const char* expired_xml = "<?xml version=\"1.0\"?><Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>";
const char* sig_xml =
    "<?xml version=\"1.0\"?><Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not "
    "match the signature you provided.</Message><StringToSign>AWS4...secret</StringToSign></Error>";
const char* unavailable_xml = "<Error><Code>ServiceUnavailable</Code><Message>Please reduce your request rate.</Message></Error>";

using dd_test::pattern;

// A source with a declared size that delays every read (a slow disk or
// network), optionally never completing after `hang_after` bytes.
class slow_source final : public dd::body_source
{
public:
    slow_source(asio::any_io_executor ex, std::string data, std::chrono::milliseconds delay)
        : timer_(ex), data_(std::move(data)), delay_(delay)
    {
    }
    std::uint64_t size() const noexcept override { return data_.size(); }
    void async_read_some(asio::mutable_buffer b, read_handler h) override
    {
        timer_.expires_after(delay_);
        timer_.async_wait([this, b, h = std::move(h)](dd::error_code) mutable {
            if (off_ >= data_.size())
                return std::move(h)(asio::error::eof, 0);
            const std::size_t n = asio::buffer_copy(b, asio::buffer(data_.data() + off_, std::min<std::size_t>(data_.size() - off_, 4096)));
            off_ += n;
            std::move(h)(dd::error_code{}, n);
        });
    }
    dd::error_code rewind() override
    {
        off_ = 0;
        ++rewinds;
        return {};
    }
    int rewinds = 0;

private:
    asio::steady_timer timer_;
    std::string data_;
    std::size_t off_ = 0;
    std::chrono::milliseconds delay_;
};

// Declares any size and has no data (what matters is that nothing is read).
class sized_source final : public dd::body_source
{
public:
    sized_source(asio::any_io_executor ex, std::uint64_t n) : ex_(std::move(ex)), n_(n) {}
    std::uint64_t size() const noexcept override { return n_; }
    void async_read_some(asio::mutable_buffer, read_handler h) override
    {
        ++reads;
        asio::post(ex_, asio::append(std::move(h), dd::error_code(dd::client_errc::source_unreadable), std::size_t(0)));
    }
    dd::error_code rewind() override { return {}; }
    int reads = 0;

private:
    asio::any_io_executor ex_;
    std::uint64_t n_;
};

class upload_test : public ::testing::Test
{
protected:
    asio::io_context ioc;
    std::shared_ptr<dd::testing::fake_transport> fake = std::make_shared<dd::testing::fake_transport>(ioc.get_executor());
    dd::client client{fake, dd::client_params{.base_url = base_url, .api_key = api_key}};
    dd::diagnostics diag;

    static std::string api(const std::string& rel) { return std::string("/api/v1/external") + rel; }

    struct result
    {
        dd::error_code ec;
        dd::asset a;
    };

    result run_upload(std::shared_ptr<dd::body_source> src, dd::upload_asset_params meta, dd::upload_options opts = {})
    {
        result r;
        bool done = false;
        dd::async_upload_asset(client, std::move(src), std::move(meta), std::move(opts), diag, [&](dd::error_code ec, dd::asset a) {
            r = {ec, std::move(a)};
            done = true;
        });
        dd_test::run(ioc);
        ioc.restart();
        EXPECT_TRUE(done);
        return r;
    }

    std::vector<dd::http_request> puts() const
    {
        std::vector<dd::http_request> out;
        for (auto& r : fake->requests())
            if (r.method == dd::http_method::put)
                out.push_back(r);
        return out;
    }
    int count(dd::http_method m, const std::string& target) const
    {
        int n = 0;
        for (auto& r : fake->requests())
            if (r.method == m && dd::testing::fake_transport::target_of(r.url) == target)
                ++n;
        return n;
    }

    /// Creates the asset with `created` (its upload handle), fails the first
    /// PUT, and expects the URL to be refreshed (POST /replace) before the
    /// retried PUT goes to the new URL; the upload must succeed.
    void expect_refresh_before_retry(const std::string& created)
    {
        fake->expect(dd::http_method::post, api("/assets")).respond(201, created);
        fake->expect(dd::http_method::put, put_target).fail(asio::error::connection_reset);
        fake->expect(dd::http_method::post, api("/assets/a1/replace")).respond(200, with_upload(3, put_url2));
        fake->expect(dd::http_method::put, dd::testing::fake_transport::target_of(put_url2).data()).respond(200);
        auto r = run_upload(std::make_shared<dd::memory_source>("abc"), {.filename = "manual.pdf"},
                            {.retry_backoff = 1ms, .reread_asset = false});
        ASSERT_FALSE(r.ec) << diag.to_string();
        EXPECT_TRUE(fake->done()) << (fake->mismatches().empty() ? "" : fake->mismatches()[0]);
    }
};

// ---- sans-io core ---------------------------------------------------------------------------

TEST(upload_core, progress_is_throttled_monotonic_and_ends_at_total)
{
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::time_point{} + 1h;
    dd::detail::progress_meter m(1000, 100ms, 0, t0);
    EXPECT_FALSE(m.on_bytes(100, t0 + 10ms));            // too early
    auto p = m.on_bytes(100, t0 + 120ms);                // 200 bytes, due
    ASSERT_TRUE(p);
    EXPECT_EQ(p->bytes_sent, 200u);
    EXPECT_EQ(p->total, 1000u);
    EXPECT_NEAR(p->rate, 200 / 0.12, 1e-6);
    EXPECT_FALSE(m.on_bytes(100, t0 + 150ms));           // within 100 ms of the last report
    // A retry: bytes restart from 0, reports resume only past the high-water mark.
    m.new_attempt(t0 + 300ms);
    EXPECT_EQ(m.attempt(), 2u);
    EXPECT_FALSE(m.on_bytes(150, t0 + 500ms));           // 150 <= 200 reported
    p = m.on_bytes(100, t0 + 700ms);                     // 250 > 200
    ASSERT_TRUE(p);
    EXPECT_EQ(p->bytes_sent, 250u);
    EXPECT_EQ(p->attempt, 2u);
    EXPECT_FALSE(m.on_bytes(750, t0 + 900ms));           // reaching the total is left to finish()
    auto f = m.finish(t0 + 950ms);
    EXPECT_EQ(f.bytes_sent, 1000u);
    EXPECT_EQ(f.total, 1000u);
    EXPECT_EQ(f.elapsed, 950ms);
}

TEST(upload_core, progress_step_bytes)
{
    const auto t0 = std::chrono::steady_clock::time_point{} + 1h;
    dd::detail::progress_meter m(10 << 20, 1h, 1 << 20, t0);
    EXPECT_FALSE(m.on_bytes(512 << 10, t0));
    auto p = m.on_bytes(512 << 10, t0 + 1ms);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->bytes_sent, 1u << 20);
}

TEST(upload_core, decisions_after_a_put)
{
    using dd::detail::decide_after_put;
    using dd::detail::put_action;
    const dd::error_code none;
    EXPECT_EQ(decide_after_put(none, 200, none, 1, 3), put_action::done);
    EXPECT_EQ(decide_after_put(asio::error::connection_reset, 0, none, 1, 3), put_action::retry);
    EXPECT_EQ(decide_after_put(asio::error::connection_reset, 0, none, 3, 3), put_action::fail);
    EXPECT_EQ(decide_after_put(dd::client_errc::request_timeout, 0, none, 1, 3), put_action::retry);
    EXPECT_EQ(decide_after_put(asio::error::operation_aborted, 0, none, 1, 3), put_action::fail);
    EXPECT_EQ(decide_after_put(dd::client_errc::source_unreadable, 0, none, 1, 3), put_action::fail);
    EXPECT_EQ(decide_after_put(dd::client_errc::source_size_mismatch, 0, none, 1, 3), put_action::fail);
    EXPECT_EQ(decide_after_put(dd::client_errc::protocol_error, 0, none, 1, 3), put_action::fail);
    EXPECT_EQ(decide_after_put(none, 503, dd::api_errc::storage_error, 1, 3), put_action::retry);
    EXPECT_EQ(decide_after_put(none, 503, dd::api_errc::storage_error, 3, 3), put_action::fail);
    EXPECT_EQ(decide_after_put(none, 403, dd::api_errc::storage_request_expired, 1, 3), put_action::refresh_and_retry);
    EXPECT_EQ(decide_after_put(none, 403, dd::api_errc::storage_request_expired, 3, 3), put_action::fail);
    EXPECT_EQ(decide_after_put(none, 403, dd::api_errc::storage_signature_mismatch, 1, 3), put_action::fail);
    EXPECT_EQ(decide_after_put(none, 403, dd::api_errc::storage_access_denied, 1, 3), put_action::fail);
    EXPECT_EQ(decide_after_put(none, 400, dd::api_errc::storage_error, 1, 3), put_action::fail);
}

TEST(upload_core, url_refresh_outside_system_clock)
{
    using dd::detail::url_needs_refresh;
    const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
    const auto far_future = *dd::parse_timestamp("9999-12-31T23:59:59Z");
    const auto far_past = *dd::parse_timestamp("1000-01-01T00:00:00Z");
    EXPECT_FALSE(url_needs_refresh(far_future, now, 60s));
    EXPECT_TRUE(url_needs_refresh(far_past, now, 60s));
    EXPECT_FALSE(url_needs_refresh(far_future, std::chrono::system_clock::time_point::max(), 60s));
    EXPECT_TRUE(url_needs_refresh(far_past, std::chrono::system_clock::time_point::min(), std::chrono::seconds::max()));
    EXPECT_FALSE(url_needs_refresh(far_future, now, std::chrono::seconds::min()));
}

TEST(upload_core, url_refresh)
{
    using dd::detail::url_needs_refresh;
    const auto now = std::chrono::system_clock::now();
    const auto ts = [](auto t) { return std::chrono::time_point_cast<std::chrono::microseconds>(t); };
    EXPECT_FALSE(url_needs_refresh(ts(now + 1h), now, 60s));
    EXPECT_TRUE(url_needs_refresh(ts(now + 30s), now, 60s));
    EXPECT_TRUE(url_needs_refresh(ts(now - 1s), now, 0s));
    EXPECT_FALSE(url_needs_refresh(dd::timestamp{}, now, 60s));  // unknown expiry
    // The backoff itself is the client's one schedule (retry_delay, tested
    // in tests/scheduler/retry_test.cpp); an upload gives its shape.
    EXPECT_EQ(dd::detail::max_upload_backoff, 30s);
}

// ---- sources --------------------------------------------------------------------------------

TEST(upload_sources, file_source_reads_in_chunks_and_rewinds)
{
    const std::string data = pattern(100000);
    const dd_test::temp_file f(data);
    ASSERT_FALSE(f.path.empty());

    asio::io_context ioc;
    dd::error_code ec;
    auto src = dd::file_source::open(f.path, ec, ioc.get_executor());
    ASSERT_FALSE(ec);
    ASSERT_TRUE(src);
    EXPECT_EQ(src->size(), data.size());
    for (int pass = 0; pass < 2; ++pass)
    {
        std::string got;
        std::vector<char> buf(4096);
        dd::error_code rec;
        bool inline_call = true;
        std::function<void()> next = [&] {
            src->async_read_some(asio::buffer(buf), [&](dd::error_code e, std::size_t n) {
                EXPECT_FALSE(inline_call);
                if (e)
                {
                    rec = e;
                    return;
                }
                got.append(buf.data(), n);
                inline_call = true;
                next();
                inline_call = false;
            });
        };
        next();
        inline_call = false;
        dd_test::run(ioc);
        ioc.restart();
        EXPECT_EQ(rec, asio::error::eof);
        EXPECT_EQ(got, data);
        EXPECT_FALSE(src->rewind());
    }
}

TEST(upload_sources, file_source_refuses_missing_files_and_directories)
{
    dd::error_code ec;
    EXPECT_FALSE(dd::file_source::open("/nonexistent/dd-upload", ec));
    EXPECT_EQ(ec, dd::client_errc::source_unreadable);
    ec = {};
    EXPECT_FALSE(dd::file_source::open("/tmp", ec));
    EXPECT_EQ(ec, dd::client_errc::source_unreadable);
}

TEST(upload_sources, memory_source_owned_and_borrowed)
{
    asio::io_context ioc;
    const std::string text = "hello, storage";
    auto borrowed = dd::memory_source::borrow(text);
    auto owned = std::make_shared<dd::memory_source>(std::string(text));
    for (auto* s : {static_cast<dd::body_source*>(borrowed.get()), static_cast<dd::body_source*>(owned.get())})
    {
        EXPECT_EQ(s->size(), text.size());
        char buf[5];
        std::string got;
        std::function<void()> next = [&] {
            s->async_read_some(asio::buffer(buf), asio::bind_executor(ioc, [&](dd::error_code e, std::size_t n) {
                                   if (e)
                                       return;
                                   got.append(buf, n);
                                   next();
                               }));
        };
        next();
        dd_test::run(ioc);
        ioc.restart();
        EXPECT_EQ(got, text);
    }
}

// ---- request shapes ------------------------------------------------------------------------

TEST_F(upload_test, creates_then_puts_exactly_the_signed_headers)
{
    const std::string body = pattern(100000);
    fake->expect(dd::http_method::post, api("/assets")).respond(201, with_upload(static_cast<std::int64_t>(body.size())));
    fake->expect(dd::http_method::put, put_target).respond(200, "", dd::http_headers{}).header("ETag", "\"abc\"");
    fake->expect(dd::http_method::get, api("/assets/a1")).respond(200, R"({"asset":)" + asset_json(100000) + "}");

    auto r = run_upload(
        std::make_shared<dd::memory_source>(body),
        {.filename = "manual.pdf", .content_type = "application/pdf", .name = "Manual", .watermark_asset = true}
    );
    ASSERT_FALSE(r.ec) << r.ec.message() << " " << diag.to_string();
    EXPECT_TRUE(fake->done()) << (fake->mismatches().empty() ? "" : fake->mismatches()[0]);
    EXPECT_EQ(r.a.id, "a1");
    EXPECT_EQ(r.a.byte_size, 100000);

    auto reqs = fake->requests();
    ASSERT_EQ(reqs.size(), 3u);
    // POST /assets: the metadata with byte_size = the source's size.
    EXPECT_EQ(
        reqs[0].body,
        R"({"asset":{"type":"internal","filename":"manual.pdf","byte_size":100000,"content_type":"application/pdf","name":"Manual","watermark_asset":true}})"
    );
    // The PUT: byte-exact URL, the two signed headers and nothing else (no
    // X-Auth-Token, no charset), the whole body as a stream.
    const auto& put = reqs[1];
    EXPECT_EQ(put.url, put_url);
    ASSERT_EQ(put.headers.size(), 2u);
    EXPECT_EQ(put.headers[0].name, "Content-Type");
    EXPECT_EQ(put.headers[0].value, "application/pdf");
    EXPECT_EQ(put.headers[1].name, "Content-Disposition");
    EXPECT_EQ(put.headers[1].value, "inline; filename=\"manual.pdf\"");
    EXPECT_FALSE(put.headers.find("X-Auth-Token"));
    EXPECT_FALSE(put.headers.find("Transfer-Encoding"));
    ASSERT_TRUE(put.body_stream);
    EXPECT_EQ(put.body_stream->size(), body.size());  // Content-Length the transport sends
    EXPECT_EQ(put.body, body);                          // what the fake drained
    EXPECT_GE(put.timeout, std::chrono::milliseconds(1h));
    EXPECT_FALSE(put.idempotent);
    EXPECT_NE(reqs[2].headers.find("X-Auth-Token"), std::nullopt);
}

TEST_F(upload_test, expect_continue_is_an_option)
{
    fake->expect(dd::http_method::post, api("/assets")).respond(201, with_upload(3));
    fake->expect(dd::http_method::put, put_target).respond(200);
    auto r = run_upload(std::make_shared<dd::memory_source>("abc"), {.filename = "manual.pdf"},
                        {.expect_continue = true, .reread_asset = false});
    ASSERT_FALSE(r.ec) << diag.to_string();
    auto p = puts();
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(p[0].headers.size(), 3u);
    EXPECT_EQ(p[0].headers.find("Expect").value_or(""), "100-continue");
    EXPECT_EQ(r.a.id, "a1");  // the created asset when not re-read
}

TEST_F(upload_test, sizes_outside_1_to_2147483648_are_refused_before_sending)
{
    for (std::uint64_t n : {std::uint64_t(2147483649u), std::uint64_t(0), std::uint64_t(1) << 40})
    {
        auto src = std::make_shared<sized_source>(ioc.get_executor(), n);
        auto r = run_upload(src, {.filename = "big.bin"});
        EXPECT_EQ(r.ec, dd::client_errc::invalid_byte_size) << n;
        EXPECT_EQ(src->reads, 0);
        EXPECT_NE(diag.client_message.find(std::to_string(n)), std::string::npos) << diag.client_message;
    }
    EXPECT_TRUE(fake->requests().empty());
    auto r = run_upload(nullptr, {.filename = "x"});
    EXPECT_EQ(r.ec, dd::client_errc::invalid_argument);
    r = run_upload(std::make_shared<dd::memory_source>("abc"), {.filename = ""});
    EXPECT_EQ(r.ec, dd::client_errc::missing_required_field);
    EXPECT_TRUE(fake->requests().empty());
}

TEST_F(upload_test, exactly_2147483648_bytes_is_declared)
{
    fake->expect(dd::http_method::post, api("/assets"))
        .respond(422, R"({"error":"Asset storage limit exceeded","code":"asset_storage_limit_exceeded"})");
    auto src = std::make_shared<sized_source>(ioc.get_executor(), 2147483648u);
    auto r = run_upload(src, {.filename = "big.bin"});
    EXPECT_EQ(r.ec, dd::api_errc::asset_storage_limit_exceeded);
    ASSERT_EQ(fake->requests().size(), 1u);
    EXPECT_NE(fake->requests()[0].body.find(R"("byte_size":2147483648)"), std::string::npos);
    EXPECT_EQ(src->reads, 0);
    EXPECT_TRUE(r.a.id.empty());  // nothing was created
}

TEST_F(upload_test, bad_upload_handles_are_not_used)
{
    fake->expect_any().respond(
        201,
        R"({"asset":)" + asset_json() +
            R"(,"upload":{"method":"PUT","url":"https://s/x","headers":{"Content-Type":"a\r\nX-Evil: 1"},"expires_at":"2030-01-01T00:00:00Z"}})"
    );
    auto r = run_upload(std::make_shared<dd::memory_source>("abc"), {.filename = "manual.pdf"});
    EXPECT_EQ(r.ec, dd::client_errc::invalid_url);
    EXPECT_EQ(r.a.id, "a1");  // the created asset is reported
    fake->expect_any().respond(
        201,
        R"({"asset":)" + asset_json() + R"(,"upload":{"method":"PUT","url":"ftp://s/x","headers":{},"expires_at":"2030-01-01T00:00:00Z"}})"
    );
    r = run_upload(std::make_shared<dd::memory_source>("abc"), {.filename = "manual.pdf"});
    EXPECT_EQ(r.ec, dd::client_errc::invalid_url);
    EXPECT_TRUE(puts().empty());
}

// A plain http:// upload URL under an https:// base URL would send the body
// (and the presigned signature) in clear text: refused before anything is
// sent, without the URL's query in the error or the diagnostics.
TEST_F(upload_test, plain_http_upload_url_under_https_is_refused)
{
    const char* insecure = "http://storage.example/bucket/assets/a1/u/manual.pdf?X-Amz-Credential=AKIDSECRET&X-Amz-Signature=deadbeef";
    fake->expect(dd::http_method::post, api("/assets")).respond(201, with_upload(3, insecure));
    auto r = run_upload(std::make_shared<dd::memory_source>("abc"), {.filename = "manual.pdf"});
    EXPECT_EQ(r.ec, dd::client_errc::insecure_upload_url) << r.ec.message();
    EXPECT_EQ(r.ec, dd::condition::invalid_input);
    EXPECT_TRUE(dd::is_request_not_sent(r.ec));
    EXPECT_TRUE(puts().empty());
    EXPECT_EQ(fake->requests().size(), 1u);  // POST /assets only
    EXPECT_EQ(r.a.id, "a1");  // the created asset is reported
    EXPECT_NE(diag.client_message.find("allow_insecure_upload_url"), std::string::npos) << diag.client_message;
    for (const std::string& text : {diag.to_string(), r.ec.message(), diag.client_message, diag.path})
    {
        EXPECT_EQ(text.find("deadbeef"), std::string::npos) << text;
        EXPECT_EQ(text.find("AKIDSECRET"), std::string::npos) << text;
        EXPECT_EQ(text.find("X-Amz"), std::string::npos) << text;
    }

    // The same URL with the opt-in: sent as given.
    diag = {};
    fake->expect(dd::http_method::post, api("/assets")).respond(201, with_upload(3, insecure));
    fake->expect(dd::http_method::put, dd::testing::fake_transport::target_of(insecure).data()).respond(200);
    r = run_upload(std::make_shared<dd::memory_source>("abc"), {.filename = "manual.pdf"},
                   {.allow_insecure_upload_url = true, .reread_asset = false});
    ASSERT_FALSE(r.ec) << diag.to_string();
    ASSERT_EQ(puts().size(), 1u);
    EXPECT_EQ(puts()[0].url, insecure);
}

// Under an http:// base URL (a local server) an http:// upload URL is no
// downgrade: accepted without the option.
TEST_F(upload_test, plain_http_upload_url_under_http_is_accepted)
{
    const char* plain = "http://127.0.0.1:9/bucket/assets/a1/u/manual.pdf?X-Amz-Signature=deadbeef";
    client = dd::client(fake, dd::client_params{.base_url = "http://127.0.0.1:8/api/v1/external", .api_key = api_key});
    fake->expect(dd::http_method::post, api("/assets")).respond(201, with_upload(3, plain));
    fake->expect(dd::http_method::put, dd::testing::fake_transport::target_of(plain).data()).respond(200);
    auto r = run_upload(std::make_shared<dd::memory_source>("abc"), {.filename = "manual.pdf"}, {.reread_asset = false});
    ASSERT_FALSE(r.ec) << diag.to_string();
    EXPECT_TRUE(fake->done());
}

// ---- storage errors, retries, refresh ----------------------------------------------------------

TEST_F(upload_test, signature_mismatch_is_typed_and_not_retried)
{
    fake->expect(dd::http_method::post, api("/assets")).respond(201, with_upload(3));
    fake->expect(dd::http_method::put, put_target).respond(403, sig_xml, dd::http_headers{}).header("Content-Type", "application/xml");
    auto r = run_upload(std::make_shared<dd::memory_source>("abc"), {.filename = "manual.pdf"});
    EXPECT_EQ(r.ec, dd::api_errc::storage_signature_mismatch);
    EXPECT_EQ(r.a.id, "a1");
    EXPECT_EQ(diag.asset_id, "a1");
    EXPECT_EQ(diag.http_status, 403u);
    EXPECT_EQ(diag.code, "SignatureDoesNotMatch");
    EXPECT_NE(diag.server_message.find("signature we calculated"), std::string::npos);
    EXPECT_EQ(diag.method, "PUT");
    EXPECT_EQ(diag.path, "/bucket/assets/a1/u/manual.pdf");  // never the presigned query
    EXPECT_EQ(diag.to_string().find("secret"), std::string::npos);
    EXPECT_EQ(puts().size(), 1u);
    EXPECT_TRUE(fake->done());
}

// A storage "response" whose status is no HTTP status (from a transport of
// one's own): a protocol error, not a storage error or a success. Before:
// api_errc::storage_error.
TEST_F(upload_test, a_put_status_outside_100_to_599_is_a_protocol_error)
{
    fake->expect(dd::http_method::post, api("/assets")).respond(201, with_upload(3));
    fake->expect(dd::http_method::put, put_target).respond(2);
    auto r = run_upload(std::make_shared<dd::memory_source>("abc"), {.filename = "manual.pdf"}, {.reread_asset = false});
    EXPECT_EQ(r.ec, dd::client_errc::protocol_error) << r.ec.message();
    EXPECT_EQ(diag.http_status, 2u);
    EXPECT_EQ(puts().size(), 1u);
}

TEST_F(upload_test, server_errors_and_transport_errors_retry_from_the_first_byte)
{
    const std::string body = pattern(50000);
    auto src = std::make_shared<slow_source>(ioc.get_executor(), body, 0ms);
    fake->expect(dd::http_method::post, api("/assets")).respond(201, with_upload(50000));
    fake->expect(dd::http_method::put, put_target).respond(503, unavailable_xml);
    fake->expect(dd::http_method::put, put_target).fail(asio::error::connection_reset);
    fake->expect(dd::http_method::put, put_target).respond(200);
    fake->expect(dd::http_method::get, api("/assets/a1")).respond(200, R"({"asset":)" + asset_json(50000) + "}");
    std::vector<dd::upload_progress> reports;
    auto r = run_upload(src, {.filename = "manual.pdf"},
                        {.on_progress = [&](const dd::upload_progress& p) { reports.push_back(p); },
                         .progress_interval = 0ms,
                         .retry_backoff = 1ms});
    ASSERT_FALSE(r.ec) << diag.to_string();
    EXPECT_TRUE(fake->done());
    EXPECT_EQ(count(dd::http_method::post, api("/assets")), 1);  // never created twice
    auto p = puts();
    ASSERT_EQ(p.size(), 3u);
    EXPECT_EQ(p[0].body, body);
    EXPECT_EQ(p[2].body, body);  // the whole body again after a rewind
    EXPECT_EQ(src->rewinds, 2);
    EXPECT_EQ(diag.attempts, 3u);
    // Progress: monotonic, ends with bytes_sent == total.
    ASSERT_FALSE(reports.empty());
    for (std::size_t i = 1; i < reports.size(); ++i)
        EXPECT_GE(reports[i].bytes_sent, reports[i - 1].bytes_sent);
    EXPECT_EQ(reports.back().bytes_sent, body.size());
    EXPECT_EQ(reports.back().total, body.size());
    EXPECT_EQ(reports.back().attempt, 3u);
}

// A PUT's retry spends the client's retry budget like a request's retry: with
// one retry in the budget and none earned, the third PUT is not made.
TEST_F(upload_test, retries_spend_the_clients_retry_budget)
{
    client = dd::client(fake, dd::client_params{.base_url = base_url, .api_key = api_key,
                                                .retry = {.budget_ratio = 0, .budget_min_per_minute = 0, .budget_capacity = 1}});
    fake->expect(dd::http_method::post, api("/assets")).respond(201, with_upload(3));
    for (int i = 0; i < 2; ++i)
        fake->expect(dd::http_method::put, put_target).respond(503, unavailable_xml);
    auto r = run_upload(std::make_shared<dd::memory_source>("abc"), {.filename = "manual.pdf"},
                        {.max_attempts = 4, .retry_backoff = 1ms});
    EXPECT_EQ(r.ec, dd::api_errc::storage_error);
    EXPECT_EQ(diag.attempts, 2u);
    EXPECT_NE(diag.client_message.find("retry budget"), std::string::npos) << diag.to_string();
    EXPECT_TRUE(fake->done());
    EXPECT_EQ(puts().size(), 2u);
}

TEST_F(upload_test, retries_are_bounded)
{
    fake->expect(dd::http_method::post, api("/assets")).respond(201, with_upload(3));
    for (int i = 0; i < 2; ++i)
        fake->expect(dd::http_method::put, put_target).respond(500, unavailable_xml);
    auto r = run_upload(std::make_shared<dd::memory_source>("abc"), {.filename = "manual.pdf"},
                        {.max_attempts = 2, .retry_backoff = 1ms});
    EXPECT_EQ(r.ec, dd::api_errc::storage_error);
    EXPECT_EQ(diag.http_status, 500u);
    EXPECT_EQ(diag.code, "ServiceUnavailable");
    EXPECT_EQ(diag.attempts, 2u);
    EXPECT_TRUE(fake->done());
}

TEST_F(upload_test, expired_url_is_refreshed_with_replace)
{
    fake->expect(dd::http_method::post, api("/assets")).respond(201, with_upload(3));
    fake->expect(dd::http_method::put, put_target).respond(403, expired_xml);
    fake->expect(dd::http_method::post, api("/assets/a1/replace")).respond(200, with_upload(3, put_url2));
    fake->expect(dd::http_method::put, dd::testing::fake_transport::target_of(put_url2).data()).respond(200);
    fake->expect(dd::http_method::get, api("/assets/a1")).respond(200, R"({"asset":)" + asset_json(3) + "}");
    auto r = run_upload(std::make_shared<dd::memory_source>("abc"), {.filename = "manual.pdf", .content_type = "application/pdf"});
    ASSERT_FALSE(r.ec) << diag.to_string();
    EXPECT_TRUE(fake->done()) << (fake->mismatches().empty() ? "" : fake->mismatches()[0]);
    auto reqs = fake->requests();
    EXPECT_EQ(reqs[2].body, R"({"asset":{"filename":"manual.pdf","byte_size":3,"content_type":"application/pdf"}})");
    EXPECT_EQ(puts()[1].body, "abc");
    EXPECT_EQ(count(dd::http_method::post, api("/assets")), 1);
}

TEST_F(upload_test, nearly_expired_url_is_refreshed_before_a_retry)
{
    expect_refresh_before_retry(with_upload(3, put_url, std::chrono::system_clock::now() + 10s));
}

std::string with_upload_expiring(const char* expires_at, const char* url = put_url)
{
    return R"({"asset":)" + asset_json(3) + R"(,"upload":{"method":"PUT","url":")" + url +
           R"(","headers":{"Content-Type":"application/pdf"},"expires_at":")" + expires_at + R"("}})";
}

// An expires_at outside system_clock's range (about 1678-2262) neither flips
// to "expired" (far future: no refresh before the retry) nor to "fresh" (far
// past: refreshed before the retry). Before: 9999 was taken as expired (a
// needless POST /replace), 1000 as fresh (the retry reused the old URL).
TEST_F(upload_test, expires_at_far_in_the_future_is_not_refreshed)
{
    for (const char* exp : {"9999-12-31T23:59:59.999999Z", "2263-01-01T00:00:00Z"})
    {
        SCOPED_TRACE(exp);
        fake = std::make_shared<dd::testing::fake_transport>(ioc.get_executor());
        client = dd::client(fake, dd::client_params{.base_url = base_url, .api_key = api_key});
        fake->expect(dd::http_method::post, api("/assets")).respond(201, with_upload_expiring(exp));
        fake->expect(dd::http_method::put, put_target).fail(asio::error::connection_reset);
        fake->expect(dd::http_method::put, put_target).respond(200);
        auto r = run_upload(std::make_shared<dd::memory_source>("abc"), {.filename = "manual.pdf"},
                            {.retry_backoff = 1ms, .reread_asset = false});
        ASSERT_FALSE(r.ec) << diag.to_string();
        EXPECT_TRUE(fake->done()) << (fake->mismatches().empty() ? "" : fake->mismatches()[0]);
        EXPECT_EQ(count(dd::http_method::post, api("/assets/a1/replace")), 0);
        EXPECT_EQ(puts().size(), 2u);
    }
}

TEST_F(upload_test, expires_at_far_in_the_past_is_refreshed)
{
    for (const char* exp : {"1000-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "1600-01-01T00:00:00Z"})
    {
        SCOPED_TRACE(exp);
        fake = std::make_shared<dd::testing::fake_transport>(ioc.get_executor());
        client = dd::client(fake, dd::client_params{.base_url = base_url, .api_key = api_key});
        expect_refresh_before_retry(with_upload_expiring(exp));
    }
}

TEST_F(upload_test, expired_refresh_budget_is_bounded)
{
    fake->expect(dd::http_method::post, api("/assets")).respond(201, with_upload(3));
    fake->expect(dd::http_method::put, put_target).respond(403, expired_xml);
    fake->expect(dd::http_method::post, api("/assets/a1/replace")).respond(200, with_upload(3));
    fake->expect(dd::http_method::put, put_target).respond(403, expired_xml);
    auto r = run_upload(std::make_shared<dd::memory_source>("abc"), {.filename = "manual.pdf"}, {.max_attempts = 2});
    EXPECT_EQ(r.ec, dd::api_errc::storage_request_expired);
    EXPECT_EQ(diag.server_message, "Request has expired");
    EXPECT_TRUE(fake->done());
}

TEST_F(upload_test, replace_flow_streams_the_new_body)
{
    fake->expect(dd::http_method::post, api("/assets/a1/replace")).respond(200, with_upload(5));
    fake->expect(dd::http_method::put, put_target).respond(200);
    fake->expect(dd::http_method::get, api("/assets/a1")).respond(200, R"({"asset":)" + asset_json(5, "v2.pdf") + "}");
    dd::error_code ec;
    dd::asset a;
    dd::async_replace_asset_body(client, "a1", std::make_shared<dd::memory_source>("v2!!!"), {.filename = "v2.pdf"}, diag,
                                 [&](dd::error_code e, dd::asset x) {
                                     ec = e;
                                     a = std::move(x);
                                 });
    dd_test::run(ioc);
    ASSERT_FALSE(ec) << diag.to_string();
    EXPECT_EQ(a.filename.value_or(""), "v2.pdf");
    EXPECT_EQ(fake->requests()[0].body, R"({"asset":{"filename":"v2.pdf","byte_size":5}})");
    EXPECT_EQ(puts()[0].body, "v2!!!");
    EXPECT_TRUE(fake->done());
}

TEST_F(upload_test, replace_of_a_missing_asset)
{
    fake->expect(dd::http_method::post, api("/assets/nope/replace")).respond(404, R"({"error":"Asset not found"})");
    dd::error_code ec;
    dd::async_replace_asset_body(client, "nope", std::make_shared<dd::memory_source>("x"), {.filename = "x"}, diag,
                                 [&](dd::error_code e, dd::asset) { ec = e; });
    dd_test::run(ioc);
    EXPECT_EQ(ec, dd::api_errc::asset_not_found);
    EXPECT_EQ(diag.server_message, "Asset not found");
}

// ---- stall, deadline, cancellation ------------------------------------------------------------

TEST_F(upload_test, a_slow_source_stalls)
{
    fake->expect(dd::http_method::post, api("/assets")).respond(201, with_upload(10000));
    fake->expect(dd::http_method::put, put_target).respond(200);
    auto src = std::make_shared<slow_source>(ioc.get_executor(), pattern(10000), 300ms);
    auto r = run_upload(src, {.filename = "manual.pdf"}, {.stall_timeout = 50ms});
    EXPECT_EQ(r.ec, dd::client_errc::upload_stalled);
    EXPECT_EQ(r.a.id, "a1");
}

TEST_F(upload_test, no_response_after_the_body_stalls_too)
{
    fake->expect(dd::http_method::post, api("/assets")).respond(201, with_upload(3));
    fake->expect(dd::http_method::put, put_target).hang();
    auto r = run_upload(std::make_shared<dd::memory_source>("abc"), {.filename = "manual.pdf"}, {.stall_timeout = 50ms});
    EXPECT_EQ(r.ec, dd::client_errc::upload_stalled);
    EXPECT_TRUE(fake->done());
}

TEST_F(upload_test, deadline_is_distinct_from_stall)
{
    fake->expect(dd::http_method::post, api("/assets")).hang();
    dd::testing::virtual_clock vc;
    std::optional<result> r;
    dd::async_upload_asset(client, std::make_shared<dd::memory_source>("abc"), {.filename = "manual.pdf"},
                           dd::upload_options{.stall_timeout = 10ms}, dd::request_options{.deadline = vc.now() + 80ms}, diag,
                           [&](dd::error_code ec, dd::asset a) { r = result{ec, std::move(a)}; });
    vc.run_for(ioc, 79ms, 1ms);
    EXPECT_FALSE(r) << "ended before the deadline (the stall timeout does not apply to the create)";
    vc.run_for(ioc, 1ms, 1ms);
    ASSERT_TRUE(r) << "still running after the deadline";
    EXPECT_EQ(r->ec, dd::client_errc::deadline_exceeded);
    EXPECT_TRUE(r->a.id.empty());
}

class cancel_test : public upload_test
{
protected:
    // Starts an upload bound to `sig`, runs until `when` says so, cancels,
    // then runs to completion.
    result cancel_when(std::shared_ptr<dd::body_source> src, std::function<bool()> when, dd::upload_options opts = {})
    {
        asio::cancellation_signal sig;
        result r;
        bool done = false;
        dd::async_upload_asset(client, std::move(src), {.filename = "manual.pdf"}, std::move(opts), diag,
                               asio::bind_cancellation_slot(sig.slot(), [&](dd::error_code ec, dd::asset a) {
                                   r = {ec, std::move(a)};
                                   done = true;
                               }));
        dd_test::run_until(ioc, [&] { return done || when(); });
        sig.emit(asio::cancellation_type::terminal);
        dd_test::run(ioc);
        ioc.restart();
        EXPECT_TRUE(done);
        return r;
    }

    void client_still_works()
    {
        fake->expect(dd::http_method::get, api("/assets/a1")).respond(200, R"({"asset":)" + asset_json() + "}");
        auto [ec, a] = [&] {
            auto fut = asio::co_spawn(ioc, dd::async_get_asset(client, "a1", asio::as_tuple(asio::use_awaitable)), asio::use_future);
            dd_test::run(ioc);
            ioc.restart();
            return fut.get();
        }();
        EXPECT_FALSE(ec);
        EXPECT_EQ(a.id, "a1");
        EXPECT_TRUE(fake->done());
    }
};

TEST_F(cancel_test, during_create)
{
    fake->expect(dd::http_method::post, api("/assets")).hang();
    auto r = cancel_when(std::make_shared<dd::memory_source>("abc"), [&] { return !fake->requests().empty(); });
    EXPECT_EQ(r.ec, asio::error::operation_aborted);
    EXPECT_EQ(fake->requests().size(), 1u);
    client_still_works();
}

TEST_F(cancel_test, in_the_middle_of_the_body)
{
    fake->expect(dd::http_method::post, api("/assets")).respond(201, with_upload(200000));
    fake->expect(dd::http_method::put, put_target).respond(200);
    auto src = std::make_shared<slow_source>(ioc.get_executor(), pattern(200000), 1ms);
    std::uint64_t seen = 0;
    auto r = cancel_when(src, [&] { return seen > 0; },
                         {.on_progress = [&](const dd::upload_progress& p) { seen = p.bytes_sent; }, .progress_interval = 0ms});
    EXPECT_EQ(r.ec, asio::error::operation_aborted);
    EXPECT_GT(seen, 0u);
    EXPECT_LT(seen, 200000u);
    EXPECT_EQ(r.a.id, "a1");
    client_still_works();
}

TEST_F(cancel_test, while_waiting_for_the_storage)
{
    fake->expect(dd::http_method::post, api("/assets")).respond(201, with_upload(3));
    fake->expect(dd::http_method::put, put_target).hang();
    auto r = cancel_when(std::make_shared<dd::memory_source>("abc"), [&] { return puts().size() == 1; });
    EXPECT_EQ(r.ec, asio::error::operation_aborted);
    client_still_works();
}

TEST_F(cancel_test, during_backoff)
{
    fake->expect(dd::http_method::post, api("/assets")).respond(201, with_upload(3));
    // Full jitter may make any backoff short: the storage's Retry-After is the
    // least wait (retry_delay), so the upload is still backing off 9 s later.
    fake->expect(dd::http_method::put, put_target).respond(503, unavailable_xml).header("Retry-After", "10");
    dd::testing::virtual_clock vc;
    asio::cancellation_signal sig;
    std::optional<result> r;
    dd::async_upload_asset(client, std::make_shared<dd::memory_source>("abc"), {.filename = "manual.pdf"},
                           dd::upload_options{.retry_backoff = 10s}, diag,
                           asio::bind_cancellation_slot(sig.slot(), [&](dd::error_code ec, dd::asset a) {
                               r = result{ec, std::move(a)};
                           }));
    vc.run_for(ioc, 9s, 100ms);
    ASSERT_FALSE(r);
    ASSERT_EQ(puts().size(), 1u) << "backing off for at least the 10 s of Retry-After after the 503";
    sig.emit(asio::cancellation_type::terminal);
    dd_test::run(ioc);  // time stands still: only the cancellation can end it
    ASSERT_TRUE(r);
    EXPECT_EQ(r->ec, asio::error::operation_aborted);
    EXPECT_EQ(puts().size(), 1u) << "nothing resent";
    client_still_works();
}

// ---- completion styles ------------------------------------------------------------------------

TEST_F(upload_test, never_completes_inline)
{
    bool called = false;
    dd::async_upload_asset(client, nullptr, {.filename = "x"}, [&](dd::error_code, dd::asset) { called = true; });
    EXPECT_FALSE(called);
    dd_test::run(ioc);
    EXPECT_TRUE(called);
}

TEST_F(upload_test, deferred_use_awaitable_and_as_tuple)
{
    fake->expect_any().respond(201, with_upload(3));
    fake->expect_any().respond(200);
    fake->expect_any().respond(200, R"({"asset":)" + asset_json() + "}");
    fake->expect_any().respond(201, with_upload(3));
    fake->expect_any().respond(200);
    fake->expect_any().respond(200, R"({"asset":)" + asset_json() + "}");
    std::string id1, id2;
    dd::error_code thrown;
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            // default token: deferred, co_awaitable, throws on error. (Arguments
            // are built outside the co_await expression: GCC 12 may destroy
            // temporaries of a co_await full-expression twice.)
            const dd::upload_asset_params meta{.filename = "a"};
            auto src = std::make_shared<dd::memory_source>("abc");
            dd::asset a = co_await dd::async_upload_asset(client, src, meta);
            id1 = a.id;
            src->rewind();
            auto [ec, b] = co_await dd::async_upload_asset(client, src, meta, asio::as_tuple(asio::use_awaitable));
            EXPECT_FALSE(ec);
            id2 = b.id;
            std::shared_ptr<dd::body_source> empty = std::make_shared<sized_source>(ioc.get_executor(), 0);
            try
            {
                co_await dd::async_upload_asset(client, empty, meta, asio::use_awaitable);
            }
            catch (const boost::system::system_error& e)
            {
                thrown = e.code();
            }
        },
        asio::detached
    );
    dd_test::run(ioc);
    EXPECT_EQ(id1, "a1");
    EXPECT_EQ(id2, "a1");
    EXPECT_EQ(thrown, dd::client_errc::invalid_byte_size);
}

// The default token's exception carries the created asset's id
// (diagnostics::asset_id): the asset exists and counts against the quotas, and
// the exception is all such a caller gets. A failure before the create carries
// none. Before: asset_id did not exist; the id was only in the handler's asset.
TEST_F(upload_test, the_default_tokens_exception_names_the_created_asset)
{
    fake->expect(dd::http_method::post, api("/assets")).respond(201, with_upload(3));
    fake->expect(dd::http_method::put, put_target).respond(403, sig_xml, dd::http_headers{}).header("Content-Type", "application/xml");
    fake->expect(dd::http_method::post, api("/assets")).respond(422, R"({"errors":["Storage quota exceeded"]})");
    std::string created, before_create, text;
    dd::error_code first, second;
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            const dd::upload_asset_params meta{.filename = "manual.pdf"};
            auto src = std::make_shared<dd::memory_source>("abc");
            try
            {
                co_await dd::async_upload_asset(client, src, meta);
            }
            catch (const dd::error_with_diagnostics& e)
            {
                first = e.code();
                created = e.get_diagnostics().asset_id;
                text = e.what();
            }
            src->rewind();
            try
            {
                co_await dd::async_upload_asset(client, src, meta);
            }
            catch (const dd::error_with_diagnostics& e)
            {
                second = e.code();
                before_create = e.get_diagnostics().asset_id;
            }
        },
        asio::detached
    );
    dd_test::run(ioc);
    EXPECT_EQ(first, dd::api_errc::storage_signature_mismatch);
    EXPECT_EQ(created, "a1");
    EXPECT_NE(text.find("[asset a1]"), std::string::npos) << text;
    EXPECT_TRUE(second) << "the second create should fail";
    EXPECT_EQ(before_create, "");
}

TEST_F(upload_test, deferred_operation_outlives_its_arguments)
{
    fake->expect_any().respond(201, with_upload(3));
    fake->expect_any().respond(200);
    auto op = [&] {
        std::string name = "temporary.pdf";
        return dd::async_upload_asset(client, std::make_shared<dd::memory_source>("abc"), {.filename = name},
                                      dd::upload_options{.reread_asset = false}, asio::deferred);
    }();
    dd::error_code ec;
    std::move(op)([&](dd::error_code e, dd::asset) { ec = e; });
    dd_test::run(ioc);
    EXPECT_FALSE(ec);
    EXPECT_NE(fake->requests()[0].body.find("temporary.pdf"), std::string::npos);
}

}  // namespace
