//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_INTERNAL_RESP_HPP
#define DIGITAL_DELIVERY_IMPL_INTERNAL_RESP_HPP

/// \file
/// The few pieces of the Redis protocol (RESP2) the Redis rate-limit store
/// needs: encoding a command (an array of bulk strings) and decoding one
/// reply (simple string, error, integer, bulk string, array, nil). Sans-io:
/// bytes in, values out. Bad input of any kind (a wrong type byte, a length
/// that is no number, a reply larger than the limits below, nesting deeper
/// than 4) is a protocol error, never a crash or a wrong value.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace digital_delivery {
namespace detail {

/// One RESP2 reply.
struct resp_value
{
    enum class kind
    {
        simple,   ///< +OK
        error,    ///< -ERR ...
        integer,  ///< :42
        bulk,     ///< $3\r\nabc
        nil,      ///< $-1 or *-1
        array,    ///< *2 ...
    };
    kind type = kind::nil;
    std::string str;             ///< simple, error, bulk
    std::int64_t integer = 0;    ///< integer
    std::vector<resp_value> elements;  ///< array
};

/// Appends a command, each argument a bulk string.
inline void resp_append_command(std::string& out, const std::vector<std::string_view>& args)
{
    out += '*';
    out += std::to_string(args.size());
    out += "\r\n";
    for (std::string_view a : args)
    {
        out += '$';
        out += std::to_string(a.size());
        out += "\r\n";
        out.append(a);
        out += "\r\n";
    }
}

/// The bounds a reply must keep (beyond them: status::error, drop the
/// connection). The defaults fit the rate-limit script's replies; a caller
/// with larger replies (a page of a hash) passes its own.
struct resp_limits
{
    std::size_t max_bulk = 64 * 1024;  ///< Longest bulk string, and longest line, in bytes.
    std::size_t max_elements = 64;     ///< Most elements of one array.
    int max_depth = 4;                 ///< Deepest nesting of arrays (the outermost counts 1).
};

/// Decodes one reply from the front of a buffer.
class resp_parser
{
public:
    static constexpr std::size_t max_bulk = resp_limits{}.max_bulk;
    static constexpr std::size_t max_elements = resp_limits{}.max_elements;
    static constexpr int max_depth = resp_limits{}.max_depth;

    enum class status
    {
        done,       ///< `value` holds a reply; `consumed` bytes of the input were used.
        need_more,  ///< The input ends inside a reply.
        error,      ///< Not RESP (or beyond the limits): drop the connection.
    };
    struct result
    {
        status st = status::need_more;
        resp_value value;
        std::size_t consumed = 0;
        std::string what;  ///< status::error: why
    };

    /// \param in The bytes received (a reply starts at the front).
    /// \param limits The bounds the reply must keep.
    static result parse(std::string_view in, const resp_limits& limits = {})
    {
        result r;
        std::size_t pos = 0;
        r.st = parse_value(in, pos, r.value, 0, r.what, limits);
        if (r.st == status::done)
            r.consumed = pos;
        return r;
    }

private:
    // A line up to CRLF (the CRLF consumed), or need_more/error.
    static status line(std::string_view in, std::size_t& pos, std::string_view& out, std::string& what, const resp_limits& lim)
    {
        const std::size_t end = in.find("\r\n", pos);
        if (end == std::string_view::npos)
        {
            if (in.size() - pos > lim.max_bulk)
            {
                what = "a RESP line longer than " + bytes(lim.max_bulk);
                return status::error;
            }
            return status::need_more;
        }
        out = in.substr(pos, end - pos);
        pos = end + 2;
        return status::done;
    }

    // "64 KiB", "8 MiB", or a number of bytes.
    static std::string bytes(std::size_t n)
    {
        if (n >= (1u << 20) && n % (1u << 20) == 0)
            return std::to_string(n >> 20) + " MiB";
        if (n >= 1024 && n % 1024 == 0)
            return std::to_string(n >> 10) + " KiB";
        return std::to_string(n) + " bytes";
    }

    static bool to_int(std::string_view s, std::int64_t& v)
    {
        if (s.empty() || s.size() > 19)
            return false;
        bool neg = false;
        std::size_t i = 0;
        if (s[0] == '-')
        {
            neg = true;
            i = 1;
            if (s.size() == 1)
                return false;
        }
        std::int64_t x = 0;
        for (; i < s.size(); ++i)
        {
            if (s[i] < '0' || s[i] > '9')
                return false;
            x = x * 10 + (s[i] - '0');  // at most 18 digits: no overflow
        }
        v = neg ? -x : x;
        return true;
    }

    // The length of a bulk string or an array: error, done (-1: nil), or
    // need_more meaning "read `n` more".
    static status length(std::string_view l, std::size_t max, std::string bad, resp_value& v, std::int64_t& n, std::string& what)
    {
        if (!to_int(l, n) || n < -1 || static_cast<std::uint64_t>(std::max<std::int64_t>(n, 0)) > max)
        {
            what = std::move(bad);
            return status::error;
        }
        if (n == -1)
        {
            v.type = resp_value::kind::nil;
            return status::done;
        }
        return status::need_more;
    }

    static status parse_value(std::string_view in, std::size_t& pos, resp_value& v, int depth, std::string& what,
                              const resp_limits& lim)
    {
        if (pos >= in.size())
            return status::need_more;
        const char type = in[pos++];
        std::string_view l;
        if (auto st = line(in, pos, l, what, lim); st != status::done)
            return st;
        switch (type)
        {
        case '+':
            v.type = resp_value::kind::simple;
            v.str.assign(l);
            return status::done;
        case '-':
            v.type = resp_value::kind::error;
            v.str.assign(l);
            return status::done;
        case ':':
            v.type = resp_value::kind::integer;
            if (!to_int(l, v.integer))
            {
                what = "a RESP integer that is no number";
                return status::error;
            }
            return status::done;
        case '$':
        {
            std::int64_t n = 0;
            if (auto st = length(l, lim.max_bulk, "a RESP bulk length that is no number or above " + bytes(lim.max_bulk), v, n, what);
                st != status::need_more)
                return st;
            const auto len = static_cast<std::size_t>(n);
            if (in.size() - pos < len + 2)
                return status::need_more;
            if (in.substr(pos + len, 2) != "\r\n")
            {
                what = "a RESP bulk string without its CRLF";
                return status::error;
            }
            v.type = resp_value::kind::bulk;
            v.str.assign(in.substr(pos, len));
            pos += len + 2;
            return status::done;
        }
        case '*':
        {
            std::int64_t n = 0;
            if (auto st = length(l, lim.max_elements, "a RESP array length that is no number or above " + std::to_string(lim.max_elements), v, n, what);
                st != status::need_more)
                return st;
            if (depth + 1 >= lim.max_depth)
            {
                what = "RESP arrays nested deeper than " + std::to_string(lim.max_depth);
                return status::error;
            }
            v.type = resp_value::kind::array;
            v.elements.resize(static_cast<std::size_t>(n));
            for (auto& e : v.elements)
                if (auto st = parse_value(in, pos, e, depth + 1, what, lim); st != status::done)
                    return st;
            return status::done;
        }
        default:
            what = "not a RESP reply (unknown type byte)";
            return status::error;
        }
    }
};

}  // namespace detail
}  // namespace digital_delivery

#endif
