//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_FEED_REDIS_FEED_CHECKPOINT_IPP
#define DIGITAL_DELIVERY_IMPL_FEED_REDIS_FEED_CHECKPOINT_IPP

// The Redis feed checkpoint: the lease's loop (feed/sansio/feed_lease.hpp
// decides, this file talks to Redis), the load (HGETALL of the meta hash, the
// orders and dead letters read in pages) and the commit script.

#include <digital_delivery/redis_feed_checkpoint.hpp>
#include <digital_delivery/impl/rate_limit/redis_link.hpp>
#include <digital_delivery/impl/rate_limit/sansio/resp.hpp>
#include <digital_delivery/impl/feed/sansio/feed_lease.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/append.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <unistd.h>

namespace digital_delivery {
namespace detail {

// KEYS: lease, token. ARGV: owner, ttl ms. {1, token} or {0, the holder's PTTL}.
inline constexpr std::string_view redis_feed_acquire_script = R"lua(
local v = redis.call('GET', KEYS[1])
if v then
  local sp = string.find(v, ' ', 1, true)
  if sp and string.sub(v, 1, sp - 1) == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return {1, tonumber(string.sub(v, sp + 1))}
  end
  return {0, redis.call('PTTL', KEYS[1])}
end
local t = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. t, 'PX', ARGV[2])
return {1, t}
)lua";

// KEYS: lease. ARGV: owner, token, ttl ms (0: release). 1 when held, else 0.
inline constexpr std::string_view redis_feed_renew_script = R"lua(
if redis.call('GET', KEYS[1]) ~= ARGV[1] .. ' ' .. ARGV[2] then return 0 end
if ARGV[3] == '0' then redis.call('DEL', KEYS[1]) else redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 1
)lua";

// KEYS: lease, meta, orders, dead. ARGV: owner, token, then five groups
// (count, items): meta field/value pairs, orders id/json, orders to remove,
// dead letters key/json, dead letters to remove. Refused (FENCED) unless the
// lease is held with this token and no newer token has committed.
inline constexpr std::string_view redis_feed_commit_script = R"lua(
if redis.call('GET', KEYS[1]) ~= ARGV[1] .. ' ' .. ARGV[2] then
  return redis.error_reply('FENCED the lease is not held with this token')
end
local token = tonumber(ARGV[2])
local fence = tonumber(redis.call('HGET', KEYS[2], 'fence') or '0')
if fence > token then return redis.error_reply('FENCED a newer token has committed') end
redis.call('HSET', KEYS[2], 'fence', ARGV[2])
local i = 3
local function group(cmd, key, width)
  local n = tonumber(ARGV[i])
  i = i + 1
  local j = 0
  while j < n do
    local k = math.min(n - j, 200)
    local args = {}
    for a = 0, k * width - 1 do args[#args + 1] = ARGV[i + j * width + a] end
    redis.call(cmd, key, unpack(args))
    j = j + k
  end
  i = i + n * width
end
group('HSET', KEYS[2], 2)
group('HSET', KEYS[3], 2)
group('HDEL', KEYS[3], 1)
group('HSET', KEYS[4], 2)
group('HDEL', KEYS[4], 1)
return 1
)lua";

// KEYS: a hash. ARGV: cursor, count. {next cursor, JSON array of field, value, ...}.
inline constexpr std::string_view redis_feed_page_script = R"lua(
local r = redis.call('HSCAN', KEYS[1], ARGV[1], 'COUNT', ARGV[2])
if #r[2] == 0 then return {r[1], '[]'} end
return {r[1], cjson.encode(r[2])}
)lua";

inline std::string redis_feed_default_owner()
{
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0)
        host[0] = 0;
    std::random_device rd;
    char rnd[16];
    std::snprintf(rnd, sizeof rnd, "%08x", static_cast<unsigned>(rd()));
    return std::string(host[0] ? host : "host") + ":" + std::to_string(::getpid()) + ":" + rnd;
}

