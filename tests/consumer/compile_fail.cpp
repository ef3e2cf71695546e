// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Each CASE_* must fail to compile; with no CASE_ defined it must compile
// (the control), so a failure means the check itself works.
#include <digital_delivery.hpp>

#include <string>
#include <vector>

namespace dd = digital_delivery;

#ifdef CASE_bad_path_template
struct bad : dd::endpoint_defaults
{
    static constexpr dd::http_method method = dd::http_method::get;
    static constexpr std::string_view path = "/orders/{id/downloads";  // unbalanced placeholder
    using response = dd::order_envelope;
};
inline constexpr dd::request_fn<bad> bad_fn{};
#endif

void use(dd::client& c)
{
#if defined(CASE_missing_path_id)
    (void)dd::async_get_order(c);  // get_order needs one id
#elif defined(CASE_wrong_payload)
    (void)dd::async_attach_assets(c, "o1", dd::notify_request{});  // not its body type
#else
    (void)dd::async_get_order(c, "o1");
    static const std::string ids[] = {"a"};
    (void)dd::async_attach_assets(c, "o1", {.asset_ids = ids});
#endif
}
