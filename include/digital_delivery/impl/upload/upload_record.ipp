//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_IMPL_UPLOAD_UPLOAD_RECORD_IPP
#define DIGITAL_DELIVERY_IMPL_UPLOAD_UPLOAD_RECORD_IPP

// The names of an upload record's stages (<digital_delivery/upload_record.hpp>).

#include <digital_delivery/upload_record.hpp>

#include <string_view>

namespace digital_delivery {

DIGITAL_DELIVERY_DECL std::string_view to_string(upload_stage s) noexcept
{
    switch (s)
    {
    case upload_stage::creating: return "creating";
    case upload_stage::created: return "created";
    case upload_stage::uploaded: return "uploaded";
    case upload_stage::committed: return "committed";
    }
    return "unknown";
}

}  // namespace digital_delivery

#endif
