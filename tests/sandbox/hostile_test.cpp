// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The sandbox facing hostile clients: every test drives the real
// digital-delivery-sandbox executable over HTTP (the program's shared process,
// or a process of its own when a process flag is needed), with raw sockets
// where the request itself is what is hostile.
#include "sandbox_process.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace json = boost::json;
using dd_test::sandbox_process;

// Strict UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
bool valid_utf8(std::string_view s)
{
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t n = 0;
        std::uint32_t cp = 0;
        if (c < 0x80) {
            ++i;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            n = 1;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            n = 2;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 3;
            cp = c & 0x07;
        } else {
            return false;
        }
        for (std::size_t k = 1; k <= n; ++k) {
            if (i + k >= s.size())
                return false;
            const auto cc = static_cast<unsigned char>(s[i + k]);
            if ((cc & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (cc & 0x3F);
        }
        if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += n + 1;
    }
    return true;
}

// The JSON of an answer; a failure (and null) when it is not valid UTF-8 or not JSON.
json::value json_of(const std::string& body)
{
    EXPECT_TRUE(valid_utf8(body)) << "invalid UTF-8 in: " << body;
    boost::system::error_code ec;
    json::value v = json::parse(body, ec);
    EXPECT_FALSE(ec) << ec.message() << ": " << body;
    return ec ? json::value(nullptr) : v;
}

std::string str(const json::value& v)
{
    return v.is_string() ? std::string(v.get_string()) : std::string("<not a string: ") + json::serialize(v) + ">";
}

int port_of(const std::string& origin)
{
    return std::stoi(origin.substr(origin.rfind(':') + 1));
}

// One raw keep-alive connection to 127.0.0.1:port (receive timeout 10 s, a
// safety net: no test waits for it to expire on its expected path).
class connection {
public:
    explicit connection(int port)
    {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(static_cast<std::uint16_t>(port));
        ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
        if (fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
            ::close(fd_);
            fd_ = -1;
        }
        if (fd_ >= 0) {
            timeval tv{10, 0};
            ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
            ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        }
    }
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;
    connection(connection&& o) noexcept : fd_(o.fd_), pending_(std::move(o.pending_)) { o.fd_ = -1; }
    ~connection() { close(); }
    void close()
    {
        if (fd_ >= 0)
            ::close(fd_);
        fd_ = -1;
    }
    bool ok() const { return fd_ >= 0; }

    bool send(const std::string& s)
    {
        for (std::size_t off = 0; off < s.size();) {
            const auto n = ::send(fd_, s.data() + off, s.size() - off, MSG_NOSIGNAL);
            if (n <= 0)
                return false;
            off += static_cast<std::size_t>(n);
        }
        return true;
    }
    // Whether something (an answer or the close) can be read now.
    bool readable()
    {
        if (!pending_.empty())
            return true;
        pollfd p{fd_, POLLIN, 0};
        return ::poll(&p, 1, 0) > 0;
    }

    struct answer {
        int status = 0;  // 0: the connection ended without a complete answer
        std::string head, body;
        bool has(std::string_view header_line) const { return head.find(header_line) != std::string::npos; }
    };
    // One answer with a Content-Length body (all of the sandbox's have one).
    answer read()
    {
        for (;;) {
            const auto end = pending_.find("\r\n\r\n");
            if (end != std::string::npos) {
                std::size_t len = 0;
                const std::string head = pending_.substr(0, end + 2);
                if (const auto cl = head.find("\r\nContent-Length: "); cl != std::string::npos)
                    len = std::stoul(head.substr(cl + 18));
                if (pending_.size() >= end + 4 + len) {
                    answer a;
                    a.head = head;
                    a.body = pending_.substr(end + 4, len);
                    a.status = std::stoi(head.substr(head.find(' ') + 1));
                    pending_.erase(0, end + 4 + len);
                    return a;
                }
            }
            char buf[8192];
            const auto n = ::recv(fd_, buf, sizeof buf, 0);
            if (n <= 0)
                return {};
            pending_.append(buf, static_cast<std::size_t>(n));
        }
    }
    // Whether the server closed the connection (after what was read).
    bool closed_by_peer()
    {
        char c;
        return pending_.empty() && ::recv(fd_, &c, 1, 0) == 0;
    }
    answer request(const std::string& raw)
    {
        if (!send(raw))
            return {};
        return read();
    }
    answer get(const std::string& target, const std::string& api_key)
    {
        return request("GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Auth-Token: " + api_key + "\r\n\r\n");
    }

private:
    int fd_ = -1;
    std::string pending_;
};

} // namespace

