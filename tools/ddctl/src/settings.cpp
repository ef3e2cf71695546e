// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
#include "settings.hpp"

#include "errors.hpp"

#include <digital_delivery/redis_rate_limit_store.hpp>
#include <digital_delivery/shm_rate_limit_store.hpp>
#include <digital_delivery/version.hpp>

#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>

#include <iostream>

#include <fcntl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

namespace ddctl {

namespace {

namespace dd = digital_delivery;

std::string env(const char* name)
{
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

std::string trim(const std::string& s)
{
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos)
        return {};
    const auto e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
}

std::string default_config_file()
{
    if (auto p = env("DDCTL_CONFIG"); !p.empty())
        return p;
    if (auto x = env("XDG_CONFIG_HOME"); !x.empty())
        return x + "/ddctl/config";
    if (auto h = env("HOME"); !h.empty())
        return h + "/.config/ddctl/config";
    return {};
}

/// The INI-like file: `[profile]` sections of `name = value` lines; `#` and
/// `;` start comments. Returns section -> (name -> value).
std::map<std::string, std::map<std::string, std::string>> read_config(const std::string& path, bool& found)
{
    std::map<std::string, std::map<std::string, std::string>> out;
    std::ifstream in(path);
    found = static_cast<bool>(in);
    if (!found)
        return out;
    std::string line, section;
    int n = 0;
    while (std::getline(in, line))
    {
        ++n;
        const std::string t = trim(line);
        if (t.empty() || t[0] == '#' || t[0] == ';')
            continue;
        if (t.front() == '[' && t.back() == ']')
        {
            section = trim(t.substr(1, t.size() - 2));
            out[section];
            continue;
        }
        const auto eq = t.find('=');
        if (eq == std::string::npos || section.empty())
            throw cli_error(exit_usage, path + ":" + std::to_string(n) +
                                            ": expected `[profile]` or `name = value` inside a profile");
        out[section][trim(t.substr(0, eq))] = trim(t.substr(eq + 1));
    }
    return out;
}

/// A config file holding a key must not be readable by every user.
void check_private(const std::string& path, const std::map<std::string, std::map<std::string, std::string>>& file)
{
    bool holds_key = false;
    for (const auto& [section, values] : file)
        holds_key = holds_key || values.count("api_key");
    struct stat st{};
    if (!holds_key || ::stat(path.c_str(), &st) != 0 || !(st.st_mode & S_IROTH))
        return;
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw cli_error(exit_usage, path + " holds an API key and every user of this host can read it (mode " + mode +
                                    "): refusing to use it; make it private with `chmod 600 " + path + "`");
}

std::string read_key_file(const std::string& name)
{
    const std::string path = name.starts_with("~/") && !env("HOME").empty() ? env("HOME") + name.substr(1) : name;
    std::ifstream in(path);
    if (!in)
        throw cli_error(exit_usage, "cannot read the API key file " + path);
    std::string line;
    std::getline(in, line);
    const std::string key = trim(line);
    if (key.empty())
        throw cli_error(exit_usage, "the API key file " + path + " is empty");
    return key;
}

double parse_positive(const setting& s)
{
    double v = 0;
    const char* b = s.value.data();
    const char* e = b + s.value.size();
    auto [p, ec] = std::from_chars(b, e, v);
    if (ec != std::errc{} || p != e || !(v > 0))
        throw cli_error(exit_usage, s.name + " must be a positive number (" + s.source + ")");
    return v;
}

}  // namespace

const setting& settings::get(const std::string& name) const
{
    for (const auto& v : values)
        if (v.name == name)
            return v;
    throw std::logic_error("no setting " + name);
}

settings resolve_settings(const config_flags& flags)
{
    settings s;
    s.config_file = flags.config_file.empty() ? default_config_file() : flags.config_file;
    const auto file = s.config_file.empty() ? decltype(read_config("", s.config_file_found)){}
                                            : read_config(s.config_file, s.config_file_found);
    if (!flags.config_file.empty() && !s.config_file_found)
        throw cli_error(exit_usage, "cannot read the config file " + flags.config_file);
    if (s.config_file_found)
        check_private(s.config_file, file);

    std::string profile_source = "--profile";
    s.profile = flags.profile;
    if (s.profile.empty())
    {
        s.profile = env("DDCTL_PROFILE");
        profile_source = "env DDCTL_PROFILE";
    }
    const bool profile_named = !s.profile.empty();
    if (!profile_named)
        s.profile = "default";
    const auto section = file.find(s.profile);
    if (profile_named && section == file.end())
        throw cli_error(exit_usage, "no profile [" + s.profile + "] in " +
                                        (s.config_file.empty() ? std::string("the config file") : s.config_file) +
                                        " (" + profile_source + ")");
    const std::string file_source = s.config_file + " [" + s.profile + "]";
    auto from_file = [&](const char* name) -> std::optional<std::string> {
        if (section == file.end())
            return std::nullopt;
        auto it = section->second.find(name);
        if (it == section->second.end())
            return std::nullopt;
        return it->second;
    };

    // flag > environment > profile > default
    auto resolve = [&](const char* name, const std::string& flag, const char* flag_name, const char* env_name,
                       const char* fallback) {
        setting r{name, {}, "not set", false};
        if (!flag.empty())
            r.value = flag, r.source = flag_name;
        else if (env_name && !env(env_name).empty())
            r.value = env(env_name), r.source = std::string("env ") + env_name;
        else if (auto v = from_file(name))
            r.value = *v, r.source = file_source;
        else if (fallback)
            r.value = fallback, r.source = "default";
        s.values.push_back(std::move(r));
    };
    resolve("base_url", flags.base_url, "--base-url", "DIGITAL_DELIVERY_BASE_URL", nullptr);

    // The key: --api-key-file, the environment, the profile's api_key_file or api_key.
    setting key{"api_key", {}, "not set", true};
    if (!flags.api_key_file.empty())
        key.value = read_key_file(flags.api_key_file), key.source = "--api-key-file " + flags.api_key_file;
    else if (!env("DIGITAL_DELIVERY_API_KEY").empty())
        key.value = env("DIGITAL_DELIVERY_API_KEY"), key.source = "env DIGITAL_DELIVERY_API_KEY";
    else if (auto f = from_file("api_key_file"))
        key.value = read_key_file(*f), key.source = file_source + " api_key_file " + *f;
    else if (auto k = from_file("api_key"))
        key.value = *k, key.source = file_source;
    s.values.push_back(std::move(key));

    resolve("rate_limit_store", flags.rate_limit_store, "--rate-limit-store", "DDCTL_RATE_LIMIT_STORE", "shared-memory");
    resolve("rate_limit_points", flags.rate_limit_points, "--rate-limit-points", nullptr, "40");
    resolve("rate_limit_window", flags.rate_limit_window, "--rate-limit-window", nullptr, "60");
    return s;
}

std::pair<std::string, std::string> config_target(const config_flags& flags)
{
    std::string file = flags.config_file.empty() ? default_config_file() : flags.config_file;
    if (file.empty())
        throw cli_error(exit_usage, "no config file: set HOME, XDG_CONFIG_HOME, DDCTL_CONFIG or --config");
    std::string profile = flags.profile.empty() ? env("DDCTL_PROFILE") : flags.profile;
    return {std::move(file), profile.empty() ? std::string("default") : profile};
}

void write_settings(const std::string& file, const std::string& profile,
                    const std::vector<std::pair<std::string, std::string>>& values, bool allow_key)
{
    if (profile.empty() || profile.find_first_of("[]\n\r") != std::string::npos || trim(profile) != profile)
        throw cli_error(exit_usage, "not a profile name: `" + profile + "`");
    for (const auto& [name, value] : values)
    {
        if (name == "api_key" && !allow_key)
            throw cli_error(exit_usage, "the API key is never taken from the command line (every user of the host "
                                        "sees it in `ps`): use `ddctl config init` (reads it from stdin) or "
                                        "`ddctl config set api_key_file FILE`");
        if (name != "api_key" && name != "base_url" && name != "api_key_file" && name != "rate_limit_store" &&
            name != "rate_limit_points" && name != "rate_limit_window")
            throw cli_error(exit_usage, "`" + name + "` is not a setting: base_url, api_key_file, rate_limit_store, "
                                            "rate_limit_points or rate_limit_window");
        if (value.empty() || value.find_first_of("\n\r") != std::string::npos || trim(value) != value)
            throw cli_error(exit_usage, "the value of " + name + " must be one line, not empty, without surrounding spaces");
        if (name == "rate_limit_points" || name == "rate_limit_window")
            parse_positive(setting{name, value, "config set", false});
        if (name == "rate_limit_store" && value != "shared-memory" && value != "in-process" &&
            !value.starts_with("redis://") && !value.starts_with("rediss://"))
            throw cli_error(exit_usage, "rate_limit_store must be shared-memory, in-process, redis://host:port or "
                                        "rediss://host:port (TLS)");
        if (name == "base_url" && !value.starts_with("https://") && !value.starts_with("http://"))
            throw cli_error(exit_usage, "base_url must be an http:// or https:// URL ending in /api/v1/external");
    }

    // the file's lines, each value replaced in its profile or added at its end
    std::vector<std::string> lines;
    {
        std::ifstream in(file);
        for (std::string l; std::getline(in, l);)
            lines.push_back(l);
    }
    auto is_section = [](const std::string& l) {
        const std::string t = trim(l);
        return !t.empty() && t.front() == '[' && t.back() == ']';
    };
    auto section_name = [](const std::string& l) {
        const std::string t = trim(l);
        return trim(t.substr(1, t.size() - 2));
    };
    for (const auto& [name, value] : values)
    {
        const std::string line = name + " = " + value;
        std::optional<std::size_t> header;  // the profile's (the last one, as read_config keeps it)
        for (std::size_t i = 0; i < lines.size(); ++i)
            if (is_section(lines[i]) && section_name(lines[i]) == profile)
                header = i;
        if (!header)
        {
            if (!lines.empty() && !trim(lines.back()).empty())
                lines.emplace_back();
            lines.push_back("[" + profile + "]");
            lines.push_back(line);
            continue;
        }
        const std::size_t begin = *header + 1;
        std::size_t end = begin, last = begin;  // last: after the section's last non-blank line
        bool replaced = false;
        for (; end < lines.size() && !is_section(lines[end]); ++end)
        {
            const std::string t = trim(lines[end]);
            if (t.empty() || t[0] == '#' || t[0] == ';')
            {
                if (!t.empty())
                    last = end + 1;
                continue;
            }
            last = end + 1;
            if (const auto eq = t.find('='); eq != std::string::npos && trim(t.substr(0, eq)) == name)
            {
                lines[end] = line;
                replaced = true;
            }
        }
        if (!replaced)
            lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(last), line);
    }

