//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_VERSION_HPP
#define DIGITAL_DELIVERY_VERSION_HPP

/// \file
/// The library's version, the same as the CMake package's, meson's and
/// pkg-config's (all read the file VERSION at the top of the source tree;
/// the consumer tests check that they agree with these macros).

/// The major version.
#define DIGITAL_DELIVERY_VERSION_MAJOR 0
/// The minor version.
#define DIGITAL_DELIVERY_VERSION_MINOR 1
/// The patch version.
#define DIGITAL_DELIVERY_VERSION_PATCH 0

/// MAJOR * 100000 + MINOR * 100 + PATCH, as BOOST_VERSION: comparable with `<`.
#define DIGITAL_DELIVERY_VERSION                                                        \
    (DIGITAL_DELIVERY_VERSION_MAJOR * 100000 + DIGITAL_DELIVERY_VERSION_MINOR * 100 + \
     DIGITAL_DELIVERY_VERSION_PATCH)

/// "MAJOR.MINOR.PATCH"
#define DIGITAL_DELIVERY_VERSION_STRING "0.1.0"

#endif
