// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// A temporary assigned to a view-typed member (dd::string_ref, dd::list_ref,
// dd::trace_context_ref)
// of a request model, request_options, an upload's parameters or a raw request
// would be destroyed at the end of the statement, before the request is built.
// Each CASE_* must fail to compile with the library's own message
// (tests/consumer/CMakeLists.txt matches it); with no CASE_ defined the
// accepted shapes must compile (the control). Only the headers that declare
// the members are included: each case is one compiler run.
#include <digital_delivery/asset.hpp>
#include <digital_delivery/digital_product.hpp>
#include <digital_delivery/order.hpp>
#include <digital_delivery/request_options.hpp>
#include <digital_delivery/upload_options.hpp>
#ifdef CASE_dangling_raw_body
#include <digital_delivery/raw_request.hpp>
#endif
#if defined(CASE_dangling_path_id) || defined(CASE_dangling_edit_ids)
#include <digital_delivery/asset_edits.hpp>
#include <digital_delivery/endpoints.hpp>
#endif

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dd = digital_delivery;

std::string make_label();
std::vector<std::string> collect_ids();
void send(const dd::new_asset&, const dd::request_options&);

void fill(const std::string& named, std::string& named_mutable)
{
#if defined(CASE_dangling_optional_string)
    dd::new_asset n;
    n.type = dd::asset_type::licence;
    n.name = std::string("probe key");  // a model's optional string
    send(n, {});
#elif defined(CASE_dangling_required_string)
    dd::asset_replacement r;
    r.filename = make_label() + ".pdf";  // a model's required string
#elif defined(CASE_dangling_query_string)
    dd::order_query q{.email = std::to_string(7) + "@example.com"};  // a query's string, designated
#elif defined(CASE_dangling_id_list)
    dd::asset_ids_request r;
    r.asset_ids = collect_ids();  // an id list
#elif defined(CASE_dangling_braced_id_list)
    dd::new_digital_product p{.store_product_id = 1, .asset_ids = {named, named_mutable}};  // a braced id list
#elif defined(CASE_dangling_header_value)
    const dd::http_headers::field trace[] = {{"X-Trace", make_label()}};  // a header's value
#elif defined(CASE_dangling_header_list)
    dd::request_options o;
    o.extra_headers = std::vector<dd::http_headers::field>{{"X-Trace", "a"}};  // the header list
#elif defined(CASE_dangling_upload_parameter)
    dd::upload_asset_params p;
    p.name = make_label();  // an upload helper's parameter
#elif defined(CASE_dangling_raw_body)
    dd::raw_request r{.method = dd::http_method::post, .path = "/assets"};
    r.body = std::string(R"({"asset":{"type":"licence"}})");  // a raw request's body
#elif defined(CASE_dangling_trace_parent)
    dd::request_options o{.trace_parent = dd::parse_trace_context(named)};  // a trace parent
#elif defined(CASE_dangling_path_id)
    dd::client& c = *static_cast<dd::client*>(nullptr);
    (void)dd::async_get_order(c, "o" + std::to_string(7));  // an operation's id
#elif defined(CASE_dangling_edit_ids)
    dd::client& c = *static_cast<dd::client*>(nullptr);
    (void)dd::async_add_assets(c, named, collect_ids());  // a workflow helper's id list
#else
    // Accepted: literals, named strings (const or not), explicit views, named
    // containers and arrays, optionals of named strings.
    const std::string label = make_label();
    const std::optional<std::string> maybe = label;
    const std::vector<std::string> owned = collect_ids();
    static const std::string ids[] = {"a"};
    dd::new_asset n{.type = dd::asset_type::licence, .name = label};
    n.name = "literal";
    n.name = named_mutable;
    n.name = std::string_view(named).substr(1);
    n.name = maybe;
    dd::new_digital_product p{.store_product_id = 1, .asset_ids = owned, .custom_message = named};
    p.asset_ids = ids;
    const dd::http_headers::field trace[] = {{"X-Trace", label}, {"X-Other", "literal"}};
    const std::optional<dd::trace_context> parent = dd::parse_trace_context(label);
    const dd::request_options o{.extra_headers = trace, .trace_parent = parent};
    dd::request_options o2;
    o2.trace_parent = *parent;
    (void)o2;
    const dd::order_query q{.q = label, .email = "a@example.com"};
    dd::upload_asset_params up{.filename = label};
    up.content_type = "application/pdf";
    send(n, o);
    (void)p;
    (void)q;
    (void)up;
#endif
}
