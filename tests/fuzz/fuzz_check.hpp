// The checks of the fuzz targets: a failed one prints what failed, then
// aborts (libFuzzer records the input as a crash).
#pragma once

#include <cstdio>
#include <cstdlib>

#define DD_FUZZ_CHECK(cond)                                                                         \
    do                                                                                              \
    {                                                                                               \
        if (!(cond))                                                                                \
        {                                                                                           \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);           \
            std::abort();                                                                           \
        }                                                                                           \
    } while (false)
