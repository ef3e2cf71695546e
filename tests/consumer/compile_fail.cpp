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

std::string make_label();
std::vector<std::string> collect_ids();

void use(dd::client& c, const std::string& named, std::string& named_mutable)
{
#if defined(CASE_missing_path_id)
    (void)dd::async_get_order(c);  // get_order needs one id
#elif defined(CASE_wrong_payload)
    (void)dd::async_attach_assets(c, "o1", dd::notify_request{});  // not its body type
#else
    (void)dd::async_get_order(c, "o1");
    static const std::string ids[] = {"a"};
    (void)dd::async_attach_assets(c, "o1", {.asset_ids = ids});
    // What stays accepted (compile_fail_views.cpp has the refused shapes): literals, named strings (const or not), explicit
    // views, named containers and arrays, optionals of named strings.
    const std::string label = make_label();
    const std::optional<std::string> maybe = label;
    const std::vector<std::string> owned = collect_ids();
    dd::new_asset n{.type = dd::asset_type::licence, .name = label};
    n.name = "literal";
    n.name = named_mutable;
    n.name = std::string_view(named).substr(1);
    n.name = maybe;
    dd::new_digital_product p{.store_product_id = 1, .asset_ids = owned, .custom_message = named};
    p.asset_ids = ids;
    const dd::http_headers::field trace[] = {{"X-Trace", label}, {"X-Other", "literal"}};
    const dd::request_options o{.extra_headers = trace};
    (void)dd::async_create_asset(c, n, o);
    (void)dd::async_create_digital_product(c, p);
    (void)dd::async_list_orders(c, {.q = label, .email = "a@example.com"});
#endif
}
