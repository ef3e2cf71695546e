//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_DETAIL_DEFAULT_TOKEN_HPP
#define DIGITAL_DELIVERY_DETAIL_DEFAULT_TOKEN_HPP

// What an operation called without a completion token returns: an
// asio::awaitable that completes with the result, or throws
// error_with_diagnostics (the server's words, the request, the attempts).
//
// Asio 1.81 cannot co_await a deferred operation whose signature starts with
// std::exception_ptr, so the default is use_awaitable on a signature whose
// error_code was turned into the exception (docs/operations.md).

#include <digital_delivery/detail/transparent_handler.hpp>
#include <digital_delivery/diagnostics.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/error_with_diagnostics.hpp>

#include <boost/asio/async_result.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <exception>
#include <memory>
#include <type_traits>
#include <utility>

namespace digital_delivery {
namespace detail {

template <class Signature>
struct exception_signature;
template <class... T>
struct exception_signature<void(error_code, T...)>
{
    using type = void(std::exception_ptr, T...);
};

/// Turns the operation's (error_code, T...) into (exception_ptr, T...).
template <class Handler>
struct throwing_handler
{
    using inner_handler_type = Handler;
    Handler handler;
    std::unique_ptr<diagnostics> own;  // when the caller passed none
    diagnostics* diag;

    template <class... T>
    void operator()(error_code ec, T&&... t)
    {
        std::exception_ptr ex;
        if (ec)
            ex = std::make_exception_ptr(error_with_diagnostics(ec, *diag));
        std::move(handler)(std::move(ex), std::forward<T>(t)...);
    }
};

/// Calls the operation's initiation as init(handler, diagnostics*, args...).
template <class Initiation>
struct bind_diag_initiation
{
    Initiation init;
    diagnostics* diag;

    template <class Handler, class... A>
    void operator()(Handler&& h, A&&... a) &&
    {
        std::move(init)(std::forward<Handler>(h), diag, std::forward<A>(a)...);
    }
};

template <class Initiation>
struct default_initiation
{
    Initiation init;
    diagnostics* user_diag;

    template <class Handler, class... A>
    void operator()(Handler&& h, A&&... a) &&
    {
        std::unique_ptr<diagnostics> own;
        if (!user_diag)
            own = std::make_unique<diagnostics>();
        diagnostics* d = user_diag ? user_diag : own.get();
        std::move(init)(
            throwing_handler<std::decay_t<Handler>>{std::forward<Handler>(h), std::move(own), d},
            d,
            std::forward<A>(a)...
        );
    }
};

template <class Signature, class Initiation, class... A>
auto initiate_default(Initiation init, diagnostics* user_diag, A&&... a)
{
    return boost::asio::async_initiate<const boost::asio::use_awaitable_t<>&, typename exception_signature<Signature>::type>(
        default_initiation<Initiation>{std::move(init), user_diag},
        boost::asio::use_awaitable,
        std::forward<A>(a)...
    );
}

}  // namespace detail
}  // namespace digital_delivery

#endif
