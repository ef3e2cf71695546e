//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_RATE_LIMIT_REDIS_RATE_LIMIT_STORE_IPP
#define DIGITAL_DELIVERY_IMPL_RATE_LIMIT_REDIS_RATE_LIMIT_STORE_IPP

#include <digital_delivery/redis_rate_limit_store.hpp>
#include <digital_delivery/impl/crypto/sha256.hpp>
#include <digital_delivery/impl/rate_limit/redis_link.hpp>
#include <digital_delivery/impl/rate_limit/redis_session.hpp>

#include <memory>

namespace digital_delivery {

DIGITAL_DELIVERY_DECL std::shared_ptr<detail::store_session> redis_rate_limit_store::open(const detail::store_bucket& bucket) const
{
    auto link = std::make_shared<detail::redis_link>(
        bucket.ex, params_, params_.key_prefix + detail::store_key_digest(bucket.normalised_base_url, bucket.api_key));
    return std::make_shared<detail::redis_session<detail::redis_link>>(bucket, std::move(link));
}

}  // namespace digital_delivery

#endif
