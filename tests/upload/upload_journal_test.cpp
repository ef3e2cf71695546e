// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The upload journal: its sans-io state machine, and one test per crash point
// on the fake transport. A crash is a journal write that throws (the process
// would have died there: nothing after it is sent), or a request whose answer
// is lost; then a second run, with a new client, finishes the job. Each test
// checks the requests of both runs: never two creates of one asset, never an
// asset left without its body, nothing uploaded again once committed.
#include <digital_delivery/impl/upload/sansio/upload_journal_core.hpp>
#include <digital_delivery/sqlite_upload_journal.hpp>
#include <digital_delivery/testing/fake_transport.hpp>
#include <digital_delivery/upload_journal.hpp>

#include "run.hpp"
#include "temp_dir.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/system/system_error.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <unistd.h>

namespace dd = digital_delivery;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

constexpr const char* base_url = "https://dd.example.test/api/v1/external";
const std::string api = "/api/v1/external";
constexpr const char* put_url = "https://storage.example/bucket/a1?X-Amz-Signature=s1";
constexpr const char* put_target = "/bucket/a1?X-Amz-Signature=s1";

std::string now_iso(std::chrono::system_clock::duration shift = {})
{
    return dd::format_timestamp(std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now() + shift));
}

std::string asset_json(const std::string& id, std::int64_t size, const std::string& filename = "manual.pdf",
                       const std::string& created = now_iso())
{
    return R"({"id":")" + id + R"(","type":"internal","name":null,"filename":")" + filename +
           R"(","external_url":null,"content_type":"application/octet-stream","byte_size":)" + std::to_string(size) +
           R"(,"watermark_asset":false,"autogenerate_licence_key":false,"created_at":")" + created + R"(","updated_at":")" +
           created + R"("})";
}

std::string with_upload(const std::string& id, std::int64_t size)
{
    return R"({"asset":)" + asset_json(id, size) + R"(,"upload":{"method":"PUT","url":")" + put_url +
           R"(","headers":{},"expires_at":")" + now_iso(1h) + R"("}})";
}

std::string listing(const std::vector<std::string>& assets)
{
    std::string items;
    for (const auto& a : assets)
        items += (items.empty() ? "" : ",") + a;
    return R"({"assets":[)" + items + R"(],"pagination":{"current_page":1,"per_page":250,"total_count":)" +
           std::to_string(assets.size()) + R"(,"total_pages":1}})";
}

// A journal that "dies" at one write: it throws instead of (or right after)
// writing, so that nothing after that point is sent.
class crashing_journal final : public dd::upload_journal
{
public:
    explicit crashing_journal(dd::upload_journal& inner) : inner_(inner) {}
    // Crash at the write that moves a record to `stage` (insert: creating).
    void crash_at(dd::upload_stage stage, bool after_writing)
    {
        stage_ = stage;
        after_ = after_writing;
        armed_ = true;
    }
    std::vector<dd::upload_record> find(std::string_view p) override { return inner_.find(p); }
    std::vector<dd::upload_record> unfinished() override { return inner_.unfinished(); }
    std::int64_t insert(const dd::upload_record& r) override
    {
        maybe_crash(r, false);
        auto id = inner_.insert(r);
        maybe_crash(r, true);
        return id;
    }
    void update(const dd::upload_record& r) override
    {
        maybe_crash(r, false);
        inner_.update(r);
        maybe_crash(r, true);
    }
    void erase(std::int64_t id) override { inner_.erase(id); }

private:
    void maybe_crash(const dd::upload_record& r, bool after)
    {
        if (armed_ && r.stage == stage_ && after == after_)
        {
            armed_ = false;
            throw boost::system::system_error(make_error_code(boost::system::errc::interrupted), "killed");
        }
    }
    dd::upload_journal& inner_;
    dd::upload_stage stage_{};
    bool after_ = false;
    bool armed_ = false;
};

class journal_test : public ::testing::Test
{
protected:
    dd_test::temp_dir tmp{"dd-journal"};
    std::string dir = tmp.path;
    std::string file = dir + "/manual.pdf";
    std::string body = "the manual's body";
    dd::memory_upload_journal journal;
    dd::diagnostics diag;

    journal_test() { write(body); }

    void write(const std::string& content) { std::ofstream(file, std::ios::binary | std::ios::trunc) << content; }
    std::int64_t size() const { return static_cast<std::int64_t>(body.size()); }