// Microseconds since the epoch in a record: 0001-01-01 to 9999-12-31.
inline constexpr std::int64_t redis_feed_min_us = -62135596800LL * 1000000;
inline constexpr std::int64_t redis_feed_max_us = 253402300799999999LL;

inline bool redis_feed_time(const boost::json::value* v, timestamp& out)
{
    if (!v || !v->is_int64() || v->as_int64() < redis_feed_min_us || v->as_int64() > redis_feed_max_us)
        return false;
    out = timestamp(std::chrono::microseconds(v->as_int64()));
    return true;
}

inline std::string redis_feed_encode(const feed_order_state& o)
{
    boost::json::object j{{"created_at", o.created_at.time_since_epoch().count()},
                          {"financial_status", o.financial_status},
                          {"download_count", o.download_count},
                          {"expired_reported", o.expired_reported},
                          {"revoked_reported", o.revoked_reported}};
    if (o.expires_at)
        j["expires_at"] = o.expires_at->time_since_epoch().count();
    boost::json::array l;
    for (const auto& x : o.limit_reached)
        l.emplace_back(x);
    j["limit_reached"] = std::move(l);
    return boost::json::serialize(j);
}

inline std::string redis_feed_encode(const feed_dead_letter& d)
{
    return boost::json::serialize(boost::json::object{{"event_json", d.event_json},
                                                      {"error", d.error},
                                                      {"attempts", d.attempts},
                                                      {"at", d.at.time_since_epoch().count()}});
}

// Tolerant: a missing or null optional field takes its default; a field of
// the wrong type or out of range is invalid.
inline bool redis_feed_decode(const std::string& id, std::string_view text, feed_order_state& o)
{
    boost::system::error_code ec;
    auto v = boost::json::parse(text, ec);
    if (ec || !v.is_object())
        return false;
    const auto& j = v.as_object();
    o = feed_order_state{};
    o.id = id;
    if (!redis_feed_time(j.if_contains("created_at"), o.created_at))
        return false;
    if (const auto* f = j.if_contains("financial_status"); f && !f->is_null())
    {
        if (!f->is_string())
            return false;
        o.financial_status = std::string(f->as_string());
    }
    if (const auto* n = j.if_contains("download_count"); n && !n->is_null())
    {
        if (!n->is_int64() || n->as_int64() < 0)
            return false;
        o.download_count = n->as_int64();
    }
    if (const auto* e = j.if_contains("expires_at"); e && !e->is_null())
    {
        timestamp t;
        if (!redis_feed_time(e, t))
            return false;
        o.expires_at = t;
    }
    for (auto [name, field] : {std::pair{"expired_reported", &o.expired_reported}, std::pair{"revoked_reported", &o.revoked_reported}})
        if (const auto* b = j.if_contains(name); b && !b->is_null())
        {
            if (!b->is_bool())
                return false;
            *field = b->as_bool();
        }
    if (const auto* l = j.if_contains("limit_reached"); l && !l->is_null())
    {
        if (!l->is_array())
            return false;
        for (const auto& x : l->as_array())
        {
            if (!x.is_string())
                return false;
            o.limit_reached.emplace_back(x.as_string());
        }
    }
    return true;
}

inline bool redis_feed_decode(const std::string& key, std::string_view text, feed_dead_letter& d)
{
    boost::system::error_code ec;
    auto v = boost::json::parse(text, ec);
    if (ec || !v.is_object())
        return false;
    const auto& j = v.as_object();
    d = feed_dead_letter{};
    d.key = key;
    const auto* e = j.if_contains("event_json");
    if (!e || !e->is_string())
        return false;
    d.event_json = std::string(e->as_string());
    if (const auto* r = j.if_contains("error"); r && r->is_string())
        d.error = std::string(r->as_string());
    if (const auto* a = j.if_contains("attempts"); a && !a->is_null())
    {
        if (!a->is_int64() || a->as_int64() < 0 || a->as_int64() > 1000000)
            return false;
        d.attempts = static_cast<int>(a->as_int64());
    }
    return redis_feed_time(j.if_contains("at"), d.at);
}

