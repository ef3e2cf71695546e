//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_TESTING_FAKE_TRANSPORT_HPP
#define DIGITAL_DELIVERY_TESTING_FAKE_TRANSPORT_HPP

/// \file
/// A scriptable transport for tests: no sockets, no HTTP library.
///
/// \code
/// auto fake = std::make_shared<dd::testing::fake_transport>(ioc.get_executor());
/// dd::client c(fake, {.base_url = "https://dd.test/api/v1/external", .api_key = "k"});
/// fake->expect(dd::http_method::get, "/api/v1/external/orders/o1")
///     .respond(200, R"({"order": {...}})");
/// ... run the code under test ...
/// EXPECT_TRUE(fake->done());            // every expectation was consumed
/// EXPECT_EQ(fake->requests().size(), 1u);  // what was sent, headers and body included
/// \endcode
///
/// Expectations are consumed in order. A request that does not match the next
/// expectation (or arrives when none is left) completes with
/// boost::system::errc::protocol_error and is listed in mismatches().

/// \namespace digital_delivery::testing
/// For testing code that uses the library: fake_transport, virtual_clock,
/// cassettes (recording_transport, replay_transport, cassette_transport) and
/// sandbox, a digital-delivery-sandbox process.

#include <digital_delivery/http_message.hpp>
#include <digital_delivery/transport.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/append.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <digital_delivery/detail/clock.hpp>
#include <boost/system/errc.hpp>

#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace digital_delivery {
namespace testing {

/// A transport that answers from a script of expectations (see the file's
/// comment). Satisfies the transport concept; share it with the client
/// through a shared_ptr to inspect it afterwards.
class fake_transport
{
public:
    /// One scripted exchange.
    class expectation
    {
    public:
        /// Answer with this status, body and headers. A body starting with
        /// '{' or '[' gets `Content-Type: application/json` unless given.
        /// \param status The status code.
        /// \param body The body.
        /// \param headers The header fields.
        /// \return This expectation.
        expectation& respond(unsigned status, std::string body = {}, http_headers headers = {})
        {
            status_ = status;
            body_ = std::move(body);
            headers_ = std::move(headers);
            if (!headers_.find("Content-Type") && !body_.empty() && (body_[0] == '{' || body_[0] == '['))
                headers_.add("Content-Type", "application/json");
            return *this;
        }
        /// Add a response header.
        /// \param name The field's name.
        /// \param value The field's value.
        /// \return This expectation.
        expectation& header(std::string_view name, std::string_view value)
        {
            headers_.add(name, value);
            return *this;
        }
        /// Fail at the transport level (e.g. connection_refused, a timeout code).
        /// \param ec The error the request completes with.
        /// \param why The transport's explanation, one line (docs/transport.md,
        /// "Explaining a failure"): the failed response's body, which the
        /// client copies to diagnostics::client_message. Empty: none.
        /// \return This expectation.
        expectation& fail(error_code ec, std::string why = {})
        {
            error_ = ec;
            why_ = std::move(why);
            return *this;
        }
        /// Answer only after `d` (cancellable meanwhile).
        /// \param d The delay.
        /// \return This expectation.
        expectation& delay(std::chrono::milliseconds d)
        {
            delay_ = d;
            return *this;
        }
        /// Never answer; only cancellation (or the request's timeout:
        /// client_errc::request_timeout) completes the request.
        /// \return This expectation.
        expectation& hang()
        {
            hang_ = true;
            return *this;
        }

    private:
        friend class fake_transport;
        std::optional<http_method> method_;
        std::optional<std::string> target_;
        unsigned status_ = 200;
        std::string body_;
        http_headers headers_;
        error_code error_;
        std::string why_;
        std::chrono::milliseconds delay_{0};
        bool hang_ = false;
    };

    /// \param ex Where completions are posted.
    explicit fake_transport(boost::asio::any_io_executor ex) : ex_(std::move(ex)) {}

    /// Expect a request with this method and target (path and query string
    /// exactly as sent, e.g. "/api/v1/external/orders?page=2").
    /// \param m The method.
    /// \param target The path and query.
    /// \return The new expectation, to script its answer.
    expectation& expect(http_method m, std::string target)
    {
        std::lock_guard<std::mutex> lk(mtx_);
        auto& e = script_.emplace_back();
        e.method_ = m;
        e.target_ = std::move(target);
        return e;
    }

    /// Expect any request.
    /// \return The new expectation, to script its answer.
    expectation& expect_any()
    {
        std::lock_guard<std::mutex> lk(mtx_);
        return script_.emplace_back();
    }

    /// \return Every request received, in order.
    std::vector<http_request> requests() const
    {
        std::lock_guard<std::mutex> lk(mtx_);
        return requests_;
    }

    /// \return Requests that did not match their expectation (one line each).
    std::vector<std::string> mismatches() const
    {
        std::lock_guard<std::mutex> lk(mtx_);
        return mismatches_;
    }

    /// \return True when every expectation was consumed and nothing mismatched.
    bool done() const
    {
        std::lock_guard<std::mutex> lk(mtx_);
        return script_.empty() && mismatches_.empty();
    }

    /// The path and query of an absolute URL ("/a/b?c").
    /// \param url An absolute URL.
    /// \return A view of its path and query.
    static std::string_view target_of(std::string_view url)
    {
        auto p = url.find("://");
        if (p == std::string_view::npos)
            return url;
        auto s = url.find('/', p + 3);
        return s == std::string_view::npos ? std::string_view("/") : url.substr(s);
    }

    // ---- the transport concept ----

    /// \return The executor given at construction.
    boost::asio::any_io_executor get_executor() const { return ex_; }

