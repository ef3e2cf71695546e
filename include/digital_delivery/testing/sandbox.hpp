//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_TESTING_SANDBOX_HPP
#define DIGITAL_DELIVERY_TESTING_SANDBOX_HPP

/// \file
/// A digital-delivery-sandbox process for your own tests: started on
/// 127.0.0.1 on a port it picks itself (`--port 0`; the port is read from its
/// first line on stdout, so there is no race for a port and no sleep), and
/// stopped (SIGTERM, then SIGKILL after 10 s) by stop() or the destructor.
///
/// \code
/// digital_delivery::testing::sandbox sb;                    // once per test program
/// auto store = sb.create_store({"--seed-orders", "5"});     // a store of its own per test
/// dd::client c(transport, {.base_url = store.base_url, .api_key = store.api_key});
/// ...
/// sb.advance_clock(store, std::chrono::hours(25));          // instead of sleeping
/// sb.delete_store(store.id);
/// \endcode
///
/// The executable is, in this order: the constructor's `executable` argument,
/// the environment variable DIGITAL_DELIVERY_SANDBOX_EXE, or the macro
/// DIGITAL_DELIVERY_SANDBOX_EXE (a string literal; CMake's
/// digital_delivery_add_sandbox(<target>) defines it). The sandbox's stderr
/// (one log line per request) is discarded unless the environment variable
/// DIGITAL_DELIVERY_SANDBOX_LOG is set.
///
/// Requests to the sandbox-only endpoints use a small blocking HTTP/1.1
/// client over POSIX sockets (Connection: close, every send and receive
/// bounded by a timeout, the whole exchange by a deadline); every failure is
/// a std::runtime_error saying what was asked and what happened. POSIX only
/// (Linux: pidfd is used to wait for the exit when the kernel has it).
///
/// Independent of the rest of the library: it needs Boost.JSON and nothing
/// of Asio or Beast.

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <boost/system/error_code.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern "C" {
extern char** environ;
}

namespace digital_delivery {
namespace testing {

/// A running digital-delivery-sandbox process. Not copyable, not movable.
class sandbox
{
public:
    /// A store created with create_store().
    struct store
    {
        std::string id{};        ///< "s1", "s2", ...
        std::string api_key{};   ///< its X-Auth-Token (selects the store)
        std::string base_url{};  ///< origin + "/api/v1/external" (the same for every store)
        std::string origin{};    ///< http://127.0.0.1:PORT (its /sandbox/... endpoints are here)
    };

    /// A store's clock, as answered by /sandbox/clock.
    struct clock_reading
    {
        std::string now{};            ///< the store's current time, ISO 8601 UTC
        std::int64_t offset_ms = 0;  ///< how far it is ahead of the wall clock in total
    };

    /// An answer of request().
    struct response
    {
        int status = 0;  ///< The HTTP status.
        std::vector<std::pair<std::string, std::string>> headers{};  ///< Name and value of each header, in order.
        std::string body{};  ///< The body (de-chunked).

        /// The value of the first header named `name` (case-insensitive), or "".
        /// \param name The header's name.
        /// \return Its value, or "".
        std::string header(const std::string& name) const
        {
            for (const auto& [n, v] : headers)
                if (n.size() == name.size() &&
                    std::equal(n.begin(), n.end(), name.begin(), [](char a, char b) { return lower(a) == lower(b); }))
                    return v;
            return {};
        }
    };

    /// Starts the sandbox with `--host 127.0.0.1 --port 0 --api-key <api_key>`
    /// followed by `args` (its command-line flags; the store flags among them
    /// configure the default store, e.g. {"--seed-orders", "5"}), and waits
    /// (at most 15 s) for it to say where it listens. `executable` empty: see
    /// find_executable(). Throws std::runtime_error when it cannot be started.
    /// \param args The sandbox's command-line flags.
    /// \param api_key The default store's API key.
    /// \param executable The sandbox executable's path, or empty.
    explicit sandbox(std::vector<std::string> args = {}, std::string api_key = "sandbox-key",
                     std::string executable = {})
        : api_key_(std::move(api_key))
    {
        start(find_executable(std::move(executable)), args);
    }

