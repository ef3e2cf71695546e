//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_ID_LIST_HPP
#define DIGITAL_DELIVERY_ID_LIST_HPP

/// \file
/// The id lists of the request models: a view of the caller's strings that
/// refuses a temporary container or a braced list at compile time (it would
/// be destroyed before the request is built).

#include <digital_delivery/list_ref.hpp>

#include <string>

namespace digital_delivery {

/// A view of ids: a named array or a named std::vector<std::string> that
/// outlives the call (`const std::string ids[] = {a.id, b.id}; ... .asset_ids = ids`).
using id_list = list_ref<std::string>;

}  // namespace digital_delivery

#endif
