// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// ddctl run as a process against the program's one sandbox (a store of its
// own per test): every subcommand, its JSON compared with the API's own
// answer, the exit code of each failure class, --all across pages, --dry-run
// sending nothing, confirmation, Ctrl-C during an upload, a loop of
// invocations on one key without a 429. Every run's stdout and stderr are
// searched for the API key (run_ddctl). Outcomes only, never elapsed time.
#include "errors.hpp"  // ddctl's exit codes (tools/ddctl/src)
#include "kill_relay.hpp"
#include "sandbox_process.hpp"
#include "server_process.hpp"

#include <digital_delivery/version.hpp>

#include <array>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pty.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace json = boost::json;
namespace fs = std::filesystem;
using dd_test::sandbox_process;

namespace {

// ---- a listening socket: a port nobody else takes -----------------------------------

struct listener
{
    int fd = -1;
    int port = 0;
    listener() { fd = dd_test::listen_on_loopback(port, 16); }
    ~listener() { close(); }
    void close()
    {
        if (fd >= 0)
            ::close(fd);
        fd = -1;
    }
    /// True when a connection is waiting to be accepted.
    bool connection_pending() const
    {
        pollfd p{fd, POLLIN, 0};
        return ::poll(&p, 1, 0) > 0;
    }
};

/// Reads from `c` into `data` until it holds `until` (or the peer stops
/// sending); returns whether it does.
bool read_until(int c, std::string& data, const std::function<bool()>& until)
{
    char buf[8192];
    while (!until())
    {
        const ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0)
            return false;
        data.append(buf, static_cast<std::size_t>(n));
    }
    return true;
}

/// Accepts the connections of `in` until it is shut down, handing each to `f`.
template <class F>
void accept_each(const listener& in, F f)
{
    for (;;)
    {
        const int c = ::accept4(in.fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0)
            return;
        f(c);
    }
}

// ---- a stand-in API: fixed answers, byte for byte ----------------------------------------
//
// Answers each request with the body set for its path (without the query),
// or 404; one request per connection. Serves until destroyed.
class canned_api
{
public:
    explicit canned_api(std::map<std::string, std::string> bodies) : bodies_(std::move(bodies))
    {
        thread_ = std::thread([this] { serve(); });
    }
    ~canned_api()
    {
        ::shutdown(in_.fd, SHUT_RDWR);  // accept() returns
        thread_.join();
    }
    std::string base_url() const { return "http://127.0.0.1:" + std::to_string(in_.port) + "/api/v1/external"; }

private:
    void serve()
    {
        accept_each(in_, [this](int c) {
            std::string req;
            read_until(c, req, [&] { return req.find("\r\n\r\n") != std::string::npos; });
            const auto sp = req.find(' '), end = req.find_first_of(" ?", sp + 1);
            const std::string path = sp == std::string::npos ? std::string() : req.substr(sp + 1, end - sp - 1);
            const auto it = bodies_.find(path.substr(std::min(path.size(), std::string("/api/v1/external").size())));
            const std::string body = it == bodies_.end() ? R"({"error":"Not found"})" : it->second;
            const std::string answer = std::string(it == bodies_.end() ? "HTTP/1.1 404 Not Found" : "HTTP/1.1 200 OK") +
                                       "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
                                       std::to_string(body.size()) + "\r\n\r\n" + body;
            (void)::send(c, answer.data(), answer.size(), MSG_NOSIGNAL);
            ::close(c);
        });
    }

    listener in_;
    std::map<std::string, std::string> bodies_;
    std::thread thread_;
};

/// The program's sandbox, its storage behind a slow relay (kill_relay.hpp,
/// never armed: it only forwards the client's bytes at about 16 MiB/s, so that
/// an upload of 256 MiB is still running when a test interrupts it). The
/// sandbox is started with --public-url pointing at the relay, so presigned
/// upload URLs go through it.
sandbox_process& sandbox()
{
    struct relayed
    {
        dd_test::kill_plan never;
        std::unique_ptr<dd_test::kill_relay> relay = std::make_unique<dd_test::kill_relay>(true, never, std::chrono::milliseconds(4));
        std::unique_ptr<sandbox_process> sb;
        relayed()
        {
            sb = std::make_unique<sandbox_process>(std::vector<std::string>{
                "--no-rate-limit", "--seed-orders", "1", "--public-url", "http://127.0.0.1:" + std::to_string(relay->port())});
            relay->set_target(dd_test::port_of_origin(sb->origin()));
        }
        ~relayed()
        {
            relay.reset();  // its connections closed first: the sandbox then stops at once
            sb.reset();
        }
    };
    static relayed r;
    return *r.sb;
}

// ---- running ddctl ---------------------------------------------------------------------

struct run_result
{
    int status = -1;  ///< exit status, or 128 + signal
    std::string out, err;
    json::value json() const { return json::parse(out); }
    /// stdout as JSON lines.
    std::vector<json::value> lines() const
    {
        std::vector<json::value> r;
        std::istringstream in(out);
        for (std::string l; std::getline(in, l);)
            if (!l.empty())
                r.push_back(json::parse(l));
        return r;
    }
};

std::string slurp(const fs::path& p)
{
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// A temporary directory of the test: HOME and XDG_CONFIG_HOME of ddctl.
struct temp_dir
{
    fs::path path;
    temp_dir()
    {
        std::string t = (fs::temp_directory_path() / "ddctl-test-XXXXXX").string();
        if (!::mkdtemp(t.data()))
            throw std::runtime_error("mkdtemp");
        path = t;
    }
    ~temp_dir() { fs::remove_all(path); }
};

/// A store of the program's sandbox, with a key of its own, and ddctl configured for it.
struct cli_env
{
    sandbox_process::store store;
    temp_dir home;
    std::map<std::string, std::string> env;

    explicit cli_env(std::vector<std::string> options = {"--no-rate-limit", "--seed-orders", "3"})
    {
        static int n = 0;
        const std::string key = "ddctl-secret-" + std::to_string(::getpid()) + "-" + std::to_string(++n) + "-Zq7";
        store = sandbox().create_store(std::move(options), key);
        env = {{"DIGITAL_DELIVERY_BASE_URL", store.base_url},
               {"DIGITAL_DELIVERY_API_KEY", store.api_key},
               {"HOME", home.path.string()},
               {"XDG_CONFIG_HOME", home.path.string()},
               {"PATH", "/usr/bin:/bin"}};
    }
    ~cli_env()
    {
        try
        {
            sandbox().delete_store(store.id);
        }
        catch (...)
        {
        }
    }

    /// Starts ddctl with stdout and stderr to files and stdin from /dev/null
    /// (or the file `input`); with `terminal` (a pty's slave side), stdin and
    /// stderr on that terminal.
    pid_t spawn(const std::vector<std::string>& args, const fs::path& out, const fs::path& err,
                const std::map<std::string, std::string>& extra_env = {}, int terminal = -1,
                const fs::path& input = "/dev/null") const
    {
        auto all = env;
        for (const auto& [k, v] : extra_env)
            all[k] = v;
        return dd_test::spawn_process(DDCTL_EXE, args, all, out, err, input, terminal);
    }

    static int wait(pid_t pid) { return dd_test::wait_process(pid); }

    /// The key never appears in what ddctl writes.
    void expect_no_key(const run_result& r) const
    {
        EXPECT_EQ(r.out.find(store.api_key), std::string::npos) << "the API key on stdout";
        EXPECT_EQ(r.err.find(store.api_key), std::string::npos) << "the API key on stderr";
    }

    run_result run(const std::vector<std::string>& args, const std::map<std::string, std::string>& extra_env = {}) const
    {
        return run_with_input(args, std::nullopt, extra_env);
    }

    /// ddctl with `input` on its stdin (none: /dev/null).
    run_result run_with_input(const std::vector<std::string>& args, const std::optional<std::string>& input,
                              const std::map<std::string, std::string>& extra_env = {}) const
    {
        const fs::path out = home.path / "stdout", err = home.path / "stderr", in = home.path / "stdin";
        if (input)
            std::ofstream(in, std::ios::binary) << *input;
        run_result r;
        r.status = wait(spawn(args, out, err, extra_env, -1, input ? in : fs::path("/dev/null")));
        r.out = slurp(out);
        r.err = slurp(err);
        expect_no_key(r);
        return r;
    }

    /// The API's own answer, straight from the sandbox (no ddctl, no library).
    json::value api(const std::string& method, const std::string& path, const std::string& body = {}) const
    {
        auto r = sandbox().request(method, "/api/v1/external" + path, body, store.api_key);
        return r.body.empty() ? json::value() : json::parse(r.body);
    }
    json::value control(const std::string& method, const std::string& path, const std::string& body = {}) const
    {
        auto r = sandbox().request(method, path, body, store.api_key);
        return r.body.empty() ? json::value() : json::parse(r.body);
    }

    std::string purchase(std::int64_t product) const
    {
        return std::string(control("POST", "/sandbox/purchases",
                                   R"({"store_product_id": )" + std::to_string(product) + R"(, "email": "ada@example.com"})")
                               .at("order").at("id").as_string());
    }
};

std::string id_of(const json::value& v) { return std::string(v.at("id").as_string()); }

/// Everything a terminal shows, read until it is drained: with every end of
/// the slave closed, read() returns what is left in chunks (the echo and the
/// prompt may come apart), then fails with EIO. Closes `master`.
std::string drain_terminal(int master, std::string screen = {})
{
    std::array<char, 4096> chunk{};
    for (ssize_t n; (n = ::read(master, chunk.data(), chunk.size())) > 0;)
        screen.append(chunk.data(), static_cast<std::size_t>(n));
    ::close(master);
    return screen;
}

#define EXPECT_OK(r) EXPECT_EQ((r).status, 0) << (r).err

}  // namespace

// ---- assets ---------------------------------------------------------------------------------

TEST(cli_assets, create_get_list_update_delete_print_what_the_api_sent)
{
    cli_env e;
    auto created = e.run({"assets", "create", "--type", "licence", "--name", "Pro key", "--autogenerate-licence-key", "true", "-o", "json"});
    EXPECT_OK(created);
    const std::string id = id_of(created.json().at("asset"));

    auto got = e.run({"assets", "get", id, "--output", "json"});
    EXPECT_OK(got);
    EXPECT_EQ(got.json(), e.api("GET", "/assets/" + id).at("asset"));
    EXPECT_EQ(created.json().at("asset"), got.json());

    auto updated = e.run({"assets", "update", id, "--name", "Pro key 2", "-o", "json"});
    EXPECT_OK(updated);
    EXPECT_EQ(updated.json().at("name"), "Pro key 2");
    EXPECT_EQ(updated.json(), e.api("GET", "/assets/" + id).at("asset"));

    auto listed = e.run({"assets", "list", "-o", "json"});
    EXPECT_OK(listed);
    const auto lines = listed.lines();
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0], e.api("GET", "/assets").at("assets").at(0));

    auto table = e.run({"assets", "list"});
    EXPECT_OK(table);
    EXPECT_NE(table.out.find("Pro key 2"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("ID"), std::string::npos) << table.out;

    // a deletion asks first: without a terminal, --yes is needed
    auto refused = e.run({"assets", "delete", id});
    EXPECT_EQ(refused.status, 2);
    EXPECT_NE(refused.err.find("deletes asset " + id + ": not confirmed (no terminal to ask): pass --yes"), std::string::npos)
        << refused.err;
    EXPECT_OK(e.run({"assets", "get", id}));
    EXPECT_OK(e.run({"assets", "delete", id, "--yes"}));
    EXPECT_EQ(e.run({"assets", "get", id}).status, 3);
}

