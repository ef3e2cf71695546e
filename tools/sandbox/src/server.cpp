// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// digital-delivery-sandbox: command line + Boost.Beast HTTP/1.1 front end.
// The only translation unit that includes Beast. All behaviour is in the core
// (store_registry and its services).
#include "options.hpp"
#include "stores.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json/parse.hpp>

#include <sys/resource.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string_view>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using namespace dd_sandbox;
using namespace std::chrono_literals;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
constexpr std::uint64_t api_body_limit = 1024 * 1024;                         // 1 MiB
constexpr std::uint64_t upload_body_limit = 2147483648ULL + 1024 * 1024;      // 2 GiB + headroom
constexpr std::size_t upload_chunk = 256 * 1024;
// After a failed accept(): wait this long, or until one of our connections
// closes, before accepting again.
constexpr auto accept_retry_delay = 100ms;

time_point wall_now()
{
    return std::chrono::floor<std::chrono::milliseconds>(std::chrono::system_clock::now());
}

const char* usage_text =
    "Usage: digital-delivery-sandbox [options]\n"
    "A local, stateful implementation of the Digital Delivery Service API.\n"
    "API base: http://HOST:PORT/api/v1/external ; storage under /storage/ (a created store's\n"
    "under /stores/ID/storage/) ; control under /sandbox/.\n"
    "\n"
    "Process options:\n"
    "  --help                          show this text\n"
    "  --host HOST                     address to bind (default 127.0.0.1)\n"
    "  --port PORT                     port (default 0 = pick a free port)\n"
    "  --api-key KEY                   X-Auth-Token of the default store (default sandbox-key)\n"
    "  --data-dir DIR                  uploaded files (default: fresh temp dir, removed at exit)\n"
    "  --public-url URL                base of presigned URLs (default http://HOST:PORT)\n"
    "  --log-file PATH                 append the request log to PATH instead of stderr\n"
    "  --max-open-files N              lower the soft limit of open files (RLIMIT_NOFILE) to N\n"
    "                                  (at least 16; for tests of running out of descriptors)\n"
    "\n"
    "Store options (the default store; also the \"options\" of POST /sandbox/stores):\n"
    "  --rate-limit-points N           token bucket capacity (default 40)\n"
    "  --rate-limit-window-seconds S   refill window, fractional allowed (default 60)\n"
    "  --no-rate-limit                 disable rate limiting\n"
    "  --quota-storage-bytes N         plan storage quota (default 10737418240)\n"
    "  --quota-asset-count N           plan asset-count quota (default 1000)\n"
    "  --seed N                        RNG seed for ids and seeded data (default 42)\n"
    "  --seed-orders N                 number of seeded orders, at most 1000000 (default 1000)\n"
    "  --watermark on|off              store-level PDF watermarking (default on)\n"
    "  --watermark-delay-ms N          processing -> ready delay (default 2000, at most\n"
    "                                  315360000000000)\n"
    "  --download-days N               download expiry in days (default: none, at most 3650000)\n"
    "  --download-limit N              per-file download limit (default: unlimited)\n"
    "  --upload-url-ttl-seconds N      presigned upload URL validity (default 3600)\n"
    "  --storage-secret S              secret of the presigned storage URLs (default: random\n"
    "                                  per store; give one for URLs that do not change)\n"
    "Flags take their value as the next argument or as --flag=value.\n"
    "\n"
    "Several stores: POST /sandbox/stores with the default store's key and the body\n"
    "{\"options\": [\"--seed-orders\", \"5\", ...], \"api_key\": \"KEY\"} (both optional) creates\n"
    "an isolated store; its API requests use the same base URL with its key. Options not\n"
    "given take the defaults above. DELETE /sandbox/stores/ID removes it.\n"
    "\n"
    "Prints 'listening on http://HOST:PORT' as its first stdout line; one log line per request\n"
    "(method, path, status, duration, the error of a refusal) on stderr or --log-file; exits on\n"
    "SIGINT/SIGTERM.\n";

struct options {
    sandbox_config cfg;
    process_options process;
};