    // atomically: a new private file next to it, renamed over it; a config
    // file that is a symbolic link (a dotfiles repository) is written through
    // the link: the file it names is replaced, the link stays
    namespace fs = std::filesystem;
    std::error_code fec;
    const std::string written = [&] {
        if (!fs::is_symlink(fs::path(file), fec))
            return file;
        const fs::path real = fs::weakly_canonical(fs::path(file), fec);
        if (fec)
            throw cli_error(exit_usage, "cannot follow the symbolic link " + file + ": " + fec.message());
        return real.string();
    }();
    const fs::path target(written);
    if (target.has_parent_path() && !fs::exists(target.parent_path(), fec))
    {
        fs::create_directories(target.parent_path(), fec);
        if (!fec)
            fs::permissions(target.parent_path(), fs::perms::owner_all, fec);
        if (fec)
            throw cli_error(exit_usage, "cannot create " + target.parent_path().string() + ": " + fec.message());
    }
    std::string tmp = written + ".XXXXXX";
    const int fd = ::mkstemp(tmp.data());  // mode 0600
    if (fd < 0)
        throw cli_error(exit_usage, "cannot write next to " + written + ": " + std::strerror(errno));
    std::string text;
    for (const auto& l : lines)
        text += l + "\n";
    int failed = ::fchmod(fd, 0600) == 0 ? 0 : errno;
    for (std::size_t off = 0; !failed && off < text.size();)
    {
        const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
        if (n < 0 && errno != EINTR)
            failed = errno;
        off += n > 0 ? static_cast<std::size_t>(n) : 0;
    }
    if (!failed && ::fsync(fd) != 0)
        failed = errno;
    if (::close(fd) != 0 && !failed)
        failed = errno;
    if (!failed && ::rename(tmp.c_str(), written.c_str()) != 0)
        failed = errno;
    if (failed)
    {
        ::unlink(tmp.c_str());
        throw cli_error(exit_usage, "cannot write " + written + ": " + std::strerror(failed));
    }
}

