// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Storage (presigned SigV4 PUT/GET), downloads' derived flags, watermarking,
// purchases, refunds, preorders, licence keys, outbox and the sandbox clock.
#include "helpers.hpp"

#include <filesystem>

using namespace sbt;
namespace fs = std::filesystem;

namespace {
constexpr const char* signature_mismatch =
    "<Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match "
    "the signature you provided. Check your key and signing method.</Message>";

std::string signature_of(const std::string& url)
{
    return url.substr(url.find("X-Amz-Signature=") + 16);
}
} // namespace

class storage_test : public sandbox_test {
protected:
    json::value created;
    std::string url;
    header_list headers;
    const std::string data = "%PDF-1.4 hello";

    void create_pdf(bool watermark = false)
    {
        auto r = api("POST", "/assets", json::object{{"asset", json::object{{"type", "internal"},
                                                                           {"filename", "Guide.pdf"},
                                                                           {"byte_size", data.size()},
                                                                           {"content_type", "application/pdf"},
                                                                           {"watermark_asset", watermark}}}});
        ASSERT_EQ(r.status, 201);
        created = js(r);
        url = upload_url(created);
        headers = upload_headers(created);
    }
    std::string asset_id() const { return std::string(created.at("asset").at("id").as_string()); }
    void expect_mismatch(const response& r)
    {
        EXPECT_EQ(r.status, 403);
        EXPECT_NE(r.body.find(signature_mismatch), std::string::npos) << r.body;
        EXPECT_EQ(r.body.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>", 0), 0u);
        EXPECT_EQ(r.body.find(signature_of(url)), std::string::npos) << "signature echoed";
        EXPECT_TRUE(r.close);
    }
};

TEST_F(storage_test, PresignedPutStoresTheFile)
{
    create_pdf();
    auto r = put(url, data, headers);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_FALSE(r.close);
    int files = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir / "objects")) {
        ++files;
        EXPECT_EQ(read_file(e.path().string()), data);
    }
    EXPECT_EQ(files, 1);
    EXPECT_FALSE(fs::exists(dir / "tmp") && !fs::is_empty(dir / "tmp"));
    // a second PUT with the same URL (while valid) overwrites
    EXPECT_EQ(put(url, data, headers).status, 200);
}

TEST_F(storage_test, MissingOrChangedSignedHeaderIsSignatureDoesNotMatch)
{
    create_pdf();
    expect_mismatch(put(url, data, {headers[0]}));
    expect_mismatch(put(url, data, {headers[1]}));
    expect_mismatch(put(url, data, {{"Content-Type", "application/pdf; charset=utf-8"}, headers[1]}));
    expect_mismatch(put(url, data, {headers[0], {"Content-Disposition", "attachment; filename=\"Guide.pdf\""}}));
    // a different Host
    request r;
    r.method = "PUT";
    r.target = target_of(url);
    r.headers = {{"Host", "other.test:9000"}, {"Content-Length", std::to_string(data.size())}, headers[0], headers[1]};
    r.body = data;
    expect_mismatch(s().handle(r, now));
}

TEST_F(storage_test, ChangedMethodOrPathIsSignatureDoesNotMatch)
{
    create_pdf();
    auto r = get_url(url);  // GET on the PUT URL
    EXPECT_EQ(r.status, 403);
    EXPECT_NE(r.body.find(signature_mismatch), std::string::npos);
    std::string other = url;
    other.replace(other.find("Guide.pdf"), 9, "Other.pdf");
    expect_mismatch(put(other, data, headers));
    std::string tampered = url;
    tampered.back() = tampered.back() == '0' ? '1' : '0';
    expect_mismatch(put(tampered, data, headers));
}

TEST_F(storage_test, ExpiredUrlIsAccessDenied)
{
    create_pdf();
    now += std::chrono::seconds(3601);
    auto r = put(url, data, headers);
    EXPECT_EQ(r.status, 403);
    EXPECT_NE(r.body.find("<Code>AccessDenied</Code><Message>Request has expired</Message>"), std::string::npos) << r.body;
    EXPECT_TRUE(r.close);
}

