//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_UPLOAD_UPLOAD_JOURNAL_IPP
#define DIGITAL_DELIVERY_IMPL_UPLOAD_UPLOAD_JOURNAL_IPP

// The journaled uploads' driver: carries out the steps of the sans-io core
// (sansio/upload_journal_core.hpp) with the client's operations, writing
// each record to the journal before the write it announces. One coroutine
// per operation, completed through co_spawn (never inline: it starts with a
// post).

#include <digital_delivery/upload_journal.hpp>

#include <digital_delivery/endpoints.hpp>
#include <digital_delivery/impl/crypto/sha256.hpp>
#include <digital_delivery/impl/upload/sansio/upload_journal_core.hpp>
#include <digital_delivery/upload.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace digital_delivery {

DIGITAL_DELIVERY_DECL std::string_view to_string(journal_outcome o) noexcept
{
    switch (o)
    {
    case journal_outcome::uploaded: return "uploaded";
    case journal_outcome::existing: return "existing";
    case journal_outcome::completed: return "completed";
    case journal_outcome::deleted: return "deleted";
    case journal_outcome::forgotten: return "forgotten";
    }
    return "unknown";
}

// ---- memory_upload_journal ---------------------------------------------------------

DIGITAL_DELIVERY_DECL std::vector<upload_record> memory_upload_journal::find(std::string_view path)
{
    std::vector<upload_record> out;
    for (auto it = records_.rbegin(); it != records_.rend(); ++it)
        if (it->path == path)
            out.push_back(*it);
    return out;
}

DIGITAL_DELIVERY_DECL std::vector<upload_record> memory_upload_journal::unfinished()
{
    std::vector<upload_record> out;
    for (const auto& r : records_)
        if (r.stage != upload_stage::committed)
            out.push_back(r);
    return out;
}

DIGITAL_DELIVERY_DECL std::int64_t memory_upload_journal::insert(const upload_record& r)
{
    records_.push_back(r);
    records_.back().id = next_++;
    return records_.back().id;
}

DIGITAL_DELIVERY_DECL void memory_upload_journal::update(const upload_record& r)
{
    for (auto& x : records_)
        if (x.id == r.id)
            x = r;
}

DIGITAL_DELIVERY_DECL void memory_upload_journal::erase(std::int64_t id)
{
    std::erase_if(records_, [id](const upload_record& r) { return r.id == id; });
}

namespace detail {

/// The file now: size and SHA-256 of its content (read once, 1 MiB at a time).
inline journal_file inspect_journal_file(const std::string& path)
{
    journal_file f;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return f;
    struct stat st{};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    {
        ::close(fd);
        return f;
    }
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
            return f;
        }
        if (n == 0)
            break;
        h.update(std::string_view(buf.data(), static_cast<std::size_t>(n)));
        total += static_cast<std::uint64_t>(n);
    }
    ::close(fd);
    f.exists = true;
    f.size = total;
    f.sha256 = sha256::to_hex(h.finish());
    return f;
}

inline std::int64_t unix_ms_now()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(clock::system_now().time_since_epoch()).count();
}

class journal_driver
{
public:
    journal_driver(client& c, upload_journal& j, journal_options opts, stored_request_options request, diagnostics* diag)
        : c_(c), j_(j), opts_(std::move(opts)), request_(std::move(request)), diag_(diag ? diag : &own_diag_)
    {
        // The driver confirms with a GET of its own (verify): no re-read.
        opts_.upload.reread_asset = false;
        opts_.upload.on_created = {};
    }

    using result = std::tuple<error_code, journaled_upload>;

    boost::asio::awaitable<result> upload_file(std::string path, upload_record meta)
    {
        journal_file f = inspect_journal_file(path);
        if (!f.exists)
            co_return fail(client_errc::source_unreadable, "cannot read " + path);
        meta.path = path;
        std::vector<upload_record> records;
        if (auto ec = journal_call([&] { records = j_.find(path); }))
            co_return fail(ec);
        // Other content of this path left unfinished: recovered first (an
        // orphan is deleted; a finished body is confirmed).
        for (auto& r : records)
            if (r.stage != upload_stage::committed && !same_content(r, f))
            {
                auto [ec, done] = co_await run(std::move(r), f, false);
                if (ec)
                    co_return result{ec, std::move(done)};
            }
        for (auto& r : records)
        {
            if (!same_content(r, f))
                continue;
            if (r.stage == upload_stage::committed)
            {
                if (opts_.force_new)
                    break;
                // Committed before: no write. Read it back for the caller.
                auto [ec, a] = co_await async_get_asset(c_, r.asset_id, request_.get(), *diag_,
                                                        boost::asio::as_tuple(boost::asio::use_awaitable));
                if (ec == api_errc::asset_not_found)
                {
                    // Deleted since: the journal forgets it; a new asset follows.
                    if (auto jec = journal_call([&] { j_.erase(r.id); }))
                        co_return fail(jec);
                    break;
                }
                if (ec)
                    co_return fail(ec);
                co_return result{error_code{}, journaled_upload{journal_outcome::existing, std::move(r), std::move(a)}};
            }
            co_return co_await run(std::move(r), f, false);
        }
        upload_record rec = creating_record(std::move(meta), f, unix_ms_now());
        if (auto ec = journal_call([&] { rec.id = j_.insert(rec); }))
            co_return fail(ec);
        co_return co_await run(std::move(rec), f, true);
    }

