//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_CLIENT_IMPL_IPP
#define DIGITAL_DELIVERY_IMPL_CLIENT_IMPL_IPP

#include <digital_delivery/detail/client_impl.hpp>
#include <digital_delivery/detail/saturating_time.hpp>
#include <digital_delivery/error_with_diagnostics.hpp>
#include <digital_delivery/http_message.hpp>
#include <digital_delivery/impl/http/sansio/header_rules.hpp>
#include <digital_delivery/impl/http/sansio/header_values.hpp>
#include <digital_delivery/impl/engine/observe.hpp>
#include <digital_delivery/impl/http/sansio/beast_url.hpp>
#include <digital_delivery/impl/rate_limit/rate_limiter.hpp>
#include <digital_delivery/impl/error/server_messages.hpp>
#include <digital_delivery/impl/engine/sansio/request_core.hpp>
#include <digital_delivery/impl/http/sansio/response_facts.hpp>
#include <digital_delivery/impl/trace/op_trace.hpp>

#include <boost/asio/compose.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/recycling_allocator.hpp>
#include <digital_delivery/detail/clock.hpp>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>
#include <boost/url/url_view.hpp>

#include <algorithm>
#include <array>
#include <new>
#include <optional>

namespace digital_delivery {
namespace detail {

inline bool is_valid_base_url(std::string_view s, std::string& base, std::string& why)
{
    // Pre-checks before handing untrusted text to Boost.URL (1.81 asserts on
    // some malformed input unless NDEBUG).
    if (s.empty())
    {
        why = "base_url is empty";
        return false;
    }
    if (has_crlf(s) || s.find_first_of(" \t{}<>\"\\^`|") != std::string_view::npos)
    {
        why = "base_url contains characters not allowed in a URL";
        return false;
    }
    const bool http = s.starts_with("http://"), https = s.starts_with("https://");
    if (!http && !https)
    {
        why = "base_url must start with http:// or https://";
        return false;
    }
    auto u = boost::urls::parse_uri(s);
    if (!u)
    {
        why = "base_url is not a valid URL";
        return false;
    }
    if (u->encoded_host().empty())
    {
        why = "base_url has no host";
        return false;
    }
    if (u->has_query() || u->has_fragment() || u->has_userinfo())
    {
        why = "base_url must not have a query, fragment or user info";
        return false;
    }
    // Boost.URL 1.81 also accepts what no request can be sent to, e.g.
    // "https://h:x/api" (an empty port, then the path "x/api"): the request
    // URLs must pass the transport's own check (beast_url.hpp: a host, a port
    // of 1-65535, a path starting with '/').
    beast_target target;
    if (!parse_beast_target(s, target))
    {
        why = "base_url is not a well-formed absolute http(s) URL (host, port 1-65535, path)";
        return false;
    }
    base.assign(s.data(), s.size());
    while (!base.empty() && base.back() == '/')
        base.pop_back();
    return true;
}

}  // namespace detail

DIGITAL_DELIVERY_DECL std::string detail::url_host(std::string_view url)
{
    const auto scheme = url.find("://");
    if (scheme == std::string_view::npos)
        return {};
    std::string_view authority = url.substr(scheme + 3);
    authority = authority.substr(0, authority.find_first_of("/?#"));
    if (const auto at = authority.rfind('@'); at != std::string_view::npos)
        authority.remove_prefix(at + 1);  // user info is a secret
    return std::string(authority);
}

DIGITAL_DELIVERY_DECL void detail::append_pct_encoded(std::string& out, std::string_view s)
{
    static constexpr char hex[] = "0123456789ABCDEF";
    for (unsigned char c : s)
    {
        if (boost::urls::unreserved_chars(static_cast<char>(c)))
            out += static_cast<char>(c);
        else
        {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
}

namespace detail {
// (No designated initializer: a user's -Wextra on GCC 12 would warn in our header.)
inline diagnostics client_diagnostics(std::string message)
{
    diagnostics d;
    d.client_message = std::move(message);
    return d;
}
}  // namespace detail

DIGITAL_DELIVERY_DECL detail::client_impl::client_impl(any_transport t, client_params p)
    : transport_(std::move(t)), params_(std::move(p))
{
    std::string why;
    if (!transport_)
        throw error_with_diagnostics(client_errc::invalid_argument, client_diagnostics("no transport"));
    if (!is_valid_base_url(params_.base_url, base_, why))
        throw error_with_diagnostics(client_errc::invalid_base_url, client_diagnostics(why));
    host_ = url_host(base_);
    if (params_.api_key.empty() || has_crlf(params_.api_key))
        throw error_with_diagnostics(
            client_errc::invalid_argument,
            client_diagnostics("api_key must be non-empty and must not contain CR or LF")
        );
    if (has_crlf(params_.user_agent))
        throw error_with_diagnostics(
            client_errc::invalid_argument,
            client_diagnostics("user_agent must not contain CR or LF")
        );
    limiter_ = shared_rate_limiter(transport_.get_executor(), base_, params_.api_key, params_.rate_limit);
    budget_ = std::make_shared<retry_budget>(params_.retry);
    obs_ = params_.observer.get();
    if (obs_)
        limiter_->add_throttle_observer(params_.observer);
    tracer_ = params_.tracer.get();
    tracing_ = tracer_ || params_.trace.context;
    server_endpoint server = server_of(base_);
    server_address_ = std::move(server.address);
    server_port_ = server.port;
}

DIGITAL_DELIVERY_DECL std::optional<trace_context> detail::client_impl::trace_parent_of(const request_options* opts) const
{
    if (opts && opts->trace_parent && is_valid_context(*opts->trace_parent))
        return *opts->trace_parent;
    if (!tracing_)
        return std::nullopt;
    if (opts)
    {
        // The last traceparent given wins, as in the request's headers.
        std::string_view tp, ts;
        for (const auto& f : opts->extra_headers)
        {
            if (iequals(f.name.view(), "traceparent"))
                tp = f.value.view();
            else if (iequals(f.name.view(), "tracestate"))
                ts = f.value.view();
        }
        if (!tp.empty())
        {
            if (auto c = parse_trace_context(tp, ts))
                return c;
        }
    }
    if (params_.trace.context)
    {
        if (auto c = params_.trace.context(); c && is_valid_context(*c))
            return c;
    }
    return std::nullopt;
}

DIGITAL_DELIVERY_DECL void detail::client_impl::prepare(
    prepared_request& out,
    const endpoint_info& ep,
    std::span<const std::string_view> ids,
    const query_params* query,
    std::string body,
    const request_options* opts
) const
{
    out.method = ep.method;
    out.cost = ep.cost;
    out.idempotent = ep.idempotent;
    out.gone_means_done = ep.gone_means_done;
    out.endpoint = ep.name;
    out.path_template = ep.name.empty() ? std::string_view() : ep.path_template;

    // Path: literal text copied, each {placeholder} replaced by one encoded segment.
    // Built in place (no copy): the URL below appends it.
    // Exact size first: a short path stays in the string's inline buffer.
    std::string& path = out.path;
    path.clear();
    {
        std::size_t n = 0, k = 0;
        for (std::size_t i = 0; i < ep.path_template.size(); ++i)
        {
            if (ep.path_template[i] != '{')
            {
                ++n;
                continue;
            }
            if (k < ids.size())
                for (unsigned char c : ids[k])
                    n += boost::urls::unreserved_chars(static_cast<char>(c)) ? 1 : 3;
            ++k;
            i = ep.path_template.find('}', i);
            if (i == std::string_view::npos)
                break;
        }
        path.reserve(n);
    }
    std::size_t next_id = 0;
    for (std::size_t i = 0; i < ep.path_template.size(); ++i)
    {
        const char c = ep.path_template[i];
        if (c != '{')
        {
            path += c;
            continue;
        }
        const auto close = ep.path_template.find('}', i);
        const std::string_view id = next_id < ids.size() ? ids[next_id] : std::string_view();
        ++next_id;
        if (id.empty() || id == "." || id == "..")
        {
            out.error = client_errc::invalid_path_parameter;
            out.error_message = "path parameter '" +
                                std::string(ep.path_template.substr(i + 1, close - i - 1)) +
                                "' must not be empty, \".\" or \"..\"";
        }
        append_pct_encoded(path, id);
        i = close;
    }

    std::string& url = out.request.url;
    url.reserve(base_.size() + path.size() + 64);
    url = base_;
    url += path;
    if (query && !query->empty())
    {
        char sep = '?';
        for (const auto& [k, v] : *query)
        {
            url += sep;
            sep = '&';
            append_pct_encoded(url, k);
            url += '=';
            append_pct_encoded(url, v);
        }
    }

    out.request.method = ep.method;
    out.request.idempotent = ep.idempotent;
    if (opts)
    {
        out.prio = opts->prio;
        out.deadline = opts->deadline;
        out.retry = opts->retry;
    }
    out.request.timeout = opts && opts->timeout ? *opts->timeout : params_.request_timeout;
    auto& h = out.request.headers;
    h.reserve(6 + (opts ? opts->extra_headers.size() : 0), params_.api_key.size() + params_.user_agent.size() + 96);
    h.add("X-Auth-Token", params_.api_key);
    h.add("Accept", "application/json");
    h.add("User-Agent", params_.user_agent);
    if (!body.empty())
        h.add("Content-Type", "application/json");
    if (opts)
    {
        for (auto f : opts->extra_headers)
        {
            if (!detail::is_settable_header(f.name, f.value))
            {
                if (!out.error)
                {
                    out.error = client_errc::invalid_argument;
                    out.error_message = "extra header '" + std::string(f.name.view().substr(0, 64)) +
                                        "' is not allowed or contains CR/LF";
                }
                continue;
            }
            h.set(f.name, f.value);
        }
    }
    out.request.body = std::move(body);
    // The parent goes in the headers: forwarded as it is without a tracer,
    // read back by the operation with one (execute_op::start_trace).
    if ((opts && opts->trace_parent) || tracing_)
    {
        if (const auto parent = trace_parent_of(opts))
            set_trace_headers(h, *parent);
    }
}

DIGITAL_DELIVERY_DECL rate_limit_snapshot detail::client_impl::rate_limit() const
{
    return limiter_->snapshot();
}

namespace detail {

// Fills diag's server fields from a JSON error body of either shape.
inline void read_json_error(const http_response& r, diagnostics& d)
{
    boost::system::error_code jec;
    unsigned char buf[2048];
    boost::json::monotonic_resource mr(buf, sizeof buf);
    auto v = boost::json::parse(r.body, jec, &mr);
    if (jec)
        return;
    const auto* o = v.if_object();
    if (!o)
        return;
    if (auto it = o->find("error"); it != o->end() && it->value().is_string())
        d.server_message = std::string(it->value().get_string());
    if (auto it = o->find("errors"); it != o->end())
    {
        if (const auto* a = it->value().if_array())
        {
            for (const auto& e : *a)
                if (e.is_string())
                    d.server_errors.emplace_back(e.get_string());
        }
        else if (it->value().is_string())
            d.server_errors.emplace_back(it->value().get_string());
    }
    // server_message has the server's words whatever the shape: the messages
    // of a validation list, joined with "; ", when there is no single error.
    if (d.server_message.empty() && !d.server_errors.empty())
        d.server_message = detail::joined_errors(d);
    if (auto it = o->find("code"); it != o->end() && it->value().is_string())
        d.code = std::string(it->value().get_string());
}

inline api_errc api_errc_for_message(std::string_view m) noexcept
{
    return api_errc_of_message(trim_ows(m));
}

// A status no HTTP response has (RFC 9110: 100-599), e.g. from a transport of
// one's own: a protocol error, never a final response.
inline bool refuse_non_http_status(const http_response& r, diagnostics& d)
{
    if (r.status >= 100 && r.status <= 599)
        return false;
    d.http_status = r.status;
    d.client_message = "the response status " + std::to_string(r.status) + " is outside 100-599";
    return true;
}

}  // namespace detail

DIGITAL_DELIVERY_DECL error_code detail::classify_api_response(const http_response& r, diagnostics* diag)
{
    if (r.status >= 200 && r.status < 300)
        return {};
    return classify_api_response(r, read_response_facts(r.headers, r.status, detail::clock::system_now()), diag);
}

DIGITAL_DELIVERY_DECL error_code detail::classify_api_response(
    const http_response& r,
    const response_facts& facts,
    diagnostics* diag
)
{
    if (r.status >= 200 && r.status < 300)
        return {};
    diagnostics local;
    diagnostics& d = diag ? *diag : local;
    if (refuse_non_http_status(r, d))
        return client_errc::protocol_error;
    d.http_status = r.status;
    const auto ct = r.headers.find("Content-Type").value_or("");
    const bool json = ct.find("json") != std::string_view::npos ||
                      (!r.body.empty() && (r.body.front() == '{' || r.body.front() == '['));
    if (json)
        read_json_error(r, d);

    // A known message names the failure precisely, under the status the API
    // gives it (a 404's "Order not found"; not a 422 or a 400 saying so).
    api_errc specific{};
    if (!d.server_message.empty())
        specific = api_errc_for_message(d.server_message);
    for (const auto& e : d.server_errors)
        if (specific == api_errc{})
            specific = api_errc_for_message(e);

    switch (r.status)
    {
    case 400: return api_errc::bad_request;
    case 401: return api_errc::invalid_api_key;
    case 404:
        // The API's 404s carry {"error": ...}: without it, the path probably
        // missed the API (a base URL without its /api/v1/external); proxies
        // may add prefixes, so no other path is refused.
        if (d.server_message.empty() && d.client_message.empty())
            d.client_message = "a 404 without the API's error body: the base URL may be wrong (it should end with "
                               "/api/v1/external)";
        return make_error_code(specific) == condition::not_found ? specific : api_errc::not_found;
    case 422:
        if (d.code == "asset_storage_limit_exceeded")
            return api_errc::asset_storage_limit_exceeded;
        if (d.code == "asset_count_limit_exceeded")
            return api_errc::asset_count_limit_exceeded;
        return make_error_code(specific) == condition::validation ? specific : api_errc::validation_failed;
    case 429:
        d.retry_after = facts.retry_after;
        return api_errc::rate_limited;
    default: break;
    }
    if (r.status >= 500 && r.status < 600)
        return api_errc::server_error;
    if (!json && d.client_message.empty())
        d.client_message = "undocumented status with a non-JSON body (" + std::string(ct.substr(0, 64)) + ")";
    return client_errc::unexpected_status;
}

namespace detail {
inline std::string_view xml_element(std::string_view body, std::string_view name)
{
    std::string open = "<" + std::string(name) + ">", close = "</" + std::string(name) + ">";
    auto b = body.find(open);
    if (b == std::string_view::npos)
        return {};
    b += open.size();
    auto e = body.find(close, b);
    if (e == std::string_view::npos)
        return {};
    return body.substr(b, std::min<std::size_t>(e - b, 512));
}
}  // namespace detail

DIGITAL_DELIVERY_DECL error_code detail::classify_storage_response(const http_response& r, diagnostics* diag)
{
    if (r.status >= 200 && r.status < 300)
        return {};
    diagnostics local;
    diagnostics& d = diag ? *diag : local;
    if (refuse_non_http_status(r, d))
        return client_errc::protocol_error;
    d.http_status = r.status;
    // Only <Code> and <Message>: S3 error bodies may echo the signature and
    // the canonical request, which must not reach logs.
    d.code = std::string(xml_element(r.body, "Code"));
    d.server_message = std::string(xml_element(r.body, "Message"));
    if (d.code == "SignatureDoesNotMatch")
        return api_errc::storage_signature_mismatch;
    if (r.status == 403 && d.server_message.find("expired") != std::string::npos)
        return api_errc::storage_request_expired;
    if (r.status == 403)
        return api_errc::storage_access_denied;
    return api_errc::storage_error;
}

namespace detail {

// One request, start to end. The rules (deadline, attempt timeout, points,
// refunds, retries, what diagnostics record) are request_core's
// (impl/engine/sansio/request_core.hpp): this driver turns the limiter's
// grants, the transport's responses and the backoff timer's expiries into
// its events and performs the actions it answers with. The observer's events
// are the driver's, built from the core's state (its attempt number, its
// last wait for points): they need the request and the response, which the
// core never sees, and cost nothing when no observer is installed.
//
// Everything the operation owns lives in one execute_state block allocated
// from Asio's per-thread recycling allocator: the composed operation itself
// only holds a pointer, so moving it into each intermediate completion
// handler moves one pointer instead of the whole prepared_request.
struct execute_state
{
    using clock = detail::clock;
    // Where the operation resumes: what it is waiting for.
    enum class state
    {
        start,
        rejected,
        acquired,
        responded,
        backed_off,
    };

    std::shared_ptr<client_impl> self;
    prepared_request p;
    diagnostics* diag;
    request_core core;
    std::unique_ptr<detail::timer> timer;
    state st = state::start;
    // Set only when an observer is installed (impl/engine/observe.hpp).
    request_info info;
    clock::time_point started{}, attempt_started{}, responded_at{};
    std::size_t sent_bytes = 0;
    std::unique_ptr<diagnostics> own_diag;  // on failure, when the caller passed none
    // The last 429's diagnostics (status, the server's words, Retry-After),
    // kept while the request waits to be resent: a request the rate limit
    // then ends (the deadline, max_rate_limited_wait) reports them.
    std::unique_ptr<diagnostics> refusal;
    // Set only with a tracer or a parent (impl/trace/op_trace.hpp).
    std::unique_ptr<op_trace> trace;

    execute_state(std::shared_ptr<client_impl> s, prepared_request&& pr, diagnostics* d)
        : self(std::move(s)), p(std::move(pr)), diag(d), core(setup_of(*self, p))
    {
    }

    static request_setup setup_of(const client_impl& c, const prepared_request& p)
    {
        request_setup r;
        r.retry = p.retry ? &*p.retry : &c.params().retry;
        r.budget = c.budget();
        r.cost = p.cost;
        r.prio = p.prio;
        r.idempotent = p.idempotent;
        r.gone_means_done = p.gone_means_done;
        r.deadline = p.deadline;
        r.operation_timeout = c.params().operation_timeout;
        r.timeout = p.request.timeout;
        r.rejected = p.error;
        return r;
    }
};

struct execute_state_deleter
{
    void operator()(execute_state* s) const noexcept
    {
        s->~execute_state();
        boost::asio::recycling_allocator<execute_state>().deallocate(s, 1);
    }
};

using execute_state_ptr = std::unique_ptr<execute_state, execute_state_deleter>;

inline execute_state_ptr make_execute_state(std::shared_ptr<client_impl> self, prepared_request&& p, diagnostics* diag)
{
    boost::asio::recycling_allocator<execute_state> a;
    execute_state* mem = a.allocate(1);
    try
    {
        return execute_state_ptr(::new (static_cast<void*>(mem)) execute_state(std::move(self), std::move(p), diag));
    }
    catch (...)
    {
        a.deallocate(mem, 1);
        throw;
    }
}

struct execute_op
{
    using clock = detail::clock;
    using state = execute_state::state;
    using kind = request_action::kind;

    execute_state_ptr s_;

    // Completes the operation. The state block is released first (the
    // response and error are values), so the caller's handler, which may
    // start the next request, can reuse its memory; the client itself stays
    // alive until the handler has returned, as before.
    template <class Self>
    void finish(Self& self, error_code ec, http_response&& resp)
    {
        if (observer* o = s_->self->obs())
            observe_end(*o, ec);
        if (s_->trace)
            s_->trace->end(ec, clock::system_now());
        std::shared_ptr<client_impl> keep = std::move(s_->self);
        s_.reset();
        self.complete(ec, std::move(resp));
    }

    // ---- observer events (only called when one is installed) ----

    // A failure gets diagnostics even when the caller passed none (the
    // observer's; a success does without: no allocation on that path).
    void own_diagnostics()
    {
        execute_state& s = *s_;
        if (s.diag)
            return;
        s.own_diag = std::make_unique<diagnostics>();
        s.diag = s.own_diag.get();
        s.diag->method = std::string(to_string(s.p.method));
        s.diag->host = s.self->host();
        s.diag->path = s.p.path;
    }

    void observe_end(observer& o, error_code ec)
    {
        execute_state& s = *s_;
        // Ending right after a response: its time is the end's.
        const auto now = s.st == state::responded ? s.responded_at : clock::now();
        if (ec && !s.diag)
        {
            own_diagnostics();
            if (s.p.error && s.diag->client_message.empty())
                s.diag->client_message = s.p.error_message;
        }
        notify_end(o, s.info, ec, s.diag, s.core.attempt(), now - s.started);
    }

    void observe_response(error_code ec, const http_response& resp)
    {
        if (observer* o = s_->self->obs())
            notify_response(*o, s_->info, s_->core.attempt(), ec, resp, s_->responded_at - s_->attempt_started, s_->sent_bytes);
    }

    void observe_limiter_wait(error_code ec)
    {
        execute_state& s = *s_;
        if (observer* o = s.self->obs(); o && s.self->limiter().params().enabled)
            notify_limiter_wait(*o, s.info, s.p.cost, s.p.prio, s.core.last_wait(), ec);
    }

    // ---- spans (only called when the operation has a trace) ----

    // The parent is in the request's headers (client_impl::prepare).
    void start_trace()
    {
        execute_state& s = *s_;
        const std::string_view name = s.p.endpoint.empty() ? std::string_view("raw_request") : s.p.endpoint;
        std::optional<trace_context> parent;
        if (const auto tp = s.p.request.headers.find("traceparent"))
            parent = parse_trace_context(*tp, s.p.request.headers.find("tracestate").value_or(std::string_view()));
        s.trace = op_trace::start(s.self->tracer(), s.self->params().trace, parent ? &*parent : nullptr, name, clock::system_now());
    }

    void trace_limiter_wait()
    {
        execute_state& s = *s_;
        s.trace->wait_start("rate_limit_wait", "rate_limit", s.core.cost(), std::chrono::milliseconds(-1), clock::system_now());
        s.trace->wait_attribute("digital_delivery.priority", std::string(to_string(s.core.prio())));
    }

    void trace_attempt(http_request& req)
    {
        execute_state& s = *s_;
        client_impl& c = *s.self;
        s.trace->attempt_start(s.p.method, s.p.path_template, req.url, c.server_address(), c.server_port(), s.core.attempt(), clock::system_now());
        s.trace->inject(req.headers);
    }

    void trace_backoff(error_code cause, const response_facts& facts, std::chrono::milliseconds delay)
    {
        execute_state& s = *s_;
        s.trace->wait_start("backoff", facts.retry_after ? "retry_after" : "backoff", 0, delay, clock::system_now());
        s.trace->wait_attribute("digital_delivery.retry.cause", std::string(error_type(cause)));
    }

    // A terminal cancellation may arrive after a step completed successfully
    // (the limiter's grant or the backoff timer's expiry already queued) and
    // before the operation resumes: the completion then carries no error.
    template <class Self>
    static bool cancelled(Self& self)
    {
        return (self.get_cancellation_state().cancelled() & boost::asio::cancellation_type::terminal) !=
               boost::asio::cancellation_type::none;
    }

    // ---- the core's actions ----

    void tell_limiter(limiter_step step, const response_facts& facts)
    {
        rate_limiter& l = s_->self->limiter();
        switch (step)
        {
        case limiter_step::none: return;
        case limiter_step::observe_response:
            l.observe_response(facts);
            if (facts.status == 429)
                l.not_charged(s_->core.cost());  // refused unprocessed: no fallback debt
            return;
        case limiter_step::attempt_over: l.observe_response(response_facts{}); return;  // resume refilling
        case limiter_step::refund: l.refund(s_->core.cost()); return;
        }
    }

    // Performs an acquire, send or complete action (a wait only follows a
    // response: see the responded state). `now` is the time of the event;
    // `resp` the response a completion may hand over.
    template <class Self>
    void perform(Self& self, request_action a, clock::time_point now, http_response* resp = nullptr)
    {
        execute_state& s = *s_;
        if (a.limiter != limiter_step::none)
            tell_limiter(a.limiter, response_facts{});
        if (a.what == kind::acquire)
        {
            rate_limiter& l = s.self->limiter();
            // Points available at once (or the limiter disabled): straight to
            // the attempt (the transport never completes inline, so neither
            // does this). Otherwise the limiter's queue, which completes
            // through a post.
            if (!a.try_now || !l.try_acquire(s.core.cost(), s.core.prio()))
            {
                s.st = state::acquired;
                if (s.trace && l.params().enabled)
                    trace_limiter_wait();
                l.async_acquire(s.core.cost(), s.core.prio(), s.core.acquire_deadline(), std::move(self));
                return;
            }
            a = s.core.granted({}, now);  // a send: the deadline was checked by try_now
            observe_limiter_wait({});
        }
        if (a.what == kind::send)
        {
            // Each attempt gets its own copy when a retry may resend the
            // original; the last possible attempt takes the request itself.
            http_request req = a.move_request ? std::move(s.p.request) : http_request(s.p.request);
            if (observer* o = s.self->obs())
            {
                s.attempt_started = now;
                s.sent_bytes = req.body.size();
                notify_request_start(*o, s.info, s.p.prio, s.core.attempt());
            }
            if (s.trace)
                trace_attempt(req);
            req.timeout = a.duration;
            s.st = state::responded;
            any_transport t = s.self->transport();
            t.async_send(std::move(req), std::move(self));
            return;
        }
        // complete (a wait only follows a response: the responded state performs it)
        if (s.diag && s.refusal && s.diag->http_status == 0 &&
            (a.ec == client_errc::rate_limited_too_long || a.ec == client_errc::rate_limit_wait_exceeds_deadline))
        {
            diagnostics& r = *s.refusal;
            s.diag->http_status = r.http_status;
            s.diag->server_message = std::move(r.server_message);
            s.diag->server_errors = std::move(r.server_errors);
            s.diag->code = std::move(r.code);
            s.diag->retry_after = r.retry_after;
        }
        if (s.diag)
            s.core.record(*s.diag);
        if (a.with_response && resp)
            finish(self, a.ec, std::move(*resp));
        else
            finish(self, a.ec, http_response{});
    }

    // The transport's response arrives by reference (no move into a
    // parameter); the other completions carry none.
    template <class Self>
    void operator()(Self& self, error_code ec = {}, http_response&& resp = {})
    {
        execute_state& s = *s_;
        switch (s.st)
        {
        case state::start:
        {
            if (s.self->obs())
                s.info = observed_request(s.p, s.self->host());
            if (s.self->tracer())
                start_trace();
            if (s.diag)
            {
                s.diag->clear();
                s.diag->method = std::string(to_string(s.p.method));
                s.diag->host = s.self->host();
                s.diag->path = s.p.path;
            }
            const auto now = clock::now();
            s.started = now;
            const request_action a = s.core.started(now);
            if (a.what == kind::complete)
            {
                // Refused before sending: never complete inline.
                s.st = state::rejected;
                auto ex = s.self->get_executor();
                boost::asio::post(ex, std::move(self));
                return;
            }
            return perform(self, a, now);
        }

        case state::rejected:
            if (s.diag)
                s.diag->client_message = std::move(s.p.error_message);
            finish(self, s.p.error, http_response{});
            return;

        case state::acquired:
        {
            const auto now = clock::now();
            const request_action a = !ec && cancelled(self) ? s.core.cancelled(now) : s.core.granted(ec, now);
            observe_limiter_wait(ec);
            if (s.trace)  // a queue that granted within 1 ms: no wait to show
                s.trace->wait_end(ec, clock::system_now(), std::chrono::milliseconds(1));
            return perform(self, a, now);
        }

        case state::responded:
        {
            const bool observed = s.self->obs() != nullptr;
            if (observed)
            {
                s.responded_at = clock::now();
                if (ec || resp.status < 200 || resp.status > 299)
                    own_diagnostics();
            }
            // The response's headers, read once: the limiter, the retry
            // decision and the diagnostics take them from here.
            const response_facts facts = read_response_facts(resp.headers, resp.status, clock::system_now());
            const error_code api_ec = ec ? error_code() : classify_api_response(resp, facts, s.diag);
            // The time matters to the core only for a failure (the retry
            // decision): a success reads no clock without an observer.
            const auto now = observed ? s.responded_at : ec || api_ec ? clock::now() : clock::time_point{};
            const request_action a = s.core.responded(ec, api_ec, facts, now);
            if (s.trace)
                s.trace->attempt_end(ec ? 0u : resp.status, ec ? ec : api_ec, clock::system_now());
            if (a.limiter == limiter_step::observe_response)
                tell_limiter(a.limiter, facts);
            observe_response(ec ? ec : api_ec, resp);
            if (ec)
            {
                describe_transport_failure(s.diag, ec, resp);
                tell_limiter(a.limiter, facts);
            }
            if (a.what != kind::wait)
            {
                request_action done = a;
                done.limiter = limiter_step::none;  // told above
                return perform(self, done, now, &resp);
            }
            if (cancelled(self))
                return perform(self, s.core.cancelled(now), now);
            // The next attempt starts afresh: drop what the failure recorded
            // (a 429's: kept apart, see execute_state::refusal).
            if (s.diag)
            {
                diagnostics keep;
                keep.method = std::move(s.diag->method);
                keep.host = std::move(s.diag->host);
                keep.path = std::move(s.diag->path);
                if (api_ec == api_errc::rate_limited)
                {
                    if (!s.refusal)
                        s.refusal = std::make_unique<diagnostics>();
                    *s.refusal = std::move(*s.diag);
                }
                *s.diag = std::move(keep);
            }
            if (observer* o = s.self->obs())
                notify_retry(*o, s.info, s.core.attempt(), ec ? ec : api_ec, resp.status, a.duration);
            if (!s.timer)
                s.timer = std::make_unique<detail::timer>(s.self->get_executor());
            s.timer->expires_after(a.duration);
            s.st = state::backed_off;
            if (s.trace)
                trace_backoff(ec ? ec : api_ec, facts, a.duration);
            auto& t = *s.timer;
            t.async_wait(std::move(self));
            return;
        }

        case state::backed_off:
        {
            const auto now = clock::now();
            if (s.trace)
                s.trace->wait_end(ec, clock::system_now());
            const request_action a = !ec && cancelled(self) ? s.core.cancelled(now) : s.core.timer_fired(ec, now);
            return perform(self, a, now);
        }
        }
    }
};

}  // namespace detail

DIGITAL_DELIVERY_DECL void detail::client_impl::async_execute(
    std::shared_ptr<client_impl> self,
    prepared_request&& p,
    diagnostics* diag,
    raw_handler h
)
{
    auto ex = self->get_executor();
    execute_op op{make_execute_state(std::move(self), std::move(p), diag)};
    // With a plain io_context executor (the usual case), compose over the
    // concrete executor type: its work guard and the completion executor the
    // transport obtains from our handler are then held inline instead of in
    // heap-allocated type-erased wrappers. Same io_context, same semantics.
    if (const auto* io = ex.target<boost::asio::io_context::executor_type>())
        boost::asio::async_compose<raw_handler, void(error_code, http_response)>(std::move(op), h, *io);
    else
        boost::asio::async_compose<raw_handler, void(error_code, http_response)>(std::move(op), h, ex);
}

}  // namespace digital_delivery

#endif
