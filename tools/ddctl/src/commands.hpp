// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// ddctl's subcommands: one per resource and verb, each a coroutine run on a session.
#ifndef DDCTL_COMMANDS_HPP
#define DDCTL_COMMANDS_HPP

#include "session.hpp"

#include <CLI/CLI.hpp>

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <string>

namespace ddctl {

using command_fn = std::function<boost::asio::awaitable<void>(session&)>;

/// The subcommand the command line selected (set by CLI11's callbacks).
struct selection
{
    command_fn run;
    /// Set for a write that emails a customer: what to confirm before anything
    /// starts (asked before the event loop runs, so that Ctrl-C at the prompt
    /// simply ends the process).
    std::string confirm;
    /// The command sleeps between requests on purpose (a poll loop): no
    /// "waiting for rate-limit points" notice.
    bool sleeps = false;
    /// A write whose state is unknown when interrupted (said on Ctrl-C).
    bool write = false;
};

/// Adds `assets ...`, `products ...`, `orders ...` and `request` to `app`.
void add_api_commands(CLI::App& app, selection& selected);

/// Adds one subcommand with its help footer (an example) and the global options falling through.
CLI::App* add_command(CLI::App& parent, const char* name, const char* help, const char* example);

}  // namespace ddctl

#endif
