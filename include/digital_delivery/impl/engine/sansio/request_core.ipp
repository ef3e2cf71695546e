//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_ENGINE_SANSIO_REQUEST_CORE_IPP
#define DIGITAL_DELIVERY_IMPL_ENGINE_SANSIO_REQUEST_CORE_IPP

#include <digital_delivery/impl/engine/sansio/request_core.hpp>
#include <digital_delivery/http_message.hpp>
#include <digital_delivery/impl/retry/retry_policy.hpp>

#include <boost/asio/error.hpp>

#include <string>
#include <utility>

namespace digital_delivery {
namespace detail {

DIGITAL_DELIVERY_DECL request_core::request_core(request_setup s) : setup_(std::move(s)) {}

DIGITAL_DELIVERY_DECL request_action request_core::started(time_point now)
{
    if (setup_.rejected)
        return complete(setup_.rejected);
    const retry_params& rp = *setup_.retry;
    retries_ = rp.enabled;
    rate_limited_cap_ = rp.max_rate_limited_wait;
    deadline_ = setup_.deadline;
    if (!deadline_ && setup_.operation_timeout.count() > 0)
        deadline_ = checked_add(now, setup_.operation_timeout);
    rs_.emplace(rp, std::move(setup_.budget), now, deadline_, std::move(setup_.jitter));
    // Points available at once (or the limiter off): straight to the attempt.
    // Past the deadline: the limiter's queue, which reports it.
    return acquire(now, !deadline_ || now < *deadline_);
}

DIGITAL_DELIVERY_DECL request_action request_core::granted(error_code ec, time_point now)
{
    last_wait_ = now - wait_started_;
    rs_->add_rate_limit_wait(last_wait_);
    if (ec == client_errc::rate_limit_wait_exceeds_deadline && !deadline_ && rs_->rate_limited_until())
        return complete(rs_->give_up_rate_limited(now));
    if (ec)
        return complete(ec);
    if (deadline_ && now >= *deadline_)  // granted, never spent
        return complete(client_errc::deadline_exceeded, false, limiter_step::refund);
    return send(now);
}

DIGITAL_DELIVERY_DECL request_action request_core::responded(
    error_code transport_ec,
    error_code api_ec,
    const response_facts& facts,
    time_point now
)
{
    // The limiter hears of every attempt's end: a response's headers; the
    // points back when the request provably never left (not for a
    // cancellation: the caller stopped, the server may be busy); else that
    // the attempt is over (refilling resumes).
    const limiter_step l = !transport_ec ? limiter_step::observe_response
                           : is_request_not_sent(transport_ec) && transport_ec != boost::asio::error::operation_aborted
                               ? limiter_step::refund
                               : limiter_step::attempt_over;
    const error_code ec = transport_ec ? transport_ec : api_ec;
    if (!ec)
        return complete({}, true, l);
    // A retried DELETE answered 404 after an attempt that may have deleted
    // the resource: that attempt did the work.
    if (setup_.gone_means_done && maybe_processed_ && !transport_ec &&
        (api_ec == api_errc::asset_not_found || api_ec == api_errc::digital_product_not_found ||
         api_ec == api_errc::order_not_found))
    {
        gone_after_retry_ = true;
        return complete({}, false, l);
    }
    // Ended after it may have reached the server: a transport failure
    // other than one before sending (or a cancellation), or a 5xx.
    if (!maybe_processed_ &&
        ((transport_ec && !is_request_not_sent(transport_ec) && transport_ec != boost::asio::error::operation_aborted) ||
         (!transport_ec && facts.status >= 500)))
    {
        maybe_processed_ = ec;
        maybe_processed_attempt_ = attempt();
    }
    if (ec == boost::asio::error::operation_aborted)
        return complete(ec, false, l);
    const attempt_failure f{ec, facts.status, facts.retry_after};
    const retry_decision d = rs_->on_failure(f, setup_.idempotent, now);
    // Giving up on a 429 is the rate limit's verdict (the deadline, or
    // max_rate_limited_wait); any other failure ends with its own error.
    const bool refused_bound = d.reason == retry_reason::rate_limited_too_long ||
                               (d.reason == retry_reason::deadline && facts.refused());
    if (!d.retry)
    {
        // The deadline cut this attempt's time limit and the limit passed:
        // the operation's deadline passed, whatever phase the attempt was in.
        const bool deadline_cut = attempt_cut_ && transport_ec == client_errc::request_timeout;
        return complete(
            refused_bound ? d.final_error : deadline_cut ? make_error_code(client_errc::deadline_exceeded) : ec, true, l
        );
    }
    phase_ = phase::backing_off;
    request_action a;
    a.what = request_action::kind::wait;
    a.limiter = l;
    a.duration = d.delay;
    return a;
}

DIGITAL_DELIVERY_DECL request_action request_core::timer_fired(error_code ec, time_point now)
{
    if (ec)  // cancelled while backing off
        return complete(ec);
    return acquire(now, false);
}

DIGITAL_DELIVERY_DECL request_action request_core::cancelled(time_point now)
{
    if (phase_ != phase::acquiring)
        return complete(boost::asio::error::operation_aborted);
    // Granted, never spent.
    last_wait_ = now - wait_started_;
    rs_->add_rate_limit_wait(last_wait_);
    return complete(boost::asio::error::operation_aborted, false, limiter_step::refund);
}

DIGITAL_DELIVERY_DECL void request_core::record(diagnostics& d) const
{
    if (!rs_)
        return;
    const retry_stats& st = rs_->stats();
    d.attempts = static_cast<unsigned>(st.attempts);
    d.total_wait = st.total_backoff + st.total_rate_limit_wait;
    if (gone_after_retry_)
    {
        d.client_message = "attempt " + std::to_string(st.attempts) + " was answered 404 after attempt " +
                           std::to_string(maybe_processed_attempt_) + " ended without a clear answer (" +
                           maybe_processed_.message() + "): that attempt deleted it; completed as success";
        return;
    }
    if (result_ == client_errc::deadline_exceeded && attempt_cut_ && st.attempts > 0)
    {
        // Replaces the transport's "the request timed out" explanation.
        d.client_message = "the operation's deadline passed during attempt " + std::to_string(st.attempts) +
                           ", whose time limit it had cut to " + std::to_string(attempt_limit_.count()) +
                           " ms (the attempt's own is " + std::to_string(attempt_configured_.count()) +
                           " ms): the request may have reached the server";
        return;
    }
    const bool too_long = result_ == client_errc::rate_limited_too_long;
    if (st.refusals == 0 || !d.client_message.empty() ||
        !(too_long || result_ == client_errc::rate_limit_wait_exceeds_deadline))
        return;
    d.client_message = "refused with 429 " + std::to_string(st.refusals) + (st.refusals == 1 ? " time" : " times") +
                       ", waited " + std::to_string(st.rate_limited_wait.count()) +
                       " ms for the server's rate limit; " +
                       (too_long ? "retry_params::max_rate_limited_wait is " +
                                       std::to_string(rate_limited_cap_.count()) + " ms"
                                 : std::string("the deadline comes first"));
}

DIGITAL_DELIVERY_DECL request_action request_core::acquire(time_point now, bool try_now)
{
    phase_ = phase::acquiring;
    wait_started_ = now;
    request_action a;
    a.what = request_action::kind::acquire;
    a.try_now = try_now;
    return a;
}

DIGITAL_DELIVERY_DECL request_action request_core::send(time_point now)
{
    phase_ = phase::sending;
    rs_->on_attempt_start(now);
    request_action a;
    a.what = request_action::kind::send;
    a.move_request = !retries_;
    a.duration = attempt_timeout(setup_.timeout, deadline_, now);
    attempt_configured_ = setup_.timeout.count() > 0 ? setup_.timeout : default_request_timeout;
    attempt_limit_ = a.duration;
    attempt_cut_ = a.duration < attempt_configured_;
    return a;
}

DIGITAL_DELIVERY_DECL request_action request_core::complete(error_code ec, bool with_response, limiter_step l)
{
    phase_ = phase::done;
    result_ = ec;
    request_action a;
    a.what = request_action::kind::complete;
    a.limiter = l;
    a.with_response = with_response;
    a.ec = ec;
    return a;
}

}  // namespace detail
}  // namespace digital_delivery

#endif
