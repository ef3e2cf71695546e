//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_UPLOAD_IPP
#define DIGITAL_DELIVERY_IMPL_UPLOAD_IPP

// The upload operation (docs/uploads.md). One object per upload, driven by
// callbacks serialized on a strand of the client's executor:
//
//   begin ─► create (POST /assets) or replace ─► [URL close to expiry? replace]
//         ─► PUT (tracked source) ─► done ─► [GET /assets/{id}] ─► complete
//                      │
//                      ├─ transport error / 5xx ─► backoff ─► rewind ─► PUT
//                      └─ 403 "Request has expired" ─► replace ─► rewind ─► PUT
//
// Every child operation (API call, PUT, timer) is bound to one internal
// cancellation signal; the user's terminal cancellation, the stall timer and
// the deadline timer all go through abort(), which emits it and makes the
// tracked source fail its next read. The child's completion then finishes
// the operation, so nothing is left running when the handler is called.

#include <digital_delivery/detail/client_impl.hpp>
#include <digital_delivery/impl/engine/endpoint_call.hpp>
#include <digital_delivery/impl/engine/observe.hpp>
#include <digital_delivery/impl/retry/retry_policy.hpp>
#include <digital_delivery/impl/retry/retry_state.hpp>
#include <digital_delivery/impl/http/sansio/response_facts.hpp>
#include <digital_delivery/impl/trace/op_trace.hpp>
#include <digital_delivery/impl/upload/sansio/upload_core.hpp>
#include <digital_delivery/endpoints.hpp>
#include <digital_delivery/http_message.hpp>
#include <digital_delivery/impl/http/sansio/header_rules.hpp>
#include <digital_delivery/upload.hpp>

#include <boost/asio/append.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <digital_delivery/detail/transparent_handler.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <digital_delivery/detail/clock.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/system_executor.hpp>
#include <boost/system/system_error.hpp>

#include <array>
#include <cerrno>
#include <mutex>
#include <span>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace digital_delivery {

namespace detail {
// Completes a read handler without calling it inline: through `ex` when the
// source was given one, else through the handler's associated executor.
inline void post_read_completion(
    const boost::asio::any_io_executor& ex,
    body_source::read_handler h,
    error_code ec,
    std::size_t n
)
{
    // post(ex, h) runs on `ex`, then dispatches to h's associated executor.
    if (ex)
        boost::asio::post(ex, boost::asio::append(std::move(h), ec, n));
    else
        boost::asio::post(boost::asio::system_executor(), boost::asio::append(std::move(h), ec, n));
}
}  // namespace detail

// ---- file_source --------------------------------------------------------------------------

DIGITAL_DELIVERY_DECL std::shared_ptr<file_source> file_source::open(
    const std::string& path,
    error_code& ec,
    boost::asio::any_io_executor executor
)
{
    int fd;
    do
        fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
    {
        ec = client_errc::source_unreadable;
        return nullptr;
    }
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    {
        ::close(fd);
        ec = client_errc::source_unreadable;
        return nullptr;
    }
#ifdef POSIX_FADV_SEQUENTIAL
    (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    ec = {};
    return std::make_shared<file_source>(fd, static_cast<std::uint64_t>(st.st_size), std::move(executor));
}

DIGITAL_DELIVERY_DECL file_source::~file_source()
{
    if (fd_ >= 0)
        ::close(fd_);
}

DIGITAL_DELIVERY_DECL void file_source::async_read_some(boost::asio::mutable_buffer buf, read_handler handler)
{
    error_code ec;
    std::size_t n = 0;
    if (offset_ >= size_)
    {
        ec = boost::asio::error::eof;
    }
    else if (buf.size() != 0)
    {
        const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size_ - offset_));
        ssize_t r;
        do
            r = ::pread(fd_, buf.data(), want, static_cast<off_t>(offset_));
        while (r < 0 && errno == EINTR);
        if (r < 0)
            ec = client_errc::source_unreadable;
        else if (r == 0)
            ec = client_errc::source_size_mismatch;  // the file shrank since open()
        else
        {
            n = static_cast<std::size_t>(r);
            offset_ += n;
        }
    }
    detail::post_read_completion(ex_, std::move(handler), ec, n);
}

DIGITAL_DELIVERY_DECL error_code file_source::rewind()
{
    offset_ = 0;
    return {};
}

// ---- memory_source ------------------------------------------------------------------------

