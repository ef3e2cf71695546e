// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Uploads through the Beast transport against the sandbox's S3-like storage:
// round trips (bytes compared through a real download), tampered signed
// headers, expired URLs (direct PUT and the replace-based recovery),
// cancellation in the middle of a body.
#include <digital_delivery.hpp>
#include <digital_delivery/beast_transport.hpp>
#include <digital_delivery/upload.hpp>

#include "run.hpp"
#include "sandbox_process.hpp"
#include "test_data.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <future>
#include <thread>

namespace dd = digital_delivery;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

using dd_test::pattern;

using dd_test::temp_file;

// Delays the first PUT it carries (the URL expires meanwhile).
// Moves the store's clock on by `advance` before it sends the first PUT, as
// if that PUT had been held back: the upload URL it carries has then expired.
struct clock_advancing_transport
{
    dd::any_transport inner;
    std::string clock_url;  // origin + "/sandbox/clock"
    std::string api_key;
    double advance_seconds;
    std::shared_ptr<int> puts = std::make_shared<int>(0);

    asio::any_io_executor get_executor() const { return inner.get_executor(); }
    void async_send(dd::http_request req, dd::transport_handler h)
    {
        if (req.method != dd::http_method::put || (*puts)++ > 0)
            return inner.async_send(std::move(req), std::move(h));
        dd::http_request advance;
        advance.method = dd::http_method::post;
        advance.url = clock_url;
        advance.headers.add("X-Auth-Token", api_key);
        advance.headers.add("Content-Type", "application/json");
        advance.body = R"({"advance_seconds":)" + std::to_string(advance_seconds) + "}";
        auto in = inner;
        in.async_send(std::move(advance),
                      dd::transport_handler([in, req = std::move(req), h = std::move(h)](dd::error_code ec, dd::http_response r) mutable {
                          EXPECT_FALSE(ec) << ec.message();
                          EXPECT_EQ(r.status, 200u) << r.body;
                          in.async_send(std::move(req), std::move(h));
                      }));
    }
};

class upload_sandbox : public ::testing::Test
{
protected:
    // A store of its own for each test.
    explicit upload_sandbox(std::vector<std::string> options = {"--no-rate-limit", "--seed-orders", "5"})
        : store(dd_test::sandbox_process::shared().create_store(std::move(options)))
    {
    }

    dd_test::sandbox_process::store store;
    asio::io_context ioc;
    dd::beast_transport transport{ioc.get_executor()};
    dd::client client{transport, dd::client_params{.base_url = store.base_url, .api_key = store.api_key}};
    dd::diagnostics diag;

    template <class Aw>
    auto run(Aw aw)
    {
        // Not ioc.run(): the transport's idle pooled connections keep it busy.
        return dd_test::run_awaitable(ioc, std::move(aw));
    }

    std::tuple<dd::error_code, dd::asset> upload(dd::client& c, std::shared_ptr<dd::body_source> src, dd::upload_asset_params meta,
                                                 dd::upload_options opts = {})
    {
        return run(dd::async_upload_asset(c, std::move(src), std::move(meta), std::move(opts), diag, asio::as_tuple(asio::use_awaitable)));
    }

    // One request straight through the transport (no client, no X-Auth-Token).
    std::tuple<dd::error_code, dd::http_response> send(dd::http_request req)
    {
        auto tok = asio::as_tuple(asio::use_awaitable);
        return run(asio::async_initiate<decltype(tok), void(dd::error_code, dd::http_response)>(
            [this](auto handler, dd::http_request rq) { transport.async_send(std::move(rq), dd::transport_handler(std::move(handler))); },
            tok, std::move(req)));
    }

    dd::http_response raw(dd::http_method m, const std::string& url, std::string body = {}, dd::http_headers h = {})
    {
        dd::http_request req;
        req.method = m;
        req.url = url;
        req.headers = std::move(h);
        req.body = std::move(body);
        if (!req.body.empty())
            req.headers.add("Content-Type", "application/json");
        req.headers.add("X-Auth-Token", store.api_key);
        req.timeout = 30s;
        auto [ec, r] = send(std::move(req));
        EXPECT_FALSE(ec) << ec.message();
        return r;
    }

