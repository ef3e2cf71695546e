//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_RATE_LIMIT_STORE_SESSION_HPP
#define DIGITAL_DELIVERY_IMPL_RATE_LIMIT_STORE_SESSION_HPP

/// \file
/// What the rate limiter (rate_limiter.ipp) knows of a store shared beyond
/// the process: one store_session per bucket, made by the store's
/// rate_limit_store_impl::open. The stores themselves (shared memory, Redis)
/// live behind their opt-in headers (shm_rate_limit_store.hpp,
/// redis_rate_limit_store.hpp); the limiter never includes them.
///
/// A store is synchronous (shared memory: connecting answers at once, points
/// are taken in place) or asynchronous (Redis: a points_source that grants
/// only what an exchange with the server granted; the session hands the
/// limiter exchanges to start, whose outcomes come back later). Every call
/// but an exchange's I/O runs under the limiter's lock; an exchange is
/// started after the lock is released.

#include <digital_delivery/impl/rate_limit/sansio/points_source.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace digital_delivery {
namespace detail {

/// What a store learns of the bucket it serves.
struct store_bucket
{
    boost::asio::any_io_executor ex;  ///< The bucket's executor (a store's I/O runs on it).
    std::string_view normalised_base_url;
    std::string_view api_key;  ///< Only to name the store's entry (a hash): never kept.
    double capacity = 0;
    std::chrono::duration<double> window{};
    bool hold_refill_until_response = false;
    std::chrono::steady_clock::time_point now{};
};

/// Whether a store serves; `why` (no secret in it) when not, and whether it
/// refuses the configuration (credentials, permissions) rather than failing.
struct store_status
{
    bool up = false;
    std::string why{};
    bool misconfigured = false;
};

class store_session
{
public:
    using time_point = std::chrono::steady_clock::time_point;
    /// An exchange's outcome, applied under the limiter's lock at `now`.
    using outcome = std::function<store_status(time_point now)>;
    /// Receives an exchange's outcome: once, on any thread, never inside the
    /// call that started the exchange.
    using outcome_handler = std::function<void(outcome)>;
    /// An exchange to start once the limiter's lock is released.
    using exchange = std::function<void(outcome_handler)>;

    virtual ~store_session() = default;

    /// The source the scheduler takes points from while the store serves.
    virtual std::shared_ptr<points_source> source() const = 0;

    /// (Re)connects at `now` (at creation, then at most every
    /// store_retry_interval while the fallback bucket serves). A synchronous
    /// store answers at once; an asynchronous one may too (at creation: its
    /// source waits for its own first exchange), or sets `call` and answers
    /// nullopt: the exchange's outcome says.
    virtual std::optional<store_status> connect(time_point now, exchange& call) = 0;

    /// An exchange is in flight: no reconnect, and no timer is needed for the
    /// head waiter (the outcome re-runs the scheduler).
    virtual bool in_flight() const noexcept { return false; }

    /// Before each poll of the scheduler (the head's want is decided afresh).
    virtual void before_poll() noexcept {}

    /// After each poll while the store serves: sets `call` when there is
    /// something to tell the store (points given back, a pause, a want).
    virtual void after_poll(time_point /*now*/, exchange& /*call*/) {}

    /// The points the fallback bucket has granted in all (a running total),
    /// told before each connect() and after_poll(): a store that keeps a
    /// fleet-wide bound reports what it has not reported yet as debt.
    virtual void fallback_spent(double /*total*/) noexcept {}

    /// The processes sharing the store when it last answered, this one
    /// included; 0: unknown (never answered, or a store that does not count
    /// them). The fallback bucket then holds at most capacity / that number.
    virtual std::size_t processes_alive() const noexcept { return 0; }
};

}  // namespace detail
}  // namespace digital_delivery

#endif
