//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_REDIS_FEED_CHECKPOINT_HPP
#define DIGITAL_DELIVERY_REDIS_FEED_CHECKPOINT_HPP

/// \file
/// An order feed's checkpoint in Redis, shared by N replicas of a service of
/// which one watches at a time: a lease with a fencing token (opt-in: the
/// umbrella header does not include it). docs/order-feed.md, "One active
/// watcher of N".
///
/// \code
/// #include <digital_delivery/redis_feed_checkpoint.hpp>
/// auto cp = std::make_shared<dd::redis_feed_checkpoint>(dd::redis_store_params{.host = "10.0.0.5"}, "provisioning");
/// dd::order_feed feed(client, cp);  // async_next waits until this replica holds the lease
/// \endcode

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/feed_checkpoint.hpp>
#include <digital_delivery/redis_store_params.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/deferred.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace digital_delivery {

namespace detail {
class redis_feed_shared;
DIGITAL_DELIVERY_DECL void redis_feed_close(const std::shared_ptr<redis_feed_shared>& s, boost::asio::any_io_executor ex,
                                            boost::asio::any_completion_handler<void(error_code)> h);
}  // namespace detail

/// The lease of a redis_feed_checkpoint.
struct redis_feed_lease_params
{
    /// How long the lease lasts without a renewal: a holder that dies is
    /// replaced within ttl + poll_interval + redis_store_params::command_timeout
    /// after its last renewal. Default: 10 s.
    std::chrono::milliseconds ttl{10000};

    /// How often the holder renews. Zero (or not below ttl): ttl / 3. Default: zero.
    std::chrono::milliseconds renew_interval{0};

    /// How often a watcher on standby tries to acquire (and sooner when the
    /// holder's lease runs out sooner). Default: 1 s.
    std::chrono::milliseconds poll_interval{1000};

    /// This watcher's name in the lease key (no spaces; they are replaced by
    /// '_'). Empty: host name, process id and 8 random hex digits. Default: empty.
    std::string owner{};

    /// Prepended to the checkpoint's keys: PREFIX{CONSUMER}:lease, :token,
    /// :meta, :orders, :dead (one Redis Cluster slot per consumer). Default:
    /// "digital_delivery:feed:". redis_store_params::key_prefix is not used.
    std::string key_prefix = "digital_delivery:feed:";
};

/// What a redis_feed_checkpoint's lease is doing (for logs and tests).
struct redis_feed_lease_status
{
    /// Holding the lease now.
    bool held = false;
    /// Held once and lost: the feed stopped (final for this object).
    bool lost = false;
    /// The fencing token of the lease held or last held (0: never held).
    std::int64_t token = 0;
    /// When the lease was acquired (std::chrono::steady_clock).
    std::optional<std::chrono::steady_clock::time_point> acquired_at{};
    /// On standby: the latest time the holder's lease runs out, as Redis said
    /// (std::chrono::steady_clock).
    std::optional<std::chrono::steady_clock::time_point> holder_expiry{};
    /// Why the last call to Redis failed (never a password); empty when it succeeded.
    std::string last_error{};
};

/// A feed checkpoint in Redis, with a lease: of the replicas that use one
/// consumer name on one Redis, one holds the lease and delivers; the others
/// wait in async_load. The holder renews the lease every renew_interval;
/// each commit carries the lease's fencing token and Redis refuses it (one
/// atomic script) unless the lease is still held with that token, so that a
/// watcher that lost its lease (paused, cut off) cannot overwrite its
/// successor's checkpoint. A lease lost (not renewed within ttl, or refused)
/// makes guard_error() and every later commit client_errc::checkpoint_lease_lost:
/// the feed stops. Connects with redis_store_params (TLS, Sentinel, AUTH,
/// SELECT); two connections (the lease's, the commits'), on a strand of the
/// executor of the first async_load.
class redis_feed_checkpoint final : public feed_checkpoint
{
public:
    /// \param redis Where Redis is (its key_prefix is not used: see redis_feed_lease_params::key_prefix).
    /// \param consumer The consumer's name: one lease and one checkpoint per name.
    /// \param lease The lease's timing and names.
    DIGITAL_DELIVERY_DECL redis_feed_checkpoint(redis_store_params redis, std::string consumer,
                                                redis_feed_lease_params lease = {});

