//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_INTERNAL_REDIS_STORE_HPP
#define DIGITAL_DELIVERY_IMPL_INTERNAL_REDIS_STORE_HPP

/// \file
/// The Redis rate-limit store (redis_rate_limit_store), sans-io part: the
/// GCRA script, the decoding of its reply, and redis_points, the scheduler's
/// points source over it.
///
/// The script is gcra_points (gcra_store.hpp) run inside Redis, atomically,
/// on one hash per (base URL, API key): `tat` (theoretical arrival time),
/// `frozen` (0, or the instant refill stopped: hold_refill_until_response),
/// `paused` (end of the latest 429 pause), all microseconds of Redis's own
/// clock (TIME), so the hosts' clocks never matter. The hash expires once it
/// is equivalent to a fresh one (a full bucket, no pause) and the processes
/// it counts are gone. One call carries everything a process has to say since
/// its last call (a take, points given back, a server header's lower bound, a
/// 429 pause, a thaw, the debt of its fallback bucket) and answers whether the
/// take was granted, else how long to wait, and how many processes use the
/// key (the fallback bucket's share: docs/rate-limiting.md, "A fleet while
/// Redis is away").
///
/// redis_points is synchronous, like every points_source: it grants only
/// points Redis has already granted (a "permit"). When the head waiter finds
/// none, it records the want; the store's session (redis_session.hpp)
/// then has the rate limiter send one script call (start_exchange), at most
/// one in flight per bucket, and feeds the reply back (on_reply) under the
/// limiter's lock, after which the head takes
/// the permit. A permit nobody took (its waiter cancelled meanwhile) goes
/// back to Redis with the next call.

#include <digital_delivery/impl/rate_limit/sansio/points_source.hpp>
#include <digital_delivery/impl/rate_limit/sansio/resp.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace digital_delivery {
namespace detail {

/// KEYS[1]: the bucket's hash. ARGV: capacity, window (µs), hold (0/1),
/// take (points), give back (points), lower to (points, '' for none),
/// pause (µs from now, 0 for none), thaw (0/1), then the fleet's part
/// (optional: absent or '' for none): the caller's process id, the points it
/// has spent on its fallback bucket in all (a running total), and the total
/// it knows applied (from an earlier reply); then the reserve (optional:
/// absent or '' for none): the points the take must leave in the bucket
/// (rate_limit_params::background_share), ARGV[9..11] given as '' when the
/// call takes no part in the fleet's count.
/// Returns {granted (0/1), wait (µs), pause left (µs), balance (string),
/// frozen (0/1), processes alive (0 without a process id)}.
///
/// The fleet's part lives in the same hash, so that it costs no round trip
/// and no second key (one Cluster slot): `m:ID` the process's last call (µs
/// of Redis's clock), `d:ID` the fallback total applied for it. A process
/// unseen for two windows is no longer counted and both its fields are
/// deleted (by any call that names a process). Debt is applied once: the
/// part of the running total above max(`d:ID`, the caller's applied total)
/// lowers the bucket's balance, never below -capacity.
inline constexpr std::string_view redis_gcra_script = R"lua(-- digital_delivery rate limit (GCRA) v3
local cap = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local hold = ARGV[3] == '1'
local take = tonumber(ARGV[4])
local give = tonumber(ARGV[5])
local lower = tonumber(ARGV[6])
local pause = tonumber(ARGV[7])
local thaw = ARGV[8] == '1'
if not cap or cap <= 0 or not window or window <= 0 or not take or not give or not pause then
  return redis.error_reply('ERR digital_delivery rate limit: bad arguments')
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local per = window / cap
local s = redis.call('HMGET', KEYS[1], 'tat', 'frozen', 'paused')
local tat = tonumber(s[1]) or 0
local frozen = tonumber(s[2]) or 0
local paused = tonumber(s[3]) or 0
if frozen > 0 and (thaw or now - frozen >= window) then
  if now > frozen then tat = tat + (now - frozen) end
  frozen = 0
end
local eff = now
if frozen > 0 and frozen < now then eff = frozen end
if give > 0 and tat > eff then tat = math.max(tat - math.ceil(give * per), eff) end
if lower then
  local floor = eff + window - math.ceil(lower * per)
  if math.max(tat, eff) < floor then tat = floor end
end
if pause > 0 and now + pause > paused then paused = now + pause end
local id = ARGV[9] or ''
local alive = 0
local live_ttl = 2 * window
if id ~= '' then
  local spent = tonumber(ARGV[10] or '')
  if spent and spent > 0 then
    local done = math.max(tonumber(redis.call('HGET', KEYS[1], 'd:' .. id)) or 0, tonumber(ARGV[11] or '') or 0)
    if spent > done then
      local base = math.max(tat, eff)
      tat = math.max(tat, math.min(base + math.ceil((spent - done) * per), eff + 2 * window))
      redis.call('HSET', KEYS[1], 'd:' .. id, string.format('%.6f', spent))
    end
  end
  redis.call('HSET', KEYS[1], 'm:' .. id, string.format('%.0f', now))
  local all = redis.call('HGETALL', KEYS[1])
  for i = 1, #all, 2 do
    local f = all[i]
    if string.sub(f, 1, 2) == 'm:' then
      if now - (tonumber(all[i + 1]) or 0) > live_ttl then
        redis.call('HDEL', KEYS[1], f, 'd:' .. string.sub(f, 3))
      else
        alive = alive + 1
      end
    end
  end
end
local granted, wait = 0, 0
if take > 0 then
  if now < paused then
    wait = paused - now
  else
    local nxt = math.max(tat, eff) + math.ceil(take * per)
    local keep = tonumber(ARGV[12] or '') or 0
    local reserve = 0
    if keep > 0 then reserve = math.ceil(math.min(keep, cap) * per) end
    if nxt - window + reserve <= eff + 1 then
      granted = 1
      if hold and tat <= eff and frozen == 0 then frozen = now end
      tat = nxt
    else
      wait = nxt - window + reserve - eff
    end
  end
end
local horizon = math.max(tat, paused, frozen + window, now) - now + window
if alive > 0 then horizon = math.max(horizon, live_ttl) end
redis.call('HSET', KEYS[1], 'tat', string.format('%.0f', tat), 'frozen', string.format('%.0f', frozen),
  'paused', string.format('%.0f', paused))
redis.call('PEXPIRE', KEYS[1], string.format('%.0f', math.ceil(horizon / 1000) + 1000))
local left = 0
if paused > now then left = paused - now end
local fz = 0
if frozen > 0 then fz = 1 end
return {granted, wait, left, string.format('%.6f', (eff + window - math.max(tat, eff)) / per), fz, alive}
)lua";

