# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# digital_delivery_add_sandbox(<target>)
#
# For a test program of yours that uses <digital_delivery/testing/sandbox.hpp>:
# defines DIGITAL_DELIVERY_SANDBOX_EXE (the path of the digital-delivery-sandbox
# executable, digital_delivery::sandbox) for <target>, so that
# digital_delivery::testing::sandbox finds it, and builds the sandbox first
# when it is part of the same build (add_subdirectory). Links nothing: link
# <target> to digital_delivery::digital_delivery (or ::compiled) as usual.
#
# digital_delivery::sandbox is the executable: an imported target after
# find_package(digital_delivery) (installed in bin/), the built target after
# add_subdirectory (with DIGITAL_DELIVERY_BUILD_SANDBOX=ON). Use
# $<TARGET_FILE:digital_delivery::sandbox> for its path elsewhere, e.g. in
# add_test(... COMMAND ...) or an ENVIRONMENT test property.
function(digital_delivery_add_sandbox target)
    if(NOT TARGET ${target})
        message(FATAL_ERROR "digital_delivery_add_sandbox: '${target}' is not a target")
    endif()
    if(NOT TARGET digital_delivery::sandbox)
        message(FATAL_ERROR
            "digital_delivery_add_sandbox(${target}): this digital_delivery has no digital-delivery-sandbox "
            "(digital_delivery::sandbox): build it with -DDIGITAL_DELIVERY_BUILD_SANDBOX=ON "
            "(the default when digital_delivery is the top-level project)")
    endif()
    target_compile_definitions(${target} PRIVATE
        DIGITAL_DELIVERY_SANDBOX_EXE="$<TARGET_FILE:digital_delivery::sandbox>")
    get_target_property(_dd_sandbox_real digital_delivery::sandbox ALIASED_TARGET)
    if(_dd_sandbox_real)
        add_dependencies(${target} ${_dd_sandbox_real})
    endif()
endfunction()
