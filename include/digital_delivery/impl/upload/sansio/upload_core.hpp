//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_DETAIL_UPLOAD_CORE_HPP
#define DIGITAL_DELIVERY_DETAIL_UPLOAD_CORE_HPP

// Sans-io parts of the upload operation: the progress throttle and the
// decision taken after each PUT. No I/O, no clock of their own (time is an
// input), so they are tested exhaustively in tests/upload/test_upload_core.cpp.

#include <digital_delivery/detail/saturating_time.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/upload_options.hpp>

#include <boost/asio/error.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>

namespace digital_delivery {
namespace detail {

/// Decides when a progress report is due, keeps reports monotonic across
/// retries, and computes the rate of the current attempt.
class progress_meter
{
public:
    using clock = std::chrono::steady_clock;

    progress_meter(std::uint64_t total, std::chrono::milliseconds interval, std::uint64_t step_bytes, clock::time_point start)
        : total_(total), interval_(interval), step_(step_bytes), op_start_(start), attempt_start_(start), last_report_(start)
    {
    }

    /// A new PUT attempt starts (bytes of the attempt restart from 0).
    void new_attempt(clock::time_point now)
    {
        ++attempt_;
        attempt_start_ = now;
        attempt_bytes_ = 0;
    }

    /// `n` more bytes of the current attempt went out. Returns a report when
    /// one is due: never more often than the interval (or the byte step),
    /// never backwards, never the final report (see finish()).
    std::optional<upload_progress> on_bytes(std::uint64_t n, clock::time_point now)
    {
        attempt_bytes_ += n;
        if (attempt_bytes_ <= reported_ || attempt_bytes_ >= total_)
            return std::nullopt;  // not past the high-water mark, or the end (reported by finish)
        const bool time_due = now - last_report_ >= interval_;
        const bool step_due = step_ != 0 && attempt_bytes_ - reported_ >= step_;
        if (!time_due && !step_due)
            return std::nullopt;
        return report(attempt_bytes_, now);
    }

    /// The storage accepted the body: the last report, bytes_sent == total.
    upload_progress finish(clock::time_point now) { return report(total_, now); }

    std::uint64_t attempt_bytes() const noexcept { return attempt_bytes_; }
    unsigned attempt() const noexcept { return attempt_; }

private:
    upload_progress report(std::uint64_t bytes, clock::time_point now)
    {
        reported_ = std::max(reported_, bytes);
        last_report_ = now;
        const double secs = std::chrono::duration<double>(now - attempt_start_).count();
        upload_progress p;
        p.bytes_sent = reported_;
        p.total = total_;
        p.rate = secs > 0 ? static_cast<double>(std::max(attempt_bytes_, bytes == total_ ? total_ : 0)) / secs : 0.0;
        p.attempt = attempt_;
        p.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(now - op_start_);
        return p;
    }

    std::uint64_t total_;
    std::chrono::milliseconds interval_;
    std::uint64_t step_;
    clock::time_point op_start_, attempt_start_, last_report_;
    std::uint64_t attempt_bytes_ = 0;
    std::uint64_t reported_ = 0;
    unsigned attempt_ = 1;
};

/// What to do after one PUT.
enum class put_action
{
    done,               ///< The storage accepted the body.
    retry,              ///< Rewind and PUT again to the same URL (after backoff).
    refresh_and_retry,  ///< Get a fresh URL (POST /assets/{id}/replace), rewind, PUT again.
    fail,               ///< Complete with the error.
};

/// Inputs: the transport's error (none when a response arrived), the HTTP
/// status, the storage error classify_storage_response gave for it, and how
/// many attempts were made out of how many allowed.
inline put_action decide_after_put(
    error_code transport_ec,
    unsigned status,
    error_code storage_ec,
    unsigned attempts_made,
    unsigned max_attempts
) noexcept
{
    const bool attempts_left = attempts_made < max_attempts;
    if (transport_ec)
    {
        if (transport_ec == boost::asio::error::operation_aborted)
            return put_action::fail;
        // Source problems are not transient: the same bytes would fail again.
        if (transport_ec == client_errc::source_unreadable || transport_ec == client_errc::source_size_mismatch)
            return put_action::fail;
        if (transport_ec == client_errc::invalid_url)
            return put_action::fail;
        return attempts_left && is_transient(transport_ec) ? put_action::retry : put_action::fail;
    }
    if (status >= 200 && status < 300)
        return put_action::done;
    if (storage_ec == api_errc::storage_request_expired)
        return attempts_left ? put_action::refresh_and_retry : put_action::fail;
    if (status >= 500 && status < 600)
        return attempts_left ? put_action::retry : put_action::fail;
    return put_action::fail;  // signature mismatch, access denied, 4xx: the same request fails again
}

/// True when a URL expiring at `expires_at` should be replaced before a PUT
/// starts at `now` (an unknown expiry, the epoch, never is). Compared in
/// microseconds with saturation: an expiry outside system_clock's range
/// (before 1678 or after 2262 with nanoseconds) is far past or far future,
/// never wrapped around into the other.
inline bool url_needs_refresh(
    std::chrono::sys_time<std::chrono::microseconds> expires_at,
    std::chrono::system_clock::time_point now,
    std::chrono::seconds margin
) noexcept
{
    using std::chrono::microseconds;
    if (expires_at.time_since_epoch().count() == 0)
        return false;
    const std::int64_t now_us = std::chrono::floor<microseconds>(now).time_since_epoch().count();
    const std::int64_t margin_us = saturating_duration_cast<microseconds>(margin).count();
    // expires_at - margin <= now, as expires_at <= now + margin (saturated).
    return expires_at.time_since_epoch().count() <= saturating_add(now_us, margin_us);
}

/// The longest wait between two PUTs of an upload (upload_options::retry_backoff
/// doubles per retry up to this; retry_delay adds the jitter).
inline constexpr std::chrono::milliseconds max_upload_backoff = std::chrono::seconds(30);

}  // namespace detail
}  // namespace digital_delivery

#endif
