// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Helpers shared by the core's translation units (not used by the front end).
#pragma once

#include "service.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <string>
#include <variant>
#include <vector>

namespace dd_sandbox::detail {

namespace json = boost::json;

response json_response(int status, const json::value& v);
response error_response(int status, std::string_view message);
response errors_response(const std::vector<std::string>& errors); // 422
response not_found(std::string_view what);                         // "<what> not found"
response no_content();

// GET of one resource by id: 404 "<what> not found", else 200 {"<key>": to_json(item)}.
template <class Map, class ToJson>
response get_one(const Map& items, const std::string& id, std::string_view what, std::string_view key, ToJson to_json)
{
    auto it = items.find(id);
    if (it == items.end())
        return not_found(what);
    json::object out;
    out[key] = to_json(it->second);
    return json_response(200, out);
}

const std::string* query_get(const query_params& q, std::string_view name); // last non-empty

// Parses the body; an empty body gives null. Malformed -> 400 response.
std::variant<response, json::value> parse_body(const request& req);
// Rails params.require(key): the object under key, or a 400 response.
std::variant<response, const json::object*> require_root(const json::value& body,
                                                         std::string_view key);
// parse_body + require_root: the object under `key` (a copy), or the 400 response.
std::variant<response, json::object> parse_root(const request& req, std::string_view key);

enum class field_state { absent, null, ok, bad };
template <class T>
struct field {
    field_state state = field_state::absent;
    T value{};
    bool present() const { return state != field_state::absent; }
    bool ok() const { return state == field_state::ok; }
};
field<std::string> string_field(const json::object& o, std::string_view key);
field<bool> bool_field(const json::object& o, std::string_view key);
// integers: JSON integers, or doubles with an integral value
field<std::int64_t> int_field(const json::object& o, std::string_view key);

std::string humanize(std::string_view key); // store_product_id -> "Store product"
bool blank(const std::string& s);

struct paging {
    std::int64_t page = 1;
    std::int64_t per_page = 25;
};
// Appends errors for page/per_page.
paging parse_paging(const query_params& q, std::int64_t max_per_page,
                    std::vector<std::string>& errors);
json::object pagination_json(const paging& p, std::size_t total);

// Newest first: created_at descending, then creation order descending.
template <class T>
void sort_newest_first(std::vector<const T*>& hits)
{
    std::sort(hits.begin(), hits.end(), [](const T* x, const T* y) {
        if (x->created_at != y->created_at)
            return x->created_at > y->created_at;
        return x->seq > y->seq;
    });
}

// The list response for one page of `hits` (filtered and sorted):
// {"<key>": [to_json(item)...], "pagination": {...}}.
template <class T, class ToJson>
json::object page_json(const std::vector<const T*>& hits, const paging& p, std::string_view key, ToJson&& to_json)
{
    json::array arr;
    // page >= 1 and 1 <= per_page <= 250 (parse_paging): (page - 1) * per_page
    // overflows for huge pages, so compare page - 1 with the number of full pages.
    const auto size = static_cast<std::int64_t>(hits.size());
    if (p.page - 1 < (size + p.per_page - 1) / p.per_page) {
        const std::int64_t begin = (p.page - 1) * p.per_page;  // < size
        const std::int64_t end = std::min(size, begin + p.per_page);
        for (std::int64_t i = begin; i < end; ++i)
            arr.push_back(to_json(*hits[static_cast<std::size_t>(i)]));
    }
    return json::object{{key, std::move(arr)}, {"pagination", pagination_json(p, hits.size())}};
}

std::string content_disposition(std::string_view filename);
std::optional<std::string> nullable(const field<std::string>& f, const std::optional<std::string>& old);
json::value opt(const std::optional<std::string>& s);
json::value opt(const std::optional<std::int64_t>& v);
json::value opt_time(const std::optional<time_point>& t);

} // namespace dd_sandbox::detail
