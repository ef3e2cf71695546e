// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// libFuzzer target: decoding a response (docs/reliability.md).
//
// Input: byte 0 picks the endpoint whose response is decoded, byte 1 the HTTP
// status and Content-Type of the error classification, the rest is the body.
// Each input goes through what the client does with a response body:
//  - detail::decode_response<D> (the streaming, describe-driven decoder of
//    every model: assets, digital products, orders, order lists, downloads,
//    upload handles, the notify/attach/detach results), for the endpoint D;
//  - detail::classify_api_response (the JSON error body: error, errors, code,
//    the known server messages) and detail::classify_storage_response (S3's
//    XML error body), with the status byte 1 picks.
// Checked: a failed decode reports a decoding error (never another code) and
// a reason; a classified non-2xx response always has an error; a 2xx never.
#include "fuzz_check.hpp"

#include <digital_delivery/custom_endpoint.hpp>
#include <digital_delivery/diagnostics.hpp>
#include <digital_delivery/endpoints.hpp>
#include <digital_delivery/error.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace dd = digital_delivery;

namespace {

bool is_decoding_error(const dd::error_code& ec)
{
    return ec == dd::client_errc::invalid_json || ec == dd::client_errc::missing_field ||
           ec == dd::client_errc::wrong_type || ec == dd::client_errc::invalid_timestamp;
}

template <class D>
void decode_one(const std::string& body)
{
    if constexpr (!std::is_void_v<dd::detail::result_t<D>>)
    {
        dd::detail::result_t<D> out{};
        dd::diagnostics diag;
        const dd::error_code ec = dd::detail::decode_response<D>(body, out, &diag);
        DD_FUZZ_CHECK(!ec || (is_decoding_error(ec) && !diag.client_message.empty()));
    }
}

using decode_fn = void (*)(const std::string&);
#define DD_FUZZ_DECODER(name) &decode_one<dd::endpoints::name>,
constexpr decode_fn decoders[] = {DIGITAL_DELIVERY_ENDPOINTS(DD_FUZZ_DECODER)};
#undef DD_FUZZ_DECODER

constexpr std::array<unsigned, 16> statuses{200, 201, 204, 400, 401, 403, 404, 409,
                                            422, 429, 500, 502, 503, 302, 99, 600};

void classify(unsigned char sel, const std::string& body)
{
    dd::http_response r;
    r.status = statuses[sel % statuses.size()];
    if (sel & 0x10)
        r.headers.add("Content-Type", (sel & 0x20) ? "application/json; charset=utf-8" : "application/xml");
    if (sel & 0x40)
        r.headers.add("Retry-After", (sel & 0x80) ? "30" : "Wed, 21 Oct 2015 07:28:00 GMT");
    r.body = body;
    const bool ok = r.status >= 200 && r.status < 300;
    dd::diagnostics api_diag;
    DD_FUZZ_CHECK(static_cast<bool>(dd::detail::classify_api_response(r, &api_diag)) != ok);
    dd::diagnostics storage_diag;
    DD_FUZZ_CHECK(static_cast<bool>(dd::detail::classify_storage_response(r, &storage_diag)) != ok);
    (void)api_diag.to_string();
    (void)storage_diag.to_string();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 2)
        return 0;
    const std::string body(reinterpret_cast<const char*>(data + 2), size - 2);
    decoders[data[0] % std::size(decoders)](body);
    classify(data[1], body);
    return 0;
}
