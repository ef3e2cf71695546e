// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// `ddctl assets upload` SIGKILLed at 20 seeded moments, then run again: after
// the recovering run each file has exactly one asset, whose bytes (read back
// through a purchase's download entry) have the file's SHA-256, and no asset
// is left without its file.
//
// The moments are hit exactly: ddctl talks to the sandbox through two relays
// of this process (the API's, and the storage's: the sandbox's --public-url),
// which kill ddctl when a given request passes: before POST /assets reaches
// the sandbox; after it did, before its answer reaches ddctl; before the PUT;
// after N bytes of the PUT's body (N seeded); after the PUT, before its
// answer; before the GET that commits.
#include "sandbox_process.hpp"

#include <digital_delivery/impl/crypto/sha256.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
namespace json = boost::json;
using dd_test::sandbox_process;

namespace {

enum class moment
{
    before_create,    // POST /assets held: the sandbox never sees it
    create_answered,  // the sandbox created the asset; its answer never reaches ddctl
    before_put,       // the create's answer arrived; the PUT held
    during_put,       // after `offset` bytes of the PUT went to the storage
    put_answered,     // the storage took the body; its answer never reaches ddctl
    before_commit,    // the GET that confirms the asset held
};
const char* name_of(moment m)
{
    static const char* names[] = {"before_create", "create_answered", "before_put", "during_put", "put_answered", "before_commit"};
    return names[static_cast<int>(m)];
}

// What the relays kill ddctl at, for one run.
struct plan
{
    std::atomic<pid_t> pid{0};
    moment at = moment::before_create;
    std::size_t offset = 0;
    std::atomic<bool> armed{false}, fired{false};

    bool kill_now()
    {
        bool expected = true;
        if (!armed.compare_exchange_strong(expected, false))
            return false;
        pid_t p;
        while ((p = pid.load()) <= 0)
            std::this_thread::yield();
        fired = true;
        ::kill(p, SIGKILL);
        return true;
    }
};

// 127.0.0.1:port -> the sandbox. `storage`: the storage's relay (PUTs), else the API's.
class relay
{
public:
    relay(bool storage, plan& p) : storage_(storage), plan_(p)
    {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 64) != 0)
            throw std::runtime_error("cannot listen");
        socklen_t len = sizeof a;
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
        thread_ = std::thread([this] { accept_loop(); });
    }
    ~relay()
    {
        ::shutdown(fd_, SHUT_RDWR);
        thread_.join();
        ::close(fd_);
        std::lock_guard<std::mutex> lk(mtx_);
        for (auto& k : conns_)
        {
            ::shutdown(k->c, SHUT_RDWR);
            ::shutdown(k->s, SHUT_RDWR);
        }
        for (auto& t : threads_)
            t.join();
    }
    int port() const { return port_; }
    /// Where connections go (set before the first one).
    void set_target(int port) { target_ = port; }

private:
    struct conn
    {
        int c, s;
        std::atomic<bool> answer_armed{false};  // kill when the server's next bytes arrive
        std::atomic<int> left{2};
    };

    void accept_loop()
    {
        for (;;)
        {
            const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
            if (c < 0)
                return;
            const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            sockaddr_in a{};
            a.sin_family = AF_INET;
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            a.sin_port = htons(static_cast<std::uint16_t>(target_));
            if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
            {
                ::close(c);
                ::close(s);
                continue;
            }
            auto k = std::make_shared<conn>();
            k->c = c;
            k->s = s;
            std::lock_guard<std::mutex> lk(mtx_);
            conns_.push_back(k);
            threads_.emplace_back([this, k] { upstream(k); });
            threads_.emplace_back([this, k] { downstream(k); });
        }
    }
    static bool send_all(int to, const char* p, std::size_t n)
    {
        while (n > 0)
        {
            const ssize_t w = ::send(to, p, n, MSG_NOSIGNAL);
            if (w <= 0)
                return false;
            p += w;
            n -= static_cast<std::size_t>(w);
        }
        return true;
    }
    void finish(const std::shared_ptr<conn>& k)
    {
        ::shutdown(k->c, SHUT_RDWR);
        ::shutdown(k->s, SHUT_RDWR);
        if (--k->left == 0)
        {
            ::close(k->c);
            ::close(k->s);
        }
    }
    // ddctl -> sandbox
    void upstream(std::shared_ptr<conn> k)
    {
        std::vector<char> buf(64 * 1024);
        std::size_t put_bytes = 0;
        bool in_put = false;
        for (;;)
        {
            const ssize_t n = ::read(k->c, buf.data(), buf.size());
            if (n <= 0)
                break;
            std::string_view chunk(buf.data(), static_cast<std::size_t>(n));
            const bool armed = plan_.armed.load();
            if (!storage_ && armed)
            {
                const bool create = chunk.find("POST ") == 0 && chunk.find("/assets HTTP/1.1") != std::string_view::npos;
                const bool get = chunk.find("GET ") == 0 && chunk.find("/assets/") != std::string_view::npos;
                if (create && plan_.at == moment::before_create && plan_.kill_now())
                    break;
                if (create && plan_.at == moment::create_answered)
                    k->answer_armed = true;
                if (get && plan_.at == moment::before_commit && plan_.kill_now())
                    break;
            }
            if (storage_ && chunk.find("PUT ") == 0)
            {
                in_put = true;
                put_bytes = 0;
                if (armed && plan_.at == moment::before_put && plan_.kill_now())
                    break;
                if (armed && plan_.at == moment::put_answered)
                    k->answer_armed = true;
            }
            if (storage_ && in_put && armed && plan_.at == moment::during_put)
            {
                // Forward up to the offset (the request head counts too), then kill.
                if (put_bytes + chunk.size() >= plan_.offset)
                {
                    const std::size_t part = plan_.offset - put_bytes;
                    send_all(k->s, chunk.data(), part);
                    if (plan_.kill_now())
                        break;
                }
            }
            put_bytes += chunk.size();
            if (!send_all(k->s, chunk.data(), chunk.size()))
                break;
        }
        finish(k);
    }
    // sandbox -> ddctl
    void downstream(std::shared_ptr<conn> k)
    {
        std::vector<char> buf(64 * 1024);
        for (;;)
        {
            const ssize_t n = ::read(k->s, buf.data(), buf.size());
            if (n <= 0)
                break;
            if (k->answer_armed && plan_.kill_now())
                break;
            if (!send_all(k->c, buf.data(), static_cast<std::size_t>(n)))
                break;
        }
        finish(k);
    }

    int fd_ = -1, port_ = 0;
    std::atomic<int> target_{0};
    bool storage_;
    plan& plan_;
    std::thread thread_;
    std::mutex mtx_;
    std::vector<std::shared_ptr<conn>> conns_;
    std::vector<std::thread> threads_;
};

