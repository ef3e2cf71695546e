//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_SHM_RATE_LIMIT_STORE_HPP
#define DIGITAL_DELIVERY_SHM_RATE_LIMIT_STORE_HPP

/// \file
/// The shared-memory rate-limit store (opt-in: the umbrella header does not
/// include it). See docs/rate-limiting.md ("One key, many processes").
///
/// \code
/// #include <digital_delivery/shm_rate_limit_store.hpp>
/// params.rate_limit.store = dd::shm_rate_limit_store();
/// \endcode

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/rate_limit.hpp>

#include <memory>

namespace digital_delivery {

/// One bucket per host for each (base URL, API key), shared by every process
/// of the key that uses this store: a POSIX shared-memory object named by a
/// hash of the pair (/dev/shm/digital_delivery.rl.*), owner-only (0600),
/// updated lock-free, so a process dying at any instant leaves a valid
/// bucket. An object that belongs to another user, is open to others or has
/// another layout is not used: the fallback bucket serves
/// (rate_limit_params::fallback_share) and a throttle_event store_unavailable
/// says why.
class shm_rate_limit_store final : public detail::rate_limit_store_impl
{
public:
    /// The host's shared-memory store (nothing to configure).
    shm_rate_limit_store() noexcept = default;

    /// Internal (the rate limiter): the store's session for one bucket.
    /// \param bucket The bucket's key and settings.
    /// \return The session.
    DIGITAL_DELIVERY_DECL std::shared_ptr<detail::store_session> open(const detail::store_bucket& bucket) const override;
};

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/rate_limit/shm_rate_limit_store.ipp>
#endif

#endif