TEST_F(storage_test, LengthRules)
{
    create_pdf();
    auto r = put(url, data, headers, false);
    EXPECT_EQ(r.status, 411);
    EXPECT_NE(r.body.find("<Code>MissingContentLength</Code>"), std::string::npos);
    r = put(url, data, {headers[0], headers[1], {"Transfer-Encoding", "chunked"}}, false);
    EXPECT_EQ(r.status, 411);
    r = put(url, "short", headers);
    EXPECT_EQ(r.status, 400);
    EXPECT_NE(r.body.find("<Code>BadDigest</Code>"), std::string::npos);
    // the front end reports fewer bytes than Content-Length
    request req;
    req.method = "PUT";
    req.target = target_of(url);
    req.headers = {{"Host", host}, {"Content-Length", std::to_string(data.size())}, headers[0], headers[1],
                   {"Expect", "100-continue"}};
    auto begun = s().begin_upload(req, now);
    ASSERT_TRUE(std::holds_alternative<upload_ticket>(begun));
    const auto ticket = std::get<upload_ticket>(begun);
    EXPECT_TRUE(ticket.expect_continue);
    EXPECT_EQ(ticket.length, data.size());
    { std::ofstream(ticket.temp_path) << "%PDF"; }
    r = s().finish_upload(ticket, 4, now);
    EXPECT_EQ(r.status, 400);
    EXPECT_NE(r.body.find("<Code>IncompleteBody</Code>"), std::string::npos);
    EXPECT_FALSE(fs::exists(ticket.temp_path));
}

TEST_F(storage_test, UploadForDeletedAssetIsRefused)
{
    create_pdf();
    ASSERT_EQ(api("DELETE", "/assets/" + asset_id()).status, 204);
    EXPECT_EQ(put(url, data, headers).status, 403);
}

// --- downloads --------------------------------------------------------------------------
TEST_F(sandbox_test, DownloadEntriesForEveryAssetType)
{
    const std::string file = uploaded_asset("Guide.pdf", "PDFDATA");
    auto r = api("POST", "/assets", json::object{{"asset", json::object{{"type", "external"},
                                                                        {"external_url", "https://cdn.example.com/song.mp3"}}}});
    const std::string ext(js(r).at("asset").at("id").as_string());
    const std::string lic = licence_asset();
    digital_product(7500000001111LL, {file, ext, lic});
    const std::string oid = purchase(7500000001111LL);
    auto d = downloads(oid);
    ASSERT_EQ(d.size(), 3u);
    const json::object f = d[0].as_object();
    EXPECT_EQ(f.size(), 20u);
    EXPECT_EQ(f.at("product_name"), "The Sourdough Handbook (PDF)");
    EXPECT_EQ(f.at("file_name"), "Guide.pdf");
    EXPECT_EQ(f.at("file_type"), "application/pdf");
    EXPECT_EQ(f.at("file_size_bytes"), 7);
    EXPECT_EQ(f.at("is_watermarked"), false);
    EXPECT_EQ(f.at("watermark_status"), "not_applicable");
    EXPECT_EQ(f.at("download_limit"), nullptr);
    EXPECT_EQ(f.at("expires_at"), nullptr);
    EXPECT_EQ(f.at("download_expired"), false);
    EXPECT_EQ(f.at("access_revoked"), false);
    EXPECT_EQ(f.at("is_preorder"), false);
    EXPECT_EQ(f.at("preorder_available_at"), nullptr);
    EXPECT_EQ(f.at("preorder_released"), true);
    EXPECT_EQ(f.at("is_licence_key"), false);
    EXPECT_EQ(f.at("licence_key"), nullptr);
    EXPECT_EQ(f.at("downloadable"), true);
    const std::string furl(f.at("download_url").as_string());
    EXPECT_NE(furl.find("X-Amz-Expires=300"), std::string::npos);
    EXPECT_EQ(d[1].at("download_url"), "https://cdn.example.com/song.mp3");
    EXPECT_EQ(d[1].at("file_size_bytes"), 0);
    EXPECT_EQ(d[2].at("is_licence_key"), true);
    EXPECT_EQ(d[2].at("file_name"), "Licence Key");
    EXPECT_EQ(d[2].at("file_type"), "licence/key");
    EXPECT_TRUE(d[2].at("licence_key").is_string());
    EXPECT_EQ(d[2].at("download_url"), nullptr);

    // downloading counts for the file and the order; entry ids are stable
    auto g = get_url(furl);
    ASSERT_EQ(g.status, 200) << g.body;
    EXPECT_EQ(read_file(g.file_path), "PDFDATA");
    EXPECT_EQ(g.file_size, 7u);
    EXPECT_EQ(*g.header("Content-Disposition"), "attachment; filename=\"Guide.pdf\"");
    EXPECT_EQ(get_url(furl).status, 200);
    d = downloads(oid);
    EXPECT_EQ(d[0].at("id"), f.at("id"));
    EXPECT_EQ(d[0].at("download_count"), 2);
    EXPECT_EQ(d[1].at("download_count"), 0);
    EXPECT_EQ(js(api("GET", "/orders/" + oid)).at("order").at("download_count"), 2);
    // expired download URL
    now += std::chrono::seconds(301);
    EXPECT_NE(get_url(furl).body.find("Request has expired"), std::string::npos);
}

