// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// A stateful stand-in of the API's asset and digital-product endpoints and of
// the presigned storage, as a transport (no sockets): the sync tests run
// whole plans against it, crash it at any request (the request is processed,
// its answer lost, and nothing is sent after it), and compare its assets'
// bytes with the files by SHA-256.
#ifndef DIGITAL_DELIVERY_TESTS_UPLOAD_SYNC_STORE_HPP
#define DIGITAL_DELIVERY_TESTS_UPLOAD_SYNC_STORE_HPP

#include <digital_delivery/error.hpp>
#include <digital_delivery/http_message.hpp>
#include <digital_delivery/testing/fake_transport.hpp>
#include <digital_delivery/testing/virtual_clock.hpp>
#include <digital_delivery/timestamp.hpp>
#include <digital_delivery/transport.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/append.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace dd_test {

class sync_store
{
public:
    struct stored_asset
    {
        std::string id;
        std::string filename;
        std::optional<std::string> name;
        std::optional<std::string> content_type;
        std::int64_t byte_size = 0;
        std::string body;          // what the storage holds (empty: no body yet)
        bool has_body = false;
        std::int64_t created_us = 0;
        std::int64_t updated_us = 0;
        // A pending upload: the declared size and filename of the last create/replace.
        std::int64_t pending_size = 0;
        std::string pending_filename;
        std::optional<std::string> pending_content_type;
    };
    struct product
    {
        std::string id;
        std::vector<std::string> asset_ids;
    };

    std::map<std::string, stored_asset> assets;
    std::map<std::string, product> products;
    std::optional<std::size_t> count_quota;  // asset_count_limit_exceeded above it
    std::vector<std::string> log;            // "METHOD target" of each request processed
    /// Crash after processing the n-th request (1-based): its answer is lost
    /// and every later request fails as not sent.
    std::optional<std::size_t> crash_after;
    bool crashed = false;
    std::size_t in_flight_puts = 0, max_in_flight_puts = 0;

    std::int64_t now_us() const
    {
        return std::chrono::duration_cast<std::chrono::microseconds>(
                   digital_delivery::testing::virtual_clock::system_now().time_since_epoch())
                   .count() +
               tick_;
    }

    std::string asset_json(const stored_asset& a) const
    {
        boost::json::object o;
        o["id"] = a.id;
        o["type"] = "internal";
        o["name"] = a.name ? boost::json::value(*a.name) : boost::json::value(nullptr);
        o["filename"] = a.filename;
        o["external_url"] = nullptr;
        o["content_type"] = a.content_type.value_or("application/octet-stream");
        o["byte_size"] = a.byte_size;
        o["watermark_asset"] = false;
        o["autogenerate_licence_key"] = false;
        o["created_at"] = ts(a.created_us);
        o["updated_at"] = ts(a.updated_us);
        return boost::json::serialize(o);
    }

    /// The points of the processed requests, as the API charges them.
    std::int64_t points() const
    {
        std::int64_t p = 0;
        for (const auto& l : log)
            if (l.rfind("PUT ", 0) != 0)
                p += l.rfind("GET ", 0) == 0 ? 1 : 2;
        return p;
    }
    std::size_t count(const std::string& prefix) const
    {
        return static_cast<std::size_t>(std::count_if(log.begin(), log.end(), [&](const std::string& l) { return l.rfind(prefix, 0) == 0; }));
    }

    /// A transport onto this store (one per run: a new client each time).
    class transport
    {
    public:
        transport(boost::asio::any_io_executor ex, sync_store& s) : ex_(std::move(ex)), s_(&s) {}
        boost::asio::any_io_executor get_executor() { return ex_; }
        void async_send(digital_delivery::http_request req, digital_delivery::transport_handler h)
        {
            s_->handle(ex_, std::move(req), std::move(h));
        }

    private:
        boost::asio::any_io_executor ex_;
        sync_store* s_;
    };

private:
    std::int64_t tick_ = 0;
    int next_id_ = 1;

    static std::string ts(std::int64_t us)
    {
        return digital_delivery::format_timestamp(digital_delivery::timestamp(std::chrono::microseconds(us)));
    }

    static void complete(const boost::asio::any_io_executor& ex, digital_delivery::transport_handler h,
                         digital_delivery::error_code ec, digital_delivery::http_response r)
    {
        // Through the handler's associated executor, never inline (as fake_transport).
        boost::asio::post(ex, boost::asio::append(std::move(h), ec, std::move(r)));
    }

    static digital_delivery::http_response json(unsigned status, std::string body)
    {
        digital_delivery::http_response r;
        r.status = status;
        r.headers.set("Content-Type", "application/json");
        r.body = std::move(body);
        return r;
    }

    void answer(const boost::asio::any_io_executor& ex, digital_delivery::transport_handler h, digital_delivery::http_response r)
    {
        if (crash_after && log.size() >= *crash_after)
        {
            // The request was processed; its answer is lost with the process.
            crashed = true;
            complete(ex, std::move(h), boost::asio::error::connection_reset, {});
            return;
        }
        complete(ex, std::move(h), {}, std::move(r));
    }