/// What one script call carries (everything since the previous call).
struct gcra_request
{
    double take = 0;       ///< Points asked for (0: none).
    double give_back = 0;  ///< Points returned.
    std::optional<double> lower_to;  ///< A server header's bound on the balance.
    std::chrono::microseconds pause{0};  ///< A 429 pause from now (0: none).
    bool thaw = false;     ///< A response came back (hold_refill_until_response).
    /// Points this process has spent on its fallback bucket in all (a
    /// running total; 0: nothing to report).
    double fallback_spent = 0;
    /// The part of `fallback_spent` an earlier reply confirmed applied.
    double fallback_applied = 0;
    /// The points the take must leave in the bucket (a background request's
    /// reserve: rate_limit_params::background_share; 0: none).
    double keep = 0;
};

/// The script's answer.
struct gcra_reply
{
    bool granted = false;
    std::chrono::microseconds wait{0};   ///< Not granted: retry after this.
    std::chrono::microseconds paused{0}; ///< A 429 pause left on the key.
    double balance = 0;                  ///< Points left on the key after the call.
    bool frozen = false;                 ///< Refill held until a response.
    /// Processes of the key seen by Redis within two windows, the caller
    /// included (0: the call named no process).
    std::size_t alive = 0;
};

inline std::string format_points(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6f", v);
    return buf;
}

/// ARGV of the script for `r`; `process_id` (no secret: a random id per
/// bucket and process) empty: the call takes no part in the fleet's count.
inline std::vector<std::string> gcra_arguments(
    const gcra_request& r,
    double capacity,
    std::chrono::duration<double> window,
    bool hold,
    std::string_view process_id = {}
)
{
    const auto window_us = std::max<long long>(1, std::llround(window.count() * 1e6));
    std::vector<std::string> args = {
        format_points(capacity),
        std::to_string(window_us),
        hold ? "1" : "0",
        format_points(std::max(r.take, 0.0)),
        format_points(std::max(r.give_back, 0.0)),
        r.lower_to ? format_points(std::max(*r.lower_to, -1e9)) : std::string(),
        std::to_string(std::max<long long>(0, r.pause.count())),
        r.thaw ? "1" : "0",
    };
    if (!process_id.empty())
    {
        args.emplace_back(process_id);
        args.push_back(r.fallback_spent > 0 ? format_points(r.fallback_spent) : std::string());
        args.push_back(r.fallback_spent > 0 ? format_points(std::max(r.fallback_applied, 0.0)) : std::string());
    }
    if (r.take > 0 && r.keep > 0)
    {
        args.resize(11);  // no process id: the fleet's part stays '' (none)
        args.push_back(format_points(r.keep));
    }
    return args;
}