[[noreturn]] void die(const std::string& msg)
{
    std::cerr << "digital-delivery-sandbox: " << msg << "\n(see --help)\n";
    std::exit(2);
}

options parse_args(int argc, char** argv)
{
    options o;
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (auto err = parse_options(args, o.cfg, &o.process))
        die(*err);
    if (o.process.help) {
        std::cout << usage_text;
        std::exit(0);
    }
    return o;
}

std::string path_of(std::string_view target)
{
    return std::string(target.substr(0, target.find('?')));
}

// Where the request log goes: stderr, or the file of --log-file.
std::FILE* request_log = stderr;

// One line per request: method, path without query, status, duration and, for
// a refusal, the server's words (the "error" of its JSON body).
void log_request(std::string_view method, std::string_view target, const response& r,
                 std::chrono::steady_clock::time_point start)
{
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::string error;
    if (r.status >= 400) {
        boost::system::error_code ec;
        const boost::json::value v = boost::json::parse(r.body, ec);
        if (const auto* o = ec ? nullptr : v.if_object())
            if (const auto* e = o->if_contains("error"); e && e->is_string())
                error = " " + std::string(e->get_string());
    }
    std::fprintf(request_log, "%.*s %s %d %.1fms%s\n", static_cast<int>(method.size()), method.data(),
                 path_of(target).c_str(), r.status, ms, error.c_str());
}

// RFC 9112 section 3.2: "A server MUST respond with a 400 (Bad Request) status
// code to any HTTP/1.1 request message that lacks a Host header field and to any
// request message that contains more than one Host header field line or a Host
// header field with an invalid field value." Valid: empty, or RFC 3986
// host [":" port] characters (reg-name, IPv4, [IPv6]).
std::optional<std::string> host_problem(const http::request_header<>& h)
{
    const auto n = h.count(http::field::host);
    if (n > 1)
        return "more than one Host header field";
    if (n == 0)
        return h.version() >= 11 ? std::optional<std::string>("missing Host header field") : std::nullopt;
    for (const unsigned char c : h[http::field::host]) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                        std::string_view("-._~%!$&'()*+,;=:[]").find(static_cast<char>(c)) != std::string_view::npos;
        if (!ok)
            return "invalid Host header field";
    }
    return std::nullopt;
}

// Writes a core response; returns false when the connection must close.
asio::awaitable<bool> write_response(beast::tcp_stream& stream, const response& r,
                                     unsigned version, bool keep_alive, bool head)
{
    stream.expires_after(300s);
    const bool keep = keep_alive && !r.close;
    if (!r.file_path.empty() && !head) {
        http::response<http::file_body> res{static_cast<http::status>(r.status), version};
        beast::error_code ec;
        res.body().open(r.file_path.c_str(), beast::file_mode::scan, ec);
        if (ec) {
            http::response<http::string_body> err{http::status::internal_server_error, version};
            err.set(http::field::content_type, "application/xml");
            err.body() = service::s3_error_xml("InternalError", "Could not open the object", "");
            err.prepare_payload();
            err.keep_alive(false);
            co_await http::async_write(stream, err, use_tuple);
            co_return false;
        }
        for (const auto& [k, v] : r.headers)
            res.insert(k, v);
        res.set(http::field::server, "digital-delivery-sandbox");
        res.content_length(r.file_size);
        res.keep_alive(keep);
        auto [wec, n] = co_await http::async_write(stream, res, use_tuple);
        co_return !wec && keep;
    }
    http::response<http::string_body> res{static_cast<http::status>(r.status), version};
    for (const auto& [k, v] : r.headers)
        res.insert(k, v);
    res.set(http::field::server, "digital-delivery-sandbox");
    if (head) {
        res.content_length(r.file_path.empty() ? r.body.size() : r.file_size);
    } else {
        res.body() = r.body;
        if (r.status != 204 && r.status != 304)
            res.prepare_payload();
    }
    res.keep_alive(keep);
    if (head) {
        http::response_serializer<http::string_body> sr{res};
        sr.split(true);
        auto [wec, n] = co_await http::async_write_header(stream, sr, use_tuple);
        co_return !wec && keep;
    }
    auto [wec, n] = co_await http::async_write(stream, res, use_tuple);
    co_return !wec && keep;
}

