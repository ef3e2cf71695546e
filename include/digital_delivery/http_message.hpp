//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_HTTP_MESSAGE_HPP
#define DIGITAL_DELIVERY_HTTP_MESSAGE_HPP

/// \file
/// The plain HTTP request/response types that cross the transport boundary.
/// They depend on nothing but the standard library and Asio's type-erased
/// handler, so a custom transport never sees Beast and the client never sees
/// the transport's HTTP library.

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/string_ref.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/buffer.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace digital_delivery {

/// The time limit of one request attempt when nobody set one (30 s): the
/// default of client_params::request_timeout and of
/// beast_transport_params::request_timeout (an http_request whose timeout is
/// zero), one value for both.
inline constexpr std::chrono::milliseconds default_request_timeout{30'000};

/// The User-Agent sent when nobody set one ("digital_delivery/MAJOR.MINOR"):
/// the default of client_params::user_agent and of
/// beast_transport_params::user_agent.
inline constexpr const char* default_user_agent = "digital_delivery/0.1";

/// An HTTP request method.
enum class http_method
{
    get,      ///< GET.
    post,     ///< POST.
    put,      ///< PUT.
    patch,    ///< PATCH.
    delete_,  ///< DELETE.
};

/// The method's name.
/// \param m The method.
/// \return "GET", "POST", ... (static storage).
DIGITAL_DELIVERY_DECL std::string_view to_string(http_method m) noexcept;

/// An ordered list of HTTP header fields with case-insensitive lookup. Names
/// and values live in one contiguous buffer (one allocation for a typical
/// response instead of one per field).
class http_headers
{
public:
    /// A field you give (request_options::extra_headers): views of your
    /// strings; a temporary std::string is refused (dd::string_ref).
    struct field
    {
        string_ref name{};   ///< The field's name.
        string_ref value{};  ///< The field's value.
    };

    /// A field you read (iteration, operator[]): views of this object's
    /// buffer, valid while it lives.
    struct field_view
    {
        std::string_view name{};   ///< The field's name, as received.
        std::string_view value{};  ///< The field's value.
    };

    /// Appends a field (duplicates allowed, as on the wire).
    /// \param name The field's name.
    /// \param value The field's value.
    DIGITAL_DELIVERY_DECL void add(std::string_view name, std::string_view value);

    /// Replaces every field called `name` by one with `value` (appends if absent).
    /// \param name The field's name (case-insensitive).
    /// \param value The field's value.
    DIGITAL_DELIVERY_DECL void set(std::string_view name, std::string_view value);

    /// Removes every field called `name`.
    /// \param name The field's name (case-insensitive).
    DIGITAL_DELIVERY_DECL void erase(std::string_view name);

    /// The first field called `name` (case-insensitive), if any.
    /// \param name The field's name.
    /// \return Its value (a view of this object's buffer), or nullopt.
    DIGITAL_DELIVERY_DECL std::optional<std::string_view> find(std::string_view name) const noexcept;

    /// \return The number of fields.
    std::size_t size() const noexcept { return entries_.size(); }
    /// \return Whether there is no field.
    bool empty() const noexcept { return entries_.empty(); }
    /// \param i An index, less than size().
    /// \return The i-th field in wire order.
    field_view operator[](std::size_t i) const noexcept
    {
        const entry& e = entries_[i];
        return {std::string_view(data_).substr(e.name_off, e.name_len), std::string_view(data_).substr(e.value_off, e.value_len)};
    }
    /// Removes every field.
    void clear() noexcept
    {
        data_.clear();
        entries_.clear();
    }
    /// Reserve room for `fields` fields totalling `bytes` characters.
    /// \param fields The number of fields.
    /// \param bytes The characters of their names and values.
    void reserve(std::size_t fields, std::size_t bytes)
    {
        entries_.reserve(fields);
        data_.reserve(bytes);
    }

    /// Iteration yields `field_view` values in wire order.
    class iterator
    {
    public:
        using value_type = field_view;          ///< What dereferencing gives.
        using difference_type = std::ptrdiff_t;  ///< As std::forward_iterator requires.
        /// A singular iterator.
        iterator() = default;
        /// \param h The headers. \param i The field's index (size() for the end).
        iterator(const http_headers* h, std::size_t i) noexcept : h_(h), i_(i) {}
        /// \return The field.
        field_view operator*() const noexcept { return (*h_)[i_]; }
        /// Moves to the next field. \return This iterator.
        iterator& operator++() noexcept
        {
            ++i_;
            return *this;
        }
        /// Moves to the next field. \return The iterator before the move.
        iterator operator++(int) noexcept
        {
            auto t = *this;
            ++i_;
            return t;
        }
        /// \param o An iterator of the same headers. \return Whether both are at the same field.
        bool operator==(const iterator& o) const noexcept { return i_ == o.i_; }

    private:
        const http_headers* h_{};
        std::size_t i_{};
    };
    /// \return An iterator to the first field.
    iterator begin() const noexcept { return {this, 0}; }
    /// \return An iterator past the last field.
    iterator end() const noexcept { return {this, entries_.size()}; }

private:
    struct entry
    {
        std::uint32_t name_off, name_len, value_off, value_len;
    };
    std::string data_;
    std::vector<entry> entries_;
};

/// A request body produced piece by piece (uploads of up to 2 GB). The
/// transport sends exactly size() bytes with `Content-Length` (never chunked),
/// calling async_read_some, one read at a time, until the source reports end
/// of data; a read completes through the read handler's associated executor,
/// never inline. Only the client calls rewind(): a transport never sends a
/// stream twice.
///
/// Implementations: file and memory sources in <digital_delivery/upload.hpp>;
/// users may provide their own.
class body_source
{
public:
    /// The completion handler of async_read_some.
    using read_handler = boost::asio::any_completion_handler<void(error_code, std::size_t)>;

    /// Destroys the source.
    virtual ~body_source() = default;

    /// Exact number of bytes the body has.
    /// \return The body's size.
    virtual std::uint64_t size() const noexcept = 0;

    /// Reads up to buffer_size(buf) bytes into `buf`. Completes with the byte
    /// count (> 0) or with boost::asio::error::eof once everything was read.
    /// Must not complete inline (post if the data is already available).
    /// \param buf Where to read; valid until the handler is called.
    /// \param handler Called with the error and the byte count.
    virtual void async_read_some(boost::asio::mutable_buffer buf, read_handler handler) = 0;

    /// Starts again from the first byte (for a retried upload).
    /// \return Empty, or why the source cannot start again.
    virtual error_code rewind() = 0;
};

/// Called by a transport as the request body goes out: bytes written so far.
using body_progress_fn = std::function<void(std::uint64_t bytes_sent)>;

/// Everything a transport needs to send one request.
struct http_request
{
    http_method method = http_method::get;  ///< The method.

    /// Absolute URL: scheme://host[:port]/path[?query]. Sent byte-exact (a
    /// presigned query string is not re-encoded).
    std::string url{};

    /// Fields to send, in order. The transport adds Host, Content-Length
    /// (always for POST, PUT and PATCH, even 0) and, if absent, User-Agent
    /// (default_user_agent); it adds nothing else: no Accept, Expect,
    /// Content-Type (docs/transport.md, "What reaches the wire").
    http_headers headers{};

    /// The body when `body_stream` is null (may be empty).
    std::string body{};

    /// A streaming body (uploads). When set, `body` is ignored.
    std::shared_ptr<body_source> body_stream{};

    /// Progress of a streaming body; may be empty. Called with the body bytes
    /// written to the connection so far (monotonic; the last call says the
    /// whole size), on the transport's executor.
    body_progress_fn on_body_progress{};

    /// True when the transport may send the request again, once, on a fresh
    /// connection if a pooled connection turns out to be closed before any
    /// response byte. False: the transport never writes it twice, for any
    /// reason; a request with a body_stream is never written twice either
    /// (docs/transport.md, "Never re-send").
    bool idempotent = false;

    /// Whole-request timeout for this request; zero means the transport's
    /// default (beast_transport_params::request_timeout, default_request_timeout).
    std::chrono::milliseconds timeout{0};
};

/// What a transport completes with: the final response (status 100-599, an
/// interim 1xx skipped). On a transport error the status is 0 and the body
/// is the transport's one-line explanation or empty (docs/transport.md,
/// "Explaining a failure").
struct http_response
{
    unsigned status = 0;     ///< The status code; 0 on a transport error.
    http_headers headers{};  ///< The response's header fields.
    std::string body{};      ///< The whole body.
};

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/http/http_message.ipp>
#endif

#endif
