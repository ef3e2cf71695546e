//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_DIAGNOSTICS_IPP
#define DIGITAL_DELIVERY_IMPL_DIAGNOSTICS_IPP

#include <digital_delivery/diagnostics.hpp>

namespace digital_delivery {

DIGITAL_DELIVERY_DECL std::string diagnostics::to_string() const
{
    std::string r;
    if (!method.empty())
    {
        r += method;
        r += ' ';
        r += path;
        r += ": ";
    }
    if (http_status)
    {
        r += std::to_string(http_status);
        r += ' ';
    }
    if (!code.empty())
    {
        r += '[';
        r += code;
        r += "] ";
    }
    if (!server_message.empty())
    {
        r += server_message;
        r += ' ';
    }
    // The list is already in server_message unless the body had both shapes.
    if (!server_errors.empty() && server_message != detail::joined_errors(*this))
    {
        r += detail::joined_errors(*this);
        r += ' ';
    }
    if (!client_message.empty())
    {
        r += client_message;
        r += ' ';
    }
    if (!host.empty() || attempts > 1)
    {
        r += '(';
        r += host;
        if (attempts > 1)
        {
            if (!host.empty())
                r += ", ";
            r += std::to_string(attempts) + " attempts, waited " + std::to_string(total_wait.count()) + " ms";
        }
        r += ") ";
    }
    if (!asset_id.empty())
    {
        r += "[asset ";
        r += asset_id;
        r += "] ";
    }
    while (!r.empty() && (r.back() == ' ' || r.back() == ':'))
        r.pop_back();
    return r;
}

}  // namespace digital_delivery

#endif
