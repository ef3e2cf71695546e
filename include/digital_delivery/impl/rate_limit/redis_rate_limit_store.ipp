//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
//
#ifndef DIGITAL_DELIVERY_IMPL_RATE_LIMIT_REDIS_RATE_LIMIT_STORE_IPP
#define DIGITAL_DELIVERY_IMPL_RATE_LIMIT_REDIS_RATE_LIMIT_STORE_IPP

#include <digital_delivery/redis_rate_limit_store.hpp>
#include <digital_delivery/impl/crypto/sha256.hpp>
#include <digital_delivery/impl/rate_limit/redis_link.hpp>
#include <digital_delivery/impl/rate_limit/sansio/redis_store.hpp>
#include <digital_delivery/impl/rate_limit/store_session.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace digital_delivery {
namespace detail {

// Asynchronous: redis_points grants only what a script call granted; the
// session hands the limiter the calls to make on its link (sansio/redis_store.hpp).
class redis_session final : public store_session, public std::enable_shared_from_this<redis_session>
{
public:
    redis_session(const store_bucket& b, const redis_store_params& p)
        : points_(std::make_shared<redis_points>(b.capacity, b.window, b.hold_refill_until_response, b.now)),
          link_(std::make_shared<redis_link>(b.ex, p, p.key_prefix + store_key_digest(b.normalised_base_url, b.api_key))),
          window_(b.window),
          hold_(b.hold_refill_until_response)
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
        // After a failure: probe with an empty call; its reply restores the store.
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

private:
    exchange exchange_of(const gcra_request& req)
    {
        auto args = gcra_arguments(req, points_->capacity(), window_, hold_);
        return [self = shared_from_this(), args = std::move(args)](outcome_handler done) mutable {
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
    std::shared_ptr<redis_link> link_;
    std::chrono::duration<double> window_;
    bool hold_;
    bool started_ = false;
};

}  // namespace detail

DIGITAL_DELIVERY_DECL std::shared_ptr<detail::store_session> redis_rate_limit_store::open(const detail::store_bucket& bucket) const
{
    return std::make_shared<detail::redis_session>(bucket, params_);
}

}  // namespace digital_delivery

#endif
