//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// Workflow helpers: pagination, waiting for watermarks, asset edits and raw
// requests. Usage: workflows BASE_URL API_KEY [ORDER_ID]
// (e.g. against the sandbox: workflows http://127.0.0.1:8080/api/v1/external sandbox-key)
//
// Snippets between "//[name" and "//]" are quoted in docs/workflows.md.
// (GCC 12: keep braced temporaries out of co_await expressions; name them.)

#include <digital_delivery.hpp>
#include <digital_delivery/asset_edits.hpp>
#include <digital_delivery/beast_transport.hpp>
#include <digital_delivery/paginate.hpp>
#include <digital_delivery/raw_request.hpp>
#include <digital_delivery/watermark.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/serialize.hpp>

#include <chrono>
#include <cstdio>
#include <string>

namespace dd = digital_delivery;
namespace asio = boost::asio;
using namespace std::chrono_literals;

asio::awaitable<void> count_paid_orders(dd::client& client)
{
    //[paginate_items
    auto orders = dd::paginate(dd::async_list_orders, client, {.status = dd::financial_status::paid, .per_page = 250});
    std::int64_t n = 0;
    while (auto o = co_await orders.async_next())
    {
        ++n;
        if (n % 250 == 0)
            std::printf("%lld / %lld\n", static_cast<long long>(n), static_cast<long long>(*orders.total_count()));
    }
    //]
    std::printf("paid orders: %lld\n", static_cast<long long>(n));
}

asio::awaitable<void> list_asset_pages(dd::client& client)
{
    //[paginate_pages
    auto pages = dd::paginate_pages(dd::async_list_assets, client, {.per_page = 250});
    for (;;)
    {
        auto [ec, page] = co_await pages.async_next(asio::as_tuple(asio::deferred));
        if (ec == dd::workflow_errc::pagination_total_changed || ec == dd::workflow_errc::pagination_page_size_mismatch)
        {
            std::printf("the list changed while paginating: start again\n");
            break;
        }
        if (ec || !page)
            break;
        std::printf("page %lld of %lld: %zu assets\n", static_cast<long long>(pages.pages_fetched()),
                    static_cast<long long>(*pages.total_pages()), page->assets.size());
    }
    //]
}

asio::awaitable<void> wait_for_order(dd::client& client, std::string order_id)
{
    //[wait_for_downloads
    const dd::request_options within_2min{.deadline = std::chrono::steady_clock::now() + 2min};
    auto [ec, d] = co_await dd::async_wait_for_downloads(client, order_id, within_2min, asio::as_tuple(asio::deferred));
    if (ec == dd::client_errc::deadline_exceeded)
        std::printf("still processing after 2 minutes\n");
    else if (!ec)
        for (const auto& e : d.downloads)
            std::printf("%s: %s\n", e.file_name.c_str(), e.download_url.value_or("(no URL)").c_str());
    //]
}

asio::awaitable<void> edit_assets(dd::client& client, std::string product_id, std::string asset_id)
{
    //[asset_edits
    const std::vector<std::string> ids{asset_id};
    auto [ec, product] = co_await dd::async_add_assets(client, product_id, ids, asio::as_tuple(asio::deferred));
    if (ec == dd::workflow_errc::concurrent_modification)
        std::printf("another writer changed the product; re-read it and decide\n");
    //]
}

asio::awaitable<void> raw(dd::client& client)
{
    //[raw_request
    const dd::raw_query query{{"per_page", "1"}};
    dd::diagnostics diag;
    const dd::raw_request r{.method = dd::http_method::get, .path = "/orders", .query = query};
    auto [ec, body] = co_await dd::async_raw_request(client, r, diag, asio::as_tuple(asio::deferred));
    if (ec)
        std::printf("%s: %s\n", ec.message().c_str(), diag.to_string().c_str());
    else
        std::printf("first order: %s\n", boost::json::serialize(body.at("orders").at(0)).c_str());
    //]
}

int main(int argc, char** argv)
{
    if (argc < 3)
    {
        std::fprintf(stderr, "usage: %s BASE_URL API_KEY [ORDER_ID]\n", argv[0]);
        return 2;
    }
    asio::io_context ioc;
    dd::client client(dd::beast_transport(ioc.get_executor()), dd::client_params{.base_url = argv[1], .api_key = argv[2]});
    const std::string order_id = argc > 3 ? argv[3] : "";
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            co_await count_paid_orders(client);
            co_await list_asset_pages(client);
            co_await raw(client);
            if (!order_id.empty())
                co_await wait_for_order(client, order_id);
        },
        [&](std::exception_ptr e) {
            ioc.stop();  // the transport keeps idle keep-alive connections
            if (e)
                std::rethrow_exception(e);
        }
    );
    ioc.run();
}