    // One run: a new io_context, fake transport and client (a new process).
    struct run_result
    {
        dd::error_code ec;
        dd::journaled_upload r;
        std::vector<dd::http_request> sent;
        bool done = false;
    };
    template <class Script, class Start>
    run_result run(Script script, Start start)
    {
        asio::io_context ioc;
        auto fake = std::make_shared<dd::testing::fake_transport>(ioc.get_executor());
        dd::client client{fake, dd::client_params{.base_url = base_url, .api_key = "k"}};
        script(*fake);
        run_result out;
        start(client, [&](dd::error_code ec, dd::journaled_upload r) {
            out.ec = ec;
            out.r = std::move(r);
            out.done = true;
        });
        dd_test::run(ioc);
        out.sent = fake->requests();
        EXPECT_TRUE(fake->done()) << (fake->mismatches().empty() ? "not every answer was used" : fake->mismatches()[0]);
        return out;
    }
    dd::journal_options opts() const
    {
        dd::journal_options o;
        o.upload.max_attempts = 1;
        o.upload.retry_backoff = 1ms;
        return o;
    }
    template <class Script>
    run_result upload(Script script, dd::upload_journal& j)
    {
        return run(script, [&](dd::client& c, auto h) {
            dd::async_upload_file(c, j, file, {.filename = "manual.pdf"}, opts(), diag, std::move(h));
        });
    }
    template <class Script>
    run_result upload(Script script) { return upload(script, journal); }

    static int count(const std::vector<dd::http_request>& sent, dd::http_method m, const std::string& prefix)
    {
        int n = 0;
        for (const auto& r : sent)
            if (r.method == m && dd::testing::fake_transport::target_of(r.url).substr(0, prefix.size()) == prefix)
                ++n;
        return n;
    }
    // The complete, uninterrupted answers after the create.
    void script_body(dd::testing::fake_transport& f, bool replace)
    {
        if (replace)
            f.expect(dd::http_method::post, api + "/assets/a1/replace").respond(200, with_upload("a1", size()));
        f.expect(dd::http_method::put, put_target).respond(200);
        f.expect(dd::http_method::get, api + "/assets/a1").respond(200, R"({"asset":)" + asset_json("a1", size()) + "}");
    }
    void expect_committed()
    {
        auto left = journal.find(file);
        ASSERT_EQ(left.size(), 1u);
        EXPECT_EQ(left[0].stage, dd::upload_stage::committed);
        EXPECT_EQ(left[0].asset_id, "a1");
    }
};

}  // namespace

// ---- the state machine ---------------------------------------------------------------

TEST(upload_journal_core, next_steps)
{
    using dd::detail::journal_step;
    dd::upload_record r{.size = 3, .sha256 = "abc"};
    const dd::detail::journal_file same{true, 3, "abc"}, changed{true, 3, "abd"}, gone{};
    r.stage = dd::upload_stage::creating;
    EXPECT_EQ(dd::detail::next_step(r, same), journal_step::reconcile);
    EXPECT_EQ(dd::detail::next_step(r, same, true), journal_step::create);
    EXPECT_EQ(dd::detail::next_step(r, gone, true), journal_step::forget);
    EXPECT_EQ(dd::detail::next_step(r, changed, true), journal_step::forget);
    r.stage = dd::upload_stage::created;
    EXPECT_EQ(dd::detail::next_step(r, same), journal_step::upload_body);
    EXPECT_EQ(dd::detail::next_step(r, gone), journal_step::delete_asset);
    EXPECT_EQ(dd::detail::next_step(r, changed), journal_step::delete_asset);
    r.stage = dd::upload_stage::uploaded;
    EXPECT_EQ(dd::detail::next_step(r, gone), journal_step::verify);
    r.stage = dd::upload_stage::committed;
    EXPECT_EQ(dd::detail::next_step(r, changed), journal_step::done);
}

TEST(upload_journal_core, reconcile_takes_the_earliest_matching_asset_after_the_intent)
{
    const auto intent = std::chrono::sys_days(std::chrono::year(2026) / 12 / 5) + 10h;
    dd::upload_record r{.size = 3, .filename = "m.pdf", .name = std::string("M")};
    r.intent_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(intent.time_since_epoch()).count();
    auto make = [&](std::string id, std::chrono::minutes at, std::int64_t size = 3, std::string filename = "m.pdf") {
        dd::asset a;
        a.id = std::move(id);
        a.type = dd::asset_type::internal;
        a.filename = std::move(filename);
        a.name = "M";
        a.byte_size = size;
        a.created_at = std::chrono::time_point_cast<std::chrono::microseconds>(intent + at);
        return a;
    };
    std::vector<dd::asset> listed{make("old", -10min), make("big", 1min, 4), make("other", 1min, 3, "m2.pdf"),
                                  make("later", 3min), make("mine", -1min)};
    auto m = dd::detail::reconcile_match(r, listed, 5min);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->id, "mine");  // within the margin before the intent; "old" is outside it
    EXPECT_FALSE(dd::detail::reconcile_match(r, std::span(listed).first(3), 5min));
}

