// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The tests' sandbox: digital_delivery::testing::sandbox (the public fixture,
// <digital_delivery/testing/sandbox.hpp>) plus the program's one shared
// process. It starts a digital-delivery-sandbox on 127.0.0.1 with a free port
// (--port 0), and stops it (SIGTERM, then SIGKILL if it has not exited within
// 10 s) when destroyed.
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
// The executable's path comes from the environment variable
// DIGITAL_DELIVERY_SANDBOX_EXE, or from the compile definition of the same name
// (set by CMake/meson for the test programs that use the sandbox).
#ifndef DIGITAL_DELIVERY_TESTS_COMMON_SANDBOX_PROCESS_HPP
#define DIGITAL_DELIVERY_TESTS_COMMON_SANDBOX_PROCESS_HPP

#include <digital_delivery/testing/sandbox.hpp>

#include <sys/types.h>
#include <unistd.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace dd_test {

/// The request log of every sandbox_process of the test program: one file
/// (--log-file), a line per request with the error of a refusal, so that a
/// test program can check what the server saw (sandbox_harness.hpp checks
/// that no request carried a malformed body).
class sandbox_request_log
{
public:
    /// Removed when the program exits (after the sandboxes that write it
    /// have stopped: they are made after the first call, so destroyed before).
    static const std::string& path()
    {
        struct removed_at_exit
        {
            std::string p;
            pid_t owner = ::getpid();  // not by a forked child that exits
            ~removed_at_exit()
            {
                std::error_code ec;
                if (::getpid() == owner)
                    std::filesystem::remove(p, ec);
            }
        };
        static const removed_at_exit file{
            (std::filesystem::temp_directory_path() / ("dd-sandbox-requests-" + std::to_string(::getpid()) + ".log"))
                .string()};
        return file.p;
    }

    /// The lines that contain `what`.
    static std::vector<std::string> lines_containing(std::string_view what)
    {
        std::vector<std::string> found;
        std::ifstream in(path());
        for (std::string line; std::getline(in, line);)
            if (line.find(what) != std::string::npos)
                found.push_back(line);
        return found;
    }
};

class sandbox_process : public digital_delivery::testing::sandbox
{
public:
    /// A store created with create_store(): id, api_key, base_url, origin.
    using store = digital_delivery::testing::sandbox::store;

    explicit sandbox_process(std::vector<std::string> extra_args = {}, std::string api_key = "sandbox-key")
        : sandbox(logged(std::move(extra_args)), std::move(api_key))
    {
    }

    /// The test program's one sandbox: started on first use with
    /// --no-rate-limit --seed-orders 1 (its default store), stopped at exit.
    static sandbox_process& shared()
    {
        static sandbox_process instance({"--no-rate-limit", "--seed-orders", "1"});
        return instance;
    }

    /// The executable the tests start (see digital_delivery::testing::sandbox::find_executable).
    static std::string executable() { return find_executable(); }

private:
    static std::vector<std::string> logged(std::vector<std::string> args)
    {
        args.insert(args.begin(), {"--log-file", sandbox_request_log::path()});
        return args;
    }
};

}  // namespace dd_test

#endif
