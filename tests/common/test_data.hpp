// Deterministic test data shared by the tests: bodies for the upload tests,
// random edits of well-formed input for the robustness tests.
#ifndef DIGITAL_DELIVERY_TESTS_COMMON_TEST_DATA_HPP
#define DIGITAL_DELIVERY_TESTS_COMMON_TEST_DATA_HPP

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>

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

/// `text` after 1 to 3 random edits, each one of: a byte replaced by one of
/// `alphabet`, a byte deleted, a byte of `alphabet` inserted, the text cut
/// short, a short span of it repeated. Seed `rng` for the same cases every run.
inline std::string mutate(std::string text, std::mt19937& rng, std::string_view alphabet)
{
    auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
    for (std::size_t k = 1 + pick(3); k > 0 && !text.empty(); --k)
    {
        const std::size_t at = pick(text.size());
        switch (pick(5))
        {
        case 0: text[at] = alphabet[pick(alphabet.size())]; break;
        case 1: text.erase(at, 1); break;
        case 2: text.insert(at, 1, alphabet[pick(alphabet.size())]); break;
        case 3: text.resize(at); break;
        default: text.insert(at, text.substr(pick(text.size()), 1 + pick(12))); break;
        }
    }
    return text;
}

}  // namespace dd_test

#endif