    // The body as a buyer downloads it: link to a product, buy it, follow
    // the signed download URL.
    std::string download(const dd::asset& a, std::int64_t product)
    {
        dd::new_digital_product dp;
        dp.store_product_id = product;
        const std::string ids[] = {a.id};
        dp.asset_ids = ids;
        auto [ec, created] = run(dd::async_create_digital_product(client, dp, asio::as_tuple(asio::use_awaitable)));
        EXPECT_FALSE(ec) << ec.message();
        auto pr = raw(dd::http_method::post, store.origin + "/sandbox/purchases",
                      R"({"store_product_id":)" + std::to_string(product) + R"(,"email":"ada@example.com"})");
        EXPECT_EQ(pr.status, 201u) << pr.body;
        const auto id_pos = pr.body.find(R"("id":")");
        const std::string order_id = pr.body.substr(id_pos + 6, 36);
        auto [dec, dl] = run(dd::async_get_order_downloads(client, order_id, asio::as_tuple(asio::use_awaitable)));
        EXPECT_FALSE(dec) << dec.message();
        for (auto& e : dl.downloads)
            if (e.download_url && e.file_name == a.filename.value_or(""))
            {
                dd::http_request req;
                req.url = *e.download_url;
                req.timeout = 60s;
                auto [gec, r] = send(std::move(req));
                EXPECT_FALSE(gec);
                EXPECT_EQ(r.status, 200u);
                return r.body;
            }
        ADD_FAILURE() << "no download entry for " << a.filename.value_or("");
        return {};
    }
};

TEST_F(upload_sandbox, small_and_multi_mib_files_round_trip)
{
    std::int64_t product = 7500000001111;
    for (std::size_t size : {std::size_t(1000), std::size_t(5 * 1024 * 1024 + 123)})
    {
        const std::string data = pattern(size, static_cast<unsigned>(size));
        temp_file f(data);
        dd::error_code ec;
        auto src = dd::file_source::open(f.path, ec);
        ASSERT_FALSE(ec);
        std::vector<dd::upload_progress> reports;
        const std::string name = "file-" + std::to_string(size) + ".bin";
        auto [uec, a] = upload(client, src, {.filename = name, .content_type = "application/octet-stream"},
                               {.on_progress = [&](const dd::upload_progress& p) { reports.push_back(p); }, .progress_interval = 1ms});
        ASSERT_FALSE(uec) << uec.message() << " " << diag.to_string();
        EXPECT_EQ(a.byte_size, static_cast<std::int64_t>(size));
        EXPECT_EQ(a.filename.value_or(""), name);
        ASSERT_FALSE(reports.empty());
        EXPECT_EQ(reports.back().bytes_sent, size);
        for (std::size_t i = 1; i < reports.size(); ++i)
            EXPECT_GE(reports[i].bytes_sent, reports[i - 1].bytes_sent);
        EXPECT_TRUE(download(a, product) == data) << "downloaded bytes differ for " << size;
        product += 1111;
    }
}

TEST_F(upload_sandbox, replace_body_round_trip)
{
    auto [ec, a] = upload(client, std::make_shared<dd::memory_source>("first body"), {.filename = "v1.txt", .content_type = "text/plain"});
    ASSERT_FALSE(ec) << diag.to_string();
    const std::string v2 = pattern(300000, 7);
    auto [rec, b] = run(dd::async_replace_asset_body(client, a.id, std::make_shared<dd::memory_source>(v2), {.filename = "v2.txt"}, diag,
                                                     asio::as_tuple(asio::use_awaitable)));
    ASSERT_FALSE(rec) << diag.to_string();
    EXPECT_EQ(b.id, a.id);
    EXPECT_EQ(b.filename.value_or(""), "v2.txt");
    EXPECT_EQ(b.byte_size, 300000);
    EXPECT_EQ(b.content_type.value_or(""), "text/plain");
    EXPECT_TRUE(download(b, 7500000002222) == v2);
}

TEST_F(upload_sandbox, tampered_or_missing_signed_headers_are_refused)
{
    dd::new_asset na;
    na.type = dd::asset_type::internal;
    na.filename = "signed.pdf";
    na.byte_size = 5;
    na.content_type = "application/pdf";
    for (int variant = 0; variant < 4; ++variant)
    {
        auto [ec, created] = run(dd::async_create_asset(client, na, asio::as_tuple(asio::use_awaitable)));
        ASSERT_FALSE(ec) << ec.message();
        ASSERT_TRUE(created.upload);
        dd::http_request put;
        put.method = dd::http_method::put;
        put.url = created.upload->url;
        put.timeout = 30s;
        for (auto f : created.upload->headers)
        {
            if (variant == 1 && f.name == "Content-Disposition")
                put.headers.add(f.name, "attachment; filename=\"other.pdf\"");  // changed
            else if (variant == 2 && f.name == "Content-Type")
                continue;  // missing
            else if (variant == 3 && f.name == "Content-Type")
                put.headers.add(f.name, std::string(f.value) + "; charset=utf-8");  // "helpfully" extended
            else
                put.headers.add(f.name, f.value);
        }
        put.body_stream = std::make_shared<dd::memory_source>("%PDF-");
        auto [pec, r] = send(std::move(put));
        ASSERT_FALSE(pec) << pec.message();
        dd::diagnostics d;
        const auto sec = dd::detail::classify_storage_response(r, &d);
        if (variant == 0)
        {
            EXPECT_FALSE(sec) << r.status << " " << r.body;  // control: the exact headers pass
            continue;
        }
        EXPECT_EQ(sec, dd::api_errc::storage_signature_mismatch) << variant << ": " << r.status << " " << r.body;
        EXPECT_EQ(d.code, "SignatureDoesNotMatch");
        EXPECT_FALSE(d.server_message.empty());
        EXPECT_EQ(d.server_message.find("CanonicalRequest"), std::string::npos);
    }
}

