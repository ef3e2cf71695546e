//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_INTERNAL_SHA256_HPP
#define DIGITAL_DELIVERY_IMPL_INTERNAL_SHA256_HPP

/// \file
/// SHA-256 (FIPS 180-4), small and dependency-free: it names shared
/// rate-limit stores after (base URL, API key) without the key being
/// recoverable from the name, and without OpenSSL in the library's headers.

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace digital_delivery {
namespace detail {

class sha256
{
public:
    void update(std::string_view s) noexcept
    {
        // Whole blocks straight from the input (uploads of 2 GiB are hashed
        // by testing::recording_transport); the rest through buf_.
        const auto* p = reinterpret_cast<const unsigned char*>(s.data());
        std::size_t n = s.size();
        const std::size_t fill = static_cast<std::size_t>(len_ % 64);
        len_ += n;
        if (fill != 0)
        {
            const std::size_t take = n < 64 - fill ? n : 64 - fill;
            std::memcpy(buf_.data() + fill, p, take);
            p += take;
            n -= take;
            if (fill + take < 64)
                return;
            block(buf_.data());
        }
        for (; n >= 64; p += 64, n -= 64)
            block(p);
        if (n != 0)
            std::memcpy(buf_.data(), p, n);
    }

    std::array<unsigned char, 32> finish() noexcept
    {
        const std::uint64_t bits = len_ * 8;
        update(std::string_view("\x80", 1));
        while (len_ % 64 != 56)
            update(std::string_view("\0", 1));
        char l[8];
        for (int i = 0; i < 8; ++i)
            l[i] = static_cast<char>(bits >> (56 - 8 * i));
        update(std::string_view(l, 8));
        std::array<unsigned char, 32> out{};
        for (int i = 0; i < 8; ++i)
            for (int j = 0; j < 4; ++j)
                out[4 * i + j] = static_cast<unsigned char>(h_[i] >> (24 - 8 * j));
        return out;
    }

    /// Lower-case hex digits of a digest.
    static std::string to_hex(const std::array<unsigned char, 32>& d)
    {
        static constexpr char digits[] = "0123456789abcdef";
        std::string out;
        out.reserve(64);
        for (unsigned char c : d)
        {
            out += digits[c >> 4];
            out += digits[c & 15];
        }
        return out;
    }

    static std::string hex(std::string_view s)
    {
        sha256 h;
        h.update(s);
        return to_hex(h.finish());
    }

private:
    static std::uint32_t rotr(std::uint32_t x, int n) noexcept { return (x >> n) | (x << (32 - n)); }

    void block(const unsigned char* p) noexcept
    {
        static constexpr std::uint32_t k[64] = {
            0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
            0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
            0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
            0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
            0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
            0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
            0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
            0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
        std::uint32_t w[64];
        for (int i = 0; i < 16; ++i)
            w[i] = (std::uint32_t(p[4 * i]) << 24) | (std::uint32_t(p[4 * i + 1]) << 16) |
                   (std::uint32_t(p[4 * i + 2]) << 8) | std::uint32_t(p[4 * i + 3]);
        for (int i = 16; i < 64; ++i)
        {
            const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
            const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        std::uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
        for (int i = 0; i < 64; ++i)
        {
            const std::uint32_t s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
            const std::uint32_t ch = (e & f) ^ (~e & g);
            const std::uint32_t t1 = h + s1 + ch + k[i] + w[i];
            const std::uint32_t s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
            const std::uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
            const std::uint32_t t2 = s0 + maj;
            h = g;
            g = f;
            f = e;
            e = d + t1;
            d = c;
            c = b;
            b = a;
            a = t1 + t2;
        }
        h_[0] += a;
        h_[1] += b;
        h_[2] += c;
        h_[3] += d;
        h_[4] += e;
        h_[5] += f;
        h_[6] += g;
        h_[7] += h;
    }

    std::array<std::uint32_t, 8> h_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    std::array<unsigned char, 64> buf_{};
    std::uint64_t len_ = 0;
};

/// 32 hex digits of SHA-256(normalised base URL, API key): the name of a
/// shared store (shared memory, Redis), from which the key cannot be read back.
inline std::string store_key_digest(std::string_view normalised_base_url, std::string_view api_key)
{
    sha256 h;
    h.update("digital_delivery rate-limit store v1");
    h.update(std::string_view("\0", 1));
    h.update(normalised_base_url);
    h.update(std::string_view("\0", 1));
    h.update(api_key);
    return sha256::to_hex(h.finish()).substr(0, 32);
}

}  // namespace detail
}  // namespace digital_delivery

#endif
