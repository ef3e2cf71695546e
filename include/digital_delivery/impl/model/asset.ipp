//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_ASSET_IPP
#define DIGITAL_DELIVERY_IMPL_ASSET_IPP

// Caller input the API forbids, refused before anything is sent.

#include <digital_delivery/asset.hpp>
#include <digital_delivery/impl/model/validation.hpp>

namespace digital_delivery {

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

}  // namespace digital_delivery

#endif