inline bool redis_feed_integer(const resp_value& v, std::int64_t& out)
{
    if (v.type == resp_value::kind::integer)
    {
        out = v.integer;
        return true;
    }
    if (v.type != resp_value::kind::bulk)
        return false;
    return std::from_chars(v.str.data(), v.str.data() + v.str.size(), out).ec == std::errc{};
}

class redis_feed_shared : public std::enable_shared_from_this<redis_feed_shared>
{
public:
    using time_point = std::chrono::steady_clock::time_point;

    redis_feed_shared(redis_store_params redis, std::string consumer, redis_feed_lease_params lease)
        : redis_(std::move(redis)),
          lease_params_(std::move(lease)),
          lease_(feed_lease_timing{lease_params_.ttl, lease_params_.renew_interval, lease_params_.poll_interval,
                                   (std::max)(lease_params_.poll_interval / 2, std::chrono::milliseconds(50))})
    {
        owner_ = lease_params_.owner.empty() ? redis_feed_default_owner() : lease_params_.owner;
        for (char& c : owner_)
            if (c == ' ')
                c = '_';
        const std::string base = lease_params_.key_prefix + "{" + consumer + "}:";
        k_lease_ = base + "lease";
        k_token_ = base + "token";
        k_meta_ = base + "meta";
        k_orders_ = base + "orders";
        k_dead_ = base + "dead";
    }

    // On the first async_load: the strand, the links, the lease's loop.
    void start(boost::asio::any_io_executor ex)
    {
        std::call_once(started_, [&] {
            strand_ = boost::asio::make_strand(ex);
            lease_link_ = std::make_shared<redis_link>(*strand_, redis_, std::string(), redis_link_use::commands);
            data_link_ = std::make_shared<redis_link>(*strand_, redis_, std::string(), redis_link_use::commands);
            timer_.emplace(*strand_);
            loop_end_.emplace(*strand_, boost::asio::steady_timer::time_point::max());
            boost::asio::co_spawn(*strand_, [self = shared_from_this()] { return self->lease_loop(); },
                                  boost::asio::detached);
        });
    }

    // The checkpoint is gone: stop the loop (it releases the lease).
    void stop()
    {
        if (!strand_)
            return;
        boost::asio::post(*strand_, [self = shared_from_this()] {
            self->stopping_ = true;
            if (self->timer_)
                self->timer_->cancel();
        });
    }

    boost::asio::strand<boost::asio::any_io_executor>& strand() { return *strand_; }
    bool started() const { return strand_.has_value(); }

    // async_close: stops the loop, then waits until it has released the lease
    // (if held) and closed the links. Loads and commits are refused from now on.
    boost::asio::awaitable<std::tuple<error_code>> close()
    {
        stopping_ = true;
        timer_->cancel();
        while (!loop_done_)
        {
            co_await loop_end_->async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
            const auto cs = co_await boost::asio::this_coro::cancellation_state;
            if (!loop_done_ && cs.cancelled() != boost::asio::cancellation_type::none)
                co_return std::tuple<error_code>{boost::asio::error::operation_aborted};
        }
        co_return std::tuple<error_code>{release_error_};
    }

