//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_FEED_REDIS_FEED_LINK_HPP
#define DIGITAL_DELIVERY_IMPL_FEED_REDIS_FEED_LINK_HPP

/// \file
/// One connection of redis_feed_checkpoint: any command, one at a time, on
/// the checkpoint's strand. It connects when needed (the master named by the
/// sentinels with redis_store_params::sentinel, checked with ROLE; TLS with
/// redis_store_params::tls; AUTH and SELECT), bounds each command by
/// command_timeout, and retries once on a fresh connection when a connection
/// that served before fails (a restart, a failover, -READONLY). Messages name
/// the host, port and step, never a password. (The rate-limit store's
/// redis_link speaks its one script only; this link sends any command.)

#include <digital_delivery/impl/rate_limit/sansio/redis_store.hpp>
#include <digital_delivery/impl/rate_limit/sansio/resp.hpp>
#include <digital_delivery/redis_store_params.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <charconv>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace digital_delivery {
namespace detail {

/// A command's outcome: the reply (which may be a Redis error reply), or why none.
struct redis_feed_reply
{
    std::optional<resp_value> reply;
    std::string why;
    bool misconfigured = false;  ///< AUTH, SELECT, TLS files or an unknown master refused.
};

class redis_feed_link : public std::enable_shared_from_this<redis_feed_link>
{
public:
    /// \param ex The checkpoint's strand (every call runs on it).
    redis_feed_link(boost::asio::any_io_executor ex, redis_store_params p)
        : ex_(ex), sock_(ex), timer_(ex), p_(std::move(p))
    {
    }

    /// Sends `cmd`, reads its reply. One call at a time.
    boost::asio::awaitable<redis_feed_reply> command(std::vector<std::string> cmd)
    {
        const std::uint64_t gen = ++generation_;
        timed_out_ = false;
        timer_.expires_after(p_.command_timeout);
        timer_.async_wait([w = weak_from_this(), gen](boost::system::error_code ec) {
            auto self = w.lock();
            if (ec || !self || self->generation_ != gen)
                return;
            self->timed_out_ = true;
            boost::system::error_code ignored;
            self->sock_.close(ignored);
        });
        redis_feed_reply r;
        for (int attempt = 0; attempt < 2; ++attempt)
        {
            const bool reused = connected_;
            r = redis_feed_reply{};
            std::string why;
            if (!connected_ && !co_await connect(why))
                r.why = why;
            else
            {
                std::vector<resp_value> replies;
                std::string out;
                std::vector<std::string_view> v(cmd.begin(), cmd.end());
                resp_append_command(out, v);
                if (co_await send_and_read(out, 1, replies, why))
                {
                    r.reply = std::move(replies[0]);
                    // A demoted master: the sentinels name another one.
                    if (r.reply->type == resp_value::kind::error && r.reply->str.rfind("READONLY", 0) == 0)
                    {
                        r.why = "the server is a replica now (" + r.reply->str.substr(0, 100) + ")";
                        r.reply.reset();
                    }
                }
                else
                    r.why = why;
            }
            if (r.reply || !reused || timed_out_ || refused_)
                break;
            close();
        }
        ++generation_;
        timer_.cancel();
        if (!r.reply)
        {
            close();
            r.why = where_ + ": " +
                    (timed_out_ ? "no answer within command_timeout (" + std::to_string(p_.command_timeout.count()) + " ms)"
                                : r.why);
            redact(r.why);
            r.misconfigured = refused_ && !timed_out_;
        }
        co_return r;
    }

    /// Closes the connection (the next command reconnects).
    void close()
    {
        boost::system::error_code ignored;
        sock_.close(ignored);
        tls_.reset();
        rbuf_.clear();
        connected_ = false;
    }

private:
    using tcp = boost::asio::ip::tcp;
    static constexpr auto tok = boost::asio::as_tuple(boost::asio::use_awaitable);

    static bool make_tls(const redis_tls_params& t, std::optional<boost::asio::ssl::context>& out, std::string& why)
    {
        namespace ssl = boost::asio::ssl;
        ssl::context c(ssl::context::tls_client);
        boost::system::error_code ec;
        c.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                          ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                      ec);
        // Never a passphrase prompt on the terminal: an encrypted key is refused.
        c.set_password_callback([](std::size_t, ssl::context::password_purpose) { return std::string(); }, ec);
        const auto fail = [&](const char* what, const std::string& file) {
            why = std::string("TLS: cannot load ") + what + " " + file + ": " + ec.message();
            return false;
        };
        if (!t.ca_file.empty() && (c.load_verify_file(t.ca_file, ec), ec))
            return fail("ca_file", t.ca_file);
        if (!t.ca_dir.empty() && (c.add_verify_path(t.ca_dir, ec), ec))
            return fail("ca_dir", t.ca_dir);
        if (t.ca_file.empty() && t.ca_dir.empty() && (c.set_default_verify_paths(ec), ec))
            return fail("the system's CA store", "");
        if (!t.cert_file.empty() && (c.use_certificate_chain_file(t.cert_file, ec), ec))
            return fail("cert_file", t.cert_file);
        if (!t.key_file.empty() && (c.use_private_key_file(t.key_file, ssl::context::pem, ec), ec))
            return fail("key_file (an encrypted key is not supported)", t.key_file);
        c.set_verify_mode(t.verify ? ssl::verify_peer : ssl::verify_none, ec);
        out.emplace(std::move(c));
        return true;
    }