DIGITAL_DELIVERY_DECL void memory_source::async_read_some(boost::asio::mutable_buffer buf, read_handler handler)
{
    error_code ec;
    std::size_t n = 0;
    if (offset_ >= view_.size())
        ec = boost::asio::error::eof;
    else
    {
        n = boost::asio::buffer_copy(buf, boost::asio::buffer(view_.data() + offset_, view_.size() - offset_));
        offset_ += n;
    }
    detail::post_read_completion(ex_, std::move(handler), ec, n);
}

// ---- the operation ------------------------------------------------------------------------

namespace detail {

class upload_op;

// Wraps the completion of one read of the user's source: counts the bytes
// (progress, stall detection) and substitutes the abort error once the
// operation is being abandoned. Transparent to the associators.
struct tracked_read_handler
{
    using inner_handler_type = body_source::read_handler;
    std::shared_ptr<upload_op> op;
    inner_handler_type handler;
    void operator()(error_code ec, std::size_t n);
};

}  // namespace detail
}  // namespace digital_delivery

namespace digital_delivery {
namespace detail {

// The source the transport sees.
class tracked_source final : public body_source
{
public:
    tracked_source(std::shared_ptr<body_source> inner, std::weak_ptr<upload_op> op)
        : inner_(std::move(inner)), op_(std::move(op))
    {
    }
    std::uint64_t size() const noexcept override { return inner_->size(); }
    inline void async_read_some(boost::asio::mutable_buffer buf, read_handler handler) override;
    error_code rewind() override { return inner_->rewind(); }

private:
    std::shared_ptr<body_source> inner_;
    std::weak_ptr<upload_op> op_;
};

// "https://h/p/a?q" -> "/p/a" (diagnostics never carry the presigned query).
inline std::string url_path_only(std::string_view url)
{
    auto p = url.find("://");
    if (p == std::string_view::npos)
        return {};
    auto s = url.find('/', p + 3);
    if (s == std::string_view::npos)
        return "/";
    auto q = url.find_first_of("?#", s);
    return std::string(url.substr(s, q == std::string_view::npos ? std::string_view::npos : q - s));
}

// Checks a server-given upload handle before anything is sent to it. `why`
// never carries the URL (its query is the presigned signature).
inline error_code validate_upload_handle(const upload_handle& h, std::string_view base_url, bool allow_insecure,
                                         std::string& why)
{
    if (!iequals(h.method, "PUT"))
    {
        why = "upload handle method is not PUT";
        return client_errc::invalid_url;
    }
    const std::string_view u = h.url;
    if (!(u.starts_with("https://") || u.starts_with("http://")) || has_crlf(u) ||
        u.find_first_of(" \t") != std::string_view::npos || url_path_only(u).empty())
    {
        why = "upload handle url is not an absolute http(s) URL";
        return client_errc::invalid_url;
    }
    if (!allow_insecure && u.starts_with("http://") && base_url.size() >= 8 && iequals(base_url.substr(0, 8), "https://"))
    {
        why = "upload handle url is plain http:// under an https:// base_url "
              "(upload_options::allow_insecure_upload_url allows it)";
        return client_errc::insecure_upload_url;
    }
    for (auto f : h.headers)
    {
        if (!is_settable_header(f.name, f.value))
        {
            why = "upload handle header '" + std::string(f.name.substr(0, 64)) + "' is not allowed";
            return client_errc::invalid_url;
        }
    }
    return {};
}

class upload_op : public std::enable_shared_from_this<upload_op>
{
public:
    using clock = detail::clock;

    upload_op(
        std::shared_ptr<client_impl> impl,
        std::shared_ptr<body_source> src,
        upload_request req,
        upload_options opts,
        stored_request_options request,
        diagnostics* diag,
        upload_handler handler
    )
        : impl_(std::move(impl)),
          strand_(boost::asio::make_strand(impl_->get_executor())),
          src_(std::move(src)),
          req_(std::move(req)),
          opts_(std::move(opts)),
          request_(std::move(request)),
          diag_(diag),
          handler_(std::move(handler)),  // move-construct only (1.81 move-assignment bug)
          deadline_timer_(strand_),
          stall_timer_(strand_),
          backoff_timer_(strand_),
          meter_(src_ ? src_->size() : 0, opts_.progress_interval, opts_.progress_step_bytes, clock::now()),
          last_activity_(clock::now())
    {
    }

