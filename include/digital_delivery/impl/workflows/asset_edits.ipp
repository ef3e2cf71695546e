//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_ASSET_EDITS_IPP
#define DIGITAL_DELIVERY_IMPL_ASSET_EDITS_IPP

#include <digital_delivery/asset_edits.hpp>
#include <digital_delivery/impl/engine/endpoint_call.hpp>
#include <digital_delivery/endpoints.hpp>

#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/compose.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <array>
#include <optional>
#include <span>

namespace digital_delivery {

DIGITAL_DELIVERY_DECL std::vector<std::string> detail::edited_asset_ids(
    const std::vector<std::string>& current,
    const std::vector<std::string>& ids,
    asset_edit_kind kind
)
{
    auto contains = [](const std::vector<std::string>& v, const std::string& s) {
        return std::find(v.begin(), v.end(), s) != v.end();
    };
    std::vector<std::string> out;
    if (kind == asset_edit_kind::add)
    {
        out = current;
        for (const auto& id : ids)
            if (!contains(out, id))
                out.push_back(id);
    }
    else
    {
        for (const auto& id : current)
            if (!contains(ids, id))
                out.push_back(id);
    }
    return out;
}

DIGITAL_DELIVERY_DECL std::vector<std::string> detail::asset_ids_of(const digital_product& p)
{
    std::vector<std::string> out;
    out.reserve(p.assets.size());
    for (const auto& a : p.assets)
        out.push_back(a.id);
    return out;
}

namespace detail {

struct asset_edit_op
{
    std::shared_ptr<client_impl> impl;
    std::string id;
    std::vector<std::string> ids;
    asset_edit_kind kind;
    asset_edit_options opts;
    stored_request_options request;
    diagnostics* diag;
    enum class step
    {
        start,
        rejected,
        read,
        recheck,
        patch,
    } st = step::start;
    std::optional<digital_product> first;
    std::vector<std::string> target;
    error_code reject_ec;

    using product_handler = boost::asio::any_completion_handler<void(error_code, digital_product)>;

    template <class Self>
    void get(Self& self)
    {
        prepared_request p;
        const std::array<std::string_view, 1> path_ids{id};
        endpoint_ops<endpoints::get_digital_product>::prepare(*impl, path_ids, nullptr, &request.get(), p);
        // Copy what the call needs before `self` (which owns this op) is moved.
        auto i = impl;
        auto* d = diag;
        endpoint_ops<endpoints::get_digital_product>::launch(std::move(i), std::move(p), d, product_handler(std::move(self)));
    }

    template <class Self>
    void operator()(Self& self)
    {
        if (st == step::rejected)
        {
            self.complete(reject_ec, digital_product{});
            return;
        }
        for (std::size_t i = 0; i < ids.size(); ++i)
            if (ids[i].empty())
            {
                reject_ec = client_errc::invalid_argument;
                if (diag)
                {
                    diag->clear();
                    diag->client_message = "asset_ids[" + std::to_string(i) + "] is empty";
                }
                st = step::rejected;
                auto ex = impl->get_executor();
                boost::asio::post(ex, std::move(self));
                return;
            }
        st = step::read;
        get(self);
    }

    template <class Self>
    void operator()(Self& self, error_code ec, digital_product p)
    {
        if (!ec && self.get_cancellation_state().cancelled() != boost::asio::cancellation_type::none)
            ec = boost::asio::error::operation_aborted;
        if (ec)
        {
            self.complete(ec, digital_product{});
            return;
        }
        switch (st)
        {
        case step::read:
            target = edited_asset_ids(asset_ids_of(p), ids, kind);
            if (target == asset_ids_of(p))
            {
                self.complete({}, std::move(p));  // nothing to change: no write
                return;
            }
            first.emplace(std::move(p));
            if (opts.recheck_before_patch)
            {
                st = step::recheck;
                get(self);
                return;
            }
            patch(self);
            return;
        case step::recheck:
            if (asset_ids_of(p) != asset_ids_of(*first) || p.updated_at != first->updated_at)
            {
                if (diag)
                    diag->client_message =
                        "the digital product changed between the read and the re-read before the PATCH; nothing was written";
                self.complete(workflow_errc::concurrent_modification, std::move(p));
                return;
            }
            patch(self);
            return;
        case step::patch:
            if (asset_ids_of(p) != target)
            {
                if (diag)
                    diag->client_message =
                        "the PATCH result does not hold exactly the intended asset list: another writer interfered";
                self.complete(workflow_errc::concurrent_modification, std::move(p));
                return;
            }
            self.complete({}, std::move(p));
            return;
        default: break;
        }
    }

    template <class Self>
    void patch(Self& self)
    {
        st = step::patch;
        digital_product_update body;
        body.asset_ids = target;
        prepared_request p;
        const std::array<std::string_view, 1> path_ids{id};
        endpoint_ops<endpoints::update_digital_product>::prepare(*impl, path_ids, &body, &request.get(), p);
        auto i = impl;
        auto* d = diag;
        endpoint_ops<endpoints::update_digital_product>::launch(std::move(i), std::move(p), d, product_handler(std::move(self)));
    }
};

}  // namespace detail

DIGITAL_DELIVERY_DECL void detail::async_edit_assets(
    std::shared_ptr<client_impl> impl,
    std::string product_id,
    std::vector<std::string> ids,
    asset_edit_kind kind,
    asset_edit_options opts,
    stored_request_options request,
    diagnostics* diag,
    asset_edit_handler h
)
{
    auto ex = impl->get_executor();
    boost::asio::async_compose<asset_edit_handler, void(error_code, digital_product)>(
        asset_edit_op{std::move(impl), std::move(product_id), std::move(ids), kind, std::move(opts), std::move(request), diag, asset_edit_op::step::start, {}, {}, {}},
        h,
        ex
    );
}

}  // namespace digital_delivery

#endif
