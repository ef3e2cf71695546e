// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The flags of the command line and of POST /sandbox/stores (see options.hpp).
#include "options.hpp"

#include <cmath>
#include <cstdlib>

namespace dd_sandbox {

namespace {

struct option_error {
    std::string message;
};

std::int64_t to_int(const std::string& flag, const std::string& v, std::int64_t min,
                    std::int64_t max = INT64_MAX)
{
    auto n = parse_int64(v);
    if (!n || *n < min || *n > max)
        throw option_error{"invalid value for " + flag + ": " + v};
    return *n;
}

} // namespace

bool is_process_flag(std::string_view flag)
{
    return flag == "--help" || flag == "-h" || flag == "--host" || flag == "--port" ||
           flag == "--api-key" || flag == "--data-dir" || flag == "--public-url" ||
           flag == "--max-open-files" || flag == "--log-file";
}

std::optional<std::string> parse_options(const std::vector<std::string>& args, sandbox_config& cfg,
                                         process_options* process)
{
    try {
        for (std::size_t i = 0; i < args.size(); ++i) {
            std::string flag = args[i];
            std::string value;
            bool has_value = false;
            if (auto eq = flag.find('='); flag.starts_with("--") && eq != std::string::npos) {
                value = flag.substr(eq + 1);
                flag = flag.substr(0, eq);
                has_value = true;
            }
            auto need = [&]() -> const std::string& {
                if (!has_value) {
                    if (i + 1 >= args.size())
                        throw option_error{"missing value for " + flag};
                    value = args[++i];
                    has_value = true;
                }
                return value;
            };
            auto no_value = [&] {
                if (has_value)
                    throw option_error{flag + " takes no value"};
            };
            if (is_process_flag(flag) && !process)
                return flag + " configures the whole process, not a store";

            if (flag == "--help" || flag == "-h") {
                no_value();
                process->help = true;
                return std::nullopt;
            } else if (flag == "--host") {
                process->host = need();
            } else if (flag == "--port") {
                process->port = static_cast<unsigned short>(to_int(flag, need(), 0, 65535));
            } else if (flag == "--api-key") {
                cfg.api_key = need();
                if (cfg.api_key.empty())
                    return "--api-key must not be empty";
            } else if (flag == "--data-dir") {
                cfg.data_dir = need();
                process->data_dir_given = true;
            } else if (flag == "--public-url") {
                cfg.public_url = need();
                process->public_url_given = true;
            } else if (flag == "--log-file") {
                process->log_file = need();
            } else if (flag == "--max-open-files") {
                process->max_open_files = to_int(flag, need(), min_max_open_files);
            } else if (flag == "--rate-limit-points") {
                cfg.rate_limit_points = static_cast<double>(to_int(flag, need(), 1));
            } else if (flag == "--rate-limit-window-seconds") {
                const std::string& v = need();
                char* end = nullptr;
                const double w = std::strtod(v.c_str(), &end);
                if (v.empty() || !end || *end || !std::isfinite(w) || !(w > 0))
                    return "invalid value for " + flag + ": " + v;
                cfg.rate_limit_window_seconds = w;
            } else if (flag == "--no-rate-limit") {
                no_value();
                cfg.rate_limit = false;
            } else if (flag == "--quota-storage-bytes") {
                cfg.quota_storage_bytes = to_int(flag, need(), 0);
            } else if (flag == "--quota-asset-count") {
                cfg.quota_asset_count = to_int(flag, need(), 0);
            } else if (flag == "--seed") {
                cfg.seed = static_cast<std::uint64_t>(to_int(flag, need(), 0));
            } else if (flag == "--seed-orders") {
                cfg.seed_orders = static_cast<int>(to_int(flag, need(), 0, max_seed_orders));
            } else if (flag == "--watermark") {
                need();
                if (value != "on" && value != "off")
                    return "--watermark takes on or off";
                cfg.watermark = value == "on";
            } else if (flag == "--watermark-delay-ms") {
                cfg.watermark_delay_ms = to_int(flag, need(), 0, max_watermark_delay_ms);
            } else if (flag == "--download-days") {
                cfg.download_days = to_int(flag, need(), 0, max_download_days);
            } else if (flag == "--download-limit") {
                cfg.download_limit = to_int(flag, need(), 0);
            } else if (flag == "--storage-secret") {
                cfg.storage_secret = need();
                if (cfg.storage_secret.empty())
                    return "--storage-secret must not be empty";
            } else if (flag == "--upload-url-ttl-seconds") {
                cfg.upload_url_ttl_seconds = to_int(flag, need(), 1);
                if (cfg.upload_url_ttl_seconds > 604800)
                    return "--upload-url-ttl-seconds must be at most 604800";
            } else {
                return "unknown option " + flag;
            }
        }
    } catch (const option_error& e) {
        return e.message;
    }
    return std::nullopt;
}

} // namespace dd_sandbox
