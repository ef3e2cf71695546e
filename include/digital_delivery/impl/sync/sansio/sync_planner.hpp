//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_SYNC_SANSIO_SYNC_PLANNER_HPP
#define DIGITAL_DELIVERY_IMPL_SYNC_SANSIO_SYNC_PLANNER_HPP

// The sync's planner, without I/O: glob rules, the path -> asset fields
// mapping, and the plan from the local tree, the manifest, the remote
// listing and the journal's committed records (docs/sync.md).

#include <digital_delivery/asset.hpp>
#include <digital_delivery/endpoint_cost.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/sync_plan.hpp>
#include <digital_delivery/upload_record.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace digital_delivery {
namespace detail {

// ---- globs ---------------------------------------------------------------------------

/// Glob match: `*` and `?` within one component, `**` across '/'.
inline bool glob_match(std::string_view p, std::string_view s) noexcept
{
    // Iterative with one backtrack point per star kind (linear-ish, no recursion).
    std::size_t pi = 0, si = 0;
    std::size_t star_p = std::string_view::npos, star_s = 0;
    bool star_deep = false;
    while (si < s.size())
    {
        if (pi < p.size() && p[pi] == '*')
        {
            const bool deep = pi + 1 < p.size() && p[pi + 1] == '*';
            pi += deep ? 2 : 1;
            // "**/" also matches no folder at all.
            if (deep && pi < p.size() && p[pi] == '/')
            {
                if (glob_match(p.substr(pi + 1), s.substr(si)))
                    return true;
            }
            star_p = pi;
            star_s = si;
            star_deep = deep;
            continue;
        }
        if (pi < p.size() && (p[pi] == s[si] || (p[pi] == '?' && s[si] != '/')))
        {
            ++pi;
            ++si;
            continue;
        }
        if (star_p != std::string_view::npos && (star_deep || s[star_s] != '/'))
        {
            ++star_s;
            si = star_s;
            pi = star_p;
            continue;
        }
        return false;
    }
    while (pi < p.size() && p[pi] == '*')
        ++pi;
    return pi == p.size();
}

/// A rule's pattern against a relative path: without '/', the last component.
inline bool rule_matches(std::string_view pattern, std::string_view path) noexcept
{
    if (pattern.find('/') == std::string_view::npos)
    {
        const auto slash = path.rfind('/');
        return glob_match(pattern, slash == std::string_view::npos ? path : path.substr(slash + 1));
    }
    if (!pattern.empty() && pattern.front() == '/')
        pattern.remove_prefix(1);
    return glob_match(pattern, path);
}

inline bool rules_admit(std::span<const sync_rule> rules, std::string_view path) noexcept
{
    for (const auto& r : rules)
        if (rule_matches(r.pattern, path))
            return r.include;
    return true;
}

/// Whether a component of the relative path starts with '.'.
inline bool is_hidden_path(std::string_view path) noexcept
{
    std::size_t start = 0;
    while (start < path.size())
    {
        if (path[start] == '.')
            return true;
        const auto slash = path.find('/', start);
        if (slash == std::string_view::npos)
            break;
        start = slash + 1;
    }
    return false;
}

// ---- path -> asset fields ------------------------------------------------------------

inline std::optional<std::string> content_type_for(std::string_view filename)
{
    const auto dot = filename.rfind('.');
    if (dot == std::string_view::npos || dot == 0)
        return std::nullopt;
    std::string ext(filename.substr(dot + 1));
    for (auto& c : ext)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    static constexpr std::pair<std::string_view, std::string_view> table[] = {
        {"pdf", "application/pdf"},   {"epub", "application/epub+zip"}, {"zip", "application/zip"},
        {"mp3", "audio/mpeg"},        {"m4a", "audio/mp4"},             {"wav", "audio/wav"},
        {"flac", "audio/flac"},       {"ogg", "audio/ogg"},             {"mp4", "video/mp4"},
        {"mov", "video/quicktime"},   {"png", "image/png"},             {"jpg", "image/jpeg"},
        {"jpeg", "image/jpeg"},       {"gif", "image/gif"},             {"svg", "image/svg+xml"},
        {"webp", "image/webp"},       {"txt", "text/plain"},            {"csv", "text/csv"},
        {"md", "text/markdown"},      {"json", "application/json"},     {"gz", "application/gzip"},
        {"tar", "application/x-tar"}, {"7z", "application/x-7z-compressed"}, {"mobi", "application/x-mobipocket-ebook"},
    };
    for (const auto& [e, t] : table)
        if (e == ext)
            return std::string(t);
    return std::nullopt;
}

inline std::string_view last_component(std::string_view path) noexcept
{
    const auto slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

/// sync_asset_fields (docs/sync.md, "Path mapping").
inline void asset_fields(std::string_view relative_path, std::string& filename, std::string& name,
                         std::optional<std::string>& content_type)
{
    filename = std::string(last_component(relative_path));
    name = std::string(relative_path);
    content_type = content_type_for(filename);
}

// ---- the plan ------------------------------------------------------------------------

inline std::string join_root(std::string_view root, std::string_view rel)
{
    std::string out(root);
    if (out.empty() || out.back() != '/')
        out += '/';
    out += rel;
    return out;
}

inline sync_action upload_action(sync_action_kind kind, sync_reason reason, const sync_local_file& f)
{
    sync_action a;
    a.kind = kind;
    a.reason = reason;
    a.path = f.path;
    a.size = f.size;
    a.mtime_ns = f.mtime_ns;
    a.sha256 = f.sha256;
    std::optional<std::string> ct;
    asset_fields(f.path, a.filename, a.name, ct);
    a.content_type = std::move(ct);
    if (kind == sync_action_kind::create || kind == sync_action_kind::replace)
    {
        a.points = kind == sync_action_kind::create ? operation_points::upload_asset : operation_points::replace_asset_body;
        a.bytes = f.size;
    }
    return a;
}

inline int kind_rank(sync_action_kind k) noexcept
{
    switch (k)
    {
    case sync_action_kind::move: return 0;
    case sync_action_kind::adopt: return 1;
    case sync_action_kind::replace: return 2;
    case sync_action_kind::create: return 3;
    case sync_action_kind::skip: return 4;
    case sync_action_kind::ambiguous: return 5;
    case sync_action_kind::delete_asset: return 6;
    }
    return 7;
}

inline void count(sync_totals& t, const sync_action& a) noexcept
{
    switch (a.kind)
    {
    case sync_action_kind::create: ++t.create; break;
    case sync_action_kind::replace: ++t.replace; break;
    case sync_action_kind::delete_asset: ++t.delete_asset; break;
    case sync_action_kind::adopt: ++t.adopt; break;
    case sync_action_kind::move: ++t.move; break;
    case sync_action_kind::skip: ++t.skip; break;
    case sync_action_kind::ambiguous: ++t.ambiguous; break;
    }
    t.points += a.points;
    t.bytes += a.bytes;
}

inline sync_plan make_plan(
    const sync_local_tree& local,
    std::span<const sync_manifest_entry> manifest,
    const sync_remote& remote,
    std::span<const upload_record> committed,
    const sync_options& o
)
{
    sync_plan plan;
    plan.root = local.root;
    plan.options = o;
    plan.listing_points = remote.listing_points;
    plan.listing_requests = remote.listing_requests;

    // Each local file's manifest entry (match) and whether each manifest
    // entry's file is there (present, by index): a merge of the two sorted
    // sequences (the scan's order and the manifest's), else a hash table.
    const auto path_less = [](const auto& a, const auto& b) { return a.path < b.path; };
    std::vector<const sync_manifest_entry*> match(local.files.size(), nullptr);
    std::vector<char> present(manifest.size(), 0);
    if (std::is_sorted(local.files.begin(), local.files.end(), path_less) &&
        std::is_sorted(manifest.begin(), manifest.end(), path_less))
    {
        std::size_t j = 0;
        for (std::size_t i = 0; i < local.files.size(); ++i)
        {
            while (j < manifest.size() && manifest[j].path < local.files[i].path)
                ++j;
            if (j < manifest.size() && manifest[j].path == local.files[i].path)
            {
                match[i] = &manifest[j];
                for (std::size_t k = j; k < manifest.size() && manifest[k].path == local.files[i].path; ++k)
                    present[k] = 1;
            }
        }
    }
    else
    {
        std::unordered_map<std::string_view, std::size_t> by_path;
        by_path.reserve(manifest.size());
        for (std::size_t j = 0; j < manifest.size(); ++j)
            by_path.emplace(manifest[j].path, j);
        std::unordered_set<std::string_view> local_paths;
        local_paths.reserve(local.files.size());
        for (std::size_t i = 0; i < local.files.size(); ++i)
        {
            local_paths.insert(local.files[i].path);
            if (auto m = by_path.find(local.files[i].path); m != by_path.end())
                match[i] = &manifest[m->second];
        }
        for (std::size_t j = 0; j < manifest.size(); ++j)
            present[j] = local_paths.count(manifest[j].path) ? 1 : 0;
    }
    const auto is_present = [&](const sync_manifest_entry& e) {
        return present[static_cast<std::size_t>(&e - manifest.data())] != 0;
    };
    std::unordered_map<std::string_view, const asset*> by_id;
    by_id.reserve(remote.assets.size());
    for (const auto& a : remote.assets)
        by_id.emplace(a.id, &a);
    std::unordered_set<std::string_view> linked(remote.linked_asset_ids.begin(), remote.linked_asset_ids.end());

    // Manifest entries whose file is gone, by (size, sha256): candidates of a move.
    std::multimap<std::pair<std::uint64_t, std::string_view>, const sync_manifest_entry*> gone_by_content;
    for (const auto& e : manifest)
        if (!is_present(e) && !e.sha256.empty())
            gone_by_content.emplace(std::make_pair(e.size, std::string_view(e.sha256)), &e);
    std::set<std::string_view> moved_from;
    // Assets some manifest entry holds: never adopted by another path (made
    // at the first file the manifest does not hold: none on a no-change run).
    std::unordered_set<std::string_view> claimed;
    bool claimed_made = false;
    // Committed journal uploads by absolute path.
    std::unordered_map<std::string_view, std::vector<const upload_record*>> journal_by_path;
    for (const auto& r : committed)
        if (r.stage == upload_stage::committed)
            journal_by_path[r.path].push_back(&r);

    for (std::size_t fi = 0; fi < local.files.size(); ++fi)
    {
        const sync_local_file& f = local.files[fi];
        if (f.skip)
        {
            sync_action a = upload_action(sync_action_kind::skip, sync_reason::refused, f);
            a.error = f.skip;
            a.message = f.skip.message();
            plan.actions.push_back(std::move(a));
            continue;
        }
        if (match[fi])
        {
            const sync_manifest_entry& e = *match[fi];
            auto r = by_id.find(e.asset_id);
            const bool same = e.size == f.size && !e.sha256.empty() && e.sha256 == f.sha256;
            if (r == by_id.end())
            {
                sync_action a = upload_action(sync_action_kind::create, sync_reason::remote_deleted, f);
                a.message = "asset " + e.asset_id + " was deleted by someone else: created again";
                plan.actions.push_back(std::move(a));
                continue;
            }
            if (r->second->updated_at != e.asset_updated_at)
            {
                sync_action a = upload_action(sync_action_kind::replace, sync_reason::remote_changed, f);
                a.asset_id = e.asset_id;
                a.asset_updated_at = r->second->updated_at;
                a.filename = e.filename.empty() ? a.filename : e.filename;
                a.message = "asset " + e.asset_id + " was changed by someone else (updated_at " +
                            format_timestamp(r->second->updated_at) + "): the local file is uploaded into it";
                plan.actions.push_back(std::move(a));
                continue;
            }
            if (same)
            {
                ++plan.totals.unchanged;
                if (e.mtime_ns != f.mtime_ns)
                {
                    sync_manifest_entry n = e;
                    n.mtime_ns = f.mtime_ns;
                    plan.manifest_refresh.push_back(std::move(n));
                }
                continue;
            }
            sync_action a = upload_action(sync_action_kind::replace, sync_reason::content_changed, f);
            a.asset_id = e.asset_id;
            a.asset_updated_at = r->second->updated_at;
            a.filename = e.filename.empty() ? a.filename : e.filename;
            plan.actions.push_back(std::move(a));
            continue;
        }
        if (!claimed_made)
        {
            claimed.reserve(manifest.size());
            for (const auto& e : manifest)
                claimed.insert(e.asset_id);
            claimed_made = true;
        }
        // Not in the manifest: a committed upload of this content (a crash
        // before the manifest write)?
        if (auto j = journal_by_path.find(join_root(local.root, f.path)); j != journal_by_path.end())
        {
            const upload_record* hit = nullptr;
            for (const auto* r : j->second)
                if (r->size == f.size && r->sha256 == f.sha256 && by_id.count(r->asset_id) && !claimed.count(r->asset_id))
                    hit = r;
            if (hit)
            {
                sync_action a = upload_action(sync_action_kind::adopt, sync_reason::journal_recovered, f);
                a.asset_id = hit->asset_id;
                a.filename = hit->filename;
                a.asset_updated_at = by_id[hit->asset_id]->updated_at;
                a.message = "uploaded by an interrupted run (upload journal)";
                claimed.insert(hit->asset_id);
                plan.actions.push_back(std::move(a));
                continue;
            }
        }
        // A move: the content of a manifest entry whose file is gone.
        {
            auto range = gone_by_content.equal_range(std::make_pair(f.size, std::string_view(f.sha256)));
            const sync_manifest_entry* from = nullptr;
            for (auto it = range.first; it != range.second; ++it)
                if (!moved_from.count(it->second->path) && by_id.count(it->second->asset_id))
                {
                    from = it->second;
                    break;
                }
            if (from)
            {
                moved_from.insert(from->path);
                const bool again = o.rename_replace;
                sync_action a = upload_action(again ? sync_action_kind::replace : sync_action_kind::move,
                                              again ? sync_reason::moved_renamed : sync_reason::moved, f);
                a.from_path = from->path;
                a.asset_id = from->asset_id;
                a.asset_updated_at = by_id[from->asset_id]->updated_at;
                if (!again)
                    a.filename = from->filename;
                a.message = "moved from " + from->path;
                plan.actions.push_back(std::move(a));
                continue;
            }
        }
        if (o.adopt != sync_adopt::off)
        {
            const std::string_view fname = last_component(f.path);
            std::vector<std::string> candidates;
            for (const auto& a : remote.assets)
                if (a.type == asset_type::internal && a.filename && *a.filename == fname &&
                    a.byte_size == static_cast<std::int64_t>(f.size) && !claimed.count(a.id))
                    candidates.push_back(a.id);
            if (candidates.size() == 1)
            {
                const bool again = o.adopt == sync_adopt::replace;
                sync_action a =
                    upload_action(again ? sync_action_kind::replace : sync_action_kind::adopt, sync_reason::adopted, f);
                a.asset_id = candidates[0];
                a.asset_updated_at = by_id[candidates[0]]->updated_at;
                a.message = again ? "adopted asset " + candidates[0] + ", uploaded again to be sure of its bytes"
                                  : "adopted asset " + candidates[0] +
                                        " by (filename, byte_size): its bytes are not known (the API has no checksum)";
                claimed.insert(by_id[candidates[0]]->id);  // a view of the listing: candidates is gone soon
                plan.actions.push_back(std::move(a));
                continue;
            }
            if (candidates.size() > 1)
            {
                sync_action a = upload_action(sync_action_kind::ambiguous, sync_reason::adopted, f);
                a.error = make_error_code(sync_errc::ambiguous_adopt);
                a.message = std::to_string(candidates.size()) + " internal assets have this filename and byte_size";
                a.candidates = std::move(candidates);
                plan.actions.push_back(std::move(a));
                continue;
            }
        }
        plan.actions.push_back(upload_action(sync_action_kind::create, sync_reason::new_file, f));
    }

    // Files removed locally.
    std::vector<sync_action> deletes;
    std::uint64_t gone = 0;
    for (const auto& e : manifest)
    {
        if (is_present(e) || moved_from.count(e.path))
            continue;
        // Out of the sync's scope now (a rule, a hidden name): neither deleted nor forgotten.
        if (!rules_admit(o.rules, e.path) || (!o.hidden && is_hidden_path(e.path)))
            continue;
        ++gone;
        sync_action a;
        a.reason = sync_reason::local_deleted;
        a.path = e.path;
        a.asset_id = e.asset_id;
        a.size = e.size;
        a.sha256 = e.sha256;
        a.filename = e.filename;
        a.name = e.path;
        if (!by_id.count(e.asset_id))
        {
            plan.manifest_forget.push_back(e.path);
            continue;
        }
        if (!o.delete_remote)
            continue;
        if (linked.count(e.asset_id) && !o.delete_linked)
        {
            a.kind = sync_action_kind::skip;
            a.error = make_error_code(sync_errc::linked_asset);
            a.message = "asset " + e.asset_id + " is linked to a digital product: kept (delete_linked)";
            plan.actions.push_back(std::move(a));
            continue;
        }
        a.kind = sync_action_kind::delete_asset;
        a.points = operation_points::delete_asset;
        deletes.push_back(std::move(a));
    }
    if (!deletes.empty())
    {
        error_code refused;
        std::string why;
        const std::uint64_t admitted = local.files.size();
        if (admitted == 0)
        {
            refused = make_error_code(sync_errc::deletes_refused_empty);
            why = "the local side is empty";
        }
        else if (!manifest.empty() &&
                 static_cast<double>(gone) > o.max_shrink * static_cast<double>(manifest.size()))
        {
            refused = make_error_code(sync_errc::deletes_refused_shrink);
            why = std::to_string(gone) + " of " + std::to_string(manifest.size()) + " files are gone (above max_shrink)";
        }
        else if (o.max_delete && deletes.size() > *o.max_delete)
        {
            refused = make_error_code(sync_errc::deletes_refused_max);
            why = std::to_string(deletes.size()) + " deletes planned, max_delete is " + std::to_string(*o.max_delete);
        }
        if (refused)
        {
            plan.deletes_refused = refused;
            for (auto& d : deletes)
            {
                d.kind = sync_action_kind::skip;
                d.points = 0;
                d.error = refused;
                d.message = "delete refused: " + why;
            }
        }
        for (auto& d : deletes)
            plan.actions.push_back(std::move(d));
    }

    std::stable_sort(plan.actions.begin(), plan.actions.end(),
                     [](const sync_action& a, const sync_action& b) { return kind_rank(a.kind) < kind_rank(b.kind); });
    for (const auto& a : plan.actions)
        count(plan.totals, a);

    if (o.product_id && remote.product_asset_ids)
    {
        std::unordered_set<std::string_view> in_product(remote.product_asset_ids->begin(), remote.product_asset_ids->end());
        bool add = false, remove = false;
        for (const auto& a : plan.actions)
        {
            if ((a.kind == sync_action_kind::create) ||
                ((a.kind == sync_action_kind::adopt || a.kind == sync_action_kind::replace || a.kind == sync_action_kind::move) &&
                 !in_product.count(a.asset_id)))
                add = true;
            if (a.kind == sync_action_kind::delete_asset && in_product.count(a.asset_id))
                remove = true;
        }
        for (const auto& e : manifest)
            if (is_present(e) && by_id.count(e.asset_id) && !in_product.count(e.asset_id))
                add = true;
        plan.product_points = (add ? operation_points::edit_product_assets : 0) +
                              (remove ? operation_points::edit_product_assets : 0);
        plan.totals.points += plan.product_points;
    }
    return plan;
}

}  // namespace detail
}  // namespace digital_delivery

#endif
