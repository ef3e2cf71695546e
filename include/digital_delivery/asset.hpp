//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_ASSET_HPP
#define DIGITAL_DELIVERY_ASSET_HPP

/// \file
/// Assets: deliverable files and licence keys, their upload handle, and the
/// bodies and queries of the asset endpoints.
///
/// Response models decode tolerantly: a missing or null `std::optional` member
/// is empty, an `id`, nested models and arrays are required, and every other
/// member missing or null keeps its empty value (docs/architecture.md,
/// "Decoding"). Request models send only the optional members that are set.

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/http_message.hpp>
#include <digital_delivery/open_enum.hpp>
#include <digital_delivery/pagination.hpp>
#include <digital_delivery/string_ref.hpp>
#include <digital_delivery/timestamp.hpp>

#include <boost/describe/class.hpp>
#include <boost/describe/enum.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace digital_delivery {

/// The largest byte_size the API accepts: 2 GB = 2147483648 bytes (inclusive).
inline constexpr std::int64_t max_asset_byte_size = 2147483648;

/// The kind of an asset.
enum class asset_type
{
    internal,  ///< File stored by the service; creation returns an upload handle.
    external,  ///< File hosted at an external URL.
    licence,   ///< Licence key.
    unknown,   ///< A type this version does not know (see open_enum::str()).
};
BOOST_DESCRIBE_ENUM(asset_type, internal, external, licence)

/// An asset as GET/POST/PATCH /assets return it.
struct asset
{
    std::string id{};                   ///< UUID. Required.
    open_enum<asset_type> type{};       ///< internal, external or licence.
    std::optional<std::string> name{};  ///< Display name.
    std::optional<std::string> filename{};      ///< "Licence Key" for licence assets.
    std::optional<std::string> external_url{};  ///< Set for external assets.
    std::optional<std::string> content_type{};  ///< "licence/key" for licence assets.
    std::int64_t byte_size{};                 ///< 0 for external and licence assets.
    bool watermark_asset{};           ///< PDF watermarking on delivery (store-level watermarking must be on too).
    bool autogenerate_licence_key{};  ///< Licence assets: a unique key is generated for each purchase.
    timestamp created_at{};           ///< When the asset was created.
    timestamp updated_at{};           ///< When the asset last changed.
};
BOOST_DESCRIBE_STRUCT(
    asset,
    (),
    (id, type, name, filename, external_url, content_type, byte_size, watermark_asset, autogenerate_licence_key, created_at, updated_at)
)

/// An asset inside a digital product.
struct asset_summary
{
    std::string id{};                           ///< UUID. Required.
    open_enum<asset_type> type{};               ///< internal, external or licence.
    std::optional<std::string> name{};          ///< Display name.
    std::optional<std::string> filename{};      ///< "Licence Key" for licence assets.
    std::optional<std::string> external_url{};  ///< Set for external assets.
    std::optional<std::string> content_type{};  ///< MIME type; "licence/key" for licence assets.
    std::int64_t byte_size{};                   ///< 0 for external and licence assets.
    timestamp created_at{};                     ///< When the asset was created.
};
BOOST_DESCRIBE_STRUCT(asset_summary, (), (id, type, name, filename, external_url, content_type, byte_size, created_at))

/// An asset in the attach_assets / detach_assets responses.
struct attached_asset
{
    std::string id{};                           ///< UUID. Required.
    open_enum<asset_type> type{};               ///< internal, external or licence.
    std::optional<std::string> name{};          ///< Display name.
    std::optional<std::string> filename{};      ///< "Licence Key" for licence assets.
    std::optional<std::string> content_type{};  ///< MIME type; "licence/key" for licence assets.
    std::int64_t byte_size{};                   ///< 0 for external and licence assets.
};
BOOST_DESCRIBE_STRUCT(attached_asset, (), (id, type, name, filename, content_type, byte_size))

/// Where and how to PUT the body of an internal asset (valid one hour).
struct upload_handle
{
    std::string method{};    ///< Always "PUT". Required.
    std::string url{};       ///< Presigned storage URL; send it byte-exact. Required.
    http_headers headers{};  ///< Content-Type and Content-Disposition: send exactly these.
    timestamp expires_at{};  ///< When the URL expires. Required.
};
BOOST_DESCRIBE_STRUCT(upload_handle, (), (method, url, headers, expires_at))

// ---- request bodies and queries ---------------------------------------------
//
// Request models refer to the caller's strings (dd::string_ref, dd::id_list):
// the request is built before the call returns, so literals and named strings
// are fine, braced in a co_await too; a temporary std::string or container
// assigned to a field would be gone by then and does not compile
// (docs/operations.md#lifetimes-views-in-copies-inside).

