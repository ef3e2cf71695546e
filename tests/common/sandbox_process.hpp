// Starts a digital-delivery-sandbox on 127.0.0.1 with a free port (--port 0),
// and stops it (SIGTERM, then SIGKILL if it has not exited within 10 s) when
// destroyed.
//
// One process per test program, a store of its own per test (the usual way):
//
//   const auto store = sandbox_process::shared().create_store({"--seed-orders", "50"});
//   dd::client c(transport, {.base_url = store.base_url, .api_key = store.api_key});
//
// shared() is started on first use (its default store: --no-rate-limit
// --seed-orders 1, key "sandbox-key") and stopped at program exit. A store takes
// the sandbox's store flags (docs/sandbox.md, "Several stores in one sandbox");
// flags not given have the built-in defaults (e.g. a rate limit of 40 points).
//
// A process of its own, configured by the command line:
//
//   sandbox_process sb({"--seed-orders", "50", "--rate-limit-window-seconds", "2"});
//   dd::client c(transport, {.base_url = sb.base_url(), .api_key = sb.api_key()});
//
// The executable's path comes from DIGITAL_DELIVERY_SANDBOX_EXE (a compile
// definition set by CMake/meson), or from the environment variable of the
// same name. The store requests use a small blocking HTTP/1.1 client over POSIX
// sockets (Connection: close, bounded by receive/send timeouts and a deadline).
#ifndef DIGITAL_DELIVERY_TESTS_COMMON_SANDBOX_PROCESS_HPP
#define DIGITAL_DELIVERY_TESTS_COMMON_SANDBOX_PROCESS_HPP

#include <boost/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace dd_test {

class sandbox_process
{
public:
    /// A store created with create_store().
    struct store
    {
        std::string id;        ///< "s1", "s2", ...
        std::string api_key;   ///< its X-Auth-Token
        std::string base_url;  ///< origin + "/api/v1/external" (the same for every store)
        std::string origin;    ///< http://127.0.0.1:PORT (its /sandbox/... endpoints are here)
    };

    explicit sandbox_process(std::vector<std::string> extra_args = {}, std::string api_key = "sandbox-key")
        : api_key_(std::move(api_key))
    {
        std::string exe = executable();
        std::vector<std::string> args = {exe, "--host", "127.0.0.1", "--port", "0", "--api-key", api_key_};
        args.insert(args.end(), extra_args.begin(), extra_args.end());
        std::vector<char*> argv;
        for (auto& a : args)
            argv.push_back(a.data());
        argv.push_back(nullptr);

        int out[2];
        if (pipe2(out, O_CLOEXEC) != 0)
            throw std::runtime_error("pipe failed");
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, out[1], 1);
        if (!std::getenv("DIGITAL_DELIVERY_SANDBOX_LOG"))
            posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
        const int rc = posix_spawn(&pid_, exe.c_str(), &fa, nullptr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&fa);
        close(out[1]);
        if (rc != 0)
        {
            close(out[0]);
            pid_ = -1;
            throw std::runtime_error("cannot start " + exe + ": " + std::strerror(rc));
        }
        // Wait (bounded) for "listening on http://HOST:PORT".
        std::string line;
        pollfd p{out[0], POLLIN, 0};
        while (line.find('\n') == std::string::npos)
        {
            if (poll(&p, 1, 15000) <= 0)
                break;
            char buf[256];
            const ssize_t n = read(out[0], buf, sizeof buf);
            if (n <= 0)
                break;
            line.append(buf, static_cast<std::size_t>(n));
        }
        close(out[0]);
        const std::string prefix = "listening on ";
        const auto pos = line.find(prefix);
        if (pos == std::string::npos)
        {
            stop();
            throw std::runtime_error("sandbox did not start: '" + line + "'");
        }
        origin_ = line.substr(pos + prefix.size(), line.find('\n', pos) - pos - prefix.size());
        while (!origin_.empty() && (origin_.back() == '\r' || origin_.back() == ' '))
            origin_.pop_back();
    }

    sandbox_process(const sandbox_process&) = delete;
    sandbox_process& operator=(const sandbox_process&) = delete;
    ~sandbox_process() { stop(); }

    /// The test program's one sandbox: started on first use with
    /// --no-rate-limit --seed-orders 1 (its default store), stopped at exit.
    static sandbox_process& shared()
    {
        static sandbox_process instance({"--no-rate-limit", "--seed-orders", "1"});
        return instance;
    }

    /// POST /sandbox/stores: a new isolated store configured by `options` (the
    /// sandbox's store flags, e.g. {"--seed-orders", "5", "--no-rate-limit"}),
    /// with `api_key` as its key (empty: the sandbox makes a unique one).
    /// Throws std::runtime_error with the status and body when it is refused.
    store create_store(std::vector<std::string> options = {}, std::string api_key = {}) const
    {
        boost::json::array opts;
        for (auto& o : options)
            opts.emplace_back(o);
        boost::json::object body{{"options", std::move(opts)}};
        if (!api_key.empty())
            body["api_key"] = api_key;
        const http_result r = exchange("POST", "/sandbox/stores", boost::json::serialize(body));
        if (r.status != 201)
            throw std::runtime_error("create_store: HTTP " + std::to_string(r.status) + ": " + r.body);
        boost::system::error_code ec;
        const boost::json::value v = boost::json::parse(r.body, ec);
        const boost::json::object* s = nullptr;
        if (!ec && v.is_object())
            if (const auto* so = v.as_object().if_contains("store"))
                s = so->if_object();
        auto field = [&](const char* name) -> std::string {
            const boost::json::value* f = s ? s->if_contains(name) : nullptr;
            if (!f || !f->is_string())
                throw std::runtime_error("create_store: unexpected answer: " + r.body);
            return std::string(f->get_string());
        };
        return store{field("id"), field("api_key"), field("base_url"), origin_};
    }

    /// DELETE /sandbox/stores/{id}: removes the store and its files.
    void delete_store(const std::string& id) const
    {
        const http_result r = exchange("DELETE", "/sandbox/stores/" + id, {});
        if (r.status != 204)
            throw std::runtime_error("delete_store: HTTP " + std::to_string(r.status) + ": " + r.body);
    }

    /// http://127.0.0.1:PORT
    const std::string& origin() const { return origin_; }
    /// http://127.0.0.1:PORT/api/v1/external
    std::string base_url() const { return origin_ + "/api/v1/external"; }
    /// The default store's key (the one that may create stores).
    const std::string& api_key() const { return api_key_; }
    pid_t pid() const { return pid_; }

    static std::string executable()
    {
        if (const char* e = std::getenv("DIGITAL_DELIVERY_SANDBOX_EXE"))
            return e;
#ifdef DIGITAL_DELIVERY_SANDBOX_EXE
        return DIGITAL_DELIVERY_SANDBOX_EXE;
#else
        throw std::runtime_error("DIGITAL_DELIVERY_SANDBOX_EXE is not set");
#endif
    }

    /// SIGTERM, then waits for the exit (a pidfd, no polling loop); SIGKILL when
    /// it has not exited within 10 s.
    void stop()
    {
        if (pid_ <= 0)
            return;
        // Our unreaped child: its pid cannot be reused before the waitpid below.
#ifdef SYS_pidfd_open
        const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
#else
        const int pidfd = -1;
#endif
        kill(pid_, SIGTERM);
        bool exited = false;
        if (pidfd >= 0)
        {
            pollfd p{pidfd, POLLIN, 0};
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            for (;;)
            {
                const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now());
                const int r = poll(&p, 1, static_cast<int>(std::max<long long>(0, left.count())));
                if (r < 0 && errno == EINTR)
                    continue;
                exited = r > 0;
                break;
            }
            close(pidfd);
        }
        if (!exited)  // still running after 10 s, or no pidfd (kernel < 5.3)
            kill(pid_, SIGKILL);
        while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR)
        {
        }
        pid_ = -1;
    }

