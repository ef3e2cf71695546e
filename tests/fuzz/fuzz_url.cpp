// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// libFuzzer target: URL handling (docs/reliability.md).
//
// Input: byte 0 holds flags (an https:// or http:// base URL for the upload
// check, allow_insecure_upload_url, whether the upload handle's method is
// "PUT" or line 2), then lines ('\n'-separated): line 1 is a URL, line 2 an id
// or a method, the following lines "name: value" header fields of an upload
// handle. They go through:
//  - detail::parse_beast_target, beast_url_rest, beast_url_origin_length: the
//    Beast transport's validation and split of every request URL (also URLs
//    a server gives: upload URLs);
//  - detail::is_valid_base_url, url_host, append_pct_encoded: the client's
//    base_url check and the encoding of an id as one path segment; a valid
//    base_url plus an encoded id must be a URL the transport accepts;
//  - detail::validate_raw_path (raw requests' paths);
//  - detail::validate_upload_handle and url_path_only: the checks of a
//    server-given upload handle (method, presigned URL, signed headers).
// Checked: what parse_beast_target accepts is split consistently (scheme,
// port 1-65535, a target starting with '/', no control characters, a
// lowercase pool key); percent-encoding gives unreserved characters and %XX
// only, and decodes back; url_path_only never carries the query.
#include "fuzz_check.hpp"

#include <digital_delivery/asset.hpp>
#include <digital_delivery/client.hpp>
#include <digital_delivery/impl/http/sansio/beast_url.hpp>
#include <digital_delivery/raw_request.hpp>
#include <digital_delivery/upload.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dd = digital_delivery;
namespace detail = digital_delivery::detail;

namespace {

void check_target(std::string_view url)
{
    detail::beast_target t;
    if (!detail::parse_beast_target(url, t))
        return;
    DD_FUZZ_CHECK(t.tls == (url[4] == 's' || url[4] == 'S'));
    DD_FUZZ_CHECK(!t.host.empty() && !t.host_header.empty() && !t.target.empty() && t.target.front() == '/');
    DD_FUZZ_CHECK(!t.port.empty() && t.port.size() <= 5 && t.port.find_first_not_of("0123456789") == std::string::npos);
    DD_FUZZ_CHECK(std::stoul(t.port) >= 1 && std::stoul(t.port) <= 65535);
    for (char c : t.target + t.host_header + t.pool_key)
        DD_FUZZ_CHECK(static_cast<unsigned char>(c) > 0x20 && static_cast<unsigned char>(c) < 0x7f);
    for (char c : t.pool_key)
        DD_FUZZ_CHECK(c < 'A' || c > 'Z');
    DD_FUZZ_CHECK(t.pool_key.starts_with(t.tls ? "https://" : "http://"));
    DD_FUZZ_CHECK(t.target.find('#') == std::string::npos);
    std::string_view path_query;
    const std::size_t origin = detail::beast_url_origin_length(url);
    DD_FUZZ_CHECK(origin <= url.size() && detail::beast_url_rest(url.substr(origin), path_query));
}

int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

std::string encoded_segment(std::string_view id)
{
    std::string enc;
    detail::append_pct_encoded(enc, id);
    std::string back;
    for (std::size_t i = 0; i < enc.size(); ++i)
    {
        const char c = enc[i];
        if (c == '%')
        {
            DD_FUZZ_CHECK(i + 2 < enc.size() && hex_value(enc[i + 1]) >= 0 && hex_value(enc[i + 2]) >= 0);
            back += static_cast<char>(hex_value(enc[i + 1]) * 16 + hex_value(enc[i + 2]));
            i += 2;
        }
        else
        {
            DD_FUZZ_CHECK(boost::urls::unreserved_chars(c));
            back += c;
        }
    }
    DD_FUZZ_CHECK(back == id);
    return enc;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 1)
        return 0;
    const unsigned flags = data[0];
    const std::vector<std::string_view> lines = fuzz_lines({reinterpret_cast<const char*>(data + 1), size - 1});
    const std::string_view url = lines[0];
    const std::string_view second = lines.size() > 1 ? lines[1] : std::string_view("o1");

    // The transport's URL validation and split.
    check_target(url);
    (void)detail::url_host(url);
    std::string why;
    (void)detail::validate_raw_path(url, why);

    // A base_url the client accepts, plus an id encoded as one segment, is a
    // request URL the transport accepts.
    std::string base;
    if (detail::is_valid_base_url(url, base, why))
    {
        const std::string request_url = base + "/orders/" + encoded_segment(second) + "/downloads";
        detail::beast_target t;
        DD_FUZZ_CHECK(detail::parse_beast_target(request_url, t));
        check_target(request_url);
    }
    else
        (void)encoded_segment(second);

    // A server-given upload handle.
    dd::upload_handle h;
    h.method = (flags & 1) ? std::string("PUT") : std::string(second);
    h.url = std::string(url);
    for (std::size_t i = 2; i < lines.size(); ++i)
    {
        const auto colon = lines[i].find(':');
        const std::string_view name = lines[i].substr(0, colon);
        const std::string_view value = colon == std::string_view::npos ? std::string_view() : lines[i].substr(colon + 1);
        h.headers.add(name, value);
    }
    const std::string_view base_url = (flags & 2) ? "http://127.0.0.1:8080/api/v1/external"
                                                   : "https://dd.example.com/api/v1/external";
    const dd::error_code ec = detail::validate_upload_handle(h, base_url, (flags & 4) != 0, why);
    DD_FUZZ_CHECK(!ec || ec == dd::client_errc::invalid_url || ec == dd::client_errc::insecure_upload_url);
    // The reason never carries the presigned URL.
    DD_FUZZ_CHECK(!ec || url.find('?') == std::string_view::npos || why.find(url) == std::string::npos);
    const std::string path = detail::url_path_only(url);
    DD_FUZZ_CHECK(path.find('?') == std::string::npos && path.find('#') == std::string::npos);
    return 0;
}
