//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_REDIS_RATE_LIMIT_STORE_HPP
#define DIGITAL_DELIVERY_REDIS_RATE_LIMIT_STORE_HPP

/// \file
/// The Redis rate-limit store (opt-in: the umbrella header does not include
/// it). See docs/rate-limiting.md ("Redis: several hosts").
///
/// \code
/// #include <digital_delivery/redis_rate_limit_store.hpp>
/// params.rate_limit.store = dd::redis_rate_limit_store({.host = "10.0.0.5", .password = pw});
/// \endcode

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/rate_limit.hpp>
#include <digital_delivery/redis_store_params.hpp>

#include <memory>
#include <utility>

namespace digital_delivery {

/// One bucket for each (base URL, API key), shared by every process on every
/// host that uses the same Redis server: one hash per pair, updated by one
/// atomic script per grant on Redis's own clock. Each bucket keeps one
/// connection, on the client's executor; no thread ever blocks. While Redis
/// cannot be used (down, slower than command_timeout), the fallback bucket
/// serves (rate_limit_params::fallback_share) and a throttle_event
/// store_unavailable says why (never the password); while it refuses the
/// configuration (AUTH refused, missing permissions), store_misconfigured
/// says why, at each retry.
class redis_rate_limit_store final : public detail::rate_limit_store_impl
{
public:
    /// The Redis server (default: 127.0.0.1:6379, no AUTH).
    /// \param params Where the Redis server is and how to talk to it.
    explicit redis_rate_limit_store(redis_store_params params = {}) : params_(std::move(params)) {}

    /// \return The parameters given at construction.
    const redis_store_params& params() const noexcept { return params_; }

    /// Internal (the rate limiter): the store's session for one bucket.
    /// \param bucket The bucket's key and settings.
    /// \return The session.
    DIGITAL_DELIVERY_DECL std::shared_ptr<detail::store_session> open(const detail::store_bucket& bucket) const override;

private:
    redis_store_params params_;
};

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/rate_limit/redis_rate_limit_store.ipp>
#endif

#endif