std::string config_init(const config_flags& flags)
{
    auto [file, profile] = config_target(flags);
    const bool terminal = ::isatty(0);
    auto ask = [&](const std::string& question, bool secret) {
        // echo off before the prompt (what is typed after it is not shown),
        // without discarding what was typed ahead
        termios saved{};
        const bool hide = terminal && secret && ::tcgetattr(0, &saved) == 0;
        if (hide)
        {
            termios quiet = saved;
            quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
            ::tcsetattr(0, TCSANOW, &quiet);
        }
        if (terminal)
            std::cerr << question << std::flush;
        std::string answer;
        const bool got = static_cast<bool>(std::getline(std::cin, answer));
        if (hide)
        {
            ::tcsetattr(0, TCSANOW, &saved);
            std::cerr << '\n';
        }
        if (!got)
            throw cli_error(exit_usage, "config init: stdin ended before the answer to `" + trim(question) + "`");
        return trim(answer);
    };
    std::vector<std::pair<std::string, std::string>> values;
    values.emplace_back("base_url", flags.base_url.empty() ? ask("base URL (ending in /api/v1/external): ", false) : flags.base_url);
    if (flags.profile.empty() && env("DDCTL_PROFILE").empty())
        if (std::string p = ask("profile [default]: ", false); !p.empty())
            profile = p;
    if (!flags.api_key_file.empty())
    {
        read_key_file(flags.api_key_file);  // readable, not empty
        values.emplace_back("api_key_file", std::filesystem::absolute(flags.api_key_file).string());
    }
    else
    {
        const std::string key = ask("API key (not shown): ", true);
        if (key.empty())
            throw cli_error(exit_usage, "config init: no API key given");
        values.emplace_back("api_key", key);
    }
    write_settings(file, profile, values, true);
    return "wrote [" + profile + "] to " + file + " (mode 0600)";
}