TEST_F(sandbox_test, WatermarkStateMachine)
{
    const std::string file = uploaded_asset("Book.pdf", "%PDF-original", "application/pdf", true);
    digital_product(10, {file});
    const std::string oid = purchase(10, "ada@example.com", {{"customer_name", "Ada Lovelace"}});
    auto d = downloads(oid);
    EXPECT_EQ(d[0].at("is_watermarked"), true);
    EXPECT_EQ(d[0].at("watermark_status"), "processing");
    EXPECT_EQ(d[0].at("download_url"), nullptr);
    EXPECT_EQ(d[0].at("downloadable"), true);
    now += std::chrono::milliseconds(1999);
    EXPECT_EQ(downloads(oid)[0].at("watermark_status"), "processing");
    now += std::chrono::milliseconds(1);
    d = downloads(oid);
    EXPECT_EQ(d[0].at("watermark_status"), "ready");
    const std::string u(d[0].at("download_url").as_string());
    auto g = get_url(u);
    ASSERT_EQ(g.status, 200);
    const std::string content = read_file(g.file_path);
    EXPECT_EQ(content.rfind("%PDF-original", 0), 0u);
    EXPECT_NE(content.find("Ada Lovelace <ada@example.com>"), std::string::npos);
    EXPECT_NE(content, "%PDF-original");

    // a second buyer gets their own copy, again through processing
    const std::string o2 = purchase(10, "bob@example.com");
    EXPECT_EQ(downloads(o2)[0].at("watermark_status"), "processing");
}

TEST_F(sandbox_test, WatermarkNotApplicable)
{
    cfg.watermark = false;
    const std::string pdf = uploaded_asset("Book.pdf", "%PDF", "application/pdf", true);
    digital_product(10, {pdf});
    const std::string oid = purchase(10);
    auto d = downloads(oid);
    EXPECT_EQ(d[0].at("watermark_status"), "not_applicable");
    EXPECT_EQ(d[0].at("is_watermarked"), false);
    EXPECT_TRUE(d[0].at("download_url").is_string());
}

TEST_F(sandbox_test, WatermarkOnlyForPdf)
{
    const std::string zip = uploaded_asset("Pack.zip", "PK", "application/zip", true);
    digital_product(10, {zip});
    auto d = downloads(purchase(10));
    EXPECT_EQ(d[0].at("watermark_status"), "not_applicable");
    EXPECT_TRUE(d[0].at("download_url").is_string());
}

