//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_OTLP_EXPORTER_HPP
#define DIGITAL_DELIVERY_OTLP_EXPORTER_HPP

/// \file
/// A ready-made tracer: batches the client's finished spans and exports them
/// as OTLP/HTTP JSON to an OpenTelemetry collector and/or to a file, with no
/// dependency on opentelemetry-cpp (docs/observability.md, "Exporting spans").

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/tracer.hpp>
#include <digital_delivery/transport.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace digital_delivery {

class metrics_observer;

/// Configuration of an otlp_exporter. Every default is spelled out. At least
/// one destination (a collector URL or a file) must be set.
struct otlp_exporter_params
{
    /// The collector's base URL, "http[s]://host[:port][/path]": spans are
    /// POSTed to it + "/v1/traces" (as OTEL_EXPORTER_OTLP_ENDPOINT). Default:
    /// empty.
    std::string endpoint{};

    /// The full URL spans are POSTed to, used as is (as
    /// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); wins over `endpoint`. Default: empty.
    std::string traces_endpoint{};

    /// Header fields added to every POST, e.g. a collector's authentication
    /// (as OTEL_EXPORTER_OTLP_HEADERS). Their values appear in no span, log or
    /// error. Not X-Auth-Token, Host, Content-Type, Content-Length or
    /// Transfer-Encoding; no CR or LF. Default: none.
    std::vector<std::pair<std::string, std::string>> headers{};

    /// A file that receives one ExportTraceServiceRequest per line, appended
    /// (what the OpenTelemetry Collector's file receiver reads). Default: empty.
    std::string file{};

    /// How POSTs reach the collector. Default (empty): a beast_transport of
    /// its own on the exporter's executor. The exporter's POSTs go straight to
    /// the transport: no API key, no rate limiter, no observer, no tracer.
    any_transport transport{};

    /// The resource attribute `service.name`. Default (empty): the
    /// executable's file name ("unknown_service" if it cannot be read).
    std::string service_name{};

    /// The resource attribute `service.version` (the version of the program
    /// that makes the requests). Default (empty): not sent. The resource also
    /// carries `telemetry.sdk.name` ("digital_delivery"),
    /// `telemetry.sdk.language` ("cpp") and `telemetry.sdk.version` (the
    /// library's version).
    std::string service_version{};

    /// Most spans waiting to be exported; a span that finds the queue full is
    /// dropped and counted (otlp_exporter_stats::dropped_queue_full). Default: 2048.
    std::size_t max_queue_size = 2048;

    /// Most spans in one export request. Default: 512.
    std::size_t max_batch_size = 512;

    /// Longest time a finished span waits before its batch is exported (a full
    /// batch goes at once). Default: 5 s.
    std::chrono::milliseconds schedule_delay{5000};

    /// Time limit of one POST. Default: 10 s.
    std::chrono::milliseconds export_timeout{10000};

    /// Most POSTs of one batch, the first included (retries after a failure to
    /// reach the collector and after 429, 502, 503, 504). Default: 5.
    int max_attempts = 5;

    /// Backoff ceiling before the first retry (full jitter, doubling per
    /// retry). Default: 1 s.
    std::chrono::milliseconds initial_backoff{1000};

    /// Largest backoff ceiling. Default: 30 s.
    std::chrono::milliseconds max_backoff{30000};

    /// Longest Retry-After honoured: a collector asking for a longer pause
    /// has the batch dropped. Default: 60 s.
    std::chrono::milliseconds max_retry_after{60000};

    /// A metrics observer that counts dropped spans too
    /// (metrics_snapshot::spans_dropped, dd_client_spans_dropped_total).
    /// Default: none.
    std::shared_ptr<metrics_observer> metrics{};
};

/// What an otlp_exporter did so far.
struct otlp_exporter_stats
{
    std::uint64_t exported = 0;               ///< Spans every destination accepted.
    std::uint64_t dropped_queue_full = 0;     ///< Spans that found the queue full, or came after shutdown().
    /// Spans of batches a destination refused or could not be reached for,
    /// and those a collector's partial success says it rejected.
    std::uint64_t dropped_export_failed = 0;
    std::uint64_t export_requests = 0;        ///< POSTs sent, retries included.
    /// \return Every span dropped.
    std::uint64_t dropped() const noexcept { return dropped_queue_full + dropped_export_failed; }
};

