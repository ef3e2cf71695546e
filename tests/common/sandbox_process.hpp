// Starts a digital-delivery-sandbox on 127.0.0.1 with a free port (--port 0)
// for one test or fixture, and stops it (SIGTERM, then SIGKILL) when destroyed.
//
//   sandbox_process sb({"--seed-orders", "50", "--rate-limit-window-seconds", "2"});
//   dd::client c(transport, {.base_url = sb.base_url(), .api_key = sb.api_key()});
//
// The executable's path comes from DIGITAL_DELIVERY_SANDBOX_EXE (a compile
// definition set by CMake/meson), or from the environment variable of the
// same name.
#ifndef DIGITAL_DELIVERY_TESTS_COMMON_SANDBOX_PROCESS_HPP
#define DIGITAL_DELIVERY_TESTS_COMMON_SANDBOX_PROCESS_HPP

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace dd_test {

class sandbox_process
{
public:
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
        if (pipe(out) != 0)
            throw std::runtime_error("pipe failed");
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, out[1], 1);
        posix_spawn_file_actions_addclose(&fa, out[0]);
        if (!std::getenv("DIGITAL_DELIVERY_SANDBOX_LOG"))
            posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
        const int rc = posix_spawn(&pid_, exe.c_str(), &fa, nullptr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&fa);
        close(out[1]);
        if (rc != 0)
        {
            close(out[0]);
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

    /// http://127.0.0.1:PORT
    const std::string& origin() const { return origin_; }
    /// http://127.0.0.1:PORT/api/v1/external
    std::string base_url() const { return origin_ + "/api/v1/external"; }
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

    void stop()
    {
        if (pid_ <= 0)
            return;
        kill(pid_, SIGTERM);
        for (int i = 0; i < 100; ++i)
        {
            int status;
            if (waitpid(pid_, &status, WNOHANG) == pid_)
            {
                pid_ = -1;
                return;
            }
            usleep(20000);
        }
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
        pid_ = -1;
    }

private:
    std::string api_key_;
    std::string origin_;
    pid_t pid_ = -1;
};

}  // namespace dd_test

#endif