// ---- crash points ----------------------------------------------------------------------

TEST_F(journal_test, uninterrupted_then_a_second_run_sends_no_write)
{
    auto first = upload([&](auto& f) {
        f.expect(dd::http_method::post, api + "/assets").respond(201, with_upload("a1", size()));
        script_body(f, false);
    });
    ASSERT_FALSE(first.ec) << diag.to_string();
    EXPECT_EQ(first.r.outcome, dd::journal_outcome::uploaded);
    expect_committed();
    auto second = upload([&](auto& f) {
        f.expect(dd::http_method::get, api + "/assets/a1").respond(200, R"({"asset":)" + asset_json("a1", size()) + "}");
    });
    ASSERT_FALSE(second.ec) << diag.to_string();
    EXPECT_EQ(second.r.outcome, dd::journal_outcome::existing);
    EXPECT_EQ(second.r.result.id, "a1");
    EXPECT_EQ(second.sent.size(), 1u);  // the GET: no POST, no PUT
}

TEST_F(journal_test, force_new_creates_a_second_asset)
{
    upload([&](auto& f) {
        f.expect(dd::http_method::post, api + "/assets").respond(201, with_upload("a1", size()));
        script_body(f, false);
    });
    auto again = run(
        [&](auto& f) {
            f.expect(dd::http_method::post, api + "/assets").respond(201, with_upload("a1", size()));
            script_body(f, false);
        },
        [&](dd::client& c, auto h) {
            auto o = opts();
            o.force_new = true;
            dd::async_upload_file(c, journal, file, {.filename = "manual.pdf"}, o, diag, std::move(h));
        });
    EXPECT_FALSE(again.ec);
    EXPECT_EQ(again.r.outcome, dd::journal_outcome::uploaded);
    EXPECT_EQ(count(again.sent, dd::http_method::post, api + "/assets"), 1);
}

// Killed after "creating" was written, before POST /assets left: the next run
// lists (q = filename), finds nothing, and creates.
TEST_F(journal_test, crash_before_the_create)
{
    crashing_journal crashing(journal);
    crashing.crash_at(dd::upload_stage::creating, true);
    auto first = upload([](auto&) {}, crashing);
    EXPECT_EQ(first.ec, boost::system::errc::interrupted);
    EXPECT_TRUE(first.sent.empty());
    auto second = upload([&](auto& f) {
        f.expect_any().respond(200, listing({}));
        f.expect(dd::http_method::post, api + "/assets").respond(201, with_upload("a1", size()));
        script_body(f, false);
    });
    ASSERT_FALSE(second.ec) << diag.to_string();
    EXPECT_EQ(dd::testing::fake_transport::target_of(second.sent[0].url).substr(0, api.size() + 20),
              api + "/assets?q=manual.pdf");
    expect_committed();
}

// The create happened, its answer was lost (or the process died waiting for
// it): the listing finds the asset, whose body is uploaded through a fresh URL.
// Before the journal: a second asset.
TEST_F(journal_test, crash_during_the_create_that_happened)
{
    auto first = upload([&](auto& f) {
        f.expect(dd::http_method::post, api + "/assets").fail(dd::client_errc::connection_closed);
    });
    EXPECT_EQ(first.ec, dd::client_errc::connection_closed);
    ASSERT_EQ(journal.unfinished().size(), 1u);
    EXPECT_EQ(journal.unfinished()[0].stage, dd::upload_stage::creating);
    auto second = upload([&](auto& f) {
        f.expect_any().respond(200, listing({asset_json("a1", size()), asset_json("a0", size(), "manual.pdf", now_iso(-1h))}));
        script_body(f, true);
    });
    ASSERT_FALSE(second.ec) << diag.to_string();
    EXPECT_EQ(second.r.outcome, dd::journal_outcome::completed);
    EXPECT_EQ(count(second.sent, dd::http_method::post, api + "/assets"), 1);  // the replace, no create
    expect_committed();
}

