//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_INTERNAL_REDIS_LINK_HPP
#define DIGITAL_DELIVERY_IMPL_INTERNAL_REDIS_LINK_HPP

/// \file
/// The library's one Redis connection: a rate-limit bucket's
/// (redis_rate_limit_store) and the feed checkpoint's
/// (redis_feed_checkpoint, redis_link_use::commands): one TCP connection,
/// one exchange at a time, on a strand of the given executor; no thread ever
/// blocks. An exchange connects first when needed
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
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
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

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace digital_delivery {
namespace detail {

/// Any command's outcome (redis_link::async_command).
struct redis_command_result
{
    /// The reply; empty: failed (`why` says how). An error reply is a reply
    /// (resp_value::kind::error, e.g. a script's "FENCED ..."): the caller
    /// maps what it expects. Not replies: -READONLY (a demoted master: the
    /// command is retried once on a fresh connection, then fails) and
    /// -MOVED/-ASK (followed; a failure beyond max_redirects).
    std::optional<resp_value> reply;
    std::string why;
    /// Redis refuses the configuration (credentials, permissions): the
    /// connection failed so, or the reply is such an error reply.
    bool misconfigured = false;
};

/// What a link is for.
enum class redis_link_use
{
    /// A rate-limit bucket: connects with SCRIPT LOAD of the GCRA script
    /// (async_exchange), checks ROLE only with Sentinel.
    rate_limit,
    /// Commands only (async_command; the feed checkpoint): no script
    /// loaded; every connection checks ROLE, a replica is not used.
    commands,
};

/// One connection of the Redis store: sends the script (redis_exchange_result
/// is an exchange's outcome), or any command (async_command: for other users
/// of the same connection parameters, e.g. a feed checkpoint).
class redis_link : public std::enable_shared_from_this<redis_link>
{
public:
    using handler = std::function<void(redis_exchange_result)>;

    /// \param ex The executor (the link runs on a strand of it).
    /// \param p The connection's parameters.
    /// \param key The bucket's key (rate_limit); empty for commands.
    /// \param use What the link is for.
    redis_link(boost::asio::any_io_executor ex, redis_store_params p, std::string key,
               redis_link_use use = redis_link_use::rate_limit)
        : strand_(boost::asio::make_strand(ex)),
          sock_(strand_),
          timer_(strand_),
          p_(std::move(p)),
          key_(std::move(key)),
          where_("Redis " + p_.host + ":" + std::to_string(p_.port)),
          use_(use)
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

    using command_handler = std::function<void(redis_command_result)>;

    /// Runs one command, `argv` as is (e.g. {"HGETALL", key}, {"EVAL", script,
    /// "1", key, ...}), with everything an exchange has: the connection made
    /// when needed (TLS, Sentinel, AUTH, SELECT), command_timeout over the
    /// whole call, one retry on a fresh connection when a reused one failed,
    /// Cluster redirections (the slot of argv's keys is the caller's affair),
    /// messages without the password. `limits`: the bounds of the reply.
    /// The retry may run a command twice (a reused connection that failed
    /// after sending it): give it commands that can run twice, or scripts
    /// that check (a fencing token, a version) before they write.
    /// One call at a time per link (async_exchange included): a caller
    /// starts the next one from the previous one's handler. `done` runs once,
    /// on the link's strand, never inside this call.
    void async_command(std::vector<std::string> argv, command_handler done, resp_limits limits = {})
    {
        boost::asio::post(strand_, [self = shared_from_this(), argv = std::move(argv), done = std::move(done), limits]() mutable {
            auto& strand = self->strand_;
            boost::asio::co_spawn(
                strand,
                [self = std::move(self), argv = std::move(argv), done = std::move(done), limits]() mutable
                    -> boost::asio::awaitable<void> {
                    self->limits_ = limits;
                    auto r = co_await self->run<redis_command_result>([&] { return self->command_once(argv); });
                    self->limits_ = {};
                    done(std::move(r));
                },
                boost::asio::detached);
        });
    }

    /// async_command with a completion token (e.g. use_awaitable): the
    /// completion runs on the token's associated executor.
    template <class Token>
    auto async_command(std::vector<std::string> argv, resp_limits limits, Token&& token)
    {
        return boost::asio::async_initiate<Token, void(redis_command_result)>(
            [self = shared_from_this()](auto handler, std::vector<std::string> a, resp_limits l) {
                // command_handler is a std::function: copyable, the handler may not be.
                auto h = std::make_shared<decltype(handler)>(std::move(handler));
                self->async_command(
                    std::move(a),
                    [h](redis_command_result r) {
                        auto ex = boost::asio::get_associated_executor(*h);
                        boost::asio::dispatch(ex, [h, r = std::move(r)]() mutable { std::move(*h)(std::move(r)); });
                    },
                    l);
            },
            token, std::move(argv), limits);
    }

    /// Closes the connection (on the link's strand, after the call under
    /// way, if any); the next call reconnects.
    void async_close()
    {
        boost::asio::post(strand_, [self = shared_from_this()] { self->close(); });
    }

    /// The key the bucket's hash is stored at.
    const std::string& key() const noexcept { return key_; }

private:
    using tcp = boost::asio::ip::tcp;
    static constexpr auto tok = boost::asio::as_tuple(boost::asio::use_awaitable);

    boost::asio::awaitable<redis_exchange_result> exchange(std::vector<std::string> args)
    {
        co_return co_await run<redis_exchange_result>([&] { return exchange_once(args); });
    }

    // One call (`once`: one attempt, returning an awaitable Result with
    // `reply`, `why`, `misconfigured`) under command_timeout, with the
    // retry on a fresh connection and the Cluster redirections.
    template <class Result, class Once>
    boost::asio::awaitable<Result> run(Once once)
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
        Result r;
        int redirects = 0;
        for (int attempt = 0; attempt < 2; ++attempt)
        {
            const bool reused = connected_;
            redirect_.reset();
            answered_ = false;
            r = co_await once();
            if (asking_)
            {
                asking_.reset();  // one exchange on the importing node, then back to the slot's owner
                close();
            }
            if (redirect_ && !timed_out_ && ++redirects <= max_redirects)
            {
                // Redis Cluster: -MOVED names the slot's node from now on,
                // -ASK the node importing it, for this command only.
                if (redirect_->moved)
                    node_ = redirect_->node;
                else
                    asking_ = redirect_->node;
                close();
                --attempt;
                continue;
            }
            if (r.reply || !reused || timed_out_ || refused_ || answered_)
                break;
            // A connection that served before failed (Redis restarted, a
            // failover, -READONLY from a demoted master): once more, on a
            // fresh connection (with Sentinel: to the master it names now).
            close();
        }
        ++generation_;
        timer_.cancel();
        if (!r.reply)
        {
            close();
            node_.reset();  // the next exchange starts from the configured node again
            r.why = where_ + ": " + (timed_out_ ? "no answer within command_timeout (" + std::to_string(p_.command_timeout.count()) + " ms)" : r.why);
            redact(r.why);
            r.misconfigured = refused_ && !timed_out_;
        }
        co_return r;
    }

    boost::asio::awaitable<redis_exchange_result> exchange_once(const std::vector<std::string>& args)
    {
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
            if (co_await script_call(cmd, replies, why))
            {
                if (replies[0].type == resp_value::kind::error && replies[0].str.rfind("NOSCRIPT", 0) == 0)
                {
                    cmd[0] = "EVAL";
                    cmd[1] = redis_gcra_script;
                    if (!co_await script_call(cmd, replies, why))
                        r.why = why;
                }
                if (r.why.empty() && replies[0].type == resp_value::kind::error)
                    redirect_ = parse_redirect(replies[0].str);
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
        co_return r;
    }

    boost::asio::awaitable<redis_command_result> command_once(const std::vector<std::string>& argv)
    {
        redis_command_result r;
        std::string why;
        if (argv.empty())
            r.why = "no command";
        else if (!connected_ && !co_await connect(why))
            r.why = why;
        else
        {
            const std::vector<std::string_view> cmd(argv.begin(), argv.end());
            std::vector<resp_value> replies;
            if (!co_await script_call(cmd, replies, why))
                r.why = why;
            else if (replies[0].type == resp_value::kind::error && replies[0].str.rfind("READONLY", 0) == 0)
                // This node is no master any more (a failover): a failure,
                // sent again once on a fresh connection.
                r.why = "the server is a replica now (" + replies[0].str.substr(0, 100) + ")";
            else if (replies[0].type == resp_value::kind::error && (redirect_ = parse_redirect(replies[0].str)))
                r.why = "Redis answered: " + replies[0].str.substr(0, 200);
            else
            {
                // A reply, an error reply included: Redis ran it (not sent again).
                answered_ = true;
                r.misconfigured = replies[0].type == resp_value::kind::error && redis_refuses_configuration(replies[0].str);
                r.reply = std::move(replies[0]);
            }
        }
        co_return r;
    }

    // The script's call; after -ASK, preceded by ASKING (the importing node
    // serves the slot for the next command only). `replies[0]`: its reply.
    boost::asio::awaitable<bool> script_call(const std::vector<std::string_view>& cmd, std::vector<resp_value>& replies,
                                             std::string& why)
    {
        if (!asking_)
            co_return co_await round_trip(cmd, replies, why);
        std::string out;
        resp_append_command(out, {"ASKING"});
        resp_append_command(out, cmd);
        if (!co_await send_and_read(out, 2, replies, why))
            co_return false;
        replies.erase(replies.begin());
        co_return true;
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
    static bool make_tls_context(const redis_tls_params& t, std::optional<boost::asio::ssl::context>& out, std::string& why)
    {
        namespace ssl = boost::asio::ssl;
        ssl::context c(ssl::context::tls_client);
        boost::system::error_code ec;
        c.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                          ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                      ec);
        const auto fail = [&](const char* what, const std::string& file) {
            why = std::string("TLS: cannot load ") + what + " " + file + ": " + ec.message();
            return false;
        };
        // An encrypted key is refused, never a prompt on the terminal: the
        // callback answers no passphrase, and is installed before any file
        // is read (OpenSSL's default one reads the terminal, blocking the
        // event loop). It notes that a passphrase was asked for.
        auto asked_passphrase = std::make_shared<bool>(false);
        c.set_password_callback(
            [asked_passphrase](std::size_t, ssl::context::password_purpose) {
                *asked_passphrase = true;
                return std::string();
            },
            ec);
        if (!t.ca_file.empty() && (c.load_verify_file(t.ca_file, ec), ec))
            return fail("ca_file", t.ca_file);
        if (!t.ca_dir.empty() && (c.add_verify_path(t.ca_dir, ec), ec))
            return fail("ca_dir", t.ca_dir);
        if (t.ca_file.empty() && t.ca_dir.empty() && (c.set_default_verify_paths(ec), ec))
            return fail("the system's CA store", "");
        if (!t.cert_file.empty() && (c.use_certificate_chain_file(t.cert_file, ec), ec))
            return fail("cert_file", t.cert_file);
        if (!t.key_file.empty() && (c.use_private_key_file(t.key_file, ssl::context::pem, ec), ec))
        {
            if (!*asked_passphrase)
                return fail("key_file", t.key_file);
            why = "TLS: cannot load key_file " + t.key_file +
                  ": the key is encrypted (a passphrase-protected key is not supported: store it decrypted, "
                  "readable by this user only, e.g. openssl pkey -in KEY -out DECRYPTED_KEY)";
            return false;
        }
        c.set_verify_mode(t.verify ? ssl::verify_peer : ssl::verify_none, ec);
        // Called when the server asks for a client certificate and none is
        // configured: noted, so that the server's refusal can say so.
        SSL_CTX_set_client_cert_cb(c.native_handle(), [](SSL* s, X509**, EVP_PKEY**) {
            if (auto* asked = static_cast<bool*>(SSL_get_ex_data(s, certificate_request_index())))
                *asked = true;
            return 0;
        });
        out.emplace(std::move(c));
        return true;
    }

    // The TLS handshake on the connected socket: SNI (a host name only), the
    // name checked by OpenSSL (a DNS name, or an IP address entry).
    boost::asio::awaitable<bool> handshake(const std::string& host, const redis_tls_params& t,
                                           std::optional<boost::asio::ssl::context>& ctx, std::string& why)
    {
        namespace ssl = boost::asio::ssl;
        if (!ctx && !make_tls_context(t, ctx, why))
        {
            refused_ = true;
            co_return false;
        }
        tls_.emplace(sock_, *ctx);
        SSL* h = tls_->native_handle();
        certificate_requested_ = false;
        SSL_set_ex_data(h, certificate_request_index(), &certificate_requested_);
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
        // The first bytes of the server's answer (a record header), to tell a
        // plain-text answer (-ERR ...) from a TLS failure.
        first_bytes_.clear();
        SSL_set_msg_callback(h, [](int write_p, int, int content_type, const void* buf, std::size_t len, SSL*, void* arg) {
            auto& first = *static_cast<std::string*>(arg);
            if (!write_p && content_type == SSL3_RT_HEADER && first.empty())
                first.assign(static_cast<const char*>(buf), len);
        });
        SSL_set_msg_callback_arg(h, &first_bytes_);
        // The handshake's own time limit, within command_timeout: a server
        // that answers nothing is told apart from a slow command.
        const auto limit = handshake_limit(t);
        struct guard_state
        {
            bool done = false;
            bool fired = false;
        };
        auto g = std::make_shared<guard_state>();
        boost::asio::steady_timer guard(strand_, limit);
        guard.async_wait([w = weak_from_this(), g](boost::system::error_code ec) {
            auto self = w.lock();
            if (ec || g->done || !self)
                return;
            g->fired = true;
            boost::system::error_code ignored;
            self->sock_.close(ignored);
        });
        auto [ec] = co_await tls_->async_handshake(ssl::stream_base::client, tok);
        g->done = true;
        guard.cancel();
        SSL_set_msg_callback(h, nullptr);
        if (!ec && !g->fired)
            co_return true;
        const long verdict = SSL_get_verify_result(h);
        if (g->fired)
            why = "TLS handshake: no answer within " + std::to_string(limit.count()) + " ms; is this a plain-text port?";
        else if (plain_text_answer(first_bytes_))
        {
            why = "TLS handshake: the server answered in plain text (\"" + printable(first_bytes_) +
                  "...\"), not TLS: is this a plain-text port?";
            refused_ = true;
        }
        else if (t.verify && verdict != X509_V_OK)
        {
            why = "TLS verification of " + name + ": " + X509_verify_cert_error_string(verdict);
            refused_ = true;
        }
        else
            why = "TLS handshake: " + tls_error(ec);
        co_return false;
    }

    // The TLS handshake's time limit (redis_tls_params::handshake_timeout).
    std::chrono::milliseconds handshake_limit(const redis_tls_params& t) const
    {
        if (t.handshake_timeout.count() <= 0)
            return std::max(p_.command_timeout / 2, std::chrono::milliseconds(1));
        return std::min(t.handshake_timeout, p_.command_timeout);
    }

    // A record header that is no TLS record: a RESP reply (-ERR, +OK, ...)
    // or other text.
    static bool plain_text_answer(const std::string& first)
    {
        if (first.empty())
            return false;
        const auto c = static_cast<unsigned char>(first[0]);
        if (c >= 20 && c <= 24)  // TLS content types: change_cipher_spec, alert, handshake, application_data, heartbeat
            return false;
        for (char ch : first)
            if (static_cast<unsigned char>(ch) < 0x20 && ch != '\r' && ch != '\n')
                return false;
        return true;
    }

    static std::string printable(const std::string& s)
    {
        std::string out;
        for (char ch : s)
            if (ch == '\r' || ch == '\n')
                break;
            else
                out += ch == '"' ? '\'' : ch;
        return out;
    }

    static int certificate_request_index()
    {
        static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
        return index;
    }

    // The connection failed: if the server asked for a client certificate
    // and none is configured, that is the likely cause (with TLS 1.3 the
    // server refuses after the handshake, on the first exchange).
    void blame_missing_certificate(const redis_tls_params& t, std::string& why)
    {
        if (tls_ && certificate_requested_ && t.cert_file.empty())
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

    // Resolve, connect and (with TLS) the handshake, on sock_.
    boost::asio::awaitable<bool> open(const std::string& host, std::uint16_t port, const redis_tls_params& t,
                                      std::optional<boost::asio::ssl::context>& ctx, std::string& why)
    {
        close();
        tcp::resolver resolver(strand_);
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
        co_return co_await handshake(host, t, ctx, why);
    }

    // Sends `cmds` (named `names`) pipelined on the open connection; false
    // and `why` when one is refused (a refused configuration noted).
    boost::asio::awaitable<bool> pipeline(const std::vector<std::vector<std::string_view>>& cmds,
                                          const std::vector<const char*>& names, const redis_tls_params& t,
                                          std::vector<resp_value>& replies, std::string& why)
    {
        std::string out;
        for (const auto& c : cmds)
            resp_append_command(out, c);
        if (!co_await send_and_read(out, cmds.size(), replies, why))
        {
            blame_missing_certificate(t, why);
            co_return false;
        }
        for (std::size_t i = 0; i < replies.size(); ++i)
            if (replies[i].type == resp_value::kind::error)
            {
                const std::string_view name = names[i];
                why = std::string(name) + " refused: " + replies[i].str.substr(0, 200);
                // Credentials, permissions and the database number
                // ("ERR DB index is out of range") are configuration.
                refused_ = redis_refuses_configuration(replies[i].str) ||
                           (name == "SELECT" && replies[i].str.rfind("ERR", 0) == 0) ||
                           (use_ == redis_link_use::commands && (name == "AUTH" || name == "SELECT"));
                co_return false;
            }
        co_return true;
    }

    static void add_auth(std::vector<std::vector<std::string_view>>& cmds, std::vector<const char*>& names,
                         const std::string& user, const std::string& password)
    {
        if (password.empty())
            return;
        if (user.empty())
            cmds.push_back({"AUTH", password});
        else
            cmds.push_back({"AUTH", user, password});
        names.push_back("AUTH");
    }

    // Asks the sentinels, in turn from the last one that answered, where the
    // master is.
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
            std::vector<const char*> names;
            add_auth(cmds, names, sp.username, sp.password);
            cmds.push_back({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", sp.master_name});
            names.push_back("SENTINEL GET-MASTER-ADDR-BY-NAME");
            bool answered = co_await open(s.host, s.port, sp.tls, sentinel_tls_ctx_, one);
            if (answered)
                answered = co_await pipeline(cmds, names, sp.tls, replies, one);
            if (answered)
            {
                const auto& a = replies.back();
                std::uint16_t p = 0;
                if (a.type == resp_value::kind::array && a.elements.size() == 2 &&
                    a.elements[0].type == resp_value::kind::bulk && a.elements[1].type == resp_value::kind::bulk &&
                    std::from_chars(a.elements[1].str.data(), a.elements[1].str.data() + a.elements[1].str.size(), p).ec ==
                        std::errc{})
                {
                    host = a.elements[0].str;
                    port = p;
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
        why = all;
        co_return false;
    }

    boost::asio::awaitable<bool> connect(std::string& why)
    {
        std::string host = p_.host;
        std::uint16_t port = p_.port;
        const bool sentinel = !p_.sentinel.sentinels.empty() && !asking_ && !node_;
        const bool check_role = sentinel || use_ == redis_link_use::commands;
        if (const auto& to = asking_ ? asking_ : node_)
        {
            host = to->host;
            port = to->port;
        }
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
        std::vector<const char*> names;
        add_auth(cmds, names, p_.username, p_.password);
        const std::string db = std::to_string(p_.database);
        if (p_.database != 0)
        {
            cmds.push_back({"SELECT", db});
            names.push_back("SELECT");
        }
        if (check_role)
        {
            cmds.push_back({"ROLE"});
            names.push_back("ROLE");
        }
        const bool load_script = use_ == redis_link_use::rate_limit;
        if (load_script)
        {
            cmds.push_back({"SCRIPT", "LOAD", redis_gcra_script});
            names.push_back("SCRIPT LOAD");
        }
        std::vector<resp_value> replies;
        if (!co_await pipeline(cmds, names, p_.tls, replies, why))
            co_return false;
        if (check_role)
        {
            // Between a failover and the sentinels' word (or at a wrong
            // address) the server may be a replica, which takes no writes:
            // not used (asked again next time).
            const auto& role = replies[replies.size() - (load_script ? 2 : 1)];
            if (role.type != resp_value::kind::array || role.elements.empty() || role.elements[0].str != "master")
            {
                why = "not a master (ROLE: " + (role.type == resp_value::kind::array && !role.elements.empty() ? role.elements[0].str : std::string("?")) + ")";
                co_return false;
            }
        }
        if (load_script)
        {
            const auto& sha = replies.back();
            if (sha.type != resp_value::kind::bulk || sha.str.size() != 40)
            {
                why = "an unexpected reply to SCRIPT LOAD";
                co_return false;
            }
            sha_ = sha.str;
        }
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
        boost::system::error_code wec;
        if (tls_)
            std::tie(wec, std::ignore) = co_await boost::asio::async_write(*tls_, boost::asio::buffer(out), tok);
        else
            std::tie(wec, std::ignore) = co_await boost::asio::async_write(sock_, boost::asio::buffer(out), tok);
        if (wec)
        {
            why = "send: " + (tls_ ? tls_error(wec) : wec.message());
            co_return false;
        }
        while (replies.size() < n)
        {
            auto r = resp_parser::parse(rbuf_, limits_);
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
        for (const std::string* pw : {&p_.password, &p_.sentinel.password})
            if (!pw->empty())
                for (auto pos = s.find(*pw); pos != std::string::npos; pos = s.find(*pw, pos))
                    s.replace(pos, pw->size(), "***");
    }

    boost::asio::strand<boost::asio::any_io_executor> strand_;
    tcp::socket sock_;
    std::optional<boost::asio::ssl::context> tls_ctx_;               // p_.tls.enabled: made once
    std::optional<boost::asio::ssl::context> sentinel_tls_ctx_;      // p_.sentinel.tls.enabled: made once
    std::size_t first_sentinel_ = 0;                                 // the last sentinel that answered
    std::optional<boost::asio::ssl::stream<tcp::socket&>> tls_;      // over sock_, one per connection
    std::string first_bytes_;                                        // the server's first record header (handshake)
    boost::asio::steady_timer timer_;
    redis_store_params p_;
    std::string key_;
    std::string where_;
    std::string sha_;
    redis_link_use use_;
    resp_limits limits_{};  // the bounds of the replies of the call under way
    bool answered_ = false; // async_command: Redis answered the attempt with an error (no retry)
    std::string rbuf_;
    std::uint64_t generation_ = 0;
    bool timed_out_ = false;
    bool refused_ = false;  // this exchange failed on a refused configuration
    bool connected_ = false;  // connected, authenticated, the script loaded
    bool certificate_requested_ = false;  // this TLS connection's server asked for a client certificate
    static constexpr int max_redirects = 5;  // -MOVED/-ASK followed per exchange
    std::optional<redis_redirect> redirect_;  // the last reply's, when it was one
    std::optional<redis_node> node_;          // Redis Cluster: the node of the key's slot (the last -MOVED)
    std::optional<redis_node> asking_;        // Redis Cluster: the node importing the slot (-ASK), this exchange only
};

}  // namespace detail
}  // namespace digital_delivery

#endif
