//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_INTERNAL_JSON_DECODE_HPP
#define DIGITAL_DELIVERY_IMPL_INTERNAL_JSON_DECODE_HPP

// Streaming, describe-driven JSON -> model decoding. One boost::json
// basic_parser with one handler class (json_decoder, compiled once: see
// impl/json/json_decode.ipp) decodes every model: each C++ type contributes a
// small static table (what to do with a string, a number, an object...), and
// the handler dispatches parser events through those tables straight into
// the result. No DOM is built; nothing is allocated but the model itself.
//
// Tolerance (Boost.JSON 1.81's automatic conversion rejects unknown keys and
// missing optionals; the API's Beta endpoints add fields without notice; a
// real server sends nulls and omissions the spec does not draw, and one odd
// field must not fail a page of 250 orders). The rule, in one place
// (json_member_required below; the table for users: docs/architecture.md,
// "Decoding"):
//  - unknown keys are skipped, whatever their value;
//  - a missing or null std::optional member is empty;
//  - identity and structure are required: an `id`, the members named in
//    json_required_members<T>, and every nested model or array. Missing or
//    null: client_errc::missing_field / wrong_type;
//  - every other member (texts, counts, flags, times, enums) is tolerant:
//    missing or null leaves its empty value ("", 0, false, timestamp{},
//    an unknown open_enum);
//  - a value of the wrong JSON type fails, tolerant or not, with
//    client_errc::wrong_type / invalid_timestamp and a message naming the
//    JSON path ("orders[3].download_count: expected an integer");
//  - a duplicated key: the last occurrence wins;
//  - text that is not JSON fails with client_errc::invalid_json, even when a
//    mapping error came first (the parser runs to the end of the document).

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/impl/json/json_mapping.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/http_message.hpp>
#include <digital_delivery/open_enum.hpp>
#include <digital_delivery/timestamp.hpp>

#include <boost/describe/members.hpp>
#include <boost/json/string_view.hpp>
#include <boost/mp11/algorithm.hpp>
#include <boost/system/error_code.hpp>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace digital_delivery {

struct order_downloads;
struct notify_buyers_result;
struct upload_handle;
struct pagination;

namespace detail {

class json_decoder;

/// What the parser found where a value was expected.
enum class json_event : unsigned char
{
    string,
    int64,
    uint64,
    real,
    boolean,
    null,
    object,  ///< an object begins
    array,   ///< an array begins
};

/// Decodes one value of some type into `target`.
using json_value_fn = void (*)(void* target, json_decoder& d, json_event e);

/// Where the next value goes.
struct json_slot
{
    json_value_fn fn;
    void* target;
};

struct json_frame;

/// What an open container does with its keys, elements and end.
struct json_container_ops
{
    void (*on_key)(json_frame& f, json_decoder& d, std::string_view key);  // objects: sets f.pending
    json_slot (*next)(json_frame& f);                                       // arrays: the next element
    void (*on_end)(json_frame& f, json_decoder& d);
};

/// An open container being decoded into `target`.
struct json_frame
{
    const json_container_ops* ops;
    void* target;
    std::string_view key;  ///< objects: the member being decoded (for error paths)
    std::size_t index;     ///< arrays: the element being decoded (for error paths)
    json_slot pending;     ///< objects: where the value after the last key goes
    std::uint64_t seen;    ///< structs: the members seen so far
    std::size_t cursor;    ///< structs: the member expected next (keys usually come in order)
    bool is_array;
};

/// The basic_parser handler. Decoding is synchronous and calls no user code.
class json_decoder
{
public:
    static constexpr std::size_t max_object_size = (std::numeric_limits<std::size_t>::max)() / 2;
    static constexpr std::size_t max_array_size = (std::numeric_limits<std::size_t>::max)() / 2;
    static constexpr std::size_t max_key_size = (std::numeric_limits<std::size_t>::max)() / 2;
    static constexpr std::size_t max_string_size = (std::numeric_limits<std::size_t>::max)() / 2;
    static constexpr std::size_t max_depth = 32;  // the parser's default limit

    explicit json_decoder(json_slot root) noexcept : root_(root) {}

