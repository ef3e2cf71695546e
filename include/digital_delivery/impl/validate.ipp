//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
//
#ifndef DIGITAL_DELIVERY_IMPL_VALIDATE_IPP
#define DIGITAL_DELIVERY_IMPL_VALIDATE_IPP

#include <digital_delivery/detail/validate.hpp>

#include <algorithm>

namespace digital_delivery {
namespace detail {

inline bool is_blank(std::string_view s) noexcept
{
    return std::all_of(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
}

inline error_code check_byte_size(std::int64_t n, std::string& why)
{
    if (n <= 0 || n > max_asset_byte_size)
    {
        why = "byte_size must be between 1 and 2147483648 (2 GB), got " + std::to_string(n);
        return client_errc::invalid_byte_size;
    }
    return {};
}

inline error_code check_ids(id_list ids, std::string_view field, std::string& why)
{
    for (std::size_t i = 0; i < ids.size(); ++i)
        if (is_blank(ids[i]))
        {
            why = std::string(field) + "[" + std::to_string(i) + "] is empty";
            return client_errc::invalid_argument;
        }
    return {};
}

}  // namespace detail

DIGITAL_DELIVERY_DECL error_code validate(const new_asset& a, std::string& why)
{
    switch (a.type)
    {
    case asset_type::internal:
        if (!a.filename || detail::is_blank(*a.filename))
        {
            why = "an internal asset requires a filename";
            return client_errc::missing_required_field;
        }
        if (!a.byte_size)
        {
            why = "an internal asset requires byte_size";
            return client_errc::missing_required_field;
        }
        if (auto ec = detail::check_byte_size(*a.byte_size, why))
            return ec;
        break;
    case asset_type::external:
        if (!a.external_url || detail::is_blank(*a.external_url))
        {
            // The code the API's answer would give, without the round trip.
            why = "an external asset requires a non-blank external_url (refused before sending)";
            return api_errc::external_url_blank;
        }
        break;
    case asset_type::licence: break;
    case asset_type::unknown:
        why = "asset type must be internal, external or licence";
        return client_errc::invalid_argument;
    }
    if (a.content_type && a.type != asset_type::internal)
    {
        why = "content_type applies to internal assets only";
        return client_errc::invalid_argument;
    }
    if (a.external_url && a.type != asset_type::external)
    {
        why = "external_url applies to external assets only";
        return client_errc::invalid_argument;
    }
    if (a.autogenerate_licence_key.value_or(false) && a.type != asset_type::licence)
    {
        why = "autogenerate_licence_key applies to licence assets only";
        return client_errc::invalid_argument;
    }
    if (a.byte_size && a.type != asset_type::internal)
    {
        why = "byte_size applies to internal assets only";
        return client_errc::invalid_argument;
    }
    return {};
}

DIGITAL_DELIVERY_DECL error_code validate(const asset_update& a, std::string& why)
{
    if (a.external_url && detail::is_blank(*a.external_url))
    {
        why = "external_url must not be blank (refused before sending)";
        return api_errc::external_url_blank;
    }
    return {};
}

DIGITAL_DELIVERY_DECL error_code validate(const asset_replacement& a, std::string& why)
{
    if (detail::is_blank(a.filename))
    {
        why = "filename is required";
        return client_errc::missing_required_field;
    }
    return detail::check_byte_size(a.byte_size, why);
}

DIGITAL_DELIVERY_DECL error_code validate(const asset_query& q, std::string& why)
{
    if (q.type && *q.type != asset_type::external && *q.type != asset_type::licence)
    {
        why = "the type filter accepts external and licence only";
        return client_errc::invalid_argument;
    }
    return {};
}

DIGITAL_DELIVERY_DECL error_code validate(const new_digital_product& p, std::string& why)
{
    if (auto ec = detail::check_ids(p.asset_ids, "asset_ids", why))
        return ec;
    if (p.preorder_enabled.value_or(false))
    {
        if (!p.preorder_launch_date)
        {
            why = "a preorder requires preorder_launch_date";
            return client_errc::missing_required_field;
        }
        if (!p.custom_message || detail::is_blank(*p.custom_message))
        {
            why = "a preorder requires custom_message";
            return client_errc::missing_required_field;
        }
    }
    return {};
}

DIGITAL_DELIVERY_DECL error_code validate(const digital_product_update& p, std::string& why)
{
    if (p.asset_ids)
        if (auto ec = detail::check_ids(*p.asset_ids, "asset_ids", why))
            return ec;
    // Enabling a preorder in an update: the server may already hold the date
    // and the message, so only an explicitly blank message is refused here.
    if (p.preorder_enabled.value_or(false) && p.custom_message && detail::is_blank(*p.custom_message))
    {
        why = "a preorder requires a non-blank custom_message";
        return client_errc::invalid_argument;
    }
    return {};
}

DIGITAL_DELIVERY_DECL error_code validate(const asset_ids_request& r, std::string& why)
{
    if (r.asset_ids.empty())
    {
        why = "asset_ids must be a non-empty array";
        return client_errc::empty_asset_ids;
    }
    return detail::check_ids(r.asset_ids, "asset_ids", why);
}

DIGITAL_DELIVERY_DECL error_code validate(const notify_request& r, std::string& why)
{
    if (r.email && detail::is_blank(*r.email))
    {
        why = "email, when given, must not be blank";
        return client_errc::invalid_argument;
    }
    return {};
}

}  // namespace digital_delivery

#endif