dd::redis_store_params parse_redis_url(const std::string& url, const std::string& what, const std::string& where,
                                       bool host_optional)
{
    auto u = boost::urls::parse_uri(url);
    if (!u || (u->scheme() != "redis" && u->scheme() != "rediss") || (u->host().empty() && !host_optional))
        throw cli_error(exit_usage, what + ": not a redis[s]://[user:password@]host[:port][/db][?...] URL" + where);
    dd::redis_store_params redis;
    redis.tls.enabled = u->scheme() == "rediss";
    // rediss:// takes the TLS files and the server name as query parameters.
    for (auto q : u->params())
    {
        std::string* to = q.key == "ca_file"       ? &redis.tls.ca_file
                          : q.key == "ca_dir"      ? &redis.tls.ca_dir
                          : q.key == "cert_file"   ? &redis.tls.cert_file
                          : q.key == "key_file"    ? &redis.tls.key_file
                          : q.key == "server_name" ? &redis.tls.server_name
                                                   : nullptr;
        if (!to || !redis.tls.enabled)
            throw cli_error(exit_usage, what + ": " +
                                            (to ? "TLS parameters need a rediss:// URL (" + q.key + ")"
                                                : "unknown parameter " + q.key +
                                                      " (rediss:// takes ca_file, ca_dir, cert_file, key_file, server_name)") +
                                            where);
        *to = q.value;
    }
    if (!u->host().empty())
        redis.host = u->host();
    // Boost.URL takes "host:port" with a port that is not digits as an empty
    // port and a path ("port"), and wraps a port above 65535 (99999 -> 34463):
    // both refused here, without the URL (it may hold a password).
    if (!u->path().empty() && u->path().front() != '/')
        throw cli_error(exit_usage, what + ": not a redis[s]://[user:password@]host[:port][/db][?...] URL" + where);
    if (u->has_port() && !u->port().empty())
    {
        const std::string_view ps = u->port();
        unsigned long port = 0;
        auto [ptr, ec] = std::from_chars(ps.data(), ps.data() + ps.size(), port);
        if (ec != std::errc{} || ptr != ps.data() + ps.size() || port == 0 || port > 65535)
            throw cli_error(exit_usage, what + ": the port must be a number from 1 to 65535" + where);
        redis.port = static_cast<std::uint16_t>(port);
    }
    if (u->has_userinfo())
    {
        redis.username = u->user();
        redis.password = u->password();
    }
    const std::string db = u->path().size() > 1 ? std::string(u->path()).substr(1) : std::string();
    if (!db.empty())
    {
        auto [ptr, ec] = std::from_chars(db.data(), db.data() + db.size(), redis.database);
        if (ec != std::errc{} || ptr != db.data() + db.size())
            throw cli_error(exit_usage, what + ": the Redis database must be a number" + where);
    }
    return redis;
}