// --- 1. page arithmetic ------------------------------------------------------------
// (page - 1) * per_page overflowed: 2^57 * 128 wraps to 0, so page
// 144115188075855873 answered the first page; INT64_MAX died under UBSan.
TEST(SandboxHostile, HugePagesAnswerAnEmptyPageWithoutOverflow)
{
    auto& sb = sandbox_process::shared();
    const auto store = sb.create_store({"--seed-orders", "30", "--no-rate-limit"});
    std::string asset_id;
    for (int i = 0; i < 3; ++i) {
        const auto r = sb.request("POST", "/api/v1/external/assets",
                                  R"({"asset":{"type":"licence","name":"Key )" + std::to_string(i) + R"("}})",
                                  store.api_key);
        ASSERT_EQ(r.status, 201) << r.body;
        asset_id = str(json_of(r.body).at("asset").at("id"));
    }
    const auto dp = sb.request("POST", "/api/v1/external/digital_products",
                               R"({"digital_product":{"store_product_id":7500000001111,"asset_ids":[")" + asset_id + R"("]}})",
                               store.api_key);
    ASSERT_EQ(dp.status, 201) << dp.body;

    struct list {
        const char* path;
        const char* key;
        std::int64_t total;
        std::vector<std::int64_t> per_pages;
    };
    const list lists[] = {{"/orders", "orders", 30, {1, 25, 64, 100, 128, 250}},
                          {"/assets", "assets", 3, {1, 25, 64, 100, 128, 250}},
                          {"/digital_products", "digital_products", 1, {1, 25, 64, 100}}};
    const char* pages[] = {"9223372036854775807",   // INT64_MAX
                           "144115188075855873",    // 2^57 + 1: * 128 wraps to 0
                           "288230376151711745",    // 2^58 + 1: * 64 wraps to 0
                           "4611686018427387905",   // 2^62 + 1: * 100 wraps to 0
                           "4611686018427387904",   // 2^62
                           "1000000000000000000"};
    for (const auto& l : lists) {
        for (const auto per_page : l.per_pages) {
            for (const char* page : pages) {
                const std::string target = std::string("/api/v1/external") + l.path + "?page=" + page +
                                           "&per_page=" + std::to_string(per_page);
                const auto r = sb.request("GET", target, {}, store.api_key);
                ASSERT_EQ(r.status, 200) << target << ": " << r.body;
                const auto v = json_of(r.body);
                EXPECT_TRUE(v.at(l.key).as_array().empty()) << target << ": " << r.body;
                const auto& pg = v.at("pagination");
                EXPECT_EQ(json::serialize(pg.at("current_page")), page) << target;
                EXPECT_EQ(pg.at("per_page").as_int64(), per_page) << target;
                EXPECT_EQ(pg.at("total_count").as_int64(), l.total) << target;
                EXPECT_EQ(pg.at("total_pages").as_int64(), (l.total + per_page - 1) / per_page) << target;
            }
        }
        // the last page and the one after it
        const std::string base = std::string("/api/v1/external") + l.path + "?per_page=2&page=";
        const auto last = (l.total + 1) / 2;
        auto r = sb.request("GET", base + std::to_string(last), {}, store.api_key);
        EXPECT_EQ(json_of(r.body).at(l.key).as_array().size(), static_cast<std::size_t>(l.total - 2 * (last - 1))) << r.body;
        r = sb.request("GET", base + std::to_string(last + 1), {}, store.api_key);
        EXPECT_TRUE(json_of(r.body).at(l.key).as_array().empty()) << r.body;
    }
}

// parse_int64 overflowed on 19-digit values (9999999999999999999 read as a
// negative number: "page must be at least 1").
TEST(SandboxHostile, PageValuesOutsideTheRangeAreRefusedClearly)
{
    auto& sb = sandbox_process::shared();
    const auto store = sb.create_store({"--seed-orders", "3", "--no-rate-limit"});
    struct refusal {
        std::string query;
        std::vector<std::string> errors;
    };
    const std::vector<refusal> cases = {
        {"page=0", {"page must be at least 1"}},
        {"page=-1", {"page must be at least 1"}},
        {"page=-9223372036854775808", {"page must be at least 1"}},
        {"page=9223372036854775808", {"page is invalid"}},    // INT64_MAX + 1
        {"page=9999999999999999999", {"page is invalid"}},
        {"page=18446744073709551617", {"page is invalid"}},
        {"page=-9223372036854775809", {"page is invalid"}},
        {"page=99999999999999999999999999", {"page is invalid"}},
        {"page=abc", {"page is invalid"}},
        {"page=1.5", {"page is invalid"}},
        {"page=1e3", {"page is invalid"}},
        {"page=0x10", {"page is invalid"}},
        {"page=%205", {"page is invalid"}},
        {"page=-", {"page is invalid"}},
        {"per_page=0", {"per_page must be between 1 and 250"}},
        {"per_page=-5", {"per_page must be between 1 and 250"}},
        {"per_page=251", {"per_page must be between 1 and 250"}},
        {"per_page=9223372036854775807", {"per_page must be between 1 and 250"}},
        {"per_page=9999999999999999999", {"per_page is invalid"}},
        {"per_page=ten", {"per_page is invalid"}},
        {"page=0&per_page=9999999999999999999", {"page must be at least 1", "per_page is invalid"}},
        {"store_product_id=9999999999999999999", {"store_product_id is invalid"}},
    };
    for (const auto& c : cases) {
        const auto r = sb.request("GET", "/api/v1/external/orders?" + c.query, {}, store.api_key);
        EXPECT_EQ(r.status, 422) << c.query << ": " << r.body;
        json::array expected;
        for (const auto& e : c.errors)
            expected.emplace_back(e);
        EXPECT_EQ(r.body, json::serialize(json::object{{"errors", expected}})) << c.query;
    }
    // the digital products' maximum, and an accepted extreme
    auto r = sb.request("GET", "/api/v1/external/digital_products?per_page=9223372036854775807", {}, store.api_key);
    EXPECT_EQ(r.body, R"({"errors":["per_page must be between 1 and 100"]})");
    r = sb.request("GET", "/api/v1/external/assets?page=%2B1&per_page=250", {}, store.api_key);
    EXPECT_EQ(r.status, 200) << r.body;
}

