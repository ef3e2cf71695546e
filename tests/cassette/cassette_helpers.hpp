// Shared by the cassette tests: a cassette path of the test's own, reading
// it back, and running an operation on the virtual clock.
#ifndef DIGITAL_DELIVERY_TESTS_CASSETTE_HELPERS_HPP
#define DIGITAL_DELIVERY_TESTS_CASSETTE_HELPERS_HPP

#include <digital_delivery/testing/virtual_clock.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <gtest/gtest.h>

#include <chrono>
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
