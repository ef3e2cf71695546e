// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// main() of every test program: GoogleTest plus a hang guard. A watchdog
// thread fails the program, naming the test, when one test runs longer than
// DD_TEST_HANG_SECONDS (default 120 s: generous, it catches hangs, it measures
// nothing). The coroutine helpers of run.hpp have their own, shorter guard that
// fails just the test; this one catches everything else (a blocking call, a
// deadlock, a server that never answers).
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace {

class hang_guard : public ::testing::EmptyTestEventListener
{
public:
    explicit hang_guard(std::chrono::seconds limit) : limit_(limit), thread_([this] { watch(); }) {}
    ~hang_guard() override
    {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            done_ = true;
        }
        cv_.notify_all();
        thread_.join();
    }

    void OnTestStart(const ::testing::TestInfo& info) override
    {
        std::lock_guard<std::mutex> lock(mutex_);
        current_ = std::string(info.test_suite_name()) + "." + info.name();
        started_ = std::chrono::steady_clock::now();
        ++generation_;
        cv_.notify_all();
    }
    void OnTestEnd(const ::testing::TestInfo&) override
    {
        std::lock_guard<std::mutex> lock(mutex_);
        current_.clear();
        ++generation_;
        cv_.notify_all();
    }

private:
    void watch()
    {
        std::unique_lock<std::mutex> lock(mutex_);
        while (!done_)
        {
            if (current_.empty())
            {
                cv_.wait(lock);
                continue;
            }
            const auto gen = generation_;
            const auto until = started_ + limit_;
            cv_.wait_until(lock, until, [&] { return done_ || generation_ != gen; });
            if (!done_ && generation_ == gen && std::chrono::steady_clock::now() >= until)
            {
                std::fprintf(stderr, "\nHANG: test %s still running after %lld s (DD_TEST_HANG_SECONDS); aborting\n",
                             current_.c_str(), static_cast<long long>(limit_.count()));
                std::fflush(stderr);
                std::abort();
            }
        }
    }

    std::chrono::seconds limit_;
    std::mutex mutex_;
    std::condition_variable cv_;
    std::string current_;
    std::chrono::steady_clock::time_point started_{};
    unsigned long generation_ = 0;
    bool done_ = false;
    std::thread thread_;
};

}  // namespace

int main(int argc, char** argv)
{
    ::testing::InitGoogleTest(&argc, argv);
    long secs = 120;
    if (const char* e = std::getenv("DD_TEST_HANG_SECONDS"))
        secs = std::strtol(e, nullptr, 10);
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    // Owned by GoogleTest from here on; deleted at exit, which joins the watchdog.
    listeners.Append(new hang_guard(std::chrono::seconds(secs > 0 ? secs : 120)));
    return RUN_ALL_TESTS();
}