    sandbox(const sandbox&) = delete;
    sandbox& operator=(const sandbox&) = delete;
    /// Stops the sandbox (stop()).
    ~sandbox() { stop(); }

    /// `explicit_path` when not empty, else the environment variable
    /// DIGITAL_DELIVERY_SANDBOX_EXE, else the macro of the same name. Throws
    /// std::runtime_error when none is given.
    /// \param explicit_path A path, or empty.
    /// \return The executable's path.
    static std::string find_executable(std::string explicit_path = {})
    {
        if (!explicit_path.empty())
            return explicit_path;
        if (const char* e = std::getenv("DIGITAL_DELIVERY_SANDBOX_EXE"); e && *e)
            return e;
#ifdef DIGITAL_DELIVERY_SANDBOX_EXE
        return DIGITAL_DELIVERY_SANDBOX_EXE;
#else
        throw std::runtime_error(
            "digital_delivery::testing::sandbox: no digital-delivery-sandbox executable given: pass its path, "
            "set the environment variable DIGITAL_DELIVERY_SANDBOX_EXE, or define the macro "
            "DIGITAL_DELIVERY_SANDBOX_EXE (CMake: digital_delivery_add_sandbox(<target>))");
#endif
    }

    /// \return http://127.0.0.1:PORT
    const std::string& origin() const { return origin_; }
    /// \return http://127.0.0.1:PORT/api/v1/external: the API's base URL, for every store.
    std::string base_url() const { return origin_ + "/api/v1/external"; }
    /// \return The default store's key (the one that creates and deletes stores).
    const std::string& api_key() const { return api_key_; }
    /// \return The process id, -1 once stopped.
    pid_t pid() const { return pid_; }
    /// \return True from a successful start until stop() (even if the process
    /// exited on its own meanwhile).
    bool running() const { return pid_ > 0; }

    /// POST /sandbox/stores: a new isolated store configured by `options` (the
    /// sandbox's store flags, e.g. {"--seed-orders", "5", "--no-rate-limit"};
    /// flags not given take the built-in defaults), with `api_key` as its key
    /// (empty: the sandbox makes a unique one). Throws std::runtime_error with
    /// the status and body when it is refused.
    /// \param options The store's flags.
    /// \param api_key The new store's key, or empty.
    /// \return The new store.
    store create_store(const std::vector<std::string>& options = {}, const std::string& api_key = {}) const
    {
        boost::json::array opts;
        for (const auto& o : options)
            opts.emplace_back(o);
        boost::json::object body;
        body["options"] = std::move(opts);
        if (!api_key.empty())
            body["api_key"] = api_key;
        const response r = request("POST", "/sandbox/stores", boost::json::serialize(body));
        if (r.status != 201)
            throw std::runtime_error("create_store: HTTP " + std::to_string(r.status) + ": " + r.body);
        const boost::json::value v = parse(r.body);
        const boost::json::object* s = nullptr;
        if (const auto* o = v.if_object())
            if (const auto* so = o->if_contains("store"))
                s = so->if_object();
        auto field = [&](const char* name) -> std::string {
            const boost::json::value* f = s ? s->if_contains(name) : nullptr;
            if (!f || !f->is_string())
                throw std::runtime_error("create_store: unexpected answer: " + r.body);
            return std::string(f->get_string());
        };
        return store{field("id"), field("api_key"), field("base_url"), origin_};
    }

    /// DELETE /sandbox/stores/{id}: removes the store with its state and files.
    /// Throws std::runtime_error with the status and body when it is refused
    /// (unknown id, or the default store).
    /// \param id The store's id (store::id).
    void delete_store(const std::string& id) const
    {
        const response r = request("DELETE", "/sandbox/stores/" + id, {});
        if (r.status != 204)
            throw std::runtime_error("delete_store " + id + ": HTTP " + std::to_string(r.status) + ": " + r.body);
    }

