//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_WATERMARK_IPP
#define DIGITAL_DELIVERY_IMPL_WATERMARK_IPP

#include <digital_delivery/impl/retry/retry_policy.hpp>
#include <digital_delivery/impl/engine/endpoint_call.hpp>
#include <digital_delivery/endpoints.hpp>
#include <digital_delivery/watermark.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/compose.hpp>
#include <boost/asio/post.hpp>
#include <digital_delivery/detail/clock.hpp>
#include <boost/asio/strand.hpp>

#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <span>
#include <vector>

namespace digital_delivery {

DIGITAL_DELIVERY_DECL bool detail::any_awaiting_watermark(const order_downloads& d) noexcept
{
    return std::any_of(d.downloads.begin(), d.downloads.end(), [](const download_entry& e) { return e.awaiting_watermark(); });
}

DIGITAL_DELIVERY_DECL std::chrono::milliseconds detail::next_poll_interval(
    std::chrono::milliseconds current,
    const watermark_wait_options& o
) noexcept
{
    // One step of the library's backoff schedule (backoff_ceiling), without
    // jitter: polls keep their rhythm.
    return detail::backoff_ceiling(2, current, std::max(o.max_interval, std::chrono::milliseconds(1)), o.multiplier);
}

namespace detail {

class watermark_poll;

struct watermark_registry
{
    std::mutex mtx;
    std::map<std::pair<const client_impl*, std::string>, std::weak_ptr<watermark_poll>> loops;
};

inline watermark_registry& get_watermark_registry()
{
    static watermark_registry r;
    return r;
}

/// One waiter of a poll loop. Everything is touched on the loop's strand.
struct watermark_waiter
{
    explicit watermark_waiter(const boost::asio::strand<boost::asio::any_io_executor>& s) : deadline_timer(s) {}
    detail::timer deadline_timer;  // expires at the deadline; cancelled when the result is in
    bool done = false;
    error_code ec;
    order_downloads result;
    diagnostics* diag = nullptr;  // the caller's, filled on failure
};

/// The poll loop of one (client, order). Lives while a waiter or one of its
/// own operations holds it; the registry only refers to it weakly.
class watermark_poll : public std::enable_shared_from_this<watermark_poll>
{
public:
    using strand_type = boost::asio::strand<boost::asio::any_io_executor>;

    watermark_poll(std::shared_ptr<client_impl> impl, std::string order_id, const watermark_wait_options& o, const stored_request_options& r)
        : impl_(std::move(impl)),
          order_id_(std::move(order_id)),
          opts_(o),
          request_(r),
          strand_(boost::asio::make_strand(impl_->get_executor())),
          sleep_timer_(strand_)
    {
        request_.set_priority(priority::background);
        request_.clear_deadline();  // each waiter has its own deadline
        if (opts_.initial_interval < std::chrono::milliseconds(1))
            opts_.initial_interval = std::chrono::milliseconds(1);
    }

    ~watermark_poll()
    {
        auto& reg = get_watermark_registry();
        std::lock_guard<std::mutex> lk(reg.mtx);
        auto it = reg.loops.find({impl_.get(), order_id_});
        if (it != reg.loops.end() && it->second.expired())
            reg.loops.erase(it);
    }

    static std::shared_ptr<watermark_poll> get_or_create(
        const std::shared_ptr<client_impl>& impl,
        const std::string& order_id,
        const watermark_wait_options& o,
        const stored_request_options& r
    )
    {
        auto& reg = get_watermark_registry();
        std::lock_guard<std::mutex> lk(reg.mtx);
        auto& slot = reg.loops[{impl.get(), order_id}];
        if (auto p = slot.lock())
            return p;
        auto p = std::make_shared<watermark_poll>(impl, order_id, o, r);
        slot = p;
        return p;
    }

    const strand_type& strand() const noexcept { return strand_; }
    const std::string& order_id() const noexcept { return order_id_; }
    const std::string& host() const noexcept { return impl_->host(); }

    // ---- on the strand ----

    void add(std::shared_ptr<watermark_waiter> w)
    {
        waiters_.push_back(std::move(w));
        if (!running_)
        {
            running_ = true;
            interval_ = opts_.initial_interval;
            poll();
        }
    }

    void remove(const watermark_waiter* w)
    {
        auto it = std::find_if(waiters_.begin(), waiters_.end(), [w](const auto& p) { return p.get() == w; });
        if (it != waiters_.end())
            waiters_.erase(it);
        if (waiters_.empty())
        {
            // Nobody waits: leave no work behind.
            if (polling_)
                poll_cancel_.emit(boost::asio::cancellation_type::terminal);
            if (sleeping_)
                sleep_timer_.cancel();
        }
    }

private:
    void poll()
    {
        polling_ = true;
        prepared_request p;
        const std::array<std::string_view, 1> ids{order_id_};
        endpoint_ops<endpoints::get_order_downloads>::prepare(*impl_, ids, nullptr, &request_.get(), p);
        auto self = shared_from_this();
        endpoint_ops<endpoints::get_order_downloads>::launch(
            impl_,
            std::move(p),
            &diag_,
            downloads_handler(boost::asio::bind_cancellation_slot(
                poll_cancel_.slot(),
                boost::asio::bind_executor(strand_, [self](error_code ec, order_downloads d) { self->on_poll(ec, std::move(d)); })
            ))
        );
    }