    boost::asio::awaitable<result> replace_file(std::string asset_id, std::string path, upload_record meta)
    {
        journal_file f = inspect_journal_file(path);
        if (!f.exists)
            co_return fail(client_errc::source_unreadable, "cannot read " + path);
        meta.path = path;
        std::vector<upload_record> records;
        if (auto ec = journal_call([&] { records = j_.find(path); }))
            co_return fail(ec);
        // An interrupted replace of this asset: finished if it holds this
        // content, else forgotten (the asset keeps its old body).
        for (auto& r : records)
            if (r.replace && r.asset_id == asset_id && r.stage != upload_stage::committed)
            {
                if (same_content(r, f))
                    co_return co_await run(std::move(r), f, false);
                if (auto jec = journal_call([&] { j_.erase(r.id); }))
                    co_return fail(jec);
            }
        upload_record rec = replacing_record(std::move(meta), f, unix_ms_now());
        rec.asset_id = asset_id;
        if (auto ec = journal_call([&] { rec.id = j_.insert(rec); }))
            co_return fail(ec);
        replacing_here_ = true;
        co_return co_await run(std::move(rec), f, false);
    }

    boost::asio::awaitable<result> recover(upload_record rec)
    {
        journal_file f = inspect_journal_file(rec.path);
        co_return co_await run(std::move(rec), f, false);
    }

private:
    result fail(error_code ec, std::string why = {})
    {
        if (!why.empty())
            diag_->client_message = std::move(why);
        return result{ec, journaled_upload{}};
    }

    template <class F>
    error_code journal_call(F f)
    {
        try
        {
            f();
            return {};
        }
        catch (const error_with_diagnostics& e)
        {
            *diag_ = e.get_diagnostics();
            return e.code();
        }
        catch (const boost::system::system_error& e)
        {
            diag_->client_message = std::string("upload journal: ") + e.what();
            return e.code();
        }
    }

