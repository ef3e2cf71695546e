//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_TRANSPORT_HPP
#define DIGITAL_DELIVERY_TRANSPORT_HPP

/// \file
/// The transport concept and its type-erased holder.
///
/// A transport sends one http_request and completes with an http_response.
/// The contract, each rule with its reason, is docs/transport.md, "The
/// contract" (testing::run_transport_conformance checks it):
///
///  - `get_executor()`: the I/O executor the transport runs on;
///  - `async_send(http_request, transport_handler)`: sends exactly the
///    request's bytes and completes exactly once with (error_code,
///    http_response): never inline from the call (post instead), through the
///    handler's associated executor, clearing the handler's cancellation slot
///    there; on terminal cancellation (from another thread) with
///    boost::asio::error::operation_aborted;
///  - a failure before any byte of the request was written carries one of
///    the not-sent codes (is_request_not_sent, docs/transport.md "The
///    not-sent codes"), any later failure none of them;
///  - a request whose `idempotent` is false, or with a body_stream, is never
///    written twice;
///  - on failure the response's body may carry a one-line explanation (the
///    client copies it to diagnostics::client_message).
///
/// The client only ever holds an any_transport, so no transport template is
/// instantiated at a call site.

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/http_message.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/deferred.hpp>

#include <concepts>
#include <memory>
#include <type_traits>
#include <utility>

namespace digital_delivery {

/// The completion handler a transport receives.
using transport_handler = boost::asio::any_completion_handler<void(error_code, http_response)>;

/// Satisfied by any type that can carry our requests.
template <class T>
concept transport = requires(T& t, http_request req, transport_handler h) {
    { t.get_executor() } -> std::convertible_to<boost::asio::any_io_executor>;
    { t.async_send(std::move(req), std::move(h)) } -> std::same_as<void>;
};

namespace detail {
struct transport_base
{
    virtual ~transport_base() = default;
    virtual boost::asio::any_io_executor get_executor() = 0;
    virtual void async_send(http_request&& req, transport_handler h) = 0;
};

template <class Ptr>
struct transport_holder final : transport_base
{
    Ptr p{};
    explicit transport_holder(Ptr ptr) : p(std::move(ptr)) {}
    boost::asio::any_io_executor get_executor() override { return p->get_executor(); }
    void async_send(http_request&& req, transport_handler h) override { p->async_send(std::move(req), std::move(h)); }
};
}  // namespace detail

/// A shared, type-erased transport. Copies refer to the same transport.
class any_transport
{
public:
    /// No transport (operator bool is false).
    any_transport() = default;

    /// Takes ownership of a transport object.
    /// \param t The transport, moved in.
    template <transport T>
        requires(!std::is_same_v<std::decay_t<T>, any_transport>)
    any_transport(T t)  // NOLINT(google-explicit-constructor)
        : impl_(std::make_shared<detail::transport_holder<std::shared_ptr<T>>>(std::make_shared<T>(std::move(t))))
    {
    }

    /// Shares a transport the caller keeps a handle to (e.g. a fake_transport
    /// the test also inspects).
    /// \param t The transport.
    template <transport T>
    any_transport(std::shared_ptr<T> t)  // NOLINT(google-explicit-constructor)
        : impl_(std::make_shared<detail::transport_holder<std::shared_ptr<T>>>(std::move(t)))
    {
    }

    /// \return Whether this holds a transport.
    explicit operator bool() const noexcept { return impl_ != nullptr; }

    /// \return The transport's executor.
    boost::asio::any_io_executor get_executor() const { return impl_->get_executor(); }
    /// Sends through the transport.
    /// \param req The request.
    /// \param h Called with the response or the transport's error.
    void async_send(http_request req, transport_handler h) const { impl_->async_send(std::move(req), std::move(h)); }

private:
    std::shared_ptr<detail::transport_base> impl_;
};

static_assert(transport<any_transport>);

namespace detail {
struct send_initiation
{
    template <class Handler, class T>
    void operator()(Handler&& h, T t, http_request req) const
    {
        t.async_send(std::move(req), transport_handler(std::forward<Handler>(h)));
    }
};
}  // namespace detail

/// The transport's own entry point, not an operation of the client: sends
/// one request through any transport with any completion token (default
/// `deferred`), e.g. to reach a URL outside the API such as a presigned
/// storage URL: `auto [ec, r] = co_await dd::async_transport_send(t, req, as_tuple(deferred));`
/// Nothing is added to the request: no authentication, no rate limiting, no
/// retries, no deadline, no diagnostics; the request's own `timeout` applies.
/// \param t The transport.
/// \param req The request.
/// \param token The completion token.
/// \return What the completion token makes of the operation.
template <transport T, class Token = boost::asio::deferred_t>
auto async_transport_send(const T& t, http_request req, Token&& token = {})
{
    return boost::asio::async_initiate<Token, void(error_code, http_response)>(detail::send_initiation{}, token, t, std::move(req));
}

}  // namespace digital_delivery

#endif
