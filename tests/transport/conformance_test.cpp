// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The transport conformance kit (testing/transport_conformance.hpp): the
// Beast transport passes it; transports that break a rule each fail the
// check that names it (so the kit's checks can fail).
#include <digital_delivery/beast_transport.hpp>
#include <digital_delivery/testing/transport_conformance.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/append.hpp>
#include <boost/asio/post.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace dd = digital_delivery;
namespace asio = boost::asio;

namespace {

dd::beast_transport_params kit_params()
{
    dd::beast_transport_params p;
    p.tls.verify_peer = false;  // the TLS cases never complete a handshake
    return p;
}

bool failed(const dd::testing::conformance_report& r, std::string_view name)
{
    for (const auto& c : r.checks)
        if (!c.passed && c.name.find(name) != std::string::npos)
            return true;
    return false;
}

TEST(transport_conformance, the_beast_transport_passes_the_kit)
{
    const auto r = dd::testing::run_transport_conformance(
        [](asio::any_io_executor ex) { return dd::any_transport(dd::beast_transport(std::move(ex), kit_params())); });
    EXPECT_TRUE(r.passed()) << r.failures();
    EXPECT_GT(r.checks.size(), 100u) << r.to_string();
}

// A transport that breaks rules the way the curl example did: every failure
// reported as request_timeout (a refused connect looks maybe-processed), an
// Accept field of its own on the wire, a completion inline, and the caller's
// cancellation slot lost (its inner handler is a plain lambda).
struct careless_transport
{
    dd::beast_transport inner;
    asio::any_io_executor get_executor() const { return inner.get_executor(); }
    void async_send(dd::http_request req, dd::transport_handler h)
    {
        if (req.url.find('[') != std::string::npos)
            return std::move(h)(dd::client_errc::invalid_url, dd::http_response{});  // inline
        req.headers.add("Accept", "*/*");
        inner.async_send(std::move(req), [h = std::move(h), ex = inner.get_executor()](dd::error_code ec, dd::http_response r) mutable {
            if (ec && ec != asio::error::operation_aborted)
                ec = dd::client_errc::request_timeout;
            asio::post(ex, asio::append(std::move(h), ec, std::move(r)));
        });
    }
};

TEST(transport_conformance, a_careless_transport_fails_the_checks_that_name_its_faults)
{
    dd::testing::conformance_params p;
    p.https = false;
    p.step_limit = std::chrono::milliseconds(1000);  // its cancellations hang until the request's timeout
    const auto r = dd::testing::run_transport_conformance(
        [](asio::any_io_executor ex) {
            return dd::any_transport(careless_transport{dd::beast_transport(std::move(ex), kit_params())});
        },
        p);
    EXPECT_FALSE(r.passed());
    EXPECT_TRUE(failed(r, "phase.refused")) << r.to_string();
    EXPECT_TRUE(failed(r, "wire.get.no_other_fields")) << r.to_string();
    EXPECT_TRUE(failed(r, "completion.invalid_url.never_inline")) << r.to_string();
    EXPECT_TRUE(failed(r, "cancel.waiting_for_response.completes")) << r.to_string();
    EXPECT_TRUE(failed(r, "response.malformed.status_code")) << r.to_string();
    EXPECT_FALSE(failed(r, "resend.")) << r.to_string();
    EXPECT_NE(r.failures().find("rule 5"), std::string::npos) << r.failures();
    EXPECT_NE(r.failures().find("expected: "), std::string::npos);
}

}  // namespace