    // The record's steps until it is committed, removed, or an error stops it.
    // `fresh`: the record was just announced (creating, no reconciliation needed).
    boost::asio::awaitable<result> run(upload_record rec, const journal_file& f, bool fresh)
    {
        bool reconciled = fresh, created_here = false, body_sent = false;
        for (;;)
        {
            switch (next_step(rec, f, reconciled))
            {
            case journal_step::reconcile:
            {
                auto [ec, found] = co_await find_created(rec);
                if (ec)
                    co_return fail(ec);
                reconciled = true;
                if (found)
                {
                    rec = with_stage(std::move(rec), upload_stage::created, found->id);
                    if (auto jec = journal_call([&] { j_.update(rec); }))
                        co_return fail(jec);
                }
                break;
            }
            case journal_step::create:
            {
                if (!fresh)
                {
                    rec = creating_record(std::move(rec), f, unix_ms_now());
                    if (auto ec = journal_call([&] { j_.update(rec); }))
                        co_return fail(ec);
                }
                fresh = false;
                auto ec = co_await create_and_upload(rec);
                if (ec)
                    co_return result{ec, journaled_upload{journal_outcome::uploaded, rec, {}}};
                created_here = body_sent = true;
                break;
            }
            case journal_step::upload_body:
            {
                error_code oec;
                auto src = file_source::open(rec.path, oec);
                if (!src)
                    co_return fail(oec, "cannot read " + rec.path);
                replace_asset_params p{.filename = rec.filename};
                if (rec.content_type)
                    p.content_type = *rec.content_type;
                auto [ec, a] = co_await async_replace_asset_body(c_, rec.asset_id, src, p, opts_.upload, request_.get(), *diag_,
                                                                 boost::asio::as_tuple(boost::asio::use_awaitable));
                if (ec == api_errc::asset_not_found && rec.replace)
                {
                    // The asset to replace is gone: nothing to finish.
                    if (auto jec = journal_call([&] { j_.erase(rec.id); }))
                        co_return fail(jec);
                    diag_->asset_id = rec.asset_id;
                    co_return result{ec, journaled_upload{journal_outcome::forgotten, rec, {}}};
                }
                if (ec == api_errc::asset_not_found)
                {
                    // Deleted by someone else: nothing exists; created anew.
                    rec = with_stage(std::move(rec), upload_stage::creating);
                    rec.asset_id.clear();
                    reconciled = true;
                    break;
                }
                if (ec)
                {
                    diag_->asset_id = rec.asset_id;
                    co_return result{ec, journaled_upload{journal_outcome::completed, rec, {}}};
                }
                rec = with_stage(std::move(rec), upload_stage::uploaded);
                if (auto jec = journal_call([&] { j_.update(rec); }))
                    co_return fail(jec);
                body_sent = true;
                break;
            }
            case journal_step::verify:
            {
                auto [ec, a] = co_await async_get_asset(c_, rec.asset_id, request_.get(), *diag_,
                                                        boost::asio::as_tuple(boost::asio::use_awaitable));
                if (ec == api_errc::asset_not_found)
                {
                    if (auto jec = journal_call([&] { j_.erase(rec.id); }))
                        co_return fail(jec);
                    co_return result{error_code{}, journaled_upload{journal_outcome::forgotten, rec, {}}};
                }
                if (ec)
                    co_return fail(ec);
                rec = with_stage(std::move(rec), upload_stage::committed);
                if (auto jec = journal_call([&] { j_.update(rec); }))
                    co_return fail(jec);
                co_return result{error_code{}, journaled_upload{created_here || replacing_here_ ? journal_outcome::uploaded : journal_outcome::completed,
                                                                std::move(rec), std::move(a)}};
            }
            case journal_step::delete_asset:
            {
                auto [ec] = co_await async_delete_asset(c_, rec.asset_id, request_.get(), *diag_,
                                                        boost::asio::as_tuple(boost::asio::use_awaitable));
                if (ec && ec != api_errc::asset_not_found)
                {
                    diag_->asset_id = rec.asset_id;
                    co_return fail(ec);
                }
                if (auto jec = journal_call([&] { j_.erase(rec.id); }))
                    co_return fail(jec);
                co_return result{error_code{}, journaled_upload{journal_outcome::deleted, std::move(rec), {}}};
            }
            case journal_step::forget:
                if (auto jec = journal_call([&] { j_.erase(rec.id); }))
                    co_return fail(jec);
                co_return result{error_code{}, journaled_upload{journal_outcome::forgotten, std::move(rec), {}}};
            case journal_step::done:
                co_return result{error_code{}, journaled_upload{journal_outcome::existing, std::move(rec), {}}};
            }
            (void)body_sent;
        }
    }

    // POST /assets + PUT, the record announced as "creating". The asset's id
    // is written ("created") before the PUT, by upload_options::on_created.
    boost::asio::awaitable<error_code> create_and_upload(upload_record& rec)
    {
        error_code oec;
        auto src = file_source::open(rec.path, oec);
        if (!src)
        {
            diag_->client_message = "cannot read " + rec.path;
            co_return oec;
        }
        upload_options uo = opts_.upload;
        uo.on_created = [this, &rec](const asset& a) -> error_code {
            upload_record next = with_stage(rec, upload_stage::created, a.id);
            if (auto ec = journal_call([&] { j_.update(next); }))
                return ec;
            rec = std::move(next);
            return {};
        };
        upload_asset_params p{.filename = rec.filename};
        if (rec.content_type)
            p.content_type = *rec.content_type;
        if (rec.name)
            p.name = *rec.name;
        p.watermark_asset = rec.watermark_asset;
        auto [ec, a] = co_await async_upload_asset(c_, src, p, uo, request_.get(), *diag_,
                                                   boost::asio::as_tuple(boost::asio::use_awaitable));
        if (!ec)
        {
            rec = with_stage(std::move(rec), upload_stage::uploaded, a.id);
            if (auto jec = journal_call([&] { j_.update(rec); }))
                co_return jec;
            co_return error_code{};
        }
        if (rec.stage == upload_stage::creating &&
            (is_request_not_sent(ec) || (diag_->http_status >= 400 && diag_->http_status < 500)))
        {
            // Refused, or never sent: no asset exists for the record.
            if (auto jec = journal_call([&] { j_.erase(rec.id); }))
                co_return jec;
        }
        // Otherwise the record stays: "created" (the next run finishes the
        // body) or "creating" with no answer (the next run reconciles).
        co_return ec;
    }

