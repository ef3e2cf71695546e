//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_RATE_LIMIT_REDIS_SESSION_HPP
#define DIGITAL_DELIVERY_IMPL_RATE_LIMIT_REDIS_SESSION_HPP

/// \file
/// The Redis store's session of one bucket (store_session.hpp): the rate
/// limiter's side of redis_points (sansio/redis_store.hpp). Over any link:
/// redis_link (the connection, redis_rate_limit_store.ipp) in the library,
/// a server modelled in memory in tests. A Link has
/// `async_exchange(std::vector<std::string> argv, std::function<void(redis_exchange_result)>)`,
/// which completes once, never inside the call.

#include <digital_delivery/impl/rate_limit/sansio/redis_store.hpp>
#include <digital_delivery/impl/rate_limit/store_session.hpp>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>

namespace digital_delivery {
namespace detail {

/// 16 hex digits from random_device: names one bucket of one process in its
/// key's hash (`m:ID`, `d:ID`). Not a secret, and nothing to read back from it.
inline std::string random_process_id()
{
    std::random_device rd;
    std::string id;
    for (int i = 0; i < 4; ++i)
    {
        char buf[8];
        std::snprintf(buf, sizeof buf, "%04x", static_cast<unsigned>(rd() & 0xffffu));
        id += buf;
    }
    return id;
}

/// Asynchronous: redis_points grants only what a script call granted; the
/// session hands the limiter the calls to make on its link. Each call names
/// this process (its count of processes alive) and carries the fallback
/// bucket's spending Redis has not confirmed yet (its debt).
template <class Link>
class redis_session final : public store_session, public std::enable_shared_from_this<redis_session<Link>>
{
public:
    redis_session(const store_bucket& b, std::shared_ptr<Link> link, std::string process_id = random_process_id())
        : points_(std::make_shared<redis_points>(b.capacity, b.window, b.hold_refill_until_response, b.now)),
          link_(std::move(link)),
          window_(b.window),
          hold_(b.hold_refill_until_response),
          process_id_(std::move(process_id))
    {
    }

    std::shared_ptr<points_source> source() const override { return points_; }

    std::optional<store_status> connect(time_point now, exchange& call) override
    {
        if (!started_)
        {
            // Used at once: the first waiters wait for the first reply (or
            // for its failure, then the fallback bucket serves them).
            started_ = true;
            return store_status{true, {}};
        }
        // After a failure: probe with an empty call (and the debt); its
        // reply restores the store.
        points_->reset(now);
        call = exchange_of(points_->start_exchange(now));
        return std::nullopt;
    }

    bool in_flight() const noexcept override { return points_->in_flight(); }

    void before_poll() noexcept override { points_->clear_want(); }

    void after_poll(time_point now, exchange& call) override
    {
        points_->return_leftover();
        if (points_->wants_exchange(now))
            call = exchange_of(points_->start_exchange(now));
    }

    void fallback_spent(double total) noexcept override { points_->fallback_spent(total); }

    std::size_t processes_alive() const noexcept override { return points_->alive(); }

    /// This bucket's name in its key's count of processes.
    const std::string& process_id() const noexcept { return process_id_; }

private:
    exchange exchange_of(const gcra_request& req)
    {
        auto args = gcra_arguments(req, points_->capacity(), window_, hold_, process_id_);
        return [self = this->shared_from_this(), args = std::move(args)](outcome_handler done) mutable {
            auto& link = *self->link_;
            link.async_exchange(std::move(args), [self = std::move(self), done = std::move(done)](redis_exchange_result r) {
                done([self, r = std::move(r)](time_point now) mutable {
                    if (!r.reply)
                    {
                        self->points_->on_failure();
                        return store_status{false, std::move(r.why), r.misconfigured};
                    }
                    self->points_->on_reply(*r.reply, now);
                    return store_status{true, {}};
                });
            });
        };
    }

    std::shared_ptr<redis_points> points_;
    std::shared_ptr<Link> link_;
    std::chrono::duration<double> window_;
    bool hold_;
    std::string process_id_;
    bool started_ = false;
};

}  // namespace detail
}  // namespace digital_delivery

#endif
