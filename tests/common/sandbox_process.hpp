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

#include <string>
#include <utility>
#include <vector>

namespace dd_test {

class sandbox_process : public digital_delivery::testing::sandbox
{
public:
    /// A store created with create_store(): id, api_key, base_url, origin.
    using store = digital_delivery::testing::sandbox::store;

    explicit sandbox_process(std::vector<std::string> extra_args = {}, std::string api_key = "sandbox-key")
        : sandbox(std::move(extra_args), std::move(api_key))
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
};

}  // namespace dd_test

#endif
