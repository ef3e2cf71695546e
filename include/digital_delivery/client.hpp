//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_CLIENT_HPP
#define DIGITAL_DELIVERY_CLIENT_HPP

/// \file
/// The client: configuration + a transport. The request functions
/// (<digital_delivery/endpoints.hpp>) take a client as their first argument.

#include <digital_delivery/client_params.hpp>
#include <digital_delivery/detail/client_impl.hpp>
#include <digital_delivery/rate_limit.hpp>
#include <digital_delivery/transport.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <memory>
#include <utility>

namespace digital_delivery {

namespace detail {
struct access;
}

/// A client of the Digital Delivery API.
///
/// \par Thread safety
/// Distinct objects: safe. Shared objects: request functions may be called
/// concurrently from several threads (the client holds no per-request state;
/// the transport synchronises itself).
///
/// \par Object lifetimes
/// Operations in flight keep the client's internals alive: destroying the
/// client object does not invalidate them. A `diagnostics&` passed to a
/// request function must stay alive until the operation completes.
class client
{
public:
    /// The executor of the client's operations: the transport's.
    using executor_type = boost::asio::any_io_executor;

    /// Throws error_with_diagnostics (client_errc::invalid_base_url or
    /// invalid_argument) when the configuration is unusable.
    /// \param transport How requests are sent (e.g. beast_transport).
    /// \param params The configuration.
    client(any_transport transport, client_params params)
        : impl_(std::make_shared<detail::client_impl>(std::move(transport), std::move(params)))
    {
    }

    /// Moves a client; the moved-from object may only be destroyed or assigned to.
    client(client&&) noexcept = default;
    /// Moves a client; the moved-from object may only be destroyed or assigned to.
    /// \return This object.
    client& operator=(client&&) noexcept = default;
    client(const client&) = delete;
    client& operator=(const client&) = delete;

    /// \return The transport's executor.
    executor_type get_executor() const { return impl_->get_executor(); }

    /// \return The configuration given at construction.
    const client_params& params() const noexcept { return impl_->params(); }

    /// \return The X-RateLimit-* headers of the most recent response.
    rate_limit_snapshot rate_limit() const { return impl_->rate_limit(); }

private:
    friend struct detail::access;
    std::shared_ptr<detail::client_impl> impl_;
};

namespace detail {

/// How the operations reach a client's internals (not part of the API).
struct access
{
    static const std::shared_ptr<client_impl>& impl(const client& c) noexcept { return c.impl_; }
};

}  // namespace detail

}  // namespace digital_delivery

#endif