    /// POST /sandbox/clock: moves the clock of the store of `api_key` (empty:
    /// the default store) forward by `by` (>= 0, fractions of a second
    /// allowed). Timestamps, the expiry of presigned URLs and downloads,
    /// preorder releases and watermarking follow it; the rate limiter does not.
    /// \param by How far to move it.
    /// \param api_key The store's key, or empty.
    /// \return The store's clock after the move.
    clock_reading advance_clock(std::chrono::duration<double> by, const std::string& api_key = {}) const
    {
        boost::json::object body;
        body["advance_seconds"] = by.count();
        return read_clock(request("POST", "/sandbox/clock", boost::json::serialize(body), api_key), "advance_clock");
    }
    /// The same for `s`.
    /// \param s The store.
    /// \param by How far to move it.
    /// \return The store's clock after the move.
    clock_reading advance_clock(const store& s, std::chrono::duration<double> by) const
    {
        return advance_clock(by, s.api_key);
    }

    /// GET /sandbox/clock of the store of `api_key` (empty: the default store).
    /// \param api_key The store's key, or empty.
    /// \return The store's clock.
    clock_reading clock(const std::string& api_key = {}) const
    {
        return read_clock(request("GET", "/sandbox/clock", {}, api_key), "clock");
    }
    /// The same for `s`.
    /// \param s The store.
    /// \return The store's clock.
    clock_reading clock(const store& s) const { return clock(s.api_key); }

    /// One request to the sandbox, e.g. request("POST", "/sandbox/purchases",
    /// R"({"store_product_id": 7500000001111})", store.api_key): `target` is
    /// the path (and query) on origin(); `api_key` empty: the default store's.
    /// A body is sent as application/json. Any status is returned; throws
    /// std::runtime_error when there is no complete answer (connection
    /// refused, timeout of 30 s per send or receive, 60 s in all).
    /// \param method "GET", "POST", ...
    /// \param target The path and query.
    /// \param body The body, or empty for none.
    /// \param api_key The store's key, or empty.
    /// \return The answer.
    response request(const std::string& method, const std::string& target, const std::string& body = {},
                     const std::string& api_key = {}) const
    {
        if (origin_.empty() || pid_ <= 0)
            throw std::runtime_error(method + " " + target + ": the sandbox is not running");
        return exchange(method, target, body, api_key.empty() ? api_key_ : api_key);
    }

    /// SIGTERM, then waits for the exit; SIGKILL when it has not exited within
    /// 10 s. Does nothing when already stopped.
    void stop() noexcept
    {
        if (pid_ <= 0)
            return;
        // Our unreaped child: its pid cannot be reused before the waitpid below.
        int pidfd = -1;
#ifdef SYS_pidfd_open
        pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
#endif
        ::kill(pid_, SIGTERM);
        bool exited = false;
        if (pidfd >= 0)
        {
            pollfd p{pidfd, POLLIN, 0};
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            for (;;)
            {
                const auto left =
                    std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
                const int r = ::poll(&p, 1, static_cast<int>(std::max<long long>(0, left.count())));
                if (r < 0 && errno == EINTR)
                    continue;
                exited = r > 0;
                break;
            }
            ::close(pidfd);
        }
        else
        {
            // No pidfd (kernel < 5.3): poll waitpid for up to 10 s.
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            while (!exited && std::chrono::steady_clock::now() < deadline)
            {
                const pid_t r = ::waitpid(pid_, nullptr, WNOHANG);
                if (r == pid_ || (r < 0 && errno != EINTR))
                {
                    pid_ = -1;
                    return;
                }
                ::usleep(10000);
            }
        }
        if (!exited)
            ::kill(pid_, SIGKILL);
        while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR)
        {
        }
        pid_ = -1;
    }

private:
    struct fd_guard
    {
        int fd = -1;
        fd_guard() = default;
        explicit fd_guard(int f) : fd(f) {}
        fd_guard(const fd_guard&) = delete;
        fd_guard& operator=(const fd_guard&) = delete;
        ~fd_guard() { reset(); }
        void reset()
        {
            if (fd >= 0)
                ::close(fd);
            fd = -1;
        }
    };

    static char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

    // `text` parsed; null when it is not JSON.
    static boost::json::value parse(const std::string& text)
    {
        boost::system::error_code ec;
        boost::json::value v = boost::json::parse(text, ec);
        if (ec)
            return nullptr;
        return v;
    }