    // Resolve, connect and (with TLS) the handshake, checking the name.
    boost::asio::awaitable<bool> open(const std::string& host, std::uint16_t port, const redis_tls_params& t,
                                      std::optional<boost::asio::ssl::context>& ctx, std::string& why)
    {
        close();
        tcp::resolver resolver(ex_);
        auto [rec, eps] = co_await resolver.async_resolve(host, std::to_string(port), tok);
        if (rec)
        {
            why = "resolve: " + rec.message();
            co_return false;
        }
        auto [cec, ep] = co_await boost::asio::async_connect(sock_, eps, tok);
        if (cec)
        {
            why = "connect: " + cec.message();
            co_return false;
        }
        boost::system::error_code ignored;
        sock_.set_option(tcp::no_delay(true), ignored);
        if (!t.enabled)
            co_return true;
        if (!ctx && !make_tls(t, ctx, why))
        {
            refused_ = true;
            co_return false;
        }
        tls_.emplace(sock_, *ctx);
        SSL* h = tls_->native_handle();
        const std::string& name = t.server_name.empty() ? host : t.server_name;
        boost::system::error_code not_ip;
        boost::asio::ip::make_address(name, not_ip);
        if (not_ip)
            SSL_set_tlsext_host_name(h, name.c_str());
        if (t.verify)
        {
            if (not_ip)
                SSL_set1_host(h, name.c_str());
            else
                X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(h), name.c_str());
        }
        auto [hec] = co_await tls_->async_handshake(boost::asio::ssl::stream_base::client, tok);
        if (hec)
        {
            const long verdict = SSL_get_verify_result(h);
            if (t.verify && verdict != X509_V_OK)
            {
                why = "TLS verification of " + name + ": " + X509_verify_cert_error_string(verdict);
                refused_ = true;
            }
            else
                why = "TLS handshake: " + hec.message();
            co_return false;
        }
        co_return true;
    }

    static void add_auth(std::vector<std::vector<std::string_view>>& cmds, const std::string& user, const std::string& pw)
    {
        if (pw.empty())
            return;
        if (user.empty())
            cmds.push_back({"AUTH", pw});
        else
            cmds.push_back({"AUTH", user, pw});
    }

    // Sends `cmds` pipelined; false and `why` on a failure or an error reply.
    boost::asio::awaitable<bool> pipeline(const std::vector<std::vector<std::string_view>>& cmds,
                                          std::vector<resp_value>& replies, std::string& why)
    {
        std::string out;
        for (const auto& c : cmds)
            resp_append_command(out, c);
        if (!co_await send_and_read(out, cmds.size(), replies, why))
            co_return false;
        for (std::size_t i = 0; i < replies.size(); ++i)
            if (replies[i].type == resp_value::kind::error)
            {
                why = std::string(cmds[i][0]) + " refused: " + replies[i].str.substr(0, 200);
                refused_ = redis_refuses_configuration(replies[i].str) || cmds[i][0] == "SELECT" || cmds[i][0] == "AUTH";
                co_return false;
            }
        co_return true;
    }

    boost::asio::awaitable<bool> ask_sentinels(std::string& host, std::uint16_t& port, std::string& why)
    {
        const auto& sp = p_.sentinel;
        const std::size_t n = sp.sentinels.size();
        std::string all;
        for (std::size_t i = 0; i < n; ++i)
        {
            const std::size_t at = (first_sentinel_ + i) % n;
            const auto& s = sp.sentinels[at];
            std::string one;
            std::vector<resp_value> replies;
            std::vector<std::vector<std::string_view>> cmds;
            add_auth(cmds, sp.username, sp.password);
            cmds.push_back({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", sp.master_name});
            bool ok = co_await open(s.host, s.port, sp.tls, sentinel_tls_ctx_, one);
            if (ok)
                ok = co_await pipeline(cmds, replies, one);
            if (ok)
            {
                const auto& a = replies.back();
                std::uint16_t pt = 0;
                if (a.type == resp_value::kind::array && a.elements.size() == 2 &&
                    a.elements[0].type == resp_value::kind::bulk && a.elements[1].type == resp_value::kind::bulk &&
                    std::from_chars(a.elements[1].str.data(), a.elements[1].str.data() + a.elements[1].str.size(), pt)
                            .ec == std::errc{})
                {
                    host = a.elements[0].str;
                    port = pt;
                    first_sentinel_ = at;
                    close();
                    co_return true;
                }
                if (a.type == resp_value::kind::nil)
                {
                    one = "does not know a master named " + sp.master_name;
                    refused_ = true;
                }
                else
                    one = "an unexpected reply to SENTINEL GET-MASTER-ADDR-BY-NAME";
            }
            all += (all.empty() ? "" : "; ") + ("sentinel " + s.host + ":" + std::to_string(s.port) + ": " + one);
        }
        close();
        why = all.empty() ? std::string("no sentinel configured") : all;
        co_return false;
    }

    boost::asio::awaitable<bool> connect(std::string& why)
    {
        refused_ = false;
        std::string host = p_.host;
        std::uint16_t port = p_.port;
        const bool sentinel = !p_.sentinel.sentinels.empty();
        where_ = "Redis " + host + ":" + std::to_string(port);
        if (sentinel)
        {
            where_ = "Redis master " + p_.sentinel.master_name;
            if (!co_await ask_sentinels(host, port, why))
                co_return false;
            where_ = "Redis master " + p_.sentinel.master_name + " at " + host + ":" + std::to_string(port);
        }
        if (!co_await open(host, port, p_.tls, tls_ctx_, why))
            co_return false;
        std::vector<std::vector<std::string_view>> cmds;
        add_auth(cmds, p_.username, p_.password);
        const std::string db = std::to_string(p_.database);
        if (p_.database != 0)
            cmds.push_back({"SELECT", db});
        cmds.push_back({"ROLE"});
        std::vector<resp_value> replies;
        if (!co_await pipeline(cmds, replies, why))
            co_return false;
        const auto& role = replies.back();
        if (role.type != resp_value::kind::array || role.elements.empty() || role.elements[0].str != "master")
        {
            // A replica (between a failover and the sentinels' word, or a
            // wrong address) takes no writes: not used.
            why = "not a master (ROLE: " +
                  (role.type == resp_value::kind::array && !role.elements.empty() ? role.elements[0].str : std::string("?")) + ")";
            co_return false;
        }
        connected_ = true;
        co_return true;
    }

    boost::asio::awaitable<bool> send_and_read(const std::string& out, std::size_t n, std::vector<resp_value>& replies,
                                               std::string& why)
    {
        replies.clear();
        boost::system::error_code wec;
        if (tls_)
            std::tie(wec, std::ignore) = co_await boost::asio::async_write(*tls_, boost::asio::buffer(out), tok);
        else
            std::tie(wec, std::ignore) = co_await boost::asio::async_write(sock_, boost::asio::buffer(out), tok);
        if (wec)
        {
            why = "send: " + wec.message();
            co_return false;
        }
        while (replies.size() < n)
        {
            auto r = resp_parser::parse(rbuf_);
            if (r.st == resp_parser::status::done)
            {
                replies.push_back(std::move(r.value));
                rbuf_.erase(0, r.consumed);
                continue;
            }
            if (r.st == resp_parser::status::error)
            {
                why = "protocol error: " + r.what;
                co_return false;
            }
            char buf[4096];
            boost::system::error_code rec;
            std::size_t got = 0;
            if (tls_)
                std::tie(rec, got) = co_await tls_->async_read_some(boost::asio::buffer(buf), tok);
            else
                std::tie(rec, got) = co_await sock_.async_read_some(boost::asio::buffer(buf), tok);
            if (rec)
            {
                why = rec == boost::asio::error::eof ? std::string("connection closed by Redis") : "receive: " + rec.message();
                co_return false;
            }
            rbuf_.append(buf, got);
        }
        co_return true;
    }

    void redact(std::string& s) const
    {
        for (const std::string* pw : {&p_.password, &p_.sentinel.password})
            if (!pw->empty())
                for (auto pos = s.find(*pw); pos != std::string::npos; pos = s.find(*pw, pos))
                    s.replace(pos, pw->size(), "***");
    }

    boost::asio::any_io_executor ex_;
    tcp::socket sock_;
    boost::asio::steady_timer timer_;
    redis_store_params p_;
    std::optional<boost::asio::ssl::context> tls_ctx_;
    std::optional<boost::asio::ssl::context> sentinel_tls_ctx_;
    std::optional<boost::asio::ssl::stream<tcp::socket&>> tls_;
    std::size_t first_sentinel_ = 0;
    std::string where_;
    std::string rbuf_;
    std::uint64_t generation_ = 0;
    bool timed_out_ = false;
    bool refused_ = false;
    bool connected_ = false;
};

}  // namespace detail
}  // namespace digital_delivery

#endif