    /// Stops renewing and releases the lease if held (when the executor still
    /// runs), so that a standby takes over at its next poll. A program that
    /// stops its executor next (a command-line tool, a service shutting
    /// down) should await async_close first: the release the destructor posts
    /// never runs on a stopped executor, and the lease then runs out after
    /// its ttl.
    DIGITAL_DELIVERY_DECL ~redis_feed_checkpoint() override;

    redis_feed_checkpoint(const redis_feed_checkpoint&) = delete;
    redis_feed_checkpoint& operator=(const redis_feed_checkpoint&) = delete;

    /// Waits until this watcher holds the lease (cancellable: the handler's
    /// cancellation slot), then reads the state. While Redis cannot be
    /// reached it keeps waiting (status().last_error says why); a refused
    /// configuration (AUTH, SELECT, TLS files, a master no sentinel knows)
    /// completes with checkpoint_unavailable.
    /// \param ex The feed's executor (the lease runs on a strand of it).
    /// \param h Completes with the state, or checkpoint_unavailable, checkpoint_invalid, checkpoint_lease_lost.
    DIGITAL_DELIVERY_DECL void async_load(boost::asio::any_io_executor ex,
                                          boost::asio::any_completion_handler<void(error_code, feed_state)> h) override;

    /// Applies `c` in one script, refused unless the lease is held with this
    /// watcher's token.
    /// \param ex The feed's executor.
    /// \param c The change.
    /// \param h Completes once Redis applied it, or with checkpoint_lease_lost
    /// (nothing applied), checkpoint_unavailable (unknown: the next commit of
    /// the same change is harmless).
    DIGITAL_DELIVERY_DECL void async_commit(boost::asio::any_io_executor ex, feed_commit c,
                                            boost::asio::any_completion_handler<void(error_code)> h) override;

    /// Stops renewing the lease, releases it if held (a standby takes over
    /// at its next poll, not after the lease's ttl), closes the connections,
    /// then completes. A load still waiting for the lease, and later loads
    /// and commits, complete with boost::asio::error::operation_aborted. Call
    /// it after the feed's last operation has completed (cancel a pending
    /// async_next first).
    /// \param ex The executor to complete on when the handler has none of its own.
    /// \param token Completion token for `void(error_code)`: empty once
    /// released (or when not held), checkpoint_unavailable when Redis did not
    /// confirm the release (status().last_error says why; the lease then
    /// runs out after its ttl), operation_aborted when this wait was
    /// cancelled (the release still goes on).
    /// \return What the completion token makes of the operation.
    template <class CompletionToken = boost::asio::deferred_t>
    auto async_close(boost::asio::any_io_executor ex, CompletionToken&& token = {})
    {
        return boost::asio::async_initiate<CompletionToken, void(error_code)>(
            [s = s_](auto h, boost::asio::any_io_executor e) { detail::redis_feed_close(s, std::move(e), std::move(h)); },
            token, std::move(ex));
    }

    /// \return checkpoint_lease_lost once the lease held was lost, else empty.
    DIGITAL_DELIVERY_DECL error_code guard_error() const override;

    /// \return The lease's state (thread-safe).
    DIGITAL_DELIVERY_DECL redis_feed_lease_status status() const;

    /// \return The stated takeover bound: ttl + poll_interval + command_timeout.
    DIGITAL_DELIVERY_DECL std::chrono::milliseconds takeover_bound() const noexcept;

private:
    std::shared_ptr<detail::redis_feed_shared> s_;
};

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/feed/redis_feed_checkpoint.ipp>
#endif

#endif