    void start()
    {
        auto slot = boost::asio::get_associated_cancellation_slot(handler_);
        if (slot.is_connected())
        {
            slot.assign([w = weak_from_this(), strand = strand_](boost::asio::cancellation_type t) {
                if ((t & boost::asio::cancellation_type::terminal) == boost::asio::cancellation_type::none)
                    return;
                boost::asio::dispatch(strand, [w] {
                    if (auto op = w.lock())
                        op->abort(boost::asio::error::operation_aborted);
                });
            });
        }
        // The parent, asked for on the caller's thread (trace_params::context).
        if (impl_->tracer() || request_.get().trace_parent || impl_->params().trace.context)
            start_trace();
        // Never complete inline: even a rejected argument goes through the strand.
        boost::asio::post(strand_, [self = shared_from_this()] { self->begin(); });
    }

    // ---- called by the tracked source, from the transport's context ----

    error_code abort_code()
    {
        std::lock_guard<std::mutex> lk(mtx_);
        return abort_ec_;
    }

    void on_bytes(std::size_t n)
    {
        std::optional<upload_progress> rep;
        {
            std::lock_guard<std::mutex> lk(mtx_);
            const auto now = clock::now();
            last_activity_ = now;
            rep = meter_.on_bytes(n, now);
        }
        if (rep && (opts_.on_progress || impl_->obs() || traced_))
            boost::asio::post(strand_, [self = shared_from_this(), p = *rep] { self->report(p); });
    }

private:
    // ---- steps (all on the strand) ----

    void begin()
    {
        if (diag_)
            diag_->clear();
        if (reason_)
            return finish(reason_);
        if (!src_)
            return finish(client_errc::invalid_argument, "the upload source is null");
        size_ = src_->size();
        if (size_ == 0 || size_ > max_upload_size)
            return finish(
                client_errc::invalid_byte_size,
                "source size " + std::to_string(size_) + " is not in 1..2147483648 bytes"
            );
        if (req_.filename.empty())
            return finish(client_errc::missing_required_field, "filename is required");
        if (req_.replace && req_.asset_id.empty())
            return finish(client_errc::invalid_path_parameter, "asset id must not be empty");
        // Our own sources complete reads through the client's executor unless
        // told otherwise (no hop through the system executor).
        if (auto* f = dynamic_cast<file_source*>(src_.get()); f && !f->executor())
            f->set_executor(impl_->get_executor());
        else if (auto* m = dynamic_cast<memory_source*>(src_.get()); m && !m->executor())
            m->set_executor(impl_->get_executor());
        tracked_ = std::make_shared<tracked_source>(src_, weak_from_this());
        if (request_.get().deadline)
        {
            deadline_timer_.expires_at(*request_.get().deadline);
            deadline_timer_.async_wait([self = shared_from_this()](error_code ec) {
                if (!ec)
                    self->abort(client_errc::deadline_exceeded);
            });
        }
        if (req_.replace)
        {
            asset_.id = req_.asset_id;
            request_new_url();
        }
        else
        {
            new_asset body;
            body.type = asset_type::internal;
            body.filename = req_.filename;
            body.byte_size = static_cast<std::int64_t>(size_);
            body.content_type = req_.content_type;
            body.name = req_.name;
            body.watermark_asset = req_.watermark_asset;
            call_api<endpoints::create_asset>({}, &body, diag_, [this](error_code ec, asset_with_upload r) {
                on_handle(ec, std::move(r));
            });
        }
    }

    // POST /assets/{id}/replace: the replace flow's start, and the refresh of
    // an expired URL in both flows.
    void request_new_url()
    {
        asset_replacement body;
        body.filename = req_.filename;
        body.byte_size = static_cast<std::int64_t>(size_);
        body.content_type = req_.content_type;
        const std::array<std::string_view, 1> ids{asset_.id};
        call_api<endpoints::replace_asset>(ids, &body, diag_, [this](error_code ec, asset_with_upload r) {
            on_handle(ec, std::move(r));
        });
    }

