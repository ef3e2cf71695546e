//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_TIMESTAMP_HPP
#define DIGITAL_DELIVERY_TIMESTAMP_HPP

/// \file
/// Time values of the API: ISO 8601 timestamps and `YYYY-MM-DD` dates.

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/detail/saturating_time.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace digital_delivery {

/// An instant, UTC, microsecond precision. Parsed from ISO 8601 with any
/// offset ("2024-05-01T12:34:56.789-04:00", "...Z"). Every year 0000-9999
/// that parse_timestamp() accepts is held exactly (microseconds in 64 bits
/// span +-292,000 years): decoding a response never overflows.
///
/// std::chrono::system_clock::time_point counts nanoseconds with libstdc++ and
/// only spans 1677-09-21 to 2262-04-11: converting a timestamp outside that
/// range to it, or comparing one with system_clock::now() (which converts to
/// nanoseconds), overflows. Use to_system_time(), which saturates.
using timestamp = std::chrono::sys_time<std::chrono::microseconds>;

/// `t` as a system_clock::time_point, clamped to system_clock's
/// time_point::min()/max() instead of overflowing (a server's "9999-12-31"
/// becomes max(), "0001-01-01" min()). Exact inside the range.
/// \param t The instant.
/// \return The same instant, or the nearer end of system_clock's range.
inline std::chrono::system_clock::time_point to_system_time(timestamp t) noexcept
{
    return detail::saturating_time_point_cast<std::chrono::system_clock::duration>(t);
}

/// A calendar date (the orders filters created_at_min/max).
using date = std::chrono::year_month_day;

/// Parses an ISO 8601 / RFC 3339 date-time: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM|±HHMM)`.
/// A lowercase `t`/`z` or a space separator are accepted; an offset is
/// required (a local time without offset is ambiguous and rejected).
/// \param s The text.
/// \return The instant, or nullopt when `s` is not of that form.
DIGITAL_DELIVERY_DECL std::optional<timestamp> parse_timestamp(std::string_view s) noexcept;

/// Formats as `YYYY-MM-DDTHH:MM:SS[.ffffff]Z` (fraction only when non-zero).
/// An instant outside the years 0000-9999 in UTC, which parse_timestamp()
/// returns for e.g. "9999-12-31T23:59:60Z" or "0000-01-01T00:00:00+01:00",
/// gets a year of five digits or a sign, which parse_timestamp() refuses.
/// \param t The instant.
/// \return The text.
DIGITAL_DELIVERY_DECL std::string format_timestamp(timestamp t);

/// Parses `YYYY-MM-DD` (a valid calendar date).
/// \param s The text.
/// \return The date, or nullopt.
DIGITAL_DELIVERY_DECL std::optional<date> parse_date(std::string_view s) noexcept;

/// Formats as `YYYY-MM-DD`.
/// \param d The date.
/// \return The text.
DIGITAL_DELIVERY_DECL std::string format_date(date d);

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/model/timestamp.ipp>
#endif

#endif
