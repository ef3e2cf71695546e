// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// A sparse file of exactly 2147483648 bytes (the API's maximum) through the
// Beast transport to the sandbox's storage, with peak RSS bounded.
//
// Bound: the peak RSS during the upload (VmHWM, reset just before it through
// /proc/self/clear_refs, so that earlier tests of the program do not hide a
// peak) may exceed the RSS before it by at most 32 MiB. The upload itself holds one 64 KiB transport chunk, a 64 KiB read
// buffer and a few KiB of state; 32 MiB leaves room for allocator and
// Asio/OpenSSL first-use growth, and is 64x less than the body, so any
// accidental buffering of the body (even 2 %) fails the test.
#include <digital_delivery.hpp>
#include <digital_delivery/beast_transport.hpp>
#include <digital_delivery/upload.hpp>

#include "run.hpp"
#include "sandbox_process.hpp"
#include "test_data.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <future>

namespace dd = digital_delivery;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

// AddressSanitizer keeps freed memory in quarantine: RSS says nothing about
// the library there, so the bound is checked in the other builds only.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool rss_is_meaningful = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool rss_is_meaningful = false;
#else
constexpr bool rss_is_meaningful = true;
#endif
#else
constexpr bool rss_is_meaningful = true;
#endif

// A field of /proc/self/status in KiB ("VmRSS", "VmHWM"), -1 if absent.
long status_kib(const std::string& field)
{
    std::FILE* f = std::fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long v = -1;
    while (std::fgets(line, sizeof line, f))
        if (std::strncmp(line, field.c_str(), field.size()) == 0 && line[field.size()] == ':')
            v = std::strtol(line + field.size() + 1, nullptr, 10);
    std::fclose(f);
    return v;
}

// Resets the peak RSS (VmHWM) to the current RSS.
bool reset_peak_rss()
{
    const int fd = ::open("/proc/self/clear_refs", O_WRONLY);
    if (fd < 0)
        return false;
    const bool ok = ::write(fd, "5", 1) == 1;
    ::close(fd);
    return ok;
}

TEST(upload_large, sparse_2147483648_bytes_in_bounded_memory)
{
    const dd_test::temp_file f("", 2147483648u);  // sparse: no disk blocks
    ASSERT_FALSE(f.path.empty());

    const auto store = dd_test::sandbox_process::shared().create_store({"--no-rate-limit", "--seed-orders", "1"});
    asio::io_context ioc;
    dd::beast_transport transport(ioc.get_executor());
    dd::client client(transport, {.base_url = store.base_url, .api_key = store.api_key});

    dd::error_code ec;
    auto src = dd::file_source::open(f.path, ec);
    ASSERT_FALSE(ec);
    ASSERT_EQ(src->size(), 2147483648u);

    ASSERT_TRUE(reset_peak_rss()) << "cannot reset the peak RSS (/proc/self/clear_refs)";
    const long rss_before = status_kib("VmRSS");
    ASSERT_GT(rss_before, 0);
    std::uint64_t reports = 0, last = 0;
    bool monotonic = true;
    dd::diagnostics diag;
    auto fut = asio::co_spawn(
        ioc,
        dd::async_upload_asset(client, src, {.filename = "two-gib.bin"},
                               dd::upload_options{.on_progress =
                                    [&](const dd::upload_progress& p) {
                                        ++reports;
                                        monotonic = monotonic && p.bytes_sent >= last;
                                        last = p.bytes_sent;
                                    },
                                .stall_timeout = 60s},
                               diag, asio::as_tuple(asio::use_awaitable)),
        asio::use_future);
    auto [uec, a] = dd_test::wait(ioc, fut, std::chrono::seconds(600));
    const long rss_after = status_kib("VmHWM");

    ASSERT_FALSE(uec) << uec.message() << " " << diag.to_string();
    EXPECT_EQ(a.byte_size, 2147483648LL);
    EXPECT_TRUE(monotonic);
    EXPECT_EQ(last, 2147483648u);
    std::printf("2 GiB upload: %llu progress reports, peak RSS %ld KiB -> %ld KiB (+%ld KiB)\n",
                static_cast<unsigned long long>(reports), rss_before, rss_after, rss_after - rss_before);
    if (rss_is_meaningful)
    {
        EXPECT_LE(rss_after - rss_before, 32 * 1024) << "peak RSS during the upload exceeded the RSS before it by more than 32 MiB";
    }
}

}  // namespace
