//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_TESTING_CASSETTE_HPP
#define DIGITAL_DELIVERY_TESTING_CASSETTE_HPP

/// \file
/// Cassettes: record a program's real HTTP traffic once, replay it in tests
/// without a network (docs/cassettes.md). In the manner of VCR, vcrpy and go-vcr.
///
/// \code
/// // In a test fixture: records on the first run (or when
/// // DIGITAL_DELIVERY_RECORD_MODE=all), replays from then on.
/// auto t = std::make_shared<dd::testing::cassette_transport>(
///     ioc.get_executor(), "tests/cassettes/orders.json", dd::testing::record_mode_from_env(),
///     [&] { return dd::any_transport(dd::beast_transport(ioc.get_executor())); },
///     dd::testing::cassette_options{.masked_fields = {"email", "licence_key"}});
/// dd::client client(t, params);
/// ... the code under test ...
/// t->verify();   // replaying: every recorded exchange was used (throws otherwise)
/// \endcode
///
/// - recording_transport wraps any transport and writes every exchange to a
///   cassette file: request method, path, query, headers and body; response
///   status, headers and body (or the transport error). The API key and other
///   credentials, presigned URLs' signatures and the JSON fields named in
///   cassette_options::masked_fields never reach the file; streaming bodies
///   (uploads) are recorded as their size and SHA-256, never their bytes.
/// - replay_transport serves a cassette: a request matching no recorded
///   exchange completes with client_errc::cassette_no_match (diagnostics name
///   the request and the closest recorded exchange); verify() reports the
///   exchanges never used. Replayed responses go through the whole client
///   (rate limiter, retries, decoding); their Date, X-RateLimit-Reset and
///   Retry-After times are shifted by the time since they were recorded.
/// - cassette_transport picks one of the two by record_mode (once, none, all).

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/diagnostics.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/http_message.hpp>
#include <digital_delivery/transport.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace digital_delivery {
namespace detail {
namespace cassette {
class cassette_recorder;
class cassette_player;
}  // namespace cassette
}  // namespace detail

namespace testing {

/// When cassette_transport records and when it replays (the VCR modes).
enum class record_mode
{
    once,  ///< Replay the cassette when its file exists, record it when it does not.
    none,  ///< Only replay; a missing cassette is an error (client_errc::cassette_invalid).
    all,   ///< Always record, replacing the file.
};

/// Which recorded exchange answers a request when replaying.
enum class match_order
{
    first_unused,  ///< The first exchange not used yet that matches (concurrent code, any order).
    recorded,      ///< The next exchange in recorded order, which must match.
};

/// How a cassette is written and replayed. Recording and replaying a cassette
/// should use the same options.
struct cassette_options
{
    /// JSON object members, at any depth of request and response bodies (and
    /// query parameters of these names), whose values are replaced by a
    /// placeholder: "MASKED-<name>-<n>", the same value getting the same
    /// placeholder throughout the cassette (e.g. {"email", "licence_key"}).
    /// Their values are also replaced wherever else they appear in the cassette
    /// (values of 6 characters or more).
    std::vector<std::string> masked_fields{};

    /// Query parameters masked in addition to the built-in list (signatures
    /// and credentials of presigned URLs: X-Amz-Signature, X-Amz-Credential,
    /// X-Amz-Security-Token, Signature, X-Goog-Signature, ...): recorded as "REDACTED".
    std::vector<std::string> masked_query_parameters{};

    /// Header fields masked in addition to the built-in list (X-Auth-Token,
    /// Authorization, Proxy-Authorization, Cookie, Set-Cookie, X-Amz-Security-Token).
    std::vector<std::string> masked_headers{};

    /// Replaying: which exchange answers a request.
    match_order order = match_order::first_unused;

    /// Replaying: the request body must match too (masked fields compare
    /// equal whatever their values; streaming bodies by size and SHA-256).
    /// Off by default: method, path and query.
    bool match_body = false;
};

/// The mode named by environment variable `variable` ("once", "none" or
/// "all"), `fallback` when it is unset. Throws std::invalid_argument for any
/// other value.
/// \param fallback The mode when the variable is unset.
/// \param variable The environment variable's name.
/// \return The mode.
DIGITAL_DELIVERY_DECL record_mode record_mode_from_env(
    record_mode fallback = record_mode::once,
    const char* variable = "DIGITAL_DELIVERY_RECORD_MODE"
);

/// Wraps a transport and records each exchange that goes through it to a
/// cassette file, rewritten (whole, atomically) after each exchange. Copies
/// share the same cassette. Cancelled exchanges are not recorded.
class recording_transport
{
public:
    /// Records what `inner` sends and receives to the file `path` (replaced).
    /// \param inner The live transport.
    /// \param path The cassette file.
    /// \param options Masking.
    DIGITAL_DELIVERY_DECL recording_transport(any_transport inner, std::string path, cassette_options options = {});

