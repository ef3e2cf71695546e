//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// A directory of a test's own under the system's temporary directory,
// removed with what it holds.
#ifndef DIGITAL_DELIVERY_TESTS_TEMP_DIR_HPP
#define DIGITAL_DELIVERY_TESTS_TEMP_DIR_HPP

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

#include <stdlib.h>

namespace dd_test {

/// Made by the constructor (std::runtime_error when it cannot be), removed
/// by the destructor.
struct temp_dir
{
    std::string path;
    /// \param prefix The start of the directory's name.
    explicit temp_dir(const std::string& prefix = "dd-test")
    {
        std::string t = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
        if (!::mkdtemp(t.data()))
            throw std::runtime_error("mkdtemp " + t + ": " + std::strerror(errno));
        path = t;
    }
    ~temp_dir()
    {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
};

}  // namespace dd_test

#endif