/// An error reply that says the configuration is wrong, not that Redis is
/// down: the credentials (`NOAUTH`: none sent but required; `WRONGPASS`;
/// `ERR AUTH ... called without any password configured`: one sent to a
/// server that has none) or the user's permissions (`NOPERM`). Retrying
/// will not help; the user must fix the configuration.
inline bool redis_refuses_configuration(std::string_view error_reply) noexcept
{
    for (std::string_view p : {"NOAUTH", "WRONGPASS", "NOPERM", "ERR AUTH"})
        if (error_reply.substr(0, p.size()) == p)
            return true;
    return false;
}

/// A Redis Cluster node's address, as a redirection names it.
struct redis_node
{
    std::string host;
    std::uint16_t port = 0;
};

/// A Redis Cluster redirection: `-MOVED SLOT HOST:PORT` (the slot lives
/// there now) or `-ASK SLOT HOST:PORT` (being migrated there: ask it, once,
/// after ASKING).
struct redis_redirect
{
    bool moved = false;
    redis_node node;
};

/// Reads a redirection from an error reply's text; nullopt for any other
/// error, or a malformed one.
inline std::optional<redis_redirect> parse_redirect(std::string_view error_reply)
{
    redis_redirect r;
    if (error_reply.substr(0, 6) == "MOVED ")
        r.moved = true;
    else if (error_reply.substr(0, 4) != "ASK ")
        return std::nullopt;
    const auto slot_end = error_reply.find(' ', r.moved ? 6 : 4);
    if (slot_end == std::string_view::npos)
        return std::nullopt;
    const std::string_view addr = error_reply.substr(slot_end + 1);
    const auto colon = addr.rfind(':');
    if (colon == std::string_view::npos || colon == 0)
        return std::nullopt;
    std::uint16_t port = 0;
    const auto digits = addr.substr(colon + 1);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (ec != std::errc{} || end != digits.data() + digits.size() || port == 0)
        return std::nullopt;
    r.node.host = std::string(addr.substr(0, colon));
    r.node.port = port;
    return r;
}

/// Decodes the script's reply; nullopt (and `why`) for anything else,
/// an error reply included (its text: Redis never echoes credentials).
inline std::optional<gcra_reply> decode_gcra_reply(const resp_value& v, std::string& why)
{
    if (v.type == resp_value::kind::error)
    {
        why = "Redis answered: " + v.str.substr(0, 200);
        return std::nullopt;
    }
    const auto bad = [&] {
        why = "an unexpected reply to the rate-limit script";
        return std::nullopt;
    };
    // Five elements: a script older than the fleet's count (another version
    // of the library may have loaded it under its own SHA).
    if (v.type != resp_value::kind::array || (v.elements.size() != 5 && v.elements.size() != 6))
        return bad();
    const auto& e = v.elements;
    for (std::size_t i : {0u, 1u, 2u, 4u})
        if (e[i].type != resp_value::kind::integer)
            return bad();
    if (e.size() == 6 && (e[5].type != resp_value::kind::integer || e[5].integer < 0))
        return bad();
    if (e[3].type != resp_value::kind::bulk)
        return bad();
    if ((e[0].integer != 0 && e[0].integer != 1) || e[1].integer < 0 || e[2].integer < 0 ||
        (e[4].integer != 0 && e[4].integer != 1))
        return bad();
    double balance = 0;
    const auto& s = e[3].str;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), balance);
    if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(balance))
        return bad();
    // Bounded: a year at most (a broken server cannot make a wait overflow).
    constexpr std::int64_t year_us = 366LL * 24 * 3600 * 1000000;
    gcra_reply r;
    r.granted = e[0].integer == 1;
    r.wait = std::chrono::microseconds(std::min(e[1].integer, year_us));
    r.paused = std::chrono::microseconds(std::min(e[2].integer, year_us));
    r.balance = balance;
    r.frozen = e[4].integer == 1;
    if (e.size() == 6)
        r.alive = static_cast<std::size_t>(std::min<std::int64_t>(e[5].integer, 1000000000));
    return r;
}

