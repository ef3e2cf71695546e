//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_HTTP_MESSAGE_IPP
#define DIGITAL_DELIVERY_IMPL_HTTP_MESSAGE_IPP

#include <digital_delivery/http_message.hpp>
#include <digital_delivery/impl/http/sansio/header_rules.hpp>

#include <algorithm>
#include <functional>
#include <string>
#include <string_view>

namespace digital_delivery {

DIGITAL_DELIVERY_DECL std::string_view to_string(http_method m) noexcept
{
    switch (m)
    {
    case http_method::get: return "GET";
    case http_method::post: return "POST";
    case http_method::put: return "PUT";
    case http_method::patch: return "PATCH";
    case http_method::delete_: return "DELETE";
    }
    return "GET";
}

DIGITAL_DELIVERY_DECL void http_headers::add(std::string_view name, std::string_view value)
{
    // `name` or `value` may view our own buffer (a value found here and added
    // again): growing the buffer would free what they point to. Copy first.
    const auto inside = [this](std::string_view s) {
        const std::less<const char*> before;
        return !s.empty() && !before(s.data(), data_.data()) && before(s.data(), data_.data() + data_.size());
    };
    if (inside(name) || inside(value))
    {
        const std::string n(name), v(value);
        return add(n, v);
    }
    entry e;
    e.name_off = static_cast<std::uint32_t>(data_.size());
    e.name_len = static_cast<std::uint32_t>(name.size());
    data_.append(name);
    e.value_off = static_cast<std::uint32_t>(data_.size());
    e.value_len = static_cast<std::uint32_t>(value.size());
    data_.append(value);
    entries_.push_back(e);
}

DIGITAL_DELIVERY_DECL void http_headers::erase(std::string_view name)
{
    // Rebuild without the erased fields (header lists are short).
    http_headers kept;
    kept.reserve(entries_.size(), data_.size());
    for (auto f : *this)
        if (!detail::iequals(f.name, name))
            kept.add(f.name, f.value);
    *this = std::move(kept);
}

DIGITAL_DELIVERY_DECL void http_headers::set(std::string_view name, std::string_view value)
{
    if (find(name))
    {
        // `name`/`value` may point into our own buffer: copy first.
        std::string n(name), v(value);
        erase(n);
        add(n, v);
    }
    else
    {
        add(name, value);
    }
}

DIGITAL_DELIVERY_DECL std::optional<std::string_view> http_headers::find(std::string_view name) const noexcept
{
    for (const entry& e : entries_)
        if (detail::iequals(std::string_view(data_).substr(e.name_off, e.name_len), name))
            return std::string_view(data_).substr(e.value_off, e.value_len);
    return std::nullopt;
}

}  // namespace digital_delivery

#endif
