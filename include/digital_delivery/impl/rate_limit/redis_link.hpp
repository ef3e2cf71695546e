//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
//
#ifndef DIGITAL_DELIVERY_IMPL_INTERNAL_REDIS_LINK_HPP
#define DIGITAL_DELIVERY_IMPL_INTERNAL_REDIS_LINK_HPP

/// \file
/// The connection of one Redis rate-limit bucket (redis_rate_limit_store):
/// one TCP connection, one exchange at a time, on a strand of the client's
/// executor; no thread ever blocks. An exchange connects first when needed
/// (resolve, connect, then AUTH, SELECT and SCRIPT LOAD pipelined), then
/// sends the GCRA script with EVALSHA (EVAL when Redis answers NOSCRIPT, e.g.
/// after a SCRIPT FLUSH) and reads its reply. The whole exchange is bounded
/// by redis_store_params::command_timeout (a real-time timer: it guards real
/// I/O); any failure closes the connection, and the next exchange reconnects.
/// With redis_store_params::tls, a TLS handshake follows the TCP connect
/// (SNI, verification of the chain and the name by OpenSSL). Messages name
/// the host and port and what failed (resolve, connect, TLS handshake, TLS
/// verification, AUTH...), never the password.

#include <digital_delivery/impl/rate_limit/sansio/redis_store.hpp>
#include <digital_delivery/impl/rate_limit/sansio/resp.hpp>
#include <digital_delivery/redis_store_params.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace digital_delivery {
namespace detail {

/// The outcome of one exchange.
struct redis_exchange_result
{
    std::optional<gcra_reply> reply;  ///< Empty: failed (`why` says how).
    std::string why;
    /// Failed because Redis refuses the configuration (credentials,
    /// permissions, the database number), not because it is down.
    bool misconfigured = false;
};

class redis_link : public std::enable_shared_from_this<redis_link>
{
public:
    using handler = std::function<void(redis_exchange_result)>;

    redis_link(boost::asio::any_io_executor ex, redis_store_params p, std::string key)
        : strand_(boost::asio::make_strand(ex)),
          sock_(strand_),
          timer_(strand_),
          p_(std::move(p)),
          key_(std::move(key)),
          where_("Redis " + p_.host + ":" + std::to_string(p_.port))
    {
    }

    /// Runs one exchange with the script's `args`. `done` runs once, on the
    /// link's strand, never inside this call.
    void async_exchange(std::vector<std::string> args, handler done)
    {
        boost::asio::post(strand_, [self = shared_from_this(), args = std::move(args), done = std::move(done)]() mutable {
            auto& strand = self->strand_;
            boost::asio::co_spawn(
                strand,
                [self = std::move(self), args = std::move(args), done = std::move(done)]() mutable
                    -> boost::asio::awaitable<void> {
                    auto r = co_await self->exchange(std::move(args));
                    done(std::move(r));
                },
                boost::asio::detached);
        });
    }

    /// The key the bucket's hash is stored at.
    const std::string& key() const noexcept { return key_; }

private:
    using tcp = boost::asio::ip::tcp;
    static constexpr auto tok = boost::asio::as_tuple(boost::asio::use_awaitable);

    boost::asio::awaitable<redis_exchange_result> exchange(std::vector<std::string> args)
    {
        const std::uint64_t gen = ++generation_;
        timed_out_ = false;
        refused_ = false;
        timer_.expires_after(p_.command_timeout);
        timer_.async_wait([w = weak_from_this(), gen](boost::system::error_code ec) {
            auto self = w.lock();
            if (ec || !self || self->generation_ != gen)
                return;
            self->timed_out_ = true;
            boost::system::error_code ignored;
            self->sock_.close(ignored);
        });
        redis_exchange_result r;
        std::string why;
        if (!connected_ && !co_await connect(why))
            r.why = why;
        else
        {
            std::vector<std::string_view> cmd = {"EVALSHA", sha_, "1", key_};
            for (const auto& a : args)
                cmd.push_back(a);
            std::vector<resp_value> replies;
            if (co_await round_trip(cmd, replies, why))
            {
                if (replies[0].type == resp_value::kind::error && replies[0].str.rfind("NOSCRIPT", 0) == 0)
                {
                    cmd[0] = "EVAL";
                    cmd[1] = redis_gcra_script;
                    if (!co_await round_trip(cmd, replies, why))
                        r.why = why;
                }
                if (r.why.empty())
                {
                    r.reply = decode_gcra_reply(replies[0], why);
                    if (!r.reply)
                        r.why = why;
                    refused_ = !r.reply && replies[0].type == resp_value::kind::error &&
                               redis_refuses_configuration(replies[0].str);
                }
            }
            else
                r.why = why;
        }
        ++generation_;
        timer_.cancel();
        if (!r.reply)
        {
            close();
            r.why = where_ + ": " + (timed_out_ ? "no answer within command_timeout (" + std::to_string(p_.command_timeout.count()) + " ms)" : r.why);
            redact(r.why);
            r.misconfigured = refused_ && !timed_out_;
        }
        co_return r;
    }

