//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_TRACE_OP_TRACE_IPP
#define DIGITAL_DELIVERY_IMPL_TRACE_OP_TRACE_IPP

#include <digital_delivery/impl/trace/op_trace.hpp>
#include <digital_delivery/observer.hpp>

#include <boost/asio/error.hpp>

#include <algorithm>
#include <cstring>
#include <random>

namespace digital_delivery {
namespace detail {

// xoshiro256** (Blackman, Vigna), one per thread, seeded from random_device
// through splitmix64: ids are unique, not secret.
class trace_id_generator
{
public:
    trace_id_generator()
    {
        std::random_device rd;
        std::uint64_t seed = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
        for (auto& w : s_)
        {
            seed += 0x9e3779b97f4a7c15ull;
            std::uint64_t z = seed;
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
            w = z ^ (z >> 31);
        }
    }
    std::uint64_t next() noexcept
    {
        const std::uint64_t r = rotl(s_[1] * 5, 7) * 9, t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return r;
    }
    template <std::size_t N>
    void fill(std::array<std::uint8_t, N>& out) noexcept
    {
        do
        {
            for (std::size_t i = 0; i < N; i += 8)
            {
                const std::uint64_t v = next();
                std::memcpy(out.data() + i, &v, 8);
            }
        } while (std::all_of(out.begin(), out.end(), [](std::uint8_t b) { return b == 0; }));
    }

private:
    static std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
    std::uint64_t s_[4];
};

inline trace_id_generator& thread_id_generator()
{
    thread_local trace_id_generator g;
    return g;
}

DIGITAL_DELIVERY_DECL trace_id new_trace_id() noexcept
{
    trace_id id;
    thread_id_generator().fill(id);
    return id;
}

DIGITAL_DELIVERY_DECL span_id new_span_id() noexcept
{
    span_id id;
    thread_id_generator().fill(id);
    return id;
}

DIGITAL_DELIVERY_DECL bool is_valid_context(const trace_context& c) noexcept
{
    const auto nonzero = [](std::uint8_t b) { return b != 0; };
    return std::any_of(c.trace.begin(), c.trace.end(), nonzero) && std::any_of(c.span.begin(), c.span.end(), nonzero);
}

DIGITAL_DELIVERY_DECL void set_trace_headers(http_headers& h, const trace_context& c)
{
    h.set("traceparent", format_traceparent(c.trace, c.span, c.flags));
    const std::string state = normalize_tracestate(c.trace_state);
    if (state.empty())
        h.erase("tracestate");
    else
        h.set("tracestate", state);
}

DIGITAL_DELIVERY_DECL bool is_secret_query_key(std::string_view key) noexcept
{
    std::string k(key.substr(0, 64));
    for (auto& c : k)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    static constexpr std::string_view exact[] = {"sig", "signature", "token", "key", "code", "password", "secret"};
    static constexpr std::string_view parts[] = {"signature", "credential", "token", "secret", "password",
                                                 "apikey", "api_key", "api-key", "accesskey"};
    for (auto e : exact)
        if (k == e)
            return true;
    for (auto p : parts)
        if (k.find(p) != std::string::npos)
            return true;
    return false;
}

DIGITAL_DELIVERY_DECL std::string redacted_url_full(std::string_view url)
{
    const auto fragment = url.find('#');
    url = url.substr(0, fragment);
    std::string out;
    out.reserve(url.size() + 16);
    const auto scheme = url.find("://");
    std::size_t rest = 0;
    if (scheme != std::string_view::npos)
    {
        const auto start = scheme + 3;
        const auto end = url.find_first_of("/?", start);
        std::string_view authority = url.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
        if (const auto at = authority.rfind('@'); at != std::string_view::npos)
            authority.remove_prefix(at + 1);
        out.append(url.substr(0, start));
        out.append(authority);
        rest = end == std::string_view::npos ? url.size() : end;
    }
    const auto q = url.find('?', rest);
    out.append(url.substr(rest, q == std::string_view::npos ? std::string_view::npos : q - rest));
    if (q == std::string_view::npos)
        return out;
    out += '?';
    std::string_view query = url.substr(q + 1);
    bool first = true;
    while (true)
    {
        const auto amp = query.find('&');
        const std::string_view param = query.substr(0, amp);
        if (!first)
            out += '&';
        first = false;
        const auto eq = param.find('=');
        if (eq != std::string_view::npos && is_secret_query_key(param.substr(0, eq)))
        {
            out.append(param.substr(0, eq + 1));
            out += "REDACTED";
        }
        else
            out.append(param);
        if (amp == std::string_view::npos)
            break;
        query.remove_prefix(amp + 1);
    }
    return out;
}

DIGITAL_DELIVERY_DECL server_endpoint server_of(std::string_view url)
{
    server_endpoint s;
    const auto scheme = url.find("://");
    if (scheme == std::string_view::npos)
        return s;
    s.port = url.substr(0, scheme) == "https" ? 443 : 80;
    std::string_view authority = url.substr(scheme + 3);
    authority = authority.substr(0, authority.find_first_of("/?#"));
    if (const auto at = authority.rfind('@'); at != std::string_view::npos)
        authority.remove_prefix(at + 1);
    std::string_view port;
    if (!authority.empty() && authority.front() == '[')
    {
        const auto close = authority.find(']');
        if (close == std::string_view::npos)
            return s;
        if (close + 1 < authority.size() && authority[close + 1] == ':')
            port = authority.substr(close + 2);
        authority = authority.substr(1, close - 1);
    }
    else if (const auto colon = authority.rfind(':'); colon != std::string_view::npos)
    {
        port = authority.substr(colon + 1);
        authority = authority.substr(0, colon);
    }
    if (!port.empty())
    {
        std::int64_t p = 0;
        for (char c : port)
        {
            if (c < '0' || c > '9' || p > 65535)
                break;
            p = p * 10 + (c - '0');
        }
        if (p > 0 && p <= 65535)
            s.port = p;
    }
    s.address.assign(authority.data(), authority.size());
    for (auto& c : s.address)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    return s;
}

DIGITAL_DELIVERY_DECL std::unique_ptr<op_trace> op_trace::start(
    tracer* sink,
    const trace_params& params,
    const trace_context* parent,
    std::string_view name,
    time_point now
)
{
    const bool record = sink && (!parent || parent->sampled() || !params.follow_unsampled_parent);
    if (!record && !parent)
        return nullptr;
    auto t = std::make_unique<op_trace>();
    if (parent)
    {
        t->parent_ = *parent;
        t->parent_.trace_state = normalize_tracestate(parent->trace_state);
        t->has_parent_ = true;
    }
    if (!record)
        return t;
    t->sink_ = sink;
    span_data& op = t->op_;
    op.trace = parent ? parent->trace : new_trace_id();
    op.parent = parent ? parent->span : span_id{};
    op.flags = 1;
    if (parent)
        op.trace_state = t->parent_.trace_state;
    op.id = new_span_id();
    op.name.assign(name.data(), name.size());
    op.kind = span_kind::internal;
    op.start = now;
    return t;
}

DIGITAL_DELIVERY_DECL trace_context op_trace::nested() const
{
    if (!recording())
        return parent_;
    trace_context c;
    c.trace = op_.trace;
    c.span = op_.id;
    c.flags = op_.flags;
    c.trace_state = op_.trace_state;
    return c;
}

DIGITAL_DELIVERY_DECL void op_trace::inject(http_headers& h) const
{
    if (!recording())
        return set_trace_headers(h, parent_);
    h.set("traceparent", format_traceparent(op_.trace, attempt_ ? attempt_->id : op_.id, op_.flags));
    if (op_.trace_state.empty())
        h.erase("tracestate");
    else
        h.set("tracestate", op_.trace_state);
}

DIGITAL_DELIVERY_DECL span_data op_trace::child(std::string name, span_kind kind, time_point now) const
{
    span_data s;
    s.trace = op_.trace;
    s.id = new_span_id();
    s.parent = op_.id;
    s.flags = op_.flags;
    s.trace_state = op_.trace_state;
    s.name = std::move(name);
    s.kind = kind;
    s.start = now;
    return s;
}

DIGITAL_DELIVERY_DECL void op_trace::attempt_start(
    http_method method,
    std::string_view url_template,
    std::string_view url,
    std::string_view server_address,
    std::int64_t server_port,
    unsigned attempt,
    time_point now
)
{
    if (!recording())
        return;
    const std::string_view m = to_string(method);
    std::string name(m);
    if (!url_template.empty())
    {
        name += ' ';
        name += url_template;
    }
    attempt_ = child(std::move(name), span_kind::client, now);
    auto& a = attempt_->attributes;
    a.reserve(8);
    a.push_back({"http.request.method", std::string(m)});
    a.push_back({"server.address", std::string(server_address)});
    a.push_back({"server.port", server_port});
    a.push_back({"url.full", redacted_url_full(url)});
    if (!url_template.empty())
        a.push_back({"url.template", std::string(url_template)});
    if (attempt > 1)
        a.push_back({"http.request.resend_count", static_cast<std::int64_t>(attempt - 1)});
    dropped_events_ = 0;
}

DIGITAL_DELIVERY_DECL void op_trace::attempt_attribute(std::string_view key, attribute_value v)
{
    if (attempt_)
        attempt_->attributes.push_back({std::string(key), std::move(v)});
}

DIGITAL_DELIVERY_DECL void op_trace::attempt_event(span_event e)
{
    if (!attempt_)
        return;
    if (attempt_->events.size() >= max_events)
    {
        ++dropped_events_;
        return;
    }
    attempt_->events.push_back(std::move(e));
}

DIGITAL_DELIVERY_DECL void op_trace::attempt_end(unsigned status, error_code ec, time_point now)
{
    if (!attempt_)
        return;
    if (status != 0)
        attempt_->attributes.push_back({"http.response.status_code", static_cast<std::int64_t>(status)});
    if (dropped_events_ > 0)
        attempt_->attributes.push_back({"digital_delivery.dropped_events", dropped_events_});
    // A 4xx or 5xx answer: the status code says why (the HTTP conventions:
    // no status description that http.response.status_code already gives).
    emit(*attempt_, ec, now, status < 400);
    attempt_.reset();
}

DIGITAL_DELIVERY_DECL void op_trace::wait_start(
    std::string_view name,
    std::string_view reason,
    int points,
    std::chrono::milliseconds planned,
    time_point now
)
{
    if (!recording())
        return;
    wait_ = child(std::string(name), span_kind::internal, now);
    auto& a = wait_->attributes;
    a.push_back({"digital_delivery.wait.reason", std::string(reason)});
    if (points > 0)
        a.push_back({"digital_delivery.rate_limit.points", static_cast<std::int64_t>(points)});
    if (planned.count() >= 0)
        a.push_back({"digital_delivery.wait.planned_ms", static_cast<std::int64_t>(planned.count())});
}

DIGITAL_DELIVERY_DECL void op_trace::wait_attribute(std::string_view key, attribute_value v)
{
    if (wait_)
        wait_->attributes.push_back({std::string(key), std::move(v)});
}

DIGITAL_DELIVERY_DECL void op_trace::wait_end(error_code ec, time_point now, std::chrono::milliseconds dropped_below)
{
    if (!wait_)
        return;
    if (!ec && now - wait_->start < dropped_below)
    {
        wait_.reset();
        return;
    }
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - wait_->start).count();
    wait_->attributes.push_back({"digital_delivery.wait.ms", static_cast<std::int64_t>(ms)});
    emit(*wait_, ec, now);
    wait_.reset();
}

DIGITAL_DELIVERY_DECL void op_trace::end(error_code ec, time_point now)
{
    if (!recording())
        return;
    attempt_end(0, ec, now);
    wait_end(ec, now);
    emit(op_, ec, now);
    sink_ = nullptr;  // ended once
}

DIGITAL_DELIVERY_DECL void op_trace::emit(span_data& s, error_code ec, time_point now, bool describe)
{
    s.end = now;
    if (ec && ec != boost::asio::error::operation_aborted)
    {
        s.status = span_status::error;
        if (describe)
            s.status_message = ec.message();
        s.attributes.push_back({"error.type", std::string(error_type(ec))});
    }
    sink_->on_end(std::move(s));
}

}  // namespace detail
}  // namespace digital_delivery

#endif
