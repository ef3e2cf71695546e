//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_RATE_LIMITER_IPP
#define DIGITAL_DELIVERY_IMPL_RATE_LIMITER_IPP

#include <digital_delivery/impl/rate_limit/rate_limiter.hpp>
#include <digital_delivery/impl/rate_limit/store_session.hpp>

#include <boost/asio/append.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/post.hpp>
#include <digital_delivery/detail/clock.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <random>
#include <unordered_map>
#include <vector>

namespace digital_delivery {
namespace detail {

// One per rate_limiter handle: the timer that wakes the scheduler when the
// head waiter belongs to this handle.
struct limiter_driver
{
    explicit limiter_driver(boost::asio::any_io_executor ex) : ex(ex), timer(ex) {}
    boost::asio::any_io_executor ex;
    detail::timer timer;
    std::uint64_t generation = 0;  // guarded by limiter_state::mtx
};

struct limiter_waiter
{
    boost::asio::any_completion_handler<void(error_code)> handler;
    std::shared_ptr<limiter_driver> driver;
};

// A completion decided under the lock, delivered after it.
struct limiter_completion
{
    boost::asio::any_completion_handler<void(error_code)> handler;
    boost::asio::any_io_executor ex;
    error_code ec;
};

struct limiter_batch
{
    std::vector<limiter_completion> completions;
    std::vector<throttle_event> events;
    std::function<void(const throttle_event&)> hook;
    std::vector<std::weak_ptr<observer>> observers;
    std::function<void()> store_call;  // a store exchange to start (outside the lock)

    void deliver()
    {
        if (store_call)
            store_call();
        for (auto& c : completions)
            boost::asio::post(c.ex, boost::asio::append(std::move(c.handler), c.ec));
        if (hook)
            for (auto& e : events)
                hook(e);
        for (auto& w : observers)
            if (auto o = w.lock())
                for (auto& e : events)
                    o->on_throttle(e);
    }
};

inline scheduler_config to_config(const limiter_settings& p)
{
    scheduler_config c;
    c.capacity = p.capacity;
    c.window = p.window;
    c.aging_interval = std::chrono::duration_cast<std::chrono::steady_clock::duration>(p.aging_interval);
    c.max_retry_after = std::chrono::duration_cast<std::chrono::steady_clock::duration>(p.max_retry_after);
    c.hold_refill_until_response = p.hold_refill_until_response;
    c.probe_first = p.probe_first;
    c.background_share = std::isnan(p.background_share) ? 0.25 : std::clamp(p.background_share, 0.0, 1.0);
    return c;
}

inline void unregister_limiter(const registry_key& key) noexcept;

struct limiter_state : std::enable_shared_from_this<limiter_state>
{
    using clock = detail::clock;

    limiter_state(const rate_limit_params& p, rate_limiter::clock_fn c)
        : params(p), now_fn(std::move(c)), core(to_config(params), now()), hook(p.on_throttle)
    {
    }
    ~limiter_state()
    {
        if (registered)
            unregister_limiter(key);
    }
    limiter_state(const limiter_state&) = delete;
    limiter_state& operator=(const limiter_state&) = delete;

    registry_key key;          // its registry entry's key, when registered
    bool registered = false;   // false: a private bucket, not in the registry
    std::shared_ptr<store_session> store;  // the shared store; null: in-process
    clock::time_point store_retry_at{};
    bool store_reported_down = false;
    bool store_misconfigured = false;  // store_reported_down: it refused the configuration
    std::string store_why;             // store_reported_down: the last event's message

    clock::time_point now() const { return now_fn ? now_fn() : clock::now(); }

    limiter_settings params;
    rate_limiter::clock_fn now_fn;
    mutable std::mutex mtx;
    scheduler_core core;
    std::unordered_map<std::uint64_t, limiter_waiter> waiters;
    std::uint64_t next_id = 1;
    std::weak_ptr<limiter_driver> armed;
    std::optional<clock::time_point> armed_at;
    std::function<void(const throttle_event&)> hook;
    std::vector<std::weak_ptr<observer>> observers;
    std::vector<scheduler_core::outcome> scratch;

