# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
"""conan.tools.build of the stand-in: check_min_cppstd, can_run."""
from conan.errors import ConanInvalidConfiguration


def check_min_cppstd(conanfile, cppstd):
    value = conanfile.settings.get_safe("compiler.cppstd")
    if value is None:
        return
    digits = int(str(value).replace("gnu", ""))
    # 98 is older than 11
    if (digits if digits != 98 else -2) < int(cppstd):
        raise ConanInvalidConfiguration(f"requires C++{cppstd}, compiler.cppstd is {value}")


def can_run(conanfile):
    return True