private:
    struct http_result
    {
        int status = 0;
        std::string body;
    };

    struct fd_guard
    {
        int fd;
        ~fd_guard()
        {
            if (fd >= 0)
                close(fd);
        }
    };

    /// One request to the sandbox with the default store's key: HTTP/1.1,
    /// Connection: close, the answer read to EOF. Never blocks for long: every
    /// send/recv has a 30 s timeout and the whole exchange a 60 s deadline.
    http_result exchange(const std::string& method, const std::string& path, const std::string& body) const
    {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        const std::string what = method + " " + path + ": ";
        // origin_ is http://127.0.0.1:PORT
        const auto colon = origin_.rfind(':');
        const auto host_begin = origin_.find("://");
        if (colon == std::string::npos || host_begin == std::string::npos)
            throw std::runtime_error(what + "unexpected origin " + origin_);
        const std::string host = origin_.substr(host_begin + 3, colon - host_begin - 3);
        const int port = std::atoi(origin_.c_str() + colon + 1);

        fd_guard s{socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
        if (s.fd < 0)
            throw std::runtime_error(what + "socket: " + std::strerror(errno));
        timeval tv{30, 0};
        setsockopt(s.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(s.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);  // bounds connect() too
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(static_cast<std::uint16_t>(port));
        if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1)
            throw std::runtime_error(what + "not an IPv4 address: " + host);
        if (connect(s.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
            throw std::runtime_error(what + "connect to " + origin_ + ": " + std::strerror(errno));

        std::string req = method + " " + path + " HTTP/1.1\r\nHost: " + host + ":" + std::to_string(port) +
                          "\r\nX-Auth-Token: " + api_key_ + "\r\nConnection: close\r\n";
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
            const ssize_t n = recv(s.fd, buf, sizeof buf, 0);
            if (n == 0)
                break;
            if (n < 0)
            {
                if (errno == EINTR)
                    continue;
                throw std::runtime_error(what + "recv: " +
                                         (errno == EAGAIN || errno == EWOULDBLOCK ? std::string("timed out")
                                                                                  : std::strerror(errno)));
            }
            in.append(buf, static_cast<std::size_t>(n));
        }
        // HTTP/1.1 201 Created\r\n...\r\n\r\nbody
        const auto head_end = in.find("\r\n\r\n");
        if (in.compare(0, 5, "HTTP/") != 0 || head_end == std::string::npos || in.find(' ') > head_end)
            throw std::runtime_error(what + "malformed answer: " + in);
        http_result r;
        r.status = std::atoi(in.c_str() + in.find(' ') + 1);
        r.body = in.substr(head_end + 4);
        return r;
    }

    std::string api_key_;
    std::string origin_;
    pid_t pid_ = -1;
};

}  // namespace dd_test

#endif