    void on_handle(error_code ec, asset_with_upload r)
    {
        if (!r.asset.id.empty())
            asset_ = std::move(r.asset);
        if (reason_)
            return finish(reason_);
        if (ec)
            return finish(ec);
        if (!req_.replace && !created_reported_ && opts_.on_created && !asset_.id.empty())
        {
            created_reported_ = true;
            error_code hec;
            std::string hwhy;
            try
            {
                hec = opts_.on_created(asset_);
            }
            catch (const boost::system::system_error& e)
            {
                hec = e.code();
                hwhy = e.what();
            }
            if (hec)
                return finish(hec, hwhy.empty() ? "upload_options::on_created refused the asset" : "upload_options::on_created: " + hwhy);
        }
        std::string why;
        if (auto vec = require_upload_handle(r, why))
            return finish(vec, std::move(why));
        if (auto vec = validate_upload_handle(*r.upload, impl_->params().base_url, opts_.allow_insecure_upload_url, why))
            return finish(vec, std::move(why));
        handle_.emplace(std::move(*r.upload));
        handle_fresh_ = true;
        start_put();
    }

    void start_put()
    {
        if (reason_)
            return finish(reason_);
        // A URL about to expire is replaced first (once per handle: a skewed
        // local clock must not loop; the storage has the last word).
        if (!handle_fresh_ && url_needs_refresh(handle_->expires_at, detail::clock::system_now(), opts_.url_refresh_margin))
        {
            observe_refresh("expiring");
            return request_new_url();
        }
        handle_fresh_ = false;
        if (++attempts_ == 1 && impl_->budget())
            impl_->budget()->on_request(clock::now());  // a first PUT earns retries, as a first request does
        {
            std::lock_guard<std::mutex> lk(mtx_);
            last_activity_ = clock::now();
            if (attempts_ > 1)
                meter_.new_attempt(last_activity_);
        }
        http_request req;
        req.method = http_method::put;
        req.url = handle_->url;
        req.headers = handle_->headers;  // exactly the signed headers
        if (opts_.expect_continue)
            req.headers.add("Expect", "100-continue");
        req.body_stream = tracked_;
        req.idempotent = false;  // a streamed body is resent by us (rewind), never by the transport
        req.timeout = opts_.put_timeout.count() > 0 ? opts_.put_timeout : std::chrono::milliseconds(std::chrono::hours(1));
        stamp_put_diag();
        if (trace_)
        {
            const server_endpoint server = server_of(handle_->url);
            trace_->attempt_start(http_method::put, {}, handle_->url, server.address, server.port, attempts_, clock::system_now());
            trace_->attempt_attribute("http.request.body.size", static_cast<std::int64_t>(size_));
            traced_bytes_ = 0;
            if (impl_->params().trace.propagate_to_storage)
                trace_->inject(req.headers);
        }
        if (observer* o = impl_->obs())
        {
            put_started_ = clock::now();
            const std::string path = url_path_only(handle_->url), host = url_host(handle_->url);
            request_start_event e;
            e.request = put_info(path, host);
            e.attempt = attempts_;
            e.prio = request_.get().prio;
            o->on_request_start(e);
        }
        put_in_flight_ = true;
        arm_stall_timer();
        child_in_flight_ = true;
        any_transport t = impl_->transport();
        t.async_send(
            std::move(req),
            transport_handler(boost::asio::bind_cancellation_slot(
                child_.slot(),
                boost::asio::bind_executor(strand_, [self = shared_from_this()](error_code ec, http_response r) {
                    self->child_in_flight_ = false;
                    self->on_put(ec, std::move(r));
                })
            ))
        );
    }

