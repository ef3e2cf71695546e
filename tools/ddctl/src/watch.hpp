// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// `ddctl orders watch` (watch.cpp).
#ifndef DDCTL_WATCH_HPP
#define DDCTL_WATCH_HPP

#include "commands.hpp"

#include <CLI/CLI.hpp>

#include <string>

namespace ddctl {

/// Adds `orders watch` to `orders`.
void add_watch(CLI::App& orders, selection& sel);

/// 16 hex digits that tell a (base URL, API key) apart, from which the key cannot be read.
std::string key_fingerprint(const std::string& base_url, const std::string& api_key);

}  // namespace ddctl

#endif
