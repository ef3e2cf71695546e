// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The sandbox's pages, sans-io (store_registry + service, a fake clock): the
// buyer's download page (its link in every email, the states of the entries
// agreeing with GET /orders/{id}/downloads, counted downloads through fresh
// presigned URLs, no API key, another order's link refused), the store pages
// (one API-key entry, a session cookie, CSRF tokens, no other store's data, the
// clock) and markup, quotes and right-to-left text kept as text on every page.
#include "helpers.hpp"
#include "html.hpp"
#include "stores.hpp"

#include <filesystem>
#include <regex>

using namespace sbt;
namespace fs = std::filesystem;

namespace {

// Values that must stay text on every page.
const std::string script = "<script>alert(\"x\")</script>";
const std::string hostile = script + " \"quoted\" 'single' & \xD7\xA9\xD7\x9C\xD7\x95\xD7\x9D \xD8\xB9\xD8\xB1\xD8\xA8\xD9\x8A";
const std::string rtl = "\xD7\xA9\xD7\x9C\xD7\x95\xD7\x9D";  // Hebrew "shalom"

class pages_test : public ::testing::Test {
protected:
    static constexpr const char* host = "sandbox.test:9000";
    static constexpr const char* origin = "http://sandbox.test:9000";
    static constexpr const char* key = "pages-key";
    fs::path dir;
    sandbox_config cfg;
    std::unique_ptr<store_registry> registry;
    time_point now = at("2026-11-22T10:00:00.000Z");