    void on_put(error_code ec, http_response r)
    {
        put_in_flight_ = false;
        stall_timer_.cancel();
        if (reason_)
            return finish(reason_);
        error_code storage_ec;
        response_facts facts;  // the response's headers, read once (a 503's Retry-After)
        if (!ec)
        {
            facts = read_response_facts(r.headers, r.status, detail::clock::system_now());
            stamp_put_diag();
            storage_ec = classify_storage_response(r, diag_);
        }
        if (trace_)
        {
            std::uint64_t sent = 0;
            {
                std::lock_guard<std::mutex> lk(mtx_);
                sent = meter_.attempt_bytes();
            }
            trace_progress(sent);
            trace_->attempt_end(ec ? 0u : r.status, ec ? ec : storage_ec, clock::system_now());
        }
        if (observer* o = impl_->obs())
        {
            const std::string path = url_path_only(handle_->url), host = url_host(handle_->url);
            notify_response(*o, put_info(path, host), attempts_, ec ? ec : storage_ec, r, clock::now() - put_started_, static_cast<std::size_t>(size_));
        }
        switch (decide_after_put(ec, r.status, storage_ec, attempts_, std::max(1u, opts_.max_attempts)))
        {
        case put_action::done: return after_upload();
        case put_action::fail:
        {
            std::string why;
            if (ec)
            {
                why = "PUT of the body failed: " + ec.message();
                if (const auto more = transport_explanation(ec, r); !more.empty())
                    why.append(": ").append(more);
            }
            return finish(ec ? ec : storage_ec, std::move(why));
        }
        case put_action::retry:
        {
            // The schedule of every retry of the client (retry_delay: full
            // jitter, a 503's Retry-After as the least wait), from this
            // upload's retry_backoff, and a retry spends the client's budget.
            if (const auto& budget = impl_->budget(); budget && !budget->try_spend(clock::now()))
                return finish(ec ? ec : storage_ec, "PUT of the body not retried: the client's retry budget is used up");
            std::optional<std::chrono::milliseconds> server_wait;
            if (facts.status == 503)
                server_wait = facts.retry_after;
            const auto delay = retry_delay(
                static_cast<int>(attempts_),
                {opts_.retry_backoff, max_upload_backoff, 2.0},
                jitter_unit(),
                server_wait,
                impl_->params().retry.max_retry_after
            );
            if (observer* o = impl_->obs())
            {
                const std::string path = url_path_only(handle_->url), host = url_host(handle_->url);
                notify_retry(*o, put_info(path, host), attempts_, ec ? ec : storage_ec, r.status, delay);
            }
            if (trace_)
            {
                trace_->wait_start("backoff", server_wait ? "retry_after" : "backoff", 0, delay, clock::system_now());
                trace_->wait_attribute("digital_delivery.retry.cause", std::string(error_type(ec ? ec : storage_ec)));
            }
            backoff_timer_.expires_after(delay);
            backoff_timer_.async_wait(boost::asio::bind_cancellation_slot(
                child_.slot(),
                [self = shared_from_this()](error_code wec) {
                    self->child_in_flight_ = false;
                    if (self->trace_)
                        self->trace_->wait_end(wec, clock::system_now());
                    if (self->reason_)
                        return self->finish(self->reason_);
                    self->restart(false);
                }
            ));
            child_in_flight_ = true;
            return;
        }
        case put_action::refresh_and_retry: observe_refresh("rejected"); return restart(true);
        }
    }

    void restart(bool new_url)
    {
        if (auto rec = tracked_->rewind())
            return finish(rec, "the source cannot be rewound for a retry");
        if (new_url)
            request_new_url();
        else
            start_put();
    }

    void after_upload()
    {
        uploaded_ = true;
        if (!opts_.reread_asset)
            return finish({});
        const std::array<std::string_view, 1> ids{asset_.id};
        call_api<endpoints::get_asset>(ids, nullptr, nullptr, [this](error_code ec, asset a) {
            if (reason_)
                return finish(reason_);
            if (!ec)
                asset_ = std::move(a);
            finish({});  // the body is stored: a failed re-read is not a failed upload
        });
    }

    // ---- helpers ----

    // Sends one API request through the client (validation, status mapping,
    // decoding as for the request functions) with our cancellation slot.
    template <class D, class F>
    void call_api(std::span<const std::string_view> ids, const payload_param<D>* payload, diagnostics* diag, F f)
    {
        prepared_request p;
        endpoint_ops<D>::prepare(*impl_, ids, payload, &request_.get(), p);
        child_in_flight_ = true;
        auto* raw = impl_.get();
        raw->async_execute(
            impl_,
            std::move(p),
            diag,
            raw_handler(boost::asio::bind_cancellation_slot(
                child_.slot(),
                boost::asio::bind_executor(
                    strand_,
                    [self = shared_from_this(), diag, f = std::move(f)](error_code ec, http_response r) mutable {
                        self->child_in_flight_ = false;
                        result_t<D> out{};
                        if (!ec)
                        {
                            ec = decode_response<D>(r.body, out, diag);
                            if (ec && diag)
                                diag->http_status = r.status;
                        }
                        f(ec, std::move(out));
                    }
                )
            ))
        );
    }

    void stamp_put_diag()
    {
        if (!diag_)
            return;
        diag_->clear();
        diag_->method = "PUT";
        diag_->host = url_host(handle_->url);
        diag_->path = url_path_only(handle_->url);
        diag_->attempts = attempts_;
    }