dd::client_params make_client_params(const settings& s)
{
    dd::client_params p;
    const setting& base = s.get("base_url");
    const setting& key = s.get("api_key");
    if (base.value.empty())
        throw cli_error(exit_usage, "no base URL: set DIGITAL_DELIVERY_BASE_URL, --base-url or base_url in " +
                                        (s.config_file.empty() ? std::string("the config file") : s.config_file));
    if (key.value.empty())
        throw cli_error(exit_usage, "no API key: set DIGITAL_DELIVERY_API_KEY, --api-key-file, or api_key_file in " +
                                        (s.config_file.empty() ? std::string("the config file") : s.config_file));
    p.base_url = base.value;
    p.api_key = key.value;
    p.user_agent = std::string("ddctl/") + DIGITAL_DELIVERY_VERSION_STRING;

    p.rate_limit.capacity = parse_positive(s.get("rate_limit_points"));
    p.rate_limit.window = std::chrono::duration<double>(parse_positive(s.get("rate_limit_window")));

    const setting& store = s.get("rate_limit_store");
    if (store.value == "shared-memory")
        p.rate_limit.store = dd::shm_rate_limit_store();
    else if (store.value == "in-process")
        p.rate_limit.store = dd::rate_limit_store();
    else if (store.value.starts_with("redis://") || store.value.starts_with("rediss://"))
    {
        dd::redis_store_params redis = parse_redis_url(store.value, "rate_limit_store", " (" + store.source + ")", false);
        p.rate_limit.store = dd::redis_rate_limit_store(std::move(redis));
    }
    else
        throw cli_error(exit_usage, "rate_limit_store must be shared-memory, in-process or redis://host:port (" +
                                        store.source + ")");
    return p;
}

std::string describe(const settings& s)
{
    std::ostringstream o;
    o << "config file: " << (s.config_file.empty() ? std::string("(none)") : s.config_file)
      << (s.config_file_found ? "" : " (not found)") << '\n';
    o << "profile: " << s.profile << '\n';
    for (const auto& v : s.values)
    {
        o << v.name << ": ";
        if (v.value.empty())
            o << "(not set)";
        else if (v.secret)
            o << "(set, redacted)";
        else if (v.name == "rate_limit_store")
        {
            // a Redis URL may hold a password
            auto u = boost::urls::parse_uri(v.value);
            if (u && u->has_password())
            {
                boost::urls::url r(*u);
                r.remove_userinfo();
                const std::string shown = r.buffer();
                const auto at = shown.find("://") + 3;
                o << shown.substr(0, at) << "(credentials redacted)@" << shown.substr(at);
            }
            else
                o << v.value;
        }
        else
            o << v.value;
        o << "    from " << v.source << '\n';
    }
    return o.str();
}

}  // namespace ddctl
