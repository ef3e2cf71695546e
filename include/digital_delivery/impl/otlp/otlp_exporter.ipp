//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_OTLP_OTLP_EXPORTER_IPP
#define DIGITAL_DELIVERY_IMPL_OTLP_OTLP_EXPORTER_IPP

#include <digital_delivery/beast_transport.hpp>
#include <digital_delivery/detail/clock.hpp>
#include <digital_delivery/impl/http/sansio/header_rules.hpp>
#include <digital_delivery/impl/retry/retry_policy.hpp>
#include <digital_delivery/impl/otlp/sansio/otlp_json.hpp>
#include <digital_delivery/metrics.hpp>
#include <digital_delivery/otlp_exporter.hpp>
#include <digital_delivery/rate_limit.hpp>
#include <digital_delivery/version.hpp>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include <cerrno>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <future>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace digital_delivery {

/// \cond detail
// Everything the exporter's asynchronous work shares; its handlers hold it by
// shared_ptr. The queue and the counters are under `mtx`; the rest is touched
// only on `strand`.
struct otlp_exporter::state : std::enable_shared_from_this<otlp_exporter::state>
{
    state(boost::asio::any_io_executor ex, otlp_exporter_params p)
        : params(std::move(p)), strand(boost::asio::make_strand(ex)), schedule_timer(strand), retry_timer(strand)
    {
    }

    otlp_exporter_params params;
    std::string url;
    detail::otlp_resource resource;
    std::FILE* file = nullptr;
    // On its own thread, shutdown() waits (bounded) for the last export, retries
    // included; on an executor nobody waits: a failed POST after shutdown() ends there.
    bool retries_after_shutdown = false;
    boost::asio::strand<boost::asio::any_io_executor> strand;

    // Under mtx.
    mutable std::mutex mtx;
    std::deque<span_data> queue;
    bool scheduled = false;  // a schedule_timer wait or a pump is pending
    bool stopping = false;
    std::uint64_t accepted = 0;   // spans ever queued
    std::uint64_t processed = 0;  // of them, exported or dropped after queueing
    otlp_exporter_stats stats;

    // On strand only.
    detail::timer schedule_timer;
    detail::timer retry_timer;
    bool busy = false;
    std::vector<span_data> batch;
    std::string body;
    int attempt = 0;
    std::vector<std::pair<std::uint64_t, boost::asio::any_completion_handler<void()>>> flushes;

    ~state()
    {
        if (file)
            std::fclose(file);
    }

    void arm_timer()
    {
        schedule_timer.expires_after(params.schedule_delay);
        schedule_timer.async_wait(boost::asio::bind_executor(strand, [self = shared_from_this()](error_code ec) {
            if (ec != boost::asio::error::operation_aborted)
                self->pump();
        }));
    }

    void kick()
    {
        boost::asio::post(strand, [self = shared_from_this()] {
            self->schedule_timer.cancel();
            self->pump();
        });
    }

    // Takes the next batch and exports it, unless one is under way.
    void pump()
    {
        if (busy)
            return;
        {
            std::lock_guard<std::mutex> lk(mtx);
            const std::size_t n = std::min(queue.size(), params.max_batch_size);
            batch.clear();
            batch.reserve(n);
            for (std::size_t i = 0; i < n; ++i)
            {
                batch.push_back(std::move(queue.front()));
                queue.pop_front();
            }
            if (queue.empty() && batch.empty())
                scheduled = false;
        }
        if (batch.empty())
        {
            complete_flushes();
            return;
        }
        busy = true;
        body = detail::encode_otlp_json(batch, resource);
        if (file)
        {
            body += '\n';
            const bool written = std::fwrite(body.data(), 1, body.size(), file) == body.size() && std::fflush(file) == 0;
            body.pop_back();
            if (!written)
                return finish(false);
        }
        if (url.empty())
            return finish(true);
        attempt = 0;
        send();
    }

    void send()
    {
        ++attempt;
        http_request req;
        req.method = http_method::post;
        req.url = url;
        req.headers.set("Content-Type", "application/json");
        for (const auto& [name, value] : params.headers)
            req.headers.add(name, value);
        req.body = body;
        req.idempotent = true;
        req.timeout = params.export_timeout;
        {
            std::lock_guard<std::mutex> lk(mtx);
            ++stats.export_requests;
        }
        params.transport.async_send(
            std::move(req),
            boost::asio::bind_executor(strand, [self = shared_from_this()](error_code ec, http_response resp) {
                self->on_response(ec, resp);
            }));
    }

