//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_RATE_LIMIT_SHM_RATE_LIMIT_STORE_IPP
#define DIGITAL_DELIVERY_IMPL_RATE_LIMIT_SHM_RATE_LIMIT_STORE_IPP

#include <digital_delivery/shm_rate_limit_store.hpp>
#include <digital_delivery/impl/rate_limit/shm_store.hpp>
#include <digital_delivery/impl/rate_limit/store_session.hpp>

#include <memory>
#include <string>
#include <utility>

namespace digital_delivery {
namespace detail {

// Synchronous: connecting maps the segment (or says why not); points are
// taken in place, lock-free.
class shm_session final : public store_session
{
public:
    shm_session(std::string name, const store_bucket& b)
        : name_(std::move(name)), capacity_(b.capacity), window_(b.window), hold_(b.hold_refill_until_response)
    {
    }

    std::shared_ptr<points_source> source() const override { return src_; }

    std::optional<store_status> connect(time_point, exchange&) override
    {
        store_status s;
        src_.reset();
        if (auto seg = shm_segment::open(name_, s.why))
        {
            src_ = std::make_shared<shm_points>(std::move(seg), capacity_, window_, hold_);
            s.up = true;
        }
        return s;
    }

private:
    std::string name_;
    double capacity_;
    std::chrono::duration<double> window_;
    bool hold_;
    std::shared_ptr<points_source> src_;
};

}  // namespace detail

DIGITAL_DELIVERY_DECL std::shared_ptr<detail::store_session> shm_rate_limit_store::open(const detail::store_bucket& bucket) const
{
    return std::make_shared<detail::shm_session>(detail::shm_store_name(bucket.normalised_base_url, bucket.api_key), bucket);
}

}  // namespace digital_delivery

#endif
