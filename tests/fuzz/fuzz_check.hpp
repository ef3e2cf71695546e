// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The checks of the fuzz targets: a failed one prints what failed, then
// aborts (libFuzzer records the input as a crash).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#define DD_FUZZ_CHECK(cond)                                                                         \
    do                                                                                              \
    {                                                                                               \
        if (!(cond))                                                                                \
        {                                                                                           \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);           \
            std::abort();                                                                           \
        }                                                                                           \
    } while (false)

// The input split at '\n' (the last line may be empty).
inline std::vector<std::string_view> fuzz_lines(std::string_view rest)
{
    std::vector<std::string_view> lines;
    for (;;)
    {
        const auto nl = rest.find('\n');
        lines.push_back(rest.substr(0, nl));
        if (nl == std::string_view::npos)
            return lines;
        rest.remove_prefix(nl + 1);
    }
}