class upload_sandbox_short_ttl : public upload_sandbox
{
protected:
    upload_sandbox_short_ttl() : upload_sandbox({"--no-rate-limit", "--seed-orders", "5", "--upload-url-ttl-seconds", "1"}) {}
};

TEST_F(upload_sandbox_short_ttl, direct_put_to_an_expired_url)
{
    dd::new_asset na;
    na.type = dd::asset_type::internal;
    na.filename = "late.bin";
    na.byte_size = 3;
    auto [ec, created] = run(dd::async_create_asset(client, na, asio::as_tuple(asio::use_awaitable)));
    ASSERT_FALSE(ec);
    // The store's clock moves past the URL's 1 s validity.
    const auto moved = raw(dd::http_method::post, store.origin + "/sandbox/clock", R"({"advance_seconds":2})");
    ASSERT_EQ(moved.status, 200u) << moved.body;
    dd::http_request put;
    put.method = dd::http_method::put;
    put.url = created.upload->url;
    put.headers = created.upload->headers;
    put.body_stream = std::make_shared<dd::memory_source>("abc");
    put.timeout = 30s;
    auto [pec, r] = send(std::move(put));
    ASSERT_FALSE(pec);
    dd::diagnostics d;
    EXPECT_EQ(dd::detail::classify_storage_response(r, &d), dd::api_errc::storage_request_expired) << r.body;
    EXPECT_EQ(d.server_message, "Request has expired");
}

TEST_F(upload_sandbox_short_ttl, expired_url_recovers_through_replace)
{
    auto delayed = std::make_shared<clock_advancing_transport>(
        clock_advancing_transport{dd::any_transport(transport), store.origin + "/sandbox/clock", store.api_key, 2});
    dd::client c(delayed, dd::client_params{.base_url = store.base_url, .api_key = store.api_key});
    const std::string data = pattern(200000, 3);
    auto [ec, a] = upload(c, std::make_shared<dd::memory_source>(data), {.filename = "recovered.bin"});
    ASSERT_FALSE(ec) << ec.message() << " " << diag.to_string();
    EXPECT_EQ(*delayed->puts, 2);
    EXPECT_EQ(a.byte_size, 200000);
    EXPECT_TRUE(download(a, 7500000003333) == data);
    // Exactly one asset was created.
    auto [lec, list] = run(dd::async_list_assets(client, {.q = "recovered.bin"}, asio::as_tuple(asio::use_awaitable)));
    ASSERT_FALSE(lec);
    EXPECT_EQ(list.assets.size(), 1u);
}

TEST_F(upload_sandbox, cancellation_in_the_middle_leaves_nothing_stuck)
{
    temp_file f("", 256u << 20);  // sparse 256 MiB
    dd::error_code ec;
    auto src = dd::file_source::open(f.path, ec);
    ASSERT_FALSE(ec);
    asio::cancellation_signal sig;
    bool done = false;
    dd::error_code result;
    dd::asset created;
    std::uint64_t seen = 0;
    dd::async_upload_asset(client, src, {.filename = "big.bin"},
                           dd::upload_options{.on_progress =
                                [&](const dd::upload_progress& p) {
                                    seen = p.bytes_sent;
                                    if (p.bytes_sent > (1u << 20))
                                        sig.emit(asio::cancellation_type::terminal);
                                },
                            .progress_interval = 0ms},
                           diag, asio::bind_cancellation_slot(sig.slot(), [&](dd::error_code e, dd::asset a) {
                               done = true;
                               result = e;
                               created = std::move(a);
                           }));
    dd_test::run_until(ioc, [&] { return done; });
    EXPECT_EQ(result, asio::error::operation_aborted);
    EXPECT_LT(seen, 256u << 20);
    EXPECT_FALSE(created.id.empty());
    // The client keeps working: the same asset gets its body with replace.
    const std::string data = pattern(70000, 9);
    auto [rec, b] = run(dd::async_replace_asset_body(client, created.id, std::make_shared<dd::memory_source>(data), {.filename = "big.bin"},
                                                     diag, asio::as_tuple(asio::use_awaitable)));
    ASSERT_FALSE(rec) << diag.to_string();
    EXPECT_EQ(b.byte_size, 70000);
    EXPECT_TRUE(download(b, 7500000004444) == data);
}

}  // namespace
