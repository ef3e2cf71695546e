// Deterministic test bodies shared by the upload tests.
#ifndef DIGITAL_DELIVERY_TESTS_COMMON_TEST_DATA_HPP
#define DIGITAL_DELIVERY_TESTS_COMMON_TEST_DATA_HPP

#include <cstddef>
#include <cstdint>
#include <string>

namespace dd_test {

/// `n` pseudo-random bytes (every value 0-255 appears), the same for the same seed.
inline std::string pattern(std::size_t n, unsigned seed = 1)
{
    std::string s(n, '\0');
    std::uint32_t x = seed * 2654435761u + 1;
    for (auto& c : s)
    {
        x = x * 1664525u + 1013904223u;
        c = static_cast<char>(x >> 24);
    }
    return s;
}

}  // namespace dd_test

#endif
