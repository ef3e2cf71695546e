//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_SQLITE_FEED_CHECKPOINT_HPP
#define DIGITAL_DELIVERY_SQLITE_FEED_CHECKPOINT_HPP

/// \file
/// An order feed's checkpoint in a SQLite file (the opt-in SQLite component,
/// docs/sqlite.md): WAL, synchronous=FULL, one transaction per commit, so an
/// acknowledgement that completed survives a crash and a power loss.

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/feed_checkpoint.hpp>
#include <digital_delivery/sqlite_state.hpp>

#include <string>

namespace digital_delivery {

/// A feed checkpoint kept in a SQLite file. One file may hold the checkpoints
/// of several consumers (each by its `consumer` name) and other components'
/// state (the upload journal). Tables: `dd_feed` (watermark, horizon, last
/// look-back), `dd_feed_order` (the per-order state of the look-back),
/// `dd_feed_dead` (dead letters), component `order_feed` in `dd_schema`.
class sqlite_feed_checkpoint : public sync_feed_checkpoint
{
public:
    /// Opens (or creates, mode 0600) the file and its tables.
    /// Throws error_with_diagnostics when the file cannot be opened or migrated.
    /// \param path The file.
    /// \param consumer The consumer's name in the file.
    /// \param o The file's options.
    DIGITAL_DELIVERY_DECL sqlite_feed_checkpoint(std::string path, std::string consumer,
                                                 const sqlite_state_options& o = {});

    /// Reads the consumer's state. \param out Set to it. \return Empty, or the
    /// SQLite error (or state_errc::invalid_record for a row out of range).
    DIGITAL_DELIVERY_DECL error_code load(feed_state& out) override;

    /// Applies `c` in one transaction (BEGIN IMMEDIATE ... COMMIT).
    /// \param c The change. \return Empty once durable, or the SQLite error (nothing applied).
    DIGITAL_DELIVERY_DECL error_code commit(const feed_commit& c) override;

    /// \return The file's path.
    const std::string& path() const noexcept { return db_.path(); }

private:
    sqlite_state db_;
    std::string consumer_;
};

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/feed/sqlite_feed_checkpoint.ipp>
#endif

#endif
