// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
#include <digital_delivery.hpp>

int other_translation_unit()
{
    // Uses inline library functions also used by main.cpp.
    auto ts = digital_delivery::parse_timestamp("2024-01-01T00:00:00Z");
    auto ec = digital_delivery::make_error_code(digital_delivery::api_errc::order_not_found);
    return ts && ec == digital_delivery::condition::not_found ? 42 : 0;
}
