//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
//
#ifndef DIGITAL_DELIVERY_DETAIL_JSON_MAPPING_HPP
#define DIGITAL_DELIVERY_DETAIL_JSON_MAPPING_HPP

// Tolerant, describe-driven JSON <-> model mapping. Boost.JSON 1.81's
// automatic struct conversion rejects unknown keys and missing optionals; the
// API's Beta endpoints add fields without notice, so we map ourselves:
//  - unknown keys are ignored;
//  - a missing or null std::optional member is empty;
//  - a missing required member, or a value of the wrong type, fails with
//    client_errc::missing_field / wrong_type / invalid_timestamp and a message
//    naming the JSON path ("orders[3].download_count: expected an integer").
// Encoding writes only the optional members that are set (PATCH semantics).

#include <digital_delivery/error.hpp>
#include <digital_delivery/http_message.hpp>
#include <digital_delivery/open_enum.hpp>
#include <digital_delivery/timestamp.hpp>

#include <boost/describe/members.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/string.hpp>
#include <boost/json/value.hpp>
#include <boost/mp11/algorithm.hpp>

#include <chrono>
#include <concepts>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace digital_delivery {
namespace detail {

template <class T>
struct is_optional : std::false_type
{
};
template <class T>
struct is_optional<std::optional<T>> : std::true_type
{
};

template <class T>
struct is_open_enum : std::false_type
{
};
template <class E>
struct is_open_enum<open_enum<E>> : std::true_type
{
};

template <class T>
concept described_struct = boost::describe::has_describe_members<T>::value && std::is_class_v<T>;

template <class T>
concept described_enum = boost::describe::has_describe_enumerators<T>::value;

template <class T>
concept json_integer = std::integral<T> && !std::same_as<T, bool> && !std::same_as<T, char>;

/// The path being decoded, kept as a stack of static keys and indices; the
/// printable path is only built when a failure is recorded.
class decode_context
{
public:
    // Room for a typical document's depth up front: one allocation per
    // decode instead of one per growth step.
    decode_context() { stack_.reserve(16); }

    void push(std::string_view key) { stack_.push_back({key, 0, false}); }
    void push(std::size_t index) { stack_.push_back({{}, index, true}); }
    void pop() noexcept { stack_.pop_back(); }

    /// Records the failure (the first one wins) and returns false.
    bool fail(client_errc e, std::string_view why)
    {
        if (!ec)
        {
            ec = e;
            message = path();
            if (message.empty())
                message = "(root)";
            message += ": ";
            message += why;
        }
        return false;
    }

    std::string path() const
    {
        std::string r;
        for (const auto& s : stack_)
        {
            if (s.is_index)
            {
                r += '[';
                r += std::to_string(s.index);
                r += ']';
            }
            else
            {
                if (!r.empty())
                    r += '.';
                r += s.key;
            }
        }
        return r;
    }

    error_code ec;
    std::string message;

private:
    struct seg
    {
        std::string_view key;
        std::size_t index;
        bool is_index;
    };
    std::vector<seg> stack_;
};

// ---- decoding --------------------------------------------------------------

/// Scratch memory for decoding a response body: one buffer per thread,
/// reused across responses (decoding is synchronous and calls no user code,
/// so a thread never needs two at once; a nested use falls back to a private
/// buffer). Sized from the body length (a Boost.JSON DOM takes ~1-2x the
/// text); larger DOMs spill into the default allocator. At most about
/// 2 * decode_arena_max_kept bytes (4 MiB) stay allocated per thread between
/// responses (bodies above 2 MiB use that much and spill the rest).
inline constexpr std::size_t decode_arena_stack = 8 * 1024;  // the parser's value stack
inline constexpr std::size_t decode_arena_max_kept = 2 * 1024 * 1024;

class decode_arena_lease
{
public:
    explicit decode_arena_lease(std::size_t body_size)
    {
        const std::size_t want = decode_arena_stack + 2048 + (body_size < decode_arena_max_kept ? body_size * 2 : decode_arena_max_kept * 2);
        state& st = tls();
        if (!st.in_use && want <= decode_arena_stack + 2048 + decode_arena_max_kept * 2)
        {
            if (st.size < want)
            {
                st.buf.reset();
                st.buf.reset(new unsigned char[want]);
                st.size = want;
            }
            st.in_use = true;
            shared_ = &st;
            data_ = st.buf.get();
            size_ = st.size;
        }
        else
        {
            own_.reset(new unsigned char[want]);
            data_ = own_.get();
            size_ = want;
        }
    }
    ~decode_arena_lease()
    {
        if (shared_)
        {
            shared_->in_use = false;
            if (shared_->size > decode_arena_stack + 2048 + decode_arena_max_kept * 2)
            {
                shared_->buf.reset();
                shared_->size = 0;
            }
        }
    }
    decode_arena_lease(const decode_arena_lease&) = delete;
    decode_arena_lease& operator=(const decode_arena_lease&) = delete;