    static clock_reading read_clock(const response& r, const char* what)
    {
        if (r.status != 200)
            throw std::runtime_error(std::string(what) + ": HTTP " + std::to_string(r.status) + ": " + r.body);
        const boost::json::value v = parse(r.body);
        const boost::json::object* o = v.if_object();
        const boost::json::value* now = o ? o->if_contains("now") : nullptr;
        const boost::json::value* off = o ? o->if_contains("offset_ms") : nullptr;
        if (!now || !now->is_string() || !off || !off->is_number())
            throw std::runtime_error(std::string(what) + ": unexpected answer: " + r.body);
        clock_reading c;
        c.now = std::string(now->get_string());
        boost::system::error_code ec;
        c.offset_ms = off->to_number<std::int64_t>(ec);
        if (ec)
            c.offset_ms = static_cast<std::int64_t>(off->to_number<double>());
        return c;
    }

    void start(const std::string& exe, const std::vector<std::string>& extra)
    {
        if (::access(exe.c_str(), X_OK) != 0)
            throw std::runtime_error("digital_delivery::testing::sandbox: cannot execute " + exe + ": " +
                                     std::strerror(errno));
        std::vector<std::string> args = {exe, "--host", "127.0.0.1", "--port", "0", "--api-key", api_key_};
        args.insert(args.end(), extra.begin(), extra.end());
        std::vector<char*> argv;
        for (auto& a : args)
            argv.push_back(a.data());
        argv.push_back(nullptr);

        int out[2];
        if (::pipe2(out, O_CLOEXEC) != 0)
            throw std::runtime_error(std::string("digital_delivery::testing::sandbox: pipe: ") + std::strerror(errno));
        fd_guard read_end(out[0]);
        fd_guard write_end(out[1]);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, out[1], 1);
        if (!std::getenv("DIGITAL_DELIVERY_SANDBOX_LOG"))
            posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
        pid_t pid = -1;
        const int rc = ::posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&fa);
        write_end.reset();
        if (rc != 0)
            throw std::runtime_error("digital_delivery::testing::sandbox: cannot start " + exe + ": " +
                                     std::strerror(rc));
        pid_ = pid;

