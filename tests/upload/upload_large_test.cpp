// A sparse file of exactly 2147483648 bytes (the API's maximum) through the
// Beast transport to the sandbox's storage, with peak RSS bounded.
//
// Bound: ru_maxrss may grow by at most 32 MiB over its value before the
// upload. The upload itself holds one 64 KiB transport chunk, a 64 KiB read
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
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <future>

namespace dd = digital_delivery;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

long max_rss_kib()
{
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

TEST(upload_large, sparse_2147483648_bytes_in_bounded_memory)
{
    const dd_test::temp_file f("", 2147483648u);  // sparse: no disk blocks
    ASSERT_FALSE(f.path.empty());

    dd_test::sandbox_process sb({"--no-rate-limit", "--seed-orders", "1"});
    asio::io_context ioc;
    dd::beast_transport transport(ioc.get_executor());
    dd::client client(transport, {.base_url = sb.base_url(), .api_key = sb.api_key()});

    dd::error_code ec;
    auto src = dd::file_source::open(f.path, ec);
    ASSERT_FALSE(ec);
    ASSERT_EQ(src->size(), 2147483648u);

    const long rss_before = max_rss_kib();
    std::uint64_t reports = 0, last = 0;
    bool monotonic = true;
    dd::diagnostics diag;
    auto fut = asio::co_spawn(
        ioc,
        dd::async_upload_asset(client, src, {.filename = "two-gib.bin"},
                               {.on_progress =
                                    [&](const dd::upload_progress& p) {
                                        ++reports;
                                        monotonic = monotonic && p.bytes_sent >= last;
                                        last = p.bytes_sent;
                                    },
                                .stall_timeout = 60s},
                               diag, asio::as_tuple(asio::use_awaitable)),
        asio::use_future);
    auto [uec, a] = dd_test::wait(ioc, fut, std::chrono::seconds(600));
    const long rss_after = max_rss_kib();

    ASSERT_FALSE(uec) << uec.message() << " " << diag.to_string();
    EXPECT_EQ(a.byte_size, 2147483648LL);
    EXPECT_TRUE(monotonic);
    EXPECT_EQ(last, 2147483648u);
    std::printf("2 GiB upload: %llu progress reports, peak RSS %ld KiB -> %ld KiB (+%ld KiB)\n",
                static_cast<unsigned long long>(reports), rss_before, rss_after, rss_after - rss_before);
    EXPECT_LE(rss_after - rss_before, 32 * 1024) << "peak RSS grew by more than 32 MiB";
}

}  // namespace
