//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
//
#ifndef DIGITAL_DELIVERY_TIMESTAMP_HPP
#define DIGITAL_DELIVERY_TIMESTAMP_HPP

/// \file
/// Time values of the API: ISO 8601 timestamps and `YYYY-MM-DD` dates.

#include <digital_delivery/detail/config.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace digital_delivery {

/// An instant, UTC, microsecond precision. Parsed from ISO 8601 with any
/// offset ("2024-05-01T12:34:56.789-04:00", "...Z").
using timestamp = std::chrono::sys_time<std::chrono::microseconds>;

/// A calendar date (the orders filters created_at_min/max).
using date = std::chrono::year_month_day;

/// Parses an ISO 8601 / RFC 3339 date-time: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM|±HHMM)`.
/// A lowercase `t`/`z` or a space separator are accepted; an offset is
/// required (a local time without offset is ambiguous and rejected).
DIGITAL_DELIVERY_DECL std::optional<timestamp> parse_timestamp(std::string_view s) noexcept;

/// Formats as `YYYY-MM-DDTHH:MM:SS[.ffffff]Z` (fraction only when non-zero).
DIGITAL_DELIVERY_DECL std::string format_timestamp(timestamp t);

/// Parses `YYYY-MM-DD` (a valid calendar date).
DIGITAL_DELIVERY_DECL std::optional<date> parse_date(std::string_view s) noexcept;

/// Formats as `YYYY-MM-DD`.
DIGITAL_DELIVERY_DECL std::string format_date(date d);

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/timestamp.ipp>
#endif

#endif