    void on_poll(error_code ec, order_downloads d)
    {
        polling_ = false;
        if (waiters_.empty())
        {
            running_ = false;
            return;
        }
        if (ec == boost::asio::error::operation_aborted)
        {
            poll();  // cancelled when the last waiter left, and a new one came meanwhile
            return;
        }
        if (ec)
        {
            deliver(ec, d);
            return;
        }
        if (!any_awaiting_watermark(d))
        {
            deliver({}, d);
            return;
        }
        sleeping_ = true;
        sleep_timer_.expires_after(interval_);
        interval_ = next_poll_interval(interval_, opts_);
        auto self = shared_from_this();
        sleep_timer_.async_wait(boost::asio::bind_executor(strand_, [self](error_code) { self->on_sleep(); }));
    }

    void on_sleep()
    {
        sleeping_ = false;
        if (waiters_.empty())
        {
            running_ = false;
            return;
        }
        poll();
    }

    void deliver(error_code ec, const order_downloads& d)
    {
        running_ = false;
        auto ws = std::move(waiters_);
        waiters_.clear();
        for (auto& w : ws)
        {
            w->done = true;
            w->ec = ec;
            w->result = d;
            if (ec && w->diag)
                *w->diag = diag_;
            w->deadline_timer.cancel();
        }
    }

    std::shared_ptr<client_impl> impl_;
    std::string order_id_;
    watermark_wait_options opts_;
    stored_request_options request_;
    strand_type strand_;
    detail::timer sleep_timer_;
    boost::asio::cancellation_signal poll_cancel_;
    diagnostics diag_;
    std::vector<std::shared_ptr<watermark_waiter>> waiters_;
    std::chrono::milliseconds interval_{};
    bool running_ = false;
    bool polling_ = false;
    bool sleeping_ = false;
};

struct wait_downloads_op
{
    std::shared_ptr<watermark_poll> loop;
    std::optional<std::chrono::steady_clock::time_point> deadline;
    std::shared_ptr<watermark_waiter> w;
    diagnostics* diag;
    enum class step
    {
        start,
        join,
        wait,
    } st = step::start;

    template <class Self>
    void operator()(Self& self)
    {
        if (st == step::start)
        {
            st = step::join;
            auto strand = loop->strand();
            boost::asio::post(strand, std::move(self));
            return;
        }
        // step::join, on the strand
        if (self.get_cancellation_state().cancelled() != boost::asio::cancellation_type::none)
        {
            self.complete(boost::asio::error::operation_aborted, order_downloads{});
            return;
        }
        w = std::make_shared<watermark_waiter>(loop->strand());
        w->diag = diag;
        w->deadline_timer.expires_at(deadline.value_or(std::chrono::steady_clock::time_point::max()));
        loop->add(w);
        st = step::wait;
        auto strand = loop->strand();
        auto* timer = &w->deadline_timer;
        timer->async_wait(boost::asio::bind_executor(strand, std::move(self)));
    }

    template <class Self>
    void operator()(Self& self, error_code ec)
    {
        // on the strand
        if (w->done)
        {
            self.complete(w->ec, std::move(w->result));
            return;
        }
        loop->remove(w.get());
        const bool cancelled = ec == boost::asio::error::operation_aborted;
        if (!cancelled && diag)
        {
            diag->clear();
            diag->method = "GET";
            diag->host = loop->host();
            diag->path = "/orders/" + loop->order_id() + "/downloads";
            diag->client_message = "watermarks not ready by the deadline";
        }
        self.complete(cancelled ? ec : error_code(client_errc::deadline_exceeded), order_downloads{});
    }
};

}  // namespace detail

DIGITAL_DELIVERY_DECL std::size_t detail::active_watermark_polls()
{
    auto& reg = get_watermark_registry();
    std::lock_guard<std::mutex> lk(reg.mtx);
    std::size_t n = 0;
    for (const auto& [k, v] : reg.loops)
        n += v.expired() ? 0 : 1;
    return n;
}

DIGITAL_DELIVERY_DECL void detail::async_wait_for_downloads_impl(
    std::shared_ptr<client_impl> impl,
    std::string order_id,
    watermark_wait_options opts,
    stored_request_options ropts,
    diagnostics* diag,
    downloads_handler h
)
{
    const std::optional<std::chrono::steady_clock::time_point> deadline = ropts.get().deadline;
    auto loop = watermark_poll::get_or_create(impl, order_id, opts, ropts);
    auto ex = impl->get_executor();
    boost::asio::async_compose<downloads_handler, void(error_code, order_downloads)>(
        wait_downloads_op{std::move(loop), deadline, {}, diag, wait_downloads_op::step::start},
        h,
        ex
    );
}

}  // namespace digital_delivery

#endif