    // --- everything below runs with mtx held ---

    // Connects to the shared store (or retries, on the fallback bucket).
    void connect_store(clock::time_point now, limiter_batch& b)
    {
        if (!store || core.uses_shared_source() || now < store_retry_at || store->in_flight())
            return;
        store_retry_at = now + std::chrono::duration_cast<clock::duration>(params.store_retry_interval);
        store_session::exchange call;
        store->fallback_spent(core.local_taken());
        const auto status = store->connect(now, call);
        send_exchange(std::move(call), b);
        if (status && status->up)
            store_up(store->source(), now, b);
        else if (status)
            store_down(std::move(*status), now, b);
    }

    void store_up(std::shared_ptr<points_source> src, clock::time_point now, limiter_batch& b)
    {
        core.use_source(std::move(src));
        if (!store_reported_down)
            return;
        store_reported_down = false;
        store_misconfigured = false;
        throttle_event e;
        e.what = throttle_event::kind::store_restored;
        e.until = now;
        e.waiting = core.queued();
        b.events.push_back(std::move(e));
        b.hook = hook;
        b.observers = observers;
    }

    // An outage is reported once; a refused configuration at every retry
    // (it will not heal by itself), and a change between the two too.
    void store_down(store_status status, clock::time_point now, limiter_batch& b)
    {
        core.use_source(nullptr);
        store_retry_at = now + std::chrono::duration_cast<clock::duration>(params.store_retry_interval);
        if (store_reported_down && !status.misconfigured && !store_misconfigured)
            return;
        if (!store_reported_down)
            core.local_bucket().set_capacity(fallback_capacity(), now);
        store_reported_down = true;
        store_misconfigured = status.misconfigured;
        store_why = status.why;
        b.events.push_back(store_event(now));
        b.hook = hook;
        b.observers = observers;
    }

    // fallback_share of the capacity, and no more than 1 / (the processes the
    // store counted at its last answer): the fleet's fallback buckets then
    // hold one capacity together. Never below one point (a GET).
    double fallback_capacity() const
    {
        double share = std::clamp(params.fallback_share, 0.0, 1.0);
        if (const std::size_t alive = store->processes_alive(); alive > 0)
            share = std::min(share, 1.0 / static_cast<double>(alive));
        return std::max(params.capacity * share, 1.0);
    }

    // What the fallback says while it serves (store_reported_down).
    throttle_event store_event(clock::time_point now) const
    {
        throttle_event e;
        e.what = store_misconfigured ? throttle_event::kind::store_misconfigured : throttle_event::kind::store_unavailable;
        e.until = now;
        e.waiting = core.queued();
        e.message = store_why;
        return e;
    }

    // An asynchronous store: sends what the bucket has to say (one exchange
    // in flight at most).
    void pump(clock::time_point now, limiter_batch& b)
    {
        if (!store || !core.uses_shared_source())
            return;
        store_session::exchange call;
        store->fallback_spent(core.local_taken());
        store->after_poll(now, call);
        send_exchange(std::move(call), b);
    }

    void send_exchange(store_session::exchange call, limiter_batch& b)
    {
        if (!call)
            return;
        b.store_call = [call = std::move(call), ws = weak_from_this()]() {
            call([ws](store_session::outcome o) {
                if (auto s = ws.lock())
                    s->on_exchange(std::move(o));
            });
        };
    }

    void on_exchange(store_session::outcome o)
    {
        limiter_batch b;
        {
            std::lock_guard<std::mutex> lk(mtx);
            const auto t = now();
            core.source_changed();  // a reply or a fallback: the estimates moved
            auto status = o(t);
            if (status.up)
            {
                if (!core.uses_shared_source())
                    store_up(store->source(), t, b);
            }
            else
                store_down(std::move(status), t, b);
            process(t, b);
        }
        b.deliver();
    }

