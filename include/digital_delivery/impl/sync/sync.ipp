//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_SYNC_SYNC_IPP
#define DIGITAL_DELIVERY_IMPL_SYNC_SYNC_IPP

// The sync's driver: the local scan, the remote listing, the plan (the
// sans-io planner of sansio/sync_planner.hpp) and the apply (the rules of
// sansio/sync_apply_core.hpp carried out by `transfers` workers, each write
// through the upload journal). docs/sync.md.

#include <digital_delivery/sync.hpp>

#include <digital_delivery/asset_edits.hpp>
#include <digital_delivery/endpoint_cost.hpp>
#include <digital_delivery/endpoints.hpp>
#include <digital_delivery/upload.hpp>
#include <digital_delivery/error_with_diagnostics.hpp>
#include <digital_delivery/impl/crypto/sha256.hpp>
#include <digital_delivery/impl/sync/sansio/sync_apply_core.hpp>
#include <digital_delivery/impl/sync/sansio/sync_planner.hpp>
#include <digital_delivery/rate_limit.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>
#include <boost/throw_exception.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <deque>
#include <cstring>
#include <exception>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace digital_delivery {

// ---- the memory manifest ----------------------------------------------------------------

DIGITAL_DELIVERY_DECL std::vector<sync_manifest_entry> memory_sync_manifest::entries()
{
    auto out = entries_;
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
    return out;
}

DIGITAL_DELIVERY_DECL void memory_sync_manifest::put(const sync_manifest_entry& e)
{
    for (auto& x : entries_)
        if (x.path == e.path)
        {
            x = e;
            return;
        }
    entries_.push_back(e);
}

DIGITAL_DELIVERY_DECL void memory_sync_manifest::erase(std::string_view path)
{
    std::erase_if(entries_, [path](const sync_manifest_entry& e) { return e.path == path; });
}

DIGITAL_DELIVERY_DECL void memory_sync_manifest::move(std::string_view from, const sync_manifest_entry& to)
{
    erase(from);
    put(to);
}

// ---- rules, mapping, plan ------------------------------------------------------------

DIGITAL_DELIVERY_DECL bool sync_rules_admit(std::span<const sync_rule> rules, std::string_view relative_path) noexcept
{
    return detail::rules_admit(rules, relative_path);
}

DIGITAL_DELIVERY_DECL void sync_asset_fields(
    std::string_view relative_path,
    std::string& filename,
    std::string& name,
    std::optional<std::string>& content_type
)
{
    detail::asset_fields(relative_path, filename, name, content_type);
}

DIGITAL_DELIVERY_DECL sync_plan plan_sync(
    const sync_local_tree& local,
    std::span<const sync_manifest_entry> manifest,
    const sync_remote& remote,
    std::span<const upload_record> committed,
    const sync_options& options
)
{
    return detail::make_plan(local, manifest, remote, committed, options);
}

DIGITAL_DELIVERY_DECL sync_plan plan_sync_with_journal(
    const sync_local_tree& local,
    std::span<const sync_manifest_entry> manifest,
    const sync_remote& remote,
    const sync_journal_state& journal,
    const sync_options& options
)
{
    sync_plan p = detail::make_plan(local, manifest, remote, journal.committed, options);
    p.unfinished = journal.unfinished;
    p.recovery_points = static_cast<std::int64_t>(p.unfinished.size()) * operation_points::replace_asset_body;
    return p;
}

DIGITAL_DELIVERY_DECL sync_journal_state read_sync_journal(
    upload_journal& journal,
    const sync_local_tree& local,
    std::span<const sync_manifest_entry> manifest
)
{
    sync_journal_state out;
    std::unordered_map<std::string_view, const sync_manifest_entry*> by_path;
    for (const auto& e : manifest)
        by_path.emplace(e.path, &e);
    for (const auto& f : local.files)
    {
        auto m = by_path.find(f.path);
        // A committed record is useful only with the file's hash to compare.
        if (f.skip || f.sha256.empty() || (m != by_path.end() && m->second->sha256 == f.sha256))
            continue;
        for (auto& r : journal.find(detail::join_root(local.root, f.path)))
            if (r.stage == upload_stage::committed)
                out.committed.push_back(std::move(r));
    }
    const std::string prefix = local.root + "/";
    for (auto& r : journal.unfinished())
        if (r.path.rfind(prefix, 0) == 0)
            out.unfinished.push_back(std::move(r));
    return out;
}

// ---- the local scan ------------------------------------------------------------------