// Like S3/nginx: after an early refusal stop sending, then read and discard what the
// client still sends for a while, so that it can read the response before the close.
asio::awaitable<void> lingering_close(beast::tcp_stream& stream)
{
    beast::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_send, ec);
    std::vector<char> sink(64 * 1024);
    const auto deadline = std::chrono::steady_clock::now() + 2s;
    while (std::chrono::steady_clock::now() < deadline) {
        stream.expires_at(deadline);
        auto [rec, n] = co_await stream.async_read_some(asio::buffer(sink), use_tuple);
        if (rec)
            break;
    }
    stream.socket().close(ec);
}

asio::awaitable<void> session(tcp::socket socket, store_registry& stores)
{
    beast::tcp_stream stream(std::move(socket));
    beast::flat_buffer buffer;
    buffer.reserve(64 * 1024);
    bool open = true;
    while (open) {
        http::request_parser<http::empty_body> hp;
        hp.header_limit(32 * 1024);
        // Content-Length is checked against this when the header is parsed: allow the
        // largest upload here; API bodies get their own 1 MiB check below.
        hp.body_limit(upload_body_limit);
        stream.expires_after(120s);
        auto [ec, n] = co_await http::async_read_header(stream, buffer, hp, use_tuple);
        if (ec) {
            if (ec != http::error::end_of_stream && ec != asio::error::eof &&
                ec != beast::error::timeout && ec != asio::error::connection_reset) {
                response bad;
                bad.status = 400;
                bad.headers.emplace_back("Content-Type", "application/json; charset=utf-8");
                bad.body = "{\"error\":\"Bad request\"}";
                bad.close = true;
                co_await write_response(stream, bad, 11, false, false);
                std::fprintf(stderr, "- - 400 bad request (%s)\n", ec.message().c_str());
            }
            break;
        }
        const auto start = std::chrono::steady_clock::now();
        const auto& h = hp.get();
        request req;
        req.method = std::string(h.method_string());
        req.target = std::string(h.target());
        for (const auto& f : h)
            req.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
        const unsigned version = h.version();
        const bool keep_alive = h.keep_alive();
        const bool head = h.method() == http::verb::head;

        if (const auto problem = host_problem(h)) {
            response bad;
            bad.status = 400;
            bad.headers.emplace_back("Content-Type", "application/json; charset=utf-8");
            bad.body = "{\"error\":\"Bad request: " + *problem + "\"}";
            bad.close = true;
            co_await write_response(stream, bad, version, false, false);
            log_request(req.method, req.target, bad, start);
            co_await lingering_close(stream);  // a body may follow: let the client read the answer
            co_return;
        }

        if (store_registry::is_storage_upload(req.method, req.target)) {
            auto begun = stores.begin_upload(req, wall_now());
            if (auto* refusal = std::get_if<response>(&begun)) {
                co_await write_response(stream, *refusal, version, false, false);
                log_request(req.method, req.target, *refusal, start);
                co_await lingering_close(stream);
                co_return;
            }
            const upload_ticket ticket = std::get<upload_ticket>(std::move(begun));
            if (ticket.expect_continue) {
                http::response<http::empty_body> cont{http::status::continue_, version};
                co_await http::async_write(stream, cont, use_tuple);
            }
            http::request_parser<http::buffer_body> bp{std::move(hp)};
            bp.body_limit(upload_body_limit);
            std::FILE* f = std::fopen(ticket.temp_path.c_str(), "wb");
            std::vector<char> chunk(upload_chunk);
            std::uint64_t received = 0;
            bool failed = f == nullptr;
            while (!failed && !bp.is_done()) {
                bp.get().body().data = chunk.data();
                bp.get().body().size = chunk.size();
                stream.expires_after(120s);
                auto [rec, rn] = co_await http::async_read(stream, buffer, bp, use_tuple);
                if (rec == http::error::need_buffer)
                    rec = {};
                const std::size_t got = chunk.size() - bp.get().body().size;
                if (got > 0 && std::fwrite(chunk.data(), 1, got, f) != got)
                    failed = true;
                received += got;
                if (rec)
                    failed = true;
            }
            if (f)
                std::fclose(f);
            response r = stores.finish_upload(ticket, received, wall_now());
            if (failed)
                r.close = true;
            open = co_await write_response(stream, r, version, keep_alive, false);
            log_request(req.method, req.target, r, start);
            continue;
        }

        const bool too_large = h.has_content_length() && hp.content_length() &&
                               *hp.content_length() > api_body_limit;
        http::request_parser<http::string_body> sp{std::move(hp)};
        sp.body_limit(api_body_limit);  // applies to chunked bodies
        if (const std::string* expect = req.header("Expect");
            !too_large && expect && iequals(*expect, "100-continue")) {
            http::response<http::empty_body> cont{http::status::continue_, version};
            co_await http::async_write(stream, cont, use_tuple);
        }
        beast::error_code rec;
        if (!too_large) {
            stream.expires_after(120s);
            std::size_t rn = 0;
            std::tie(rec, rn) = co_await http::async_read(stream, buffer, sp, use_tuple);
        }
        if (too_large || rec) {
            if (too_large || rec == http::error::body_limit) {
                response big;
                big.status = 413;
                big.headers.emplace_back("Content-Type", "application/json; charset=utf-8");
                big.body = "{\"error\":\"Request body too large\"}";
                big.close = true;
                co_await write_response(stream, big, version, false, false);
                log_request(req.method, req.target, big, start);
                co_await lingering_close(stream);
                co_return;
            }
            break;
        }
        req.body = sp.release().body();
        const response r = stores.handle(req, wall_now());
        open = co_await write_response(stream, r, version, keep_alive, head);
        log_request(req.method, req.target, r, start);
    }
    beast::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream.socket().close(ec);
}

