//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_TESTING_TRANSPORT_CONFORMANCE_HPP
#define DIGITAL_DELIVERY_TESTING_TRANSPORT_CONFORMANCE_HPP

/// \file
/// The transport conformance kit: runs a transport of your own against
/// scripted servers on 127.0.0.1 and checks the contract of
/// docs/transport.md, "The contract" (docs/transport.md, "The conformance
/// kit").
///
/// \code
/// // GoogleTest (Catch2: CHECK(r.passed()); a plain main: return r.passed() ? 0 : 1;)
/// TEST(my_transport, meets_the_transport_contract)
/// {
///     auto r = dd::testing::run_transport_conformance(
///         [](boost::asio::any_io_executor ex) { return dd::any_transport(my_transport(ex)); });
///     EXPECT_TRUE(r.passed()) << r.failures();
/// }
/// \endcode
///
/// It opens sockets (label it as an integration test), needs no sandbox, and
/// takes a few seconds. Opt-in: not part of <digital_delivery.hpp>; a
/// translation unit including it compiles the kit (inline functions), in
/// header-only and separate-compilation modes alike.

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/transport.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace digital_delivery {
namespace testing {

/// Makes the transport under test, its I/O on `ex` (the kit's own
/// io_context, run by a thread of the kit). Called once per case.
using transport_factory = std::function<any_transport(boost::asio::any_io_executor ex)>;

/// How the kit runs.
struct conformance_params
{
    /// Run the cases with an https:// URL (a TLS handshake that never
    /// finishes, cancelled or timed out). No certificate is needed: the
    /// server never answers the handshake. False for a plain-HTTP transport.
    bool https = true;

    /// The request timeout of the timeout cases (default: 200 ms).
    std::chrono::milliseconds short_timeout{200};

    /// How long a case may wait for a completion before it counts as a hang
    /// (default: 5 s). Requests of the other cases carry a timeout of this
    /// plus one second, so a hung transport ends by itself.
    std::chrono::milliseconds step_limit{5000};

    /// The transport's response body limit: the oversized case announces
    /// and sends one byte more (default: 16 MiB, beast_transport's default).
    std::uint64_t response_body_limit = 16u * 1024u * 1024u;

    /// Run only the cases whose name contains this (empty: all).
    std::string only{};
};

/// One check of the contract.
struct conformance_check
{
    std::string name{};      ///< The case, e.g. "wire.post_bodyless".
    std::string rule{};      ///< The rule, as docs/transport.md states it (with its number).
    bool passed = false;     ///< Whether the transport met it.
    std::string expected{};  ///< What the rule expects.
    std::string seen{};      ///< What the transport did.
};

/// What run_transport_conformance found.
struct conformance_report
{
    std::vector<conformance_check> checks{};  ///< Every check, in the order run.

    /// \return Whether every check passed (and there was at least one).
    bool passed() const noexcept
    {
        if (checks.empty())
            return false;
        for (const auto& c : checks)
            if (!c.passed)
                return false;
        return true;
    }

    /// \return One paragraph per failed check: name, rule, expected, seen.
    std::string failures() const
    {
        std::string r;
        for (const auto& c : checks)
            if (!c.passed)
                r += c.name + ": " + c.rule + "\n  expected: " + c.expected + "\n  seen:     " + c.seen + "\n";
        return r;
    }

    /// \return One line per check ("PASS name" / "FAIL name: rule ..."), then a total.
    std::string to_string() const
    {
        std::string r;
        std::size_t failed = 0;
        for (const auto& c : checks)
        {
            if (c.passed)
                r += "PASS " + c.name + "\n";
            else
            {
                ++failed;
                r += "FAIL " + c.name + ": " + c.rule + "; expected " + c.expected + "; seen " + c.seen + "\n";
            }
        }
        r += std::to_string(checks.size() - failed) + " of " + std::to_string(checks.size()) + " checks passed\n";
        return r;
    }
};

/// Runs the transport made by `make` against scripted servers on 127.0.0.1
/// (port 0; started and stopped by the kit) and checks the contract: the
/// bytes on the wire per method and body kind, phase-correct codes (refused,
/// silent accept, a TLS handshake that never ends, timeouts before and after
/// sending), never re-sending a non-idempotent request or a stream, terminal
/// cancellation in every phase from another thread (partial ignored), an
/// early response during an upload, a peer closing at every byte of a
/// response, malformed and oversized responses, interim 1xx responses, and
/// completions that are never inline, exactly once, on the handler's
/// executor. Blocks until done (a few seconds); never throws for a failed
/// check (each is in the report).
/// \param make Makes the transport under test.
/// \param params How to run.
/// \return Every check with its outcome.
inline conformance_report run_transport_conformance(const transport_factory& make, const conformance_params& params = {});

}  // namespace testing
}  // namespace digital_delivery

#include <digital_delivery/impl/testing/transport_conformance.ipp>

#endif