TEST_F(sandbox_test, DownloadLimit)
{
    cfg.download_limit = 2;
    const std::string file = uploaded_asset("a.pdf", "x");
    digital_product(10, {file});
    const std::string oid = purchase(10);
    const std::string u(downloads(oid)[0].at("download_url").as_string());
    EXPECT_EQ(get_url(u).status, 200);
    EXPECT_EQ(get_url(u).status, 200);
    auto d = downloads(oid);
    EXPECT_EQ(d[0].at("download_limit"), 2);
    EXPECT_EQ(d[0].at("download_count"), 2);
    EXPECT_EQ(d[0].at("download_limit_reached"), true);
    EXPECT_EQ(d[0].at("downloadable"), false);
    EXPECT_EQ(d[0].at("download_url"), nullptr);
    auto r = get_url(u);
    EXPECT_EQ(r.status, 403);
    EXPECT_NE(r.body.find("<Code>AccessDenied</Code>"), std::string::npos);
}

TEST_F(sandbox_test, DownloadExpiryWithSandboxClock)
{
    cfg.download_days = 30;
    const std::string file = uploaded_asset("a.pdf", "x");
    digital_product(10, {file});
    const std::string oid = purchase(10);
    auto d = downloads(oid);
    EXPECT_EQ(d[0].at("expires_at"), "2026-12-22T10:00:00.000Z");
    EXPECT_EQ(d[0].at("download_expired"), false);
    auto r = call("POST", "/sandbox/clock", R"({"advance_seconds": 2592001})");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(js(r).at("now"), "2026-12-22T10:00:01.000Z");
    d = downloads(oid);
    EXPECT_EQ(d[0].at("download_expired"), true);
    EXPECT_EQ(d[0].at("downloadable"), false);
    EXPECT_EQ(d[0].at("download_url"), nullptr);
    EXPECT_EQ(call("POST", "/sandbox/clock", R"({"advance_seconds": -1})").status, 422);
    EXPECT_EQ(call("GET", "/sandbox/clock").status, 200);
}

TEST_F(sandbox_test, RefundAndCancelRevokeAccess)
{
    const std::string file = uploaded_asset("a.pdf", "x");
    digital_product(10, {file});
    const std::string o1 = purchase(10), o2 = purchase(10);
    auto r = call("POST", "/sandbox/orders/" + o1 + "/refund");
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(js(r).at("order").at("financial_status"), "refunded");
    r = call("POST", "/sandbox/orders/" + o2 + "/cancel");
    EXPECT_EQ(js(r).at("order").at("financial_status"), "voided");
    for (const auto& o : {o1, o2}) {
        auto d = downloads(o);
        EXPECT_EQ(d[0].at("access_revoked"), true);
        EXPECT_EQ(d[0].at("downloadable"), false);
        EXPECT_EQ(d[0].at("download_url"), nullptr);
    }
    EXPECT_EQ(error_of(call("POST", "/sandbox/orders/nope/refund")), "Order not found");
}