    boost::asio::awaitable<std::tuple<error_code, feed_state>> load()
    {
        // Wait for the lease (a timer per poll: cancelled with the operation).
        boost::asio::steady_timer wait(*strand_);
        for (;;)
        {
            if (stopping_)
                co_return std::tuple<error_code, feed_state>{boost::asio::error::operation_aborted, feed_state{}};
            const auto now = std::chrono::steady_clock::now();
            if (lease_.holds(now))
                break;
            if (lease_.state() == feed_lease::phase::lost)
                co_return std::tuple<error_code, feed_state>{client_errc::checkpoint_lease_lost, feed_state{}};
            // Refused configuration (AUTH, SELECT, TLS files, an unknown
            // master): an error, not an endless standby (last_error says why).
            if (misconfigured_)
                co_return std::tuple<error_code, feed_state>{client_errc::checkpoint_unavailable, feed_state{}};
            wait.expires_after((std::min)(lease_.timing().poll_every, std::chrono::milliseconds(50)));
            auto [ec] = co_await wait.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
            if (ec)
                co_return std::tuple<error_code, feed_state>{boost::asio::error::operation_aborted, feed_state{}};
        }
        feed_state s;
        std::vector<std::string> hgetall{"HGETALL", k_meta_};
        auto r = co_await data_link_->async_command(std::move(hgetall), resp_limits{}, boost::asio::use_awaitable);
        if (!r.reply || r.reply->type != resp_value::kind::array || r.reply->elements.size() % 2)
            co_return std::tuple<error_code, feed_state>{fail(r), feed_state{}};
        const auto& m = r.reply->elements;
        for (std::size_t i = 0; i + 1 < m.size(); i += 2)
        {
            const std::string& f = m[i].str;
            std::int64_t us = 0;
            const bool num = redis_feed_integer(m[i + 1], us);
            if (f == "fence")
                continue;
            if (!num || (f != "initialised" && (us < redis_feed_min_us || us > redis_feed_max_us)))
                co_return std::tuple<error_code, feed_state>{client_errc::checkpoint_invalid, feed_state{}};
            const timestamp t{std::chrono::microseconds(us)};
            if (f == "initialised")
                s.initialised = us != 0;
            else if (f == "horizon")
                s.horizon = t;
            else if (f == "watermark")
                s.watermark = t;
            else if (f == "last_lookback")
                s.last_lookback = t;
        }
        error_code ec = co_await read_hash(k_orders_, 50, [&](const std::string& k, std::string_view v) {
            feed_order_state o;
            if (!redis_feed_decode(k, v, o))
                return false;
            s.orders[k] = std::move(o);
            return true;
        });
        if (!ec)
            ec = co_await read_hash(k_dead_, 5, [&](const std::string& k, std::string_view v) {
                feed_dead_letter d;
                if (!redis_feed_decode(k, v, d))
                    return false;
                s.dead_letters[k] = std::move(d);
                return true;
            });
        if (ec)
            co_return std::tuple<error_code, feed_state>{ec, feed_state{}};
        mirror_ = s.orders;
        co_return std::tuple<error_code, feed_state>{error_code{}, std::move(s)};
    }

