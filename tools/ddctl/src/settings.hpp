// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// ddctl's configuration: command line, environment, a config file with named
// profiles, built-in defaults (in this order of precedence), and where each
// setting came from (`ddctl config show`).
#ifndef DDCTL_SETTINGS_HPP
#define DDCTL_SETTINGS_HPP

#include <digital_delivery/client_params.hpp>
#include <digital_delivery/redis_store_params.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ddctl {

/// One setting and where it came from ("--base-url", "env DIGITAL_DELIVERY_BASE_URL",
/// "/home/me/.config/ddctl/config [staging]", "default").
struct setting
{
    std::string name;
    std::string value;
    std::string source;
    bool secret = false;
};

/// What the command line says about the configuration (empty: not given).
struct config_flags
{
    std::string config_file;
    std::string profile;
    std::string base_url;
    std::string api_key_file;
    std::string rate_limit_store;
    std::string rate_limit_points;
    std::string rate_limit_window;
};

struct settings
{
    std::string config_file;       ///< the file read (may not exist)
    bool config_file_found = false;
    std::string profile;
    std::vector<setting> values;   ///< base_url, api_key, rate_limit_store, rate_limit_points, rate_limit_window

    const setting& get(const std::string& name) const;
};

/// Resolves every setting. Throws cli_error(exit_usage) on an unreadable key
/// file, a malformed config file or an unknown profile.
settings resolve_settings(const config_flags& flags);

/// The client parameters of these settings (throws cli_error(exit_usage) when
/// the base URL or the key is missing or a value is malformed).
digital_delivery::client_params make_client_params(const settings& s);

/// A Redis URL as the rate_limit_store setting and `orders watch --checkpoint` take it:
/// redis[s]://[user:password@]host[:port][/db][?ca_file=&ca_dir=&cert_file=&key_file=&server_name=]
/// (the query parameters with rediss:// only). Errors (cli_error, exit_usage) start
/// with `what` and end with `where`; the host may be empty when `host_optional`
/// (Sentinel names the master).
digital_delivery::redis_store_params parse_redis_url(const std::string& url, const std::string& what,
                                                     const std::string& where, bool host_optional);

/// `ddctl config show`: one line per setting, the key redacted.
std::string describe(const settings& s);

/// The config file and profile `flags` (or the environment, or the
/// defaults) name, for writing. Throws cli_error(exit_usage) when there is no
/// file name (no HOME).
std::pair<std::string, std::string> config_target(const config_flags& flags);

/// `ddctl config set`: writes `name = value` into `[profile]` of the file,
/// keeping every other line; the file is replaced atomically (a new file of
/// mode 0600 renamed over it), its directory created (0700) if needed.
/// Throws cli_error(exit_usage) for a name that is not a setting, the key
/// (never from argv: `allow_key` only for `config init`, which reads it from
/// stdin), or a malformed value.
void write_settings(const std::string& file, const std::string& profile,
                    const std::vector<std::pair<std::string, std::string>>& values, bool allow_key = false);

/// `ddctl config init`: asks (on stderr when stdin is a terminal, one line of
/// stdin each) for what the flags do not give: the base URL (--base-url), the
/// profile (--profile, DDCTL_PROFILE; an empty answer: `default`), then the
/// key (not echoed on a terminal) unless --api-key-file names a file, which is
/// then written as api_key_file. Writes them with write_settings; returns
/// what to say ("wrote [profile] to FILE").
std::string config_init(const config_flags& flags);

}  // namespace ddctl

#endif