// Out of file descriptors (EMFILE, ENFILE) and the like, accept() fails at
// once every time it is tried (Linux fails it whenever the descriptor table is
// full, a connection pending or not): retrying at once spun at 100% CPU. So after
// a failure the listener waits for `retry` (accept_retry_delay), which a closing
// connection cuts short, and tries again; the connections it has are served
// meanwhile. A connection that was reset before it was accepted is not a reason
// to wait.
asio::awaitable<void> listener(tcp::acceptor& acceptor, store_registry& stores,
                               asio::steady_timer& retry)
{
    server_state& state = stores.server();
    for (;;) {
        auto [ec, socket] = co_await acceptor.async_accept(use_tuple);
        if (ec) {
            if (ec == asio::error::operation_aborted || !acceptor.is_open())
                co_return;
            ++state.accept_errors;
            if (ec == asio::error::connection_aborted || ec == asio::error::connection_reset)
                continue;
            if (state.accepting) {
                // strerror, not ec.message(): with clang's -fsanitize=vptr the virtual
                // call on Boost's system category (shared with the GCC-built Boost
                // libraries) is reported as a bad vptr, which would abort a sanitizer build.
                const std::string what = ec.category() == boost::system::system_category()
                                             ? std::string(std::strerror(ec.value()))
                                             : "error " + std::to_string(ec.value());
                std::fprintf(stderr, "accept: %s; accepting again in %lld ms or when a connection closes\n",
                             what.c_str(), static_cast<long long>(accept_retry_delay.count()));
            }
            state.accepting = false;
            ++state.accept_waits;
            retry.expires_after(accept_retry_delay);
            co_await retry.async_wait(use_tuple);  // operation_aborted: a connection closed
            if (!acceptor.is_open())
                co_return;
            continue;
        }
        if (!state.accepting)
            std::fprintf(stderr, "accept: accepting again\n");
        state.accepting = true;
        ++state.connections;
        asio::co_spawn(acceptor.get_executor(), session(std::move(socket), stores),
                       [&state, &retry](std::exception_ptr e) {
                           --state.connections;
                           if (!state.accepting)
                               retry.cancel();  // a descriptor is free: accept now
                           if (e) {
                               try {
                                   std::rethrow_exception(e);
                               } catch (const std::exception& ex) {
                                   std::fprintf(stderr, "session error: %s\n", ex.what());
                               }
                           }
                       });
    }
}

} // namespace