    boost::asio::awaitable<std::tuple<error_code>> commit(feed_commit c)
    {
        if (stopping_)
            co_return std::tuple<error_code>{boost::asio::error::operation_aborted};
        if (!lease_.holds(std::chrono::steady_clock::now()))
        {
            publish();
            co_return std::tuple<error_code>{client_errc::checkpoint_lease_lost};
        }
        std::vector<std::string> a = {"EVAL", std::string(redis_feed_commit_script), "4", k_lease_, k_meta_, k_orders_,
                                      k_dead_, owner_, std::to_string(lease_.token())};
        std::vector<std::pair<std::string, std::string>> meta;
        if (c.initialise)
            meta.emplace_back("initialised", "1");
        if (c.horizon)
            meta.emplace_back("horizon", std::to_string(c.horizon->time_since_epoch().count()));
        if (c.watermark)
            meta.emplace_back("watermark", std::to_string(c.watermark->time_since_epoch().count()));
        if (c.last_lookback)
            meta.emplace_back("last_lookback", std::to_string(c.last_lookback->time_since_epoch().count()));
        a.push_back(std::to_string(meta.size()));
        for (auto& [f, v] : meta)
        {
            a.push_back(f);
            a.push_back(v);
        }
        a.push_back(std::to_string(c.upserts.size()));
        for (const auto& o : c.upserts)
        {
            a.push_back(o.id);
            a.push_back(redis_feed_encode(o));
        }
        // The horizon's pruning: the orders this watcher's copy holds below
        // it (the holder is the only writer).
        std::vector<std::string> gone;
        if (c.horizon)
            for (const auto& [id, o] : mirror_)
                if (o.created_at < *c.horizon &&
                    std::none_of(c.upserts.begin(), c.upserts.end(), [&](const auto& u) { return u.id == id; }))
                    gone.push_back(id);
        a.push_back(std::to_string(gone.size()));
        a.insert(a.end(), gone.begin(), gone.end());
        a.push_back(std::to_string(c.add_dead.size()));
        for (const auto& d : c.add_dead)
        {
            a.push_back(d.key);
            a.push_back(redis_feed_encode(d));
        }
        a.push_back(std::to_string(c.remove_dead.size()));
        a.insert(a.end(), c.remove_dead.begin(), c.remove_dead.end());
        auto r = co_await data_link_->async_command(std::move(a), resp_limits{}, boost::asio::use_awaitable);
        if (r.reply && r.reply->type == resp_value::kind::error && r.reply->str.rfind("FENCED", 0) == 0)
        {
            lease_.fenced();
            publish();
            co_return std::tuple<error_code>{client_errc::checkpoint_lease_lost};
        }
        if (!r.reply || r.reply->type != resp_value::kind::integer)
            co_return std::tuple<error_code>{fail(r)};
        feed_state tmp;
        tmp.orders = std::move(mirror_);
        apply_feed_commit(tmp, c);
        mirror_ = std::move(tmp.orders);
        ++commits_;
        co_return std::tuple<error_code>{error_code{}};
    }

    redis_feed_lease_status status() const
    {
        std::lock_guard<std::mutex> lk(mtx_);
        return status_;
    }

    bool lost() const noexcept { return lost_.load(std::memory_order_acquire); }

    std::chrono::milliseconds takeover_bound() const noexcept
    {
        return lease_.timing().ttl + lease_.timing().poll_every + redis_.command_timeout;
    }

private:
    error_code fail(const redis_command_result& r)
    {
        std::string why = r.why;
        if (r.reply)
            why = "an unexpected reply" + (r.reply->type == resp_value::kind::error ? ": " + r.reply->str.substr(0, 200) : std::string());
        {
            std::lock_guard<std::mutex> lk(mtx_);
            status_.last_error = why;
        }
        return r.reply ? client_errc::checkpoint_invalid : client_errc::checkpoint_unavailable;
    }

    template <class Each>
    boost::asio::awaitable<error_code> read_hash(const std::string& key, int count, Each each)
    {
        std::string cursor = "0";
        do
        {
            std::vector<std::string> page{"EVAL", std::string(redis_feed_page_script), "1", key, cursor, std::to_string(count)};
            auto r = co_await data_link_->async_command(std::move(page), resp_limits{}, boost::asio::use_awaitable);
            if (!r.reply || r.reply->type != resp_value::kind::array || r.reply->elements.size() != 2 ||
                r.reply->elements[1].type != resp_value::kind::bulk)
                co_return fail(r);
            cursor = r.reply->elements[0].str;
            boost::system::error_code ec;
            auto v = boost::json::parse(r.reply->elements[1].str, ec);
            if (ec || !(v.is_array() || (v.is_object() && v.as_object().empty())))
                co_return client_errc::checkpoint_invalid;
            if (v.is_array())
            {
                const auto& arr = v.as_array();
                if (arr.size() % 2)
                    co_return client_errc::checkpoint_invalid;
                for (std::size_t i = 0; i < arr.size(); i += 2)
                {
                    if (!arr[i].is_string() || !arr[i + 1].is_string() ||
                        !each(std::string(arr[i].as_string()), std::string_view(arr[i + 1].as_string())))
                        co_return client_errc::checkpoint_invalid;
                }
            }
        } while (cursor != "0");
        co_return error_code{};
    }