// The create did not happen (lost before the server): nothing listed, created.
TEST_F(journal_test, crash_during_the_create_that_did_not_happen)
{
    upload([&](auto& f) { f.expect(dd::http_method::post, api + "/assets").fail(dd::client_errc::request_timeout); });
    auto second = upload([&](auto& f) {
        f.expect_any().respond(200, listing({asset_json("a0", size(), "manual.pdf", now_iso(-1h))}));  // older: not ours
        f.expect(dd::http_method::post, api + "/assets").respond(201, with_upload("a1", size()));
        script_body(f, false);
    });
    ASSERT_FALSE(second.ec) << diag.to_string();
    EXPECT_EQ(second.r.outcome, dd::journal_outcome::uploaded);
    expect_committed();
}

// A create refused by the API: nothing exists, the record is gone.
TEST_F(journal_test, a_refused_create_leaves_no_record)
{
    auto first = upload([&](auto& f) {
        f.expect(dd::http_method::post, api + "/assets").respond(422, R"({"errors":["Storage quota exceeded"]})");
    });
    EXPECT_TRUE(first.ec);
    EXPECT_TRUE(journal.records().empty());
}

// Killed between the create's answer and the PUT ("created" written): the
// next run uploads the body to the same asset through a fresh URL.
TEST_F(journal_test, crash_between_the_create_and_the_put)
{
    crashing_journal crashing(journal);
    crashing.crash_at(dd::upload_stage::created, true);
    auto first = upload([&](auto& f) { f.expect(dd::http_method::post, api + "/assets").respond(201, with_upload("a1", size())); },
                        crashing);
    EXPECT_EQ(first.ec, boost::system::errc::interrupted);
    EXPECT_EQ(diag.asset_id, "a1");
    EXPECT_EQ(count(first.sent, dd::http_method::put, "/"), 0);
    auto second = upload([&](auto& f) { script_body(f, true); });
    ASSERT_FALSE(second.ec) << diag.to_string();
    EXPECT_EQ(second.r.outcome, dd::journal_outcome::completed);
    expect_committed();
}

// Killed after the create's answer, before "created" was written: the record
// says "creating"; the listing finds the asset. Never a second create.
TEST_F(journal_test, crash_before_created_is_written)
{
    crashing_journal crashing(journal);
    crashing.crash_at(dd::upload_stage::created, false);
    upload([&](auto& f) { f.expect(dd::http_method::post, api + "/assets").respond(201, with_upload("a1", size())); }, crashing);
    ASSERT_EQ(journal.unfinished().size(), 1u);
    EXPECT_EQ(journal.unfinished()[0].stage, dd::upload_stage::creating);
    auto second = upload([&](auto& f) {
        f.expect_any().respond(200, listing({asset_json("a1", size())}));
        script_body(f, true);
    });
    ASSERT_FALSE(second.ec) << diag.to_string();
    EXPECT_EQ(count(second.sent, dd::http_method::post, api + "/assets"), 1);  // the replace
    expect_committed();
}

// Killed during the PUT: the next run finishes the body on the same asset.
TEST_F(journal_test, crash_during_the_put)
{
    auto first = upload([&](auto& f) {
        f.expect(dd::http_method::post, api + "/assets").respond(201, with_upload("a1", size()));
        f.expect(dd::http_method::put, put_target).fail(asio::error::connection_reset);
    });
    EXPECT_TRUE(first.ec);
    EXPECT_EQ(diag.asset_id, "a1");
    auto second = upload([&](auto& f) { script_body(f, true); });
    ASSERT_FALSE(second.ec) << diag.to_string();
    EXPECT_EQ(second.r.outcome, dd::journal_outcome::completed);
    expect_committed();
}

// Killed after the PUT, before "uploaded" was written: the body is sent again
// to the same asset (the storage takes the same bytes twice), never a new asset.
TEST_F(journal_test, crash_after_the_put_before_uploaded_is_written)
{
    crashing_journal crashing(journal);
    crashing.crash_at(dd::upload_stage::uploaded, false);
    upload([&](auto& f) {
        f.expect(dd::http_method::post, api + "/assets").respond(201, with_upload("a1", size()));
        f.expect(dd::http_method::put, put_target).respond(200);
    }, crashing);
    EXPECT_EQ(journal.unfinished()[0].stage, dd::upload_stage::created);
    auto second = upload([&](auto& f) { script_body(f, true); });
    ASSERT_FALSE(second.ec) << diag.to_string();
    expect_committed();
}