    void on_response(error_code ec, const http_response& resp)
    {
        switch (detail::classify_otlp_post(static_cast<bool>(ec), resp.status))
        {
        case detail::otlp_post_outcome::delivered:
            return finish(true, std::min<std::uint64_t>(detail::rejected_spans(resp.body), batch.size()));
        case detail::otlp_post_outcome::rejected: return finish(false);
        case detail::otlp_post_outcome::retry: break;
        }
        bool stop;
        {
            std::lock_guard<std::mutex> lk(mtx);
            stop = stopping;
        }
        if (attempt >= params.max_attempts || (stop && !retries_after_shutdown))
            return finish(false);
        std::optional<std::chrono::milliseconds> server_wait;
        if (resp.status == 429 || resp.status == 503)
            if (auto v = resp.headers.find("Retry-After"))
                server_wait = parse_retry_after(*v, detail::clock::system_now());
        if (server_wait && *server_wait > params.max_retry_after)
            return finish(false);
        const auto delay = detail::retry_delay(
            attempt, {params.initial_backoff, params.max_backoff, 2.0}, detail::jitter_unit(), server_wait,
            params.max_retry_after);
        retry_timer.expires_after(delay);
        retry_timer.async_wait(boost::asio::bind_executor(strand, [self = shared_from_this()](error_code wec) {
            if (wec == boost::asio::error::operation_aborted)
                return self->finish(false);
            self->send();
        }));
    }

    // `rejected`: of a delivered batch, the spans the collector said it refused.
    void finish(bool delivered, std::uint64_t rejected = 0)
    {
        const std::uint64_t n = batch.size();
        const std::uint64_t dropped = delivered ? rejected : n;
        batch.clear();
        busy = false;
        bool more;
        bool urgent;
        {
            std::lock_guard<std::mutex> lk(mtx);
            stats.exported += n - dropped;
            stats.dropped_export_failed += dropped;
            processed += n;
            more = !queue.empty();
            urgent = queue.size() >= params.max_batch_size || !flushes.empty() || stopping;
            if (!more)
                scheduled = false;
        }
        count_dropped(dropped);
        complete_flushes();
        if (more && urgent)
            boost::asio::post(strand, [self = shared_from_this()] { self->pump(); });
        else if (more)
            arm_timer();
    }

    void count_dropped(std::uint64_t n) const
    {
        if (params.metrics && n)
            params.metrics->on_spans_dropped(n);
    }

    void complete_flushes()
    {
        std::uint64_t done;
        {
            std::lock_guard<std::mutex> lk(mtx);
            done = processed;
        }
        for (auto it = flushes.begin(); it != flushes.end();)
        {
            if (it->first <= done)
            {
                boost::asio::post(strand, std::move(it->second));
                it = flushes.erase(it);
            }
            else
                ++it;
        }
    }

    void cancel_timers()
    {
        boost::asio::post(strand, [self = shared_from_this()] {
            self->schedule_timer.cancel();
            self->retry_timer.cancel();
        });
    }
};

struct otlp_exporter::own_thread
{
    boost::asio::io_context ioc{1};
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work{ioc.get_executor()};
    std::thread thread;
};

namespace detail {

inline bool is_http_url(std::string_view u) noexcept
{
    return u.starts_with("http://") || u.starts_with("https://");
}

// The executable's file name, for service.name.
inline std::string executable_name()
{
    std::error_code ec;
    const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec || p.filename().empty())
        return "unknown_service";
    return p.filename().string();
}

inline void setup_exporter(otlp_exporter::state& s, boost::asio::any_io_executor ex)
{
    auto& p = s.params;
    if (!p.traces_endpoint.empty())
        s.url = p.traces_endpoint;
    else if (!p.endpoint.empty())
    {
        s.url = p.endpoint;
        while (!s.url.empty() && s.url.back() == '/')
            s.url.pop_back();
        s.url += "/v1/traces";
    }
    if (s.url.empty() && p.file.empty())
        throw std::invalid_argument("otlp_exporter: no destination (set endpoint, traces_endpoint or file)");
    if (!s.url.empty() && !is_http_url(s.url))
        throw std::invalid_argument("otlp_exporter: the collector's URL must start with http:// or https://");
    for (const auto& [name, value] : p.headers)
        if (!is_settable_header(name, value) || iequals(name, "Content-Type"))
            throw std::invalid_argument("otlp_exporter: header " + name + " cannot be set");
    if (p.max_queue_size == 0 || p.max_batch_size == 0)
        throw std::invalid_argument("otlp_exporter: max_queue_size and max_batch_size must be at least 1");
    if (p.max_attempts < 1)
        p.max_attempts = 1;
    if (!s.url.empty() && !p.transport)
        p.transport = beast_transport(std::move(ex));
    if (!p.file.empty())
    {
        s.file = std::fopen(p.file.c_str(), "ab");
        if (!s.file)
            throw std::system_error(errno, std::generic_category(), "otlp_exporter: cannot open " + p.file);
    }
    s.resource.service_name = p.service_name.empty() ? executable_name() : p.service_name;
    s.resource.scope_name = "digital_delivery";
    s.resource.scope_version = DIGITAL_DELIVERY_VERSION_STRING;
    s.resource.service_version = p.service_version;
}

}  // namespace detail
/// \endcond

