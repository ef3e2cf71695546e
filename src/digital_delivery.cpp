// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The library's implementation compiled once (separate-compilation mode).
// Built and installed as the CMake target digital_delivery::compiled (meson:
// dependency('digital_delivery_compiled')): link it instead of writing this
// translation unit yourself; it defines DIGITAL_DELIVERY_SEPARATE_COMPILATION
// for everything that links it.
#include <digital_delivery/src.hpp>