    void finish(std::uint64_t id, error_code ec, limiter_batch& b)
    {
        auto it = waiters.find(id);
        if (it == waiters.end())
            return;
        auto ex = it->second.driver->ex;
        b.completions.push_back({std::move(it->second.handler), std::move(ex), ec});
        waiters.erase(it);
    }

    void note_resumed(clock::time_point now, limiter_batch& b)
    {
        if (core.take_resumed(now))
        {
            throttle_event e;
            e.what = throttle_event::kind::resumed;
            e.until = now;
            e.waiting = core.queued();
            b.events.push_back(e);
            b.hook = hook;
            b.observers = observers;
        }
    }

    // Grants/fails what the core says, then re-arms one timer for the head.
    void process(clock::time_point now, limiter_batch& b)
    {
        connect_store(now, b);
        scratch.clear();
        if (store)
            store->before_poll();  // the poll decides the head's want afresh
        core.poll(now, scratch);
        for (const auto& o : scratch)
            finish(o.id, o.granted ? error_code() : make_error_code(client_errc::rate_limit_wait_exceeds_deadline), b);
        note_resumed(now, b);
        pump(now, b);
        rearm(now);
    }

    void rearm(clock::time_point now)
    {
        auto wake = core.next_wake(now);
        if (wake && store && core.uses_shared_source() && store->in_flight())
            wake.reset();  // the reply re-runs the scheduler
        if (wake && store && !core.uses_shared_source())
            wake = std::min(*wake, std::max(store_retry_at, now));  // waiters retry the store too
        auto current = armed.lock();
        if (!wake)
        {
            if (current)
            {
                ++current->generation;
                current->timer.cancel();
            }
            armed.reset();
            armed_at.reset();
            return;
        }
        auto head = core.head();
        auto it = waiters.find(*head);
        if (it == waiters.end())
            return;  // cannot happen: every queued id has a waiter
        const auto& d = it->second.driver;
        if (current == d && armed_at == wake)
            return;
        if (current && current != d)
        {
            ++current->generation;
            current->timer.cancel();
        }
        arm(d, *wake, now);
    }

    void arm(const std::shared_ptr<limiter_driver>& d, clock::time_point wake, clock::time_point now)
    {
        const std::uint64_t gen = ++d->generation;
        armed = d;
        armed_at = wake;
        d->timer.expires_after(wake > now ? wake - now : clock::duration::zero());
        d->timer.async_wait([ws = weak_from_this(), wd = std::weak_ptr<limiter_driver>(d), gen](error_code) {
            auto s = ws.lock();
            auto drv = wd.lock();
            if (!s || !drv)
                return;
            limiter_batch b;
            {
                std::lock_guard<std::mutex> lk(s->mtx);
                if (drv->generation != gen)
                    return;  // re-armed or cancelled since
                s->armed.reset();
                s->armed_at.reset();
                s->process(s->now(), b);
            }
            b.deliver();
        });
    }

