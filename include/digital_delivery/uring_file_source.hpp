//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_URING_FILE_SOURCE_HPP
#define DIGITAL_DELIVERY_URING_FILE_SOURCE_HPP

/// \file
/// An upload source that reads a regular file through io_uring
/// (boost::asio::random_access_file) instead of pread().
///
/// Program-wide opt-in: it exists only when BOOST_ASIO_HAS_IO_URING is
/// defined, which Boost 1.81 requires to be the same in every translation unit
/// of the program (it changes Asio's class layouts), the one compiling the
/// library (src.hpp, or every TU in header-only mode) included, and the
/// program links liburing (`-luring`; Debian: liburing-dev). Without the
/// macro this header declares nothing; file_source (pread) is the default.
/// Not part of the umbrella header.

#include <digital_delivery/detail/transparent_handler.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/http_message.hpp>

#include <boost/asio/any_io_executor.hpp>

#if defined(BOOST_ASIO_HAS_IO_URING) && defined(BOOST_ASIO_HAS_FILE)

#include <boost/asio/append.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/random_access_file.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

namespace digital_delivery {

namespace detail {

// Advances the source's offset, maps the file's errors, then calls the
// transport's handler (transparent: its executor, allocator and cancellation slot).
struct uring_read_handler
{
    using inner_handler_type = body_source::read_handler;
    inner_handler_type handler{};
    std::uint64_t* offset{};

    void operator()(error_code ec, std::size_t n)
    {
        if (!ec)
            *offset += n;
        else if (ec == boost::asio::error::eof)
            ec = client_errc::source_size_mismatch;  // the file shrank since open()
        else if (ec != boost::asio::error::operation_aborted)
            ec = client_errc::source_unreadable;
        std::move(handler)(ec, n);
    }
};

}  // namespace detail

/// A regular file read with io_uring: each async_read_some is one
/// `async_read_some_at` at the current offset, completed on `executor`'s
/// io_context. Rewindable. The same contract as file_source (exact size taken
/// at open; a file that shrinks fails with client_errc::source_size_mismatch).
class uring_file_source final : public body_source
{
public:
    /// Opens `path` for reading on `executor`'s io_context. On failure returns
    /// null and sets `ec` (client_errc::source_unreadable: missing, not a
    /// regular file, or io_uring unavailable).
    /// \param path The file's path.
    /// \param ec Set on failure, cleared on success.
    /// \param executor Its io_context runs the reads.
    /// \return The source, or null on failure.
    static std::shared_ptr<uring_file_source> open(const std::string& path, error_code& ec,
                                                   const boost::asio::any_io_executor& executor)
    {
        struct stat st;
        if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        {
            ec = client_errc::source_unreadable;
            return nullptr;
        }
        try
        {
            boost::asio::random_access_file f(executor);
            error_code oec;
            f.open(path, boost::asio::random_access_file::read_only, oec);
            const std::uint64_t size = oec ? 0 : f.size(oec);
            if (oec)
            {
                ec = client_errc::source_unreadable;
                return nullptr;
            }
            ec = {};
            return std::shared_ptr<uring_file_source>(new uring_file_source(std::move(f), size));
        }
        catch (const boost::system::system_error&)
        {
            ec = client_errc::source_unreadable;  // the io_uring service could not start
            return nullptr;
        }
    }

    std::uint64_t size() const noexcept override { return size_; }

    void async_read_some(boost::asio::mutable_buffer buf, read_handler handler) override
    {
        if (offset_ >= size_ || buf.size() == 0)
        {
            const error_code ec = offset_ >= size_ ? error_code(boost::asio::error::eof) : error_code();
            boost::asio::post(file_.get_executor(), boost::asio::append(std::move(handler), ec, std::size_t(0)));
            return;
        }
        const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size_ - offset_));
        file_.async_read_some_at(offset_, boost::asio::buffer(buf.data(), want),
                                 detail::uring_read_handler{std::move(handler), &offset_});
    }

    error_code rewind() override
    {
        offset_ = 0;
        return {};
    }

    /// \return Bytes read since the last rewind.
    std::uint64_t offset() const noexcept { return offset_; }

private:
    uring_file_source(boost::asio::random_access_file f, std::uint64_t size) : file_(std::move(f)), size_(size) {}

    boost::asio::random_access_file file_;
    std::uint64_t size_ = 0;
    std::uint64_t offset_ = 0;
};

}  // namespace digital_delivery

#endif  // BOOST_ASIO_HAS_IO_URING && BOOST_ASIO_HAS_FILE

#endif
