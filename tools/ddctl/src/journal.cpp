// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
#include "journal.hpp"

#include "errors.hpp"
#include "output.hpp"

#include <digital_delivery/impl/crypto/sha256.hpp>
#include <digital_delivery/sqlite_upload_journal.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/deferred.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ddctl {

namespace dd = digital_delivery;
namespace asio = boost::asio;

std::string state_directory(const std::function<const char*(const char*)>& getenv)
{
    const char* xdg = getenv("XDG_STATE_HOME");
    if (xdg && *xdg == '/')  // relative values are ignored (XDG Base Directory spec)
        return std::string(xdg) + "/ddctl";
    const char* home = getenv("HOME");
    if (!home || !*home)
        throw cli_error(exit_usage, "neither XDG_STATE_HOME nor HOME is set: no state directory for the upload journal");
    return std::string(home) + "/.local/state/ddctl";
}

std::string make_state_directory()
{
    const std::string dir = state_directory([](const char* n) { return std::getenv(n); });
    std::error_code fec;
    std::filesystem::create_directories(dir, fec);
    if (fec)
        throw cli_error(exit_failure, "cannot create the state directory " + dir + ": " + fec.message());
    ::chmod(dir.c_str(), 0700);
    return dir;
}

std::string journal_file(const std::string& dir, const std::string& base_url, const std::string& api_key)
{
    std::string url = base_url;
    while (!url.empty() && url.back() == '/')
        url.pop_back();
    return dir + "/uploads-" + dd::detail::store_key_digest(url, api_key) + ".db";
}

namespace {

const output_spec journal_asset_spec{"asset", {}, {}};

}  // namespace

open_journal::~open_journal()
{
    if (lock_fd >= 0)
        ::close(lock_fd);  // releases the lock
}

std::unique_ptr<open_journal> open_journal_for(session& s)
{
    const std::string dir = make_state_directory();
    const std::string file = journal_file(dir, s.client.params().base_url, s.client.params().api_key);
    auto j = std::make_unique<open_journal>();
    j->file = file;
    j->lock_fd = ::open((file + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (j->lock_fd < 0)
        throw cli_error(exit_failure, "cannot open " + file + ".lock: " + std::strerror(errno));
    if (::flock(j->lock_fd, LOCK_EX | LOCK_NB) != 0)
    {
        std::cerr << "ddctl: waiting for another ddctl using the upload journal " << file << '\n';
        while (::flock(j->lock_fd, LOCK_EX) != 0 && errno == EINTR)
        {
        }
    }
    try
    {
        j->journal = std::make_unique<dd::sqlite_upload_journal>(file);
    }
    catch (const dd::error_with_diagnostics& e)
    {
        throw cli_error(exit_failure, "upload journal: " + e.get_diagnostics().client_message);
    }
    return j;
}

namespace {

std::string describe(const dd::upload_record& r)
{
    std::string line = std::string(dd::to_string(r.stage)) + "  " + r.path + "  " + std::to_string(r.size) + " bytes";
    if (!r.asset_id.empty())
        line += "  asset " + r.asset_id;
    return line;
}

void say(const dd::journaled_upload& r, const std::string& file)
{
    switch (r.outcome)
    {
    case dd::journal_outcome::existing:
        std::cerr << "ddctl: " << file << " was uploaded before (same content) as asset " << r.record.asset_id
                  << ": nothing sent (--new-asset uploads it again as a new asset)\n";
        break;
    case dd::journal_outcome::completed:
        std::cerr << "ddctl: finished the interrupted upload of " << file << " (asset " << r.record.asset_id << ")\n";
        break;
    default: break;
    }
}

}  // namespace

asio::awaitable<void> journaled_upload(session& s, const std::string& file, const dd::upload_asset_params& params,
                                       const dd::upload_options& progress, bool new_asset)
{
    std::error_code fec;
    const std::string path = std::filesystem::absolute(file, fec).lexically_normal().string();
    auto j = open_journal_for(s);
    dd::journal_options o;
    o.force_new = new_asset;
    o.upload = progress;
    dd::diagnostics diag;
    auto [ec, r] = co_await dd::async_upload_file(s.client, *j->journal, path, params, o, s.ropts, diag,
                                                  asio::as_tuple(asio::deferred));
    if (ec && !diag.asset_id.empty())
        std::cerr << "ddctl: asset " << diag.asset_id << " exists without its file (" << file
                  << " was not stored): the journal keeps it; run `ddctl assets upload " << file
                  << "` again or `ddctl assets recover` to finish it\n";
    else if (ec && ec == dd::condition::cancelled)
        std::cerr << "ddctl: interrupted; the journal keeps what the next `ddctl assets upload " << file
                  << "` (or `ddctl assets recover`) needs to finish without a second asset\n";
    s.check(ec, diag, "PUT the bytes of " + file + " to the presigned upload URL");
    say(r, file);
    s.out.document(s.tap->last_body, journal_asset_spec);
}

void add_recover_command(CLI::App& assets, selection& sel)
{
    auto list_only = std::make_shared<bool>(false);
    auto* app = add_command(assets, "recover",
                            "Finish (or delete) the uploads the journal holds unfinished: an asset created without "
                            "its file is finished, or deleted when the file is gone or changed",
                            "ddctl assets recover --list");
    app->add_flag("--list", *list_only, "only list the unfinished uploads");
    app->callback([&sel, list_only]() {
        sel.write = !*list_only;
        sel.run = [list_only](session& s) -> asio::awaitable<void> {
            // A dry run creates no state: without a journal there is nothing to recover.
            std::error_code fec;
            if (s.dry_run && !std::filesystem::exists(journal_file(state_directory([](const char* n) { return std::getenv(n); }),
                                                                   s.client.params().base_url, s.client.params().api_key),
                                                      fec))
            {
                std::cout << "no unfinished uploads\n";
                co_return;
            }
            auto j = open_journal_for(s);
            std::vector<dd::upload_record> left;
            try
            {
                left = j->journal->unfinished();
            }
            catch (const dd::error_with_diagnostics& e)
            {
                throw cli_error(exit_failure, "upload journal: " + e.get_diagnostics().client_message);
            }
            if (left.empty())
            {
                std::cout << "no unfinished uploads\n";
                co_return;
            }
            for (const auto& r : left)
            {
                if (*list_only || s.dry_run)
                {
                    std::cout << describe(r) << '\n';
                    continue;
                }
                dd::diagnostics diag;
                auto [ec, done] = co_await dd::async_recover_upload(s.client, *j->journal, r, dd::journal_options{}, s.ropts,
                                                                    diag, asio::as_tuple(asio::deferred));
                s.check(ec, diag);
                std::cout << dd::to_string(done.outcome) << "  " << r.path;
                if (!done.record.asset_id.empty())
                    std::cout << "  asset " << done.record.asset_id;
                std::cout << '\n';
            }
        };
    });
}

}  // namespace ddctl
