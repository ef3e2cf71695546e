// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The SQLite component compiled once (separate-compilation mode): the CMake
// target digital_delivery::sqlite_compiled (meson:
// dependency('digital_delivery_sqlite_compiled')). It links libsqlite3;
// digital_delivery::compiled does not.
#include <digital_delivery/sqlite_src.hpp>