    // The lease's state, for other threads.
    void publish()
    {
        std::lock_guard<std::mutex> lk(mtx_);
        status_.held = lease_.state() == feed_lease::phase::held;
        status_.lost = lease_.state() == feed_lease::phase::lost;
        status_.token = lease_.token();
        status_.acquired_at = lease_.acquired_at();
        status_.holder_expiry = lease_.holder_expiry();
        lost_.store(status_.lost, std::memory_order_release);
    }

    boost::asio::awaitable<void> lease_loop()
    {
        auto self = shared_from_this();
        const std::string ttl = std::to_string(lease_.timing().ttl.count());
        while (!stopping_)
        {
            const auto now = std::chrono::steady_clock::now();
            lease_.holds(now);
            const auto c = lease_.due(now);
            if (c == feed_lease::call::none)
            {
                publish();
                if (lease_.state() == feed_lease::phase::lost)
                    break;
                timer_->expires_at(lease_.wake());
                co_await timer_->async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
                continue;
            }
            lease_.sending(c, now);
            std::vector<std::string> cmd;
            if (c == feed_lease::call::acquire)
                cmd = {"EVAL", std::string(redis_feed_acquire_script), "2", k_lease_, k_token_, owner_, ttl};
            else
                cmd = {"EVAL", std::string(redis_feed_renew_script), "1", k_lease_, owner_, std::to_string(lease_.token()), ttl};
            auto r = co_await lease_link_->async_command(std::move(cmd), resp_limits{}, boost::asio::use_awaitable);
            const auto at = std::chrono::steady_clock::now();
            std::int64_t a = 0, b = 0;
            const auto& v = r.reply;
            if (c == feed_lease::call::acquire && v && v->type == resp_value::kind::array && v->elements.size() == 2 &&
                redis_feed_integer(v->elements[0], a) && redis_feed_integer(v->elements[1], b))
            {
                if (a == 1 && b > 0)
                    lease_.acquired(b, at);
                else
                    lease_.busy(std::chrono::milliseconds(b), at);
            }
            else if (c == feed_lease::call::renew && v && v->type == resp_value::kind::integer)
            {
                if (v->integer == 1)
                    lease_.renewed();
                else
                    lease_.refused();
            }
            else
            {
                fail(r);
                misconfigured_ = !r.reply && r.misconfigured;
                lease_.failed(at);
                publish();
                continue;
            }
            misconfigured_ = false;
            {
                std::lock_guard<std::mutex> lk(mtx_);
                status_.last_error.clear();
            }
            publish();
        }
        // Stopped while holding: released, so that a standby takes over at its next poll.
        if (lease_.holds(std::chrono::steady_clock::now()))
        {
            std::vector<std::string> release{"EVAL", std::string(redis_feed_renew_script), "1", k_lease_, owner_,
                                             std::to_string(lease_.token()), "0"};
            auto r = co_await lease_link_->async_command(std::move(release), resp_limits{}, boost::asio::use_awaitable);
            if (!r.reply || r.reply->type != resp_value::kind::integer)
                release_error_ = fail(r);  // the lease runs out after its ttl instead
        }
        lease_link_->async_close();
        data_link_->async_close();
        loop_done_ = true;
        loop_end_->cancel();  // wakes async_close
    }

    redis_store_params redis_;
    redis_feed_lease_params lease_params_;
    feed_lease lease_;
    std::string owner_, k_lease_, k_token_, k_meta_, k_orders_, k_dead_;
    std::once_flag started_;
    std::optional<boost::asio::strand<boost::asio::any_io_executor>> strand_;
    std::optional<boost::asio::steady_timer> timer_;
    std::optional<boost::asio::steady_timer> loop_end_;  // async_close waits on it
    std::shared_ptr<redis_link> lease_link_, data_link_;
    std::map<std::string, feed_order_state> mirror_;  // the orders as committed (the holder's copy)
    std::size_t commits_ = 0;
    bool stopping_ = false;   // closed (async_close) or destroyed: the loop ends, calls are refused
    bool loop_done_ = false;  // the lease loop has ended (lease released, links closed)
    error_code release_error_;
    bool misconfigured_ = false;  // the last call failed on a refused configuration
    mutable std::mutex mtx_;
    redis_feed_lease_status status_;
    std::atomic<bool> lost_{false};
};

