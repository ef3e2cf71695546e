// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// digital-delivery-sandbox: the flags that configure it. One parser for the
// command line (server.cpp) and for the options of a store created with
// POST /sandbox/stores (store_registry). No Beast, no Asio here.
#pragma once

#include "service.hpp"

#include <optional>
#include <string>
#include <vector>

namespace dd_sandbox {

// The process-level flags: only the command line takes them.
struct process_options {
    std::string host = "127.0.0.1";
    unsigned short port = 0;
    bool public_url_given = false;
    bool data_dir_given = false;
    bool help = false;  // --help / -h was given (parsing stopped there)
    // --max-open-files: the soft RLIMIT_NOFILE the process sets for itself.
    std::optional<std::int64_t> max_open_files;
    // --log-file: the request log is appended there instead of stderr.
    std::string log_file;
};

// Lower bound of --max-open-files (what the process needs before serving).
inline constexpr std::int64_t min_max_open_files = 16;

// Upper bound of --seed-orders (seeding runs when a store is created).
inline constexpr std::int64_t max_seed_orders = 1000000;
// Upper bounds of the flags that are added to times (10000 years each), so that
// "time + flag" cannot overflow, whatever the sandbox clock (at most year 9999).
inline constexpr std::int64_t max_download_days = 3650000;
inline constexpr std::int64_t max_watermark_delay_ms = 315360000000000;

// Applies the flags in `args` (without the program name) in order onto `cfg`,
// in the forms "--flag value" and "--flag=value".
//   Store flags: --rate-limit-points, --rate-limit-window-seconds, --no-rate-limit,
//   --quota-storage-bytes, --quota-asset-count, --seed, --seed-orders, --watermark,
//   --watermark-delay-ms, --download-days, --download-limit, --upload-url-ttl-seconds,
//   --storage-secret.
//   Process flags (only when `process` is given, else refused): --host, --port,
//   --api-key, --data-dir, --public-url, --max-open-files, --help (-h).
// Returns the first problem as a message ("unknown option --x", "missing value
// for --seed", "invalid value for --seed-orders: abc", ...), or nullopt.
std::optional<std::string> parse_options(const std::vector<std::string>& args, sandbox_config& cfg,
                                         process_options* process);

// Whether `flag` (without "=value") is one of the process-level flags.
bool is_process_flag(std::string_view flag);

} // namespace dd_sandbox