TEST(cli_assets, an_empty_list_says_so)
{
    cli_env e;
    for (const auto& args : {std::vector<std::string>{"assets", "list"}, {"assets", "list", "--all"}})
    {
        auto r = e.run(args);
        EXPECT_OK(r);
        EXPECT_EQ(r.out, "no assets\n");
        auto j = e.run({args[0], args[1], args.size() > 2 ? args[2] : "--page=1", "-o", "json"});
        EXPECT_OK(j);
        EXPECT_EQ(j.out, "");  // JSON lines: none
    }
    auto products = e.run({"products", "list"});
    EXPECT_EQ(products.out, "no digital products\n");
    auto beyond = e.run({"orders", "list", "--page", "9"});  // three orders, one page
    EXPECT_OK(beyond);
    EXPECT_EQ(beyond.out, "no orders on page 9 (3 in all, 1 page)\n");
}

TEST(cli_assets, upload_and_replace_a_file)
{
    cli_env e;
    const fs::path file = e.home.path / "manual.pdf";
    std::ofstream(file) << std::string(300000, 'x');
    auto up = e.run({"assets", "upload", file.string(), "--content-type", "application/pdf", "-o", "json"});
    EXPECT_OK(up);
    const std::string id = id_of(up.json());
    EXPECT_EQ(up.json(), e.api("GET", "/assets/" + id).at("asset"));
    EXPECT_EQ(up.json().at("byte_size"), 300000);
    EXPECT_NE(up.err.find("upload 100%"), std::string::npos) << up.err;  // plain progress lines off a terminal
    // The same file again: the upload journal reports the asset, sends no write.
    auto again = e.run({"assets", "upload", file.string(), "--no-progress", "-o", "json"});
    EXPECT_OK(again);
    EXPECT_EQ(id_of(again.json()), id);
    EXPECT_NE(again.err.find("was uploaded before (same content) as asset " + id + ": nothing sent"), std::string::npos)
        << again.err;
    EXPECT_EQ(e.api("GET", "/assets").at("assets").as_array().size(), 1u);
    auto quiet = e.run({"assets", "upload", file.string(), "--no-progress", "--new-asset"});
    EXPECT_OK(quiet);
    EXPECT_EQ(quiet.err, "");
    EXPECT_EQ(e.api("GET", "/assets").at("assets").as_array().size(), 2u);

    const fs::path v2 = e.home.path / "manual-v2.pdf";
    std::ofstream(v2) << std::string(1000, 'y');
    auto rep = e.run({"assets", "replace", id, v2.string(), "-o", "json"});
    EXPECT_OK(rep);
    EXPECT_EQ(rep.json().at("byte_size"), 1000);
    EXPECT_EQ(rep.json().at("filename"), "manual-v2.pdf");

    // without FILE: the endpoint itself, which answers with an upload handle
    auto handle = e.run({"assets", "replace", id, "--filename", "v3.pdf", "--byte-size", "10", "-o", "json"});
    EXPECT_OK(handle);
    EXPECT_TRUE(handle.json().at("upload").is_object()) << handle.out;
}

TEST(cli_output, json_is_the_apis_bytes)
{
    cli_env e;
    const std::string id = id_of(e.api("POST", "/assets", R"({"asset": {"type": "licence", "name": "k"}})").at("asset"));
    // the sandbox's asset, with what a re-encoding would change: a number's
    // spelling, an escape, spaces, the members' layout
    const std::string plain = json::serialize(e.api("GET", "/assets/" + id).at("asset"));
    std::string asset = plain, line = plain;
    asset.insert(1, "\n  \"price\": 1.50, \"big\": 1e3, \"note\": \"caf\\u00e9 \\/\",\n  ");
    line.insert(1, "\"price\":1.50,\"big\":1e3,\"note\":\"caf\\u00e9 \\/\",");
    canned_api api({{"/assets/" + id, "{\"asset\": " + asset + "}\n"},
                    {"/assets", "{\"assets\": [ " + asset + " ],\n \"pagination\": {\"current_page\": 1, \"per_page\": 20, "
                                "\"total_count\": 1, \"total_pages\": 1}}"}});
    const std::map<std::string, std::string> to_api{{"DIGITAL_DELIVERY_BASE_URL", api.base_url()}};

    auto got = e.run({"assets", "get", id, "-o", "json"}, to_api);
    EXPECT_OK(got);
    EXPECT_EQ(got.out, asset + "\n");  // one document: the API's bytes
    auto raw = e.run({"request", "GET", "/assets/" + id, "-o", "json"}, to_api);
    EXPECT_OK(raw);
    EXPECT_EQ(raw.out, "{\"asset\": " + asset + "}\n");
    // a list: each item's bytes on one line (the whitespace between tokens removed)
    auto listed = e.run({"assets", "list", "-o", "json"}, to_api);
    EXPECT_OK(listed);
    EXPECT_EQ(listed.out, line + "\n");
}

TEST(cli_output, jq_picks_fields_and_tables_take_columns)
{
    cli_env e;  // three orders
    const json::value api_page = e.api("GET", "/orders");
    const auto& orders = api_page.at("orders").as_array();
    ASSERT_EQ(orders.size(), 3u);

    // a list: the program runs on each item; strings print as text
    auto ids = e.run({"orders", "list", "--all", "--per-page", "2", "--jq", ".id"});
    EXPECT_OK(ids);
    EXPECT_EQ(ids.out, id_of(orders[0]) + "\n" + id_of(orders[1]) + "\n" + id_of(orders[2]) + "\n");
    // one document: other values as compact JSON
    const std::string order = id_of(orders[1]);
    auto picked = e.run({"orders", "get", order, "--jq", "{id, n: .name, many: [1, 2]}"});
    EXPECT_OK(picked);
    EXPECT_EQ(picked.out, R"({"id":")" + order + R"(","n":)" + json::serialize(orders[1].at("name")) + R"(,"many":[1,2]})" "\n");
    auto raw = e.run({"request", "GET", "/orders", "--jq", ".pagination.total_count"});
    EXPECT_OK(raw);
    EXPECT_EQ(raw.out, "3\n");

    // a program jq refuses: a usage error naming it, before anything is sent
    auto bad = e.run({"--verbose", "orders", "list", "--jq", ".["});
    EXPECT_EQ(bad.status, 2);
    EXPECT_EQ(bad.out, "");
    EXPECT_EQ(bad.err.rfind("ddctl: --jq `.[`: syntax error", 0), 0u) << bad.err;
    EXPECT_EQ(bad.err.find("ddctl: >"), std::string::npos) << bad.err;
    // and one that fails on the data
    auto runtime = e.run({"orders", "get", order, "--jq", ".id.x"});
    EXPECT_EQ(runtime.status, 2);
    EXPECT_NE(runtime.err.find("ddctl: --jq `.id.x`: Cannot index string"), std::string::npos) << runtime.err;

    // tables: chosen columns, without the header
    auto table = e.run({"orders", "list", "--columns", "id,financial_status,no_such_field", "--no-headers"});
    EXPECT_OK(table);
    std::istringstream lines(table.out);
    std::string line;
    for (const auto& o : orders)
    {
        ASSERT_TRUE(std::getline(lines, line)) << table.out;
        std::istringstream cells(line);
        std::vector<std::string> row{std::istream_iterator<std::string>(cells), std::istream_iterator<std::string>()};
        EXPECT_EQ(row, (std::vector<std::string>{id_of(o), std::string(o.at("financial_status").as_string()), "-"})) << table.out;
    }
    // stdout holds the rows alone (what awk reads); what is said of the list goes to stderr
    EXPECT_FALSE(std::getline(lines, line)) << "a line after the rows: " << line;
    EXPECT_EQ(table.err, "ddctl: (page 1 of 1, 3 in all: --page N or --all for more)\n");
    auto none = e.run({"orders", "list", "--page", "9", "--columns", "id", "--no-headers"});
    EXPECT_OK(none);
    EXPECT_EQ(none.out, "");
    EXPECT_EQ(none.err, "ddctl: no orders on page 9 (3 in all, 1 page)\n");
    auto headed = e.run({"orders", "list", "--columns", "email"});
    EXPECT_EQ(headed.out.rfind("EMAIL\n", 0), 0u) << headed.out;
}

// ---- digital products ---------------------------------------------------------------------

TEST(cli_products, crud_and_notify_buyers_needs_yes)
{
    cli_env e;
    const std::string asset = id_of(e.api("POST", "/assets", R"({"asset": {"type": "licence", "name": "k"}})").at("asset"));
    auto created = e.run({"products", "create", "--store-product-id", "4242", "--asset-ids", asset,
                          "--custom-message", "Thanks", "-o", "json"});
    EXPECT_OK(created);
    const std::string id = id_of(created.json());
    EXPECT_EQ(created.json(), e.api("GET", "/digital_products/" + id).at("digital_product"));

    auto got = e.run({"products", "get", id, "-o", "json"});
    EXPECT_OK(got);
    EXPECT_EQ(got.json(), e.api("GET", "/digital_products/" + id).at("digital_product"));

    auto updated = e.run({"products", "update", id, "--data", R"({"custom_message": "Thank you!", "upsert_always": true})", "-o", "json"});
    EXPECT_OK(updated);
    EXPECT_EQ(updated.json().at("custom_message"), "Thank you!");
    EXPECT_EQ(updated.json().at("upsert_always"), true);

    auto listed = e.run({"products", "list", "--store-product-id", "4242", "-o", "json"});
    EXPECT_OK(listed);
    ASSERT_EQ(listed.lines().size(), 1u);
    EXPECT_EQ(listed.lines()[0], e.api("GET", "/digital_products").at("digital_products").at(0));

    // the asset-list helpers
    const std::string second = id_of(e.api("POST", "/assets", R"({"asset": {"type": "licence", "name": "k2"}})").at("asset"));
    auto added = e.run({"products", "add-assets", id, "--asset-ids", second, "-o", "json"});
    EXPECT_OK(added);
    EXPECT_EQ(added.json(), e.api("GET", "/digital_products/" + id).at("digital_product"));
    EXPECT_EQ(added.json().at("assets").as_array().size(), 2u);
    auto removed = e.run({"products", "remove-assets", id, "--asset-ids", second, "-o", "json"});
    EXPECT_OK(removed);
    EXPECT_EQ(removed.json().at("assets").as_array().size(), 1u);

    e.purchase(4242);  // a product of no seeded order: one buyer
    e.control("DELETE", "/sandbox/outbox");
    // no terminal, no --yes: refused, nothing sent
    auto refused = e.run({"products", "notify-buyers", id, "--subject", "New version"});
    EXPECT_EQ(refused.status, 2);
    EXPECT_NE(refused.err.find("--yes"), std::string::npos) << refused.err;
    EXPECT_TRUE(e.control("GET", "/sandbox/outbox").at("emails").as_array().empty());

    auto notified = e.run({"products", "notify-buyers", id, "--subject", "New version", "--yes", "-o", "json"});
    EXPECT_OK(notified);
    EXPECT_EQ(notified.json().at("notified_count"), 1);
    EXPECT_EQ(e.control("GET", "/sandbox/outbox").at("emails").as_array().size(), 1u);

    EXPECT_EQ(e.run({"products", "delete", id}).status, 2);
    EXPECT_OK(e.run({"products", "get", id}));
    EXPECT_OK(e.run({"products", "delete", id, "-y"}));
    EXPECT_EQ(e.run({"products", "get", id}).status, 3);
}

