// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// libFuzzer target: the Beast transport's HTTP response parsing
// (docs/reliability.md).
//
// Input: byte 0 is how the peer's bytes arrive (the size of each read, and
// whether the response body limit is the default 16 MiB or 64 bytes); the
// rest is what the peer sends. The bytes go through the transport's sans-io
// core (detail::response_reader, impl/http/sansio/http_exchange.hpp) exactly as
// its drivers feed it: bytes arrive in reads into a buffer, the buffered bytes
// are put to the reader, unconsumed ones stay buffered, need_more reads again,
// the end of input is the peer's close (put_eof). A complete response then
// gets the transport's reuse decisions (reusable(), keep_alive_limit from
// Keep-Alive: timeout=N).
// Checked: a complete response has a status of 100-599 and a reuse limit
// between zero and the idle timeout; a failure has an error code.
#include "fuzz_check.hpp"

#include <digital_delivery/impl/http/sansio/connection_reuse.hpp>
#include <digital_delivery/impl/http/sansio/http_exchange.hpp>

#include <boost/beast/core/flat_buffer.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace dd = digital_delivery;

namespace {

constexpr std::array<std::size_t, 8> read_sizes{1, 2, 7, 64, 512, 4096, 65536, 65536};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 1)
        return 0;
    const unsigned mode = data[0];
    const char* in = reinterpret_cast<const char*>(data + 1);
    std::size_t left = size - 1;
    const std::size_t read_size = read_sizes[mode & 7];
    const std::uint64_t body_limit = (mode & 8) ? 64 : 16u * 1024u * 1024u;

    using state = dd::detail::response_reader::state;
    dd::detail::response_reader reader;
    reader.start(body_limit);
    boost::beast::flat_buffer buf;
    buf.reserve(16 * 1024);
    state st = state::need_more;
    for (;;)
    {
        if (buf.size() != 0)
        {
            std::size_t used = 0;
            st = reader.put(buf.data(), used);
            DD_FUZZ_CHECK(used <= buf.size());
            buf.consume(used);
            if (st == state::continue_)
                continue;
            if (st != state::need_more)
                break;
        }
        if (left == 0)
        {
            st = reader.put_eof();  // the peer closed
            break;
        }
        const std::size_t room = buf.capacity() - buf.size();
        const std::size_t want = std::min<std::size_t>(std::max<std::size_t>(room, 512), 65536);
        const std::size_t n = std::min({want, read_size, left});
        auto mb = buf.prepare(n);
        std::copy_n(in, n, static_cast<char*>(mb.data()));
        buf.commit(n);
        in += n;
        left -= n;
    }
    DD_FUZZ_CHECK(st == state::done || st == state::failed);
    if (st == state::failed)
        DD_FUZZ_CHECK(static_cast<bool>(reader.error()));
    else
    {
        (void)reader.reusable(buf.size() != 0);
        const dd::http_response r = reader.take_response();
        DD_FUZZ_CHECK(r.status >= 100 && r.status <= 599);
        const std::chrono::milliseconds idle{4000};
        const auto limit = dd::detail::keep_alive_limit(r, idle);
        DD_FUZZ_CHECK(limit.count() >= 0 && limit <= idle);
    }
    return 0;
}
