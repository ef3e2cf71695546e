//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_ENDPOINT_CALL_HPP
#define DIGITAL_DELIVERY_IMPL_ENDPOINT_CALL_HPP

// The definitions of detail::endpoint_ops<D> (declared in
// detail/endpoint_call.hpp): payload validation and encoding, the streaming
// decode of the response, the type-erased launch and the default-token
// awaitable. Header-only mode includes this file from endpoint_call.hpp;
// separate compilation instantiates it once per endpoint in src.hpp.

#include <digital_delivery/detail/default_token.hpp>
#include <digital_delivery/detail/endpoint_call.hpp>
#include <digital_delivery/impl/json/json_decode.hpp>
#include <digital_delivery/impl/json/json_mapping.hpp>

#include <boost/json/serialize.hpp>

#include <string>

namespace digital_delivery {
namespace detail {

// ---- payload -> request -----------------------------------------------------------

/// An enumerator the API knows: never an empty value on the wire
/// (`unknown`, or a value cast from an integer, would drop a filter or send "").
template <class P>
void validate_enums(const P& p, error_code& ec, std::string& why)
{
    boost::mp11::mp_for_each<boost::describe::describe_members<P, boost::describe::mod_public>>([&](auto d) {
        using member_t = std::remove_cvref_t<decltype(p.*d.pointer)>;
        using enum_t = typename std::conditional_t<is_optional<member_t>::value, member_t, std::optional<member_t>>::value_type;
        if constexpr (described_enum<enum_t>)
        {
            const std::optional<enum_t> v(p.*d.pointer);
            if (!ec && v && enum_to_string(*v).empty())
            {
                ec = client_errc::invalid_argument;
                why = std::string(d.name) + " is not a value the API knows (" +
                      std::to_string(static_cast<long long>(*v)) + ")";
            }
        }
    });
}

template <class P>
void validate_payload(const P& p, error_code& ec, std::string& why)
{
    validate_enums(p, ec, why);
    if constexpr (requires(std::string& w) { validate(p, w); })
        if (!ec)
            ec = validate(p, why);
}

template <class D>
void validate_query(const typename D::query& q, error_code& ec, std::string& why)
{
    if constexpr (requires { q.page; })
    {
        if (q.page && *q.page < 1)
        {
            ec = client_errc::invalid_page;
            why = "page must be at least 1";
            return;
        }
    }
    if constexpr (requires { q.per_page; })
    {
        if (q.per_page && (*q.per_page < 1 || *q.per_page > D::max_per_page))
        {
            ec = client_errc::invalid_per_page;
            why = "per_page must be between 1 and " + std::to_string(D::max_per_page);
            return;
        }
    }
    validate_payload(q, ec, why);
}

template <class D>
void endpoint_ops<D>::encode_query(const query_param<D>& q, query_params& out, error_code& ec, std::string& why)
{
    if constexpr (!std::is_void_v<typename D::query>)
    {
        validate_query<D>(q, ec, why);
        detail::encode_query(q, out);
    }
}

template <class D>
void endpoint_ops<D>::prepare(
    const client_impl& impl,
    std::span<const std::string_view> ids,
    const payload_param<D>* payload,
    const request_options* opts,
    prepared_request& out
)
{
    constexpr endpoint_info info = endpoint_info_of<D>();
    error_code vec;
    std::string why;
    std::string body;
    query_params query;
    const query_params* qp = nullptr;
    if constexpr (!std::is_void_v<typename D::query>)
    {
        if (payload)
        {
            encode_query(*payload, query, vec, why);
            qp = &query;
        }
    }
    else if constexpr (!std::is_void_v<typename D::body>)
    {
        boost::json::value v;
        if (payload)
        {
            validate_payload(*payload, vec, why);
            encode_value(v, *payload);
        }
        else
        {
            v.emplace_object();
        }
        if constexpr (!D::body_root.empty())
        {
            boost::json::value wrapped;
            wrapped.emplace_object()[D::body_root] = std::move(v);
            body = boost::json::serialize(wrapped);
        }
        else
        {
            body = boost::json::serialize(v);
        }
    }
    impl.prepare(out, info, ids, qp, std::move(body), opts);
    if (vec && !out.error)
    {
        out.error = vec;
        out.error_message = std::move(why);
    }
}

// ---- response -> result -----------------------------------------------------------

/// Decodes a response body into the descriptor's result, streaming (no DOM).
/// An envelope of one member (`{"order": ...}`) is decoded straight into the
/// result. On failure the result is value-initialised (nothing partial) and
/// the diagnostics get the reason with the failing JSON path.
template <class D>
error_code decode_response(const std::string& body, result_t<D>& out, diagnostics* diag)
{
    using response = typename D::response;
    std::string* message = diag ? &diag->client_message : nullptr;
    error_code ec;
    if constexpr (std::is_same_v<result_t<D>, response>)
    {
        ec = decode_json_into(body, out, message);
    }
    else
    {
        ec = decode_json(body, json_slot{&json_struct_decoding<response, true>::value, &out}, message);
    }
    if (ec)
    {
        out = result_t<D>{};
        return ec;
    }
    // What the descriptor requires of a decoded answer (the result is kept:
    // it says what the server did).
    if constexpr (requires(std::string& why) { D::check_result(out, why); })
    {
        std::string why;
        if ((ec = D::check_result(out, why)) && message)
            *message = std::move(why);
    }
    return ec;
}

template <class D>
struct decoding_handler
{
    using inner_handler_type = boost::asio::any_completion_handler<signature_t<D>>;
    inner_handler_type handler;
    diagnostics* diag;

    void operator()(error_code ec, http_response r)
    {
        if constexpr (std::is_void_v<result_t<D>>)
        {
            std::move(handler)(ec);
        }
        else
        {
            result_t<D> out{};
            if (!ec)
            {
                ec = decode_response<D>(r.body, out, diag);
                if (ec && diag)
                    diag->http_status = r.status;
            }
            std::move(handler)(ec, std::move(out));
        }
    }
};

template <class D>
void endpoint_ops<D>::launch(std::shared_ptr<client_impl> impl, prepared_request&& p, diagnostics* diag, handler_type h)
{
    auto* raw = impl.get();
    raw->async_execute(std::move(impl), std::move(p), diag, raw_handler(decoding_handler<D>{std::move(h), diag}));
}

template <class D>
boost::asio::awaitable<result_t<D>> endpoint_ops<D>::await(
    std::shared_ptr<client_impl> impl,
    prepared_request&& p,
    diagnostics* diag
)
{
    return initiate_default<signature_t<D>>(endpoint_initiation<D>{}, diag, std::move(impl), std::move(p));
}

}  // namespace detail
}  // namespace digital_delivery

#endif