int main(int argc, char** argv)
{
    options opt = parse_args(argc, argv);
    namespace fs = std::filesystem;
    rlimit files{};
    if (::getrlimit(RLIMIT_NOFILE, &files) != 0)
        die(std::string("getrlimit(RLIMIT_NOFILE): ") + std::strerror(errno));
    if (opt.process.max_open_files) {
        const auto wanted = static_cast<rlim_t>(*opt.process.max_open_files);
        if (files.rlim_max != RLIM_INFINITY && wanted > files.rlim_max)
            die("--max-open-files " + std::to_string(*opt.process.max_open_files) +
                " is above the hard limit " + std::to_string(files.rlim_max));
        files.rlim_cur = wanted;
        if (::setrlimit(RLIMIT_NOFILE, &files) != 0)
            die(std::string("setrlimit(RLIMIT_NOFILE): ") + std::strerror(errno));
    }
    if (!opt.process.log_file.empty()) {
        request_log = std::fopen(opt.process.log_file.c_str(), "a");
        if (!request_log)
            die("--log-file " + opt.process.log_file + ": " + std::strerror(errno));
        std::setvbuf(request_log, nullptr, _IOLBF, 0);  // one write per line: several processes may append
    }
    std::string temp_dir;
    try {
        if (!opt.process.data_dir_given) {
            std::string tmpl = (fs::temp_directory_path() / "dd-sandbox-XXXXXX").string();
            if (!mkdtemp(tmpl.data()))
                die("cannot create a temporary data directory");
            temp_dir = opt.cfg.data_dir = tmpl;
        } else {
            fs::create_directories(opt.cfg.data_dir);
        }

        asio::io_context ioc{1};
        tcp::acceptor acceptor{ioc};
        beast::error_code ec;
        const auto address = asio::ip::make_address(opt.process.host, ec);
        if (ec)
            die("invalid --host " + opt.process.host + " (an IP address is expected)");
        const tcp::endpoint ep{address, opt.process.port};
        acceptor.open(ep.protocol());
        acceptor.set_option(asio::socket_base::reuse_address(true));
        acceptor.bind(ep, ec);
        if (ec)
            die("cannot bind " + opt.process.host + ":" + std::to_string(opt.process.port) + ": " +
                ec.message());
        acceptor.listen(asio::socket_base::max_listen_connections);
        const auto port = acceptor.local_endpoint().port();
        const std::string host = address.is_v6() ? "[" + opt.process.host + "]" : opt.process.host;
        const std::string base = "http://" + host + ":" + std::to_string(port);
        if (!opt.process.public_url_given)
            opt.cfg.public_url = base;

        store_registry stores{opt.cfg, wall_now()};
        if (files.rlim_cur != RLIM_INFINITY)
            stores.server().max_open_files = static_cast<std::int64_t>(files.rlim_cur);
        std::printf("listening on %s\n", base.c_str());
        std::fflush(stdout);

        asio::signal_set signals{ioc, SIGINT, SIGTERM};
        signals.async_wait([&](const beast::error_code&, int sig) {
            std::fprintf(stderr, "signal %d: shutting down\n", sig);
            beast::error_code ignored;
            acceptor.close(ignored);
            ioc.stop();
        });
        asio::steady_timer accept_retry{ioc};
        asio::co_spawn(ioc, listener(acceptor, stores, accept_retry), asio::detached);
        ioc.run();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "digital-delivery-sandbox: %s\n", e.what());
        if (!temp_dir.empty()) {
            std::error_code rec;
            fs::remove_all(temp_dir, rec);
        }
        return 1;
    }
    if (!temp_dir.empty()) {
        std::error_code rec;
        fs::remove_all(temp_dir, rec);
    }
    return 0;
}