    // ---- for the value functions -------------------------------------------
    std::string_view str() const noexcept { return str_; }
    std::int64_t int64() const noexcept { return i64_; }
    std::uint64_t uint64() const noexcept { return u64_; }
    double real() const noexcept { return real_; }
    bool boolean() const noexcept { return bool_; }

    /// Records a mapping failure at the current path (the first one wins);
    /// from here on the parser only checks the syntax.
    DIGITAL_DELIVERY_DECL void fail(client_errc e, std::string_view why);

    /// Opens a container whose contents go through `ops`.
    json_frame& push(const json_container_ops* ops, void* target, bool is_array) noexcept
    {
        json_frame& f = frames_[depth_++];
        f.ops = ops;
        f.target = target;
        f.key = {};
        f.index = 0;
        f.seen = 0;
        f.cursor = 0;
        f.is_array = is_array;
        return f;
    }

    /// The value just announced (an object or array) is skipped, contents included.
    void skip_container() noexcept { skip_ = 1; }

    /// Scratch string that outlives the current event (header names).
    std::string& held_key() noexcept { return held_key_; }

    bool failed() const noexcept { return failed_; }
    error_code error() const noexcept { return ec_; }
    std::string& message() noexcept { return message_; }

    // ---- basic_parser handler ----------------------------------------------
    using bec = boost::system::error_code;
    using jsv = boost::json::string_view;

    bool on_document_begin(bec&) { return true; }
    bool on_document_end(bec&) { return true; }
    bool on_object_begin(bec&) { return begin_container(json_event::object); }
    bool on_object_end(std::size_t, bec&) { return end_container(); }
    bool on_array_begin(bec&) { return begin_container(json_event::array); }
    bool on_array_end(std::size_t, bec&) { return end_container(); }
    bool on_key_part(jsv s, std::size_t, bec&)
    {
        if (!ignoring())
            append_part(s, key_buf_, key_in_parts_);
        return true;
    }
    bool on_key(jsv s, std::size_t, bec&)
    {
        if (!ignoring())
        {
            json_frame& f = frames_[depth_ - 1];
            f.ops->on_key(f, *this, whole(s, key_buf_, key_in_parts_));
        }
        return true;
    }
    bool on_string_part(jsv s, std::size_t, bec&)
    {
        if (!ignoring())
            append_part(s, str_buf_, str_in_parts_);
        return true;
    }
    bool on_string(jsv s, std::size_t, bec&)
    {
        if (!ignoring())
        {
            str_ = whole(s, str_buf_, str_in_parts_);
            value(json_event::string);
        }
        return true;
    }
    bool on_number_part(jsv, bec&) { return true; }
    bool on_int64(std::int64_t i, jsv, bec&)
    {
        if (!ignoring())
        {
            i64_ = i;
            value(json_event::int64);
        }
        return true;
    }
    bool on_uint64(std::uint64_t u, jsv, bec&)
    {
        if (!ignoring())
        {
            u64_ = u;
            value(json_event::uint64);
        }
        return true;
    }
    bool on_double(double x, jsv, bec&)
    {
        if (!ignoring())
        {
            real_ = x;
            value(json_event::real);
        }
        return true;
    }
    bool on_bool(bool b, bec&)
    {
        if (!ignoring())
        {
            bool_ = b;
            value(json_event::boolean);
        }
        return true;
    }
    bool on_null(bec&)
    {
        if (!ignoring())
            value(json_event::null);
        return true;
    }
    bool on_comment_part(jsv, bec&) { return true; }
    bool on_comment(jsv, bec&) { return true; }

private:
    bool ignoring() const noexcept { return skip_ != 0 || failed_; }

    void value(json_event e)
    {
        json_slot s;
        if (depth_ == 0)
        {
            s = root_;
        }
        else
        {
            json_frame& f = frames_[depth_ - 1];
            s = f.is_array ? f.ops->next(f) : f.pending;
        }
        s.fn(s.target, *this, e);
    }

    bool begin_container(json_event e)
    {
        if (!ignoring())
            value(e);
        else if (!failed_)
            ++skip_;
        return true;
    }