    void cancel_waiter(std::uint64_t id)
    {
        limiter_batch b;
        {
            std::lock_guard<std::mutex> lk(mtx);
            if (!core.cancel(id))
                return;
            finish(id, boost::asio::error::operation_aborted, b);
            process(now(), b);
        }
        b.deliver();
    }
};

struct limiter_registry
{
    std::mutex mtx;
    struct hash
    {
        std::size_t operator()(const registry_key& k) const noexcept { return static_cast<std::size_t>(k.a ^ (k.b * 31)); }
    };
    std::unordered_map<registry_key, std::weak_ptr<limiter_state>, hash> map;
};

// Never destroyed: a bucket owned by a static client may die after main().
inline limiter_registry& get_limiter_registry()
{
    static limiter_registry* r = new limiter_registry;
    return *r;
}

// A registered bucket removes its own entry when it dies, so constructing a
// client costs O(1) (the registry never holds dead entries to sweep). The
// entry may already name a newer bucket of the same key, created between our
// last handle going away and this destructor: then it stays.
inline void unregister_limiter(const registry_key& key) noexcept
{
    auto& reg = get_limiter_registry();
    std::lock_guard<std::mutex> lk(reg.mtx);
    auto it = reg.map.find(key);
    if (it != reg.map.end() && it->second.expired())
        reg.map.erase(it);
}

inline std::uint64_t fnv1a(std::string_view s, std::uint64_t seed) noexcept
{
    std::uint64_t h = 14695981039346656037ull ^ seed;
    for (unsigned char c : s)
    {
        h ^= c;
        h *= 1099511628211ull;
    }
    // final avalanche (splitmix64)
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    return h;
}


DIGITAL_DELIVERY_DECL rate_limiter::rate_limiter(executor_type ex, const rate_limit_params& params, clock_fn now)
    : ex_(ex),
      state_(std::make_shared<detail::limiter_state>(params, std::move(now))),
      driver_(std::make_shared<detail::limiter_driver>(ex))
{
}

DIGITAL_DELIVERY_DECL rate_limiter::rate_limiter(executor_type ex, std::shared_ptr<detail::limiter_state> st)
    : ex_(ex), state_(std::move(st)), driver_(std::make_shared<detail::limiter_driver>(ex))
{
}

DIGITAL_DELIVERY_DECL rate_limiter::~rate_limiter()
{
    // Waiters of this handle keep its driver (and timer) alive until they
    // complete; nothing to cancel here.
}

DIGITAL_DELIVERY_DECL void rate_limiter::acquire_impl(
    int cost,
    priority prio,
    std::optional<clock::time_point> deadline,
    boost::asio::any_completion_handler<completion_signature> handler
)
{
    auto& st = *state_;
    if (!st.params.enabled)
    {
        boost::asio::post(ex_, boost::asio::append(std::move(handler), error_code()));
        return;
    }
    detail::limiter_batch b;  // stays empty (no allocation) on the immediate paths
    error_code immediate;
    bool complete_now = false;
    {
        std::lock_guard<std::mutex> lk(st.mtx);
        const auto now = st.now();
        st.connect_store(now, b);
        const std::uint64_t id = st.next_id++;
        switch (st.core.acquire(id, cost, prio, deadline, now))
        {
        case detail::scheduler_core::acquire_status::granted:
            complete_now = true;
            st.note_resumed(now, b);
            break;
        case detail::scheduler_core::acquire_status::deadline_unreachable:
            complete_now = true;
            immediate = make_error_code(client_errc::rate_limit_wait_exceeds_deadline);
            break;
        case detail::scheduler_core::acquire_status::queued:
        {
            auto slot = boost::asio::get_associated_cancellation_slot(handler);
            if (slot.is_connected())
            {
                slot.assign([ws = std::weak_ptr<detail::limiter_state>(state_), id](boost::asio::cancellation_type t) {
                    using ct = boost::asio::cancellation_type;
                    if ((t & (ct::terminal | ct::partial | ct::total)) == ct::none)
                        return;
                    if (auto s = ws.lock())
                        s->cancel_waiter(id);
                });
            }
            st.waiters.emplace(id, detail::limiter_waiter{std::move(handler), driver_});
            st.process(now, b);
            break;
        }
        }
    }
    if (complete_now)
        boost::asio::post(ex_, boost::asio::append(std::move(handler), immediate));
    b.deliver();
}

DIGITAL_DELIVERY_DECL bool rate_limiter::try_acquire(int cost, priority prio)
{
    auto& st = *state_;
    if (!st.params.enabled)
        return true;
    detail::limiter_batch b;
    bool granted = false;
    {
        std::lock_guard<std::mutex> lk(st.mtx);
        const auto now = st.now();
        st.connect_store(now, b);
        granted = st.core.try_grant(cost, prio, now);
        if (granted)
            st.note_resumed(now, b);
    }
    b.deliver();
    return granted;
}

DIGITAL_DELIVERY_DECL void rate_limiter::observe_response(const detail::response_facts& facts)
{
    observe_response(facts, state_->now());
}

DIGITAL_DELIVERY_DECL void rate_limiter::observe_response(
    const http_headers& headers,
    unsigned status,
    clock::time_point now,
    std::chrono::system_clock::time_point sys_now
)
{
    observe_response(detail::read_response_facts(headers, status, sys_now), now);
}

DIGITAL_DELIVERY_DECL void rate_limiter::observe_response(const detail::response_facts& facts, clock::time_point now)
{
    auto& st = *state_;
    detail::limiter_batch b;
    {
        std::lock_guard<std::mutex> lk(st.mtx);
        if (facts.status == 429 && st.params.enabled)
        {
            std::optional<clock::duration> d;
            if (facts.retry_after)
                d = std::chrono::duration_cast<clock::duration>(*facts.retry_after);
            if (auto end = st.core.on_rate_limited(d, now))
            {
                throttle_event e;
                e.what = throttle_event::kind::paused;
                e.until = *end;
                e.retry_after = std::chrono::ceil<std::chrono::milliseconds>(*end - now);
                e.waiting = st.core.queued();
                b.events.push_back(e);
                b.hook = st.hook;
                b.observers = st.observers;
            }
        }
        st.core.on_response(now);
        if (st.params.follow_server_headers && facts.rate_limit)
            st.core.observe(*facts.rate_limit, now);
        if (facts.status == 0)
            st.core.on_unanswered();
        else if (facts.status != 429)
            st.core.on_answer(now);
        st.process(now, b);
    }
    b.deliver();
}

DIGITAL_DELIVERY_DECL void rate_limiter::refund(int cost)
{
    auto& st = *state_;
    detail::limiter_batch b;
    {
        std::lock_guard<std::mutex> lk(st.mtx);
        const auto now = st.now();
        st.core.refund(cost, now);
        st.process(now, b);
    }
    b.deliver();
}

DIGITAL_DELIVERY_DECL void rate_limiter::not_charged(int cost)
{
    auto& st = *state_;
    std::lock_guard<std::mutex> lk(st.mtx);
    st.core.not_charged(cost);
}

DIGITAL_DELIVERY_DECL rate_limit_snapshot rate_limiter::snapshot() const
{
    auto& st = *state_;
    std::lock_guard<std::mutex> lk(st.mtx);
    auto s = st.core.snapshot(st.now(), detail::clock::system_now());
    if (st.store)
    {
        s.store = !st.store_reported_down ? rate_limit_store_state::serving
                  : st.store_misconfigured ? rate_limit_store_state::misconfigured
                                           : rate_limit_store_state::unavailable;
        if (st.store_reported_down)
            s.store_message = st.store_why;
    }
    return s;
}

DIGITAL_DELIVERY_DECL void rate_limiter::set_throttle_hook(std::function<void(const throttle_event&)> hook)
{
    std::lock_guard<std::mutex> lk(state_->mtx);
    state_->hook = std::move(hook);
}

DIGITAL_DELIVERY_DECL void rate_limiter::add_throttle_observer(std::weak_ptr<observer> o)
{
    // An observer that comes while the fallback serves (a store refused at
    // the bucket's creation, before any client could listen) hears so.
    std::optional<throttle_event> down;
    {
        auto& st = *state_;
        std::lock_guard<std::mutex> lk(st.mtx);
        auto& v = st.observers;
        std::erase_if(v, [](const std::weak_ptr<observer>& w) { return w.expired(); });
        v.push_back(o);
        if (st.store_reported_down)
            down = st.store_event(st.now());
    }
    if (down)
        if (auto obs = o.lock())
            obs->on_throttle(*down);
}

DIGITAL_DELIVERY_DECL void rate_limiter::wake()
{
    auto& st = *state_;
    detail::limiter_batch b;
    {
        std::lock_guard<std::mutex> lk(st.mtx);
        st.process(st.now(), b);
    }
    b.deliver();
}

DIGITAL_DELIVERY_DECL std::size_t rate_limiter::waiting() const
{
    std::lock_guard<std::mutex> lk(state_->mtx);
    return state_->core.queued();
}

DIGITAL_DELIVERY_DECL double rate_limiter::reserved() const
{
    std::lock_guard<std::mutex> lk(state_->mtx);
    return state_->core.reserved();
}

DIGITAL_DELIVERY_DECL const limiter_settings& rate_limiter::params() const noexcept { return state_->params; }

DIGITAL_DELIVERY_DECL std::string normalise_base_url(std::string_view base_url)
{
    // Lower-case scheme and authority, drop trailing slashes.
    std::string url(base_url);
    while (!url.empty() && url.back() == '/')
        url.pop_back();
    const auto scheme_end = url.find("://");
    const auto host_end = scheme_end == std::string::npos ? std::string::npos : url.find('/', scheme_end + 3);
    for (std::size_t i = 0; i < url.size() && i < host_end; ++i)
        url[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(url[i])));
    return url;
}

DIGITAL_DELIVERY_DECL registry_key rate_limiter_registry_key(std::string_view base_url, std::string_view api_key)
{
    static const std::pair<std::uint64_t, std::uint64_t> salt = [] {
        std::random_device rd;
        return std::pair<std::uint64_t, std::uint64_t>((std::uint64_t(rd()) << 32) ^ rd(), (std::uint64_t(rd()) << 32) ^ rd());
    }();
    // The URL, a separator no URL holds, the key: distinct pairs hash apart.
    std::string text = normalise_base_url(base_url);
    text += '\0';
    text += api_key;
    registry_key k{detail::fnv1a(text, salt.first), detail::fnv1a(text, salt.second)};
    std::fill(text.begin(), text.end(), '\0');  // the key does not linger in freed memory
    return k;
}

DIGITAL_DELIVERY_DECL std::size_t limiter_registry_size()
{
    auto& reg = detail::get_limiter_registry();
    std::lock_guard<std::mutex> lk(reg.mtx);
    return reg.map.size();
}

// A bucket with params.store attached (not registered).
inline std::shared_ptr<limiter_state> make_store_bucket(
    const rate_limiter::executor_type& ex,
    std::string_view base_url,
    std::string_view api_key,
    const rate_limit_params& params,
    limiter_batch& b
)
{
    auto st = std::make_shared<detail::limiter_state>(params, rate_limiter::clock_fn{});
    if (params.enabled && params.store.shared())
    {
        const std::string url = normalise_base_url(base_url);
        std::lock_guard<std::mutex> lk(st->mtx);
        const auto now = st->now();
        st->store = params.store.open(
            store_bucket{ex, url, api_key, params.capacity, params.window, params.hold_refill_until_response, now});
        st->connect_store(now, b);
    }
    return st;
}

DIGITAL_DELIVERY_DECL std::shared_ptr<rate_limiter> shared_rate_limiter(
    rate_limiter::executor_type ex,
    std::string_view base_url,
    std::string_view api_key,
    const rate_limit_params& params
)
{
    const registry_key key = rate_limiter_registry_key(base_url, api_key);
    auto& reg = detail::get_limiter_registry();
    std::shared_ptr<detail::limiter_state> st;
    detail::limiter_batch b;
    {
        std::lock_guard<std::mutex> lk(reg.mtx);
        auto& slot = reg.map[key];
        st = slot.lock();
        if (!st)
        {
            st = make_store_bucket(ex, base_url, api_key, params, b);
            st->key = key;
            st->registered = true;
            slot = st;
        }
    }
    b.deliver();
    return std::make_shared<rate_limiter>(std::move(ex), std::move(st));
}

DIGITAL_DELIVERY_DECL std::shared_ptr<rate_limiter> unshared_rate_limiter(
    rate_limiter::executor_type ex,
    std::string_view base_url,
    std::string_view api_key,
    const rate_limit_params& params
)
{
    detail::limiter_batch b;
    auto st = make_store_bucket(ex, base_url, api_key, params, b);
    b.deliver();
    return std::make_shared<rate_limiter>(std::move(ex), std::move(st));
}

}  // namespace detail
}  // namespace digital_delivery

#endif
