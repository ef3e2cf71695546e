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

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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

/// Decodes one reply from the front of a buffer.
class resp_parser
{
public:
    static constexpr std::size_t max_bulk = 64 * 1024;
    static constexpr std::size_t max_elements = 64;
    static constexpr int max_depth = 4;

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

    static result parse(std::string_view in)
    {
        result r;
        std::size_t pos = 0;
        r.st = parse_value(in, pos, r.value, 0, r.what);
        if (r.st == status::done)
            r.consumed = pos;
        return r;
    }

private:
    // A line up to CRLF (the CRLF consumed), or need_more/error.
    static status line(std::string_view in, std::size_t& pos, std::string_view& out, std::string& what)
    {
        const std::size_t end = in.find("\r\n", pos);
        if (end == std::string_view::npos)
        {
            if (in.size() - pos > max_bulk)
            {
                what = "a RESP line longer than 64 KiB";
                return status::error;
            }
            return status::need_more;
        }
        out = in.substr(pos, end - pos);
        pos = end + 2;
        return status::done;
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
    static status length(std::string_view l, std::size_t max, const char* bad, resp_value& v, std::int64_t& n, std::string& what)
    {
        if (!to_int(l, n) || n < -1 || n > static_cast<std::int64_t>(max))
        {
            what = bad;
            return status::error;
        }
        if (n == -1)
        {
            v.type = resp_value::kind::nil;
            return status::done;
        }
        return status::need_more;
    }

    static status parse_value(std::string_view in, std::size_t& pos, resp_value& v, int depth, std::string& what)
    {
        if (pos >= in.size())
            return status::need_more;
        const char type = in[pos++];
        std::string_view l;
        if (auto st = line(in, pos, l, what); st != status::done)
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
            if (auto st = length(l, max_bulk, "a RESP bulk length that is no number or above 64 KiB", v, n, what);
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
            if (auto st = length(l, max_elements, "a RESP array length that is no number or above 64", v, n, what);
                st != status::need_more)
                return st;
            if (depth + 1 >= max_depth)
            {
                what = "RESP arrays nested deeper than 4";
                return status::error;
            }
            v.type = resp_value::kind::array;
            v.elements.resize(static_cast<std::size_t>(n));
            for (auto& e : v.elements)
                if (auto st = parse_value(in, pos, e, depth + 1, what); st != status::done)
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
