// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Issue 45, benchmark b, the local side of a no-change re-sync as one process:
// what `ddctl assets sync DIR` does before and after the remote listing, on
// the state file a real `ddctl assets sync DIR` filled (resync.sh):
//   read the folder's manifest from the SQLite state file (sqlite_sync_manifest),
//   scan the folder (scan_sync_tree: one stat per file, a hash only for a file
//     whose size or mtime moved),
//   compare (plan_sync) against the remote side the listing would give when
//     nobody else touched the store: one internal asset per manifest entry,
//     with the manifest's id, filename, size and updated_at.
// The listing itself (GET /assets, 250 a page) is measured apart, by ddctl.
// Prints one line: files, actions, unchanged and the wall/CPU seconds of each step.
// Usage: digital_delivery_sync_scan_bench STATE_DB DIR
#include <digital_delivery/sqlite_sync_manifest.hpp>
#include <digital_delivery/sqlite_upload_journal.hpp>
#include <digital_delivery/sync.hpp>

#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <sys/resource.h>

namespace dd = digital_delivery;

namespace {

double cpu_now()
{
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct stopwatch
{
    std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
    double cpu = cpu_now();
    // "wall cpu" seconds since the last lap
    std::pair<double, double> lap()
    {
        const auto w = std::chrono::steady_clock::now();
        const double c = cpu_now();
        const std::pair<double, double> r{std::chrono::duration<double>(w - wall).count(), c - cpu};
        wall = w;
        cpu = c;
        return r;
    }
};

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 3)
    {
        std::fprintf(stderr, "usage: %s STATE_DB DIR\n", argv[0]);
        return 2;
    }
    try
    {
        stopwatch sw;
        dd::sqlite_upload_journal journal(argv[1]);
        dd::sqlite_sync_manifest manifest(journal.state(), argv[2]);
        const std::vector<dd::sync_manifest_entry> entries = manifest.entries();
        const auto read = sw.lap();

        const dd::sync_options options;
        dd::error_code ec;
        const dd::sync_local_tree tree = dd::scan_sync_tree(argv[2], entries, options, ec);
        if (ec)
        {
            std::fprintf(stderr, "scan: %s\n", ec.message().c_str());
            return 1;
        }
        const auto scan = sw.lap();

        dd::sync_remote remote;  // what the listing gives when nobody else touched the store
        remote.assets.reserve(entries.size());
        for (const auto& e : entries)
        {
            dd::asset a;
            a.id = e.asset_id;
            a.type = dd::asset_type::internal;
            a.filename = e.filename;
            a.name = e.path;
            a.byte_size = static_cast<std::int64_t>(e.size);
            a.updated_at = e.asset_updated_at;
            a.created_at = e.asset_updated_at;
            remote.assets.push_back(std::move(a));
        }
        const auto remote_made = sw.lap();
        const dd::sync_plan plan = dd::plan_sync(tree, entries, remote, {}, options);
        const auto compare = sw.lap();
        std::printf("files %zu hashed %llu actions %zu unchanged %llu manifest_read %.3f %.3f scan %.3f %.3f "
                    "remote_model %.3f %.3f compare %.3f %.3f\n",
                    tree.files.size(), static_cast<unsigned long long>(tree.hashed), plan.actions.size(),
                    static_cast<unsigned long long>(plan.totals.unchanged), read.first, read.second, scan.first, scan.second,
                    remote_made.first, remote_made.second, compare.first, compare.second);
        return plan.actions.empty() ? 0 : 3;
    }
    catch (const std::exception& e)
    {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
}