    void arm_stall_timer()
    {
        if (opts_.stall_timeout.count() <= 0)
            return;
        clock::time_point last;
        {
            std::lock_guard<std::mutex> lk(mtx_);
            last = last_activity_;
        }
        stall_timer_.expires_at(last + opts_.stall_timeout);
        stall_timer_.async_wait([self = shared_from_this()](error_code ec) {
            if (ec || self->reason_ || self->finished_ || !self->put_in_flight_)
                return;
            clock::time_point last;
            {
                std::lock_guard<std::mutex> lk(self->mtx_);
                last = self->last_activity_;
            }
            if (clock::now() - last >= self->opts_.stall_timeout)
                self->abort(client_errc::upload_stalled);
            else
                self->arm_stall_timer();
        });
    }

    // Abandons the operation: the child in flight is cancelled and its
    // completion finishes the operation with `why`.
    void abort(error_code why)
    {
        if (finished_ || reason_)
            return;
        reason_ = why;
        {
            std::lock_guard<std::mutex> lk(mtx_);
            abort_ec_ = boost::asio::error::operation_aborted;
        }
        if (child_in_flight_)
            child_.emit(boost::asio::cancellation_type::terminal);
        stall_timer_.cancel();
        if (why != client_errc::deadline_exceeded)
            deadline_timer_.cancel();
    }

    void report(const upload_progress& p)
    {
        if (completed_)
            return;
        if (opts_.on_progress)
            opts_.on_progress(p);
        observe_progress(p);
        if (trace_ && put_in_flight_)
            trace_progress(p.bytes_sent);
    }

    // ---- spans (impl/trace/op_trace.hpp; only with a trace) ----

    // The upload's INTERNAL span; the API requests inside it (the create or
    // replace, a URL refresh, the re-read) join it as their parent.
    void start_trace()
    {
        const auto parent = impl_->trace_parent_of(&request_.get());
        trace_ = op_trace::start(impl_->tracer(), impl_->params().trace, parent ? &*parent : nullptr, "upload_asset", clock::system_now());
        if (!trace_)
            return;
        request_.set_trace_parent(trace_->nested());
        traced_ = trace_->recording();
    }

    // Progress as the PUT span's events: the meter's reports (already
    // coalesced), and the attempt's last count when it ends.
    void trace_progress(std::uint64_t sent)
    {
        if (sent == traced_bytes_)
            return;
        traced_bytes_ = sent;
        span_event e;
        e.name = "upload.progress";
        e.time = clock::system_now();
        e.attributes.push_back({"digital_delivery.upload.bytes_sent", static_cast<std::int64_t>(sent)});
        e.attributes.push_back({"digital_delivery.upload.bytes_total", static_cast<std::int64_t>(size_)});
        trace_->attempt_event(std::move(e));
    }

    // ---- observer events (impl/engine/observe.hpp) ----

    request_info put_info(std::string_view path, std::string_view host) const
    {
        request_info r;
        r.endpoint = "upload_body";
        r.method = http_method::put;
        r.path_template = path;
        r.path = path;
        r.server_address = host;
        return r;
    }

    void observe_progress(const upload_progress& p)
    {
        observer* o = impl_->obs();
        if (!o || !handle_)
            return;
        const std::string path = url_path_only(handle_->url), host = url_host(handle_->url);
        upload_progress_event e;
        e.asset_id = asset_.id;
        e.server_address = host;
        e.path = path;
        e.progress = p;
        o->on_upload_progress(e);
    }

    void observe_refresh(std::string_view reason)
    {
        if (observer* o = impl_->obs())
        {
            upload_refresh_event e;
            e.asset_id = asset_.id;
            e.reason = reason;
            o->on_upload_refresh(e);
        }
    }

    void observe_end(error_code ec)
    {
        observer* o = impl_->obs();
        if (!o)
            return;
        request_info r;
        r.endpoint = "upload";
        r.method = http_method::post;
        r.path_template = req_.replace ? std::string_view("/assets/{id}/replace") : std::string_view("/assets");
        r.id = req_.replace ? std::string_view(asset_.id) : std::string_view();
        r.server_address = impl_->host();
        notify_end(*o, r, ec, diag_, attempts_, clock::now() - started_);
    }

