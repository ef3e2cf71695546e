//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_JSON_LOGGER_HPP
#define DIGITAL_DELIVERY_JSON_LOGGER_HPP

/// \file
/// A ready-made observer: one JSON line per event, to a std::ostream or a
/// callback, filtered by level (docs/observability.md).

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/observer.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <mutex>
#include <string>
#include <string_view>

namespace digital_delivery {

/// Severity of a log line.
enum class log_level : std::uint8_t
{
    debug,    ///< request start, 2xx responses, limiter waits, upload progress
    info,     ///< successful operations, upload URL refreshes, the end of a 429 pause, a shared store restored
    warning,  ///< non-2xx responses and transport errors of one attempt, retries, 429 pauses, cancellations, a shared store unavailable
    error,    ///< failed operations, a shared store refusing the configuration
    off,      ///< nothing (as a minimum level)
};

/// A level's name.
/// \param l The level.
/// \return "debug", "info", "warning", "error", "off" (static storage).
DIGITAL_DELIVERY_DECL std::string_view to_string(log_level l) noexcept;

/// Logs every event at or above a minimum level as one JSON object per line.
/// Attribute names follow the OpenTelemetry HTTP client conventions:
///
///     {"time":"2026-11-25T21:04:05.123456Z","level":"info","event":"operation.end",
///      "endpoint":"get_order","http.request.method":"GET","url.template":"/orders/{id}",
///      "url.path":"/orders/o1","server.address":"dd.example.com","attempts":1,
///      "duration_ms":41.7}
///
/// Secrets never appear (see observer). Lines written to a stream are written
/// whole, under a mutex: one logger may serve several threads.
class json_logger final : public observer
{
public:
    /// Receives each line, without its newline.
    using sink_type = std::function<void(log_level, std::string_view line)>;

    /// Writes each line and '\n' to `os`, which must outlive the logger.
    /// \param os The stream.
    /// \param min_level Lines below this level are not written.
    DIGITAL_DELIVERY_DECL explicit json_logger(std::ostream& os, log_level min_level = log_level::info);

    /// Hands each line to `sink` (called from the client's threads).
    /// \param sink Receives each line.
    /// \param min_level Lines below this level are not passed on.
    DIGITAL_DELIVERY_DECL explicit json_logger(sink_type sink, log_level min_level = log_level::info);

    /// \return The minimum level.
    log_level level() const noexcept { return min_.load(std::memory_order_relaxed); }
    /// Changes the minimum level (any thread, any time).
    /// \param l The new minimum level.
    void set_level(log_level l) noexcept { min_.store(l, std::memory_order_relaxed); }

    DIGITAL_DELIVERY_DECL void on_request_start(const request_start_event& e) override;
    DIGITAL_DELIVERY_DECL void on_response(const response_event& e) override;
    DIGITAL_DELIVERY_DECL void on_retry(const retry_event& e) override;
    DIGITAL_DELIVERY_DECL void on_limiter_wait(const limiter_wait_event& e) override;
    DIGITAL_DELIVERY_DECL void on_throttle(const throttle_event& e) override;
    DIGITAL_DELIVERY_DECL void on_upload_progress(const upload_progress_event& e) override;
    DIGITAL_DELIVERY_DECL void on_upload_refresh(const upload_refresh_event& e) override;
    DIGITAL_DELIVERY_DECL void on_operation_end(const operation_end_event& e) override;

private:
    bool enabled(log_level l) const noexcept { return l >= level() && l != log_level::off; }
    DIGITAL_DELIVERY_DECL void write(log_level l, const std::string& line);

    std::ostream* os_ = nullptr;
    sink_type sink_;
    std::atomic<log_level> min_;
    std::mutex mtx_;
};

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/observe/json_logger.ipp>
#endif

#endif
