// digital-delivery-sandbox: command line + Boost.Beast HTTP/1.1 front end.
// The only translation unit that includes Beast. All behaviour is in service.
#include "service.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

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

time_point wall_now()
{
    return std::chrono::floor<std::chrono::milliseconds>(std::chrono::system_clock::now());
}

const char* usage_text =
    "Usage: digital-delivery-sandbox [options]\n"
    "A local, stateful implementation of the Digital Delivery Service API.\n"
    "API base: http://HOST:PORT/api/v1/external ; storage under /storage/ ; control under /sandbox/.\n"
    "\n"
    "  --help                          show this text\n"
    "  --host HOST                     address to bind (default 127.0.0.1)\n"
    "  --port PORT                     port (default 0 = pick a free port)\n"
    "  --api-key KEY                   X-Auth-Token value (default sandbox-key)\n"
    "  --data-dir DIR                  uploaded files (default: fresh temp dir, removed at exit)\n"
    "  --public-url URL                base of presigned URLs (default http://HOST:PORT)\n"
    "  --rate-limit-points N           token bucket capacity (default 40)\n"
    "  --rate-limit-window-seconds S   refill window, fractional allowed (default 60)\n"
    "  --no-rate-limit                 disable rate limiting\n"
    "  --quota-storage-bytes N         plan storage quota (default 10737418240)\n"
    "  --quota-asset-count N           plan asset-count quota (default 1000)\n"
    "  --seed N                        RNG seed for ids and seeded data (default 42)\n"
    "  --seed-orders N                 number of seeded orders (default 1000)\n"
    "  --watermark on|off              store-level PDF watermarking (default on)\n"
    "  --watermark-delay-ms N          processing -> ready delay (default 2000)\n"
    "  --download-days N               download expiry in days (default: none)\n"
    "  --download-limit N              per-file download limit (default: unlimited)\n"
    "  --upload-url-ttl-seconds N      presigned upload URL validity (default 3600)\n"
    "\n"
    "Prints 'listening on http://HOST:PORT' as its first stdout line; one log line per request\n"
    "on stderr; exits on SIGINT/SIGTERM.\n";

struct options {
    sandbox_config cfg;
    std::string host = "127.0.0.1";
    unsigned short port = 0;
    bool public_url_given = false;
    bool data_dir_given = false;
};

[[noreturn]] void die(const std::string& msg)
{
    std::cerr << "digital-delivery-sandbox: " << msg << "\n(see --help)\n";
    std::exit(2);
}

std::int64_t to_int(const std::string& flag, const std::string& v, std::int64_t min)
{
    auto n = parse_int64(v);
    if (!n || *n < min)
        die("invalid value for " + flag + ": " + v);
    return *n;
}

options parse_args(int argc, char** argv)
{
    options o;
    for (int i = 1; i < argc; ++i) {
        std::string flag = argv[i];
        std::string value;
        bool has_value = false;
        if (auto eq = flag.find('='); flag.starts_with("--") && eq != std::string::npos) {
            value = flag.substr(eq + 1);
            flag = flag.substr(0, eq);
            has_value = true;
        }
        auto need = [&]() -> const std::string& {
            if (!has_value) {
                if (i + 1 >= argc)
                    die("missing value for " + flag);
                value = argv[++i];
                has_value = true;
            }
            return value;
        };
        if (flag == "--help" || flag == "-h") {
            std::cout << usage_text;
            std::exit(0);
        } else if (flag == "--host") {
            o.host = need();
        } else if (flag == "--port") {
            o.port = static_cast<unsigned short>(to_int(flag, need(), 0));
            if (to_int(flag, value, 0) > 65535)
                die("invalid port");
        } else if (flag == "--api-key") {
            o.cfg.api_key = need();
            if (o.cfg.api_key.empty())
                die("--api-key must not be empty");
        } else if (flag == "--data-dir") {
            o.cfg.data_dir = need();
            o.data_dir_given = true;
        } else if (flag == "--public-url") {
            o.cfg.public_url = need();
            o.public_url_given = true;
        } else if (flag == "--rate-limit-points") {
            o.cfg.rate_limit_points = static_cast<double>(to_int(flag, need(), 1));
        } else if (flag == "--rate-limit-window-seconds") {
            char* end = nullptr;
            const double w = std::strtod(need().c_str(), &end);
            if (!end || *end || !(w > 0))
                die("invalid value for " + flag);
            o.cfg.rate_limit_window_seconds = w;
        } else if (flag == "--no-rate-limit") {
            o.cfg.rate_limit = false;
        } else if (flag == "--quota-storage-bytes") {
            o.cfg.quota_storage_bytes = to_int(flag, need(), 0);
        } else if (flag == "--quota-asset-count") {
            o.cfg.quota_asset_count = to_int(flag, need(), 0);
        } else if (flag == "--seed") {
            o.cfg.seed = static_cast<std::uint64_t>(to_int(flag, need(), 0));
        } else if (flag == "--seed-orders") {
            o.cfg.seed_orders = static_cast<int>(to_int(flag, need(), 0));
        } else if (flag == "--watermark") {
            need();
            if (value != "on" && value != "off")
                die("--watermark takes on or off");
            o.cfg.watermark = value == "on";
        } else if (flag == "--watermark-delay-ms") {
            o.cfg.watermark_delay_ms = to_int(flag, need(), 0);
        } else if (flag == "--download-days") {
            o.cfg.download_days = to_int(flag, need(), 0);
        } else if (flag == "--download-limit") {
            o.cfg.download_limit = to_int(flag, need(), 0);
        } else if (flag == "--upload-url-ttl-seconds") {
            o.cfg.upload_url_ttl_seconds = to_int(flag, need(), 1);
            if (o.cfg.upload_url_ttl_seconds > 604800)
                die("--upload-url-ttl-seconds must be at most 604800");
        } else {
            die("unknown option " + flag);
        }
    }
    return o;
}