// ---- orders ---------------------------------------------------------------------------------

TEST(cli_orders, all_walks_every_page_and_streams_each_item_once)
{
    cli_env e({"--no-rate-limit", "--seed-orders", "23"});
    auto all = e.run({"orders", "list", "--all", "--per-page", "5", "--verbose", "-o", "json"});
    EXPECT_OK(all);
    const auto lines = all.lines();
    ASSERT_EQ(lines.size(), 23u);
    // the same items, in the same order, as the API's own single page of 23
    const json::value api_page = e.api("GET", "/orders?per_page=50");
    const auto& api = api_page.at("orders").as_array();
    for (std::size_t i = 0; i < lines.size(); ++i)
        EXPECT_EQ(lines[i], api[i]);
    // five pages of five
    std::size_t pages = 0;
    for (std::size_t p = all.err.find("< 200 GET /orders"); p != std::string::npos; p = all.err.find("< 200 GET /orders", p + 1))
        ++pages;
    EXPECT_EQ(pages, 5u) << all.err;

    auto page2 = e.run({"orders", "list", "--page", "2", "--per-page", "10", "--sort", "name_asc", "-o", "json"});
    EXPECT_OK(page2);
    EXPECT_EQ(page2.lines().front(), e.api("GET", "/orders?page=2&per_page=10&sort=name_asc").at("orders").at(0));

    auto bad = e.run({"orders", "list", "--status", "nonsense"});
    EXPECT_EQ(bad.status, 2) << bad.err;
}