    // Lists the assets matching the record's filename; the one it made, if any.
    boost::asio::awaitable<std::tuple<error_code, std::optional<asset>>> find_created(const upload_record& rec)
    {
        std::vector<asset> listed;
        for (std::int32_t page = 1;; ++page)
        {
            asset_query q{.q = rec.filename, .page = page, .per_page = 250};
            auto [ec, l] = co_await async_list_assets(c_, q, request_.get(), *diag_,
                                                      boost::asio::as_tuple(boost::asio::use_awaitable));
            if (ec)
                co_return std::tuple<error_code, std::optional<asset>>{ec, std::nullopt};
            for (auto& a : l.assets)
                listed.push_back(std::move(a));
            if (l.assets.empty() || page >= l.pagination.total_pages || page >= 10000)
                break;
        }
        co_return std::tuple<error_code, std::optional<asset>>{
            error_code{}, reconcile_match(rec, listed, std::chrono::duration_cast<std::chrono::milliseconds>(opts_.reconcile_margin))};
    }

    client& c_;
    upload_journal& j_;
    journal_options opts_;
    stored_request_options request_;
    diagnostics own_diag_;
    diagnostics* diag_;
    bool replacing_here_ = false;  // replace_file announced a new replace: its end is "uploaded"
};

template <class Make>
void spawn_journal(client& c, diagnostics* diag, journal_handler handler, std::shared_ptr<journal_driver> d, Make make)
{
    auto ex = c.get_executor();
    // The caller's cancellation slot reaches the coroutine (co_spawn takes it
    // from the completion handler), and from there every operation it awaits.
    auto slot = boost::asio::get_associated_cancellation_slot(handler);
    boost::asio::co_spawn(
        ex,
        [d, make = std::move(make), ex]() mutable -> boost::asio::awaitable<journal_driver::result> {
            co_await boost::asio::post(ex, boost::asio::use_awaitable);  // never inline
            co_return co_await make(*d);
        },
        boost::asio::bind_cancellation_slot(slot, [d, diag, handler = std::move(handler)](std::exception_ptr e, journal_driver::result r) mutable {
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
                std::move(handler)(ec, journaled_upload{});
                return;
            }
            std::move(handler)(std::get<0>(r), std::move(std::get<1>(r)));
        })
    );
}

DIGITAL_DELIVERY_DECL void start_upload_file(
    client& c,
    upload_journal& j,
    std::string path,
    upload_record meta,
    journal_options opts,
    stored_request_options request,
    diagnostics* diag,
    journal_handler handler
)
{
    if (diag)
        diag->clear();
    auto d = std::make_shared<journal_driver>(c, j, std::move(opts), std::move(request), diag);
    spawn_journal(c, diag, std::move(handler), d,
                  [path = std::move(path), meta = std::move(meta)](journal_driver& dr) mutable {
                      return dr.upload_file(std::move(path), std::move(meta));
                  });
}

DIGITAL_DELIVERY_DECL void start_replace_file(
    client& c,
    upload_journal& j,
    std::string asset_id,
    std::string path,
    upload_record meta,
    journal_options opts,
    stored_request_options request,
    diagnostics* diag,
    journal_handler handler
)
{
    if (diag)
        diag->clear();
    auto d = std::make_shared<journal_driver>(c, j, std::move(opts), std::move(request), diag);
    spawn_journal(c, diag, std::move(handler), d,
                  [id = std::move(asset_id), path = std::move(path), meta = std::move(meta)](journal_driver& dr) mutable {
                      return dr.replace_file(std::move(id), std::move(path), std::move(meta));
                  });
}

DIGITAL_DELIVERY_DECL void start_recover_upload(
    client& c,
    upload_journal& j,
    upload_record rec,
    journal_options opts,
    stored_request_options request,
    diagnostics* diag,
    journal_handler handler
)
{
    if (diag)
        diag->clear();
    auto d = std::make_shared<journal_driver>(c, j, std::move(opts), std::move(request), diag);
    spawn_journal(c, diag, std::move(handler), d,
                  [rec = std::move(rec)](journal_driver& dr) mutable { return dr.recover(std::move(rec)); });
}

}  // namespace detail
}  // namespace digital_delivery

#endif