std::string path_of(std::string_view target)
{
    return std::string(target.substr(0, target.find('?')));
}

void log_request(std::string_view method, std::string_view target, int status,
                 std::chrono::steady_clock::time_point start)
{
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "%.*s %s %d %.1fms\n", static_cast<int>(method.size()), method.data(),
                 path_of(target).c_str(), status, ms);
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
            res.set(k, v);
        res.set(http::field::server, "digital-delivery-sandbox");
        res.content_length(r.file_size);
        res.keep_alive(keep);
        auto [wec, n] = co_await http::async_write(stream, res, use_tuple);
        co_return !wec && keep;
    }
    http::response<http::string_body> res{static_cast<http::status>(r.status), version};
    for (const auto& [k, v] : r.headers)
        res.set(k, v);
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

asio::awaitable<void> session(tcp::socket socket, service& svc)
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

        if (service::is_storage_upload(req.method, req.target)) {
            auto begun = svc.begin_upload(req, wall_now());
            if (auto* refusal = std::get_if<response>(&begun)) {
                co_await write_response(stream, *refusal, version, false, false);
                log_request(req.method, req.target, refusal->status, start);
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
            response r = svc.finish_upload(ticket, received, wall_now());
            if (failed)
                r.close = true;
            open = co_await write_response(stream, r, version, keep_alive, false);
            log_request(req.method, req.target, r.status, start);
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
                log_request(req.method, req.target, 413, start);
                co_await lingering_close(stream);
                co_return;
            }
            break;
        }
        req.body = sp.release().body();
        const response r = svc.handle(req, wall_now());
        open = co_await write_response(stream, r, version, keep_alive, head);
        log_request(req.method, req.target, r.status, start);
    }
    beast::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream.socket().close(ec);
}

asio::awaitable<void> listener(tcp::acceptor& acceptor, service& svc)
{
    for (;;) {
        auto [ec, socket] = co_await acceptor.async_accept(use_tuple);
        if (ec) {
            if (ec == asio::error::operation_aborted || !acceptor.is_open())
                co_return;
            continue;
        }
        asio::co_spawn(acceptor.get_executor(), session(std::move(socket), svc),
                       [](std::exception_ptr e) {
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
    std::string temp_dir;
    try {
        if (!opt.data_dir_given) {
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
        const auto address = asio::ip::make_address(opt.host, ec);
        if (ec)
            die("invalid --host " + opt.host + " (an IP address is expected)");
        const tcp::endpoint ep{address, opt.port};
        acceptor.open(ep.protocol());
        acceptor.set_option(asio::socket_base::reuse_address(true));
        acceptor.bind(ep, ec);
        if (ec)
            die("cannot bind " + opt.host + ":" + std::to_string(opt.port) + ": " + ec.message());
        acceptor.listen(asio::socket_base::max_listen_connections);
        const auto port = acceptor.local_endpoint().port();
        const std::string host = address.is_v6() ? "[" + opt.host + "]" : opt.host;
        const std::string base = "http://" + host + ":" + std::to_string(port);
        if (!opt.public_url_given)
            opt.cfg.public_url = base;

        service svc{opt.cfg, wall_now()};
        std::printf("listening on %s\n", base.c_str());
        std::fflush(stdout);

        asio::signal_set signals{ioc, SIGINT, SIGTERM};
        signals.async_wait([&](const beast::error_code&, int sig) {
            std::fprintf(stderr, "signal %d: shutting down\n", sig);
            beast::error_code ignored;
            acceptor.close(ignored);
            ioc.stop();
        });
        asio::co_spawn(ioc, listener(acceptor, svc), asio::detached);
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