/// One script call's outcome, as a link (redis_link) delivers it.
struct redis_exchange_result
{
    std::optional<gcra_reply> reply;  ///< Empty: failed (`why` says how).
    std::string why;
    /// Failed because Redis refuses the configuration (credentials,
    /// permissions, the database number), not because it is down.
    bool misconfigured = false;
};

/// The scheduler's view of a Redis bucket (see the file comment). Sans-io.
class redis_points final : public points_source
{
public:
    redis_points(double capacity, std::chrono::duration<double> window, bool hold, time_point now) noexcept
        : capacity_(capacity > 0 ? capacity : 1),
          window_(std::max(window.count(), 1e-6)),
          hold_(hold),
          balance_(capacity_),
          balance_at_(now)
    {
    }

    double capacity() const noexcept override { return capacity_; }
    void set_capacity(double c, time_point) noexcept override { capacity_ = c > 0 ? c : 1; }

    /// The last known balance of the key, refilled since (an estimate), plus
    /// the permit in hand.
    double available(time_point now) noexcept override { return estimate(now) + permit_; }

    /// A permit in hand is taken whatever `keep`: Redis granted it under the
    /// reserve of the waiter that asked (the head then, which a foreground
    /// request only ever replaces).
    bool try_take(double cost, time_point, double keep = 0) noexcept override
    {
        cost = std::min(cost, capacity_);  // a larger cost would never fit: taken as the capacity
        if (permit_ + 1e-9 >= cost)
        {
            permit_ = std::max(0.0, permit_ - cost);
            want_ = 0;
            want_keep_ = 0;
            return true;
        }
        want_ = cost;
        want_keep_ = std::max(keep, 0.0);
        return false;
    }

    bool lower_to(double value, time_point now) noexcept override
    {
        pending_lower_ = pending_lower_ ? std::min(*pending_lower_, value) : value;
        if (estimate(now) <= value)
            return false;
        balance_ = value;
        balance_at_ = now;
        return true;
    }

    void give_back(double cost, time_point now) noexcept override
    {
        pending_give_ += cost;
        balance_ = std::min(capacity_, estimate(now) + cost);
        balance_at_ = now;
    }

    bool thaw(time_point) noexcept override
    {
        if (hold_ && remote_frozen_)
            pending_thaw_ = true;
        return false;  // the call's reply re-runs the scheduler
    }

    duration time_to_reach(double target, time_point now) noexcept override
    {
        if (permit_ + 1e-9 >= target)
            return duration::zero();
        const double missing = target - permit_ - estimate(now);
        duration d = duration::zero();
        if (missing > 0)
            d = std::chrono::duration_cast<duration>(std::chrono::duration<double>(missing * window_ / capacity_));
        // A wait Redis named for a reserve says nothing of a take without
        // one (the scheduler asks a background head for its reserve too).
        if (retry_at_ > now && retry_keep_ <= 0)
            d = std::max(d, retry_at_ - now);
        return d;
    }

    time_point paused_until() const noexcept override { return paused_until_; }

    void pause_until(time_point end) noexcept override
    {
        pending_pause_end_ = std::max(pending_pause_end_, end);
        paused_until_ = std::max(paused_until_, end);
    }

    // --- the session's side (redis_rate_limit_store.ipp) ---

    /// The scheduler's next poll decides the want afresh.
    void clear_want() noexcept
    {
        want_ = 0;
        want_keep_ = 0;
    }

    /// A permit no waiter took goes back to Redis with the next call.
    void return_leftover() noexcept
    {
        if (permit_ > 0)
        {
            pending_give_ += permit_;
            permit_ = 0;
        }
    }

    bool in_flight() const noexcept { return in_flight_; }

    /// The points this process has taken from its fallback bucket in all (a
    /// running total; lowered by a 429 not charged, never below what Redis
    /// confirmed applied): what Redis has not yet confirmed applied goes with
    /// the next call, as debt on the shared bucket.
    void fallback_spent(double total) noexcept { spent_ = std::max(applied_, total); }

    /// Fallback spending Redis has not confirmed applied.
    bool owes() const noexcept { return spent_ > applied_ + 1e-9; }

    /// Processes of the key alive at the last reply (the caller included);
    /// 0: none seen yet.
    std::size_t alive() const noexcept { return alive_; }

    /// Whether a call should be sent at `now`: something to tell Redis, or a
    /// want whose retry time has come.
    bool wants_exchange(time_point now) const noexcept
    {
        if (in_flight_)
            return false;
        return pending_give_ > 0 || pending_lower_ || pending_pause_end_ > now || pending_thaw_ || owes() ||
               (want_ > permit_ + 1e-9 && may_ask(now));
    }

