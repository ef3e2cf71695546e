//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_DETAIL_BOOST_COMPAT_HPP
#define DIGITAL_DELIVERY_DETAIL_BOOST_COMPAT_HPP

// The one place that decides by Boost version: every difference between the
// Boost releases this library supports (1.81 and later; tested: 1.81, 1.83
// and the newest, README.md) is a macro here, named after what it means, and
// the code tests that macro, never BOOST_VERSION itself. Only
// <boost/version.hpp> is included: Boost's libraries are released together,
// so BOOST_VERSION also says which Beast, Asio, JSON and URL are there.

#include <boost/version.hpp>

#if BOOST_VERSION < 108100
#error "digital_delivery requires Boost 1.81 or later (tested: 1.81, 1.83 and the newest release)"
#endif

// Beast's http::basic_parser reports the fields of a chunked body's trailer
// through the pure virtual on_trailer_field_impl from Beast 359 (Boost 1.90)
// on; before, through on_field_impl, called again after on_header_impl.
#if BOOST_VERSION >= 109000
#define DIGITAL_DELIVERY_BEAST_TRAILER_FIELD_IMPL 1
#else
#define DIGITAL_DELIVERY_BEAST_TRAILER_FIELD_IMPL 0
#endif

// Beast before Boost 1.86 resumes a chunked body's last chunk with
// BOOST_ASSERT(n >= 5) (boostorg/beast#2861, fixed in 1.86): a peer sending
// "0\r\n" then "\r" in two reads aborts a program built without NDEBUG, so
// the response parser waits for 5 bytes there, with those versions only: a
// later Beast (seen with Boost 1.92) consumes the last chunk's line on its own
// and then needs only the final CRLF (2 bytes), so waiting for 5 would wait
// forever.
#if BOOST_VERSION < 108600
#define DIGITAL_DELIVERY_BEAST_LAST_CHUNK_NEEDS_5_BYTES 1
#else
#define DIGITAL_DELIVERY_BEAST_LAST_CHUNK_NEEDS_5_BYTES 0
#endif

#endif