    void finish(error_code ec, std::string why = {})
    {
        if (finished_)
            return;
        finished_ = true;
        if (diag_)
        {
            if (ec && !why.empty() && diag_->client_message.empty())
                diag_->client_message = std::move(why);
            if (attempts_ > diag_->attempts)
                diag_->attempts = attempts_;
            if (ec && ec == client_errc::upload_stalled)
                diag_->client_message = "no upload progress for " + std::to_string(opts_.stall_timeout.count()) + " ms";
            // The asset exists from the create's answer on: say which, so that
            // a caller with only the exception (the default token) can
            // finish or delete it.
            if (ec && !asset_.id.empty())
                diag_->asset_id = asset_.id;
        }
        deadline_timer_.cancel();
        stall_timer_.cancel();
        backoff_timer_.cancel();
        // Posted: earlier progress reports (posted too) run first, and the
        // user's cancellation slot is never cleared from inside its handler.
        boost::asio::post(strand_, [self = shared_from_this(), ec] { self->complete(ec); });
    }

    void complete(error_code ec)
    {
        if (!ec && uploaded_ && (opts_.on_progress || impl_->obs()))
        {
            std::optional<upload_progress> last;
            {
                std::lock_guard<std::mutex> lk(mtx_);
                last = meter_.finish(clock::now());
            }
            if (opts_.on_progress)
                opts_.on_progress(*last);
            observe_progress(*last);
        }
        observe_end(ec);
        if (trace_)
            trace_->end(ec, clock::system_now());
        completed_ = true;
        auto slot = boost::asio::get_associated_cancellation_slot(handler_);
        if (slot.is_connected())
            slot.clear();
        upload_handler h(std::move(handler_));
        auto ex = boost::asio::get_associated_executor(h, impl_->get_executor());
        boost::asio::dispatch(ex, boost::asio::append(std::move(h), ec, std::move(asset_)));
    }

    std::shared_ptr<client_impl> impl_;
    boost::asio::strand<boost::asio::any_io_executor> strand_;
    std::shared_ptr<body_source> src_;
    upload_request req_;
    upload_options opts_;
    stored_request_options request_;  // for the API requests; its deadline bounds the operation
    diagnostics* diag_;
    bool created_reported_ = false;
    upload_handler handler_;
    detail::timer deadline_timer_;
    detail::timer stall_timer_;
    detail::timer backoff_timer_;
    boost::asio::cancellation_signal child_;

    std::shared_ptr<tracked_source> tracked_;
    std::uint64_t size_ = 0;
    asset asset_;
    std::optional<upload_handle> handle_;
    bool handle_fresh_ = false;
    unsigned attempts_ = 0;
    error_code reason_;  // why the operation is being abandoned
    std::unique_ptr<op_trace> trace_;  // with a tracer or a parent
    bool traced_ = false;              // spans recorded: progress reports wanted
    std::uint64_t traced_bytes_ = 0;   // the PUT span's last progress event
    bool child_in_flight_ = false;
    bool put_in_flight_ = false;
    bool uploaded_ = false;
    bool finished_ = false;
    bool completed_ = false;

    // Shared with the transport's context (tracked source reads).
    std::mutex mtx_;
    progress_meter meter_;
    clock::time_point last_activity_;
    error_code abort_ec_;
    clock::time_point started_ = clock::now();  // observer: the operation's duration
    clock::time_point put_started_{};           // observer: the PUT attempt's duration
};

inline void tracked_read_handler::operator()(error_code ec, std::size_t n)
{
    if (auto ab = op->abort_code())
    {
        ec = ab;
        n = 0;
    }
    else if (!ec && n > 0)
    {
        op->on_bytes(n);
    }
    op.reset();
    std::move(handler)(ec, n);
}

inline void tracked_source::async_read_some(boost::asio::mutable_buffer buf, read_handler handler)
{
    auto op = op_.lock();
    const error_code ab = op ? op->abort_code() : error_code(boost::asio::error::operation_aborted);
    if (ab)
    {
        post_read_completion({}, std::move(handler), ab, 0);
        return;
    }
    inner_->async_read_some(buf, read_handler(tracked_read_handler{std::move(op), std::move(handler)}));
}

}  // namespace detail

DIGITAL_DELIVERY_DECL void detail::start_upload(
    std::shared_ptr<client_impl> impl,
    std::shared_ptr<body_source> src,
    upload_request req,
    upload_options opts,
    stored_request_options request,
    diagnostics* diag,
    upload_handler handler
)
{
    auto op = std::make_shared<upload_op>(std::move(impl), std::move(src), std::move(req), std::move(opts), std::move(request), diag, std::move(handler));
    op->start();
}

}  // namespace digital_delivery

#endif
