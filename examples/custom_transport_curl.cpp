//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// A complete custom transport built on libcurl, plugged into the client.
//
// The transport concept (docs/transport.md) is two members:
//   any_io_executor get_executor();
//   void async_send(http_request, any_completion_handler<void(error_code, http_response)>);
// This one runs each transfer with a libcurl easy handle on a small worker
// pool (libcurl's easy interface blocks), honours per-operation cancellation
// through a progress callback, streams request bodies from a body_source,
// and completes through the handler's executor, never inline.
//
// Usage: custom_transport_curl BASE_URL API_KEY
//        (e.g. a digital-delivery-sandbox: http://127.0.0.1:PORT/api/v1/external sandbox-key)

#include <digital_delivery.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/append.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include <curl/curl.h>

#include <atomic>
#include <cstdio>
#include <future>
#include <memory>
#include <string>

namespace asio = boost::asio;
namespace dd = digital_delivery;

class curl_transport
{
public:
    explicit curl_transport(asio::any_io_executor ex, std::size_t workers = 4)
        : ex_(std::move(ex)), pool_(std::make_shared<asio::thread_pool>(workers))
    {
        static const bool init = [] { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; }();
        (void)init;
    }

    asio::any_io_executor get_executor() const { return ex_; }

    void async_send(dd::http_request req, dd::transport_handler h)
    {
        // Cancellation: the slot handler only flips a flag that the transfer's
        // progress callback reads (libcurl aborts the transfer there).
        auto cancelled = std::make_shared<std::atomic<bool>>(false);
        auto slot = asio::get_associated_cancellation_slot(h);
        if (slot.is_connected())
            slot.assign([cancelled](asio::cancellation_type) { cancelled->store(true); });

        asio::post(*pool_, [ex = ex_, req = std::move(req), h = std::move(h), cancelled]() mutable {
            dd::http_response resp;
            dd::error_code ec = perform(req, resp, *cancelled);
            auto s = asio::get_associated_cancellation_slot(h);
            if (s.is_connected())
                s.clear();
            // Back to the handler's executor (ours when it has none).
            asio::post(ex, asio::append(std::move(h), ec, std::move(resp)));
        });
    }

private:
    struct transfer
    {
        const dd::http_request* req;
        dd::http_response* resp;
        const std::atomic<bool>* cancelled;
        std::uint64_t sent = 0;
        std::vector<char> chunk;
    };

    static std::size_t on_body(char* p, std::size_t sz, std::size_t n, void* ud)
    {
        auto* t = static_cast<transfer*>(ud);
        t->resp->body.append(p, sz * n);
        return sz * n;
    }

