// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// 2 GiB upload benchmark driver (benchmarks/upload/run.sh runs it).
//
//   upload_bench ours    BASE_URL FILE   digital_delivery::async_upload_asset
//                                        (POST /assets, streamed PUT, GET)
//   upload_bench libcurl PUT_URL  FILE   libcurl easy handle, read callback,
//                                        the same two signed headers
//
// Prints one line: "<mode> <bytes> <seconds> <MB/s>". With DD_BENCH_CA=<file>
// (run.sh with TLS=1) both trust that CA for https URLs.
#include <digital_delivery.hpp>
#include <digital_delivery/beast_transport.hpp>
#include <digital_delivery/upload.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>

#ifndef DD_BENCH_NO_CURL  // run.sh also builds an "ours"-only driver without libcurl
#include <curl/curl.h>
#endif

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace dd = digital_delivery;
namespace asio = boost::asio;

namespace {

int run_ours(const std::string& base, const std::string& file)
{
    asio::io_context ioc(1);
    // UPLOAD_CHUNK=N overrides beast_transport_params::upload_chunk_size (default 64 KiB),
    // UPLOAD_LOWAT=N upload_send_lowat (default 16 KiB; 0: the socket is left alone).
    dd::beast_transport_params tp;
    if (const char* c = std::getenv("UPLOAD_CHUNK"); c && *c)
        tp.upload_chunk_size = std::strtoul(c, nullptr, 10);
    if (const char* c = std::getenv("UPLOAD_LOWAT"); c && *c)
        tp.upload_send_lowat = std::strtoul(c, nullptr, 10);
    if (const char* ca = std::getenv("DD_BENCH_CA"); ca && *ca)
        tp.tls.ca_file = ca;
    dd::beast_transport t(ioc.get_executor(), tp);
    dd::client c(t, {.base_url = base, .api_key = "bench-key"});
    dd::error_code ec;
    auto src = dd::file_source::open(file, ec);
    if (ec)
        return std::fprintf(stderr, "open: %s\n", ec.message().c_str()), 1;
    dd::diagnostics diag;
    bool done = false;
    dd::async_upload_asset(c, src, {.filename = "bench.bin"}, diag, [&](dd::error_code e, dd::asset) {
        ec = e;
        done = true;
    });
    const auto t0 = std::chrono::steady_clock::now();
    while (!done)
        ioc.run_one();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (ec)
        return std::fprintf(stderr, "upload: %s %s\n", ec.message().c_str(), diag.to_string().c_str()), 1;
    std::printf("ours %llu %.3f %.1f\n", static_cast<unsigned long long>(src->size()), s, src->size() / 1e6 / s);
    return 0;
}

#ifndef DD_BENCH_NO_CURL
struct curl_src
{
    int fd;
};

std::size_t read_cb(char* buf, std::size_t size, std::size_t n, void* ud)
{
    auto* s = static_cast<curl_src*>(ud);
    const ssize_t r = ::read(s->fd, buf, size * n);
    return r < 0 ? CURL_READFUNC_ABORT : static_cast<std::size_t>(r);
}

std::size_t discard_cb(char*, std::size_t size, std::size_t n, void*) { return size * n; }

int run_libcurl(const std::string& url, const std::string& file)
{
    curl_src s{::open(file.c_str(), O_RDONLY)};
    struct stat st;
    if (s.fd < 0 || fstat(s.fd, &st) != 0)
        return std::perror("open"), 1;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURL* h = curl_easy_init();
    curl_slist* hdrs = nullptr;
    hdrs = curl_slist_append(hdrs, "Content-Type: application/octet-stream");
    hdrs = curl_slist_append(hdrs, "Content-Disposition: inline; filename=\"bench.bin\"");
    hdrs = curl_slist_append(hdrs, "Expect:");  // like ours: no 100-continue round trip
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(st.st_size));
    curl_easy_setopt(h, CURLOPT_READFUNCTION, read_cb);
    curl_easy_setopt(h, CURLOPT_READDATA, &s);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard_cb);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_UPLOAD_BUFFERSIZE, 65536L);  // same chunk size as ours (default 64 KiB too)
    if (const char* ca = std::getenv("DD_BENCH_CA"); ca && *ca)
        curl_easy_setopt(h, CURLOPT_CAINFO, ca);
    const auto t0 = std::chrono::steady_clock::now();
    const CURLcode rc = curl_easy_perform(h);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    close(s.fd);
    if (rc != CURLE_OK || status != 200)
        return std::fprintf(stderr, "libcurl: %s status %ld\n", curl_easy_strerror(rc), status), 1;
    std::printf("libcurl %lld %.3f %.1f\n", static_cast<long long>(st.st_size), secs, st.st_size / 1e6 / secs);
    return 0;
}
#endif

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 4)
        return std::fprintf(stderr, "usage: %s ours|libcurl URL FILE\n", argv[0]), 2;
    const std::string mode = argv[1];
    if (mode == "ours")
        return run_ours(argv[2], argv[3]);
    if (mode == "libcurl")
#ifndef DD_BENCH_NO_CURL
        return run_libcurl(argv[2], argv[3]);
#else
        return 2;
#endif
    return 2;
}
