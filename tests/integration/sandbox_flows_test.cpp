// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The client against digital-delivery-sandbox over real sockets: rate
// limiting (headers, 429, the client's limiter), plan quotas, presigned
// upload signatures, and the purchase -> downloads -> watermark -> refund
// flow. Labels: sandbox, integration. Suites that depend on the server's
// state (bucket, quotas) start their own sandbox.
#include "sandbox_harness.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_future.hpp>

#include <regex>
#include <thread>

using namespace dd_integ;
using namespace std::chrono_literals;

namespace {

// ---- rate limiting ----------------------------------------------------------------

// --rate-limit-points 4 --rate-limit-window-seconds 2: 4 points, 2 points per second.
const std::vector<std::string> small_bucket = {"--seed-orders", "5", "--rate-limit-points", "4", "--rate-limit-window-seconds", "2"};

TEST(RateLimitSandbox, snapshot_follows_the_server_headers)
{
    // The API's real bucket (40 points / 60 s). Three GETs sent around the
    // client (straight through the transport) leave the server with fewer
    // points than the client's estimate: the client's next response lowers
    // the estimate and the snapshot shows the server's figures.
    sandbox_env e({"--seed-orders", "5"}, "integ-key-rl-headers", dd::client_params{.retry = {.enabled = false}});
    for (int i = 0; i < 3; ++i)
    {
        dd::http_request req;
        req.url = e.store.base_url + "/orders?per_page=1";
        req.headers.add("X-Auth-Token", e.store.api_key);
        const auto r = e.send(std::move(req));
        ASSERT_EQ(r.status, 200u);
        EXPECT_EQ(r.headers.find("X-RateLimit-Limit"), "40");
        EXPECT_EQ(r.headers.find("X-RateLimit-Remaining"), std::to_string(39 - i));
        ASSERT_TRUE(r.headers.find("X-RateLimit-Reset").has_value());
    }

    dd::diagnostics diag;
    auto [ec, l] = e.run([&](auto t) { return dd::async_list_orders(e.client, {.per_page = 1}, diag, t); });
    ASSERT_FALSE(ec) << diag.to_string();
    const auto s = e.client.rate_limit();
    EXPECT_EQ(s.source, dd::rate_limit_source::header);
    EXPECT_EQ(s.limit, 40);
    ASSERT_TRUE(s.remaining.has_value());
    EXPECT_GE(*s.remaining, 35);  // 36 at the server (refill: 2 points every 3 s)
    EXPECT_LE(*s.remaining, 37);
    ASSERT_TRUE(s.reset.has_value());
    const auto now = std::chrono::system_clock::now();
    EXPECT_GT(*s.reset, now);                                                // when the bucket is full again
    EXPECT_LT(*s.reset, now + 10s);                                          // 4 points at 1.5 s each, rounded up
    EXPECT_EQ(s.reset->time_since_epoch() % std::chrono::seconds(1), std::chrono::system_clock::duration::zero())
        << "the header's whole Unix seconds, not the client's estimate";
}

TEST(RateLimitSandbox, burst_without_client_limiter_gets_429_with_retry_after)
{
    sandbox_env e(small_bucket, "integ-key-rl-off", dd::client_params{.rate_limit = {.enabled = false}, .retry = {.enabled = false}});
    dd::diagnostics diag;
    int ok = 0;
    dd::error_code first_failure;
    for (int i = 0; i < 8 && !first_failure; ++i)
    {
        auto [ec, l] = e.run([&](auto t) { return dd::async_list_orders(e.client, {.per_page = 1}, diag, t); });
        if (ec)
            first_failure = ec;
        else
            ++ok;
    }
    // 4 points, 1 per GET; the bucket refills 2 points per second, so on a
    // very slow machine one more may pass before the burst ends.
    EXPECT_GE(ok, 4);
    EXPECT_LE(ok, 5);
    EXPECT_EQ(first_failure, dd::api_errc::rate_limited) << first_failure.message() << " " << diag.to_string();
    EXPECT_EQ(first_failure, dd::condition::rate_limited);
    EXPECT_EQ(diag.http_status, 429u);
    EXPECT_EQ(diag.server_message, "Rate limit exceeded");
    ASSERT_TRUE(diag.retry_after.has_value()) << diag.to_string();
    EXPECT_GE(*diag.retry_after, 1s);  // ceil, at least 1
    EXPECT_LE(*diag.retry_after, 2s);
    EXPECT_EQ(diag.attempts, 1u);
    EXPECT_TRUE(dd::is_transient(first_failure));
}

TEST(RateLimitSandbox, same_burst_through_the_client_limiter_never_sees_429)
{
    // Limiter on, sized like the server's bucket. Retries are off so that a
    // 429 could not hide behind a successful retry.
    sandbox_env e(
        small_bucket,
        "integ-key-rl-on",
        dd::client_params{.rate_limit = {.capacity = 4, .window = 2s}, .retry = {.enabled = false}}
    );
    constexpr int n = 10;  // 4 at once, then one every 0.5 s
    std::vector<std::future<std::tuple<dd::error_code, dd::order_list>>> futs;
    std::vector<dd::diagnostics> diags(n);
    for (int i = 0; i < n; ++i)
        futs.push_back(asio::co_spawn(
            e.ioc,
            dd::async_list_orders(e.client, {.per_page = 1}, diags[i], asio::as_tuple(asio::use_awaitable)),
            asio::use_future
        ));
    int ok = 0;
    for (int i = 0; i < n; ++i)
    {
        auto [ec, l] = wait_for(e.ioc, futs[i]);
        EXPECT_FALSE(ec) << "request " << i << ": " << ec.message() << " " << diags[i].to_string();
        EXPECT_NE(ec, dd::api_errc::rate_limited);
        if (!ec)
        {
            ++ok;
            EXPECT_EQ(l.orders.size(), 1u);
        }
    }
    EXPECT_EQ(ok, n);
    // The limiter held what the bucket could not take at once (the pacing
    // itself is tested on the virtual clock in tests/scheduler).
    const auto held = std::count_if(diags.begin(), diags.end(), [](const dd::diagnostics& d) { return d.total_wait.count() > 0; });
    EXPECT_GE(held, n - 4) << "4 points at once, the other requests waited for the refill";

    // Writes cost 2: a burst of 3 creates (6 points, on an empty bucket)
    // through the limiter also passes.
    constexpr int nw = 3;
    std::vector<std::future<std::tuple<dd::error_code, dd::asset_with_upload>>> writes;
    std::vector<dd::diagnostics> wdiags(nw);
    for (int i = 0; i < nw; ++i)
    {
        const std::string name = "w" + std::to_string(i);
        writes.push_back(asio::co_spawn(
            e.ioc,
            dd::async_create_asset(e.client, {.type = dd::asset_type::licence, .name = name}, wdiags[i],
                             asio::as_tuple(asio::use_awaitable)),
            asio::use_future
        ));
    }
    for (int i = 0; i < nw; ++i)
    {
        auto [ec, a] = wait_for(e.ioc, writes[i]);
        EXPECT_FALSE(ec) << "write " << i << ": " << ec.message() << " " << wdiags[i].to_string();
    }
}

TEST(RateLimitSandbox, default_retry_policy_waits_out_429_for_writes_without_duplicates)
{
    // Limiter off, retries as configured by default: a 429 (refused, not
    // processed) is retried after Retry-After, even for a POST, and nothing
    // is created twice.
    sandbox_env e(small_bucket, "integ-key-rl-retry", dd::client_params{.rate_limit = {.enabled = false}});
    // 8 points at once against a bucket of 4: the server refuses some of them.
    constexpr int n = 4;
    std::vector<dd::diagnostics> diags(n);
    std::vector<std::future<std::tuple<dd::error_code, dd::asset_with_upload>>> futs;
    for (int i = 0; i < n; ++i)
    {
        const std::string name = "retry-" + std::to_string(i);
        futs.push_back(asio::co_spawn(
            e.ioc,
            dd::async_create_asset(e.client, {.type = dd::asset_type::licence, .name = name}, diags[i],
                             asio::as_tuple(asio::use_awaitable)),
            asio::use_future));
    }
    unsigned attempts = 0;
    for (int i = 0; i < n; ++i)
    {
        auto [ec, r] = wait_for(e.ioc, futs[i]);
        EXPECT_FALSE(ec) << i << ": " << ec.message() << " " << diags[i].to_string();
        attempts += diags[i].attempts;
    }
    EXPECT_GT(attempts, unsigned(n)) << "no create was refused and retried";
    dd::diagnostics diag;
    auto [ec, l] = e.run([&](auto t) { return dd::async_list_assets(e.client, {.per_page = 250}, diag, t); });
    ASSERT_FALSE(ec) << diag.to_string();
    EXPECT_EQ(l.pagination.total_count, 4);
}

// ---- quotas -----------------------------------------------------------------------

TEST(QuotaSandbox, asset_count_limit_and_delete_frees_at_once)
{
    sandbox_env e({"--seed-orders", "1", "--quota-asset-count", "2", "--no-rate-limit"}, "integ-key-quota-count",
                  dd::client_params{.rate_limit = {.enabled = false}, .retry = {.enabled = false}});
    dd::diagnostics diag;
    std::vector<std::string> ids;
    for (int i = 0; i < 2; ++i)
    {
        const std::string name = "k" + std::to_string(i);
        auto [ec, r] = e.run([&](auto t) {
            return dd::async_create_asset(e.client, {.type = dd::asset_type::licence, .name = name}, diag, t);
        });
        ASSERT_FALSE(ec) << diag.to_string();
        ids.push_back(r.asset.id);
    }
    // An internal asset (never uploaded) is refused on count too.
    for (const dd::new_asset& a : {dd::new_asset{.type = dd::asset_type::licence, .name = "third"},
                                   dd::new_asset{.type = dd::asset_type::internal, .filename = "f.bin", .byte_size = 1}})
    {
        auto [ec, r] = e.run([&](auto t) { return dd::async_create_asset(e.client, a, diag, t); });
        EXPECT_EQ(ec, dd::api_errc::asset_count_limit_exceeded) << ec.message() << " " << diag.to_string();
        EXPECT_EQ(ec, dd::condition::quota_exceeded);
        EXPECT_EQ(ec, dd::condition::validation);
        EXPECT_EQ(diag.http_status, 422u);
        EXPECT_EQ(diag.code, "asset_count_limit_exceeded");
        EXPECT_TRUE(server_said(diag, "Asset count limit exceeded")) << diag.to_string();
    }
    auto [ec, l] = e.run([&](auto t) { return dd::async_list_assets(e.client, {}, diag, t); });
    ASSERT_FALSE(ec);
    EXPECT_EQ(l.pagination.total_count, 2) << "nothing was created by the refused calls";

    auto [ec2] = e.run([&](auto t) { return dd::async_delete_asset(e.client, ids[0], diag, t); });
    ASSERT_FALSE(ec2) << diag.to_string();
    auto [ec3, r3] = e.run([&](auto t) { return dd::async_create_asset(e.client, {.type = dd::asset_type::licence, .name = "again"}, diag, t); });
    EXPECT_FALSE(ec3) << "delete frees the quota at once: " << ec3.message() << " " << diag.to_string();
}

TEST(QuotaSandbox, asset_storage_limit_on_declared_size_and_replace_growth)
{
    sandbox_env e({"--seed-orders", "1", "--quota-storage-bytes", "1000", "--no-rate-limit"}, "integ-key-quota-storage",
                  dd::client_params{.rate_limit = {.enabled = false}, .retry = {.enabled = false}});
    dd::diagnostics diag;
    auto create = [&](std::int64_t size, const char* name) {
        return e.run([&](auto t) {
            return dd::async_create_asset(e.client, {.type = dd::asset_type::internal, .filename = name, .byte_size = size}, diag, t);
        });
    };
    // 600 declared, never uploaded: it still counts.
    auto [ec, big] = create(600, "big.bin");
    ASSERT_FALSE(ec) << diag.to_string();
    auto [ec2, r2] = create(500, "too-much.bin");
    EXPECT_EQ(ec2, dd::api_errc::asset_storage_limit_exceeded) << ec2.message() << " " << diag.to_string();
    EXPECT_EQ(ec2, dd::condition::quota_exceeded);
    EXPECT_EQ(diag.http_status, 422u);
    EXPECT_EQ(diag.code, "asset_storage_limit_exceeded");
    EXPECT_TRUE(server_said(diag, "Asset storage limit exceeded")) << diag.to_string();
    // External and licence assets take no storage.
    auto [ec3, ext] = e.run([&](auto t) {
        return dd::async_create_asset(e.client, {.type = dd::asset_type::external, .external_url = "https://cdn.example.com/q.pdf"}, diag, t);
    });
    EXPECT_FALSE(ec3) << diag.to_string();

    // Replace is checked on the growth: 600 -> 900 fits (+300), 600 -> 1100 does not.
    auto [ec4, rep] = e.run([&](auto t) { return dd::async_replace_asset(e.client, big.asset.id, {.filename = "big2.bin", .byte_size = 1100}, diag, t); });
    EXPECT_EQ(ec4, dd::api_errc::asset_storage_limit_exceeded) << ec4.message() << " " << diag.to_string();
    auto [ec5, rep2] = e.run([&](auto t) { return dd::async_replace_asset(e.client, big.asset.id, {.filename = "big2.bin", .byte_size = 900}, diag, t); });
    EXPECT_FALSE(ec5) << ec5.message() << " " << diag.to_string();

    // Delete frees the storage at once.
    auto [ec6] = e.run([&](auto t) { return dd::async_delete_asset(e.client, big.asset.id, diag, t); });
    ASSERT_FALSE(ec6) << diag.to_string();
    auto [ec7, r7] = create(1000, "all.bin");
    EXPECT_FALSE(ec7) << "delete frees the quota at once: " << ec7.message() << " " << diag.to_string();
}

// ---- uploads and the purchase flow (one sandbox) ------------------------------------

class FlowSandbox : public ::testing::Test
{
protected:
    static inline std::unique_ptr<sandbox_env> env;
    static void SetUpTestSuite()
    {
        env = std::make_unique<sandbox_env>(
            // Watermarking takes an hour of the store's clock: a test moves it on.
            std::vector<std::string>{"--seed-orders", "5", "--no-rate-limit", "--watermark-delay-ms", "3600000"},
            "integ-key-flow",
            dd::client_params{.rate_limit = {.enabled = false}, .retry = {.enabled = false}}
        );
    }
    static void TearDownTestSuite() { env.reset(); }