    /// Matches `req` against the next expectation and answers as it says.
    /// \param req The request.
    /// \param h Called with the scripted answer, or protocol_error on a mismatch.
    void async_send(http_request req, transport_handler h)
    {
        expectation e;
        bool matched = false;
        {
            std::lock_guard<std::mutex> lk(mtx_);
            const std::string target(target_of(req.url));
            requests_.push_back(req);
            if (script_.empty())
            {
                mismatches_.push_back("unexpected " + std::string(to_string(req.method)) + " " + target);
            }
            else
            {
                e = std::move(script_.front());
                script_.pop_front();
                if ((e.method_ && *e.method_ != req.method) || (e.target_ && *e.target_ != target))
                    mismatches_.push_back(
                        "expected " + std::string(e.method_ ? to_string(*e.method_) : "ANY") + " " +
                        e.target_.value_or("*") + ", got " + std::string(to_string(req.method)) + " " + target
                    );
                else
                    matched = true;
            }
        }
        // Drain a streaming body like a real server would.
        if (matched && req.body_stream && !e.error_)
        {
            drain(std::move(req), std::move(e), std::move(h));
            return;
        }
        if (!matched)
        {
            complete(ex_, std::move(h), make_error_code(boost::system::errc::protocol_error), http_response{});
            return;
        }
        reply(std::move(e), std::move(h), req.timeout);
    }

private:
    struct pending
    {
        // (Boost 1.81's any_completion_handler move assignment recurses
        // forever: only ever move-construct it.)
        pending(const boost::asio::any_io_executor& ex, transport_handler h) : timer(ex), handler(std::move(h)) {}
        detail::timer timer;
        transport_handler handler{};
        error_code error{};
        http_response response{};
        bool done = false;
    };

    // Completes through the handler's associated executor (ours when it has
    // none), never inline: post() hands the appended handler to its executor.
    static void complete(const boost::asio::any_io_executor& ex, transport_handler h, error_code ec, http_response r)
    {
        boost::asio::post(ex, boost::asio::append(std::move(h), ec, std::move(r)));
    }

    void reply(expectation e, transport_handler h, std::chrono::milliseconds timeout)
    {
        http_response r;
        if (!e.error_)
        {
            r.status = e.status_;
            r.headers = std::move(e.headers_);
            r.body = std::move(e.body_);
        }
        else
            r.body = std::move(e.why_);
        if (!e.hang_ && e.delay_.count() == 0)
        {
            // Still honour a cancellation requested before we answer.
            complete(ex_, std::move(h), e.error_, std::move(r));
            return;
        }
        auto slot = boost::asio::get_associated_cancellation_slot(h);
        auto p = std::make_shared<pending>(ex_, std::move(h));
        p->error = e.error_;
        p->response = std::move(r);
        // Like a real transport, honour the request's timeout.
        if (timeout.count() > 0 && (e.hang_ || e.delay_ > timeout))
        {
            p->error = client_errc::request_timeout;
            p->response = http_response{};
            p->timer.expires_after(timeout);
        }
        else if (e.hang_)
            p->timer.expires_at(detail::timer::time_point::max());
        else
            p->timer.expires_after(e.delay_);
        if (slot.is_connected())
        {
            std::weak_ptr<pending> wp = p;
            slot.assign([wp](boost::asio::cancellation_type t) {
                if (auto sp = wp.lock(); sp && (t & boost::asio::cancellation_type::terminal) != boost::asio::cancellation_type::none)
                    sp->timer.cancel();
            });
        }
        p->timer.async_wait([p, ex = ex_](error_code ec) {
            if (p->done)
                return;
            p->done = true;
            auto slot = boost::asio::get_associated_cancellation_slot(p->handler);
            if (slot.is_connected())
                slot.clear();
            if (ec == boost::asio::error::operation_aborted)
                complete(ex, std::move(p->handler), boost::asio::error::operation_aborted, http_response{});
            else
                complete(ex, std::move(p->handler), p->error, std::move(p->response));
        });
    }

    struct drain_state
    {
        drain_state(http_request r, expectation x, transport_handler handler)
            : req(std::move(r)), e(std::move(x)), h(std::move(handler))
        {
        }
        http_request req{};
        expectation e{};
        transport_handler h{};
        std::vector<char> buf = std::vector<char>(16384);
        std::uint64_t sent = 0;
        std::string received{};  // kept only for small bodies (tests compare bytes)
    };

    void drain(http_request req, expectation e, transport_handler h)
    {
        auto st = std::make_shared<drain_state>(std::move(req), std::move(e), std::move(h));
        read_more(std::move(st));
    }

    void read_more(std::shared_ptr<drain_state> st)
    {
        auto* src = st->req.body_stream.get();
        src->async_read_some(
            boost::asio::buffer(st->buf),
            [this, st](error_code ec, std::size_t n) mutable {
                if (ec == boost::asio::error::eof || (!ec && n == 0))
                {
                    {
                        std::lock_guard<std::mutex> lk(mtx_);
                        if (!requests_.empty())
                            requests_.back().body = st->received;
                    }
                    reply(std::move(st->e), std::move(st->h), st->req.timeout);
                    return;
                }
                if (ec)
                {
                    complete(ex_, std::move(st->h), ec, http_response{});
                    return;
                }
                st->sent += n;
                if (st->received.size() < (1u << 20))
                    st->received.append(st->buf.data(), std::min<std::size_t>(n, (1u << 20) - st->received.size()));
                if (st->req.on_body_progress)
                    st->req.on_body_progress(st->sent);
                read_more(std::move(st));
            }
        );
    }

    boost::asio::any_io_executor ex_;
    mutable std::mutex mtx_;
    std::deque<expectation> script_;
    std::vector<http_request> requests_;
    std::vector<std::string> mismatches_;
};

static_assert(transport<fake_transport>);

}  // namespace testing
}  // namespace digital_delivery

#endif
