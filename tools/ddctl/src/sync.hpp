// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// `ddctl assets check DIR` and `ddctl assets sync DIR` (docs/cli.md, "Keeping a
// folder in the service"): a thin shell over the library's sync model
// (<digital_delivery/sync.hpp>, docs/sync.md), its manifest kept in the upload
// journal's database.
#ifndef DDCTL_SYNC_HPP
#define DDCTL_SYNC_HPP

#include "commands.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace ddctl {

/// Adds `assets check` and `assets sync` to `assets`.
void add_sync_commands(CLI::App& assets, selection& sel);

/// "9 min 20 s", "2 h 5 min", "12 s" (whole seconds, rounded up; saturates at
/// 99999 h).
std::string human_duration(double seconds);

}  // namespace ddctl

#endif