// Runs `make()` on the checkpoint's strand and completes `h` through its own
// executor (never inline) with the result; the handler's cancellation slot
// cancels the operation.
template <class Result, class Handler, class Make>
void redis_feed_spawn(const std::shared_ptr<redis_feed_shared>& s, boost::asio::any_io_executor ex, Handler h, Make make)
{
    auto slot = boost::asio::get_associated_cancellation_slot(h);
    boost::asio::co_spawn(s->strand(), std::move(make),
                          boost::asio::bind_cancellation_slot(
                              slot, [ex, h = std::move(h)](std::exception_ptr ep, Result r) mutable {
                                  if (ep)
                                      std::get<0>(r) = boost::asio::error::operation_aborted;
                                  // Through the handler's own executor (post uses it), never inline.
                                  std::apply(
                                      [&](auto&&... a) {
                                          boost::asio::post(ex, boost::asio::append(std::move(h), std::move(a)...));
                                      },
                                      std::move(r));
                              }));
}

DIGITAL_DELIVERY_DECL void redis_feed_close(const std::shared_ptr<redis_feed_shared>& s, boost::asio::any_io_executor ex,
                                            boost::asio::any_completion_handler<void(error_code)> h)
{
    if (!s->started())
    {
        // Never loaded: no lease, no connection.
        boost::asio::post(ex, boost::asio::append(std::move(h), error_code{}));
        return;
    }
    redis_feed_spawn<std::tuple<error_code>>(s, ex, std::move(h), [s] { return s->close(); });
}

}  // namespace detail

DIGITAL_DELIVERY_DECL redis_feed_checkpoint::redis_feed_checkpoint(redis_store_params redis, std::string consumer,
                                                                   redis_feed_lease_params lease)
    : s_(std::make_shared<detail::redis_feed_shared>(std::move(redis), std::move(consumer), std::move(lease)))
{
}

DIGITAL_DELIVERY_DECL redis_feed_checkpoint::~redis_feed_checkpoint() { s_->stop(); }

DIGITAL_DELIVERY_DECL void redis_feed_checkpoint::async_load(
    boost::asio::any_io_executor ex, boost::asio::any_completion_handler<void(error_code, feed_state)> h)
{
    s_->start(ex);
    detail::redis_feed_spawn<std::tuple<error_code, feed_state>>(s_, ex, std::move(h), [s = s_] { return s->load(); });
}

DIGITAL_DELIVERY_DECL void redis_feed_checkpoint::async_commit(boost::asio::any_io_executor ex, feed_commit c,
                                                               boost::asio::any_completion_handler<void(error_code)> h)
{
    s_->start(ex);
    detail::redis_feed_spawn<std::tuple<error_code>>(s_, ex, std::move(h),
                                                     [s = s_, c = std::move(c)]() mutable { return s->commit(std::move(c)); });
}

DIGITAL_DELIVERY_DECL error_code redis_feed_checkpoint::guard_error() const
{
    return s_->lost() ? error_code(client_errc::checkpoint_lease_lost) : error_code{};
}

DIGITAL_DELIVERY_DECL redis_feed_lease_status redis_feed_checkpoint::status() const { return s_->status(); }

DIGITAL_DELIVERY_DECL std::chrono::milliseconds redis_feed_checkpoint::takeover_bound() const noexcept
{
    return s_->takeover_bound();
}

}  // namespace digital_delivery

#endif