    void SetUp() override
    {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir = fs::temp_directory_path() / (std::string("dd-sandbox-test-") + info->test_suite_name() +
                                           "-" + info->name() + "-" + std::to_string(::getpid()));
        fs::remove_all(dir);
        fs::create_directories(dir);
        cfg.api_key = key;
        cfg.data_dir = dir.string();
        cfg.public_url = origin;
        cfg.seed_orders = 3;
        cfg.rate_limit = false;
        cfg.download_limit = 2;
        cfg.download_days = 30;
        cfg.watermark_delay_ms = 60000;
    }
    void TearDown() override
    {
        registry.reset();
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    store_registry& reg()
    {
        if (!registry)
            registry = std::make_unique<store_registry>(cfg, now);
        return *registry;
    }
    response call(const std::string& method, const std::string& target, const std::string& token = key,
                  const std::string& body = {}, header_list extra = {})
    {
        request r;
        r.method = method;
        r.target = target;
        r.headers.emplace_back("Host", host);
        if (!token.empty())
            r.headers.emplace_back("X-Auth-Token", token);
        for (auto& h : extra)
            r.headers.push_back(h);
        r.body = body;
        return reg().handle(r, now);
    }
    json::value api(const std::string& method, const std::string& path, const json::value& body = nullptr,
                    int expected = 0, const std::string& token = key)
    {
        const response r = call(method, path.starts_with("/sandbox/") ? path : "/api/v1/external" + path, token,
                                body.is_null() ? "" : json::serialize(body));
        if (expected) {
            EXPECT_EQ(r.status, expected) << method << " " << path << ": " << r.body;
        }
        return r.body.empty() ? json::value() : json::parse(r.body);
    }
    // A page of the sandbox, as a browser without any key asks for it.
    response browse(const std::string& url, const std::string& cookie = {}, const std::string& method = "GET",
                    const std::string& form = {})
    {
        std::string target = url.starts_with(origin) ? url.substr(std::string(origin).size()) : url;
        header_list h;
        if (!cookie.empty())
            h.emplace_back("Cookie", cookie);
        if (method == "POST")
            h.emplace_back("Content-Type", "application/x-www-form-urlencoded");
        return call(method, target, "", form, h);
    }
    static std::string header(const response& r, std::string_view name)
    {
        const std::string* v = r.header(name);
        return v ? *v : std::string();
    }
    std::string id_of(const json::value& v, const char* root)
    {
        return std::string(v.at(root).at("id").as_string());
    }
    std::string upload(const std::string& name, const std::string& filename, const std::string& data,
                       const std::string& type, bool watermark)
    {
        const auto v = api("POST", "/assets",
                           json::object{{"asset", json::object{{"type", "internal"},
                                                               {"name", name},
                                                               {"filename", filename},
                                                               {"byte_size", data.size()},
                                                               {"content_type", type},
                                                               {"watermark_asset", watermark}}}},
                           201);
        const std::string url(v.at("upload").at("url").as_string());
        header_list h{{"Content-Length", std::to_string(data.size())}};
        for (const auto& [k, hv] : v.at("upload").at("headers").as_object())
            h.emplace_back(std::string(k), std::string(hv.as_string()));
        const response up = call("PUT", url.substr(std::string(origin).size()), "", data, h);
        EXPECT_EQ(up.status, 200) << up.body;
        return id_of(v, "asset");
    }

    // A store with a hostile name, a watermarked PDF, a zip, a licence key, a
    // preorder and an attachment; orders: paid, preorder, refunded.
    struct fixture {
        std::string pdf, zip, licence, dp, pre_dp, paid, preorder, refunded;
    };
    fixture build()
    {
        cfg.shop_name = "Shop " + hostile;
        fixture f;
        f.pdf = upload("Guide " + hostile, "guide " + rtl + ".pdf", "%PDF-1.4 guide", "application/pdf", true);
        f.zip = upload("Bonus " + hostile, "bonus\".zip", "PK zip", "application/zip", false);
        f.licence = id_of(api("POST", "/assets",
                              json::object{{"asset", json::object{{"type", "licence"},
                                                                  {"name", "Key " + hostile},
                                                                  {"autogenerate_licence_key", true}}}},
                              201),
                          "asset");
        f.dp = id_of(api("POST", "/digital_products",
                         json::object{{"digital_product",
                                       json::object{{"store_product_id", 101},
                                                    {"asset_ids", json::array{json::value(f.pdf), json::value(f.zip), json::value(f.licence)}},
                                                    {"custom_message", "Thanks! " + hostile}}}},
                         201),
                     "digital_product");
        f.pre_dp = id_of(api("POST", "/digital_products",
                             json::object{{"digital_product",
                                           json::object{{"store_product_id", 202},
                                                        {"asset_ids", json::array{json::value(f.zip)}},
                                                        {"custom_message", "Soon " + hostile},
                                                        {"preorder_enabled", true},
                                                        {"preorder_launch_date", "2026-12-01T00:00:00Z"},
                                                        {"preorder_heading", "Heading " + hostile},
                                                        {"preorder_description", "Description " + hostile}}}},
                             201),
                         "digital_product");
        auto buy = [&](std::int64_t product, const std::string& email) {
            return id_of(api("POST", "/sandbox/purchases",
                             json::object{{"store_product_id", product}, {"email", email}, {"customer_name", "Ada " + hostile}},
                             201),
                         "order");
        };
        f.paid = buy(101, "ada@example.com");
        f.preorder = buy(202, "bob@example.com");
        f.refunded = buy(101, "eve@example.com");
        api("POST", "/sandbox/orders/" + f.refunded + "/refund", nullptr, 200);
        api("POST", "/orders/" + f.paid + "/attach_assets", json::object{{"asset_ids", json::array{json::value(f.zip)}}}, 200);
        return f;
    }
    std::string page_url(const std::string& order_id)
    {
        return std::string(api("GET", "/sandbox/orders/" + order_id + "/download_page", nullptr, 200).at("download_page_url").as_string());
    }
    // data-state of each file on a page, in order
    static std::vector<std::string> states(const std::string& html)
    {
        std::vector<std::string> out;
        static const std::regex re("<li class=\"file\" data-state=\"([a-z_]+)\"");
        for (auto it = std::sregex_iterator(html.begin(), html.end(), re); it != std::sregex_iterator(); ++it)
            out.push_back((*it)[1]);
        return out;
    }
    // The state GET /orders/{id}/downloads implies for an entry (the page's words).
    static std::string state_of(const json::value& d)
    {
        if (d.at("access_revoked").as_bool())
            return "revoked";
        if (d.at("download_expired").as_bool())
            return "expired";
        if (d.at("download_limit_reached").as_bool())
            return "limit_reached";
        if (!d.at("preorder_released").as_bool())
            return "not_released";
        if (d.at("watermark_status") == std::string("processing"))
            return "processing";
        return d.at("download_url").is_null() && d.at("licence_key").is_null() ? "unavailable" : "ready";
    }
    std::vector<std::string> api_states(const std::string& order_id)
    {
        std::vector<std::string> out;
        const json::value v = api("GET", "/orders/" + order_id + "/downloads", nullptr, 200);
        for (const auto& d : v.at("downloads").as_array())
            out.push_back(state_of(d));
        return out;
    }
    std::vector<std::string> links(const std::string& html)
    {
        std::vector<std::string> out;
        static const std::regex re("href=\"([^\"]*/files/[^\"]*)\"");
        for (auto it = std::sregex_iterator(html.begin(), html.end(), re); it != std::sregex_iterator(); ++it)
            out.push_back((*it)[1]);
        return out;
    }
    // Logs in through the form; returns the Cookie header value of the session.
    std::string login(const std::string& api_key)
    {
        const response form = browse("/sandbox/ui/login");
        EXPECT_EQ(form.status, 200);
        const std::string set = header(form, "Set-Cookie");
        const std::string login_cookie = set.substr(0, set.find(';'));
        const std::string token = login_cookie.substr(login_cookie.find('=') + 1);
        const response r = browse("/sandbox/ui/login", login_cookie, "POST",
                                  "csrf=" + token + "&api_key=" + uri_encode(api_key));
        EXPECT_EQ(r.status, 303) << r.body;
        for (const auto& [k, v] : r.headers)
            if (iequals(k, "Set-Cookie") && v.starts_with(store_registry::session_cookie))
                return v.substr(0, v.find(';'));
        ADD_FAILURE() << "no session cookie";
        return {};
    }
    static std::string csrf_of(const std::string& html)
    {
        static const std::regex re("name=\"csrf\" value=\"([0-9a-f]+)\"");
        std::smatch m;
        EXPECT_TRUE(std::regex_search(html, m, re)) << html;
        return m.size() > 1 ? std::string(m[1]) : std::string();
    }
    // Markup of the store stays text: no <script> element, the values escaped and
    // the right-to-left text isolated.
    static void expect_escaped(const response& r, const std::string& where)
    {
        SCOPED_TRACE(where);
        EXPECT_EQ(header(r, "Content-Type"), "text/html; charset=utf-8");
        EXPECT_EQ(r.body.find("<script"), std::string::npos) << r.body;
        EXPECT_EQ(r.body.find("\"quoted\""), std::string::npos);
        EXPECT_EQ(r.body.find("'single'"), std::string::npos);
        EXPECT_NE(r.body.find("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &quot;quoted&quot; &apos;single&apos; &amp; " + rtl),
                  std::string::npos);
        EXPECT_NE(r.body.find("<bdi>"), std::string::npos);
        EXPECT_NE(header(r, "Content-Security-Policy").find("default-src 'none'"), std::string::npos);
        EXPECT_EQ(r.body.find(key), std::string::npos) << "the API key is on the page";
    }
};

} // namespace

TEST_F(pages_test, every_email_links_to_the_download_page_that_shows_the_api_states)
{
    const fixture f = build();
    api("POST", "/orders/" + f.paid + "/notify", nullptr, 200);
    api("POST", "/digital_products/" + f.dp + "/notify_buyers", nullptr, 202);
    now += std::chrono::days(10);  // the preorder launches: its email is queued
    const auto emails = api("GET", "/sandbox/outbox", nullptr, 200).at("emails").as_array();
    std::set<std::string> kinds;
    for (const auto& m : emails) {
        const std::string order_id(m.at("order_id").as_string());
        const std::string url = page_url(order_id);
        kinds.insert(std::string(m.at("kind").as_string()));
        EXPECT_TRUE(std::string(m.at("body").as_string()).ends_with("\n\nYour download page: " + url)) << m;
        EXPECT_EQ(m.at("download_page_url"), url);
    }
    EXPECT_EQ(kinds, (std::set<std::string>{"delivery", "notify", "notify_buyers", "preorder"}));
}

TEST_F(pages_test, download_page_states_agree_with_the_api_and_downloads_are_counted)
{
    const fixture f = build();
    const std::string url = page_url(f.paid);
    EXPECT_TRUE(url.starts_with(std::string(origin) + "/download-page/" + f.paid + "/")) << url;
    // No API key: the link alone opens it. Opening it starts watermarking.
    response page = browse(url);
    ASSERT_EQ(page.status, 200) << page.body;
    EXPECT_EQ(header(page, "Referrer-Policy"), "no-referrer");
    EXPECT_EQ(states(page.body), (std::vector<std::string>{"processing", "ready", "ready", "ready"}));
    EXPECT_EQ(states(page.body), api_states(f.paid));
    EXPECT_NE(page.body.find("Being watermarked"), std::string::npos);
    EXPECT_NE(page.body.find("Thanks! &lt;script&gt;"), std::string::npos);  // custom_message
    // The licence key assigned at delivery is on the page.
    const auto dl = json::value(api("GET", "/orders/" + f.paid + "/downloads", nullptr, 200)).at("downloads").as_array();
    const std::string licence(dl.at(2).at("licence_key").as_string());
    EXPECT_NE(page.body.find("<code class=\"key\">" + licence + "</code>"), std::string::npos);
    // The visit started the watermark: 60 s later the API says ready.
    now += std::chrono::seconds(61);
    EXPECT_EQ(dl.at(0).at("watermark_status"), "processing");
    EXPECT_EQ(api("GET", "/orders/" + f.paid + "/downloads", nullptr, 200).at("downloads").at(0).at("watermark_status"), "ready");

    page = browse(url);
    const auto files = links(page.body);
    ASSERT_EQ(files.size(), 3u);  // pdf, zip, attachment (the licence has no file)
    // Following a link mints a presigned URL now; fetching it counts.
    for (int i = 0; i < 2; ++i) {
        const response go = browse(files[1]);
        ASSERT_EQ(go.status, 303) << go.body;
        const std::string to = header(go, "Location");
        EXPECT_NE(to.find("X-Amz-Signature="), std::string::npos);
        const response file = browse(to);
        EXPECT_EQ(file.status, 200) << file.body;
        now += std::chrono::hours(1);  // > the URL's TTL: the page left open still works
    }
    const auto after = api("GET", "/orders/" + f.paid + "/downloads", nullptr, 200).at("downloads").as_array();
    EXPECT_EQ(after.at(1).at("download_count").as_int64(), 2);
    page = browse(url);
    EXPECT_EQ(states(page.body), (std::vector<std::string>{"ready", "limit_reached", "ready", "ready"}));
    EXPECT_EQ(states(page.body), api_states(f.paid));
    EXPECT_NE(page.body.find("Download limit reached"), std::string::npos);
    EXPECT_EQ(browse(files[1]).status, 403);  // the link of a file at its limit

    // Preorder: not yet released, heading and description shown until the launch.
    page = browse(page_url(f.preorder));
    EXPECT_EQ(states(page.body), (std::vector<std::string>{"not_released"}));
    EXPECT_EQ(states(page.body), api_states(f.preorder));
    EXPECT_NE(page.body.find("Heading &lt;script&gt;"), std::string::npos);
    EXPECT_NE(page.body.find("Description &lt;script&gt;"), std::string::npos);
    // Refunded: access revoked, and no licence key shown.
    page = browse(page_url(f.refunded));
    EXPECT_EQ(states(page.body), (std::vector<std::string>{"revoked", "revoked", "revoked"}));
    EXPECT_EQ(states(page.body), api_states(f.refunded));
    EXPECT_EQ(page.body.find("class=\"key\""), std::string::npos);
    EXPECT_TRUE(links(page.body).empty());

    now += std::chrono::days(31);  // past --download-days; the preorder released
    page = browse(page_url(f.preorder));
    EXPECT_EQ(states(page.body), (std::vector<std::string>{"expired"}));
    EXPECT_EQ(page.body.find("Heading &lt;script&gt;"), std::string::npos);
    EXPECT_EQ(states(browse(url).body), api_states(f.paid));
    EXPECT_EQ(states(browse(url).body)[0], "expired");
}

TEST_F(pages_test, another_orders_link_and_a_wrong_token_are_refused)
{
    const fixture f = build();
    const std::string a = page_url(f.paid), b = page_url(f.preorder);
    const std::string token_a = a.substr(a.rfind('/') + 1), token_b = b.substr(b.rfind('/') + 1);
    EXPECT_EQ(token_a.size(), 32u);
    EXPECT_NE(token_a, token_b);
    EXPECT_EQ(browse("/download-page/" + f.preorder + "/" + token_a).status, 404);
    EXPECT_EQ(browse("/download-page/" + f.paid + "/" + token_b).status, 404);
    EXPECT_EQ(browse("/download-page/" + f.paid + "/" + std::string(32, '0')).status, 404);
    EXPECT_EQ(browse("/download-page/" + f.paid).status, 404);
    // A file of order A through order B's page.
    now += std::chrono::seconds(61);
    const auto files = links(browse(a).body);
    ASSERT_FALSE(files.empty());
    const std::string entry = files[0].substr(files[0].rfind('/') + 1);
    EXPECT_EQ(browse(b + "/files/" + entry).status, 404);
    EXPECT_EQ(browse(a + "/files/" + entry).status, 303);
    // Not for POST; the API key changes nothing, another store's key neither.
    EXPECT_EQ(browse(a, "", "POST").status, 405);
    const std::string other(api("POST", "/sandbox/stores", json::object{{"options", json::array{"--seed-orders", "0"}}}, 201)
                                .at("store").at("id").as_string());
    EXPECT_EQ(browse("/stores/" + other + a.substr(std::string(origin).size())).status, 404);
}

TEST_F(pages_test, a_created_stores_page_is_under_its_path)
{
    const auto made = api("POST", "/sandbox/stores", json::object{{"options", json::array{"--seed-orders", "0"}}}, 201);
    const std::string other_key(made.at("store").at("api_key").as_string());
    const std::string id(made.at("store").at("id").as_string());
    const std::string asset = id_of(api("POST", "/assets", json::object{{"asset", json::object{{"type", "licence"}, {"name", "Key"}, {"autogenerate_licence_key", true}}}}, 201, other_key), "asset");
    api("POST", "/digital_products", json::object{{"digital_product", json::object{{"store_product_id", 5}, {"asset_ids", json::array{json::value(asset)}}}}}, 201, other_key);
    const std::string order = id_of(api("POST", "/sandbox/purchases", json::object{{"store_product_id", 5}, {"email", "x@example.com"}}, 201, other_key), "order");
    const std::string url(api("GET", "/sandbox/orders/" + order + "/download_page", nullptr, 200, other_key).at("download_page_url").as_string());
    EXPECT_TRUE(url.starts_with(std::string(origin) + "/stores/" + id + "/download-page/" + order + "/")) << url;
    EXPECT_EQ(browse(url).status, 200);
    // The same path without the store's prefix is the default store's: not found.
    EXPECT_EQ(browse(url.substr(url.find("/download-page/"))).status, 404);
}

TEST_F(pages_test, store_pages_need_one_key_entry_then_a_session_and_csrf_tokens)
{
    const fixture f = build();
    // Without a session: the login form (a GET), a refusal (a POST).
    response r = browse("/sandbox/ui/outbox");
    EXPECT_EQ(r.status, 303);
    EXPECT_EQ(header(r, "Location"), "/sandbox/ui/login");
    EXPECT_EQ(browse("/sandbox/ui/outbox/clear", "", "POST", "").status, 403);
    // The key in a query string opens nothing.
    EXPECT_EQ(browse(std::string("/sandbox/ui/outbox?api_key=") + key).status, 303);
    // The login form's own token is required (login CSRF).
    EXPECT_EQ(browse("/sandbox/ui/login", "", "POST", std::string("api_key=") + key).status, 403);
    const response form = browse("/sandbox/ui/login");
    const std::string set = header(form, "Set-Cookie");
    EXPECT_NE(set.find("; HttpOnly"), std::string::npos);
    EXPECT_NE(set.find("; SameSite=Strict"), std::string::npos);
    EXPECT_NE(form.body.find("type=\"password\""), std::string::npos);
    const std::string lc = set.substr(0, set.find(';'));
    r = browse("/sandbox/ui/login", lc, "POST", "csrf=" + lc.substr(lc.find('=') + 1) + "&api_key=wrong");
    EXPECT_EQ(r.status, 401);
    EXPECT_EQ(r.body.find("wrong"), std::string::npos);

    const std::string session = login(key);
    ASSERT_FALSE(session.empty());
    r = browse("/sandbox/ui/outbox", session);
    ASSERT_EQ(r.status, 200) << r.body;
    expect_escaped(r, "outbox");
    const std::string csrf = csrf_of(r.body);
    const auto before = api("GET", "/sandbox/outbox", nullptr, 200).at("emails").as_array().size();
    ASSERT_GT(before, 0u);
    // A post without the session's token, or with another, is refused and changes nothing.
    EXPECT_EQ(browse("/sandbox/ui/outbox/clear", session, "POST", "").status, 403);
    EXPECT_EQ(browse("/sandbox/ui/outbox/clear", session, "POST", "csrf=" + std::string(64, 'a')).status, 403);
    EXPECT_EQ(browse("/sandbox/ui/clock", session, "POST", "advance_seconds=60").status, 403);
    EXPECT_EQ(api("GET", "/sandbox/outbox", nullptr, 200).at("emails").as_array().size(), before);
    EXPECT_EQ(api("GET", "/sandbox/clock", nullptr, 200).at("offset_ms").as_int64(), 0);

    // The clock is shown and moved from the page.
    r = browse("/sandbox/ui/", session);
    EXPECT_NE(r.body.find("2026-11-22 10:00 UTC"), std::string::npos);
    r = browse("/sandbox/ui/clock", session, "POST", "csrf=" + csrf + "&advance_seconds=3600");
    EXPECT_EQ(r.status, 303) << r.body;
    EXPECT_EQ(api("GET", "/sandbox/clock", nullptr, 200).at("offset_ms").as_int64(), 3600000);
    EXPECT_NE(browse("/sandbox/ui/", session).body.find("2026-11-22 11:00 UTC"), std::string::npos);
    EXPECT_EQ(browse("/sandbox/ui/clock", session, "POST", "csrf=" + csrf + "&advance_seconds=-1").status, 422);
    EXPECT_EQ(browse("/sandbox/ui/clock", session, "POST", "csrf=" + csrf + "&advance_seconds=1e300").status, 422);

    r = browse("/sandbox/ui/outbox/clear", session, "POST", "csrf=" + csrf);
    EXPECT_EQ(r.status, 303);
    EXPECT_TRUE(api("GET", "/sandbox/outbox", nullptr, 200).at("emails").as_array().empty());

    // Logging out ends the session.
    EXPECT_EQ(browse("/sandbox/ui/logout", session, "POST", "csrf=" + csrf).status, 303);
    EXPECT_EQ(browse("/sandbox/ui/outbox", session).status, 303);
    (void)f;
}

TEST_F(pages_test, a_session_shows_its_own_store_only)
{
    const fixture f = build();
    const auto made = api("POST", "/sandbox/stores", json::object{{"options", json::array{"--seed-orders", "2"}}}, 201);
    const std::string other_key(made.at("store").at("api_key").as_string());
    const std::string other = login(other_key);
    for (const char* p : {"/sandbox/ui/", "/sandbox/ui/outbox", "/sandbox/ui/assets", "/sandbox/ui/products",
                          "/sandbox/ui/orders"}) {
        const response r = browse(p, other);
        ASSERT_EQ(r.status, 200) << p;
        EXPECT_EQ(r.body.find("script"), std::string::npos) << p;  // the default store's names
        EXPECT_EQ(r.body.find(f.paid), std::string::npos) << p;
        EXPECT_EQ(r.body.find(other_key), std::string::npos) << p;
    }
    EXPECT_NE(browse("/sandbox/ui/orders", other).body.find("2 orders"), std::string::npos);
    // Its store deleted, the session ends.
    api("DELETE", "/sandbox/stores/" + std::string(made.at("store").at("id").as_string()), nullptr, 204);
    EXPECT_EQ(browse("/sandbox/ui/", other).status, 303);
}

TEST_F(pages_test, markup_quotes_and_right_to_left_text_stay_text_on_every_page)
{
    const fixture f = build();
    now += std::chrono::seconds(61);
    for (const auto& o : {f.paid, f.preorder, f.refunded})
        expect_escaped(browse(page_url(o)), "download page " + o);
    const std::string session = login(key);
    const std::vector<std::string> pages = {"/sandbox/ui/", "/sandbox/ui/outbox", "/sandbox/ui/assets",
                                            "/sandbox/ui/products", "/sandbox/ui/orders"};
    for (const auto& p : pages) {
        const response r = browse(p, session);
        ASSERT_EQ(r.status, 200) << p;
        expect_escaped(r, p);
    }
    const auto emails = api("GET", "/sandbox/outbox", nullptr, 200).at("emails").as_array();
    for (std::size_t i = 1; i <= emails.size(); ++i) {
        const response r = browse("/sandbox/ui/outbox/" + std::to_string(i), session);
        ASSERT_EQ(r.status, 200);
        expect_escaped(r, "email " + std::to_string(i));
        // The body's link is a link, to the order's page.
        const std::string url(emails.at(i - 1).at("download_page_url").as_string());
        EXPECT_NE(r.body.find("<a href=\"" + url + "\">" + url + "</a>"), std::string::npos);
    }
    // Error pages too.
    expect_escaped(browse("/sandbox/ui/outbox/999", session), "missing email");
}

TEST(html, linkify_only_links_http_urls_and_escapes_them)
{
    EXPECT_EQ(dd_sandbox::html::linkify("see http://a.test/x?a=1&b=\"2\" <b>"),
              "see <a href=\"http://a.test/x?a=1&amp;b=\">http://a.test/x?a=1&amp;b=</a>&quot;2&quot; &lt;b&gt;");
    EXPECT_EQ(dd_sandbox::html::linkify("javascript:alert(1) https://b.test"),
              "javascript:alert(1) <a href=\"https://b.test\">https://b.test</a>");
    EXPECT_EQ(dd_sandbox::html::escape(std::string("a\x01\xff", 3)), "a\xEF\xBF\xBD\xEF\xBF\xBD");
}