TEST_F(sandbox_test, PreorderReleaseAndLaunchEmail)
{
    const std::string file = uploaded_asset("a.pdf", "x");
    const std::string dp = digital_product(10, {file}, {{"preorder_enabled", true}, {"custom_message", "Soon!"},
                                                       {"preorder_launch_date", "2026-11-22T13:00:00Z"},
                                                       {"preorder_subject", "{{ order.name }} is out"}});
    const std::string o1 = purchase(10, "a@example.com"), o2 = purchase(10, "b@example.com");
    auto d = downloads(o1);
    EXPECT_EQ(d[0].at("is_preorder"), true);
    EXPECT_EQ(d[0].at("preorder_available_at"), "2026-11-22T13:00:00.000Z");
    EXPECT_EQ(d[0].at("preorder_released"), false);
    EXPECT_EQ(d[0].at("downloadable"), false);
    EXPECT_EQ(d[0].at("download_url"), nullptr);
    auto preorder_mails = [&] {
        std::vector<json::value> out;
        for (const auto& e : outbox())
            if (e.at("kind") == "preorder")
                out.push_back(e);
        return out;
    };
    EXPECT_TRUE(preorder_mails().empty());
    ASSERT_EQ(call("POST", "/sandbox/clock", R"({"advance_seconds": 10800})").status, 200);
    auto mails = preorder_mails();
    ASSERT_EQ(mails.size(), 2u);
    EXPECT_EQ(mails[0].at("to"), "a@example.com");
    EXPECT_EQ(mails[0].at("queued_at"), "2026-11-22T13:00:00.000Z");
    const std::string name1(js(api("GET", "/orders/" + o1)).at("order").at("name").as_string());
    EXPECT_EQ(mails[0].at("subject"), name1 + " is out");
    d = downloads(o1);
    EXPECT_EQ(d[0].at("preorder_released"), true);
    EXPECT_EQ(d[0].at("downloadable"), true);
    EXPECT_TRUE(d[0].at("download_url").is_string());
    EXPECT_EQ(call("POST", "/sandbox/clock", R"({"advance_seconds": 10})").status, 200);
    EXPECT_EQ(preorder_mails().size(), 2u);  // once per order
    (void)o2;
    (void)dp;
}

TEST_F(sandbox_test, LicenceKeysPerCustomerOrPerOrder)
{
    const std::string lic = licence_asset(true), plain = licence_asset(false);
    digital_product(10, {lic, plain});
    digital_product(20, {lic}, {{"upsert_always", true}});
    auto key = [&](const std::string& oid, std::size_t i = 0) { return downloads(oid)[i].at("licence_key"); };
    const std::string a1 = purchase(10, "ann@example.com"), a2 = purchase(10, "ANN@example.com");
    const std::string b1 = purchase(10, "bob@example.com");
    EXPECT_TRUE(key(a1).is_string());
    EXPECT_EQ(key(a1), key(a2));  // returning customer keeps the key
    EXPECT_NE(key(a1), key(b1));
    EXPECT_EQ(key(a1, 1), nullptr);  // not autogenerated
    const std::string u1 = purchase(20, "ann@example.com"), u2 = purchase(20, "ann@example.com");
    EXPECT_NE(key(u1), key(u2));  // upsert_always: unique per order
    EXPECT_NE(key(u1), key(a1));
}

TEST_F(sandbox_test, PurchaseLinksProductAndVariantLevelProducts)
{
    const std::string a = licence_asset(false), b = licence_asset(false);
    digital_product(10, {a});
    digital_product(10, {b}, {{"store_variant_id", 9}});
    EXPECT_EQ(downloads(purchase(10, "x@example.com", {{"store_variant_id", 9}})).size(), 2u);
    EXPECT_EQ(downloads(purchase(10, "x@example.com", {{"store_variant_id", 8}})).size(), 1u);
    EXPECT_EQ(downloads(purchase(11)).size(), 0u);
    auto box = outbox();
    ASSERT_EQ(box.size(), 2u);  // delivery emails only for orders with linked products
    EXPECT_EQ(box[0].at("kind"), "delivery");
    EXPECT_EQ(box[0].at("to"), "x@example.com");
    EXPECT_EQ(box[0].as_object().size(), 7u);  // with download_page_url
    auto r = call("POST", "/sandbox/purchases", R"({"email":"x@example.com"})");
    EXPECT_EQ(r.status, 422);
    EXPECT_EQ(errors_of(r), std::vector<std::string>{"Store product can't be blank"});
    r = call("POST", "/sandbox/purchases", R"({"store_product_id":1,"financial_status":"lost"})");
    EXPECT_EQ(errors_of(r), std::vector<std::string>{"Financial status is not included in the list"});
    EXPECT_EQ(call("DELETE", "/sandbox/outbox").status, 204);
    EXPECT_TRUE(outbox().empty());
}