namespace detail {

inline std::int64_t mtime_ns_of(const struct stat& st) noexcept
{
    return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + static_cast<std::int64_t>(st.st_mtim.tv_nsec);
}

/// SHA-256 (hex) of the file at `dirfd`/`name`; empty when it cannot be read
/// or its size is not `expected` when read (it changed meanwhile).
inline std::string hash_file_at(int dirfd, const char* name, std::uint64_t expected, bool follow)
{
    int fd = ::openat(dirfd, name, O_RDONLY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
    if (fd < 0)
        return {};
    sha256 h;
    std::string buf(1 << 20, '\0');
    std::uint64_t total = 0;
    for (;;)
    {
        ssize_t n = ::read(fd, buf.data(), buf.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
        {
            ::close(fd);
            return {};
        }
        if (n == 0)
            break;
        h.update(std::string_view(buf.data(), static_cast<std::size_t>(n)));
        total += static_cast<std::uint64_t>(n);
    }
    ::close(fd);
    if (total != expected)
        return {};
    return sha256::to_hex(h.finish());
}

struct scan_state
{
    const sync_options& o;
    // The manifest by path: when it is sorted by path (as sqlite_sync_manifest
    // reads it), the entry after the last one found, checked first (the scan
    // visits names in order), else a binary search; otherwise a hash table.
    std::span<const sync_manifest_entry> sorted;
    std::unordered_map<std::string_view, const sync_manifest_entry*> manifest;
    sync_local_tree& out;
    std::set<std::pair<dev_t, ino_t>> open_dirs;  // loop guard when following symlinks
    std::vector<std::size_t> deferred{};          // files not in the manifest: out.files indexes
    bool use_sorted = false;
    std::size_t next = 0;

    const sync_manifest_entry* find(std::string_view path)
    {
        if (!use_sorted)
        {
            auto m = manifest.find(path);
            return m == manifest.end() ? nullptr : m->second;
        }
        if (next < sorted.size() && sorted[next].path == path)
            return &sorted[next++];
        auto it = std::lower_bound(sorted.begin(), sorted.end(), path,
                                   [](const sync_manifest_entry& e, std::string_view p) { return e.path < p; });
        if (it == sorted.end() || it->path != path)
            return nullptr;
        next = static_cast<std::size_t>(it - sorted.begin()) + 1;
        return &*it;
    }
};

/// Hashes `f` (at dirfd/name) and checks it did not change meanwhile.
inline void hash_into(scan_state& s, sync_local_file& f, int dirfd, const char* name, bool follow)
{
    f.sha256 = hash_file_at(dirfd, name, f.size, follow);
    f.hashed = true;
    ++s.out.hashed;
    s.out.hashed_bytes += f.size;
    struct stat after{};
    if (f.sha256.empty())
        f.skip = make_error_code(sync_errc::file_unreadable);
    else if (::fstatat(dirfd, name, &after, follow ? 0 : AT_SYMLINK_NOFOLLOW) != 0 ||
             static_cast<std::uint64_t>(after.st_size) != f.size || mtime_ns_of(after) != f.mtime_ns)
        f.skip = make_error_code(sync_errc::file_changed);
}

inline void scan_dir(scan_state& s, int dirfd, const std::string& prefix)
{
    DIR* d = ::fdopendir(dirfd);
    if (!d)
    {
        ::close(dirfd);
        return;
    }
    std::vector<std::pair<std::string, unsigned char>> names;
    while (dirent* e = ::readdir(d))
    {
        if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0)
            continue;
        names.emplace_back(e->d_name, e->d_type);
    }
    // By name, so that the tree usually comes out in path order and its final sort is skipped.
    std::sort(names.begin(), names.end());
    for (auto& [name, type] : names)
    {
        std::string rel;
        rel.reserve(prefix.size() + 1 + name.size());
        if (!prefix.empty())
            rel.append(prefix).push_back('/');
        rel.append(name);
        if (!s.o.hidden && name[0] == '.')
        {
            ++s.out.skipped_hidden;
            continue;
        }
        struct stat st{};
        if (::fstatat(::dirfd(d), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        bool follow = false;
        if (S_ISLNK(st.st_mode))
        {
            if (!s.o.symlinks || ::fstatat(::dirfd(d), name.c_str(), &st, 0) != 0)
            {
                ++s.out.skipped_symlinks;
                continue;
            }
            follow = true;
        }
        if (S_ISDIR(st.st_mode))
        {
            if (!s.open_dirs.insert({st.st_dev, st.st_ino}).second)
                continue;  // a symlink loop
            int sub = ::openat(::dirfd(d), name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
            if (sub >= 0)
                scan_dir(s, sub, rel);
            s.open_dirs.erase({st.st_dev, st.st_ino});
            continue;
        }
        (void)type;
        if (!S_ISREG(st.st_mode))
            continue;
        if (!s.o.rules.empty() && !rules_admit(s.o.rules, rel))
        {
            ++s.out.excluded;
            continue;
        }
        sync_local_file f;
        f.path = std::move(rel);
        f.size = static_cast<std::uint64_t>(st.st_size);
        f.mtime_ns = mtime_ns_of(st);
        if (f.size > static_cast<std::uint64_t>(max_asset_byte_size))
            f.skip = make_error_code(sync_errc::file_too_large);
        else if (f.size == 0)
            f.skip = make_error_code(sync_errc::file_unreadable);  // the API refuses byte_size 0
        else
        {
            const sync_manifest_entry* m = s.find(f.path);
            if (!m)
                s.deferred.push_back(s.out.files.size());  // hashed later only if it may be a move
            else if (m->size == f.size && m->mtime_ns == f.mtime_ns && !m->sha256.empty())
                f.sha256 = m->sha256;
            else
                hash_into(s, f, ::dirfd(d), name.c_str(), follow);
        }
        s.out.files.push_back(std::move(f));
    }
    ::closedir(d);
}

/// The folder's absolute, symlink-free path ("" when it is not a directory).
inline std::string canonical_dir(std::string_view root)
{
    char* r = ::realpath(std::string(root).c_str(), nullptr);
    if (!r)
        return {};
    std::string out(r);
    ::free(r);
    struct stat st{};
    if (::stat(out.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return {};
    return out;
}

}  // namespace detail

DIGITAL_DELIVERY_DECL sync_local_tree scan_sync_tree(
    std::string_view root,
    std::span<const sync_manifest_entry> manifest,
    const sync_options& options,
    error_code& ec
)
{
    ec.clear();
    sync_local_tree out;
    out.root = detail::canonical_dir(root);
    int fd = out.root.empty() ? -1 : ::open(out.root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
    {
        ec = make_error_code(sync_errc::not_a_directory);
        out.root.clear();
        return out;
    }
    detail::scan_state s{options, manifest, {}, out, {}};
    out.files.reserve(manifest.size() + manifest.size() / 8);
    s.use_sorted = std::is_sorted(manifest.begin(), manifest.end(),
                                  [](const auto& a, const auto& b) { return a.path < b.path; });
    if (!s.use_sorted)
    {
        s.manifest.reserve(manifest.size());
        for (const auto& e : manifest)
            s.manifest.emplace(e.path, &e);
    }
    struct stat st{};
    if (::fstat(fd, &st) == 0)
        s.open_dirs.insert({st.st_dev, st.st_ino});
    const int root_fd = ::dup(fd);  // scan_dir closes its own
    detail::scan_dir(s, fd, {});
    // Files the manifest does not hold: read only when a manifest entry whose
    // file is gone has their size (a possible move; the planner compares hashes).
    if (!s.deferred.empty())
    {
        std::unordered_set<std::string_view> present;
        present.reserve(out.files.size());
        for (const auto& f : out.files)
            present.insert(f.path);
        std::unordered_set<std::uint64_t> gone_sizes;
        for (const auto& e : manifest)
            if (!present.count(e.path) && !e.sha256.empty())
                gone_sizes.insert(e.size);
        for (std::size_t i : s.deferred)
        {
            auto& f = out.files[i];
            if (gone_sizes.count(f.size) && root_fd >= 0)
                detail::hash_into(s, f, root_fd, f.path.c_str(), options.symlinks);
        }
    }
    if (root_fd >= 0)
        ::close(root_fd);
    const auto by_path = [](const auto& a, const auto& b) { return a.path < b.path; };
    if (!std::is_sorted(out.files.begin(), out.files.end(), by_path))  // a name that sorts after "name/..."
        std::sort(out.files.begin(), out.files.end(), by_path);
    return out;
}

// ---- the lock --------------------------------------------------------------------------

DIGITAL_DELIVERY_DECL sync_folder_lock::sync_folder_lock(std::string_view state_file, std::string_view root)
{
    std::string key = detail::canonical_dir(root);
    if (key.empty())
        key = std::string(root);
    detail::sha256 h;
    h.update(key);
    path_ = std::string(state_file) + ".sync-" + detail::sha256::to_hex(h.finish()).substr(0, 16) + ".lock";
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0)
        boost::throw_exception(boost::system::system_error(error_code(errno, boost::system::system_category()),
                                                           "cannot open the sync lock file " + path_));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0)
    {
        const int err = errno;
        ::close(fd_);
        fd_ = -1;
        if (err != EWOULDBLOCK)
            boost::throw_exception(boost::system::system_error(error_code(err, boost::system::system_category()),
                                                               "cannot lock " + path_));
        diagnostics d;
        d.client_message = "another sync of " + key + " holds " + path_;
        boost::throw_exception(error_with_diagnostics(make_error_code(sync_errc::locked), std::move(d)));
    }
}

DIGITAL_DELIVERY_DECL sync_folder_lock::~sync_folder_lock()
{
    if (fd_ >= 0)
        ::close(fd_);  // releases the flock
}

// ---- the driver ----------------------------------------------------------------------

namespace detail {

template <class F>
error_code sync_store_call(diagnostics& diag, F f)
{
    try
    {
        f();
        return {};
    }
    catch (const error_with_diagnostics& e)
    {
        diag = e.get_diagnostics();
        return e.code();
    }
    catch (const boost::system::system_error& e)
    {
        diag.client_message = std::string("sync state: ") + e.what();
        return e.code();
    }
}

class sync_driver : public std::enable_shared_from_this<sync_driver>
{
public:
    sync_driver(client& c, upload_journal& j, sync_manifest& m, stored_request_options request, diagnostics* diag)
        : c_(c), j_(j), m_(m), request_(std::move(request)), diag_(diag ? diag : &own_diag_)
    {
        request_.set_priority(priority::background);
    }

    using plan_result = std::tuple<error_code, sync_plan>;

    auto plan_token()
    {
        return boost::asio::bind_cancellation_slot(plan_sig_->slot(), boost::asio::as_tuple(boost::asio::use_awaitable));
    }
    using apply_result = std::tuple<error_code, sync_result>;

    boost::asio::awaitable<plan_result> plan(std::string root_in, sync_options o)
    {
        plan_sig_ = &signals_.emplace_back();
        const std::string root = canonical_dir(root_in);
        if (root.empty())
            co_return fail_plan(make_error_code(sync_errc::not_a_directory), "not a readable directory: " + root_in);
        if (const std::string state = m_.state_file(); !state.empty())
        {
            const std::string dir = canonical_dir(state.substr(0, state.rfind('/') == std::string::npos ? 0 : state.rfind('/')));
            if (!dir.empty() && (dir == root || dir.rfind(root + "/", 0) == 0))
                co_return fail_plan(make_error_code(sync_errc::state_inside_tree),
                                    "the state file " + state + " is inside " + root);
        }
        std::vector<sync_manifest_entry> entries;
        if (auto ec = sync_store_call(*diag_, [&] { entries = m_.entries(); }))
            co_return plan_result{ec, sync_plan{}};
        error_code sec;
        sync_local_tree tree = scan_sync_tree(root, entries, o, sec);
        if (sec)
            co_return fail_plan(sec, "cannot scan " + root);

        auto [lec, remote] = co_await list_remote(o);
        if (lec)
            co_return plan_result{lec, sync_plan{}};
        sync_journal_state js;
        if (auto jec = sync_store_call(*diag_, [&] { js = read_sync_journal(j_, tree, entries); }))
            co_return plan_result{jec, sync_plan{}};
        sync_plan p = plan_sync_with_journal(tree, entries, remote, js, o);
        co_return plan_result{error_code{}, std::move(p)};
    }

    boost::asio::awaitable<apply_result> apply(const sync_plan& plan, sync_apply_options o)
    {
        plan_ = &plan;
        opts_ = std::move(o);
        if (opts_.transfers == 0)
            opts_.transfers = 1;
        core_.emplace(plan, opts_.max_points);
        for (const auto& a : plan.actions)
            if (a.kind == sync_action_kind::create || a.kind == sync_action_kind::replace)
                bytes_total_ += a.bytes;

        // 1. What an interrupted run left in the journal.
        own_sig_ = &signals_.emplace_back();
        for (const auto& r : plan.unfinished)
        {
            auto [ec, done] = co_await async_recover_upload(
                c_, j_, r, journal_opts(), request_.get(), *diag_,
                boost::asio::bind_cancellation_slot(own_sig_->slot(), boost::asio::as_tuple(boost::asio::use_awaitable)));
            if (ec)
                co_return apply_result{ec, std::move(result_)};
            ++result_.recovered;
        }
        // 2. Manifest bookkeeping that sends nothing.
        for (const auto& e : plan.manifest_refresh)
            if (auto ec = sync_store_call(*diag_, [&] { m_.put(e); }))
                co_return apply_result{ec, std::move(result_)};
        for (const auto& p : plan.manifest_forget)
            if (auto ec = sync_store_call(*diag_, [&] { m_.erase(p); }))
                co_return apply_result{ec, std::move(result_)};
        for (const auto& a : plan.actions)
        {
            if (a.kind == sync_action_kind::skip)
                ++result_.done.skip;
            if (a.kind == sync_action_kind::ambiguous)
                ++result_.done.ambiguous;
        }

        // 3. The actions: `transfers` workers.
        auto ex = c_.get_executor();
        const unsigned n = opts_.transfers;
        workers_left_ = n;
        boost::asio::steady_timer all_done(ex, boost::asio::steady_timer::time_point::max());
        all_done_ = &all_done;
        auto self = shared_from_this();
        for (unsigned w = 0; w < n; ++w)
            boost::asio::co_spawn(ex, worker(), [self](std::exception_ptr e) {
                if (e && !self->store_error_)
                    self->store_error_ = make_error_code(boost::system::errc::io_error);
                if (--self->workers_left_ == 0 && self->all_done_)
                    self->all_done_->cancel();
            });
        {
            auto [wec] = co_await all_done.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
            (void)wec;
        }
        all_done_ = nullptr;
        if (store_error_)
            co_return apply_result{store_error_, std::move(result_)};

        // 4. The product step.
        if (plan.options.product_id && !cancelled_ && !core_->stopped() && core_->failed() == 0)
            if (auto ec = co_await product_step(plan))
                record_failure(0, ec, "the digital product's asset list was not updated");

        auto [outcome, ec] = core_->outcome();
        if (cancelled_)
        {
            outcome = sync_outcome::failed;
            ec = boost::asio::error::operation_aborted;
        }
        result_.outcome = outcome;
        result_.failed = core_->failed();
        result_.not_started = core_->not_started();
        result_.done.points = points_spent_;
        if (core_->stopped())
            emit({.kind = sync_event_kind::stopping, .error = core_->stopped(), .message = core_->stopped().message()});
        co_return apply_result{ec, std::move(result_)};
    }

    void set_cancel(boost::asio::cancellation_slot slot)
    {
        if (slot.is_connected())
            slot.assign([this](boost::asio::cancellation_type t) {
                cancelled_ = true;
                for (auto& s : signals_)
                    s.emit(t);
            });
    }

    using remote_result = std::tuple<error_code, sync_remote>;

    boost::asio::awaitable<remote_result> list_remote(sync_options o)
    {
        if (!plan_sig_)
            plan_sig_ = &signals_.emplace_back();
        sync_remote remote;
        if (auto ec = co_await list_assets(remote))
            co_return remote_result{ec, sync_remote{}};
        if (o.delete_remote)
            if (auto ec = co_await list_products(remote))
                co_return remote_result{ec, sync_remote{}};
        if (o.product_id)
        {
            auto [ec, p] = co_await async_get_digital_product(c_, *o.product_id, request_.get(), *diag_, plan_token());
            ++remote.listing_requests;
            remote.listing_points += endpoint_points<endpoints::get_digital_product>;
            if (ec)
                co_return remote_result{ec, sync_remote{}};
            std::vector<std::string> ids;
            for (const auto& a : p.assets)
                ids.push_back(a.id);
            remote.product_asset_ids = std::move(ids);
        }
        co_return remote_result{error_code{}, std::move(remote)};
    }

private:
    plan_result fail_plan(error_code ec, std::string why)
    {
        diag_->client_message = std::move(why);
        return plan_result{ec, sync_plan{}};
    }

    boost::asio::awaitable<error_code> list_assets(sync_remote& remote)
    {
        for (std::int32_t page = 1;; ++page)
        {
            asset_query q{.page = page, .per_page = endpoints::list_assets::max_per_page};
            auto [ec, l] = co_await async_list_assets(c_, q, request_.get(), *diag_, plan_token());
            ++remote.listing_requests;
            remote.listing_points += endpoint_points<endpoints::list_assets>;
            if (ec)
                co_return ec;
            for (auto& a : l.assets)
                remote.assets.push_back(std::move(a));
            if (l.assets.empty() || page >= l.pagination.total_pages || page >= 1'000'000)
                break;
        }
        co_return error_code{};
    }

    boost::asio::awaitable<error_code> list_products(sync_remote& remote)
    {
        for (std::int32_t page = 1;; ++page)
        {
            digital_product_query q{.page = page, .per_page = endpoints::list_digital_products::max_per_page};
            auto [ec, l] = co_await async_list_digital_products(c_, q, request_.get(), *diag_, plan_token());
            ++remote.listing_requests;
            remote.listing_points += endpoint_points<endpoints::list_digital_products>;
            if (ec)
                co_return ec;
            for (const auto& p : l.digital_products)
                for (const auto& a : p.assets)
                    remote.linked_asset_ids.push_back(a.id);
            if (l.digital_products.empty() || page >= l.pagination.total_pages || page >= 1'000'000)
                break;
        }
        remote.products_listed = true;
        co_return error_code{};
    }

    journal_options journal_opts()
    {
        journal_options jo;
        jo.upload = opts_.upload;
        jo.upload.on_created = {};
        return jo;
    }

    void emit(sync_event e)
    {
        if (!opts_.on_event)
            return;
        e.bytes_done = bytes_done_;
        e.bytes_total = bytes_total_;
        e.points_spent = points_spent_;
        e.points_total = plan_ ? plan_->totals.points : 0;
        opts_.on_event(e);
    }

    void record_failure(std::size_t i, error_code ec, std::string message)
    {
        sync_action_result r{.index = i, .done = false, .error = ec, .message = message};
        result_.results.push_back(std::move(r));
    }

    boost::asio::awaitable<void> worker()
    {
        signals_.emplace_back();
        auto& sig = signals_.back();
        for (;;)
        {
            if (cancelled_ || store_error_)
                co_return;
            auto n = core_->take();
            if (n.kind == sync_apply_core::next_kind::done)
                co_return;
            const sync_action& a = plan_->actions[n.index];
            emit({.kind = sync_event_kind::action_started, .action = &a});
            error_code ec;
            std::string message;
            std::string asset_id = a.asset_id;
            switch (n.kind)
            {
            case sync_apply_core::next_kind::local: ec = local_action(a, message); break;
            case sync_apply_core::next_kind::upload: ec = co_await upload_action(a, sig, message, asset_id); break;
            case sync_apply_core::next_kind::remove: ec = co_await delete_action(a, sig, message); break;
            case sync_apply_core::next_kind::done: break;
            }
            core_->finish(n.index, ec);
            if (!ec)
            {
                count_done(a);
                result_.results.push_back({.index = n.index, .done = true, .asset_id = asset_id});
                emit({.kind = sync_event_kind::action_done, .action = &a, .asset_id = asset_id});
            }
            else
            {
                if (ec == sync_errc::file_changed)
                    emit({.kind = sync_event_kind::action_skipped, .action = &a, .error = ec, .message = message});
                else
                    emit({.kind = sync_event_kind::action_failed, .action = &a, .error = ec, .message = message, .asset_id = asset_id});
                result_.results.push_back({.index = n.index, .done = false, .error = ec, .message = message, .asset_id = asset_id});
                if (is_store_failure(ec))
                    store_error_ = ec;
            }
        }
    }

    static bool is_store_failure(error_code ec) noexcept
    {
        // The SQLite component's categories (not linked into every program: by name).
        const std::string_view n = ec.category().name();
        return n == "digital_delivery.state" || n == "digital_delivery.sqlite";
    }

    void count_done(const sync_action& a)
    {
        switch (a.kind)
        {
        case sync_action_kind::create: ++result_.done.create; break;
        case sync_action_kind::replace: ++result_.done.replace; break;
        case sync_action_kind::delete_asset: ++result_.done.delete_asset; break;
        case sync_action_kind::adopt: ++result_.done.adopt; break;
        case sync_action_kind::move: ++result_.done.move; break;
        default: break;
        }
        result_.done.bytes += a.bytes;
    }

    error_code local_action(const sync_action& a, std::string& message)
    {
        // The asset's updated_at as the plan's listing showed it.
        sync_manifest_entry e{a.path, a.asset_id, a.size, a.mtime_ns, a.sha256, a.asset_updated_at, a.filename};
        if (a.kind == sync_action_kind::adopt && a.reason == sync_reason::adopted)
            message = "adopted: the asset's bytes were not read (the API has no checksum)";
        if (e.sha256.empty())
        {
            // The scan did not need this file's hash; the manifest does (the
            // next scan compares it): read it now, unchanged since the plan.
            const std::string path = join_root(plan_->root, a.path);
            e.sha256 = hash_file_at(AT_FDCWD, path.c_str(), a.size, true);
            struct stat st{};
            if (e.sha256.empty() || ::stat(path.c_str(), &st) != 0 || mtime_ns_of(st) != a.mtime_ns ||
                static_cast<std::uint64_t>(st.st_size) != a.size)
            {
                message = "skipped: " + a.path + " changed since the plan (size or mtime); the next run plans it again";
                return make_error_code(sync_errc::file_changed);
            }
        }
        return sync_store_call(*diag_, [&] {
            if (a.kind == sync_action_kind::move)
                m_.move(a.from_path, e);
            else
                m_.put(e);
        });
    }

    boost::asio::awaitable<error_code> upload_action(const sync_action& a, boost::asio::cancellation_signal& sig,
                                                     std::string& message, std::string& asset_id)
    {
        const std::string path = join_root(plan_->root, a.path);
        struct stat st{};
        if (::stat(path.c_str(), &st) != 0 || static_cast<std::uint64_t>(st.st_size) != a.size || mtime_ns_of(st) != a.mtime_ns)
        {
            message = "skipped: " + a.path + " changed since the plan (size or mtime); the next run uploads it";
            co_return make_error_code(sync_errc::file_changed);
        }
        journal_options jo = journal_opts();
        std::uint64_t last = 0;
        jo.upload.on_progress = [this, &a, &last](const upload_progress& p) {
            if (p.bytes_sent > last)
            {
                bytes_done_ += p.bytes_sent - last;
                last = p.bytes_sent;
            }
            emit({.kind = sync_event_kind::action_progress, .action = &a, .action_bytes_sent = p.bytes_sent});
        };
        points_spent_ += a.points;
        diagnostics d;
        error_code ec;
        journaled_upload r;
        if (a.kind == sync_action_kind::create)
        {
            upload_asset_params p{.filename = a.filename, .name = a.name};
            if (a.content_type)
                p.content_type = *a.content_type;
            std::tie(ec, r) = co_await async_upload_file(
                c_, j_, path, p, jo, request_.get(), d,
                boost::asio::bind_cancellation_slot(sig.slot(), boost::asio::as_tuple(boost::asio::use_awaitable)));
        }
        else
        {
            replace_asset_params p{.filename = a.filename};
            if (a.content_type)
                p.content_type = *a.content_type;
            std::tie(ec, r) = co_await async_replace_file(
                c_, j_, a.asset_id, path, p, jo, request_.get(), d,
                boost::asio::bind_cancellation_slot(sig.slot(), boost::asio::as_tuple(boost::asio::use_awaitable)));
        }
        if (last < a.bytes && !ec)
            bytes_done_ += a.bytes - last;
        if (ec)
        {
            message = d.client_message.empty() ? ec.message() : d.client_message;
            if (!d.asset_id.empty())
                asset_id = d.asset_id;
            co_return ec;
        }
        asset_id = r.result.id.empty() ? r.record.asset_id : r.result.id;
        // The manifest holds what the journal uploaded (its hash of the body
        // sent); a file touched during the upload gets mtime 0: hashed again next run.
        struct stat after{};
        std::int64_t mtime = a.mtime_ns;
        if (::stat(path.c_str(), &after) != 0 || mtime_ns_of(after) != a.mtime_ns ||
            static_cast<std::uint64_t>(after.st_size) != a.size)
        {
            mtime = 0;
            message = a.path + " changed during its upload: checked again next run";
        }
        sync_manifest_entry e{a.path, asset_id, r.record.size, mtime, r.record.sha256, r.result.updated_at,
                              r.result.filename.value_or(a.filename)};
        co_return sync_store_call(*diag_, [&] {
            if (!a.from_path.empty())
                m_.move(a.from_path, e);
            else
                m_.put(e);
        });
    }

    boost::asio::awaitable<error_code> delete_action(const sync_action& a, boost::asio::cancellation_signal& sig,
                                                     std::string& message)
    {
        points_spent_ += a.points;
        diagnostics d;
        auto [ec] = co_await async_delete_asset(
            c_, a.asset_id, request_.get(), d,
            boost::asio::bind_cancellation_slot(sig.slot(), boost::asio::as_tuple(boost::asio::use_awaitable)));
        if (ec && ec != api_errc::asset_not_found)
        {
            message = d.client_message.empty() ? ec.message() : d.client_message;
            co_return ec;
        }
        deleted_ids_.push_back(a.asset_id);
        co_return sync_store_call(*diag_, [&] {
            for (const auto& r : j_.find(join_root(plan_->root, a.path)))
                if (r.asset_id == a.asset_id)
                    j_.erase(r.id);
            m_.erase(a.path);
        });
    }

    boost::asio::awaitable<error_code> product_step(const sync_plan& plan)
    {
        std::vector<sync_manifest_entry> entries;
        if (auto ec = sync_store_call(*diag_, [&] { entries = m_.entries(); }))
            co_return ec;
        std::vector<std::string> add;
        for (const auto& e : entries)
            add.push_back(e.asset_id);
        if (!add.empty() && plan.product_points > 0)
        {
            points_spent_ += operation_points::edit_product_assets;
            auto [ec, p] = co_await async_add_assets(
                c_, *plan.options.product_id, add, request_.get(), *diag_,
                boost::asio::bind_cancellation_slot(own_sig_->slot(), boost::asio::as_tuple(boost::asio::use_awaitable)));
            if (ec)
                co_return ec;
        }
        if (!deleted_ids_.empty())
        {
            points_spent_ += operation_points::edit_product_assets;
            auto [ec, p] = co_await async_remove_assets(
                c_, *plan.options.product_id, deleted_ids_, request_.get(), *diag_,
                boost::asio::bind_cancellation_slot(own_sig_->slot(), boost::asio::as_tuple(boost::asio::use_awaitable)));
            if (ec && ec != api_errc::digital_product_not_found)
                co_return ec;
        }
        co_return error_code{};
    }

    client& c_;
    upload_journal& j_;
    sync_manifest& m_;
    stored_request_options request_;
    diagnostics own_diag_;
    diagnostics* diag_;
    const sync_plan* plan_ = nullptr;
    sync_apply_options opts_;
    std::optional<sync_apply_core> core_;
    sync_result result_;
    std::uint64_t bytes_done_ = 0, bytes_total_ = 0;
    std::int64_t points_spent_ = 0;
    unsigned workers_left_ = 0;
    boost::asio::steady_timer* all_done_ = nullptr;
    std::deque<boost::asio::cancellation_signal> signals_;
    boost::asio::cancellation_signal* plan_sig_ = nullptr;
    boost::asio::cancellation_signal* own_sig_ = nullptr;
    bool cancelled_ = false;
    error_code store_error_{};
    std::vector<std::string> deleted_ids_;
};

template <class Result, class Handler, class Make>
void spawn_sync(client& c, diagnostics* diag, Handler handler, std::shared_ptr<sync_driver> d, Make make)
{
    auto ex = c.get_executor();
    auto slot = boost::asio::get_associated_cancellation_slot(handler);
    d->set_cancel(slot);
    boost::asio::co_spawn(
        ex,
        [d, make = std::move(make), ex]() mutable -> boost::asio::awaitable<std::tuple<error_code, Result>> {
            co_await boost::asio::post(ex, boost::asio::use_awaitable);  // never inline
            co_return co_await make(*d);
        },
        [d, diag, slot, handler = std::move(handler)](std::exception_ptr e, std::tuple<error_code, Result> r) mutable {
            // The driver ends here: the caller's slot must not reach it any more.
            if (slot.is_connected())
                slot.clear();
            if (e)
            {
                error_code ec = make_error_code(boost::system::errc::io_error);
                try
                {
                    std::rethrow_exception(e);
                }
                catch (const boost::system::system_error& s)
                {
                    ec = s.code();
                    if (diag)
                        diag->client_message = s.what();
                }
                catch (const std::exception& s)
                {
                    if (diag)
                        diag->client_message = s.what();
                }
                std::move(handler)(ec, Result{});
                return;
            }
            std::move(handler)(std::get<0>(r), std::move(std::get<1>(r)));
        }
    );
}

DIGITAL_DELIVERY_DECL void start_plan_sync(
    client& c,
    upload_journal& j,
    sync_manifest& m,
    std::string root,
    sync_options opts,
    stored_request_options request,
    diagnostics* diag,
    sync_plan_handler handler
)
{
    if (diag)
        diag->clear();
    auto d = std::make_shared<sync_driver>(c, j, m, std::move(request), diag);
    spawn_sync<sync_plan>(c, diag, std::move(handler), d, [root = std::move(root), opts = std::move(opts)](sync_driver& dr) mutable {
        return dr.plan(std::move(root), std::move(opts));
    });
}

DIGITAL_DELIVERY_DECL void start_list_sync_remote(
    client& c,
    sync_options opts,
    stored_request_options request,
    diagnostics* diag,
    sync_remote_handler handler
)
{
    if (diag)
        diag->clear();
    // No journal or manifest is touched by the listing.
    static memory_upload_journal no_journal;
    static memory_sync_manifest no_manifest;
    auto d = std::make_shared<sync_driver>(c, no_journal, no_manifest, std::move(request), diag);
    spawn_sync<sync_remote>(c, diag, std::move(handler), d, [opts = std::move(opts)](sync_driver& dr) mutable {
        return dr.list_remote(std::move(opts));
    });
}

DIGITAL_DELIVERY_DECL void start_apply_sync(
    client& c,
    upload_journal& j,
    sync_manifest& m,
    const sync_plan* plan,
    sync_apply_options opts,
    stored_request_options request,
    diagnostics* diag,
    sync_apply_handler handler
)
{
    if (diag)
        diag->clear();
    auto d = std::make_shared<sync_driver>(c, j, m, std::move(request), diag);
    spawn_sync<sync_result>(c, diag, std::move(handler), d, [plan, opts = std::move(opts)](sync_driver& dr) mutable {
        return dr.apply(*plan, std::move(opts));
    });
}

}  // namespace detail
}  // namespace digital_delivery

#endif
