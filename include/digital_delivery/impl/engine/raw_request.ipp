//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_RAW_REQUEST_IPP
#define DIGITAL_DELIVERY_IMPL_RAW_REQUEST_IPP

#include <digital_delivery/raw_request.hpp>
#include <digital_delivery/detail/endpoint_call.hpp>  // detail::request_cost

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <span>

namespace digital_delivery {
namespace detail {

inline bool is_raw_path_char(unsigned char c) noexcept
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return true;
    switch (c)
    {
    // unreserved, sub-delims, ':' '@' and the segment separator
    case '-': case '.': case '_': case '~':
    case '!': case '$': case '&': case '\'': case '(': case ')': case '*': case '+': case ',': case ';': case '=':
    case ':': case '@': case '/':
        return true;
    default: return false;
    }
}

inline bool is_hex(char c) noexcept
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

}  // namespace detail

DIGITAL_DELIVERY_DECL error_code detail::validate_raw_path(std::string_view path, std::string& why)
{
    if (path.empty() || path.front() != '/')
    {
        why = "raw request path must start with '/' (it is relative to the base URL)";
        return client_errc::invalid_argument;
    }
    for (std::size_t i = 0; i < path.size(); ++i)
    {
        const char c = path[i];
        if (c == '%')
        {
            if (i + 2 >= path.size() || !is_hex(path[i + 1]) || !is_hex(path[i + 2]))
            {
                why = "raw request path has a '%' that is not followed by two hex digits";
                return client_errc::invalid_argument;
            }
            i += 2;
            continue;
        }
        if (!is_raw_path_char(static_cast<unsigned char>(c)))
        {
            if (c == '?' || c == '#')
                why = "raw request path must not contain '?' or '#' (pass query parameters as raw_query)";
            else if (c == '{' || c == '}')
                why = "raw request path must not contain '{' or '}'";
            else
                why = "raw request path contains a character that is not allowed in a URL path (percent-encode it)";
            return client_errc::invalid_argument;
        }
    }
    // No "." or ".." segment (also not percent-encoded: %2E).
    std::size_t start = 1;
    while (start <= path.size())
    {
        std::size_t end = path.find('/', start);
        if (end == std::string_view::npos)
            end = path.size();
        std::string seg(path.substr(start, end - start));
        for (std::size_t k; (k = seg.find("%2e")) != std::string::npos || (k = seg.find("%2E")) != std::string::npos;)
            seg.replace(k, 3, ".");
        if (seg == "." || seg == "..")
        {
            why = "raw request path must not contain a \".\" or \"..\" segment";
            return client_errc::invalid_argument;
        }
        start = end + 1;
    }
    return {};
}

DIGITAL_DELIVERY_DECL void detail::prepare_raw_request(
    const client_impl& impl,
    const raw_request& r,
    const request_options* opts,
    prepared_request& out
)
{
    const http_method method = r.method;
    const std::string_view path = r.path;
    std::string why;
    error_code vec = validate_raw_path(path, why);
    std::string body;
    if (!r.body.empty())
    {
        // Parsed and serialized again: what is sent is one valid JSON document.
        boost::system::error_code jec;
        boost::json::value v = boost::json::parse(r.body.view(), jec);
        if (jec)
        {
            if (!vec)
            {
                vec = client_errc::invalid_argument;
                why = "raw request body is not JSON: " + jec.message();
            }
        }
        else
        {
            body = boost::json::serialize(v);
        }
    }
    const endpoint_info info{
        method,
        vec ? std::string_view("/") : path,  // never hand an invalid path to the URL builder
        detail::request_cost(method),
        // raw requests: PATCH is not resent either (raw_request.hpp)
        method == http_method::get || method == http_method::put || method == http_method::delete_,
        std::string_view(),  // no name: a raw request (observers see "raw")
    };
    query_params qp;
    qp.reserve(r.query.size());
    for (const auto& [k, v] : r.query)
        qp.emplace_back(k, v);
    impl.prepare(out, info, std::span<const std::string_view>(), r.query.empty() ? nullptr : &qp, std::move(body), opts);
    if (vec)
    {
        out.error = vec;
        out.error_message = std::move(why);
        out.path = std::string(path.substr(0, 256));
    }
}

DIGITAL_DELIVERY_DECL void detail::raw_decoding_handler::operator()(error_code ec, http_response r)
{
    boost::json::value v;
    std::string_view text(r.body);
    while (!text.empty() && (text.front() == ' ' || text.front() == '\n' || text.front() == '\r' || text.front() == '\t'))
        text.remove_prefix(1);
    if (!text.empty())
    {
        boost::system::error_code jec;
        v = boost::json::parse(text, jec);
        if (jec)
        {
            v = nullptr;
            if (!ec)
            {
                ec = client_errc::invalid_json;
                if (diag)
                {
                    diag->client_message = "response body is not JSON: " + jec.message();
                    diag->http_status = r.status;
                }
            }
        }
    }
    std::move(handler)(ec, std::move(v));
}

DIGITAL_DELIVERY_DECL void detail::launch_raw(std::shared_ptr<client_impl> impl, prepared_request p, diagnostics* diag, raw_json_handler h)
{
    auto* raw = impl.get();
    raw->async_execute(std::move(impl), std::move(p), diag, raw_handler(raw_decoding_handler{std::move(h), diag}));
}

}  // namespace digital_delivery

#endif