TEST_F(sandbox_test, PurchaseWithCountAndChosenCreatedAt)
{
    // Several purchases at once, all with one chosen created_at (the order feed's tests).
    auto r = call("POST", "/sandbox/purchases",
                  R"({"store_product_id":10,"count":3,"created_at":"2026-12-04T23:59:59.999Z"})");
    ASSERT_EQ(r.status, 201);
    auto v = js(r);
    ASSERT_EQ(v.at("orders").as_array().size(), 3u);
    EXPECT_EQ(v.at("order"), v.at("orders").as_array()[2]);
    for (const auto& o : v.at("orders").as_array())
        EXPECT_EQ(o.at("created_at"), "2026-12-04T23:59:59.999Z");
    auto l = js(api("GET", "/orders?created_at_min=2026-12-04&created_at_max=2026-12-04&per_page=250"));
    EXPECT_EQ(l.at("pagination").at("total_count"), 3);
    // Without count: one order, the response as before (no "orders").
    r = call("POST", "/sandbox/purchases", R"({"store_product_id":10})");
    ASSERT_EQ(r.status, 201);
    EXPECT_FALSE(js(r).as_object().contains("orders"));
    r = call("POST", "/sandbox/purchases", R"({"store_product_id":10,"count":0,"created_at":"yesterday"})");
    EXPECT_EQ(r.status, 422);
    EXPECT_EQ(errors_of(r), (std::vector<std::string>{"Created at is invalid", "Count must be between 1 and 1000"}));
    r = call("POST", "/sandbox/purchases", R"({"store_product_id":10,"count":1001})");
    EXPECT_EQ(errors_of(r), std::vector<std::string>{"Count must be between 1 and 1000"});
}

TEST_F(sandbox_test, ReplaceCommitsOnUploadAndReappliesWatermark)
{
    const std::string id = uploaded_asset("v1.pdf", "%PDF-v1", "application/pdf", true);
    digital_product(10, {id});
    const std::string oid = purchase(10);
    downloads(oid);
    now += std::chrono::seconds(3);
    EXPECT_EQ(downloads(oid)[0].at("watermark_status"), "ready");
    auto r = api("POST", "/assets/" + id + "/replace",
                 json::object{{"asset", json::object{{"filename", "v2.pdf"}, {"byte_size", 9}}}});
    ASSERT_EQ(r.status, 200);
    auto v = js(r);
    EXPECT_EQ(v.at("asset").at("filename"), "v1.pdf");  // committed on upload
    ASSERT_EQ(put(upload_url(v), "%PDF-v2!!", upload_headers(v)).status, 200);
    auto a = js(api("GET", "/assets/" + id)).at("asset");
    EXPECT_EQ(a.at("filename"), "v2.pdf");
    EXPECT_EQ(a.at("byte_size"), 9);
    auto d = downloads(oid);
    EXPECT_EQ(d[0].at("watermark_status"), "processing");
    now += std::chrono::seconds(3);
    d = downloads(oid);
    ASSERT_EQ(d[0].at("watermark_status"), "ready");
    auto g = get_url(std::string(d[0].at("download_url").as_string()));
    EXPECT_EQ(read_file(g.file_path).rfind("%PDF-v2!!", 0), 0u);
    int originals = 0;
    for (const auto& e : fs::directory_iterator(dir / "objects")) {
        (void)e;
        ++originals;
    }
    EXPECT_EQ(originals, 1);  // the previous file is removed
}

TEST_F(sandbox_test, DeleteAssetRemovesFileAndLinks)
{
    const std::string id = uploaded_asset("a.pdf", "x");
    const std::string other = licence_asset();
    const std::string dp = digital_product(10, {id, other});
    EXPECT_EQ(api("DELETE", "/assets/" + id).status, 204);
    EXPECT_TRUE(fs::is_empty(dir / "objects"));
    auto v = js(api("GET", "/digital_products/" + dp));
    ASSERT_EQ(v.at("digital_product").at("assets").as_array().size(), 1u);
    EXPECT_EQ(v.at("digital_product").at("assets").at(0).at("id"), other);
}