    sandbox_env& e = *env;
    dd::diagnostics diag;

    dd::asset_with_upload create_internal(const std::string& filename, std::int64_t size, const std::string& type, bool watermark = false)
    {
        auto [ec, r] = e.run([&](auto t) {
            return dd::async_create_asset(
                e.client,
                {.type = dd::asset_type::internal, .filename = filename, .byte_size = size, .content_type = type, .watermark_asset = watermark},
                diag,
                t
            );
        });
        EXPECT_FALSE(ec) << ec.message() << " " << diag.to_string();
        EXPECT_TRUE(r.upload.has_value());
        return r;
    }

    dd::order_downloads downloads(const std::string& order_id)
    {
        auto [ec, d] = e.run([&](auto t) { return dd::async_get_order_downloads(e.client, order_id, diag, t); });
        EXPECT_FALSE(ec) << ec.message() << " " << diag.to_string();
        return d;
    }
};

TEST_F(FlowSandbox, upload_with_a_changed_header_is_signature_mismatch)
{
    const std::string body = "hello, storage\n";
    const auto created = create_internal("notes.txt", static_cast<std::int64_t>(body.size()), "text/plain");
    ASSERT_TRUE(created.upload.has_value());
    const dd::upload_handle& up = *created.upload;

    // Content-Type changed.
    dd::http_headers changed = up.headers;
    changed.set("Content-Type", "application/octet-stream");
    const auto r1 = e.put_upload(up, body, &changed);
    EXPECT_EQ(r1.status, 403u) << r1.body;
    dd::diagnostics d1;
    const dd::error_code ec1 = dd::detail::classify_storage_response(r1, &d1);
    EXPECT_EQ(ec1, dd::api_errc::storage_signature_mismatch) << ec1.message() << " " << d1.to_string();
    EXPECT_EQ(ec1, dd::condition::storage);
    EXPECT_EQ(d1.http_status, 403u);
    EXPECT_EQ(d1.code, "SignatureDoesNotMatch");
    EXPECT_FALSE(d1.server_message.empty());
    EXPECT_EQ(d1.to_string().find("X-Amz-Signature"), std::string::npos);

    // Content-Disposition missing.
    dd::http_headers missing = up.headers;
    missing.erase("Content-Disposition");
    const auto r2 = e.put_upload(up, body, &missing);
    dd::diagnostics d2;
    EXPECT_EQ(dd::detail::classify_storage_response(r2, &d2), dd::api_errc::storage_signature_mismatch) << r2.status << " " << r2.body;

    // The exact headers: accepted (on a fresh connection after the refusals).
    const auto r3 = e.put_upload(up, body);
    EXPECT_EQ(r3.status, 200u) << r3.body;
    EXPECT_FALSE(dd::detail::classify_storage_response(r3, nullptr));
    EXPECT_TRUE(r3.headers.find("ETag").has_value());

    // A download through the client's pipeline would now see the file; the
    // asset's metadata is unchanged by the upload.
    auto [ec, a] = e.run([&](auto t) { return dd::async_get_asset(e.client, created.asset.id, diag, t); });
    ASSERT_FALSE(ec) << diag.to_string();
    EXPECT_EQ(a.byte_size, static_cast<std::int64_t>(body.size()));
    EXPECT_EQ(a.content_type, "text/plain");
}

TEST_F(FlowSandbox, purchase_downloads_watermark_and_refund)
{
    const std::int64_t product = 880000001;
    const std::string pdf = "%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n";

    // Internal PDF with watermarking, uploaded with a correct PUT.
    const auto book = create_internal("handbook.pdf", static_cast<std::int64_t>(pdf.size()), "application/pdf", true);
    ASSERT_TRUE(book.upload.has_value());
    EXPECT_TRUE(book.asset.watermark_asset);
    const auto put = e.put_upload(*book.upload, pdf);
    ASSERT_EQ(put.status, 200u) << put.body;

    // A licence asset with an autogenerated key, and the digital product.
    auto [ec, lic] = e.run([&](auto t) {
        return dd::async_create_asset(e.client, {.type = dd::asset_type::licence, .name = "Handbook key", .autogenerate_licence_key = true}, diag, t);
    });
    ASSERT_FALSE(ec) << diag.to_string();
    auto [ec2, dp] = e.run([&](auto t) {
        const std::string ids_1[] = {book.asset.id, lic.asset.id};
        return dd::async_create_digital_product(e.client, {.store_product_id = product, .asset_ids = ids_1}, diag, t);
    });
    ASSERT_FALSE(ec2) << diag.to_string();

    // The purchase delivers and queues a delivery email.
    const std::string order_id =
        e.purchase({{"store_product_id", product}, {"email", "reader@example.com"}, {"customer_name", "Rita Reader"}});
    ASSERT_FALSE(order_id.empty());
    auto [ec3, order] = e.run([&](auto t) { return dd::async_get_order(e.client, order_id, diag, t); });
    ASSERT_FALSE(ec3) << diag.to_string();
    EXPECT_EQ(order.download_count, 0);
    bool delivered = false;
    for (const auto& m : e.outbox())
        if (m.as_object().at("kind") == "delivery" && m.as_object().at("order_id") == order_id.c_str())
            delivered = m.as_object().at("to") == "reader@example.com";
    EXPECT_TRUE(delivered);

    // First downloads read: the PDF starts processing, the key is assigned.
    dd::order_downloads d = downloads(order_id);
    EXPECT_EQ(d.order_id, order_id);
    EXPECT_EQ(d.order_name, order.name);
    ASSERT_EQ(d.downloads.size(), 2u);
    auto find = [](const dd::order_downloads& od, bool licence) -> const dd::download_entry* {
        for (const auto& x : od.downloads)
            if (x.is_licence_key == licence)
                return &x;
        return nullptr;
    };
    const dd::download_entry* file = find(d, false);
    const dd::download_entry* key = find(d, true);
    ASSERT_TRUE(file && key);
    EXPECT_EQ(file->product_name, "Product " + std::to_string(product));
    EXPECT_EQ(file->file_name, "handbook.pdf");
    EXPECT_EQ(file->file_type, "application/pdf");
    EXPECT_EQ(file->file_size_bytes, static_cast<std::int64_t>(pdf.size()));
    EXPECT_EQ(file->watermark_status, dd::watermark_status::processing);
    EXPECT_EQ(file->download_url, std::nullopt);
    EXPECT_TRUE(file->downloadable) << "a processing entry can still be downloadable";
    EXPECT_TRUE(file->awaiting_watermark());
    EXPECT_TRUE(file->is_watermarked);
    EXPECT_EQ(file->download_count, 0);
    EXPECT_EQ(key->file_name, "Licence Key");
    EXPECT_EQ(key->file_type, "licence/key");
    EXPECT_EQ(key->file_size_bytes, 0);
    EXPECT_TRUE(key->downloadable);
    ASSERT_TRUE(key->licence_key.has_value());
    EXPECT_TRUE(std::regex_match(*key->licence_key, std::regex("[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}")))
        << *key->licence_key;
    const std::string licence_key = *key->licence_key;
    const std::string file_entry_id = file->id;

    // Still processing until the store's clock has moved on by the
    // watermarking delay (--watermark-delay-ms 3600000).
    auto advance = [&](double seconds) {
        auto r = e.sandbox(dd::http_method::post, "/sandbox/clock", json::value({{"advance_seconds", seconds}}));
        ASSERT_EQ(r.status, 200u) << json::serialize(r.body);
    };
    advance(3599);
    d = downloads(order_id);
    file = find(d, false);
    ASSERT_TRUE(file);
    EXPECT_EQ(file->watermark_status, dd::watermark_status::processing) << "ready before the delay";
    advance(1);
    d = downloads(order_id);
    file = find(d, false);
    ASSERT_TRUE(file);
    ASSERT_FALSE(file->awaiting_watermark()) << "not ready after the delay: " << file->watermark_status.str();
    const std::optional<std::string> url = file->download_url;
    ASSERT_TRUE(url.has_value());
    EXPECT_EQ(file->watermark_status, dd::watermark_status::ready);
    EXPECT_EQ(file->id, file_entry_id) << "entry ids are stable";
    EXPECT_EQ(url->rfind(e.public_url() + "/storage/", 0), 0u) << *url;
    key = find(d, true);
    ASSERT_TRUE(key);
    EXPECT_EQ(key->licence_key, licence_key) << "the key stays assigned";

    // Download through the signed URL: the watermarked copy (the sandbox's
    // trailer line, docs/sandbox.md, with the email in angle brackets), counted.
    const auto got = e.get_url(*url);
    ASSERT_EQ(got.status, 200u) << got.body;
    EXPECT_EQ(got.body.rfind(pdf, 0), 0u) << "the file starts with the uploaded body";
    EXPECT_NE(got.body.find("% Watermarked for Rita Reader <reader@example.com> order " + order.name), std::string::npos) << got.body;
    const auto cd = got.headers.find("Content-Disposition");
    ASSERT_TRUE(cd.has_value());
    EXPECT_EQ(cd->rfind("attachment", 0), 0u) << *cd;
    d = downloads(order_id);
    file = find(d, false);
    ASSERT_TRUE(file);
    EXPECT_EQ(file->download_count, 1);
    auto [ec4, order2] = e.run([&](auto t) { return dd::async_get_order(e.client, order_id, diag, t); });
    ASSERT_FALSE(ec4) << diag.to_string();
    EXPECT_EQ(order2.download_count, 1);

    // Refund revokes access.
    auto refund = e.sandbox(dd::http_method::post, "/sandbox/orders/" + order_id + "/refund");
    ASSERT_EQ(refund.status, 200u) << json::serialize(refund.body);
    EXPECT_EQ(refund.body.as_object().at("order").as_object().at("financial_status"), "refunded");
    auto [ec5, order3] = e.run([&](auto t) { return dd::async_get_order(e.client, order_id, diag, t); });
    ASSERT_FALSE(ec5) << diag.to_string();
    EXPECT_EQ(order3.financial_status, dd::financial_status::refunded);
    d = downloads(order_id);
    ASSERT_EQ(d.downloads.size(), 2u);
    for (const auto& x : d.downloads)
    {
        EXPECT_TRUE(x.access_revoked) << x.file_name;
        EXPECT_FALSE(x.downloadable) << x.file_name;
        EXPECT_EQ(x.download_url, std::nullopt) << x.file_name;
        EXPECT_FALSE(x.awaiting_watermark());
    }
    // The URL handed out before the refund no longer works.
    const auto denied = e.get_url(*url);
    dd::diagnostics dd_;
    EXPECT_EQ(dd::detail::classify_storage_response(denied, &dd_), dd::api_errc::storage_access_denied)
        << denied.status << " " << denied.body;
    EXPECT_EQ(dd_.code, "AccessDenied");
}

TEST_F(FlowSandbox, cancel_revokes_access_and_notify_buyers_reaches_buyers)
{
    const std::int64_t product = 880000002;
    auto [ec, ext] = e.run([&](auto t) {
        return dd::async_create_asset(e.client, {.type = dd::asset_type::external, .external_url = "https://cdn.example.com/ext/song.mp3"}, diag, t);
    });
    ASSERT_FALSE(ec) << diag.to_string();
    auto [ec2, dp] = e.run([&](auto t) {
        const std::string ids_2[] = {ext.asset.id};
        return dd::async_create_digital_product(e.client, {.store_product_id = product, .asset_ids = ids_2}, diag, t);
    });
    ASSERT_FALSE(ec2) << diag.to_string();
    const std::string a = e.purchase({{"store_product_id", product}, {"email", "a@example.com"}, {"customer_name", "A"}});
    const std::string b = e.purchase({{"store_product_id", product}, {"email", "b@example.com"}, {"customer_name", "B"}});
    const std::string no_email = e.purchase({{"store_product_id", product}});
    ASSERT_FALSE(a.empty() || b.empty() || no_email.empty());

    // External files: the URL as is, not counted.
    dd::order_downloads d = downloads(a);
    ASSERT_EQ(d.downloads.size(), 1u);
    EXPECT_EQ(d.downloads[0].download_url, "https://cdn.example.com/ext/song.mp3");
    EXPECT_EQ(d.downloads[0].watermark_status, dd::watermark_status::not_applicable);

    auto cancel = e.sandbox(dd::http_method::post, "/sandbox/orders/" + b + "/cancel");
    ASSERT_EQ(cancel.status, 200u);
    auto [ec3, ob] = e.run([&](auto t) { return dd::async_get_order(e.client, b, diag, t); });
    ASSERT_FALSE(ec3);
    EXPECT_EQ(ob.financial_status, dd::financial_status::voided);
    d = downloads(b);
    ASSERT_EQ(d.downloads.size(), 1u);
    EXPECT_TRUE(d.downloads[0].access_revoked);
    EXPECT_FALSE(d.downloads[0].downloadable);
    EXPECT_EQ(d.downloads[0].download_url, std::nullopt);

    // notify_buyers: orders with an email (the one without is skipped).
    auto [ec4, nb] = e.run([&](auto t) { return dd::async_notify_buyers(e.client, dp.id, diag, t); });
    ASSERT_FALSE(ec4) << diag.to_string();
    EXPECT_EQ(nb.notified_count, 2);
    EXPECT_EQ(nb.digital_product_id, dp.id);
}

TEST_F(FlowSandbox, unicode_and_quoted_filenames_upload_with_their_exact_headers)
{
    // Content-Disposition carries an escaped quoted form plus filename*; the
    // transport must send both signed headers byte for byte.
    for (const std::string& name : {std::string("Caf\xc3\xa9 menu.pdf"), std::string("say \"hi\".txt")})
    {
        const std::string body(100, 'u');
        const auto created = create_internal(name, 100, "application/octet-stream");
        ASSERT_TRUE(created.upload.has_value());
        const auto disp = created.upload->headers.find("Content-Disposition");
        ASSERT_TRUE(disp.has_value());
        EXPECT_EQ(disp->rfind("inline; filename=\"", 0), 0u) << *disp;
        const auto r = e.put_upload(*created.upload, body);
        EXPECT_EQ(r.status, 200u) << name << ": " << r.body;
        auto [ec, a] = e.run([&](auto t) { return dd::async_get_asset(e.client, created.asset.id, diag, t); });
        ASSERT_FALSE(ec) << diag.to_string();
        EXPECT_EQ(a.filename, name);
    }
}

TEST_F(FlowSandbox, storefront_ids_above_2_pow_53_round_trip_exactly)
{
    const std::int64_t product = 9007199254740993;  // 2^53 + 1
    auto [ec, lic] = e.run([&](auto t) { return dd::async_create_asset(e.client, {.type = dd::asset_type::licence, .name = "big id"}, diag, t); });
    ASSERT_FALSE(ec) << diag.to_string();
    auto [ec2, dp] = e.run([&](auto t) {
        const std::string ids_3[] = {lic.asset.id};
        return dd::async_create_digital_product(e.client, {.store_product_id = product, .store_variant_id = product + 2, .asset_ids = ids_3}, diag, t);
    });
    ASSERT_FALSE(ec2) << diag.to_string();
    EXPECT_EQ(dp.store_product_id, product);
    EXPECT_EQ(dp.store_variant_id, product + 2);
    auto [ec3, l] = e.run([&](auto t) { return dd::async_list_digital_products(e.client, {.store_product_id = product}, diag, t); });
    ASSERT_FALSE(ec3) << diag.to_string();
    ASSERT_EQ(l.digital_products.size(), 1u);
    EXPECT_EQ(l.digital_products[0].id, dp.id);
    const std::string order_id = e.purchase({{"store_product_id", product}, {"store_variant_id", product + 2}, {"email", "big@example.com"}});
    auto [ec4, orders] = e.run([&](auto t) { return dd::async_list_orders(e.client, {.store_product_id = product}, diag, t); });
    ASSERT_FALSE(ec4) << diag.to_string();
    ASSERT_EQ(orders.orders.size(), 1u);
    EXPECT_EQ(orders.orders[0].id, order_id);
}

TEST_F(FlowSandbox, returning_customer_keeps_the_licence_key_unless_upsert_always)
{
    auto key_of = [&](const std::string& order_id) -> std::string {
        auto d = downloads(order_id);
        for (const auto& x : d.downloads)
            if (x.is_licence_key && x.licence_key)
                return *x.licence_key;
        ADD_FAILURE() << "no licence key for " << order_id;
        return {};
    };
    auto [ec, lic] = e.run([&](auto t) {
        return dd::async_create_asset(e.client, {.type = dd::asset_type::licence, .name = "Seat", .autogenerate_licence_key = true}, diag, t);
    });
    ASSERT_FALSE(ec) << diag.to_string();
    auto [ec2, shared] = e.run([&](auto t) {
        const std::string ids_4[] = {lic.asset.id};
        return dd::async_create_digital_product(e.client, {.store_product_id = 880000003, .asset_ids = ids_4}, diag, t);
    });
    ASSERT_FALSE(ec2) << diag.to_string();
    auto [ec3, unique] = e.run([&](auto t) {
        const std::string ids_5[] = {lic.asset.id};
        return dd::async_create_digital_product(e.client, {.store_product_id = 880000004, .asset_ids = ids_5, .upsert_always = true}, diag, t);
    });
    ASSERT_FALSE(ec3) << diag.to_string();
    const std::string k1 = key_of(e.purchase({{"store_product_id", 880000003}, {"email", "again@example.com"}}));
    const std::string k2 = key_of(e.purchase({{"store_product_id", 880000003}, {"email", "AGAIN@example.com"}}));
    EXPECT_FALSE(k1.empty());
    EXPECT_EQ(k1, k2) << "returning customer (same email, case-insensitive), same digital product";
    const std::string u1 = key_of(e.purchase({{"store_product_id", 880000004}, {"email", "again@example.com"}}));
    const std::string u2 = key_of(e.purchase({{"store_product_id", 880000004}, {"email", "again@example.com"}}));
    EXPECT_NE(u1, u2) << "upsert_always: a unique key per order";
}

// ---- the sandbox clock: preorders, download limits and expiry ---------------------------

TEST(ClockSandbox, preorder_is_released_at_the_launch_date)
{
    sandbox_env e({"--seed-orders", "1", "--no-rate-limit"}, "integ-key-preorder",
                  dd::client_params{.rate_limit = {.enabled = false}, .retry = {.enabled = false}});
    dd::diagnostics diag;
    auto [ec, ext] = e.run([&](auto t) {
        return dd::async_create_asset(e.client, {.type = dd::asset_type::external, .external_url = "https://cdn.example.com/pre/album.zip"}, diag, t);
    });
    ASSERT_FALSE(ec) << diag.to_string();
    const auto launch = std::chrono::floor<std::chrono::milliseconds>(now_ts() + 2h + 5min);
    auto [ec2, dp] = e.run([&](auto t) {
        const std::string ids_6[] = {ext.asset.id};
        return dd::async_create_digital_product(
            e.client,
            {.store_product_id = 890000001,
             .asset_ids = ids_6,
             .custom_message = "Out soon",
             .preorder_enabled = true,
             .preorder_launch_date = launch,
             .preorder_subject = "{{ shop.name }}: your album is here"},
            diag,
            t
        );
    });
    ASSERT_FALSE(ec2) << ec2.message() << " " << diag.to_string();
    EXPECT_EQ(dp.preorder_launch_date, launch);
    const std::string order_id = e.purchase({{"store_product_id", 890000001}, {"email", "fan@example.com"}});

    auto [ec3, d] = e.run([&](auto t) { return dd::async_get_order_downloads(e.client, order_id, diag, t); });
    ASSERT_FALSE(ec3) << diag.to_string();
    ASSERT_EQ(d.downloads.size(), 1u);
    EXPECT_TRUE(d.downloads[0].is_preorder);
    EXPECT_EQ(d.downloads[0].preorder_available_at, launch);
    EXPECT_FALSE(d.downloads[0].preorder_released);
    EXPECT_FALSE(d.downloads[0].downloadable);
    EXPECT_EQ(d.downloads[0].download_url, std::nullopt);

    auto clock = e.sandbox(dd::http_method::post, "/sandbox/clock", json::value{{"advance_seconds", 3 * 3600}});
    ASSERT_EQ(clock.status, 200u) << json::serialize(clock.body);
    EXPECT_EQ(clock.body.as_object().at("offset_ms").to_number<std::int64_t>(), 3 * 3600 * 1000);

    auto [ec4, d2] = e.run([&](auto t) { return dd::async_get_order_downloads(e.client, order_id, diag, t); });
    ASSERT_FALSE(ec4) << diag.to_string();
    ASSERT_EQ(d2.downloads.size(), 1u);
    EXPECT_TRUE(d2.downloads[0].is_preorder);
    EXPECT_TRUE(d2.downloads[0].preorder_released);
    EXPECT_TRUE(d2.downloads[0].downloadable);
    EXPECT_EQ(d2.downloads[0].download_url, "https://cdn.example.com/pre/album.zip");
    bool mailed = false;
    for (const auto& m : e.outbox())
        if (m.as_object().at("kind") == "preorder" && m.as_object().at("order_id") == order_id.c_str())
        {
            mailed = true;
            EXPECT_EQ(m.as_object().at("subject"), "Sandbox Store: your album is here");
            EXPECT_EQ(m.as_object().at("to"), "fan@example.com");
        }
    EXPECT_TRUE(mailed);
}

TEST(ClockSandbox, download_limit_and_expiry_make_entries_undownloadable)
{
    sandbox_env e({"--seed-orders", "1", "--no-rate-limit", "--download-limit", "1", "--download-days", "30"}, "integ-key-limits",
                  dd::client_params{.rate_limit = {.enabled = false}, .retry = {.enabled = false}});
    dd::diagnostics diag;
    const std::string body = "plain file body";
    auto [ec, file] = e.run([&](auto t) {
        return dd::async_create_asset(e.client, {.type = dd::asset_type::internal, .filename = "file.txt", .byte_size = static_cast<std::int64_t>(body.size()), .content_type = "text/plain"}, diag, t);
    });
    ASSERT_FALSE(ec) << diag.to_string();
    ASSERT_EQ(e.put_upload(*file.upload, body).status, 200u);
    auto [ec2, dp] = e.run([&](auto t) {
        const std::string ids_7[] = {file.asset.id};
        return dd::async_create_digital_product(e.client, {.store_product_id = 890000002, .asset_ids = ids_7}, diag, t);
    });
    ASSERT_FALSE(ec2) << diag.to_string();
    const std::string a = e.purchase({{"store_product_id", 890000002}, {"email", "lim@example.com"}});
    const std::string b = e.purchase({{"store_product_id", 890000002}, {"email", "exp@example.com"}});
    auto [ec3, order_a] = e.run([&](auto t) { return dd::async_get_order(e.client, a, diag, t); });
    ASSERT_FALSE(ec3);

    auto entry = [&](const std::string& id) {
        auto [ec, d] = e.run([&](auto t) { return dd::async_get_order_downloads(e.client, id, diag, t); });
        EXPECT_FALSE(ec) << diag.to_string();
        EXPECT_EQ(d.downloads.size(), 1u);
        return d.downloads.empty() ? dd::download_entry{} : d.downloads[0];
    };
    dd::download_entry x = entry(a);
    EXPECT_EQ(x.watermark_status, dd::watermark_status::not_applicable);
    EXPECT_EQ(x.download_limit, 1);
    ASSERT_TRUE(x.expires_at.has_value());
    EXPECT_EQ(*x.expires_at, order_a.created_at + std::chrono::days(30));
    EXPECT_FALSE(x.download_expired);
    ASSERT_TRUE(x.downloadable);
    ASSERT_TRUE(x.download_url.has_value());
    const std::string url = *x.download_url;
    const auto got = e.get_url(url);
    ASSERT_EQ(got.status, 200u) << got.body;
    EXPECT_EQ(got.body, body) << "not watermarked: the raw file";

    // Limit reached: not downloadable, no URL, the old URL refused.
    x = entry(a);
    EXPECT_EQ(x.download_count, 1);
    EXPECT_TRUE(x.download_limit_reached);
    EXPECT_FALSE(x.downloadable);
    EXPECT_EQ(x.download_url, std::nullopt);
    dd::diagnostics sd;
    EXPECT_EQ(dd::detail::classify_storage_response(e.get_url(url), &sd), dd::api_errc::storage_access_denied) << sd.to_string();

    // 31 days later: expired.
    x = entry(b);
    EXPECT_TRUE(x.downloadable);
    ASSERT_EQ(e.sandbox(dd::http_method::post, "/sandbox/clock", json::value{{"advance_seconds", 31 * 86400}}).status, 200u);
    x = entry(b);
    EXPECT_TRUE(x.download_expired);
    EXPECT_FALSE(x.downloadable);
    EXPECT_EQ(x.download_url, std::nullopt);
}

}  // namespace
