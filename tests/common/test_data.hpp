// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Deterministic test data shared by the tests: bodies and temporary files for
// the upload tests, random edits of well-formed input for the robustness tests.
#ifndef DIGITAL_DELIVERY_TESTS_COMMON_TEST_DATA_HPP
#define DIGITAL_DELIVERY_TESTS_COMMON_TEST_DATA_HPP

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>

#include <unistd.h>

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

/// A file in /tmp holding `content`, or a sparse file of `sparse_size` bytes
/// (holes, no disk blocks) when that is non-zero; removed by the destructor.
/// `path` is empty when it could not be made (check it with ASSERT_FALSE).
struct temp_file
{
    std::string path;

    explicit temp_file(std::string_view content, std::uint64_t sparse_size = 0)
    {
        char name[] = "/tmp/dd_test_XXXXXX";  // mkstemp's template
        const int fd = ::mkstemp(name);
        if (fd < 0)
            return;
        path = name;
        const bool ok = sparse_size != 0 ? ::ftruncate(fd, static_cast<off_t>(sparse_size)) == 0
                                         : ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
        ::close(fd);
        if (!ok)
        {
            ::unlink(name);
            path.clear();
        }
    }
    ~temp_file()
    {
        if (!path.empty())
            ::unlink(path.c_str());
    }
    temp_file(const temp_file&) = delete;
    temp_file& operator=(const temp_file&) = delete;
};

}  // namespace dd_test

#endif
