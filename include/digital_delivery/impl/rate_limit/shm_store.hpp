//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_INTERNAL_SHM_STORE_HPP
#define DIGITAL_DELIVERY_IMPL_INTERNAL_SHM_STORE_HPP

/// \file
/// The shared-memory rate-limit store (shm_rate_limit_store): one
/// gcra_cell per (base URL, API key) in a POSIX shared-memory object, for
/// every process of one host.
///
/// - Name: "/digital_delivery.rl." + 32 hex digits of SHA-256(normalised base
///   URL, API key): the key cannot be read back from it.
/// - Created on first use with O_EXCL and mode 0600 (owner only); an existing
///   object is used only if it belongs to this user, grants nothing to group
///   or others, and holds this layout version. It is never unlinked by the
///   library: it outlives processes coming and going (a few dozen bytes;
///   `rm /dev/shm/digital_delivery.rl.*` when no process runs).
/// - Zero-filled (fresh from ftruncate) is the valid initial state, so a
///   process dying while creating it leaves nothing half-done: the next one
///   finishes the ftruncate.

#include <digital_delivery/impl/rate_limit/sansio/gcra_store.hpp>
#include <digital_delivery/impl/crypto/sha256.hpp>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace digital_delivery {
namespace detail {

struct shm_layout
{
    static constexpr std::uint64_t version = 0x6464726c00000001ull;  // "ddrl" v1
    std::atomic<std::uint64_t> layout;  // 0 (fresh) or version
    gcra_cell cell;
};

/// The shared-memory object's name for (normalised base URL, API key).
inline std::string shm_store_name(std::string_view normalised_base_url, std::string_view api_key)
{
    return "/digital_delivery.rl." + store_key_digest(normalised_base_url, api_key);
}

/// One mapping of a store's segment.
class shm_segment
{
public:
    /// Opens (creating if needed) the segment `name`. nullptr and `why`
    /// (no secret in it: the name is a hash) when it cannot be used.
    static std::shared_ptr<shm_segment> open(const std::string& name, std::string& why)
    {
        constexpr std::size_t size = sizeof(shm_layout);
        int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 && errno == EEXIST)
            fd = ::shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
        if (fd < 0)
        {
            why = std::string("shm_open ") + name + ": " + std::strerror(errno);
            return nullptr;
        }
        struct fd_guard
        {
            int fd;
            ~fd_guard() { ::close(fd); }
        } guard{fd};
        struct stat st{};
        if (::fstat(fd, &st) != 0)
        {
            why = std::string("fstat ") + name + ": " + std::strerror(errno);
            return nullptr;
        }
        if (st.st_uid != ::geteuid() || (st.st_mode & 077) != 0)
        {
            why = "shared memory " + name + " belongs to another user or is open to group/others: not used";
            return nullptr;
        }
        // A creator that died before its ftruncate left a 0-byte object:
        // growing it zero-fills, which is the initial state.
        if (static_cast<std::size_t>(st.st_size) < size && ::ftruncate(fd, static_cast<off_t>(size)) != 0)
        {
            why = std::string("ftruncate ") + name + ": " + std::strerror(errno);
            return nullptr;
        }
        void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
        {
            why = std::string("mmap ") + name + ": " + std::strerror(errno);
            return nullptr;
        }
        auto seg = std::shared_ptr<shm_segment>(new shm_segment(p, size));
        std::uint64_t v = 0;
        auto& layout = seg->layout().layout;
        if (!layout.compare_exchange_strong(v, shm_layout::version) && v != shm_layout::version)
        {
            why = "shared memory " + name + " has another layout version: not used";
            return nullptr;
        }
        return seg;
    }

    ~shm_segment() { ::munmap(addr_, size_); }
    shm_segment(const shm_segment&) = delete;
    shm_segment& operator=(const shm_segment&) = delete;

    shm_layout& layout() noexcept { return *static_cast<shm_layout*>(addr_); }
    gcra_cell& cell() noexcept { return layout().cell; }

private:
    shm_segment(void* a, std::size_t n) noexcept : addr_(a), size_(n) {}
    void* addr_;
    std::size_t size_;
};

/// The mapping a shm_points keeps alive, a base so that it is initialised
/// before the gcra_points that works on its cell.
struct shm_mapping
{
    std::shared_ptr<shm_segment> seg;
};

/// gcra_points over a mapped segment (keeps the mapping alive).
class shm_points final : private shm_mapping, public gcra_points
{
public:
    shm_points(std::shared_ptr<shm_segment> s, double capacity, std::chrono::duration<double> window, bool hold)
        : shm_mapping{std::move(s)}, gcra_points(seg->cell(), capacity, window, hold)
    {
    }
};

}  // namespace detail
}  // namespace digital_delivery

#endif
