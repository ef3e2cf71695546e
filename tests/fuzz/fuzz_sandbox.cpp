// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// libFuzzer target: the sandbox's request handling (docs/reliability.md).
//
// Input: the bytes a client sends on one connection, up to 8 requests back
// to back, as the sandbox's front end (tools/sandbox/src/server.cpp) reads
// them, without sockets: Beast's request parser reads a header (32 KiB
// limit); a storage PUT goes to store_registry::begin_upload, its body (what
// the input has of it) to the upload's file, then finish_upload; any other
// request gets its body (1 MiB limit, Content-Length or chunked) and goes to
// store_registry::handle, the sandbox's dispatch (stores, routing, auth, rate
// limit, validation, the API's endpoints, storage GETs, the sandbox's own
// endpoints). Each input starts from a fresh store registry (a default store
// with 3 seeded orders; a fixed storage secret, so signatures are
// reproducible) at a fixed instant; each request comes one second later.
// Checked: every response has a status of 100-599; no header name or value
// carries CR, LF or NUL; a JSON body (Content-Type: application/json) is JSON.
#include "fuzz_check.hpp"

#include "stores.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/json/parse.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace http = boost::beast::http;
namespace asio = boost::asio;
using namespace dd_sandbox;

namespace {

constexpr std::uint64_t api_body_limit = 1024 * 1024;                     // as server.cpp
constexpr std::uint64_t upload_body_limit = 2147483648ULL + 1024 * 1024;  // as server.cpp
constexpr int max_requests = 8;

// A temporary data directory for the whole run, removed at exit.
struct temp_dir
{
    std::string path;
    temp_dir()
    {
        char tmpl[] = "/tmp/dd-fuzz-sandbox-XXXXXX";
        const char* d = ::mkdtemp(tmpl);
        if (!d)
            std::abort();
        path = d;
    }
    ~temp_dir()
    {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

const std::string& data_dir()
{
    static const temp_dir dir;
    return dir.path;
}

void check(const response& r)
{
    DD_FUZZ_CHECK(r.status >= 100 && r.status <= 599);
    bool json = false;
    for (const auto& [k, v] : r.headers)
    {
        DD_FUZZ_CHECK(!k.empty() && k.find_first_of(std::string_view("\r\n\0", 3)) == std::string::npos);
        DD_FUZZ_CHECK(v.find_first_of(std::string_view("\r\n\0", 3)) == std::string::npos);
        if (k == "Content-Type" && v.starts_with("application/json"))
            json = true;
    }
    if (json && r.file_path.empty())
    {
        boost::system::error_code ec;
        (void)boost::json::parse(r.body, ec);
        DD_FUZZ_CHECK(!ec);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    sandbox_config cfg;
    cfg.data_dir = data_dir();
    cfg.public_url = "http://sandbox.test:9000";
    cfg.seed_orders = 3;
    cfg.storage_secret = "fuzz-storage-secret";
    time_point now{std::chrono::milliseconds(1764064800000)};  // 2025-11-25T10:00:00Z
    store_registry stores(cfg, now);

    std::string_view in(reinterpret_cast<const char*>(data), size);
    for (int i = 0; i < max_requests && !in.empty(); ++i)
    {
        now += std::chrono::seconds(1);
        http::request_parser<http::empty_body> hp;
        hp.header_limit(32 * 1024);
        hp.body_limit(upload_body_limit);
        hp.eager(false);
        boost::system::error_code ec;
        const std::size_t used = hp.put(asio::buffer(in.data(), in.size()), ec);
        if (ec || !hp.is_header_done())
            return 0;  // the front end answers 400 and closes
        in.remove_prefix(used);
        const auto& h = hp.get();
        request req;
        req.method = std::string(h.method_string());
        req.target = std::string(h.target());
        for (const auto& f : h)
            req.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
        const bool keep_alive = h.keep_alive();

        if (store_registry::is_storage_upload(req.method, req.target))
        {
            auto begun = stores.begin_upload(req, now);
            if (auto* refusal = std::get_if<response>(&begun))
            {
                check(*refusal);
                return 0;  // refused: the front end closes
            }
            const upload_ticket ticket = std::get<upload_ticket>(std::move(begun));
            const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(ticket.length, in.size()));
            std::FILE* f = std::fopen(ticket.temp_path.c_str(), "wb");
            DD_FUZZ_CHECK(f != nullptr);
            const bool written = std::fwrite(in.data(), 1, n, f) == n;
            std::fclose(f);
            DD_FUZZ_CHECK(written);
            in.remove_prefix(n);
            const response r = stores.finish_upload(ticket, n, now);
            check(r);
            if (n < ticket.length || r.close || !keep_alive)
                return 0;
            continue;
        }

        const bool too_large = hp.content_length() && *hp.content_length() > api_body_limit;
        if (too_large)
            return 0;  // 413 and close
        http::request_parser<http::string_body> sp{std::move(hp)};
        sp.body_limit(api_body_limit);
        while (!sp.is_done())
        {
            const std::size_t n = sp.put(asio::buffer(in.data(), in.size()), ec);
            in.remove_prefix(n);
            if (ec == http::error::need_more)
            {
                if (n != 0 && !in.empty())
                    continue;
                // Nothing more arrives (the input is all the client sent): it closed.
                sp.put_eof(ec);
                if (ec)
                    return 0;  // the client closed mid-body
                break;
            }
            if (ec)
                return 0;  // 413 or a bad body: the connection ends
            if (n == 0)
                break;
        }
        if (!sp.is_done())
            return 0;
        req.body = sp.release().body();
        const response r = stores.handle(req, now);
        check(r);
        if (r.close || !keep_alive)
            return 0;
    }
    return 0;
}