    /// \return The inner transport's executor.
    DIGITAL_DELIVERY_DECL boost::asio::any_io_executor get_executor() const;

    /// Sends through the inner transport. A streaming body is hashed on its
    /// way through, never buffered. When the cassette cannot be written the
    /// exchange completes with client_errc::cassette_invalid.
    /// \param req The request.
    /// \param h Called with the inner transport's answer.
    DIGITAL_DELIVERY_DECL void async_send(http_request req, transport_handler h);

    /// \return Exchanges recorded so far.
    DIGITAL_DELIVERY_DECL std::size_t size() const;

    /// \return The cassette file's path.
    DIGITAL_DELIVERY_DECL const std::string& path() const noexcept;

private:
    std::shared_ptr<detail::cassette::cassette_recorder> impl_;
};

/// Serves the exchanges of a cassette file, without a network. Copies share
/// the same state.
class replay_transport
{
public:
    /// Loads the cassette `path`. Throws error_with_diagnostics
    /// (client_errc::cassette_invalid) when it cannot be read or is not a cassette.
    /// \param ex Where completions are posted.
    /// \param path The cassette file.
    /// \param options Masking and matching (those it was recorded with).
    DIGITAL_DELIVERY_DECL replay_transport(boost::asio::any_io_executor ex, const std::string& path, cassette_options options = {});

    /// \return The executor given at construction.
    DIGITAL_DELIVERY_DECL boost::asio::any_io_executor get_executor() const;

    /// Answers with the matching recorded exchange (a streaming body is read to
    /// its end first, reporting progress), or client_errc::cassette_no_match
    /// (see verify()). Always completes through a post, never inline.
    /// \param req The request.
    /// \param h Called with the recorded answer.
    DIGITAL_DELIVERY_DECL void async_send(http_request req, transport_handler h);

    /// \return The exchanges never used so far ("#3 GET /api/v1/external/orders?page=2").
    DIGITAL_DELIVERY_DECL std::vector<std::string> unused() const;

    /// \return The requests that matched nothing, each with the closest recorded exchange.
    DIGITAL_DELIVERY_DECL std::vector<std::string> mismatches() const;

    /// Strict mode, at the end of a test: client_errc::cassette_no_match when a
    /// request matched nothing, client_errc::cassette_unused_exchanges when a
    /// recorded exchange was never used; `diag.client_message` lists them.
    /// \param diag Filled on failure.
    /// \return Empty when every request matched and every exchange was used.
    DIGITAL_DELIVERY_DECL error_code verify(diagnostics& diag) const;

    /// The same; throws error_with_diagnostics on failure.
    DIGITAL_DELIVERY_DECL void verify() const;

private:
    std::shared_ptr<detail::cassette::cassette_player> impl_;
};

/// Records or replays, as `mode` says: the one switch of a test fixture.
/// `make_inner` creates the live transport; it is called only when recording.
class cassette_transport
{
public:
    /// Records when `mode` is all, or once and the file `path` does not
    /// exist; replays otherwise.
    /// \param ex Where completions are posted when replaying.
    /// \param path The cassette file.
    /// \param mode The VCR mode (record_mode_from_env() reads it from the environment).
    /// \param make_inner Creates the live transport (called only when recording).
    /// \param options Masking and matching.
    DIGITAL_DELIVERY_DECL cassette_transport(
        boost::asio::any_io_executor ex,
        std::string path,
        record_mode mode,
        const std::function<any_transport()>& make_inner,
        cassette_options options = {}
    );

    /// \return True when recording, false when replaying.
    bool recording() const noexcept { return recorder_.has_value(); }

    /// \return The executor of the transport in use.
    DIGITAL_DELIVERY_DECL boost::asio::any_io_executor get_executor() const;
    /// Records or replays one exchange.
    /// \param req The request.
    /// \param h Called with the answer.
    DIGITAL_DELIVERY_DECL void async_send(http_request req, transport_handler h);

    /// Replaying: replay_transport::verify(). Recording: success.
    /// \param diag Cleared, then filled on failure.
    /// \return The result.
    DIGITAL_DELIVERY_DECL error_code verify(diagnostics& diag) const;
    /// Replaying: replay_transport::verify() (throws error_with_diagnostics on
    /// failure). Recording: does nothing.
    DIGITAL_DELIVERY_DECL void verify() const;

private:
    std::optional<recording_transport> recorder_;
    std::optional<replay_transport> player_;
};

static_assert(transport<recording_transport>);
static_assert(transport<replay_transport>);
static_assert(transport<cassette_transport>);

}  // namespace testing
}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/testing/cassette.ipp>
#endif

#endif