int sandbox_port(const std::string& origin) { return std::stoi(origin.substr(origin.rfind(':') + 1)); }

std::string path_of(const std::string& url)
{
    const auto p = url.find('/', url.find("://") + 3);
    return p == std::string::npos ? "/" : url.substr(p);
}

std::string sha_hex(const std::string& data)
{
    digital_delivery::detail::sha256 h;
    h.update(data);
    return digital_delivery::detail::sha256::to_hex(h.finish());
}

// GET `url` (http://127.0.0.1:PORT/...) with its own Host (presigned URLs sign
// it); the status and the body (Connection: close, read to the end).
std::pair<int, std::string> http_get(const std::string& url)
{
    const auto host_start = url.find("://") + 3;
    const auto path_start = url.find('/', host_start);
    const std::string host = url.substr(host_start, path_start - host_start);
    const int port = std::stoi(host.substr(host.find(':') + 1));
    const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    {
        ::close(s);
        return {0, {}};
    }
    const std::string req = "GET " + url.substr(path_start) + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n";
    ::send(s, req.data(), req.size(), MSG_NOSIGNAL);
    std::string all;
    char buf[65536];
    for (ssize_t n; (n = ::read(s, buf, sizeof buf)) > 0;)
        all.append(buf, static_cast<std::size_t>(n));
    ::close(s);
    const auto end = all.find("\r\n\r\n");
    if (all.size() < 12 || end == std::string::npos || all.find("chunked") < end)
        return {0, all};
    return {std::stoi(all.substr(9, 3)), all.substr(end + 4)};
}

struct temp_dir
{
    fs::path path;
    temp_dir()
    {
        std::string t = (fs::temp_directory_path() / "ddctl-journal-XXXXXX").string();
        if (!::mkdtemp(t.data()))
            throw std::runtime_error("mkdtemp");
        path = t;
    }
    ~temp_dir() { fs::remove_all(path); }
};

// Runs ddctl with `env`; `p.pid` is set as soon as it started. Returns its exit
// status (128 + signal when killed) and stdout.
std::pair<int, std::string> run_ddctl(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                                      const fs::path& dir, plan& p)
{
    std::vector<std::string> envs;
    for (const auto& [k, v] : env)
        envs.push_back(k + "=" + v);
    std::vector<char*> envp, argv;
    for (auto& e : envs)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string exe = DDCTL_EXE;
    argv.push_back(exe.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    const fs::path out = dir / "out", err = dir / "err";
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid = -1;
    if (::posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), envp.data()) != 0)
        throw std::runtime_error("cannot start ddctl");
    posix_spawn_file_actions_destroy(&fa);
    p.pid = pid;
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR)
    {
    }
    p.pid = 0;
    std::ifstream o(out), e(err);
    std::stringstream so, se;
    so << o.rdbuf();
    se << e.rdbuf();
    const int status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (status != 0 && status != 128 + SIGKILL)
        ADD_FAILURE() << "ddctl " << args[0] << " " << args[1] << " exited " << status << ": " << se.str();
    return {status, so.str()};
}

}  // namespace