    void close()
    {
        boost::system::error_code ignored;
        sock_.close(ignored);
        tls_.reset();
        rbuf_.clear();
        connected_ = false;
    }

    // The TLS context, made at the first connection (a file that cannot be
    // read is a configuration error: false, and `why`).
    bool make_tls_context(std::string& why)
    {
        namespace ssl = boost::asio::ssl;
        const auto& t = p_.tls;
        ssl::context c(ssl::context::tls_client);
        boost::system::error_code ec;
        c.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                          ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                      ec);
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
            return fail("key_file", t.key_file);
        // An encrypted key is refused, never a prompt on the terminal.
        c.set_password_callback([](std::size_t, ssl::context::password_purpose) { return std::string(); }, ec);
        c.set_verify_mode(t.verify ? ssl::verify_peer : ssl::verify_none, ec);
        // Called when the server asks for a client certificate and none is
        // configured: noted, so that the server's refusal can say so.
        SSL_CTX_set_client_cert_cb(c.native_handle(), [](SSL* s, X509**, EVP_PKEY**) {
            if (auto* asked = static_cast<bool*>(SSL_get_ex_data(s, certificate_request_index())))
                *asked = true;
            return 0;
        });
        tls_ctx_.emplace(std::move(c));
        return true;
    }

    // The TLS handshake on the connected socket: SNI (a host name only), the
    // name checked by OpenSSL (a DNS name, or an IP address entry).
    boost::asio::awaitable<bool> handshake(std::string& why)
    {
        namespace ssl = boost::asio::ssl;
        if (!tls_ctx_ && !make_tls_context(why))
        {
            refused_ = true;
            co_return false;
        }
        tls_.emplace(sock_, *tls_ctx_);
        SSL* h = tls_->native_handle();
        certificate_requested_ = false;
        SSL_set_ex_data(h, certificate_request_index(), &certificate_requested_);
        const std::string& name = p_.tls.server_name.empty() ? p_.host : p_.tls.server_name;
        boost::system::error_code not_ip;
        boost::asio::ip::make_address(name, not_ip);
        if (not_ip)
            SSL_set_tlsext_host_name(h, name.c_str());
        if (p_.tls.verify)
        {
            if (not_ip)
                SSL_set1_host(h, name.c_str());
            else
                X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(h), name.c_str());
        }
        auto [ec] = co_await tls_->async_handshake(ssl::stream_base::client, tok);
        if (!ec)
            co_return true;
        const long verdict = SSL_get_verify_result(h);
        if (p_.tls.verify && verdict != X509_V_OK)
        {
            why = "TLS verification of " + name + ": " + X509_verify_cert_error_string(verdict);
            refused_ = true;
        }
        else
            why = "TLS handshake: " + tls_error(ec);
        co_return false;
    }

    static int certificate_request_index()
    {
        static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
        return index;
    }

    // The connection failed: if the server asked for a client certificate
    // and none is configured, that is the likely cause (with TLS 1.3 the
    // server refuses after the handshake, on the first exchange).
    void blame_missing_certificate(std::string& why)
    {
        if (tls_ && certificate_requested_ && p_.tls.cert_file.empty())
        {
            why += " (the server asked for a client certificate and none is configured: tls.cert_file, tls.key_file)";
            refused_ = true;
        }
    }

    // An error of the TLS layer: a certificate the server refused (mutual
    // TLS) is a configuration error.
    std::string tls_error(const boost::system::error_code& ec)
    {
        std::string m = ec.message();
        if (ec.category() == boost::asio::error::get_ssl_category() && m.find("certificate") != std::string::npos)
            refused_ = true;
        return m;
    }

    boost::asio::awaitable<bool> connect(std::string& why)
    {
        close();
        tcp::resolver resolver(strand_);
        auto [rec, eps] = co_await resolver.async_resolve(p_.host, std::to_string(p_.port), tok);
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
        if (p_.tls.enabled && !co_await handshake(why))
            co_return false;
        std::vector<std::vector<std::string_view>> cmds;
        if (!p_.password.empty())
        {
            if (p_.username.empty())
                cmds.push_back({"AUTH", p_.password});
            else
                cmds.push_back({"AUTH", p_.username, p_.password});
        }
        const std::string db = std::to_string(p_.database);
        if (p_.database != 0)
            cmds.push_back({"SELECT", db});
        cmds.push_back({"SCRIPT", "LOAD", redis_gcra_script});
        std::string out;
        for (const auto& c : cmds)
            resp_append_command(out, c);
        std::vector<resp_value> replies;
        if (!co_await send_and_read(out, cmds.size(), replies, why))
        {
            blame_missing_certificate(why);
            co_return false;
        }
        const char* what[] = {"AUTH", "SELECT", "SCRIPT LOAD"};
        std::size_t first = p_.password.empty() ? 1 : 0;
        for (std::size_t i = 0; i < replies.size(); ++i)
        {
            std::size_t step = first + i;
            if (step == 1 && p_.database == 0)
                ++step;
            if (replies[i].type == resp_value::kind::error)
            {
                why = std::string(what[step]) + " refused: " + replies[i].str.substr(0, 200);
                // Credentials, permissions and the database number
                // ("ERR DB index is out of range") are configuration.
                refused_ = redis_refuses_configuration(replies[i].str) ||
                           (step == 1 && replies[i].str.rfind("ERR", 0) == 0);
                co_return false;
            }
        }
        const auto& sha = replies.back();
        if (sha.type != resp_value::kind::bulk || sha.str.size() != 40)
        {
            why = "an unexpected reply to SCRIPT LOAD";
            co_return false;
        }
        sha_ = sha.str;
        connected_ = true;
        co_return true;
    }

    boost::asio::awaitable<bool> round_trip(
        const std::vector<std::string_view>& cmd,
        std::vector<resp_value>& replies,
        std::string& why
    )
    {
        std::string out;
        resp_append_command(out, cmd);
        co_return co_await send_and_read(out, 1, replies, why);
    }

    boost::asio::awaitable<bool> send_and_read(
        const std::string& out,
        std::size_t n,
        std::vector<resp_value>& replies,
        std::string& why
    )
    {
        replies.clear();
        auto [wec, written] = tls_ ? co_await boost::asio::async_write(*tls_, boost::asio::buffer(out), tok)
                                   : co_await boost::asio::async_write(sock_, boost::asio::buffer(out), tok);
        if (wec)
        {
            why = "send: " + (tls_ ? tls_error(wec) : wec.message());
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
            auto [rec, got] = tls_ ? co_await tls_->async_read_some(boost::asio::buffer(buf), tok)
                                   : co_await sock_.async_read_some(boost::asio::buffer(buf), tok);
            if (rec)
            {
                why = rec == boost::asio::error::eof || rec == boost::asio::ssl::error::stream_truncated
                          ? std::string("connection closed by Redis")
                          : "receive: " + (tls_ ? tls_error(rec) : rec.message());
                co_return false;
            }
            rbuf_.append(buf, got);
        }
        co_return true;
    }

    // A message never holds the password, whatever a server echoes.
    void redact(std::string& s) const
    {
        if (p_.password.empty())
            return;
        for (auto pos = s.find(p_.password); pos != std::string::npos; pos = s.find(p_.password, pos))
            s.replace(pos, p_.password.size(), "***");
    }

    boost::asio::strand<boost::asio::any_io_executor> strand_;
    tcp::socket sock_;
    std::optional<boost::asio::ssl::context> tls_ctx_;               // p_.tls.enabled: made once
    std::optional<boost::asio::ssl::stream<tcp::socket&>> tls_;      // over sock_, one per connection
    boost::asio::steady_timer timer_;
    redis_store_params p_;
    std::string key_;
    std::string where_;
    std::string sha_;
    std::string rbuf_;
    std::uint64_t generation_ = 0;
    bool timed_out_ = false;
    bool refused_ = false;  // this exchange failed on a refused configuration
    bool connected_ = false;  // connected, authenticated, the script loaded
    bool certificate_requested_ = false;  // this TLS connection's server asked for a client certificate
};

}  // namespace detail
}  // namespace digital_delivery

#endif
