# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# The Boost this library is built with: 1.81 or later, the versions tested
# named in every message. Used by CMakeLists.txt and by the installed package
# (digital_delivery-config.cmake), the same rule for both.
#
# digital_delivery_find_boost([QUIET]): find_package(Boost COMPONENTS json url)
# (no version: a Boost that is too old gets the message below, not CMake's),
# (Boost_VERSION_STRING: x.y.z in config and module mode alike),
# then sets _dd_boost_error to why this Boost cannot be used (empty if it can)
# and warns, without failing, when its version is not one of those tested.
set(DIGITAL_DELIVERY_TESTED_BOOST_VERSIONS 1.81 1.83 1.92)
macro(digital_delivery_find_boost)
    find_package(Boost ${ARGN} COMPONENTS json url)
    set(_dd_boost_error "")
    string(REPLACE ";" ", " _dd_boost_tested "${DIGITAL_DELIVERY_TESTED_BOOST_VERSIONS}")
    if(NOT Boost_FOUND)
        set(_dd_boost_error "Boost (with its json and url libraries) was not found: digital_delivery needs "
                            "Boost 1.81 or later (tested: ${_dd_boost_tested}). Point CMAKE_PREFIX_PATH or "
                            "Boost_DIR at one")
    elseif(Boost_VERSION_STRING VERSION_LESS 1.81)
        set(_dd_boost_error "Boost ${Boost_VERSION_STRING} found (${Boost_INCLUDE_DIRS}): digital_delivery "
                            "needs Boost 1.81 or later (tested: ${_dd_boost_tested}). Point CMAKE_PREFIX_PATH or "
                            "Boost_DIR at a newer one")
    else()
        string(REGEX MATCH "^[0-9]+\\.[0-9]+" _dd_boost_minor "${Boost_VERSION_STRING}")
        if(NOT _dd_boost_minor IN_LIST DIGITAL_DELIVERY_TESTED_BOOST_VERSIONS)
            message(WARNING "digital_delivery: Boost ${Boost_VERSION_STRING} is not one of the versions it is tested with "
                            "(${_dd_boost_tested}). It is expected to work; if it does not, tell us what fails.")
        endif()
    endif()
    string(REPLACE ";" "" _dd_boost_error "${_dd_boost_error}")
endmacro()