// Killed after "uploaded", before the commit: the next run only reads the asset.
TEST_F(journal_test, crash_before_the_commit)
{
    crashing_journal crashing(journal);
    crashing.crash_at(dd::upload_stage::uploaded, true);
    upload([&](auto& f) {
        f.expect(dd::http_method::post, api + "/assets").respond(201, with_upload("a1", size()));
        f.expect(dd::http_method::put, put_target).respond(200);
    }, crashing);
    EXPECT_EQ(journal.unfinished()[0].stage, dd::upload_stage::uploaded);
    auto second = upload([&](auto& f) {
        f.expect(dd::http_method::get, api + "/assets/a1").respond(200, R"({"asset":)" + asset_json("a1", size()) + "}");
    });
    ASSERT_FALSE(second.ec) << diag.to_string();
    EXPECT_EQ(second.r.outcome, dd::journal_outcome::completed);
    EXPECT_EQ(second.sent.size(), 1u);
    expect_committed();
}

// Killed between create and PUT, then the file was deleted: recovery deletes
// the asset (no asset without its file) and forgets the record.
TEST_F(journal_test, recover_deletes_the_asset_of_a_file_that_is_gone)
{
    crashing_journal crashing(journal);
    crashing.crash_at(dd::upload_stage::created, true);
    upload([&](auto& f) { f.expect(dd::http_method::post, api + "/assets").respond(201, with_upload("a1", size())); }, crashing);
    std::filesystem::remove(file);
    auto rec = journal.unfinished().at(0);
    auto second = run([&](auto& f) { f.expect(dd::http_method::delete_, api + "/assets/a1").respond(204); },
                      [&](dd::client& c, auto h) { dd::async_recover_upload(c, journal, rec, opts(), diag, std::move(h)); });
    ASSERT_FALSE(second.ec) << diag.to_string();
    EXPECT_EQ(second.r.outcome, dd::journal_outcome::deleted);
    EXPECT_TRUE(journal.records().empty());
}

// The same with the file changed: the next upload deletes the old asset, then
// creates one for the new content.
TEST_F(journal_test, a_changed_file_deletes_the_orphan_then_uploads_anew)
{
    crashing_journal crashing(journal);
    crashing.crash_at(dd::upload_stage::created, true);
    upload([&](auto& f) { f.expect(dd::http_method::post, api + "/assets").respond(201, with_upload("a0", size())); }, crashing);
    write(body = "another body, longer");
    auto second = upload([&](auto& f) {
        f.expect(dd::http_method::delete_, api + "/assets/a0").respond(204);
        f.expect(dd::http_method::post, api + "/assets").respond(201, with_upload("a1", size()));
        script_body(f, false);
    });
    ASSERT_FALSE(second.ec) << diag.to_string();
    expect_committed();
}

// A "creating" record whose file is gone, and that the listing does not find:
// forgotten without a write.
TEST_F(journal_test, recover_forgets_a_create_that_never_happened)
{
    upload([&](auto& f) { f.expect(dd::http_method::post, api + "/assets").fail(dd::client_errc::connection_closed); });
    std::filesystem::remove(file);
    auto rec = journal.unfinished().at(0);
    auto second = run([&](auto& f) { f.expect_any().respond(200, listing({})); },
                      [&](dd::client& c, auto h) { dd::async_recover_upload(c, journal, rec, opts(), diag, std::move(h)); });
    ASSERT_FALSE(second.ec) << diag.to_string();
    EXPECT_EQ(second.r.outcome, dd::journal_outcome::forgotten);
    EXPECT_TRUE(journal.records().empty());
}

// The SQLite journal keeps the records across "processes" (a new object on
// the same file) and refuses a row it does not accept.
TEST_F(journal_test, the_sqlite_journal_survives_a_reopen)
{
    const std::string db = dir + "/state.db";
    {
        dd::sqlite_upload_journal j(db);
        crashing_journal crashing(j);
        crashing.crash_at(dd::upload_stage::created, true);
        upload([&](auto& f) { f.expect(dd::http_method::post, api + "/assets").respond(201, with_upload("a1", size())); },
               crashing);
    }
    dd::sqlite_upload_journal j(db);
    auto left = j.unfinished();
    ASSERT_EQ(left.size(), 1u);
    EXPECT_EQ(left[0].stage, dd::upload_stage::created);
    EXPECT_EQ(left[0].asset_id, "a1");
    EXPECT_EQ(left[0].size, body.size());
    EXPECT_EQ(left[0].sha256.size(), 64u);
    auto second = upload([&](auto& f) { script_body(f, true); }, j);
    ASSERT_FALSE(second.ec) << diag.to_string();
    EXPECT_TRUE(j.unfinished().empty());
    ASSERT_EQ(j.find(file).size(), 1u);
    EXPECT_EQ(j.find(file)[0].stage, dd::upload_stage::committed);
    j.state().exec("UPDATE dd_upload_journal SET stage = 2, asset_id = ''");
    EXPECT_THROW(j.unfinished(), dd::error_with_diagnostics);
}
