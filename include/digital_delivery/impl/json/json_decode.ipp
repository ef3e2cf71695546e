//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_JSON_DECODE_IPP
#define DIGITAL_DELIVERY_IMPL_JSON_DECODE_IPP

#include <digital_delivery/impl/json/json_decode.hpp>

// The parser's implementation is a template on the handler; there is one
// handler class, so it is instantiated here, once.
#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/error.hpp>

#include <string>
#include <string_view>

namespace digital_delivery {
namespace detail {

DIGITAL_DELIVERY_DECL void json_decoder::fail(client_errc e, std::string_view why)
{
    if (failed_)
        return;
    failed_ = true;
    ec_ = e;
    message_.clear();
    for (std::size_t i = 0; i < depth_; ++i)
    {
        const json_frame& f = frames_[i];
        if (f.is_array)
        {
            message_ += '[';
            message_ += std::to_string(f.index);
            message_ += ']';
        }
        else if (!f.key.empty())
        {
            if (!message_.empty())
                message_ += '.';
            message_ += f.key;
        }
    }
    if (message_.empty())
        message_ = "(root)";
    message_ += ": ";
    message_ += why;
}

DIGITAL_DELIVERY_DECL error_code decode_json(std::string_view text, json_slot root, std::string* message)
{
    // A response without content decodes as an empty object: only
    // all-optional results accept it.
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
        text = "{}";
    boost::json::parse_options opt;
    opt.max_depth = json_decoder::max_depth;
    boost::json::basic_parser<json_decoder> p(opt, root);
    boost::system::error_code jec;
    const std::size_t used = p.write_some(false, text.data(), text.size(), jec);
    if (!jec && used != text.size())
        jec = boost::json::error::extra_data;
    if (jec)
    {
        if (message)
            *message = "response body is not JSON: " + jec.message();
        return client_errc::invalid_json;
    }
    json_decoder& d = p.handler();
    if (d.failed())
    {
        if (message)
            *message = std::move(d.message());
        return d.error();
    }
    return error_code();
}

}  // namespace detail
}  // namespace digital_delivery

#endif
