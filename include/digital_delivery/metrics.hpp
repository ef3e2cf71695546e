//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_METRICS_HPP
#define DIGITAL_DELIVERY_METRICS_HPP

/// \file
/// A ready-made observer: counters and latency histograms per endpoint and
/// status, retries, 429s and rate-limiter waits; a snapshot API and the
/// Prometheus text exposition (docs/observability.md).

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/observer.hpp>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace digital_delivery {

/// A histogram of durations in seconds.
struct duration_histogram
{
    std::vector<double> bounds{};         ///< Upper bounds of the buckets, seconds, increasing.
    std::vector<std::uint64_t> counts{};  ///< Observations per bucket (not cumulative); one more than bounds (+Inf).
    std::uint64_t count = 0;            ///< Observations.
    double sum = 0;                     ///< Their sum, seconds.
};

/// Everything a metrics_observer counted, at one moment.
struct metrics_snapshot
{
    /// `http.client.request.duration`: one observation per attempt (API and storage).
    struct request_series
    {
        std::string endpoint{};        ///< request_info::endpoint ("get_order", "upload_body"...).
        std::string method{};          ///< http.request.method
        std::string server_address{};  ///< server.address
        unsigned status = 0;         ///< http.response.status_code (0: no response)
        std::string error_type{};      ///< error.type ("" for success)
        duration_histogram duration{};  ///< The attempts' durations.
    };
    /// One observation per operation (retries and waits included).
    struct operation_series
    {
        std::string endpoint{};         ///< request_info::endpoint.
        std::string method{};           ///< The HTTP method.
        std::string error_type{};       ///< error_type() of the result ("" for success).
        duration_histogram duration{};  ///< The operations' durations.
    };
    /// `dd_client_retries_total`: retries per endpoint and reason.
    struct retry_series
    {
        std::string endpoint{};   ///< request_info::endpoint.
        std::string reason{};  ///< error_type() of the failed attempt
        std::uint64_t count = 0;  ///< Retries.
    };

    std::vector<request_series> requests{};      ///< One series per endpoint, method, server, status and error.
    std::vector<operation_series> operations{};  ///< One series per endpoint, method and error.
    std::vector<retry_series> retries{};         ///< One series per endpoint and reason.
    std::uint64_t rate_limited_responses = 0;  ///< 429 responses.
    std::uint64_t throttle_pauses = 0;         ///< Pauses of the shared bucket after a 429.
    duration_histogram limiter_wait{};           ///< Time waited for rate-limit points.
    std::uint64_t upload_bytes = 0;            ///< Body bytes of uploads the storage accepted.
    /// The last store event heard (throttle_event store_unavailable,
    /// store_misconfigured, store_restored) says the fallback bucket serves
    /// in place of the shared store. With clients on several buckets, the
    /// last event of any of them decides.
    bool store_fallback = false;
    /// Rate-limit points granted to operations while `store_fallback` held
    /// (the fallback bucket served them).
    std::uint64_t fallback_points = 0;
    /// Finished spans an otlp_exporter given this observer
    /// (otlp_exporter_params::metrics) dropped.
    std::uint64_t spans_dropped = 0;
};

/// Counts what a client does. Install it in client_params::observer and read
/// it from any thread with snapshot() or prometheus().
///
/// \par Cost
/// One lock and a few comparisons per attempt and per operation; no allocation
/// once a series (endpoint, method, server, status, error) exists.
class metrics_observer final : public observer
{
public:
    /// OpenTelemetry's default buckets for http.client.request.duration:
    /// 5 ms ... 10 s.
    /// \return The bucket bounds, in seconds.
    DIGITAL_DELIVERY_DECL static std::vector<double> default_buckets();

    /// Histograms with default_buckets().
    DIGITAL_DELIVERY_DECL metrics_observer();
    /// Histograms with these bucket bounds.
    /// \param bucket_bounds_seconds Upper bounds in seconds (sorted, duplicates dropped).
    DIGITAL_DELIVERY_DECL explicit metrics_observer(std::vector<double> bucket_bounds_seconds);

    /// \return A copy of everything counted so far.
    DIGITAL_DELIVERY_DECL metrics_snapshot snapshot() const;

    /// The Prometheus text exposition format (version 0.0.4) of snapshot():
    /// http_client_request_duration_seconds{http_request_method, http_response_status_code,
    /// server_address, endpoint, error_type}, dd_client_operation_duration_seconds,
    /// dd_client_retries_total, dd_client_rate_limited_responses_total,
    /// dd_client_rate_limit_pauses_total, dd_client_rate_limiter_wait_seconds,
    /// dd_client_upload_bytes_total, dd_client_rate_limit_store_fallback (a
    /// gauge: 1 while the fallback bucket serves),
    /// dd_client_rate_limit_fallback_points_total, and
    /// dd_client_spans_dropped_total.
    /// \return The exposition text.
    std::string prometheus() const { return to_prometheus(snapshot()); }
    /// The Prometheus text exposition of a snapshot (see prometheus()).
    /// \param s The snapshot.
    /// \return The exposition text.
    DIGITAL_DELIVERY_DECL static std::string to_prometheus(const metrics_snapshot& s);

    DIGITAL_DELIVERY_DECL void on_response(const response_event& e) override;
    DIGITAL_DELIVERY_DECL void on_retry(const retry_event& e) override;
    DIGITAL_DELIVERY_DECL void on_limiter_wait(const limiter_wait_event& e) override;
    DIGITAL_DELIVERY_DECL void on_throttle(const throttle_event& e) override;
    DIGITAL_DELIVERY_DECL void on_operation_end(const operation_end_event& e) override;

    /// Counts spans an otlp_exporter dropped (it calls this itself when given
    /// the observer in otlp_exporter_params::metrics).
    /// \param n How many.
    DIGITAL_DELIVERY_DECL void on_spans_dropped(std::uint64_t n);

private:
    std::vector<double> bounds_;
    mutable std::mutex mtx_;
    metrics_snapshot data_;
};

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/observe/metrics.ipp>
#endif

#endif
