//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_REQUEST_OPTIONS_HPP
#define DIGITAL_DELIVERY_REQUEST_OPTIONS_HPP

/// \file
/// `request_options`: what one operation may change of its client's configuration
/// (timeouts, deadline, retries, priority, extra headers, trace parent), passed
/// after the request's arguments.

#include <digital_delivery/http_message.hpp>
#include <digital_delivery/list_ref.hpp>
#include <digital_delivery/rate_limit.hpp>
#include <digital_delivery/retry.hpp>
#include <digital_delivery/trace_context.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace digital_delivery {

/// Per-request options, passed explicitly after the request's arguments:
/// `co_await dd::async_get_order(client, id, dd::request_options{.timeout = 5s});`
struct request_options
{
    /// Overrides client_params::request_timeout for each attempt.
    std::optional<std::chrono::milliseconds> timeout{};

    /// One deadline for the whole operation: rate-limit waits, retry backoff
    /// and every attempt. Expiry: client_errc::deadline_exceeded (also when
    /// it cuts an attempt in flight), or
    /// client_errc::rate_limit_wait_exceeds_deadline when the points cannot
    /// arrive in time (known at once, nothing is sent).
    std::optional<std::chrono::steady_clock::time_point> deadline{};

    /// Scheduling class when waiting for rate-limit points.
    priority prio = priority::normal;

    /// Overrides client_params::retry for this request.
    std::optional<retry_params> retry{};

    /// Extra header fields (names must not be X-Auth-Token, Host,
    /// Content-Length or Transfer-Encoding; no CR or LF):
    /// `const dd::http_headers::field trace[] = {{"X-Trace", id}};`
    /// then `.extra_headers = trace`.
    list_ref<http_headers::field> extra_headers{};
    /// The trace this operation joins (its parent span): e.g. the incoming
    /// request's, named first: `const auto parent =
    /// dd::parse_trace_context(traceparent, tracestate);` then
    /// `.trace_parent = parent` (a view: a temporary is refused).
    /// Preferred to a `traceparent` in extra_headers and to
    /// trace_params::context. With a tracer, each attempt sends a
    /// `traceparent` naming its own span; without one, this parent is
    /// forwarded (docs/observability.md, "Traces").
    trace_context_ref trace_parent{};
};

namespace detail {

/// Request options kept by an operation that sends requests later
/// (pagination, uploads, the watermark waiter, asset edits): a copy that owns
/// its header fields.
class stored_request_options
{
public:
    stored_request_options() = default;
    explicit stored_request_options(const request_options* o)
    {
        if (!o)
            return;
        opts_ = *o;
        if (o->trace_parent)
            set_trace_parent(*o->trace_parent);
        store_.reserve(2 * o->extra_headers.size());
        fields_.reserve(o->extra_headers.size());
        for (const auto& f : o->extra_headers)
        {
            store_.emplace_back(f.name);
            store_.emplace_back(f.value);
        }
        for (std::size_t i = 0; i < o->extra_headers.size(); ++i)
            fields_.push_back({store_[2 * i], store_[2 * i + 1]});
        opts_.extra_headers = fields_;
    }
    // A moved vector keeps its elements where they are: the views stay valid.
    stored_request_options(stored_request_options&&) noexcept = default;
    stored_request_options& operator=(stored_request_options&&) noexcept = default;
    stored_request_options(const stored_request_options& other) : stored_request_options(&other.opts_) {}
    stored_request_options& operator=(const stored_request_options& other)
    {
        if (this != &other)
            *this = stored_request_options(&other.opts_);
        return *this;
    }

    const request_options& get() const noexcept { return opts_; }
    void set_priority(priority p) noexcept { opts_.prio = p; }
    void clear_deadline() noexcept { opts_.deadline.reset(); }
    void set_trace_parent(trace_context c)
    {
        parent_ = std::make_unique<trace_context>(std::move(c));
        opts_.trace_parent = *parent_;
    }

private:
    request_options opts_;
    std::vector<std::string> store_;
    std::vector<http_headers::field> fields_;
    std::unique_ptr<trace_context> parent_;  // on the heap: a move keeps opts_.trace_parent valid
};

}  // namespace detail

}  // namespace digital_delivery

#endif
