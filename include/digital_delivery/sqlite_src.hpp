//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_SQLITE_SRC_HPP
#define DIGITAL_DELIVERY_SQLITE_SRC_HPP

/// \file
/// The SQLite component compiled once (separate compilation): include this
/// file in exactly one translation unit of a program that defines
/// DIGITAL_DELIVERY_SEPARATE_COMPILATION everywhere and links libsqlite3, or
/// link the packaged `digital_delivery::sqlite_compiled` (CMake; meson and
/// pkg-config: `digital_delivery_sqlite_compiled`), which is this file
/// compiled. <digital_delivery/src.hpp> leaves it out, so that a program that
/// does not use SQLite does not link it.

#ifndef DIGITAL_DELIVERY_SEPARATE_COMPILATION
#error "Define DIGITAL_DELIVERY_SEPARATE_COMPILATION to use <digital_delivery/sqlite_src.hpp>"
#endif

#include <digital_delivery/impl/sqlite/sqlite_state.ipp>
#include <digital_delivery/impl/feed/sqlite_feed_checkpoint.ipp>
#include <digital_delivery/impl/upload/sqlite_upload_journal.ipp>
#include <digital_delivery/impl/sync/sqlite_sync_manifest.ipp>

#endif