DIGITAL_DELIVERY_DECL otlp_exporter::otlp_exporter(otlp_exporter_params params) : own_(std::make_unique<own_thread>())
{
    s_ = std::make_shared<state>(own_->ioc.get_executor(), std::move(params));
    try
    {
        detail::setup_exporter(*s_, own_->ioc.get_executor());
    }
    catch (...)
    {
        s_.reset();  // its timers and transport before own_'s io_context (members go in reverse order)
        throw;
    }
    s_->retries_after_shutdown = true;
    own_->thread = std::thread([io = &own_->ioc] { io->run(); });
}

DIGITAL_DELIVERY_DECL otlp_exporter::otlp_exporter(boost::asio::any_io_executor ex, otlp_exporter_params params)
    : s_(std::make_shared<state>(ex, std::move(params)))
{
    detail::setup_exporter(*s_, std::move(ex));
}

DIGITAL_DELIVERY_DECL otlp_exporter::~otlp_exporter()
{
    shutdown();
    // The state's timers and transport use own_'s io_context: the state goes
    // first (or with the handlers that still hold it, as the io_context ends).
    s_.reset();
    own_.reset();
}

DIGITAL_DELIVERY_DECL void otlp_exporter::on_end(span_data&& span) noexcept
{
    state& s = *s_;
    bool kick = false;
    bool arm = false;
    std::uint64_t dropped = 0;
    try
    {
        std::lock_guard<std::mutex> lk(s.mtx);
        if (s.stopping || s.queue.size() >= s.params.max_queue_size)
        {
            ++s.stats.dropped_queue_full;
            dropped = 1;
        }
        else
        {
            s.queue.push_back(std::move(span));
            ++s.accepted;
            kick = s.queue.size() == s.params.max_batch_size;
            arm = !s.scheduled;
            s.scheduled = true;
        }
    }
    catch (...)
    {
        // Out of memory: the span is lost, the request goes on.
        return;
    }
    if (dropped)
        return s.count_dropped(dropped);
    if (kick)
        s.kick();
    else if (arm)
        boost::asio::post(s.strand, [self = s_] { self->arm_timer(); });
}

DIGITAL_DELIVERY_DECL void otlp_exporter::start_flush(boost::asio::any_completion_handler<void()> h)
{
    std::uint64_t target;
    {
        std::lock_guard<std::mutex> lk(s_->mtx);
        target = s_->accepted;
    }
    boost::asio::post(s_->strand, [self = s_, target, h = std::move(h)]() mutable {
        self->flushes.emplace_back(target, std::move(h));
        self->schedule_timer.cancel();
        self->pump();
        self->complete_flushes();
    });
}

DIGITAL_DELIVERY_DECL bool otlp_exporter::flush(std::chrono::milliseconds timeout)
{
    auto done = std::make_shared<std::promise<void>>();
    auto f = done->get_future();
    start_flush([done] { done->set_value(); });
    return f.wait_for(timeout) == std::future_status::ready;
}

DIGITAL_DELIVERY_DECL bool otlp_exporter::shutdown(std::chrono::milliseconds timeout)
{
    {
        std::lock_guard<std::mutex> lk(s_->mtx);
        if (s_->stopping)
            return true;
        s_->stopping = true;
    }
    bool flushed;
    // On an executor the caller may be running (a destructor at the end of a
    // coroutine), a blocking wait could never end: only the own thread waits.
    if (own_)
        flushed = flush(timeout);
    else
    {
        {
            std::lock_guard<std::mutex> lk(s_->mtx);
            flushed = s_->processed == s_->accepted;
        }
        start_flush([] {});
    }
    s_->cancel_timers();
    if (own_ && own_->thread.joinable())
    {
        own_->work.reset();
        own_->ioc.stop();
        own_->thread.join();
    }
    return flushed;
}

DIGITAL_DELIVERY_DECL otlp_exporter_stats otlp_exporter::stats() const
{
    std::lock_guard<std::mutex> lk(s_->mtx);
    return s_->stats;
}

DIGITAL_DELIVERY_DECL const std::string& otlp_exporter::traces_url() const noexcept { return s_->url; }

DIGITAL_DELIVERY_DECL const std::string& otlp_exporter::service_name() const noexcept
{
    return s_->resource.service_name;
}

}  // namespace digital_delivery

#endif
