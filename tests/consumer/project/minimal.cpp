// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The smallest consumer that proves a way in works: the package's include
// directories, its version, and one function of the library linked (inline in
// header-only mode, from the compiled library with digital_delivery::compiled).
// The consumer tests other than find_package build this one; find_package
// builds main.cpp and other.cpp (every header of the umbrella, two TUs).
#include <digital_delivery/timestamp.hpp>
#include <digital_delivery/version.hpp>

#include <cstdio>
#include <string_view>

// The build system's version of the package (CMake, meson or pkg-config) is the headers'.
static_assert(std::string_view(DIGITAL_DELIVERY_VERSION_STRING) == DD_EXPECTED_VERSION);

int main()
{
    const auto ts = digital_delivery::parse_timestamp("2024-01-01T00:00:00Z");
    std::printf("consumer: minimal, timestamp %s\n", ts ? "parsed" : "refused");
    return ts ? 0 : 1;
}