/// POST /assets body (`{"asset": {...}}`). Only the fields you set are sent.
///  - internal: filename and byte_size (1 .. 2147483648) required; content_type optional;
///  - external: external_url required;
///  - licence: name and autogenerate_licence_key are the useful ones.
struct new_asset
{
    asset_type type{asset_type::internal};      ///< Default: internal.
    std::optional<string_ref> filename{};       ///< Internal: required; the suggested name on download.
    std::optional<std::int64_t> byte_size{};    ///< Internal: required, 1 .. 2147483648.
    std::optional<string_ref> content_type{};   ///< Internal only (server default application/octet-stream).
    std::optional<string_ref> external_url{};   ///< External: required, not blank.
    std::optional<string_ref> name{};           ///< Display name.
    std::optional<bool> watermark_asset{};      ///< PDF watermarking on delivery (server default false).
    std::optional<bool> autogenerate_licence_key{};  ///< Licence only (server default false).
};
BOOST_DESCRIBE_STRUCT(
    new_asset,
    (),
    (type, filename, byte_size, content_type, external_url, name, watermark_asset, autogenerate_licence_key)
)

/// PATCH /assets/{id} body. Only the fields you set are sent.
struct asset_update
{
    std::optional<string_ref> name{};  ///< New display name.
    std::optional<string_ref> external_url{};  ///< external assets only; must not be blank.
    std::optional<bool> watermark_asset{};  ///< PDF watermarking on delivery.
    std::optional<bool> autogenerate_licence_key{};  ///< licence assets only.
};
BOOST_DESCRIBE_STRUCT(asset_update, (), (name, external_url, watermark_asset, autogenerate_licence_key))

/// POST /assets/{id}/replace body (Beta).
struct asset_replacement
{
    string_ref filename{};     ///< The new file's name. Required.
    std::int64_t byte_size{};  ///< 1 .. 2147483648.
    std::optional<string_ref> content_type{};  ///< Default: the asset's current content type.
};
BOOST_DESCRIBE_STRUCT(asset_replacement, (), (filename, byte_size, content_type))

/// GET /assets query. Unset fields are not sent.
struct asset_query
{
    std::optional<string_ref> q{};        ///< Partial, case-insensitive match on name or filename.
    std::optional<asset_type> type{};      ///< The API accepts external and licence only.
    std::optional<std::int32_t> page{};    ///< >= 1 (server default 1).
    std::optional<std::int32_t> per_page{};  ///< 1 .. 250 (server default 25).
};
BOOST_DESCRIBE_STRUCT(asset_query, (), (q, type, page, per_page))

// ---- response envelopes ---------------------------------------------------

/// GET /assets: one page of assets.
struct asset_list
{
    std::vector<asset> assets{};                ///< The page's assets. Required.
    digital_delivery::pagination pagination{};  ///< Where this page is. Required.
};
BOOST_DESCRIBE_STRUCT(asset_list, (), (assets, pagination))

/// GET/PATCH /assets/{id}: `{"asset": ...}`
struct asset_envelope
{
    digital_delivery::asset asset{};  ///< The asset. Required.
};
BOOST_DESCRIBE_STRUCT(asset_envelope, (), (asset))

/// POST /assets and POST /assets/{id}/replace: the asset, and the upload
/// handle for internal assets.
struct asset_with_upload
{
    digital_delivery::asset asset{};        ///< The asset. Required.
    std::optional<upload_handle> upload{};  ///< Where to PUT the body: internal assets only.
};
BOOST_DESCRIBE_STRUCT(asset_with_upload, (), (asset, upload))


// ---- validation: input the API forbids, refused before anything is sent --------
// (found by the request functions through ADL; the reason goes to diagnostics)

/// Checks a POST /assets body before it is sent: the fields its type requires
/// are set, none that its type forbids is, byte_size is in range.
/// \param v The body.
/// \param why Set to the reason on failure.
/// \return Empty, or client_errc::missing_required_field, client_errc::invalid_byte_size,
/// client_errc::invalid_argument, api_errc::external_url_blank.
DIGITAL_DELIVERY_DECL error_code validate(const new_asset& v, std::string& why);
/// Checks a PATCH /assets/{id} body before it is sent (external_url not blank).
/// \param v The body.
/// \param why Set to the reason on failure.
/// \return Empty, or api_errc::external_url_blank.
DIGITAL_DELIVERY_DECL error_code validate(const asset_update& v, std::string& why);
/// Checks a POST /assets/{id}/replace body before it is sent.
/// \param v The body.
/// \param why Set to the reason on failure.
/// \return Empty, or client_errc::missing_required_field (no filename),
/// client_errc::invalid_byte_size.
DIGITAL_DELIVERY_DECL error_code validate(const asset_replacement& v, std::string& why);
/// Checks a GET /assets query before it is sent (the type filter is external or licence).
/// \param v The query.
/// \param why Set to the reason on failure.
/// \return Empty, or client_errc::invalid_argument.
DIGITAL_DELIVERY_DECL error_code validate(const asset_query& v, std::string& why);

namespace detail {

/// An answer that must carry an upload handle (a replaced asset, an internal
/// asset to upload) and does not: client_errc::missing_field.
inline error_code require_upload_handle(const asset_with_upload& r, std::string& why)
{
    if (r.upload)
        return {};
    why = "the response has no upload handle";
    return client_errc::missing_field;
}

}  // namespace detail

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/model/asset.ipp>
#endif

#endif