    bool end_container()
    {
        if (failed_)
            return true;
        if (skip_ != 0)
        {
            --skip_;
            return true;
        }
        json_frame& f = frames_[depth_ - 1];
        f.ops->on_end(f, *this);
        --depth_;
        return true;
    }

    static void append_part(jsv s, std::string& buf, bool& in_parts)
    {
        if (!in_parts)
        {
            buf.clear();
            in_parts = true;
        }
        buf.append(s.data(), s.size());
    }

    static std::string_view whole(jsv s, std::string& buf, bool& in_parts)
    {
        if (!in_parts)
            return std::string_view(s.data(), s.size());
        in_parts = false;
        buf.append(s.data(), s.size());
        return buf;
    }

    json_slot root_;
    std::array<json_frame, max_depth + 1> frames_;
    std::size_t depth_ = 0;
    std::size_t skip_ = 0;  // > 0: inside a skipped container, at this depth
    bool failed_ = false;
    bool key_in_parts_ = false;
    bool str_in_parts_ = false;
    std::string_view str_;
    std::int64_t i64_ = 0;
    std::uint64_t u64_ = 0;
    double real_ = 0;
    bool bool_ = false;
    std::string key_buf_;
    std::string str_buf_;
    std::string held_key_;
    error_code ec_;
    std::string message_;
};

/// Parses `text` (an empty or blank body is `{}`) into the value behind
/// `root`. On failure returns client_errc::invalid_json or the mapping error,
/// and, when `message` is not null, stores the reason (with the JSON path).
DIGITAL_DELIVERY_DECL error_code decode_json(std::string_view text, json_slot root, std::string* message);

// ---- per-type decoding -------------------------------------------------------

template <class T>
struct json_decoding;

/// Ignores a value (unknown keys).
inline void skip_json_value(void*, json_decoder& d, json_event e)
{
    if (e == json_event::object || e == json_event::array)
        d.skip_container();
}

template <>
struct json_decoding<std::string>
{
    static void value(void* t, json_decoder& d, json_event e)
    {
        if (e != json_event::string)
            return d.fail(client_errc::wrong_type, "expected a string");
        static_cast<std::string*>(t)->assign(d.str());
    }
};

template <>
struct json_decoding<bool>
{
    static void value(void* t, json_decoder& d, json_event e)
    {
        if (e != json_event::boolean)
            return d.fail(client_errc::wrong_type, "expected a boolean");
        *static_cast<bool*>(t) = d.boolean();
    }
};

template <class I>
    requires json_integer<I>
struct json_decoding<I>
{
    static void value(void* t, json_decoder& d, json_event e)
    {
        using lim = std::numeric_limits<I>;
        I& out = *static_cast<I*>(t);
        switch (e)
        {
        case json_event::int64:
        {
            const std::int64_t i = d.int64();
            if constexpr (std::is_signed_v<I>)
            {
                if (i < static_cast<std::int64_t>(lim::min()) || i > static_cast<std::int64_t>(lim::max()))
                    return d.fail(client_errc::wrong_type, "integer out of range");
            }
            else
            {
                if (i < 0 || static_cast<std::uint64_t>(i) > static_cast<std::uint64_t>(lim::max()))
                    return d.fail(client_errc::wrong_type, "integer out of range");
            }
            out = static_cast<I>(i);
            return;
        }
        case json_event::uint64:
            if (d.uint64() > static_cast<std::uint64_t>(lim::max()))
                return d.fail(client_errc::wrong_type, "integer out of range");
            out = static_cast<I>(d.uint64());
            return;
        case json_event::real:
        {
            // 1e3 is an integer written as a double; 1.5 is not. Beyond 2^53
            // a double no longer holds every integer (-9223372036854775809
            // parses as -2^63): refused rather than silently rounded.
            const double x = d.real();
            constexpr double exact = 9007199254740992.0;  // 2^53
            if (!(x >= -exact && x <= exact))
                return d.fail(client_errc::wrong_type, "integer out of range");
            const auto i = static_cast<std::int64_t>(x);
            if (x != static_cast<double>(i))
                return d.fail(client_errc::wrong_type, "expected an integer");
            if (i < static_cast<std::int64_t>(lim::min()) || (i > 0 && static_cast<std::uint64_t>(i) > static_cast<std::uint64_t>(lim::max())))
                return d.fail(client_errc::wrong_type, "integer out of range");
            out = static_cast<I>(i);
            return;
        }
        default:
            return d.fail(client_errc::wrong_type, "expected an integer");
        }
    }
};

template <>
struct json_decoding<timestamp>
{
    static void value(void* t, json_decoder& d, json_event e)
    {
        if (e != json_event::string)
            return d.fail(client_errc::wrong_type, "expected an ISO 8601 timestamp string");
        auto ts = parse_timestamp(d.str());
        if (!ts)
            return d.fail(client_errc::invalid_timestamp, "not an ISO 8601 timestamp with offset");
        *static_cast<timestamp*>(t) = *ts;
    }
};

template <class E>
struct json_decoding<open_enum<E>>
{
    static void value(void* t, json_decoder& d, json_event e)
    {
        if (e != json_event::string)
            return d.fail(client_errc::wrong_type, "expected a string");
        *static_cast<open_enum<E>*>(t) = open_enum<E>::from_string(d.str());
    }
};

/// An object of header fields (string values), in document order.
template <>
struct json_decoding<http_headers>
{
    static void value(void* t, json_decoder& d, json_event e)
    {
        if (e != json_event::object)
            return d.fail(client_errc::wrong_type, "expected an object of header fields");
        static_cast<http_headers*>(t)->clear();
        d.push(&ops, t, false);
    }
    static void on_key(json_frame& f, json_decoder& d, std::string_view key)
    {
        // The key's text may live in the parser's scratch buffer, which the
        // value reuses: keep a copy.
        d.held_key().assign(key);
        f.key = d.held_key();
        f.pending = json_slot{&field, &f};
    }
    static void field(void* frame, json_decoder& d, json_event e)
    {
        auto& f = *static_cast<json_frame*>(frame);
        if (e != json_event::string)
            return d.fail(client_errc::wrong_type, "expected a string header value");
        static_cast<http_headers*>(f.target)->add(f.key, d.str());
    }
    static void on_end(json_frame&, json_decoder&) {}
    static constexpr json_container_ops ops{&on_key, nullptr, &on_end};
};

template <class T>
struct json_decoding<std::optional<T>>
{
    static void value(void* t, json_decoder& d, json_event e)
    {
        auto& o = *static_cast<std::optional<T>*>(t);
        if (e == json_event::null)
            return o.reset();
        json_decoding<T>::value(&o.emplace(), d, e);
    }
};

template <class T>
struct json_decoding<std::vector<T>>
{
    static void value(void* t, json_decoder& d, json_event e)
    {
        if (e != json_event::array)
            return d.fail(client_errc::wrong_type, "expected an array");
        static_cast<std::vector<T>*>(t)->clear();
        d.push(&ops, t, true);
    }
    static json_slot next(json_frame& f)
    {
        auto& v = *static_cast<std::vector<T>*>(f.target);
        f.index = v.size();
        return json_slot{&json_decoding<T>::value, &v.emplace_back()};
    }
    static void on_end(json_frame&, json_decoder&) {}
    static constexpr json_container_ops ops{nullptr, &next, &on_end};
};

/// The members of a model, beyond its `id`, its nested models and arrays, that
/// must be present and not null: what identifies a result or drives the
/// client (the next page, the upload). Everything else is tolerant (see the
/// file comment).
template <class T>
inline constexpr std::array<std::string_view, 0> json_required_members{};
template <>
inline constexpr std::array<std::string_view, 1> json_required_members<order_downloads>{"order_id"};
template <>
inline constexpr std::array<std::string_view, 1> json_required_members<notify_buyers_result>{"digital_product_id"};
template <>
inline constexpr std::array<std::string_view, 3> json_required_members<upload_handle>{"method", "url", "expires_at"};
template <>
inline constexpr std::array<std::string_view, 4> json_required_members<pagination>{
    "current_page", "per_page", "total_count", "total_pages"};

template <class T>
struct is_std_vector_member : std::false_type
{
};
template <class T, class A>
struct is_std_vector_member<std::vector<T, A>> : std::true_type
{
};

/// Whether member `name` of type M of model T must be present and not null.
template <class T, class M>
constexpr bool json_member_required(std::string_view name) noexcept
{
    if constexpr (is_optional<M>::value)
        return false;
    else if constexpr (described_struct<M> || is_std_vector_member<M>::value)
        return true;
    else
    {
        if (name == "id")
            return true;
        for (std::string_view r : json_required_members<T>)
            if (r == name)
                return true;
        return false;
    }
}

/// A tolerant member: null leaves its empty value.
template <class M>
struct json_tolerant_decoding
{
    static void value(void* t, json_decoder& d, json_event e)
    {
        if (e == json_event::null)
            return void(*static_cast<M*>(t) = M{});
        json_decoding<M>::value(t, d, e);
    }
};

/// A described struct. With `Flatten`, the struct is an envelope of exactly
/// one member decoded straight into the target (`{"order": {...}}` into an
/// `order`): the same checks, paths and messages, without the envelope.
template <class T, bool Flatten = false>
struct json_struct_decoding
{
    using members = boost::describe::describe_members<T, boost::describe::mod_public>;
    static constexpr std::size_t size = boost::mp11::mp_size<members>::value;
    static_assert(size <= 64, "a decoded struct has at most 64 members");
    static_assert(!Flatten || size == 1, "only an envelope of one member is flattened");

