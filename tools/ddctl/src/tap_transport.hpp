// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// ddctl's transport: the Beast transport with a tap on the API's answers, or,
// for --dry-run, no transport at all (the requests are recorded, never sent).
//
// The tap keeps the body of the last answer of the API (not of the storage):
// the typed operations check and decode it, and ddctl prints the JSON text
// the server sent, so that --output json keeps every field, unknown ones
// included, exactly as the API wrote them.
#ifndef DDCTL_TAP_TRANSPORT_HPP
#define DDCTL_TAP_TRANSPORT_HPP

#include <digital_delivery/transport.hpp>

#include <boost/asio/associator.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ddctl {

namespace dd = digital_delivery;

/// What the tap saw.
struct tap_state
{
    /// The API's base URL: answers to URLs under it are kept (not the storage's).
    std::string api_prefix;
    /// The last answer of the API: status, headers, body.
    unsigned last_status = 0;
    dd::http_headers last_headers;
    std::string last_body;

    /// A request recorded instead of being sent (--dry-run).
    struct recorded
    {
        dd::http_method method = dd::http_method::get;
        std::string url;
        std::string body;
    };
    std::vector<recorded> not_sent;
};

/// Keeps the body of an API answer, then hands the answer on. Transparent to
/// Asio's associators (executor, cancellation slot, allocator of the wrapped
/// handler), so cancellation reaches the Beast transport.
struct tap_handler
{
    dd::transport_handler handler;
    std::shared_ptr<tap_state> state;  // null: not an API request

    void operator()(dd::error_code ec, dd::http_response r)
    {
        if (state && !ec)
        {
            state->last_status = r.status;
            state->last_headers = r.headers;
            state->last_body = r.body;
        }
        std::move(handler)(ec, std::move(r));
    }
};

class tap_transport
{
public:
    /// `next` empty: dry run, nothing is ever sent.
    tap_transport(boost::asio::any_io_executor ex, std::optional<dd::any_transport> next, std::shared_ptr<tap_state> state)
        : ex_(std::move(ex)), next_(std::move(next)), state_(std::move(state))
    {
    }

    boost::asio::any_io_executor get_executor() const { return ex_; }

    void async_send(dd::http_request req, dd::transport_handler h)
    {
        if (!next_)
        {
            state_->not_sent.push_back({req.method, req.url, req.body});
            // one thread: the client's executor is the handler's
            boost::asio::post(ex_, [h = std::move(h)]() mutable {
                std::move(h)(boost::asio::error::operation_not_supported, dd::http_response{});
            });
            return;
        }
        const bool api = req.url.compare(0, state_->api_prefix.size(), state_->api_prefix) == 0;
        next_->async_send(std::move(req), dd::transport_handler(tap_handler{std::move(h), api ? state_ : nullptr}));
    }

private:
    boost::asio::any_io_executor ex_;
    std::optional<dd::any_transport> next_;
    std::shared_ptr<tap_state> state_;
};

}  // namespace ddctl

namespace boost {
namespace asio {

template <template <typename, typename> class Associator, class DefaultCandidate>
struct associator<Associator, ddctl::tap_handler, DefaultCandidate>
{
    using inner = ::digital_delivery::transport_handler;
    using type = typename Associator<inner, DefaultCandidate>::type;
    static type get(const ddctl::tap_handler& h, const DefaultCandidate& c = DefaultCandidate()) noexcept
    {
        return Associator<inner, DefaultCandidate>::get(h.handler, c);
    }
};

}  // namespace asio
}  // namespace boost

#endif
