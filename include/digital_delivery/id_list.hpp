//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
//
#ifndef DIGITAL_DELIVERY_ID_LIST_HPP
#define DIGITAL_DELIVERY_ID_LIST_HPP

/// \file
/// The id lists of the request models: a view of the caller's strings, like
/// the models' string_views, that refuses a temporary container at compile
/// time (it would be destroyed before the request is sent).

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace digital_delivery {

/// A view of ids: an array or a std::vector<std::string> that outlives the
/// call (`const std::string ids[] = {a.id, b.id}; ... .asset_ids = ids`).
class id_list
{
public:
    constexpr id_list() noexcept = default;
    constexpr id_list(std::span<const std::string> ids) noexcept : ids_(ids) {}
    template <std::size_t N>
    constexpr id_list(const std::string (&ids)[N]) noexcept : ids_(ids)
    {
    }
    id_list(const std::vector<std::string>& ids) noexcept : ids_(ids) {}
    /// A temporary vector would be gone before the request is built.
    id_list(std::vector<std::string>&&) = delete;

    constexpr std::span<const std::string> span() const noexcept { return ids_; }
    constexpr auto begin() const noexcept { return ids_.begin(); }
    constexpr auto end() const noexcept { return ids_.end(); }
    constexpr std::size_t size() const noexcept { return ids_.size(); }
    constexpr bool empty() const noexcept { return ids_.empty(); }
    constexpr const std::string& operator[](std::size_t i) const noexcept { return ids_[i]; }

private:
    std::span<const std::string> ids_;
};

}  // namespace digital_delivery

#endif