TEST(cli_orders, get_downloads_attach_detach_notify)
{
    cli_env e({"--no-rate-limit", "--seed-orders", "1", "--watermark-delay-ms", "0"});
    const std::string asset = id_of(e.api("POST", "/assets", R"({"asset": {"type": "licence", "name": "k", "autogenerate_licence_key": true}})").at("asset"));
    e.api("POST", "/digital_products", R"({"digital_product": {"store_product_id": 7500000001111, "asset_ids": [")" + asset + R"("]}})");
    const std::string order = e.purchase(7500000001111);

    auto got = e.run({"orders", "get", order, "-o", "json"});
    EXPECT_OK(got);
    EXPECT_EQ(got.json(), e.api("GET", "/orders/" + order).at("order"));  // stdout: the API's JSON only
    // On the sandbox, the link of the order's download page on stderr (a JSON line with -o json).
    const json::value page = e.control("GET", "/sandbox/orders/" + order + "/download_page");
    const std::string link(page.at("download_page_url").as_string());
    EXPECT_NE(link.find("/download-page/" + order + "/"), std::string::npos) << link;
    EXPECT_EQ(json::parse(got.err),
              (json::object{{"notice", {{"kind", "download_page"}, {"message", "download page (sandbox): " + link}, {"url", link}}}}))
        << got.err;
    auto human = e.run({"orders", "get", order});
    EXPECT_OK(human);
    EXPECT_EQ(human.err, "ddctl: download page (sandbox): " + link + "\n");

    auto downloads = e.run({"orders", "downloads", order, "-o", "json"});
    EXPECT_OK(downloads);
    EXPECT_EQ(downloads.json(), e.api("GET", "/orders/" + order + "/downloads"));
    auto waited = e.run({"orders", "wait-downloads", order, "--timeout", "60", "-o", "json"});
    EXPECT_OK(waited);
    EXPECT_EQ(waited.json(), e.api("GET", "/orders/" + order + "/downloads"));
    auto table = e.run({"orders", "downloads", order});
    EXPECT_OK(table);
    EXPECT_NE(table.out.find("WATERMARK_STATUS"), std::string::npos) << table.out;

    const std::string extra = id_of(e.api("POST", "/assets", R"({"asset": {"type": "external", "external_url": "https://example.com/a.pdf"}})").at("asset"));
    auto attached = e.run({"orders", "attach", order, "--asset-ids", extra, "-o", "json"});
    EXPECT_OK(attached);
    EXPECT_EQ(attached.json().at("attached_assets").at(0).at("id"), json::value(extra));
    auto detached = e.run({"orders", "detach", order, "--data", R"({"asset_ids": [")" + extra + R"("]})", "-o", "json"});
    EXPECT_OK(detached);

    e.control("DELETE", "/sandbox/outbox");
    auto refused = e.run({"orders", "notify", order});
    EXPECT_EQ(refused.status, 2) << refused.err;
    EXPECT_TRUE(e.control("GET", "/sandbox/outbox").at("emails").as_array().empty());
    auto notified = e.run({"orders", "notify", order, "--email", "other@example.com", "--yes", "-o", "json"});
    EXPECT_OK(notified);
    EXPECT_EQ(notified.json().at("notified"), true);
    const json::value outbox = e.control("GET", "/sandbox/outbox");
    const auto& emails = outbox.at("emails").as_array();
    ASSERT_EQ(emails.size(), 1u);
    EXPECT_EQ(emails[0].at("to"), "other@example.com");
}

TEST(cli_orders, notify_asks_on_a_terminal)
{
    cli_env e;
    const std::string order = e.purchase(4242);
    e.control("DELETE", "/sandbox/outbox");
    // answers typed on the terminal: "n" sends nothing (exit 1), "y" sends
    for (const auto& [answer, status, emails] : {std::tuple{"n\n", 1, 0u}, std::tuple{"y\n", 0, 1u}})
    {
        int master = -1, slave = -1;
        ASSERT_EQ(::openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
        ASSERT_EQ(::write(master, answer, 2), 2);  // waits in the terminal's line buffer
        const pid_t pid = e.spawn({"orders", "notify", order}, e.home.path / "out", e.home.path / "err", {}, slave);
        ::close(slave);
        const int st = cli_env::wait(pid);
        const std::string screen = drain_terminal(master);
        EXPECT_EQ(st, status) << screen;
        EXPECT_NE(screen.find("emails the customer of order " + order + ". Send it? [y/N]"), std::string::npos) << screen;
        EXPECT_EQ(screen.find(e.store.api_key), std::string::npos);
        EXPECT_EQ(e.control("GET", "/sandbox/outbox").at("emails").as_array().size(), emails);
    }
    // a deletion asks the same way: "n" keeps the asset
    const std::string asset = id_of(e.api("POST", "/assets", R"({"asset": {"type": "licence", "name": "k"}})").at("asset"));
    int master = -1, slave = -1;
    ASSERT_EQ(::openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
    ASSERT_EQ(::write(master, "n\n", 2), 2);
    const pid_t pid = e.spawn({"assets", "delete", asset}, e.home.path / "out", e.home.path / "err", {}, slave);
    ::close(slave);
    const int st = cli_env::wait(pid);
    const std::string screen = drain_terminal(master);
    EXPECT_EQ(st, 1) << screen;
    EXPECT_NE(screen.find("deletes asset " + asset + ". Send it? [y/N]"), std::string::npos) << screen;
    EXPECT_EQ(e.api("GET", "/assets").at("pagination").at("total_count"), 1);
}

// ---- raw requests ----------------------------------------------------------------------------

TEST(cli_request, raw_get_and_write)
{
    cli_env e;
    auto got = e.run({"request", "GET", "/orders", "--query", "per_page=2", "-o", "json"});
    EXPECT_OK(got);
    EXPECT_EQ(got.json(), e.api("GET", "/orders?per_page=2"));

    const fs::path body = e.home.path / "asset.json";
    std::ofstream(body) << R"({"asset": {"type": "licence", "name": "from a file"}})";
    auto posted = e.run({"request", "post", "/assets", "--data", "@" + body.string(), "-o", "json"});
    EXPECT_OK(posted);
    const std::string id = id_of(posted.json().at("asset"));
    EXPECT_EQ(posted.json().at("asset"), e.api("GET", "/assets/" + id).at("asset"));
    EXPECT_EQ(e.run({"request", "GET", "/nowhere"}).status, 3);
}

TEST(cli_request, all_pages_typed_fields_stdin_and_include)
{
    cli_env e;  // three orders
    const json::value api_page = e.api("GET", "/orders");
    const auto& orders = api_page.at("orders").as_array();

    // --all: two pages of two, each item a line, as the list commands print them
    auto all = e.run({"--verbose", "request", "GET", "/orders", "--query", "per_page=2", "--all", "-o", "json"});
    EXPECT_OK(all);
    const auto lines = all.lines();
    ASSERT_EQ(lines.size(), 3u) << all.out;
    for (std::size_t i = 0; i < lines.size(); ++i)
        EXPECT_EQ(lines[i], orders[i]);
    std::size_t pages = 0;
    for (std::size_t p = all.err.find("< 200 GET /orders"); p != std::string::npos; p = all.err.find("< 200 GET /orders", p + 1))
        ++pages;
    EXPECT_EQ(pages, 2u) << all.err;
    auto table = e.run({"request", "GET", "/orders", "--query", "per_page=2", "--all", "--columns", "id", "--no-headers"});
    EXPECT_OK(table);
    EXPECT_EQ(table.out, id_of(orders[0]) + "\n" + id_of(orders[1]) + "\n" + id_of(orders[2]) + "\n");
    auto none = e.run({"request", "GET", "/assets", "--all"});
    EXPECT_OK(none);
    EXPECT_EQ(none.out, "no assets\n");
    EXPECT_EQ(e.run({"request", "POST", "/assets", "--all"}).status, 2);
    EXPECT_EQ(e.run({"request", "GET", "/orders/" + id_of(orders[0]), "--all"}).status, 1);  // not a list

    // -F: typed fields of the body, nested; @FILE's content as a string
    const fs::path name = e.home.path / "name.txt";
    std::ofstream(name) << "Pro key";
    auto created = e.run({"request", "POST", "/assets", "-F", "asset[type]=licence", "-F", "asset[name]=@" + name.string(),
                          "-F", "asset[autogenerate_licence_key]=true", "-o", "json"});
    EXPECT_OK(created);
    const json::value asset = created.json().at("asset");
    EXPECT_EQ(asset.at("name"), "Pro key");
    EXPECT_EQ(asset.at("autogenerate_licence_key"), true);
    auto typed = e.run({"request", "POST", "/x", "-F", "n=5", "-F", "d=1.5", "-F", "t=true", "-F", "z=null", "-F", "s=5x",
                        "-F", "a[b][]=1", "-F", "a[b][]=two", "--dry-run"});
    EXPECT_OK(typed);
    const auto body_at = typed.out.find('{');
    ASSERT_NE(body_at, std::string::npos) << typed.out;
    EXPECT_EQ(json::parse(typed.out.substr(body_at, typed.out.find('\n', body_at) - body_at)),
              json::parse(R"({"n": 5, "d": 1.5, "t": true, "z": null, "s": "5x", "a": {"b": [1, "two"]}})"));
    auto query = e.run({"request", "GET", "/orders", "-F", "per_page=1", "--dry-run"});
    EXPECT_NE(query.out.find("GET /orders?per_page=1"), std::string::npos) << query.out;
    EXPECT_EQ(e.run({"request", "POST", "/assets", "-F", "a=1", "--data", "{}"}).status, 2);
    EXPECT_EQ(e.run({"request", "POST", "/assets", "-F", "a=1", "-F", "a[b]=2"}).status, 2);

    // --data @-: the body from stdin, for request and for the typed commands
    auto piped = e.run_with_input({"request", "PATCH", "/assets/" + id_of(asset), "--data", "@-", "-o", "json"},
                                  R"({"asset": {"name": "from stdin"}})");
    EXPECT_OK(piped);
    EXPECT_EQ(piped.json().at("asset").at("name"), "from stdin");
    auto typed_piped = e.run_with_input({"assets", "update", id_of(asset), "--data", "@-", "-o", "json"}, R"({"name": "again"})");
    EXPECT_OK(typed_piped);
    EXPECT_EQ(typed_piped.json().at("name"), "again");

    // --include: the status line and the headers, a blank line, the body
    auto head = e.run({"request", "GET", "/assets/" + id_of(asset), "--include", "-o", "json"});
    EXPECT_OK(head);
    EXPECT_EQ(head.out.rfind("HTTP/1.1 200\n", 0), 0u) << head.out;
    const auto blank = head.out.find("\n\n");
    ASSERT_NE(blank, std::string::npos) << head.out;
    std::string headers = head.out.substr(0, blank);
    std::transform(headers.begin(), headers.end(), headers.begin(), [](unsigned char c) { return std::tolower(c); });
    EXPECT_NE(headers.find("\ncontent-type: application/json"), std::string::npos) << head.out;
    EXPECT_EQ(json::parse(head.out.substr(blank + 2)).at("asset").at("name"), "again");
    auto missing = e.run({"request", "GET", "/assets/nope", "-i"});
    EXPECT_EQ(missing.status, 3);
    EXPECT_EQ(missing.out.rfind("HTTP/1.1 404\n", 0), 0u) << missing.out;
}

// ---- --dry-run ----------------------------------------------------------------------------

TEST(cli_dry_run, every_write_prints_its_request_and_sends_nothing)
{
    cli_env e;
    listener sink;  // the base URL of these runs: any connection would show here
    const std::map<std::string, std::string> to_sink{{"DIGITAL_DELIVERY_BASE_URL", "http://127.0.0.1:" + std::to_string(sink.port) + "/api/v1/external"}};
    const fs::path file = e.home.path / "f.bin";
    std::ofstream(file) << std::string(5000, 'z');
    const std::vector<std::pair<std::vector<std::string>, std::string>> writes = {
        {{"assets", "create", "--type", "external", "--external-url", "https://example.com/x.pdf"}, "POST /assets"},
        {{"assets", "update", "a1", "--name", "n"}, "PATCH /assets/a1"},
        {{"assets", "delete", "a1"}, "DELETE /assets/a1"},
        {{"assets", "upload", file.string()}, "POST /assets\n{\"asset\":{\"type\":\"internal\",\"filename\":\"f.bin\",\"byte_size\":5000}}\nthen PUT the 5000 bytes"},
        {{"assets", "replace", "a1", file.string()}, "POST /assets/a1/replace"},
        {{"assets", "replace", "a1", "--filename", "x.pdf", "--byte-size", "5"}, "POST /assets/a1/replace"},
        {{"products", "create", "--store-product-id", "7500000001111", "--asset-ids", "a1,a2"}, "POST /digital_products"},
        {{"products", "update", "p1", "--asset-ids", "a1"}, "PATCH /digital_products/p1"},
        {{"products", "delete", "p1"}, "DELETE /digital_products/p1"},
        {{"products", "add-assets", "p1", "--asset-ids", "a1"}, "GET /digital_products/p1\nthen PATCH /digital_products/p1"},
        {{"products", "remove-assets", "p1", "--asset-ids", "a1"}, "GET /digital_products/p1\nthen PATCH /digital_products/p1"},
        {{"products", "notify-buyers", "p1"}, "POST /digital_products/p1/notify_buyers"},
        {{"orders", "attach", "o1", "--asset-ids", "a1"}, "POST /orders/o1/attach_assets"},
        {{"orders", "detach", "o1", "--asset-ids", "a1"}, "DELETE /orders/o1/detach_assets"},
        {{"orders", "notify", "o1", "--email", "x@example.com"}, "POST /orders/o1/notify"},
        {{"request", "POST", "/orders/o1/notify", "--data", "{}"}, "POST /orders/o1/notify"},
    };
    for (const auto& [args, line] : writes)
    {
        auto a = args;
        a.push_back("--dry-run");
        auto r = e.run(a, to_sink);
        EXPECT_EQ(r.status, 0) << args[0] << ' ' << args[1] << ": " << r.err;
        EXPECT_NE(r.out.find("dry run: nothing was sent\n" + line), std::string::npos) << r.out;
    }
    // the commands with local state create none (no journal, lock or checkpoint)
    auto watch = e.run({"orders", "watch", "--dry-run"}, to_sink);
    EXPECT_EQ(watch.status, 0) << watch.err;
    EXPECT_NE(watch.out.find("dry run: nothing was sent\nGET /orders"), std::string::npos) << watch.out;
    auto recover = e.run({"assets", "recover", "--dry-run"}, to_sink);
    EXPECT_EQ(recover.status, 0) << recover.err;
    EXPECT_EQ(recover.out, "no unfinished uploads\n");
    EXPECT_FALSE(fs::exists(e.home.path / ".local" / "state")) << "a dry run created ddctl's state directory";
    EXPECT_FALSE(sink.connection_pending()) << "a dry run connected to the server";

    // and against the store itself: nothing created, nobody emailed
    auto r = e.run({"assets", "create", "--type", "licence", "--name", "n", "--dry-run"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find(R"({"asset":{"type":"licence","name":"n"}})"), std::string::npos) << r.out;
    EXPECT_EQ(e.api("GET", "/assets").at("pagination").at("total_count"), 0);
}

// ---- exit codes -----------------------------------------------------------------------------

TEST(cli_exit_codes, one_per_failure_class)
{
    cli_env e;
    // usage
    EXPECT_EQ(e.run({"assets", "frobnicate"}).status, 2);
    EXPECT_EQ(e.run({"assets", "create", "--byte-size", "many"}).status, 2);
    EXPECT_EQ(e.run({"assets", "create", "--data", R"({"colour": "red"})"}).status, 2);
    EXPECT_EQ(e.run({"orders", "list"}, {{"DIGITAL_DELIVERY_BASE_URL", ""}}).status, 2);
    // not found, with the diagnostics line on stderr
    auto nf = e.run({"orders", "get", "no-such-order"});
    EXPECT_EQ(nf.status, 3);
    EXPECT_NE(nf.err.find("GET /orders/no-such-order: 404 Order not found"), std::string::npos) << nf.err;
    // validation: refused by the client before sending, and by the server (422)
    EXPECT_EQ(e.run({"assets", "create", "--type", "external"}).status, 4);
    auto v = e.run({"request", "POST", "/assets", "--data", R"({"asset": {"type": "external", "external_url": ""}})"});
    EXPECT_EQ(v.status, 4) << v.err;
    EXPECT_NE(v.err.find("422"), std::string::npos) << v.err;
    // authentication
    auto auth = e.run({"orders", "list"}, {{"DIGITAL_DELIVERY_API_KEY", "wrong-key"}});
    EXPECT_EQ(auth.status, 5);
    EXPECT_NE(auth.err.find("401 Invalid API key"), std::string::npos) << auth.err;
    // transport: nothing listens there
    int closed_port = 0;
    {
        listener l;
        closed_port = l.port;
    }
    EXPECT_EQ(e.run({"orders", "list"}, {{"DIGITAL_DELIVERY_BASE_URL", "http://127.0.0.1:" + std::to_string(closed_port) + "/api/v1/external"}}).status, 7);
}

TEST(cli_exit_codes, the_transports_timeouts_are_transport_failures)
{
    namespace dd = digital_delivery;
    using dd::client_errc;
    for (auto e : {client_errc::resolve_timeout, client_errc::connect_timeout, client_errc::tls_handshake_timeout,
                   client_errc::request_timeout, client_errc::idle_timeout, client_errc::upload_stalled,
                   client_errc::connection_closed})
        EXPECT_EQ(ddctl::exit_code_for(dd::make_error_code(e)), 7) << dd::make_error_code(e).message();
    for (auto e : {client_errc::deadline_exceeded, client_errc::rate_limit_wait_exceeds_deadline})
        EXPECT_EQ(ddctl::exit_code_for(dd::make_error_code(e)), 6) << dd::make_error_code(e).message();
    EXPECT_EQ(ddctl::exit_code_for(dd::make_error_code(dd::api_errc::rate_limited)), 6);
}

// A server that accepts connections and never answers: --timeout passes with
// the request in flight, and that is the deadline (exit 6), not a transport
// failure (the library completes with deadline_exceeded).
TEST(cli_exit_codes, timeout_against_a_silent_server_is_the_deadline)
{
    cli_env e;
    listener silent;
    std::vector<int> held;
    std::thread peer([&] { accept_each(silent, [&](int c) { held.push_back(c); }); });  // reads nothing, answers nothing
    const std::string url = "http://127.0.0.1:" + std::to_string(silent.port) + "/api/v1/external";
    auto r = e.run({"--timeout", "1", "orders", "list"}, {{"DIGITAL_DELIVERY_BASE_URL", url}});
    EXPECT_EQ(r.status, 6) << r.err;
    EXPECT_NE(r.err.find("deadline passed"), std::string::npos) << r.err;
    auto j = e.run({"--timeout", "0.5", "-o", "json", "orders", "get", "x"}, {{"DIGITAL_DELIVERY_BASE_URL", url}});
    EXPECT_EQ(j.status, 6) << j.err;
    EXPECT_EQ(json::parse(j.err).at("error").at("code"), 6) << j.err;
    ::shutdown(silent.fd, SHUT_RDWR);  // accept() returns
    peer.join();
    EXPECT_FALSE(held.empty()) << "ddctl never connected";
    for (int c : held)
        ::close(c);
}

// With --output json, stderr is JSON lines throughout: each retry notice one
// line, then the error (a server that closes every connection at once).
TEST(cli_exit_codes, with_output_json_retry_notices_are_json_lines)
{
    cli_env e;
    listener closing;
    std::thread peer([&] { accept_each(closing, [](int c) { ::close(c); }); });
    const std::string url = "http://127.0.0.1:" + std::to_string(closing.port) + "/api/v1/external";
    auto r = e.run({"-o", "json", "--timeout", "20", "orders", "list"}, {{"DIGITAL_DELIVERY_BASE_URL", url}});
    // without --output json, the same notices are lines of text
    auto plain = e.run({"--timeout", "20", "orders", "list"}, {{"DIGITAL_DELIVERY_BASE_URL", url}});
    ::shutdown(closing.fd, SHUT_RDWR);
    peer.join();
    EXPECT_NE(r.status, 0);
    std::istringstream in(r.err);
    int retries = 0, errors = 0, lines = 0;
    for (std::string l; std::getline(in, l); ++lines)
    {
        boost::system::error_code ec;
        const json::value v = json::parse(l, ec);
        ASSERT_FALSE(ec) << "not JSON: " << l;
        if (const auto* n = v.as_object().if_contains("notice"))
        {
            EXPECT_NE(n->at("message").as_string().size(), 0u) << l;
            if (n->at("kind") == "retry")
            {
                ++retries;
                EXPECT_EQ(n->at("method"), "GET") << l;
                EXPECT_NE(std::string(n->at("path").as_string()).find("/orders"), std::string::npos) << l;
                EXPECT_TRUE(n->at("delay_s").is_double()) << l;
            }
        }
        else
            errors += v.as_object().contains("error") ? 1 : 0;
    }
    EXPECT_GE(retries, 1) << r.err;
    EXPECT_EQ(errors, 1) << r.err;
    EXPECT_EQ(lines, retries + errors) << r.err;
    EXPECT_NE(plain.err.find("ddctl: GET "), std::string::npos) << plain.err;
    EXPECT_NE(plain.err.find("retrying in"), std::string::npos) << plain.err;
}

TEST(cli_exit_codes, with_output_json_an_error_is_one_json_object)
{
    cli_env e;
    auto nf = e.run({"orders", "get", "no-such-order", "-o", "json"});
    EXPECT_EQ(nf.status, 3);
    EXPECT_EQ(nf.out, "");
    const json::value err = json::parse(nf.err);  // the whole of stderr
    EXPECT_EQ(err.at("error").at("code"), 3);
    EXPECT_EQ(err.at("error").at("status"), 404);
    EXPECT_EQ(err.at("error").at("request"), "GET /orders/no-such-order");
    EXPECT_NE(std::string(err.at("error").at("message").as_string()).find("404 Order not found"), std::string::npos) << nf.err;

    // no answer: status and request null
    auto usage = e.run({"-o", "json", "assets", "create", "--byte-size", "many"});
    EXPECT_EQ(usage.status, 2);
    const json::value u = json::parse(usage.err);
    EXPECT_EQ(u.at("error").at("code"), 2);
    EXPECT_TRUE(u.at("error").at("status").is_null());
    EXPECT_TRUE(u.at("error").at("request").is_null());
    EXPECT_NE(std::string(u.at("error").at("message").as_string()).find("--byte-size"), std::string::npos) << usage.err;
    auto parse = e.run({"--output", "json", "assets", "frobnicate"});
    EXPECT_EQ(parse.status, 2);
    EXPECT_EQ(json::parse(parse.err).at("error").at("code"), 2) << parse.err;
    // and without --output json, the line
    EXPECT_EQ(e.run({"orders", "get", "no-such-order"}).err.rfind("ddctl: GET /orders/no-such-order: 404", 0), 0u);
}

/// Two runs of `orders list` on a budget of one point per `window` seconds,
/// shared by the processes of the key: the first takes the point (and must
/// succeed); returns the second, which has to wait a whole window for its own.
run_result second_of_two_on_one_point(const cli_env& e, const char* window)
{
    const std::vector<std::string> slow = {"--rate-limit-points", "1", "--rate-limit-window", window, "orders", "list"};
    auto first = e.run(slow);
    EXPECT_EQ(first.status, 0) << first.err;
    return e.run(slow);
}

TEST(cli_exit_codes, rate_limit_wait_that_cannot_end_in_time)
{
    cli_env e;
    // ten minutes: the second run could only send after its deadline
    auto second = second_of_two_on_one_point(e, "600");
    EXPECT_EQ(second.status, 6) << second.err;
}

// ---- one key, many processes ---------------------------------------------------------------

/// `runs` invocations in a row of ddctl with `options`, on a store whose
/// bucket is 4 points per 2 s (ddctl told the same): each must succeed
/// without a 429 (--verbose shows every answer's status).
void expect_no_429(const cli_env& e, int runs, std::vector<std::string> options)
{
    for (const char* a : {"--rate-limit-points", "4", "--rate-limit-window", "2", "--verbose", "orders", "list", "--per-page", "1"})
        options.push_back(a);
    for (int i = 0; i < runs; ++i)
    {
        auto r = e.run(options);
        ASSERT_EQ(r.status, 0) << "run " << i << ": " << r.err;
        EXPECT_EQ(r.err.find("< 429"), std::string::npos) << "run " << i << ": " << r.err;
        EXPECT_NE(r.err.find("< 200"), std::string::npos) << r.err;
    }
}

const std::vector<std::string> compressed_bucket = {"--rate-limit-points", "4", "--rate-limit-window-seconds", "2", "--seed-orders", "3"};

TEST(cli_rate_limit, a_loop_of_invocations_on_one_key_gets_no_429)
{
    // the default store: shared memory, every ddctl of the host
    cli_env e(compressed_bucket);
    expect_no_429(e, 24, {});
}

TEST(cli_rate_limit, a_wait_for_points_is_reported_while_it_lasts)
{
    cli_env e;
    // four seconds: the second run waits for its point
    auto second = second_of_two_on_one_point(e, "4");
    EXPECT_EQ(second.status, 0) << second.err;
    EXPECT_NE(second.err.find("ddctl: waiting for rate-limit points"), std::string::npos) << second.err;
    EXPECT_NE(second.err.find("ddctl: waited"), std::string::npos) << second.err;
}

TEST(cli_rate_limit, redis_shares_the_budget_between_processes_and_its_password_stays_hidden)
{
    if (!dd_test::have_redis_server())
        GTEST_SKIP() << dd_test::redis_server_exe << " is not installed (tests/install_deps.sh installs it)";
    const std::string password = "redis-pw-Xk4";
    dd_test::redis_server redis({"--requirepass", password});
    cli_env e(compressed_bucket);
    const std::string store = "redis://:" + password + "@127.0.0.1:" + std::to_string(redis.port());
    expect_no_429(e, 12, {"--rate-limit-store", store});
    auto shown = e.run({"--rate-limit-store", store, "--verbose", "orders", "list"});
    EXPECT_EQ(shown.status, 0) << shown.err;
    auto config = e.run({"--rate-limit-store", store, "config", "show"});
    EXPECT_NE(config.out.find("rate_limit_store: redis://(credentials redacted)@127.0.0.1:"), std::string::npos) << config.out;
    for (const auto* r : {&shown, &config})
    {
        EXPECT_EQ(r->out.find(password), std::string::npos);
        EXPECT_EQ(r->err.find(password), std::string::npos);
    }
}

TEST(cli_rate_limit, a_redis_store_that_is_down_is_reported_and_a_fallback_serves)
{
    if (!dd_test::have_redis_server())
        GTEST_SKIP() << dd_test::redis_server_exe << " is not installed (tests/install_deps.sh installs it)";
    dd_test::redis_server redis;
    redis.stop();  // its port: no Redis answers there
    cli_env e(compressed_bucket);
    auto r = e.run({"--rate-limit-store", "redis://127.0.0.1:" + std::to_string(redis.port()), "orders", "list", "--per-page", "1"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("ddctl: shared rate-limit store unavailable (Redis 127.0.0.1:" + std::to_string(redis.port())),
              std::string::npos)
        << r.err;
}

TEST(cli_rate_limit, rediss_urls_take_tls_parameters_and_say_what_is_wrong)
{
    if (!dd_test::have_redis_server())
        GTEST_SKIP() << dd_test::redis_server_exe << " is not installed (tests/install_deps.sh installs it)";
    dd_test::redis_server plain;  // no TLS: the handshake never starts, the CA file is loaded first
    cli_env e(compressed_bucket);
    const std::string hostport = "127.0.0.1:" + std::to_string(plain.port());
    auto unknown = e.run({"--rate-limit-store", "rediss://" + hostport + "?ca=/x", "orders", "list"});
    EXPECT_EQ(unknown.status, 2) << unknown.err;
    EXPECT_NE(unknown.err.find("unknown parameter ca (rediss:// takes ca_file, ca_dir, cert_file, key_file, server_name)"),
              std::string::npos)
        << unknown.err;
    auto plain_url = e.run({"--rate-limit-store", "redis://" + hostport + "?ca_file=/x", "orders", "list"});
    EXPECT_EQ(plain_url.status, 2) << plain_url.err;
    EXPECT_NE(plain_url.err.find("TLS parameters need a rediss:// URL (ca_file)"), std::string::npos) << plain_url.err;
    // A CA file that does not exist: a configuration error, said with the
    // reason; the fallback serves the command.
    const std::string store = "rediss://:redis-pw-Q7z@" + hostport + "/0?ca_file=/nonexistent/ca.pem&server_name=localhost";
    auto missing = e.run({"--rate-limit-store", store, "orders", "list", "--per-page", "1"});
    EXPECT_EQ(missing.status, 0) << missing.err;
    EXPECT_NE(missing.err.find("ddctl: shared rate-limit store refuses our configuration (Redis 127.0.0.1:" +
                               std::to_string(plain.port()) + ": TLS: cannot load ca_file /nonexistent/ca.pem"),
              std::string::npos)
        << missing.err;
    auto config = e.run({"--rate-limit-store", store, "config", "show"});
    EXPECT_NE(config.out.find("rate_limit_store: rediss://(credentials redacted)@" + hostport +
                              "/0?ca_file=/nonexistent/ca.pem&server_name=localhost"),
              std::string::npos)
        << config.out;
    for (const auto* r : {&missing, &config})
    {
        EXPECT_EQ(r->out.find("redis-pw-Q7z"), std::string::npos);
        EXPECT_EQ(r->err.find("redis-pw-Q7z"), std::string::npos);
    }
}

// ---- Ctrl-C ---------------------------------------------------------------------------------

TEST(cli_interrupt, sigint_during_an_upload_cancels_it_and_names_the_asset)
{
    cli_env e;
    const fs::path file = e.home.path / "big.bin";
    {
        std::ofstream f(file, std::ios::binary);
        f.seekp(256ll * 1024 * 1024 - 1);
        f.put('\0');  // sparse: 256 MiB, through the 16 MiB/s relay
    }
    const fs::path out = e.home.path / "up.out", err = e.home.path / "up.err";
    const pid_t pid = e.spawn({"assets", "upload", file.string()}, out, err);
    // wait for the first progress line: the asset exists, its body is on its way
    for (int i = 0; i < 600 && slurp(err).find("ddctl: upload") == std::string::npos; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_NE(slurp(err).find("ddctl: upload"), std::string::npos) << slurp(err);
    ::kill(pid, SIGINT);
    const int status = cli_env::wait(pid);
    EXPECT_EQ(status, 130);
    EXPECT_NE(::kill(pid, 0), 0);  // reaped: no process left behind
    run_result r{status, slurp(out), slurp(err)};
    e.expect_no_key(r);
    // it names the asset that exists without its file
    const json::value listed = e.api("GET", "/assets");
    const auto& assets = listed.at("assets").as_array();
    ASSERT_EQ(assets.size(), 1u);
    const std::string id = id_of(assets[0]);
    EXPECT_NE(r.err.find("asset " + id + " exists without its file"), std::string::npos) << r.err;
}

// ---- configuration ------------------------------------------------------------------------------

TEST(cli_config, profiles_key_file_and_config_show_without_the_key)
{
    cli_env e;
    const fs::path key_file = e.home.path / "key";
    std::ofstream(key_file) << e.store.api_key << "\n";
    fs::create_directories(e.home.path / "ddctl");
    std::ofstream(e.home.path / "ddctl" / "config") << "# ddctl\n[default]\nbase_url = http://127.0.0.1:1/api/v1/external\n\n"
                                                    << "[shop]\nbase_url = " << e.store.base_url << "\napi_key_file = "
                                                    << key_file.string() << "\nrate_limit_store = in-process\n";
    const std::map<std::string, std::string> no_env{{"DIGITAL_DELIVERY_BASE_URL", ""}, {"DIGITAL_DELIVERY_API_KEY", ""}};

    auto shown = e.run({"--profile", "shop", "--verbose", "config", "show"}, no_env);
    EXPECT_OK(shown);
    EXPECT_NE(shown.out.find("base_url: " + e.store.base_url), std::string::npos) << shown.out;
    EXPECT_NE(shown.out.find("[shop]"), std::string::npos) << shown.out;
    EXPECT_NE(shown.out.find("api_key: (set, redacted)"), std::string::npos) << shown.out;
    EXPECT_NE(shown.out.find("rate_limit_store: in-process"), std::string::npos) << shown.out;

    auto listed = e.run({"--profile", "shop", "--verbose", "orders", "list", "-o", "json"}, no_env);
    EXPECT_OK(listed);
    EXPECT_EQ(listed.lines().size(), 3u);

    // the environment wins over the profile, and config show says so
    auto env_wins = e.run({"--profile", "shop", "config", "show"}, {{"DIGITAL_DELIVERY_API_KEY", e.store.api_key}});
    EXPECT_NE(env_wins.out.find("from env DIGITAL_DELIVERY_API_KEY"), std::string::npos) << env_wins.out;

    auto by_file = e.run({"--api-key-file", key_file.string(), "orders", "list"}, {{"DIGITAL_DELIVERY_API_KEY", ""}});
    EXPECT_OK(by_file);
    EXPECT_EQ(e.run({"--profile", "nope", "orders", "list"}).status, 2);
}

TEST(cli_config, set_and_init_write_a_private_file_atomically)
{
    cli_env e;
    const std::map<std::string, std::string> no_env{{"DIGITAL_DELIVERY_BASE_URL", ""}, {"DIGITAL_DELIVERY_API_KEY", ""}};
    const fs::path dir = e.home.path / "ddctl", file = dir / "config";
    fs::create_directories(dir);
    std::ofstream(file) << "# my settings\n[default]\nbase_url = http://127.0.0.1:1/api/v1/external\n";
    auto mode = [&] { return fs::status(file).permissions() & fs::perms::all; };
    auto inode = [&] {
        struct stat st{};
        ::stat(file.c_str(), &st);
        return st.st_ino;
    };

    // init: the base URL, the profile, the key, one line each on stdin
    auto init = e.run_with_input({"config", "init"}, e.store.base_url + "\nshop\n" + e.store.api_key + "\n", no_env);
    EXPECT_OK(init);
    EXPECT_NE(init.err.find("wrote [shop] to " + file.string() + " (mode 0600)"), std::string::npos) << init.err;
    EXPECT_EQ(mode(), fs::perms::owner_read | fs::perms::owner_write);
    EXPECT_EQ(slurp(file), "# my settings\n[default]\nbase_url = http://127.0.0.1:1/api/v1/external\n\n[shop]\nbase_url = " +
                               e.store.base_url + "\napi_key = " + e.store.api_key + "\n");
    auto listed = e.run({"--profile", "shop", "orders", "list", "-o", "json"}, no_env);
    EXPECT_OK(listed);
    EXPECT_EQ(listed.lines().size(), 3u);

    // set: one value, into its profile, the file replaced (a new inode), nothing left beside it
    const auto before = inode();
    auto set = e.run({"--profile", "shop", "config", "set", "rate_limit_points", "30"}, no_env);
    EXPECT_OK(set);
    EXPECT_NE(inode(), before);
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
    EXPECT_NE(slurp(file).find("api_key = " + e.store.api_key + "\nrate_limit_points = 30\n"), std::string::npos) << slurp(file);
    EXPECT_OK(e.run({"--profile", "shop", "config", "set", "rate_limit_points", "40"}, no_env));
    EXPECT_NE(slurp(file).find("\nrate_limit_points = 40\n"), std::string::npos) << slurp(file);
    EXPECT_EQ(slurp(file).find("= 30"), std::string::npos) << slurp(file);
    auto shown = e.run({"--profile", "shop", "config", "show"}, no_env);
    EXPECT_NE(shown.out.find("rate_limit_points: 40    from " + file.string() + " [shop]"), std::string::npos) << shown.out;
    EXPECT_OK(e.run({"config", "set", "rate_limit_store", "in-process"}, no_env));  // the default profile
    EXPECT_NE(slurp(file).find("[default]\nbase_url = http://127.0.0.1:1/api/v1/external\nrate_limit_store = in-process\n"),
              std::string::npos) << slurp(file);

    // the key never from argv; settings and values checked
    auto key = e.run({"config", "set", "api_key", "abc"}, no_env);
    EXPECT_EQ(key.status, 2);
    EXPECT_NE(key.err.find("never taken from the command line"), std::string::npos) << key.err;
    EXPECT_EQ(e.run({"config", "set", "colour", "red"}, no_env).status, 2);
    EXPECT_EQ(e.run({"config", "set", "rate_limit_window", "soon"}, no_env).status, 2);
    EXPECT_EQ(slurp(file).find("abc"), std::string::npos);

    // a file holding a key that every user can read is refused, until private again
    fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
    auto open = e.run({"--profile", "shop", "orders", "list"}, no_env);
    EXPECT_EQ(open.status, 2);
    EXPECT_NE(open.err.find(file.string() + " holds an API key and every user of this host can read it (mode 0644)"),
              std::string::npos) << open.err;
    EXPECT_NE(open.err.find("chmod 600 " + file.string()), std::string::npos) << open.err;
    EXPECT_OK(e.run({"--profile", "shop", "config", "set", "rate_limit_points", "40"}, no_env));  // rewritten private
    EXPECT_EQ(mode(), fs::perms::owner_read | fs::perms::owner_write);
    EXPECT_OK(e.run({"--profile", "shop", "orders", "list"}, no_env));

    // init with the flags: only the key is read; or a key file, and nothing is read
    const fs::path other = e.home.path / "other" / "config";
    auto flags = e.run_with_input({"--config", other.string(), "--base-url", e.store.base_url, "--profile", "p", "config", "init"},
                                  e.store.api_key + "\n", no_env);
    EXPECT_OK(flags);
    EXPECT_EQ(slurp(other), "[p]\nbase_url = " + e.store.base_url + "\napi_key = " + e.store.api_key + "\n");
    const fs::path key_file = e.home.path / "key";
    std::ofstream(key_file) << e.store.api_key << "\n";
    auto by_file = e.run({"--config", other.string(), "--base-url", e.store.base_url, "--profile", "q", "--api-key-file",
                          key_file.string(), "config", "init"}, no_env);
    EXPECT_OK(by_file);
    EXPECT_NE(slurp(other).find("[q]\nbase_url = " + e.store.base_url + "\napi_key_file = " + key_file.string() + "\n"),
              std::string::npos) << slurp(other);
    EXPECT_OK(e.run({"--config", other.string(), "--profile", "q", "orders", "list"}, no_env));
    // stdin ends before the key: nothing written
    auto short_input = e.run_with_input({"--config", other.string(), "--profile", "r", "config", "init"}, e.store.base_url + "\n", no_env);
    EXPECT_EQ(short_input.status, 2);
    EXPECT_EQ(slurp(other).find("[r]"), std::string::npos);
}

// `config set` takes a rediss:// store (as --rate-limit-store does), and
// writes through a config file that is a symbolic link: the link stays, the
// file it names gets the value.
TEST(cli_config, set_takes_rediss_and_writes_through_a_symbolic_link)
{
    cli_env e;
    const std::map<std::string, std::string> no_env{{"DIGITAL_DELIVERY_BASE_URL", ""}, {"DIGITAL_DELIVERY_API_KEY", ""}};
    const fs::path dots = e.home.path / "dotfiles", real = dots / "ddctl-config", dir = e.home.path / "ddctl",
                   link = dir / "config";
    fs::create_directories(dots);
    fs::create_directories(dir);
    std::ofstream(real) << "[default]\nbase_url = http://127.0.0.1:1/api/v1/external\n";
    fs::create_symlink(fs::relative(real, dir), link);
    const std::string url = "rediss://cache.internal:6380/0?ca_file=/etc/ssl/ca.pem";
    auto set = e.run({"config", "set", "rate_limit_store", url}, no_env);
    EXPECT_OK(set);
    EXPECT_TRUE(fs::is_symlink(link)) << "the link was replaced by a plain file";
    EXPECT_NE(slurp(real).find("rate_limit_store = " + url + "\n"), std::string::npos) << slurp(real);
    EXPECT_EQ(fs::status(real).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
    EXPECT_EQ(std::distance(fs::directory_iterator(dots), fs::directory_iterator()), 1) << "a temporary file left";
    auto shown = e.run({"config", "show"}, no_env);
    EXPECT_NE(shown.out.find(url), std::string::npos) << shown.out;
    EXPECT_EQ(e.run({"config", "set", "rate_limit_store", "memcached://x"}, no_env).status, 2);
}

TEST(cli_config, init_does_not_echo_the_key_on_a_terminal)
{
    cli_env e;
    int master = -1, slave = -1;
    ASSERT_EQ(::openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
    const pid_t pid = e.spawn({"--base-url", e.store.base_url, "--profile", "t", "config", "init"}, e.home.path / "out",
                              e.home.path / "err", {{"DIGITAL_DELIVERY_API_KEY", ""}}, slave);
    ::close(slave);
    // the prompt, then the key typed (after the prompt: echo is off by then)
    std::string screen;
    std::array<char, 4096> chunk{};
    while (screen.find("API key (not shown): ") == std::string::npos)
    {
        const ssize_t n = ::read(master, chunk.data(), chunk.size());
        ASSERT_GT(n, 0) << screen;
        screen.append(chunk.data(), static_cast<std::size_t>(n));
    }
    const std::string typed = e.store.api_key + "\n";
    ASSERT_EQ(::write(master, typed.data(), typed.size()), static_cast<ssize_t>(typed.size()));
    EXPECT_EQ(cli_env::wait(pid), 0) << screen;
    screen = drain_terminal(master, screen);
    EXPECT_EQ(screen.find(e.store.api_key), std::string::npos) << "the key echoed";
    EXPECT_NE(slurp(e.home.path / "ddctl" / "config").find("[t]\nbase_url = " + e.store.base_url + "\napi_key = " + e.store.api_key),
              std::string::npos);
}

// ---- help ------------------------------------------------------------------------------------

TEST(cli_help, every_subcommand_has_help_with_an_example)
{
    cli_env e;
    const std::vector<std::vector<std::string>> commands = {
        {"assets", "list"}, {"assets", "get"}, {"assets", "create"}, {"assets", "update"}, {"assets", "delete"},
        {"assets", "upload"}, {"assets", "replace"}, {"products", "list"}, {"products", "get"}, {"products", "create"},
        {"products", "update"}, {"products", "delete"}, {"products", "add-assets"}, {"products", "remove-assets"},
        {"products", "notify-buyers"}, {"orders", "list"},
        {"orders", "get"}, {"orders", "downloads"}, {"orders", "wait-downloads"}, {"orders", "watch"}, {"orders", "attach"},
        {"orders", "detach"}, {"orders", "notify"}, {"request"}, {"config", "show"}, {"config", "set"}, {"config", "init"}, {}};
    auto version = e.run({"--version"});
    EXPECT_OK(version);
    EXPECT_EQ(version.out.rfind("ddctl " DIGITAL_DELIVERY_VERSION_STRING " (digital_delivery " DIGITAL_DELIVERY_VERSION_STRING, 0), 0u)
        << version.out;
    EXPECT_NE(version.out.find(", Boost 1."), std::string::npos) << version.out;
    EXPECT_EQ(std::count(version.out.begin(), version.out.end(), '\n'), 1) << "one line, no blank one: " << version.out;
    for (auto c : commands)
    {
        c.push_back("--help");
        auto r = e.run(c);
        EXPECT_EQ(r.status, 0) << r.err;
        EXPECT_NE(r.out.find("Example:\n  ddctl"), std::string::npos) << r.out;
    }
    // the completion script, in bash, completing `ddctl orders wa` and `ddctl orders list --cre`
    auto complete = [](const std::string& words, int cword) {
        const std::string cmd = "bash -c 'source " DDCTL_COMPLETION "; COMP_WORDS=(" DDCTL_EXE " " + words +
                                "); COMP_CWORD=" + std::to_string(cword) + "; _ddctl; echo \"${COMPREPLY[*]}\"'";
        std::string out(4096, '\0');
        FILE* p = ::popen(cmd.c_str(), "r");
        out.resize(p ? std::fread(out.data(), 1, out.size(), p) : 0);
        if (p)
            ::pclose(p);
        return out;
    };
    EXPECT_EQ(complete("orders wa", 2), "wait-downloads watch\n");
    EXPECT_EQ(complete("orders list --created-at-m", 3), "--created-at-min --created-at-max\n");
    EXPECT_EQ(complete("orders list --status pa", 4), "paid partially_paid partially_refunded\n");
    EXPECT_EQ(complete("-o j", 2), "json\n");
    // its source: ddctl's own command tree
    auto words = e.run({"__complete", "orders"});
    EXPECT_NE(words.out.find("wait-downloads\n"), std::string::npos) << words.out;
    auto options = e.run({"__complete", "orders", "list"});
    EXPECT_NE(options.out.find("--created-at-min\n"), std::string::npos) << options.out;
    // after an option that takes a value: its values when they are a set, else nothing (file names)
    EXPECT_EQ(e.run({"__complete", "assets", "create", "--type"}).out, "internal\nexternal\nlicence\n");
    EXPECT_EQ(e.run({"__complete", "assets", "upload", "--watermark-asset"}).out, "true\nfalse\n");
    EXPECT_EQ(e.run({"__complete", "assets", "create", "--name"}).out, "");
}

/// Runs `script` in `shell` (-c; else `script` is the arguments) with ddctl's
/// directory first on PATH, in `cwd` (empty: here); its stdout.
std::string shell_output(const std::string& shell, const std::string& script, bool dash_c = true, const std::string& cwd = {})
{
    const std::string dir = fs::path(DDCTL_EXE).parent_path().string();
    const std::string cmd = (cwd.empty() ? std::string() : "cd '" + cwd + "' && ") + "PATH='" + dir + "':\"$PATH\" " +
                            shell + (dash_c ? " -c '" + script + "'" : " " + script) + " 2>&1";
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    for (std::array<char, 4096> chunk{}; p;)
    {
        const std::size_t n = std::fread(chunk.data(), 1, chunk.size(), p);
        if (n == 0)
            break;
        out.append(chunk.data(), n);
    }
    if (p)
        ::pclose(p);
    return out;
}

/// What zsh's own completion system (compinit, the script installed as
/// _ddctl on fpath, _files) offers for each of `lines` and a Tab, typed in an
/// interactive zsh on a pseudo-terminal (tests/cli/zsh_complete.zsh), in
/// `dir`: each line's matches, sorted, one per line.
std::vector<std::string> zsh_matches(const std::vector<std::string>& lines, const fs::path& dir = fs::temp_directory_path())
{
    std::string args = "-f " DDCTL_ZSH_COMPLETE " " DDCTL_COMPLETION_DIR;
    for (const auto& l : lines)
        args += " '" + l + "'";
    const std::string out = shell_output("zsh", args, false, dir.string());
    std::vector<std::string> r(1);
    std::istringstream in(out);
    for (std::string l; std::getline(in, l);)
        if (l == "::done::")
            r.emplace_back();
        else
            r.back() += l + "\n";
    r.pop_back();
    EXPECT_EQ(r.size(), lines.size()) << out;
    r.resize(lines.size());
    return r;
}

/// Whether `shell` (zsh, fish) is installed where Debian puts it.
bool have_shell(const std::string& shell)
{
    return ::access(("/usr/bin/" + shell).c_str(), X_OK) == 0 || ::access(("/bin/" + shell).c_str(), X_OK) == 0;
}

/// What bash's completion script offers, its function called as readline
/// calls it (COMP_WORDS = ddctl `words`, COMP_CWORD = `cword`), in `cwd`; sorted.
std::string bash_complete(const std::string& words, int cword, const std::string& cwd)
{
    return shell_output("bash", "source " DDCTL_COMPLETION "; COMP_WORDS=(ddctl " + words + "); COMP_CWORD=" + std::to_string(cword) +
                                    "; _ddctl; printf \"%s\\n\" \"${COMPREPLY[@]}\" | sort",
                        true, cwd);
}

/// zsh offers, for each line typed in `dir`, exactly its matches (sorted, one
/// a line); a failure when zsh is not installed (tests/install_deps.sh installs it).
void expect_zsh_matches(const std::vector<std::pair<std::string, std::string>>& line_matches, const fs::path& dir)
{
    if (!have_shell("zsh"))
    {
        ADD_FAILURE() << "zsh is not installed (tests/install_deps.sh installs it)";
        return;
    }
    std::vector<std::string> lines;
    for (const auto& lm : line_matches)
        lines.push_back(lm.first);
    const auto m = zsh_matches(lines, dir);
    for (std::size_t i = 0; i < line_matches.size(); ++i)
        EXPECT_EQ(m[i], line_matches[i].second) << line_matches[i].first;
}

/// What fish's completion script offers for `line` (`complete -C`), in `cwd`.
std::string fish_complete(const std::string& line, const std::string& cwd = {})
{
    return shell_output("fish", "source " DDCTL_COMPLETION_DIR "/ddctl.fish; complete -C \"" + line + "\"", true, cwd);
}

TEST(cli_help, zsh_completes_commands_options_and_values)
{
    if (!have_shell("zsh"))
        GTEST_SKIP() << "zsh is not installed";
    // the matches zsh offers (filtered by the prefix, as typed)
    const auto m = zsh_matches({"ddctl orders wa", "ddctl orders list --st", "ddctl orders list --status pa"});
    EXPECT_EQ(m[0], "wait-downloads\nwatch\n");
    EXPECT_EQ(m[1], "--status\n--store-product-id\n");
    EXPECT_EQ(m[2], "paid\npartially_paid\npartially_refunded\n");
}

// A positional FILE (`ddctl assets upload <Tab>`, `ddctl assets replace ID
// <Tab>`): file names, in real bash, zsh (compinit) and fish; options still
// after a `-`, and no file names where the argument is no file (an id).
TEST(cli_help, a_positional_file_completes_as_a_file_name_in_bash_zsh_and_fish)
{
    temp_dir d;
    std::ofstream(d.path / "manual-v2.pdf") << "x";
    std::ofstream(d.path / "notes.txt") << "x";
    const std::string cwd = d.path.string();
    // bash: the script's function, as readline calls it (COMP_WORDS, COMP_CWORD)
    auto bash = [&](const std::string& words, int cword) { return bash_complete(words, cword, cwd); };
    EXPECT_EQ(bash("assets upload \"\"", 3), "manual-v2.pdf\nnotes.txt\n");
    EXPECT_EQ(bash("assets upload ma", 3), "manual-v2.pdf\n");
    EXPECT_EQ(bash("assets replace 3f2a ma", 4), "manual-v2.pdf\n");
    EXPECT_NE(bash("assets upload --wa", 3).find("--watermark-asset"), std::string::npos);
    EXPECT_EQ(bash("assets upload manual-v2.pdf --name x \"\"", 6).find("notes.txt"), std::string::npos)
        << "FILE given: no second file";
    EXPECT_EQ(bash("orders get \"\"", 3).find("notes.txt"), std::string::npos) << "an id is no file";

    expect_zsh_matches({{"ddctl assets upload ", "manual-v2.pdf\nnotes.txt\n"},
                        {"ddctl assets replace 3f2a ma", "manual-v2.pdf\n"},
                        {"ddctl assets upload --wa", "--watermark-asset\n"}},
                       d.path);

    if (have_shell("fish"))
    {
        auto fish = [&](const std::string& line) { return fish_complete(line, cwd); };
        EXPECT_EQ(fish("ddctl assets upload "), "manual-v2.pdf\nnotes.txt\n");
        EXPECT_EQ(fish("ddctl assets replace 3f2a ma"), "manual-v2.pdf\n");
        EXPECT_NE(fish("ddctl assets upload --wa").find("--watermark-asset"), std::string::npos);
    }
    else
        ADD_FAILURE() << "fish is not installed (tests/install_deps.sh installs it)";
}

// A positional DIR (`ddctl assets sync <Tab>`, `ddctl assets check <Tab>`):
// folder names only, in real bash, zsh (compinit) and fish; options after a `-`.
TEST(cli_help, a_positional_dir_completes_as_a_folder_name_in_bash_zsh_and_fish)
{
    temp_dir d;
    fs::create_directories(d.path / "deliverables");
    fs::create_directories(d.path / "drafts");
    std::ofstream(d.path / "deliverables.txt") << "x";
    const std::string cwd = d.path.string();
    auto bash = [&](const std::string& words, int cword) { return bash_complete(words, cword, cwd); };
    EXPECT_EQ(bash("assets sy", 2), "sync\n");
    EXPECT_EQ(bash("assets sync \"\"", 3), "deliverables\ndrafts\n");
    EXPECT_EQ(bash("assets check del", 3), "deliverables\n");
    EXPECT_EQ(bash("assets sync --max-d", 3), "--max-delete\n");
    EXPECT_EQ(bash("assets sync --adopt=", 3).find("deliverables"), std::string::npos) << "an option's value is no folder";
    expect_zsh_matches({{"ddctl assets sync ", "deliverables\ndrafts\n"},
                        {"ddctl assets check del", "deliverables\n"},
                        {"ddctl assets sync --reup", "--reupload-moved\n"}},
                       d.path);
    if (have_shell("fish"))
    {
        auto fish = [&](const std::string& line) { return fish_complete(line, cwd); };
        EXPECT_EQ(fish("ddctl assets sync "), "deliverables/\ndrafts/\n");
        EXPECT_EQ(fish("ddctl assets check del"), "deliverables/\n");
        EXPECT_NE(fish("ddctl assets sync --max-p").find("--max-points"), std::string::npos);
        EXPECT_NE(fish("ddctl assets upload del").find("deliverables.txt\n"), std::string::npos) << "a FILE still completes as a file";
    }
    else
        ADD_FAILURE() << "fish is not installed (tests/install_deps.sh installs it)";
}

TEST(cli_help, fish_completes_commands_options_and_values)
{
    if (!have_shell("fish"))
        GTEST_SKIP() << "fish is not installed";
    auto complete = [](const std::string& line) { return fish_complete(line); };
    EXPECT_EQ(complete("ddctl orders wa"), "wait-downloads\nwatch\n");
    EXPECT_NE(complete("ddctl orders list --created-at-m").find("--created-at-min\n"), std::string::npos);
    EXPECT_EQ(complete("ddctl orders list --status partially_r"), "partially_refunded\n");
    EXPECT_EQ(complete("ddctl -o j"), "json\n");
}

namespace {

// ---- traces: --trace FILE and the OpenTelemetry exporter variables -------------------

// A stand-in OpenTelemetry collector: records each request (its head and
// body) and answers 200 {}.
class collector
{
public:
    collector() { thread_ = std::thread([this] { serve(); }); }
    ~collector()
    {
        ::shutdown(in_.fd, SHUT_RDWR);  // accept() returns
        thread_.join();
    }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(in_.port); }
    std::vector<std::pair<std::string, std::string>> requests() const  // (head, body)
    {
        std::lock_guard<std::mutex> lk(mtx_);
        return received_;
    }

private:
    void serve()
    {
        accept_each(in_, [this](int c) {
            for (;;)  // keep-alive: one request after another
            {
                std::string data;
                if (!read_until(c, data, [&] { return data.find("\r\n\r\n") != std::string::npos; }))
                    break;
                const auto end = data.find("\r\n\r\n");
                std::string head = data.substr(0, end);
                std::string lower_head = head;
                std::transform(lower_head.begin(), lower_head.end(), lower_head.begin(), ::tolower);
                std::size_t length = 0;
                if (auto p = lower_head.find("content-length:"); p != std::string::npos)
                    length = std::stoul(head.substr(p + 15));
                read_until(c, data, [&] { return data.size() >= end + 4 + length; });
                {
                    std::lock_guard<std::mutex> lk(mtx_);
                    received_.emplace_back(head, data.substr(end + 4, length));
                }
                const std::string answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
                (void)::send(c, answer.data(), answer.size(), MSG_NOSIGNAL);
            }
            ::close(c);
        });
    }

    listener in_;
    mutable std::mutex mtx_;
    std::vector<std::pair<std::string, std::string>> received_;
    std::thread thread_;
};

// The spans of OTLP JSON lines: (service.name, span name, parentSpanId or "").
std::vector<std::tuple<std::string, std::string, std::string>> spans_in(const std::string& text)
{
    std::vector<std::tuple<std::string, std::string, std::string>> r;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
    {
        if (line.empty())
            continue;
        const json::value v = json::parse(line);
        for (const auto& rs : v.at("resourceSpans").as_array())
        {
            const std::string service(rs.at("resource").at("attributes").at(0).at("value").at("stringValue").as_string());
            for (const auto& ss : rs.at("scopeSpans").as_array())
                for (const auto& s : ss.at("spans").as_array())
                    r.emplace_back(service, std::string(s.at("name").as_string()),
                                   s.as_object().contains("parentSpanId") ? std::string(s.at("parentSpanId").as_string()) : "");
        }
    }
    return r;
}

bool has_span(const std::vector<std::tuple<std::string, std::string, std::string>>& spans, const std::string& service,
              const std::string& name)
{
    return std::any_of(spans.begin(), spans.end(), [&](const auto& s) { return std::get<0>(s) == service && std::get<1>(s) == name; });
}

// TRACEPARENT / TRACESTATE in the environment: the command's operation span
// is a child of the script's span, in its trace; a malformed TRACEPARENT is
// said and ignored.
TEST(cli_trace, traceparent_in_the_environment_is_the_parent)
{
    cli_env e({"--no-rate-limit", "--seed-orders", "1"});
    const fs::path file = e.home.path / "spans.jsonl";
    const std::string trace = "4bf92f3577b34da6a3ce929d0e0e4736", span = "00f067aa0ba902b7";
    auto got = e.run({"orders", "list", "-o", "json", "--trace", file.string()},
                     {{"TRACEPARENT", "00-" + trace + "-" + span + "-01"}, {"TRACESTATE", "vendor=x"}});
    EXPECT_OK(got);
    const std::string text = slurp(file);
    const auto spans = spans_in(text);
    ASSERT_TRUE(has_span(spans, "ddctl", "list_orders")) << text;
    for (const auto& s : spans)
    {
        if (std::get<1>(s) == "list_orders")
        {
            EXPECT_EQ(std::get<2>(s), span) << text;
        }
    }
    EXPECT_NE(text.find("\"traceId\":\"" + trace + "\""), std::string::npos) << text;

    auto bad = e.run({"orders", "list", "-o", "json"}, {{"TRACEPARENT", "not-a-traceparent"}});
    EXPECT_OK(bad);
    EXPECT_NE(bad.err.find("TRACEPARENT is not a W3C traceparent"), std::string::npos) << bad.err;
    EXPECT_NE(bad.err.find("\"notice\""), std::string::npos) << "with -o json, a JSON line: " << bad.err;
}

TEST(cli_trace, trace_writes_the_commands_spans_to_a_file)
{
    cli_env e({"--no-rate-limit", "--seed-orders", "1"});
    const std::string order = id_of(e.api("GET", "/orders").at("orders").at(0));
    const fs::path file = e.home.path / "spans.jsonl";
    auto got = e.run({"orders", "get", order, "-o", "json", "--trace", file.string()});
    EXPECT_EQ(got.status, 0) << got.err;
    EXPECT_EQ(got.json(), e.api("GET", "/orders/" + order).at("order"));  // stdout untouched
    // stderr: only the link of the order's download page (the sandbox's), as JSON
    EXPECT_NE(std::string(json::parse(got.err).at("notice").at("url").as_string()).find("/download-page/" + order + "/"),
              std::string::npos) << got.err;
    const std::string text = slurp(file);
    const auto spans = spans_in(text);
    EXPECT_TRUE(has_span(spans, "ddctl", "get_order")) << text;
    EXPECT_TRUE(has_span(spans, "ddctl", "GET /orders/{id}")) << text;
    EXPECT_EQ(text.find(e.store.api_key), std::string::npos);
    // OTEL_SERVICE_NAME names the service; a second command appends.
    auto again = e.run({"orders", "get", order, "--trace", file.string()}, {{"OTEL_SERVICE_NAME", "shop-sync"}});
    EXPECT_EQ(again.status, 0) << again.err;
    const auto both = spans_in(slurp(file));
    EXPECT_TRUE(has_span(both, "ddctl", "get_order"));
    EXPECT_TRUE(has_span(both, "shop-sync", "get_order"));
    EXPECT_EQ(both.size(), 2 * spans.size());
}

TEST(cli_trace, a_dry_run_traces_nothing_and_an_unwritable_file_is_a_usage_error)
{
    cli_env e;
    const fs::path file = e.home.path / "spans.jsonl";
    auto dry = e.run({"assets", "create", "--type", "licence", "--name", "k", "--dry-run", "--trace", file.string()});
    EXPECT_EQ(dry.status, 0) << dry.err;
    EXPECT_FALSE(fs::exists(file));
    auto bad = e.run({"assets", "list", "--trace", (e.home.path / "no-such-dir" / "spans.jsonl").string()});
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.err.find("--trace"), std::string::npos) << bad.err;
}

TEST(cli_trace, the_otel_endpoint_variables_send_spans_to_a_collector)
{
    cli_env e;
    collector col;
    // OTEL_EXPORTER_OTLP_ENDPOINT: the signal's path appended; headers percent-decoded.
    auto listed = e.run({"assets", "list"}, {{"OTEL_EXPORTER_OTLP_ENDPOINT", col.url()},
                                            {"OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20c0llect0r,x-tenant=shop"},
                                            {"OTEL_SERVICE_NAME", "shop-sync"}});
    EXPECT_EQ(listed.status, 0) << listed.err;
    EXPECT_EQ(listed.err, "");
    auto reqs = col.requests();
    ASSERT_EQ(reqs.size(), 1u);
    const auto& [head, body] = reqs[0];
    EXPECT_EQ(head.rfind("POST /v1/traces HTTP/1.1\r\n", 0), 0u) << head;
    EXPECT_NE(head.find("\r\nContent-Type: application/json"), std::string::npos) << head;
    EXPECT_NE(head.find("\r\nauthorization: Bearer c0llect0r"), std::string::npos) << head;
    EXPECT_NE(head.find("\r\nx-tenant: shop"), std::string::npos) << head;
    EXPECT_EQ(head.find("X-Auth-Token"), std::string::npos) << head;  // never the API key
    EXPECT_EQ(body.find(e.store.api_key), std::string::npos);
    EXPECT_TRUE(has_span(spans_in(body), "shop-sync", "list_assets")) << body;
    EXPECT_TRUE(has_span(spans_in(body), "shop-sync", "GET /assets")) << body;
    // OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: used as is, and it wins.
    auto again = e.run({"assets", "list"}, {{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", col.url() + "/custom/traces"},
                                           {"OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1"}});
    EXPECT_EQ(again.status, 0) << again.err;
    reqs = col.requests();
    ASSERT_EQ(reqs.size(), 2u);
    EXPECT_EQ(reqs[1].first.rfind("POST /custom/traces HTTP/1.1\r\n", 0), 0u) << reqs[1].first;
    // OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER=none: nothing sent.
    EXPECT_EQ(e.run({"assets", "list"}, {{"OTEL_EXPORTER_OTLP_ENDPOINT", col.url()}, {"OTEL_SDK_DISABLED", "true"}}).status, 0);
    EXPECT_EQ(e.run({"assets", "list"}, {{"OTEL_EXPORTER_OTLP_ENDPOINT", col.url()}, {"OTEL_TRACES_EXPORTER", "none"}}).status, 0);
    EXPECT_EQ(col.requests().size(), 2u);
}

TEST(cli_trace, a_collector_that_is_down_does_not_fail_the_command)
{
    cli_env e;
    listener closed;
    const std::string url = "http://127.0.0.1:" + std::to_string(closed.port) + "/v1/traces";
    closed.close();  // nothing listens there any more
    auto listed = e.run({"assets", "list"}, {{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", url}});
    EXPECT_EQ(listed.status, 0) << listed.err;
    EXPECT_EQ(listed.out, e.run({"assets", "list"}).out);  // the command's own output, as without tracing
    EXPECT_NE(listed.err.find("ddctl: spans not exported"), std::string::npos) << listed.err;
    EXPECT_NE(listed.err.find(url), std::string::npos) << listed.err;
}

}  // namespace