    unsigned char* stack() const noexcept { return data_; }
    std::size_t stack_size() const noexcept { return decode_arena_stack; }
    unsigned char* dom() const noexcept { return data_ + decode_arena_stack; }
    std::size_t dom_size() const noexcept { return size_ - decode_arena_stack; }

private:
    struct state
    {
        std::unique_ptr<unsigned char[]> buf;
        std::size_t size = 0;
        bool in_use = false;
    };
    static state& tls() noexcept
    {
        thread_local state s;
        return s;
    }
    state* shared_ = nullptr;
    std::unique_ptr<unsigned char[]> own_;
    unsigned char* data_ = nullptr;
    std::size_t size_ = 0;
};

inline bool decode_value(const boost::json::value& v, std::string& out, decode_context& ctx)
{
    const auto* s = v.if_string();
    if (!s)
        return ctx.fail(client_errc::wrong_type, "expected a string");
    out.assign(s->data(), s->size());
    return true;
}

inline bool decode_value(const boost::json::value& v, bool& out, decode_context& ctx)
{
    const auto* b = v.if_bool();
    if (!b)
        return ctx.fail(client_errc::wrong_type, "expected a boolean");
    out = *b;
    return true;
}

template <json_integer I>
bool decode_value(const boost::json::value& v, I& out, decode_context& ctx)
{
    using lim = std::numeric_limits<I>;
    if (const auto* i = v.if_int64())
    {
        if constexpr (std::is_signed_v<I>)
        {
            if (*i < static_cast<std::int64_t>(lim::min()) || *i > static_cast<std::int64_t>(lim::max()))
                return ctx.fail(client_errc::wrong_type, "integer out of range");
        }
        else
        {
            if (*i < 0 || static_cast<std::uint64_t>(*i) > static_cast<std::uint64_t>(lim::max()))
                return ctx.fail(client_errc::wrong_type, "integer out of range");
        }
        out = static_cast<I>(*i);
        return true;
    }
    if (const auto* u = v.if_uint64())
    {
        if (*u > static_cast<std::uint64_t>(lim::max()))
            return ctx.fail(client_errc::wrong_type, "integer out of range");
        out = static_cast<I>(*u);
        return true;
    }
    if (const auto* d = v.if_double())
    {
        // 1e3 is an integer written as a double; 1.5 is not.
        const double x = *d;
        if (x == static_cast<double>(static_cast<std::int64_t>(x)) && x >= static_cast<double>(lim::min()) &&
            x <= static_cast<double>(lim::max()))
        {
            out = static_cast<I>(x);
            return true;
        }
        return ctx.fail(client_errc::wrong_type, "expected an integer");
    }
    return ctx.fail(client_errc::wrong_type, "expected an integer");
}

inline bool decode_value(const boost::json::value& v, timestamp& out, decode_context& ctx)
{
    const auto* s = v.if_string();
    if (!s)
        return ctx.fail(client_errc::wrong_type, "expected an ISO 8601 timestamp string");
    auto t = parse_timestamp(std::string_view(s->data(), s->size()));
    if (!t)
        return ctx.fail(client_errc::invalid_timestamp, "not an ISO 8601 timestamp with offset");
    out = *t;
    return true;
}

template <class E>
bool decode_value(const boost::json::value& v, open_enum<E>& out, decode_context& ctx)
{
    const auto* s = v.if_string();
    if (!s)
        return ctx.fail(client_errc::wrong_type, "expected a string");
    out = open_enum<E>::from_string(std::string_view(s->data(), s->size()));
    return true;
}

inline bool decode_value(const boost::json::value& v, http_headers& out, decode_context& ctx)
{
    const auto* o = v.if_object();
    if (!o)
        return ctx.fail(client_errc::wrong_type, "expected an object of header fields");
    out.clear();
    for (const auto& kv : *o)
    {
        const auto* s = kv.value().if_string();
        if (!s)
        {
            ctx.push(std::string_view(kv.key().data(), kv.key().size()));
            return ctx.fail(client_errc::wrong_type, "expected a string header value");
        }
        out.add(std::string_view(kv.key().data(), kv.key().size()), std::string_view(s->data(), s->size()));
    }
    return true;
}

inline bool decode_value(const boost::json::value& v, boost::json::value& out, decode_context&)
{
    out = v;
    return true;
}

template <class T>
bool decode_value(const boost::json::value& v, std::optional<T>& out, decode_context& ctx);
template <class T>
bool decode_value(const boost::json::value& v, std::vector<T>& out, decode_context& ctx);
template <described_struct T>
bool decode_value(const boost::json::value& v, T& out, decode_context& ctx);

template <class T>
bool decode_value(const boost::json::value& v, std::optional<T>& out, decode_context& ctx)
{
    if (v.is_null())
    {
        out.reset();
        return true;
    }
    return decode_value(v, out.emplace(), ctx);
}

template <class T>
bool decode_value(const boost::json::value& v, std::vector<T>& out, decode_context& ctx)
{
    const auto* a = v.if_array();
    if (!a)
        return ctx.fail(client_errc::wrong_type, "expected an array");
    out.clear();
    out.resize(a->size());
    for (std::size_t i = 0; i < a->size(); ++i)
    {
        ctx.push(i);
        if (!decode_value((*a)[i], out[i], ctx))
            return false;
        ctx.pop();
    }
    return true;
}

template <described_struct T>
bool decode_value(const boost::json::value& v, T& out, decode_context& ctx)
{
    const auto* o = v.if_object();
    if (!o)
        return ctx.fail(client_errc::wrong_type, "expected an object");
    bool ok = true;
    // Keys usually arrive in declaration order: try the entry after the last
    // match first, then look the key up.
    const boost::json::key_value_pair* const first = o->begin();
    const std::size_t count = o->size();
    std::size_t cursor = 0;
    using members = boost::describe::describe_members<T, boost::describe::mod_public>;
    boost::mp11::mp_for_each<members>([&](auto d) {
        if (!ok)
            return;
        using member_t = std::remove_cvref_t<decltype(out.*d.pointer)>;
        const std::string_view name(d.name);
        const boost::json::key_value_pair* it;
        if (cursor < count && first[cursor].key() == name)
            it = first + cursor;
        else
            it = o->find(name);
        if (it == o->end())
        {
            if constexpr (is_optional<member_t>::value)
            {
                (out.*d.pointer).reset();
            }
            else
            {
                ctx.push(std::string_view(d.name));
                ok = ctx.fail(client_errc::missing_field, "required field is missing");
            }
            return;
        }
        cursor = static_cast<std::size_t>(it - first) + 1;
        ctx.push(name);
        ok = decode_value(it->value(), out.*d.pointer, ctx);
        if (ok)
            ctx.pop();
    });
    return ok;
}

// ---- encoding (request bodies) ----------------------------------------------

inline void encode_value(boost::json::value& out, const std::string& s) { out = boost::json::string(s); }
inline void encode_value(boost::json::value& out, bool b) { out = b; }
template <json_integer I>
void encode_value(boost::json::value& out, I i)
{
    if constexpr (std::is_signed_v<I>)
        out = static_cast<std::int64_t>(i);
    else
        out = static_cast<std::uint64_t>(i);
}
inline void encode_value(boost::json::value& out, timestamp t) { out = boost::json::string(format_timestamp(t)); }
inline void encode_value(boost::json::value& out, const date& d) { out = boost::json::string(format_date(d)); }
template <described_enum E>
void encode_value(boost::json::value& out, E e)
{
    out = boost::json::string(enum_to_string(e));
}
template <class E>
void encode_value(boost::json::value& out, const open_enum<E>& e)
{
    out = boost::json::string(e.str());
}
template <class T>
void encode_value(boost::json::value& out, const std::vector<T>& v);
template <described_struct T>
void encode_value(boost::json::value& out, const T& t);

template <class T>
void encode_value(boost::json::value& out, const std::vector<T>& v)
{
    auto& a = out.emplace_array();
    a.reserve(v.size());
    for (const auto& e : v)
    {
        boost::json::value x;
        encode_value(x, e);
        a.push_back(std::move(x));
    }
}

template <described_struct T>
void encode_value(boost::json::value& out, const T& t)
{
    auto& o = out.emplace_object();
    using members = boost::describe::describe_members<T, boost::describe::mod_public>;
    boost::mp11::mp_for_each<members>([&](auto d) {
        const auto& m = t.*d.pointer;
        using member_t = std::remove_cvref_t<decltype(m)>;
        if constexpr (is_optional<member_t>::value)
        {
            if (!m)
                return;  // PATCH semantics: unset fields are not sent
            encode_value(o[d.name], *m);
        }
        else
        {
            encode_value(o[d.name], m);
        }
    });
}

// ---- query strings ------------------------------------------------------------

/// Query parameters in declaration order: name and unencoded value.
using query_params = std::vector<std::pair<std::string_view, std::string>>;

inline std::string to_query_value(const std::string& s) { return s; }
inline std::string to_query_value(bool b) { return b ? "true" : "false"; }
template <json_integer I>
std::string to_query_value(I i)
{
    return std::to_string(i);
}
inline std::string to_query_value(const date& d) { return format_date(d); }
template <described_enum E>
std::string to_query_value(E e)
{
    return std::string(enum_to_string(e));
}

template <described_struct Q>
void encode_query(const Q& q, query_params& out)
{
    using members = boost::describe::describe_members<Q, boost::describe::mod_public>;
    boost::mp11::mp_for_each<members>([&](auto d) {
        const auto& m = q.*d.pointer;
        using member_t = std::remove_cvref_t<decltype(m)>;
        if constexpr (is_optional<member_t>::value)
        {
            if (m)
                out.emplace_back(std::string_view(d.name), to_query_value(*m));
        }
        else
        {
            out.emplace_back(std::string_view(d.name), to_query_value(m));
        }
    });
}

}  // namespace detail
}  // namespace digital_delivery

#endif
