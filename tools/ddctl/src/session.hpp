// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// What every ddctl command runs with: the client, the tap on its transport,
// the printer, the request options, and the checks every command shares
// (errors to exit codes, --dry-run, confirmation of writes that email).
#ifndef DDCTL_SESSION_HPP
#define DDCTL_SESSION_HPP

#include "output.hpp"
#include "tap_transport.hpp"

#include <digital_delivery.hpp>

#include <memory>
#include <string>

namespace ddctl {

/// Thrown when --dry-run has printed what would have been sent.
struct dry_run_done
{
};

struct session
{
    dd::client& client;
    std::shared_ptr<tap_state> tap;
    printer& out;
    dd::request_options ropts;
    bool dry_run = false;
    bool yes = false;
    bool terminal_in = false;   ///< stdin and stderr are a terminal: ddctl may ask
    bool terminal_err = false;  ///< stderr is a terminal: progress bars
    bool progress = true;       ///< upload progress on stderr (off: --no-progress)
    /// The client's transport, for requests outside the API (the sandbox's
    /// /sandbox/ endpoints); null: none are sent.
    const dd::any_transport* transport = nullptr;
    std::string profile;          ///< the config profile in use (`orders watch`: one checkpoint per profile and key)
    std::string key_fingerprint;  ///< 16 hex digits of a hash of the base URL and key, never the key

    /// Throws cli_error (stderr line: the diagnostics, exit code by class) when
    /// `ec` is set; with --dry-run, prints the request not sent (and `then`, what
    /// the operation would have sent after it) and throws dry_run_done.
    void check(const dd::error_code& ec, const dd::diagnostics& diag, const std::string& then = {}) const;

    /// A write that emails a customer or deletes: asks on a terminal, needs --yes
    /// otherwise (exit_usage); "no" gives exit_failure. Nothing to ask with --dry-run.
    void confirm(const std::string& what) const;

    /// The path of a request URL, relative to the base URL.
    std::string relative(const std::string& url) const;
};

}  // namespace ddctl

#endif
