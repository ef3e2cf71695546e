//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// Decoding benchmark (not a test): the 250-order list page (~92 KB, the same
// document benchmarks/transport/run.sh serves as /api/orders) and a single
// order envelope (~450 B), side by side:
//   parse        - boost::json::parse, default allocator (the baseline)
//   parse_arena  - boost::json::parse into a reused monotonic buffer
//   decode       - detail::decode_response<D>: what the client does with a
//                  response body (JSON -> dd::order_list / dd::order)
//
// usage: core_bench [google benchmark flags]
//        core_bench --count parse|parse_arena|decode page|order N
//            runs N iterations only (for callgrind: run.sh subtracts two N)

#include <digital_delivery/client.hpp>
#include <digital_delivery/endpoints.hpp>
#include <digital_delivery/impl/engine/endpoint_call.hpp>  // detail::decode_response

#include <benchmark/benchmark.h>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/system/error_code.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace dd = digital_delivery;

namespace {

// The same text as run.sh's python json.dumps (", " / ": " separators).
std::string api_order(int i)
{
    const std::string id = std::to_string(1001 + i);
    return "{\"id\": \"" + id + "\", \"name\": \"#" + id + "\", \"email\": \"customer" + std::to_string(i) +
           "@example.com\", \"phone\": null, \"financial_status\": \"paid\", \"fulfillment_status\": \"fulfilled\", "
           "\"total_price\": \"49.90\", \"currency\": \"EUR\", \"created_at\": \"2026-11-20T10:15:30Z\", "
           "\"updated_at\": \"2026-11-20T10:16:02Z\", \"customer\": {\"first_name\": \"Ada\", \"last_name\": "
           "\"Lovelace\"}, \"download_count\": 3, \"download_limit\": 5}";
}

std::string page_body()
{
    std::string s = "{\"orders\": [";
    for (int i = 0; i < 250; ++i)
    {
        if (i)
            s += ", ";
        s += api_order(i);
    }
    s += "], \"pagination\": {\"current_page\": 1, \"per_page\": 250, \"total_count\": 250, \"total_pages\": 1}}";
    return s;
}

std::string order_body()
{
    std::string o = "{\"order\": " + api_order(0) + "}";
    o = o.substr(0, o.size() - 2) + ", \"note\": \"" + std::string(450 - o.size() - 13, 'n') + "\"}}";
    return o;
}

const std::string& body(bool page)
{
    static const std::string p = page_body(), o = order_body();
    return page ? p : o;
}

std::size_t run_parse(const std::string& b)
{
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(b, ec);
    return ec ? 0 : v.as_object().size();
}

std::size_t run_parse_arena(const std::string& b)
{
    static std::vector<unsigned char> buf(512 * 1024);
    boost::json::monotonic_resource mr(buf.data(), buf.size());
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(b, ec, &mr);
    return ec ? 0 : v.as_object().size();
}

std::size_t run_decode(const std::string& b, bool page)
{
    if (page)
    {
        dd::order_list out;
        const auto ec = dd::detail::decode_response<dd::endpoints::list_orders>(b, out, nullptr);
        return ec ? 0 : out.orders.size();
    }
    dd::order out;
    const auto ec = dd::detail::decode_response<dd::endpoints::get_order>(b, out, nullptr);
    return ec ? 0 : out.id.size();
}

std::size_t run(const std::string& what, bool page)
{
    const auto& b = body(page);
    if (what == "parse")
        return run_parse(b);
    if (what == "parse_arena")
        return run_parse_arena(b);
    return run_decode(b, page);
}

template <int What, bool Page>
void bm(benchmark::State& st)
{
    static const char* names[] = {"parse", "parse_arena", "decode"};
    const std::string what = names[What];
    if (run(what, Page) == 0)
        st.SkipWithError("decoding failed");
    for (auto _ : st)
        benchmark::DoNotOptimize(run(what, Page));
    st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * body(Page).size()));
}

BENCHMARK(bm<0, true>)->Name("page/parse");
BENCHMARK(bm<1, true>)->Name("page/parse_arena");
BENCHMARK(bm<2, true>)->Name("page/decode");
BENCHMARK(bm<0, false>)->Name("order/parse");
BENCHMARK(bm<1, false>)->Name("order/parse_arena");
BENCHMARK(bm<2, false>)->Name("order/decode");

}  // namespace

int main(int argc, char** argv)
{
    if (argc == 5 && std::strcmp(argv[1], "--count") == 0)
    {
        const std::string what = argv[2];
        const bool page = std::strcmp(argv[3], "page") == 0;
        const long n = std::atol(argv[4]);
        std::size_t sum = 0;
        for (long i = 0; i < n; ++i)
            sum += run(what, page);
        std::printf("%zu bytes, %zu\n", body(page).size(), sum);
        return sum == 0 && n > 0 ? 1 : 0;
    }
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