// --- 2. never invalid UTF-8 --------------------------------------------------------
// An external asset's filename is the percent-decoded last segment of its URL:
// "%ff" became a raw 0xFF byte in every later answer naming the asset (the
// asset, lists, digital products, the downloads of an order).
TEST(SandboxHostile, PercentEncodedBytesInAnExternalUrlNeverMakeInvalidUtf8)
{
    auto& sb = sandbox_process::shared();
    const auto store = sb.create_store({"--seed-orders", "1", "--no-rate-limit"});
    const std::string api = "/api/v1/external";
    struct case_ {
        std::string url, filename;
    };
    const std::vector<case_> cases = {
        {"https://example.com/files/%ff.pdf", "%ff.pdf"},               // not UTF-8 once decoded
        {"https://example.com/files/a%C0%AFb.pdf", "a%C0%AFb.pdf"},     // overlong '/'
        {"https://example.com/files/%ED%A0%80.pdf", "%ED%A0%80.pdf"},   // a surrogate
        {"https://example.com/files/%F4%90%80%80.pdf", "%F4%90%80%80.pdf"},  // above U+10FFFF
        {"https://example.com/files/x%e2%82.pdf", "x%e2%82.pdf"},       // truncated sequence
        {"https://example.com/files/line%0abreak.pdf", "line%0abreak.pdf"},  // a control character
        {"https://example.com/files/%C3%A9t%C3%A9.pdf", "\xC3\xA9t\xC3\xA9.pdf"},  // valid: decoded
        {"https://example.com/files/plain%20name.pdf", "plain name.pdf"},
    };
    std::vector<std::string> ids;
    for (const auto& c : cases) {
        const auto r = sb.request("POST", api + "/assets",
                                  json::serialize(json::object{{"asset", json::object{{"type", "external"},
                                                                                      {"external_url", c.url}}}}),
                                  store.api_key);
        ASSERT_EQ(r.status, 201) << c.url << ": " << r.body;
        const auto v = json_of(r.body);
        EXPECT_EQ(str(v.at("asset").at("filename")), c.filename) << c.url;
        EXPECT_EQ(str(v.at("asset").at("external_url")), c.url);
        ids.push_back(str(v.at("asset").at("id")));
        const auto again = sb.request("GET", api + "/assets/" + ids.back(), {}, store.api_key);
        EXPECT_EQ(str(json_of(again.body).at("asset").at("filename")), c.filename) << again.body;
    }
    // PATCH derives the filename the same way
    auto r = sb.request("PATCH", api + "/assets/" + ids[7],
                        R"({"asset":{"external_url":"https://example.com/other/%fe%ff"}})", store.api_key);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(str(json_of(r.body).at("asset").at("filename")), "%fe%ff");

    json::array id_list;
    for (const auto& id : ids)
        id_list.emplace_back(id);
    r = sb.request("GET", api + "/assets?per_page=250", {}, store.api_key);
    EXPECT_EQ(json_of(r.body).at("assets").as_array().size(), ids.size());
    r = sb.request("POST", api + "/digital_products",
                   json::serialize(json::object{{"digital_product", json::object{{"store_product_id", 7500000002222},
                                                                                  {"asset_ids", id_list}}}}),
                   store.api_key);
    ASSERT_EQ(r.status, 201) << r.body;
    json_of(r.body);
    r = sb.request("GET", api + "/digital_products", {}, store.api_key);
    json_of(r.body);
    r = sb.request("POST", "/sandbox/purchases", R"({"store_product_id": 7500000002222, "email": "b@example.com"})",
                   store.api_key);
    ASSERT_EQ(r.status, 201) << r.body;
    const std::string order_id = str(json_of(r.body).at("order").at("id"));
    r = sb.request("POST", api + "/orders/" + order_id + "/attach_assets",
                   json::serialize(json::object{{"asset_ids", json::array{id_list[0]}}}), store.api_key);
    ASSERT_EQ(r.status, 200) << r.body;
    json_of(r.body);
    r = sb.request("GET", api + "/orders/" + order_id + "/downloads", {}, store.api_key);
    ASSERT_EQ(r.status, 200) << r.body;
    const auto downloads = json_of(r.body).at("downloads").as_array();
    ASSERT_EQ(downloads.size(), ids.size() + 1);
    EXPECT_EQ(str(downloads[0].at("file_name")), "%ff.pdf");
    EXPECT_EQ(str(downloads[0].at("download_url")), cases[0].url);  // the URL as given
    EXPECT_EQ(str(downloads.back().at("file_name")), "%ff.pdf");
}

// Raw bytes that are not UTF-8 in a request line or a header are never echoed
// as such: the storage's XML errors (Resource, CanonicalRequest) and the JSON
// answers.
TEST(SandboxHostile, RawNonUtf8BytesInARequestAreNeverEchoed)
{
    auto& sb = sandbox_process::shared();
    const auto store = sb.create_store({"--seed-orders", "1", "--no-rate-limit"});
    const int port = port_of(sb.origin());
    // A presigned-looking GET (not expired, so the signature is checked) whose
    // signed header carries 0xFF: SignatureDoesNotMatch shows the canonical request.
    const std::string query =
        "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=SANDBOXAKIDEXAMPLE01%2F20991231%2Fus-east-1%2Fs3%2F"
        "aws4_request&X-Amz-Date=20991231T000000Z&X-Amz-Expires=300&X-Amz-SignedHeaders=host%3Bx-odd&"
        "X-Amz-Signature=00";
    for (const std::string& prefix : {std::string(), "/stores/" + store.id}) {
        connection c(port);
        ASSERT_TRUE(c.ok());
        const auto a = c.request("GET " + prefix + "/storage/sandbox-assets/downloads/x/%ff.pdf?" + query +
                                 " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Odd: caf\xE9 \xFF\xFE\r\n\r\n");
        EXPECT_EQ(a.status, 403) << a.head << a.body;
        EXPECT_NE(a.body.find("<Code>SignatureDoesNotMatch</Code>"), std::string::npos) << a.body;
        EXPECT_NE(a.body.find("x-odd:caf"), std::string::npos) << a.body;
        EXPECT_TRUE(valid_utf8(a.body)) << a.body;
    }
    {   // a raw 0xFF in the path of a storage request
        connection c(port);
        ASSERT_TRUE(c.ok());
        const auto a = c.request("GET /storage/sandbox-assets/downloads/\xFF\xFE.pdf HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        EXPECT_NE(a.status, 0);
        EXPECT_TRUE(valid_utf8(a.body)) << a.body;
        connection d(port);
        const auto b = d.request("GET /stores/\xFF/storage/sandbox-assets/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        EXPECT_NE(b.status, 0);
        EXPECT_TRUE(valid_utf8(b.body)) << b.body;
    }
    // JSON bodies that are not UTF-8 are malformed (400), never stored.
    const auto r = sb.request("POST", "/api/v1/external/assets",
                              "{\"asset\":{\"type\":\"licence\",\"name\":\"caf\xE9\"}}", store.api_key);
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(r.body, R"({"error":"Malformed JSON body"})");
    const auto lone = sb.request("POST", "/api/v1/external/assets",
                                 R"({"asset":{"type":"licence","name":"\udcff"}})", store.api_key);
    EXPECT_EQ(lone.status, 400) << lone.body;
}

// --- 3. out of file descriptors -----------------------------------------------------
// When accept() failed with EMFILE the listener retried at once, forever: the
// pending connection kept the socket readable, so the sandbox spun at 100% CPU
// until a descriptor was freed. Now it waits (100 ms, or until a connection of
// its own closes) before accepting again. GET /sandbox/server counts the failed
// accepts and the waits: every failure is followed by a wait (the old loop would
// show failures without waits), whatever the time the test takes.
TEST(SandboxHostile, OutOfFileDescriptorsBacksOffAndServesAgain)
{
    sandbox_process sb({"--max-open-files", "40", "--no-rate-limit", "--seed-orders", "1"});
    const int port = port_of(sb.origin());
    connection control(port);
    ASSERT_TRUE(control.ok());
    auto server = [&] {
        const auto a = control.get("/sandbox/server", sb.api_key());
        EXPECT_EQ(a.status, 200) << a.head << a.body;
        return json_of(a.body);
    };
    auto v = server();
    EXPECT_EQ(v.at("max_open_files").as_int64(), 40);
    EXPECT_EQ(v.at("accept_errors").as_int64(), 0);
    EXPECT_EQ(v.at("accepting").as_bool(), true);

    // Open connections, each with a request, until one is not accepted: either
    // its answer comes, or the sandbox is full (an accept failed while it had
    // only the connections before this one; Linux fails accept() with EMFILE
    // whenever the descriptor table is full, a connection pending or not).
    std::vector<connection> held;
    std::optional<connection> waiting;
    for (int i = 0; i < 100 && !waiting; ++i) {
        connection c(port);  // the kernel completes the handshake (listen backlog)
        ASSERT_TRUE(c.ok());
        ASSERT_TRUE(c.send("GET /sandbox/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
        for (int k = 0;; ++k) {
            ASSERT_LT(k, 100000) << "connection " << i << ": neither accepted nor refused";
            if (c.readable()) {
                const auto a = c.read();
                ASSERT_EQ(a.status, 200) << a.head;
                held.push_back(std::move(c));
                break;
            }
            const auto s = server();
            if (s.at("accept_errors").as_int64() > 0 &&
                s.at("connections").as_int64() == static_cast<std::int64_t>(held.size()) + 1) {
                waiting.emplace(std::move(c));
                break;
            }
        }
    }
    ASSERT_TRUE(waiting) << "the sandbox never ran out of descriptors";
    EXPECT_GT(held.size(), 10u);

    // Out of descriptors: the connections it has are still served, and it does
    // not retry accept() in a loop.
    const auto before = server();
    EXPECT_EQ(before.at("accepting").as_bool(), false);
    EXPECT_GE(before.at("accept_waits").as_int64(), 1);
    for (int i = 0; i < 200; ++i)
        ASSERT_EQ(control.get("/sandbox/health", sb.api_key()).status, 200);
    const auto after = server();
    const auto failures = after.at("accept_errors").as_int64() - before.at("accept_errors").as_int64();
    const auto waits = after.at("accept_waits").as_int64() - before.at("accept_waits").as_int64();
    EXPECT_LE(failures, waits + 1) << "failed accepts retried without waiting";  // +1: one may be in flight
    EXPECT_FALSE(waiting->readable());  // not served yet

    // Descriptors free again: the waiting connection is served, then new ones.
    held.clear();
    const auto a = waiting->read();
    EXPECT_EQ(a.status, 200) << a.head;
    EXPECT_EQ(a.body, R"({"status":"ok","service":"digital-delivery-sandbox"})");
    EXPECT_EQ(sb.request("GET", "/sandbox/health").status, 200);
    const auto r = sb.request("GET", "/api/v1/external/orders");
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(server().at("accepting").as_bool(), true);
}


TEST(SandboxHostile, MaxOpenFilesIsAProcessFlagCheckedAtStart)
{
    EXPECT_THROW(sandbox_process({"--max-open-files", "3"}), std::runtime_error);  // exits with status 2
    EXPECT_THROW(sandbox_process({"--max-open-files", "abc"}), std::runtime_error);
    auto& sb = sandbox_process::shared();
    try {
        sb.create_store({"--max-open-files", "64"});
        ADD_FAILURE() << "a process flag was taken as a store option";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("--max-open-files configures the whole process"), std::string::npos)
            << e.what();
    }
    // without the flag: the limit the process was started with
    const auto a = sb.request("GET", "/sandbox/server");
    ASSERT_EQ(a.status, 200) << a.body;
    EXPECT_GT(json_of(a.body).at("max_open_files").as_int64(), 40);
    EXPECT_EQ(sb.request("GET", "/sandbox/server", {}, "wrong-key").status, 401);
}

// --- 4. huge clock advances --------------------------------------------------------
// advance_seconds 1e300 was rounded with llround (out of range) and added to the
// int64 offset: the clock jumped to year -292274998 (signed overflow, UB).
TEST(SandboxHostile, HugeClockAdvancesAreRefusedAndTheClockStaysValid)
{
    auto& sb = sandbox_process::shared();
    const auto store = sb.create_store({"--seed-orders", "2", "--no-rate-limit", "--download-days", "30"});
    const std::string too_far =
        R"({"errors":["advance_seconds is too large: the sandbox clock cannot go past 9999-12-31T23:59:59.999Z"]})";
    for (const char* n : {"1e300", "1.7976931348623157e308", "9223372036854775807", "18446744073709551615",
                          "9223372036854775.807", "9.3e15", "253402300800"}) {
        const auto r = sb.request("POST", "/sandbox/clock", std::string(R"({"advance_seconds": )") + n + "}",
                                  store.api_key);
        EXPECT_EQ(r.status, 422) << n << ": " << r.body;
        EXPECT_EQ(r.body, too_far) << n;
    }
    auto c = sb.clock(store);
    EXPECT_EQ(c.offset_ms, 0);
    EXPECT_EQ(c.now.substr(0, 2), "20") << c.now;
    for (const char* bad : {R"({"advance_seconds": -1})", R"({"advance_seconds": "1"})", R"({})", R"([1])"}) {
        const auto r = sb.request("POST", "/sandbox/clock", bad, store.api_key);
        EXPECT_EQ(r.body, R"({"errors":["advance_seconds must be a non-negative number"]})") << bad;
    }

    // Up to the last representable millisecond (less a margin for the wall
    // clock moving on during the test), then not one step further.
    const std::int64_t end_ms = 253402300799999;  // 9999-12-31T23:59:59.999Z
    const std::int64_t wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch()).count();
    const std::int64_t jump_s = (end_ms - wall_ms) / 1000 - 3600;
    auto r = sb.request("POST", "/sandbox/clock", R"({"advance_seconds": )" + std::to_string(jump_s) + "}",
                        store.api_key);
    ASSERT_EQ(r.status, 200) << r.body;
    auto v = json_of(r.body);
    EXPECT_EQ(str(v.at("now")).substr(0, 13), "9999-12-31T22") << r.body;
    EXPECT_EQ(v.at("offset_ms").as_int64(), jump_s * 1000);
    r = sb.request("POST", "/sandbox/clock", R"({"advance_seconds": 7200})", store.api_key);
    EXPECT_EQ(r.body, too_far);
    EXPECT_EQ(sb.clock(store).offset_ms, jump_s * 1000);
    r = sb.request("POST", "/sandbox/clock", R"({"advance_seconds": 0.5})", store.api_key);
    EXPECT_EQ(r.status, 200) << r.body;

    // The store still answers with valid times at the end of its clock.
    r = sb.request("POST", "/api/v1/external/assets", R"({"asset":{"type":"licence","name":"K"}})", store.api_key);
    ASSERT_EQ(r.status, 201) << r.body;
    const std::string asset_id = str(json_of(r.body).at("asset").at("id"));
    EXPECT_EQ(str(json_of(r.body).at("asset").at("created_at")).substr(0, 10), "9999-12-31");
    r = sb.request("POST", "/api/v1/external/digital_products",
                   R"({"digital_product":{"store_product_id":7500000003333,"asset_ids":[")" + asset_id + R"("]}})",
                   store.api_key);
    ASSERT_EQ(r.status, 201) << r.body;
    r = sb.request("POST", "/sandbox/purchases", R"({"store_product_id": 7500000003333, "email": "b@example.com"})",
                   store.api_key);
    ASSERT_EQ(r.status, 201) << r.body;
    const std::string order_id = str(json_of(r.body).at("order").at("id"));
    r = sb.request("GET", "/api/v1/external/orders/" + order_id + "/downloads", {}, store.api_key);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(json_of(r.body).at("downloads").as_array().at(0).at("download_expired").as_bool(), false);
    r = sb.request("GET", "/api/v1/external/orders?sort=created_at_asc&per_page=1", {}, store.api_key);
    EXPECT_EQ(r.status, 200) << r.body;
}

// Store flags that are added to times are bounded too (POST /sandbox/stores
// takes them from clients): --download-days 9223372036854775807 overflowed in
// "created_at + download_days days".
TEST(SandboxHostile, TimeFlagsOfAStoreAreBounded)
{
    auto& sb = sandbox_process::shared();
    for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
             {"--download-days", "9223372036854775807"},
             {"--download-days", "3650001"},
             {"--watermark-delay-ms", "9223372036854775807"},
             {"--watermark-delay-ms", "315360000000001"}}) {
        try {
            sb.create_store({flag, value});
            ADD_FAILURE() << flag << " " << value << " was accepted";
        } catch (const std::runtime_error& e) {
            EXPECT_NE(std::string(e.what()).find("HTTP 422"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("invalid value for " + flag + ": " + value), std::string::npos)
                << e.what();
        }
    }
    // the largest values work, also at the end of the clock
    const auto store = sb.create_store({"--seed-orders", "3", "--no-rate-limit", "--download-days", "3650000",
                                        "--watermark-delay-ms", "315360000000000"});
    auto r = sb.request("GET", "/sandbox/clock", {}, store.api_key);
    const std::int64_t end_ms = 253402300799999;
    const std::int64_t wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch()).count();
    r = sb.request("POST", "/sandbox/clock",
                   R"({"advance_seconds": )" + std::to_string((end_ms - wall_ms) / 1000 - 3600) + "}", store.api_key);
    ASSERT_EQ(r.status, 200) << r.body;
    r = sb.request("POST", "/sandbox/purchases", R"({"store_product_id": 7500000001111, "email": "b@example.com"})",
                   store.api_key);
    ASSERT_EQ(r.status, 201) << r.body;
    r = sb.request("GET", "/api/v1/external/orders?per_page=250", {}, store.api_key);
    ASSERT_EQ(r.status, 200) << r.body;
    const auto orders = json_of(r.body);
    for (const auto& o : orders.at("orders").as_array()) {
        const auto d = sb.request("GET", "/api/v1/external/orders/" + str(o.at("id")) + "/downloads", {}, store.api_key);
        EXPECT_EQ(d.status, 200) << d.body;
        json_of(d.body);
    }
}

// --- 5. Host header (RFC 9112 section 3.2) -----------------------------------------------
// "A server MUST respond with a 400 (Bad Request) status code to any HTTP/1.1
// request message that lacks a Host header field and to any request message that
// contains more than one Host header field line or a Host header field with an
// invalid field value." Two Host fields were accepted (the first one used).
TEST(SandboxHostile, MoreThanOneHostFieldIs400)
{
    auto& sb = sandbox_process::shared();
    const auto store = sb.create_store({"--seed-orders", "2", "--no-rate-limit"});
    const int port = port_of(sb.origin());
    struct case_ {
        std::string request;
        std::string error;
    };
    const std::string key = "X-Auth-Token: " + store.api_key + "\r\n";
    const std::string purchase = R"({"store_product_id": 7500000001111})";
    const std::vector<case_> cases = {
        {"GET /sandbox/health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "more than one Host header field"},
        {"GET /sandbox/health HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n", "more than one Host header field"},
        {"GET /sandbox/health HTTP/1.0\r\nHost: a\r\nHOST: a\r\n\r\n", "more than one Host header field"},
        {"GET /api/v1/external/orders HTTP/1.1\r\nHost: 127.0.0.1\r\n" + key + "Host: evil.example\r\n\r\n",
         "more than one Host header field"},
        {"POST /sandbox/purchases HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: 127.0.0.1\r\n" + key +
             "Content-Type: application/json\r\nContent-Length: " + std::to_string(purchase.size()) + "\r\n\r\n" + purchase,
         "more than one Host header field"},
        {"PUT /storage/sandbox-assets/assets/x/y/z.pdf HTTP/1.1\r\nHost: a\r\nHost: b\r\nContent-Length: 4\r\n\r\nabcd",
         "more than one Host header field"},
        {"GET /sandbox/health HTTP/1.1\r\n\r\n", "missing Host header field"},
        {"GET /sandbox/health HTTP/1.1\r\nHost: a b\r\n\r\n", "invalid Host header field"},
        {"GET /sandbox/health HTTP/1.1\r\nHost: user@host\r\n\r\n", "invalid Host header field"},
        {"GET /sandbox/health HTTP/1.1\r\nHost: a/b\r\n\r\n", "invalid Host header field"},
    };
    for (const auto& c : cases) {
        connection conn(port);
        ASSERT_TRUE(conn.ok());
        const auto a = conn.request(c.request);
        EXPECT_EQ(a.status, 400) << c.request << "\n" << a.head << a.body;
        EXPECT_EQ(a.body, R"({"error":"Bad request: )" + c.error + "\"}") << c.request;
        if (a.head.starts_with("HTTP/1.1")) {  // HTTP/1.0 closes by default
            EXPECT_TRUE(a.has("Connection: close")) << a.head;
        }
        EXPECT_TRUE(conn.closed_by_peer()) << c.request;
    }
    // the refused purchase did not happen
    auto r = sb.request("GET", "/api/v1/external/orders", {}, store.api_key);
    EXPECT_EQ(json_of(r.body).at("pagination").at("total_count").as_int64(), 2) << r.body;

    // accepted: one Host (also empty, with a port, an IPv6 literal); HTTP/1.0 without one
    for (const char* ok : {"GET /sandbox/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                           "GET /sandbox/health HTTP/1.1\r\nHost: localhost:8080\r\n\r\n",
                           "GET /sandbox/health HTTP/1.1\r\nHost: [::1]:80\r\n\r\n",
                           "GET /sandbox/health HTTP/1.1\r\nHost:\r\n\r\n",
                           "GET /sandbox/health HTTP/1.0\r\n\r\n"}) {
        connection conn(port);
        const auto a = conn.request(ok);
        EXPECT_EQ(a.status, 200) << ok << a.head << a.body;
    }
}

// --- 6. PATCH with every field omitted ----------------------------------------------
// The contract: PATCH /assets/{id} "Body: asset (object, required), all fields
// optional ... Response 200: asset. 404 when missing. 422 on validation
// failure." {"asset":{}} was answered 400 "param is missing or the value is
// empty", a status the contract does not declare for it.
TEST(SandboxHostile, PatchWithNoFieldsAnswers200Unchanged)
{
    auto& sb = sandbox_process::shared();
    const auto store = sb.create_store({"--seed-orders", "1", "--no-rate-limit"});
    const std::string api = "/api/v1/external";
    auto r = sb.request("POST", api + "/assets",
                        R"({"asset":{"type":"external","name":"Cover","external_url":"https://x.example/a.png"}})",
                        store.api_key);
    ASSERT_EQ(r.status, 201) << r.body;
    const std::string id = str(json_of(r.body).at("asset").at("id"));
    const auto before = sb.request("GET", api + "/assets/" + id, {}, store.api_key).body;
    sb.advance_clock(store, std::chrono::seconds(10));  // an updated_at change would show
    for (const char* method : {"PATCH", "PUT"}) {
        r = sb.request(method, api + "/assets/" + id, R"({"asset":{}})", store.api_key);
        EXPECT_EQ(r.status, 200) << method << ": " << r.body;
        EXPECT_EQ(r.body, before) << method;
    }
    r = sb.request("PATCH", api + "/assets/" + id, R"({"asset":{},"unknown":1})", store.api_key);
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(sb.request("GET", api + "/assets/" + id, {}, store.api_key).body, before);
    // the same values again change nothing either; a new one does
    r = sb.request("PATCH", api + "/assets/" + id, R"({"asset":{"name":"Cover","watermark_asset":false}})", store.api_key);
    EXPECT_EQ(r.body, before);
    r = sb.request("PATCH", api + "/assets/" + id, R"({"asset":{"name":"New"}})", store.api_key);
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_NE(str(json_of(r.body).at("asset").at("updated_at")), str(json_of(before).at("asset").at("updated_at")));
    EXPECT_EQ(sb.request("PATCH", api + "/assets/00000000-0000-4000-8000-000000000000", R"({"asset":{}})",
                         store.api_key).status, 404);

    // digital products: the same rule ("all fields optional")
    r = sb.request("POST", api + "/digital_products",
                   R"({"digital_product":{"store_product_id":7500000001111,"asset_ids":[")" + id + R"("]}})",
                   store.api_key);
    ASSERT_EQ(r.status, 201) << r.body;
    const std::string dp = str(json_of(r.body).at("digital_product").at("id"));
    const auto dp_before = sb.request("GET", api + "/digital_products/" + dp, {}, store.api_key).body;
    sb.advance_clock(store, std::chrono::seconds(10));
    r = sb.request("PATCH", api + "/digital_products/" + dp, R"({"digital_product":{}})", store.api_key);
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.body, dp_before);

    // POST: an empty object is a validation failure (422, declared), not a 400
    r = sb.request("POST", api + "/assets", R"({"asset":{}})", store.api_key);
    EXPECT_EQ(r.status, 422) << r.body;
    EXPECT_EQ(r.body, R"({"errors":["Type can't be blank","Type is not included in the list"]})");
    r = sb.request("POST", api + "/digital_products", R"({"digital_product":{}})", store.api_key);
    EXPECT_EQ(r.status, 422) << r.body;
    EXPECT_EQ(r.body, R"({"errors":["Store product can't be blank","Asset ids can't be blank"]})");
    r = sb.request("POST", api + "/assets/" + id + "/replace", R"({"asset":{}})", store.api_key);
    EXPECT_EQ(r.status, 422) << r.body;  // not internal
    // a missing or non-object root stays a malformed body (400)
    for (const char* body : {R"({})", R"({"asset":null})", R"({"asset":[]})", R"({"asset":"x"})", ""}) {
        r = sb.request("PATCH", api + "/assets/" + id, body, store.api_key);
        EXPECT_EQ(r.status, 400) << body << ": " << r.body;
        EXPECT_EQ(r.body, R"({"error":"param is missing or the value is empty: asset"})") << body;
    }
}

// --- 7. the storage secret --------------------------------------------------------
// The SigV4 secret of the presigned URLs was "sandbox/secret/<seed>": anyone who
// knew the seed (42 by default) could sign storage URLs, and two processes with
// the same seed accepted each other's URLs. It is random per process unless
// --storage-secret gives one.
namespace {

struct upload_handle {
    std::string target;  // the URL without its origin
    std::string content_type, content_disposition;
};

upload_handle create_internal_asset(sandbox_process& sb, const std::string& key = {})
{
    const auto r = sb.request("POST", "/api/v1/external/assets",
                              R"({"asset":{"type":"internal","filename":"a.txt","byte_size":4,"content_type":"text/plain"}})",
                              key);
    EXPECT_EQ(r.status, 201) << r.body;
    const auto v = json_of(r.body);
    upload_handle h;
    const std::string url = str(v.at("upload").at("url"));
    const std::string origin = "http://sandbox.test";
    EXPECT_EQ(url.rfind(origin + "/", 0), 0u) << url;
    h.target = url.substr(origin.size());
    h.content_type = str(v.at("upload").at("headers").at("Content-Type"));
    h.content_disposition = str(v.at("upload").at("headers").at("Content-Disposition"));
    return h;
}

int put(const sandbox_process& sb, const upload_handle& h)
{
    connection c(port_of(sb.origin()));
    const auto a = c.request("PUT " + h.target + " HTTP/1.1\r\nHost: sandbox.test\r\nContent-Type: " + h.content_type +
                             "\r\nContent-Disposition: " + h.content_disposition +
                             "\r\nContent-Length: 4\r\n\r\nabcd");
    EXPECT_NE(a.status, 0);
    if (a.status != 200) {
        EXPECT_NE(a.body.find("<Code>SignatureDoesNotMatch</Code>"), std::string::npos) << a.body;
    }
    return a.status;
}

} // namespace

TEST(SandboxHostile, StorageSecretIsRandomPerProcess)
{
    // Same seed, same public URL: the same asset ids and object keys in both.
    const std::vector<std::string> flags = {"--seed-orders", "1", "--no-rate-limit", "--public-url", "http://sandbox.test"};
    sandbox_process a(flags), b(flags);
    const auto ha = create_internal_asset(a);
    const auto hb = create_internal_asset(b);
    const auto path = [](const std::string& t) { return t.substr(0, t.find('?')); };
    ASSERT_EQ(path(ha.target), path(hb.target));
    EXPECT_EQ(put(b, ha), 403);  // b does not accept a's URL
    EXPECT_EQ(put(a, hb), 403);
    EXPECT_EQ(put(a, ha), 200);  // each its own
    EXPECT_EQ(put(b, hb), 200);

    // Created stores: random too; one store never accepts another's URL.
    const auto s1 = a.create_store({"--seed", "7"});
    const auto s2 = a.create_store({"--seed", "7"});
    auto h1 = create_internal_asset(a, s1.api_key);
    auto h2 = create_internal_asset(a, s2.api_key);
    ASSERT_EQ(path(h1.target).substr(path(h1.target).find("/storage/")),
              path(h2.target).substr(path(h2.target).find("/storage/")));
    h1.target.replace(0, ("/stores/" + s1.id).size(), "/stores/" + s2.id);
    EXPECT_EQ(put(a, h1), 403);
}

TEST(SandboxHostile, StorageSecretIsDeterministicOnRequest)
{
    const std::vector<std::string> flags = {"--seed-orders", "1", "--no-rate-limit", "--public-url", "http://sandbox.test",
                                            "--storage-secret", "my fixed secret"};
    sandbox_process a(flags), b(flags);
    const auto ha = create_internal_asset(a);
    const auto hb = create_internal_asset(b);
    EXPECT_EQ(put(b, ha), 200);  // the same secret: each accepts the other's URL
    EXPECT_EQ(put(a, hb), 200);

    // a store option too
    const auto s1 = a.create_store({"--seed", "7", "--storage-secret", "shared"});
    const auto s2 = a.create_store({"--seed", "7", "--storage-secret=shared"});
    auto h1 = create_internal_asset(a, s1.api_key);
    create_internal_asset(a, s2.api_key);  // the same asset id and object key in s2
    h1.target.replace(0, ("/stores/" + s1.id).size(), "/stores/" + s2.id);
    EXPECT_EQ(put(a, h1), 200);
    try {
        a.create_store({"--storage-secret", ""});
        ADD_FAILURE() << "an empty secret was accepted";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("--storage-secret must not be empty"), std::string::npos) << e.what();
    }
}
