// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// uring_file_source: the io_uring opt-in. This test program is built with
// BOOST_ASIO_HAS_IO_URING in every translation unit (it is one TU, header-only
// mode, so the library is compiled with the same switch) and links liburing.
// Skipped, with the reason, when the kernel refuses io_uring.
#include <digital_delivery.hpp>
#include <digital_delivery/beast_transport.hpp>
#include <digital_delivery/upload.hpp>
#include <digital_delivery/uring_file_source.hpp>

#include "run.hpp"
#include "sandbox_process.hpp"
#include "test_data.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <gtest/gtest.h>
#include <liburing.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <future>
#include <string>

#if !defined(BOOST_ASIO_HAS_IO_URING) || !defined(BOOST_ASIO_HAS_FILE)
#error "build this test with BOOST_ASIO_HAS_IO_URING"
#endif

namespace dd = digital_delivery;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

bool io_uring_usable()
{
    io_uring ring;
    if (io_uring_queue_init(4, &ring, 0) < 0)
        return false;
    io_uring_queue_exit(&ring);
    return true;
}

using dd_test::pattern;

using dd_test::temp_file;

// Reads `src` to the end in `chunk`-byte reads: the bytes and the final error.
std::pair<std::string, dd::error_code> read_all(asio::io_context& ioc, dd::body_source& src, std::size_t chunk)
{
    std::string out;
    std::vector<char> buf(chunk);
    dd::error_code last;
    bool done = false;
    std::function<void()> next = [&] {
        src.async_read_some(asio::buffer(buf), dd::body_source::read_handler([&](dd::error_code ec, std::size_t n) {
            if (ec)
            {
                last = ec;
                done = true;
                return;
            }
            out.append(buf.data(), n);
            next();
        }));
    };
    next();
    ioc.restart();
    dd_test::run_until(ioc, [&] { return done; });
    return {out, last};
}

TEST(uring_file_source, reads_every_byte_then_eof_rewinds_and_reports_a_shrunk_file)
{
    if (!io_uring_usable())
        GTEST_SKIP() << "io_uring_queue_init failed: the kernel or its policy refuses io_uring here";
    asio::io_context ioc;
    const std::string data = pattern(3 * 1024 * 1024 + 123);
    temp_file f(data);
    dd::error_code ec;
    auto src = dd::uring_file_source::open(f.path, ec, ioc.get_executor());
    ASSERT_FALSE(ec) << ec.message();
    ASSERT_TRUE(src);
    EXPECT_EQ(src->size(), data.size());

    auto [bytes, end] = read_all(ioc, *src, 64 * 1024);
    EXPECT_EQ(end, asio::error::eof);
    EXPECT_TRUE(bytes == data);
    EXPECT_EQ(src->offset(), data.size());

    ASSERT_FALSE(src->rewind());
    auto [again, end2] = read_all(ioc, *src, 1000);  // odd chunk size
    EXPECT_EQ(end2, asio::error::eof);
    EXPECT_TRUE(again == data);

    // The file shrinks after open: a typed error, not a short body.
    ASSERT_FALSE(src->rewind());
    ASSERT_EQ(truncate(f.path.c_str(), 1000), 0);
    auto [part, end3] = read_all(ioc, *src, 64 * 1024);
    EXPECT_EQ(end3, dd::client_errc::source_size_mismatch);
    EXPECT_EQ(part, data.substr(0, 1000));

    // Missing files and directories are refused at open.
    EXPECT_FALSE(dd::uring_file_source::open("/nonexistent/dd-uring", ec, ioc.get_executor()));
    EXPECT_EQ(ec, dd::client_errc::source_unreadable);
    EXPECT_FALSE(dd::uring_file_source::open("/tmp", ec, ioc.get_executor()));
    EXPECT_EQ(ec, dd::client_errc::source_unreadable);
}

TEST(uring_file_source, uploads_through_the_beast_transport)
{
    if (!io_uring_usable())
        GTEST_SKIP() << "io_uring_queue_init failed: the kernel or its policy refuses io_uring here";
    const auto store = dd_test::sandbox_process::shared().create_store({"--no-rate-limit", "--seed-orders", "1"});
    asio::io_context ioc;
    dd::beast_transport transport(ioc.get_executor());
    dd::client client(transport, {.base_url = store.base_url, .api_key = store.api_key});
    const std::string data = pattern(5 * 1024 * 1024 + 7);
    temp_file f(data);
    dd::error_code ec;
    auto src = dd::uring_file_source::open(f.path, ec, ioc.get_executor());
    ASSERT_FALSE(ec) << ec.message();

    std::uint64_t last = 0;
    dd::diagnostics diag;
    dd::upload_options opts;
    opts.on_progress = [&](const dd::upload_progress& p) { last = p.bytes_sent; };
    opts.progress_interval = 0ms;
    dd::upload_asset_params meta;
    meta.filename = "uring.bin";
    meta.content_type = "application/octet-stream";
    auto fut = asio::co_spawn(
        ioc, dd::async_upload_asset(client, src, meta, std::move(opts), diag, asio::as_tuple(asio::use_awaitable)),
        asio::use_future
    );
    auto [uec, asset] = dd_test::wait(ioc, fut);
    ASSERT_FALSE(uec) << uec.message() << " " << diag.to_string();
    EXPECT_EQ(asset.byte_size, static_cast<std::int64_t>(data.size()));
    EXPECT_EQ(asset.filename.value_or(""), "uring.bin");
    EXPECT_EQ(last, data.size());
    EXPECT_EQ(src->offset(), data.size());
}

}  // namespace