    /// The call to send (everything pending goes into it).
    gcra_request start_exchange(time_point now) noexcept
    {
        gcra_request r;
        if (want_ > permit_ + 1e-9 && may_ask(now))
        {
            r.take = want_ - permit_;
            r.keep = want_keep_;
        }
        r.give_back = pending_give_;
        r.lower_to = pending_lower_;
        if (pending_pause_end_ > now)
            r.pause = std::chrono::ceil<std::chrono::microseconds>(pending_pause_end_ - now);
        r.thaw = pending_thaw_;
        if (owes())
        {
            r.fallback_spent = spent_;
            r.fallback_applied = applied_;
            sent_spent_ = spent_;
        }
        pending_give_ = 0;
        pending_lower_.reset();
        pending_pause_end_ = {};
        pending_thaw_ = false;
        requested_ = r.take;
        requested_keep_ = r.keep;
        in_flight_ = true;
        return r;
    }

    /// The reply of the call in flight, received at `now`.
    void on_reply(const gcra_reply& r, time_point now) noexcept
    {
        in_flight_ = false;
        if (r.granted)
        {
            permit_ += requested_;
            retry_at_ = {};
            retry_keep_ = 0;
        }
        else if (requested_ > 0)
        {
            // At least 1 ms between asks: never a busy loop on a rounding.
            retry_at_ = now + std::max<duration>(std::chrono::duration_cast<duration>(r.wait), std::chrono::milliseconds(1));
            retry_keep_ = requested_keep_;
        }
        requested_ = 0;
        applied_ = std::max(applied_, sent_spent_);
        sent_spent_ = 0;
        if (r.alive > 0)
            alive_ = r.alive;
        balance_ = r.balance;
        balance_at_ = now;
        remote_frozen_ = r.frozen;
        if (r.paused > std::chrono::microseconds::zero())
            paused_until_ = std::max(paused_until_, now + std::chrono::duration_cast<duration>(r.paused));
    }

    /// The call in flight failed: what it carried is lost (the store is
    /// abandoned for the fallback bucket until a retry succeeds).
    /// Debt it carried stays owed: the next call sends the same running
    /// total, and Redis applies only what it has not applied yet.
    void on_failure() noexcept
    {
        in_flight_ = false;
        requested_ = 0;
        sent_spent_ = 0;
    }

    /// Back to a fresh state (a new connection after a failure); the debt
    /// owed and the processes last seen stay.
    void reset(time_point now) noexcept
    {
        permit_ = want_ = want_keep_ = requested_ = pending_give_ = sent_spent_ = 0;
        pending_lower_.reset();
        pending_pause_end_ = {};
        pending_thaw_ = remote_frozen_ = in_flight_ = false;
        retry_at_ = {};
        retry_keep_ = requested_keep_ = 0;
        balance_ = capacity_;
        balance_at_ = now;
    }

    double permit() const noexcept { return permit_; }

private:
    // A want may be sent: its retry time has come, or it asks for less of a
    // reserve than the want that was told to wait (a foreground request
    // after a background one), and no 429 pause holds.
    bool may_ask(time_point now) const noexcept
    {
        return (now >= retry_at_ || want_keep_ + 1e-9 < retry_keep_) && now >= paused_until_;
    }

    double estimate(time_point now) const noexcept
    {
        const double refill =
            now > balance_at_ ? std::chrono::duration<double>(now - balance_at_).count() * capacity_ / window_ : 0.0;
        return std::min(capacity_, balance_ + refill);
    }

    double capacity_;
    double window_;  // seconds
    bool hold_;
    double balance_;
    time_point balance_at_;
    double permit_ = 0;
    double want_ = 0;
    double want_keep_ = 0;  // the reserve the want must leave in the bucket
    double requested_ = 0;
    time_point retry_at_{};
    double retry_keep_ = 0;      // the reserve of the want retry_at_ was named for
    double requested_keep_ = 0;  // the reserve of the call in flight
    time_point paused_until_{};
    double pending_give_ = 0;
    std::optional<double> pending_lower_;
    time_point pending_pause_end_{};
    bool pending_thaw_ = false;
    bool remote_frozen_ = false;
    bool in_flight_ = false;
    double spent_ = 0;       // fallback points taken, in all
    double applied_ = 0;     // of which Redis confirmed applied
    double sent_spent_ = 0;  // the total the call in flight reports
    std::size_t alive_ = 0;
};

}  // namespace detail
}  // namespace digital_delivery

#endif
