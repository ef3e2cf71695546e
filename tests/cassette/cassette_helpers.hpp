// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Shared by the cassette tests: a cassette path of the test's own, reading
// it back, and running an operation on the virtual clock.
#ifndef DIGITAL_DELIVERY_TESTS_CASSETTE_HELPERS_HPP
#define DIGITAL_DELIVERY_TESTS_CASSETTE_HELPERS_HPP

#include <digital_delivery.hpp>
#include <digital_delivery/testing/cassette.hpp>
#include <digital_delivery/testing/fake_transport.hpp>
#include <digital_delivery/testing/virtual_clock.hpp>

#include <boost/asio/append.hpp>
#include <boost/asio/post.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>

#include <unistd.h>

namespace dd_cassette {

/// A cassette path in the temporary directory, named after the test; no
/// file there at first, removed at the end.
struct cassette_file
{
    std::string path;

    cassette_file()
    {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        path = (std::filesystem::temp_directory_path() /
                ("dd_cassette_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" + std::to_string(::getpid()) + ".json"))
                   .string();
        std::filesystem::remove(path);
    }
    cassette_file(const cassette_file&) = delete;
    cassette_file& operator=(const cassette_file&) = delete;
    ~cassette_file() { std::filesystem::remove(path); }

    std::string text() const
    {
        std::ifstream f(path, std::ios::binary);
        std::stringstream ss;
        ss << f.rdbuf();
        return ss.str();
    }
};

namespace dd = digital_delivery;
namespace asio = boost::asio;

/// Payloads and a client for the fake transport.
namespace fixtures {

inline constexpr const char* base_url = "https://dd.example.test/api/v1/external";
inline constexpr const char* put_url =
    "https://storage.example/bucket/assets/a1/u/manual.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256"
    "&X-Amz-Credential=AKIDEXAMPLE7Q%2F20261126%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature=5f1e0c9a7b3d2e4f6a8b";

inline std::string api(const std::string& rel) { return "/api/v1/external" + rel; }

inline std::string order_json(const std::string& id, const std::string& email)
{
    return R"({"order":{"id":")" + id + R"(","name":"#1001","email":")" + email +
           R"(","created_at":"2026-01-01T00:00:00Z","download_count":0}})";
}

inline std::string asset_json(std::int64_t size)
{
    return R"({"id":"a1","type":"internal","name":null,"filename":"manual.pdf","external_url":null,)"
           R"("content_type":"application/pdf","byte_size":)" +
           std::to_string(size) +
           R"(,"watermark_asset":false,"autogenerate_licence_key":false,"created_at":"2026-11-22T10:00:00Z","updated_at":"2026-11-22T10:00:00Z"})";
}

inline std::string with_upload(std::int64_t size, std::chrono::system_clock::time_point expires)
{
    return R"({"asset":)" + asset_json(size) + R"(,"upload":{"method":"PUT","url":")" + put_url +
           R"(","headers":{"Content-Type":"application/pdf"},"expires_at":")" +
           dd::format_timestamp(std::chrono::floor<std::chrono::seconds>(expires)) + R"("}})";
}

// A client of the cassette's transport; each test its own API key (the
// process shares a rate limiter per key).
inline dd::client make_client(dd::any_transport t, const std::string& key, bool retry = false)
{
    dd::client_params p{.base_url = base_url, .api_key = key};
    p.retry.enabled = retry;
    return dd::client(std::move(t), std::move(p));
}

}  // namespace fixtures

/// A body of `size` bytes made on the fly, never held.
class generated_source final : public digital_delivery::body_source
{
public:
    generated_source(std::uint64_t size, boost::asio::any_io_executor ex) : size_(size), ex_(std::move(ex)) {}
    std::uint64_t size() const noexcept override { return size_; }
    void async_read_some(boost::asio::mutable_buffer buf, read_handler h) override
    {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size_ - offset_));
        // Each 4 KiB block is one byte value: cheap to make, not constant.
        auto* p = static_cast<unsigned char*>(buf.data());
        for (std::size_t i = 0; i < n;)
        {
            const std::uint64_t at = offset_ + i;
            const std::size_t run = static_cast<std::size_t>(std::min<std::uint64_t>(n - i, 4096 - at % 4096));
            std::memset(p + i, static_cast<int>((at / 4096 * 31) % 251), run);
            i += run;
        }
        offset_ += n;
        if (n == 0)
            boost::asio::post(ex_, boost::asio::append(std::move(h), digital_delivery::error_code(boost::asio::error::eof), std::size_t(0)));
        else
            boost::asio::post(ex_, boost::asio::append(std::move(h), digital_delivery::error_code(), n));
    }
    digital_delivery::error_code rewind() override
    {
        offset_ = 0;
        return {};
    }

private:
    std::uint64_t size_, offset_ = 0;
    boost::asio::any_io_executor ex_;
};


/// An io_context, a cassette file, a fake transport to record from.
class cassette_fixture : public ::testing::Test
{
protected:
    boost::asio::io_context ioc;
    cassette_file file;
    std::shared_ptr<digital_delivery::testing::fake_transport> fake = std::make_shared<digital_delivery::testing::fake_transport>(ioc.get_executor());

    std::shared_ptr<digital_delivery::testing::recording_transport> recorder(digital_delivery::testing::cassette_options o = {})
    {
        return std::make_shared<digital_delivery::testing::recording_transport>(digital_delivery::any_transport(fake), file.path, std::move(o));
    }
    std::shared_ptr<digital_delivery::testing::replay_transport> player(digital_delivery::testing::cassette_options o = {})
    {
        return std::make_shared<digital_delivery::testing::replay_transport>(ioc.get_executor(), file.path, std::move(o));
    }
};

/// co_spawns `aw` and runs `ioc` on the virtual clock (steps of `step`) until
/// it completes, at most `limit` of virtual time; returns its result.
template <class Awaitable>
auto run_virtual(digital_delivery::testing::virtual_clock& vc, boost::asio::io_context& ioc, Awaitable aw,
                 std::chrono::milliseconds limit = std::chrono::minutes(10), std::chrono::milliseconds step = std::chrono::milliseconds(100))
{
    auto fut = boost::asio::co_spawn(ioc, std::move(aw), boost::asio::use_future);
    const bool done =
        vc.run_until(ioc, [&] { return fut.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }, limit, step);
    EXPECT_TRUE(done) << "the operation did not complete within " << limit.count() << " ms of virtual time";
    if (!done)
        throw std::runtime_error("operation did not complete");
    return fut.get();
}

}  // namespace dd_cassette

#endif