    std::string upload_json(const stored_asset& a)
    {
        return R"({"asset":)" + asset_json(a) + R"(,"upload":{"method":"PUT","url":"https://storage.example/put/)" + a.id + "/" +
               std::to_string(++tick_) + R"(?X-Amz-Signature=sig","headers":{},"expires_at":")" + ts(now_us() + 3'600'000'000) +
               R"("}})";
    }

    static std::string query_value(const std::string& target, const std::string& key)
    {
        auto q = target.find('?');
        if (q == std::string::npos)
            return {};
        std::string rest = target.substr(q + 1);
        std::size_t pos = 0;
        while (pos < rest.size())
        {
            auto amp = rest.find('&', pos);
            std::string kv = rest.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
            if (kv.rfind(key + "=", 0) == 0)
                return kv.substr(key.size() + 1);
            if (amp == std::string::npos)
                break;
            pos = amp + 1;
        }
        return {};
    }

    void handle(const boost::asio::any_io_executor& ex, digital_delivery::http_request req, digital_delivery::transport_handler h)
    {
        using digital_delivery::http_method;
        if (crashed)
        {
            complete(ex, std::move(h), boost::asio::error::connection_refused, {});  // a not-sent code
            return;
        }
        std::string target(digital_delivery::testing::fake_transport::target_of(req.url));
        const std::string api = "/api/v1/external";
        const char* m = req.method == http_method::get      ? "GET"
                        : req.method == http_method::post   ? "POST"
                        : req.method == http_method::put    ? "PUT"
                        : req.method == http_method::patch  ? "PATCH"
                        : req.method == http_method::delete_ ? "DELETE"
                                                              : "?";
        if (req.method == http_method::put)
        {
            put(ex, std::move(req), std::move(h), target);
            return;
        }
        if (target.rfind(api, 0) == 0)
            target = target.substr(api.size());
        log.push_back(std::string(m) + " " + target);
        const std::string path = target.substr(0, target.find('?'));
        ++tick_;
        if (req.method == http_method::get && path == "/assets")
        {
            const int page = std::max(1, std::atoi(query_value(target, "page").c_str()));
            const int per = std::max(1, std::atoi(query_value(target, "per_page").c_str()));
            std::string items;
            int i = 0;
            for (const auto& [id, a] : assets)
            {
                if (i >= (page - 1) * per && i < page * per)
                    items += (items.empty() ? "" : ",") + asset_json(a);
                ++i;
            }
            const int total_pages = std::max(1, (static_cast<int>(assets.size()) + per - 1) / per);
            return answer(ex, std::move(h),
                          json(200, R"({"assets":[)" + items + R"(],"pagination":{"current_page":)" + std::to_string(page) +
                                        R"(,"per_page":)" + std::to_string(per) + R"(,"total_count":)" +
                                        std::to_string(assets.size()) + R"(,"total_pages":)" + std::to_string(total_pages) + "}}"));
        }
        if (req.method == http_method::post && path == "/assets")
        {
            auto body = boost::json::parse(req.body).as_object().at("asset").as_object();
            if (count_quota && assets.size() >= *count_quota)
                return answer(ex, std::move(h),
                              json(422, R"({"error":"Asset count limit exceeded","code":"asset_count_limit_exceeded"})"));
            stored_asset a;
            a.id = "a" + std::to_string(next_id_++);
            a.filename = std::string(body.at("filename").as_string());
            a.byte_size = body.at("byte_size").to_number<std::int64_t>();
            if (body.contains("name"))
                a.name = std::string(body.at("name").as_string());
            if (body.contains("content_type"))
                a.content_type = std::string(body.at("content_type").as_string());
            a.created_us = a.updated_us = now_us();
            a.pending_size = a.byte_size;
            a.pending_filename = a.filename;
            a.pending_content_type = a.content_type;
            auto& stored = assets[a.id] = a;
            return answer(ex, std::move(h), json(201, upload_json(stored)));
        }
        const std::string prefix = "/assets/";
        if (path.rfind(prefix, 0) == 0)
        {
            std::string id = path.substr(prefix.size());
            const bool replace = id.size() > 8 && id.substr(id.size() - 8) == "/replace";
            if (replace)
                id = id.substr(0, id.size() - 8);
            auto it = assets.find(id);
            if (it == assets.end())
                return answer(ex, std::move(h), json(404, R"({"error":"Asset not found"})"));
            if (replace && req.method == http_method::post)
            {
                auto body = boost::json::parse(req.body).as_object().at("asset").as_object();
                it->second.pending_size = body.at("byte_size").to_number<std::int64_t>();
                it->second.pending_filename = std::string(body.at("filename").as_string());
                if (body.contains("content_type"))
                    it->second.pending_content_type = std::string(body.at("content_type").as_string());
                return answer(ex, std::move(h), json(200, upload_json(it->second)));
            }
            if (req.method == http_method::get)
                return answer(ex, std::move(h), json(200, R"({"asset":)" + asset_json(it->second) + "}"));
            if (req.method == http_method::delete_)
            {
                assets.erase(it);
                for (auto& [pid, p] : products)
                    std::erase(p.asset_ids, id);
                digital_delivery::http_response r;
                r.status = 204;
                return answer(ex, std::move(h), std::move(r));
            }
        }
        if (req.method == http_method::get && path == "/digital_products")
        {
            std::string items;
            for (const auto& [id, p] : products)
                items += (items.empty() ? "" : ",") + product_json(p);
            return answer(ex, std::move(h),
                          json(200, R"({"digital_products":[)" + items +
                                        R"(],"pagination":{"current_page":1,"per_page":100,"total_count":)" +
                                        std::to_string(products.size()) + R"(,"total_pages":1}})"));
        }
        if (path.rfind("/digital_products/", 0) == 0)
        {
            auto it = products.find(path.substr(std::string("/digital_products/").size()));
            if (it == products.end())
                return answer(ex, std::move(h), json(404, R"({"error":"Digital product not found"})"));
            if (req.method == http_method::patch)
            {
                auto body = boost::json::parse(req.body).as_object().at("digital_product").as_object();
                it->second.asset_ids.clear();
                for (const auto& v : body.at("asset_ids").as_array())
                    it->second.asset_ids.emplace_back(v.as_string());
            }
            return answer(ex, std::move(h), json(200, R"({"digital_product":)" + product_json(it->second) + "}"));
        }
        answer(ex, std::move(h), json(404, R"({"error":"Not found"})"));
    }

    std::string product_json(const product& p) const
    {
        std::string items;
        for (const auto& id : p.asset_ids)
        {
            auto it = assets.find(id);
            if (it == assets.end())
                continue;
            const auto& a = it->second;
            items += std::string(items.empty() ? "" : ",") + R"({"id":")" + a.id + R"(","type":"internal","name":null,"filename":")" +
                     a.filename + R"(","external_url":null,"content_type":null,"byte_size":)" + std::to_string(a.byte_size) +
                     R"(,"created_at":")" + ts(a.created_us) + R"("})";
        }
        return R"({"id":")" + p.id + R"(","store_product_id":7,"store_variant_id":null,"assets":[)" + items +
               R"(],"upsert_always":false,"custom_message":null,"preorder_enabled":false,"preorder_launch_date":null,)"
               R"("preorder_subject":null,"preorder_heading":null,"preorder_description":null,)"
               R"("created_at":"2024-05-01T12:00:00Z","updated_at":"2024-05-01T12:00:00Z"})";
    }

    struct put_state
    {
        // (Boost 1.81's any_completion_handler move assignment recurses: move-construct only.)
        put_state(digital_delivery::http_request r, digital_delivery::transport_handler hh) : req(std::move(r)), h(std::move(hh)) {}
        digital_delivery::http_request req;
        digital_delivery::transport_handler h;
        std::string id;
        std::string body;
        std::vector<char> buf = std::vector<char>(4096);
    };

    void put(const boost::asio::any_io_executor& ex, digital_delivery::http_request req, digital_delivery::transport_handler h,
             const std::string& target)
    {
        // /put/<id>/<n>?...
        std::string rest = target.substr(std::string("/put/").size());
        auto st = std::make_shared<put_state>(std::move(req), std::move(h));
        st->id = rest.substr(0, rest.find('/'));
        ++in_flight_puts;
        max_in_flight_puts = std::max(max_in_flight_puts, in_flight_puts);
        read_body(ex, std::move(st));
    }

    void read_body(const boost::asio::any_io_executor& ex, std::shared_ptr<put_state> st)
    {
        st->req.body_stream->async_read_some(boost::asio::buffer(st->buf), [this, ex, st](digital_delivery::error_code ec, std::size_t n) mutable {
            if (!ec && n > 0)
            {
                st->body.append(st->buf.data(), n);
                if (st->req.on_body_progress)
                    st->req.on_body_progress(st->body.size());
                // Next chunk later: other requests interleave with this PUT.
                boost::asio::post(ex, [this, ex, st]() mutable { read_body(ex, std::move(st)); });
                return;
            }
            --in_flight_puts;
            if (crashed)
            {
                complete(ex, std::move(st->h), boost::asio::error::connection_reset, {});
                return;
            }
            log.push_back("PUT /put/" + st->id);
            auto it = assets.find(st->id);
            digital_delivery::http_response r;
            if (it == assets.end() || static_cast<std::int64_t>(st->body.size()) != it->second.pending_size)
            {
                r.status = 403;
                r.body = "<Error><Code>AccessDenied</Code><Message>no such upload</Message></Error>";
                return answer(ex, std::move(st->h), std::move(r));
            }
            auto& a = it->second;
            a.body = std::move(st->body);
            a.has_body = true;
            a.byte_size = a.pending_size;
            a.filename = a.pending_filename;
            a.content_type = a.pending_content_type;
            a.updated_us = now_us() + (++tick_);
            r.status = 200;
            answer(ex, std::move(st->h), std::move(r));
        });
    }
};

}  // namespace dd_test

#endif