    struct member
    {
        std::string_view name;
        json_value_fn fn;
        void* (*address)(void*);
        bool required;
    };

    static constexpr std::array<member, size> make_table()
    {
        std::array<member, size> r{};
        std::size_t i = 0;
        boost::mp11::mp_for_each<members>([&](auto d) {
            using D = decltype(d);
            using member_t = std::remove_cvref_t<decltype(std::declval<T&>().*D::pointer)>;
            r[i].name = D::name;
            r[i].required = json_member_required<T, member_t>(D::name);
            r[i].fn = r[i].required || is_optional<member_t>::value ? &json_decoding<member_t>::value
                                                                     : &json_tolerant_decoding<member_t>::value;
            if constexpr (Flatten)
                r[i].address = [](void* o) -> void* { return o; };
            else
                r[i].address = [](void* o) -> void* { return &(static_cast<T*>(o)->*D::pointer); };
            ++i;
        });
        return r;
    }
    static constexpr std::array<member, size> table = make_table();

    static constexpr std::uint64_t make_required()
    {
        std::uint64_t m = 0;
        for (std::size_t i = 0; i < size; ++i)
            if (table[i].required)
                m |= std::uint64_t(1) << i;
        return m;
    }
    static constexpr std::uint64_t required = make_required();

    static void value(void* t, json_decoder& d, json_event e)
    {
        if (e != json_event::object)
            return d.fail(client_errc::wrong_type, "expected an object");
        d.push(&ops, t, false);
    }
    static void on_key(json_frame& f, json_decoder&, std::string_view key)
    {
        std::size_t i = f.cursor;
        if (i >= size || table[i].name != key)
        {
            i = 0;
            while (i < size && table[i].name != key)
                ++i;
            if (i == size)
            {
                f.pending = json_slot{&skip_json_value, nullptr};
                return;
            }
        }
        f.cursor = i + 1;
        f.seen |= std::uint64_t(1) << i;
        f.key = table[i].name;
        f.pending = json_slot{table[i].fn, table[i].address(f.target)};
    }
    static void on_end(json_frame& f, json_decoder& d)
    {
        if (const std::uint64_t missing = required & ~f.seen)
        {
            f.key = table[static_cast<std::size_t>(std::countr_zero(missing))].name;
            d.fail(client_errc::missing_field, "required field is missing");
        }
    }
    static constexpr json_container_ops ops{&on_key, nullptr, &on_end};
};

template <class T>
struct json_decoding : json_struct_decoding<T>
{
    static_assert(described_struct<T>, "no JSON decoding for this type");
};

/// Decodes `text` into `out` (a model, a vector, an optional...).
template <class T>
error_code decode_json_into(std::string_view text, T& out, std::string* message)
{
    return decode_json(text, json_slot{&json_decoding<T>::value, &out}, message);
}

}  // namespace detail
}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/json/json_decode.ipp>
#endif

#endif