/// A tracer (client_params::tracer) that exports the client's spans as
/// OTLP/HTTP JSON: to a collector (`POST {endpoint}/v1/traces`) through a
/// transport, and/or to a file.
///
/// on_end only moves the span into a bounded queue (one lock, no I/O): the
/// exporter never delays or fails a request. Spans leave in batches of up to
/// max_batch_size, at the latest schedule_delay after the first of them
/// ended. When the queue is full (the collector down or slow), new spans are
/// dropped and counted.
///
/// \par Threads
/// Constructed without an executor, the exporter runs on a thread of its own
/// (its I/O, its timers; shutdown() and the destructor join it). Constructed
/// on an executor, it runs there: while spans wait or a POST is under way, it
/// keeps work on that executor, and flush() must not be called from a
/// thread that runs it (use async_flush()). on_end, flush and stats may be
/// called from any thread.
class otlp_exporter final : public tracer
{
public:
    /// An exporter on a thread of its own.
    /// \param params Its configuration.
    /// \throws std::invalid_argument No destination, a URL that is not
    ///   http:// or https://, a header that cannot be set, or a zero
    ///   max_queue_size / max_batch_size.
    /// \throws std::system_error The file cannot be opened for appending.
    DIGITAL_DELIVERY_DECL explicit otlp_exporter(otlp_exporter_params params);

    /// An exporter whose I/O and timers run on `ex` (e.g. the client's
    /// io_context, or a test's with testing::virtual_clock).
    /// \param ex The executor.
    /// \param params Its configuration.
    /// \throws std::invalid_argument, std::system_error As the other constructor.
    DIGITAL_DELIVERY_DECL otlp_exporter(boost::asio::any_io_executor ex, otlp_exporter_params params);

    otlp_exporter(const otlp_exporter&) = delete;
    otlp_exporter& operator=(const otlp_exporter&) = delete;

    /// shutdown(), then frees everything.
    DIGITAL_DELIVERY_DECL ~otlp_exporter() override;

    /// Queues a finished span (never blocks on I/O, never throws).
    /// \param span The span.
    DIGITAL_DELIVERY_DECL void on_end(span_data&& span) noexcept override;

    /// Exports every span queued before the call, waiting at most `timeout`.
    /// \param timeout The longest wait.
    /// \return True when every such span was exported or dropped in time.
    DIGITAL_DELIVERY_DECL bool flush(std::chrono::milliseconds timeout);

    /// Exports every span queued before the call, then completes (signature
    /// `void()`); the spans were exported or dropped by then.
    /// \param token The completion token.
    /// \return What the completion token makes of the operation.
    template <class Token>
    auto async_flush(Token&& token)
    {
        return boost::asio::async_initiate<Token, void()>(
            [this](auto h) { start_flush(boost::asio::any_completion_handler<void()>(std::move(h))); }, token);
    }

    /// Stops accepting spans (later ones are counted in dropped_queue_full),
    /// exports what is queued, then stops its timers. On its own thread: waits
    /// at most `timeout` for the last export, then joins the thread. On an
    /// executor: starts the last export and returns at once (a batch whose
    /// POST fails is then dropped, not retried; async_flush before shutdown
    /// to wait for it). Idempotent; the destructor calls it.
    /// \param timeout On its own thread, the longest wait for the last export.
    /// \return On its own thread, whether the last export ended in time; on an
    ///   executor, whether nothing was left to export.
    DIGITAL_DELIVERY_DECL bool shutdown(std::chrono::milliseconds timeout = std::chrono::seconds(10));

    /// \return What it did so far (any thread).
    DIGITAL_DELIVERY_DECL otlp_exporter_stats stats() const;

    /// \return The URL spans are POSTed to ("" without a collector).
    DIGITAL_DELIVERY_DECL const std::string& traces_url() const noexcept;

    /// \return The service.name it reports.
    DIGITAL_DELIVERY_DECL const std::string& service_name() const noexcept;

    /// \cond detail
    struct state;
    /// \endcond

private:
    DIGITAL_DELIVERY_DECL void start_flush(boost::asio::any_completion_handler<void()> h);

    struct own_thread;
    std::shared_ptr<state> s_;
    std::unique_ptr<own_thread> own_;
};

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/otlp/otlp_exporter.ipp>
#endif

#endif
