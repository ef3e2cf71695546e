// libFuzzer target: the Beast transport's HTTP response parsing
// (docs/reliability.md).
//
// Input: byte 0 is how the peer's bytes arrive (the size of each read, and
// whether the response body limit is the default 16 MiB or 64 bytes); the
// rest is what the peer sends. The bytes go through the transport's own
// parser (detail::bt::direct_parser, writing straight into an http_response)
// with the transport's reading loop: buffered bytes are put to the parser,
// need_more reads again, an interim 1xx response (not 101) starts a new
// parser, the end of input is the peer's close (put_eof). A complete
// response then gets the transport's reuse decision (keep_alive_limit, from
// Keep-Alive: timeout=N).
// Checked: a complete response has a status of 100-599 and a reuse limit
// between zero and the idle timeout.
#include "fuzz_check.hpp"

#include <digital_delivery/impl/internal/connection_reuse.hpp>
#include <digital_delivery/impl/internal/response_parser.hpp>

#include <boost/beast/core/flat_buffer.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace dd = digital_delivery;
namespace http = boost::beast::http;

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

    std::optional<dd::detail::bt::direct_parser> parser;
    auto new_parser = [&] {
        parser.emplace();
        parser->body_limit(body_limit);
    };
    new_parser();
    boost::beast::flat_buffer buf;
    buf.reserve(16 * 1024);
    dd::error_code ec;
    for (;;)
    {
        if (buf.size() != 0)
        {
            dd::error_code pec;
            const std::size_t used = parser->put_buffered(buf.data(), pec);
            buf.consume(used);
            if (pec && pec != http::error::need_more)
            {
                ec = pec;
                break;
            }
            if (!pec && parser->is_done())
            {
                const unsigned st = parser->resp.status;
                if (st >= 100 && st < 200 && st != 101)
                {
                    new_parser();
                    continue;
                }
                break;
            }
            if (!pec && buf.size() != 0)
                continue;
        }
        if (left == 0)
        {
            // The peer closed.
            if (!parser->got_some())
            {
                ec = http::error::end_of_stream;
                break;
            }
            parser->put_eof(ec);
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
    if (!ec)
    {
        const dd::http_response& r = parser->resp;
        DD_FUZZ_CHECK(r.status >= 100 && r.status <= 599);
        const std::chrono::milliseconds idle{4000};
        const auto limit = dd::detail::keep_alive_limit(r, idle);
        DD_FUZZ_CHECK(limit.count() >= 0 && limit <= idle);
        (void)(parser->keep_alive() && !parser->need_eof() && buf.size() == 0);
    }
    return 0;
}