TEST(ddctl_journal, killed_at_twenty_seeded_moments_then_recovered)
{
    plan p;
    relay api(false, p), storage(true, p);
    // The sandbox's presigned URLs point at the storage relay.
    sandbox_process sb({"--no-rate-limit", "--public-url", "http://127.0.0.1:" + std::to_string(storage.port())});
    api.set_target(sandbox_port(sb.origin()));
    storage.set_target(sandbox_port(sb.origin()));
    const auto store = sb.create_store({"--no-rate-limit"}, "journal-key-" + std::to_string(::getpid()));
    temp_dir home;
    const std::map<std::string, std::string> env{
        {"DIGITAL_DELIVERY_BASE_URL", "http://127.0.0.1:" + std::to_string(api.port()) + path_of(store.base_url)},
        {"DIGITAL_DELIVERY_API_KEY", store.api_key},
        {"HOME", home.path.string()},
        {"XDG_CONFIG_HOME", home.path.string()},
        {"XDG_STATE_HOME", (home.path / "state").string()},
        {"PATH", "/usr/bin:/bin"}};

    const unsigned seed = 20261205;
    std::mt19937 rng(seed);
    std::map<std::string, std::string> sha_of;  // filename -> SHA-256 of its content
    constexpr int moments = 20;
    for (int i = 0; i < moments; ++i)
    {
        const std::string filename = "file-" + std::to_string(i) + ".bin";
        const fs::path file = home.path / filename;
        std::string data(std::uniform_int_distribution<std::size_t>(64 * 1024, 256 * 1024)(rng), '\0');
        for (auto& c : data)
            c = static_cast<char>(rng());
        std::ofstream(file, std::ios::binary) << data;
        sha_of[filename] = sha_hex(data);

        p.at = static_cast<moment>(i % 6);
        p.offset = std::uniform_int_distribution<std::size_t>(1, data.size())(rng);
        p.fired = false;
        p.armed = true;
        const std::string what = std::string(name_of(p.at)) + " (moment " + std::to_string(i) + ", offset " +
                                 std::to_string(p.offset) + ")";
        auto [killed, out1] = run_ddctl({"assets", "upload", file.string(), "--no-progress", "--rate-limit-points", "100000"}, env, home.path, p);
        p.armed = false;
        EXPECT_TRUE(p.fired) << what << ": the moment was never reached";
        EXPECT_EQ(killed, 128 + SIGKILL) << what;
        auto [status, out2] = run_ddctl({"assets", "upload", file.string(), "--no-progress", "-o", "json", "--rate-limit-points", "100000"}, env, home.path, p);
        ASSERT_EQ(status, 0) << what;
        EXPECT_EQ(json::parse(out2).at("filename").as_string(), filename) << what;
    }

    // Every asset of the store: exactly one per file, none without its file.
    const auto list = sb.request("GET", path_of(store.base_url) + "/assets?per_page=250", {}, store.api_key);
    ASSERT_EQ(list.status, 200) << list.body;
    std::map<std::string, std::string> asset_of;  // filename -> id
    const json::value listed = json::parse(list.body);
    for (const auto& a : listed.at("assets").as_array())
    {
        const std::string f(a.at("filename").as_string());
        EXPECT_TRUE(asset_of.emplace(f, std::string(a.at("id").as_string())).second) << "two assets for " << f;
    }
    EXPECT_EQ(asset_of.size(), static_cast<std::size_t>(moments));
    // Each asset's bytes, as a buyer downloads them: a product with every
    // asset, one purchase, its download entries.
    json::array ids;
    for (const auto& [f, id] : asset_of)
        ids.push_back(json::value(id));
    const auto product = sb.request("POST", path_of(store.base_url) + "/digital_products",
                                    json::serialize(json::object{{"digital_product", json::object{{"store_product_id", 424242},
                                                                                                  {"asset_ids", ids}}}}),
                                    store.api_key);
    ASSERT_EQ(product.status, 201) << product.body;
    const auto order = sb.request("POST", "/sandbox/purchases",
                                  R"({"store_product_id": 424242, "email": "ada@example.com"})", store.api_key);
    ASSERT_EQ(order.status, 201) << order.body;
    const std::string order_id(json::parse(order.body).at("order").at("id").as_string());
    const auto downloads = sb.request("GET", path_of(store.base_url) + "/orders/" + order_id + "/downloads", {}, store.api_key);
    ASSERT_EQ(downloads.status, 200) << downloads.body;
    std::set<std::string> checked;
    const json::value entries = json::parse(downloads.body);
    for (const auto& d : entries.at("downloads").as_array())
    {
        const std::string f(d.at("file_name").as_string());
        ASSERT_TRUE(d.at("download_url").is_string()) << f << " has no download URL (not uploaded)";
        const auto [status, bytes] = http_get(std::string(d.at("download_url").as_string()));
        EXPECT_EQ(status, 200) << f << ": " << bytes;
        EXPECT_EQ(sha_hex(bytes), sha_of[f]) << f << ": the downloaded bytes differ";
        checked.insert(f);
    }
    EXPECT_EQ(checked.size(), static_cast<std::size_t>(moments));
}