        // Its first line: "listening on http://HOST:PORT" (bounded wait).
        std::string line;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
        pollfd p{read_end.fd, POLLIN, 0};
        while (line.find('\n') == std::string::npos)
        {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0)
                break;
            const int r = ::poll(&p, 1, static_cast<int>(left.count()));
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                break;
            char buf[256];
            const ssize_t n = ::read(read_end.fd, buf, sizeof buf);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;  // it exited (bad flag, ...)
            line.append(buf, static_cast<std::size_t>(n));
        }
        read_end.reset();
        const std::string prefix = "listening on ";
        const auto pos = line.find(prefix);
        const auto eol = line.find('\n', pos);
        if (pos == std::string::npos || eol == std::string::npos)
        {
            stop();
            throw std::runtime_error("digital_delivery::testing::sandbox: " + exe +
                                     " did not say where it listens within 15 s (its stdout: '" + line +
                                     "'; set DIGITAL_DELIVERY_SANDBOX_LOG=1 to see its stderr)");
        }
        origin_ = line.substr(pos + prefix.size(), eol - pos - prefix.size());
        while (!origin_.empty() && (origin_.back() == '\r' || origin_.back() == ' '))
            origin_.pop_back();
    }

    // Chunked transfer coding -> the body; throws on malformed input.
    static std::string dechunk(const std::string& in, const std::string& what)
    {
        std::string out;
        std::size_t i = 0;
        for (;;)
        {
            const auto eol = in.find("\r\n", i);
            if (eol == std::string::npos)
                throw std::runtime_error(what + "malformed chunked body");
            const std::size_t size = std::strtoull(in.c_str() + i, nullptr, 16);
            i = eol + 2;
            if (size == 0)
                return out;
            if (in.size() < i + size)
                throw std::runtime_error(what + "truncated chunked body");
            out.append(in, i, size);
            i += size + 2;
        }
    }

    response exchange(const std::string& method, const std::string& target, const std::string& body,
                      const std::string& key) const
    {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        const std::string what = method + " " + origin_ + target + ": ";
        // origin_ is http://HOST:PORT
        const auto scheme_end = origin_.find("://");
        const auto colon = origin_.rfind(':');
        if (scheme_end == std::string::npos || colon == std::string::npos || colon < scheme_end + 3)
            throw std::runtime_error(what + "unexpected origin " + origin_);
        const std::string host = origin_.substr(scheme_end + 3, colon - scheme_end - 3);
        const std::string port = origin_.substr(colon + 1);

        fd_guard s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        if (s.fd < 0)
            throw std::runtime_error(what + "socket: " + std::strerror(errno));
        timeval tv{30, 0};
        ::setsockopt(s.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        ::setsockopt(s.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);  // bounds connect() too
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(static_cast<std::uint16_t>(std::atoi(port.c_str())));
        if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1)
            throw std::runtime_error(what + "not an IPv4 address: " + host);
        if (::connect(s.fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
            throw std::runtime_error(what + "connect: " + std::strerror(errno));

        std::string req = method + " " + target + " HTTP/1.1\r\nHost: " + host + ":" + port +
                          "\r\nX-Auth-Token: " + key + "\r\nConnection: close\r\n";
        if (!body.empty())
            req += "Content-Type: application/json\r\n";
        req += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
        for (std::size_t off = 0; off < req.size();)
        {
            const ssize_t n = ::send(s.fd, req.data() + off, req.size() - off, MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                throw std::runtime_error(what + "send: " + std::strerror(errno));
            off += static_cast<std::size_t>(n);
        }

        std::string in;
        for (;;)
        {
            if (std::chrono::steady_clock::now() > deadline)
                throw std::runtime_error(what + "no complete answer within 60 s");
            char buf[4096];
            const ssize_t n = ::recv(s.fd, buf, sizeof buf, 0);
            if (n == 0)
                break;
            if (n < 0)
            {
                if (errno == EINTR)
                    continue;
                throw std::runtime_error(what + "recv: " +
                                         (errno == EAGAIN || errno == EWOULDBLOCK ? std::string("timed out")
                                                                                  : std::string(std::strerror(errno))));
            }
            in.append(buf, static_cast<std::size_t>(n));
        }

        // HTTP/1.1 201 Created\r\nName: value\r\n...\r\n\r\nbody
        const auto head_end = in.find("\r\n\r\n");
        const auto first_eol = in.find("\r\n");
        if (in.compare(0, 5, "HTTP/") != 0 || head_end == std::string::npos || in.find(' ') > first_eol)
            throw std::runtime_error(what + "malformed answer: " + in.substr(0, 200));
        response r;
        r.status = std::atoi(in.c_str() + in.find(' ') + 1);
        for (std::size_t i = first_eol + 2; i < head_end;)
        {
            const auto eol = in.find("\r\n", i);
            const std::string line = in.substr(i, eol - i);
            i = eol + 2;
            const auto c = line.find(':');
            if (c == std::string::npos)
                continue;
            std::string value = line.substr(c + 1);
            const auto b = value.find_first_not_of(" \t");
            value = b == std::string::npos ? std::string() : value.substr(b, value.find_last_not_of(" \t") - b + 1);
            r.headers.emplace_back(line.substr(0, c), std::move(value));
        }
        r.body = in.substr(head_end + 4);
        std::string te = r.header("Transfer-Encoding");
        std::transform(te.begin(), te.end(), te.begin(), lower);
        if (te.find("chunked") != std::string::npos)
            r.body = dechunk(r.body, what);
        else if (const std::string cl = r.header("Content-Length"); !cl.empty())
        {
            const std::size_t n = std::strtoull(cl.c_str(), nullptr, 10);
            if (r.body.size() < n)
                throw std::runtime_error(what + "answer shorter than its Content-Length");
            r.body.resize(n);
        }
        return r;
    }

    std::string api_key_;
    std::string origin_;
    pid_t pid_ = -1;
};

}  // namespace testing
}  // namespace digital_delivery

#endif
