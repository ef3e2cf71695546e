// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// ddctl's upload journal (docs/cli.md, "Uploads that survive a crash"): the
// state directory, one journal per (base URL, API key), journaled
// `assets upload` and `assets recover`.
#ifndef DDCTL_JOURNAL_HPP
#define DDCTL_JOURNAL_HPP

#include "commands.hpp"
#include "session.hpp"

#include <digital_delivery/sqlite_upload_journal.hpp>
#include <digital_delivery/upload_journal.hpp>

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <memory>
#include <string>

namespace ddctl {

/// ddctl's state directory (the upload journal, `orders watch`'s checkpoints):
/// $XDG_STATE_HOME/ddctl, else $HOME/.local/state/ddctl (not created).
std::string state_directory(const std::function<const char*(const char*)>& getenv);

/// The state directory of the environment, created with mode 0700 if need be;
/// cli_error when it cannot be.
std::string make_state_directory();

/// The journal file of a base URL and key: `uploads-<32 hex digits of
/// SHA-256(base URL, key)>.db` in the state directory (never the key itself).
std::string journal_file(const std::string& dir, const std::string& base_url, const std::string& api_key);

/// The journal of a session's base URL and key, and an exclusive lock (flock)
/// on it for as long as this object lives: two ddctl processes of one journal
/// take turns, so neither takes the other's "creating" for a crash.
struct open_journal
{
    std::unique_ptr<digital_delivery::sqlite_upload_journal> journal;
    std::string file;  ///< the journal's database file
    int lock_fd = -1;
    open_journal() = default;
    open_journal(const open_journal&) = delete;
    open_journal& operator=(const open_journal&) = delete;
    ~open_journal();
};

/// Opens (creates) the session's journal in the state directory and takes its
/// lock, waiting (with a notice) while another ddctl holds it; cli_error when it cannot.
std::unique_ptr<open_journal> open_journal_for(session& s);

/// `assets upload FILE` through the journal: an upload of the same content
/// committed before is reported (no write) unless `new_asset`; an interrupted
/// one is finished.
boost::asio::awaitable<void> journaled_upload(session& s, const std::string& file,
                                              const digital_delivery::upload_asset_params& params,
                                              const digital_delivery::upload_options& progress, bool new_asset);

/// Adds `assets recover` to `assets`.
void add_recover_command(CLI::App& assets, selection& sel);

}  // namespace ddctl

#endif