    static std::size_t on_header(char* p, std::size_t sz, std::size_t n, void* ud)
    {
        auto* t = static_cast<transfer*>(ud);
        std::string_view line(p, sz * n);
        if (line.starts_with("HTTP/"))
            t->resp->headers.clear();  // a new response (e.g. after 100 Continue)
        else if (auto colon = line.find(':'); colon != std::string_view::npos)
        {
            auto value = line.substr(colon + 1);
            while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
                value.remove_prefix(1);
            while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' '))
                value.remove_suffix(1);
            t->resp->headers.add(line.substr(0, colon), value);
        }
        return sz * n;
    }

    // Bridges the asynchronous body_source to libcurl's blocking read callback.
    static std::size_t on_read(char* p, std::size_t sz, std::size_t n, void* ud)
    {
        auto* t = static_cast<transfer*>(ud);
        std::promise<std::pair<dd::error_code, std::size_t>> done;
        auto fut = done.get_future();
        t->req->body_stream->async_read_some(
            asio::buffer(p, sz * n),
            [&done](dd::error_code ec, std::size_t k) { done.set_value({ec, k}); }
        );
        auto [ec, k] = fut.get();
        if (ec == asio::error::eof)
            return 0;
        if (ec)
            return CURL_READFUNC_ABORT;
        t->sent += k;
        if (t->req->on_body_progress)
            t->req->on_body_progress(t->sent);
        return k;
    }

    static int on_progress(void* ud, curl_off_t, curl_off_t, curl_off_t, curl_off_t)
    {
        return static_cast<transfer*>(ud)->cancelled->load() ? 1 : 0;
    }

    static dd::error_code perform(const dd::http_request& req, dd::http_response& resp, const std::atomic<bool>& cancelled)
    {
        // One easy handle per worker thread: libcurl keeps its connections
        // alive between transfers on the same handle.
        thread_local std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> handle(curl_easy_init(), &curl_easy_cleanup);
        CURL* c = handle.get();
        curl_easy_reset(c);
        transfer t{&req, &resp, &cancelled, 0, {}};

        curl_slist* headers = nullptr;
        for (auto f : req.headers)
            headers = curl_slist_append(headers, (std::string(f.name) + ": " + std::string(f.value)).c_str());
        headers = curl_slist_append(headers, "Expect:");  // no implicit 100-continue

        curl_easy_setopt(c, CURLOPT_URL, req.url.c_str());
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, std::string(dd::to_string(req.method)).c_str());
        if (req.body_stream)
        {
            curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
            curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(req.body_stream->size()));
            curl_easy_setopt(c, CURLOPT_READFUNCTION, &on_read);
            curl_easy_setopt(c, CURLOPT_READDATA, &t);
        }
        else if (!req.body.empty())
        {
            curl_easy_setopt(c, CURLOPT_POSTFIELDS, req.body.data());
            curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
        }
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &on_body);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
        curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &on_header);
        curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
        curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, &on_progress);
        curl_easy_setopt(c, CURLOPT_XFERINFODATA, &t);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        if (req.timeout.count() > 0)
            curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(req.timeout.count()));

        const CURLcode rc = curl_easy_perform(c);
        curl_slist_free_all(headers);
        long status = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        resp.status = static_cast<unsigned>(status);

        switch (rc)
        {
        case CURLE_OK: return {};
        case CURLE_ABORTED_BY_CALLBACK: return asio::error::operation_aborted;
        case CURLE_OPERATION_TIMEDOUT: return dd::client_errc::request_timeout;
        case CURLE_COULDNT_RESOLVE_HOST: return asio::error::host_not_found;
        case CURLE_COULDNT_CONNECT: return asio::error::connection_refused;
        case CURLE_PEER_FAILED_VERIFICATION: return dd::client_errc::tls_certificate_verify_failed;
        case CURLE_SSL_CONNECT_ERROR: return dd::client_errc::tls_error;
        case CURLE_GOT_NOTHING:
        case CURLE_RECV_ERROR:
        case CURLE_SEND_ERROR: return dd::client_errc::connection_closed;
        default: return dd::client_errc::protocol_error;
        }
    }

    asio::any_io_executor ex_;
    std::shared_ptr<asio::thread_pool> pool_;  // shared: copies of the transport share workers
};

static_assert(dd::transport<curl_transport>);

int main(int argc, char** argv)
{
    if (argc < 3)
    {
        std::fprintf(stderr, "usage: %s BASE_URL API_KEY\n", argv[0]);
        return 2;
    }
    asio::io_context ioc;
    dd::client client(curl_transport(ioc.get_executor()), {.base_url = argv[1], .api_key = argv[2]});

    int rc = 1;
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            dd::diagnostics diag;
            auto [ec, page] = co_await dd::async_list_orders(
                client, {.per_page = 5, .sort = dd::order_sort::name_asc}, diag, asio::as_tuple(asio::deferred)
            );
            if (ec)
            {
                std::fprintf(stderr, "list_orders failed: %s (%s)\n", ec.message().c_str(), diag.to_string().c_str());
                co_return;
            }
            std::printf("%lld orders in all; first page:\n", static_cast<long long>(page.pagination.total_count));
            for (const auto& o : page.orders)
                std::printf("  %-8s %-28s %s\n", o.name.c_str(), o.email.c_str(),
                            o.financial_status ? std::string(o.financial_status->str()).c_str() : "-");
            // A typed error through the same transport:
            auto [ec2, missing] = co_await dd::async_get_order(client, "no-such-order", diag, asio::as_tuple(asio::deferred));
            std::printf("get_order(no-such-order): %s [%s]\n", ec2.message().c_str(), diag.to_string().c_str());
            rc = (ec2 == dd::api_errc::order_not_found) ? 0 : 1;
        },
        asio::detached
    );
    ioc.run();
    return rc;
}
