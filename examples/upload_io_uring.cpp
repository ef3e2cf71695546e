//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// Uploads a file as an internal asset, reading it with io_uring.
// Usage: upload_io_uring BASE_URL API_KEY [FILE]   (without FILE: a 4 MiB temporary file)
//
// The io_uring opt-in is program-wide: build EVERY translation unit of the
// program with -DBOOST_ASIO_HAS_IO_URING (this example is one header-only TU)
// and link -luring. Without the macro, use dd::file_source (pread).

#include <digital_delivery.hpp>
#include <digital_delivery/beast_transport.hpp>
#include <digital_delivery/uring_file_source.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>
#include <string>

// Exit status when the file exists but io_uring cannot be used here (the
// kernel or its policy refuses it): the test suite reports a skip.
constexpr int io_uring_unavailable = 77;

namespace dd = digital_delivery;
namespace asio = boost::asio;

asio::awaitable<int> upload(dd::client& client, std::string path)
{
    dd::error_code ec;
    auto src = dd::uring_file_source::open(path, ec, co_await asio::this_coro::executor);
    if (!src)
    {
        std::fprintf(stderr, "cannot read %s with io_uring: %s\n", path.c_str(), ec.message().c_str());
        co_return ::access(path.c_str(), R_OK) == 0 ? io_uring_unavailable : 1;
    }
    dd::upload_asset_params meta;
    meta.filename = "io_uring.bin";
    meta.content_type = "application/octet-stream";
    dd::upload_options opts;
    opts.on_progress = [](const dd::upload_progress& p) {
        std::printf("\r%llu / %llu bytes", static_cast<unsigned long long>(p.bytes_sent), static_cast<unsigned long long>(p.total));
        std::fflush(stdout);
    };
    dd::diagnostics diag;
    auto [uec, asset] = co_await dd::async_upload_asset(client, src, meta, std::move(opts), diag, asio::as_tuple(asio::deferred));
    std::printf("\n");
    if (uec)
    {
        std::fprintf(stderr, "upload failed: %s\n", diag.to_string().c_str());
        co_return 1;
    }
    std::printf("uploaded asset %s: %lld bytes\n", asset.id.c_str(), static_cast<long long>(asset.byte_size));
    co_return 0;
}

int main(int argc, char** argv)
{
    if (argc < 3)
        return std::fprintf(stderr, "usage: %s BASE_URL API_KEY [FILE]\n", argv[0]), 2;
    std::string path = argc > 3 ? argv[3] : "";
    if (path.empty())
    {
        path = "/tmp/dd_io_uring_example_" + std::to_string(::getpid()) + ".bin";
        std::ofstream(path, std::ios::binary) << std::string(4 * 1024 * 1024, 'x');
    }
    asio::io_context ioc;
    dd::beast_transport transport(ioc.get_executor());
    dd::client client(transport, {.base_url = argv[1], .api_key = argv[2]});
    auto result = asio::co_spawn(ioc, upload(client, path), asio::use_future);
    while (result.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
        ioc.run_one_for(std::chrono::milliseconds(100));
    if (argc <= 3)
        std::remove(path.c_str());
    return result.get();
}
