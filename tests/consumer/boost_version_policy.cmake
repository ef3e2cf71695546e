# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# The Boost versions CMake accepts (cmake/digital_delivery-boost.cmake, used by
# CMakeLists.txt and the installed package), and meson.build: with stand-in
# Boost packages of the versions given, a project that applies the rule
#   - refuses 1.80 with a message that names the versions tested,
#   - accepts 1.83 (tested) without a warning,
#   - accepts 1.93 (newer, not tested) with a warning that names them.
# -DDD_SOURCE_DIR=... -DWORK_DIR=... [-DMESON=meson]
include(${CMAKE_CURRENT_LIST_DIR}/consumer_common.cmake)
include(${DD_SOURCE_DIR}/cmake/digital_delivery-boost.cmake)
string(REPLACE ";" ", " tested "${DIGITAL_DELIVERY_TESTED_BOOST_VERSIONS}")

# verdict(WHO VERSION EXPECTED RC OUTPUT REFUSED_RE ACCEPTED_RE WARNED_RE):
# fails unless the configuration of WHO with Boost VERSION (exit code RC,
# OUTPUT with runs of blanks made one space) went as EXPECTED: refused (RC not
# 0, OUTPUT matching REFUSED_RE), accepted (RC 0, ACCEPTED_RE, not WARNED_RE),
# warned (RC 0, ACCEPTED_RE and WARNED_RE).
function(verdict who version expected rc all refused_re accepted_re warned_re)
    string(REGEX REPLACE "[ \n]+" " " flat "${all}")
    if(expected STREQUAL "refused")
        if(rc EQUAL 0 OR NOT flat MATCHES "${refused_re}")
            message(FATAL_ERROR "${who}: Boost ${version} was not refused with the tested versions named:\n${all}")
        endif()
    elseif(NOT rc EQUAL 0 OR NOT flat MATCHES "${accepted_re}")
        message(FATAL_ERROR "${who}: Boost ${version} was not accepted:\n${all}")
    elseif(expected STREQUAL "warned" AND NOT flat MATCHES "${warned_re}")
        message(FATAL_ERROR "${who}: Boost ${version} was accepted without the warning:\n${all}")
    elseif(expected STREQUAL "accepted" AND flat MATCHES "${warned_re}")
        message(FATAL_ERROR "${who}: Boost ${version}, a tested version, got the warning:\n${all}")
    endif()
    message("${who}, Boost ${version}: ${expected}")
endfunction()
file(WRITE ${WORK_DIR}/project/CMakeLists.txt "cmake_minimum_required(VERSION 3.21)
project(policy LANGUAGES NONE)
include(${DD_SOURCE_DIR}/cmake/digital_delivery-boost.cmake)
digital_delivery_find_boost()
if(_dd_boost_error)
    message(FATAL_ERROR \"\${_dd_boost_error}\")
endif()
message(STATUS \"accepted Boost \${Boost_VERSION_STRING}\")
")
foreach(case 1.80.0:refused 1.83.0:accepted 1.93.0:warned)
    string(REPLACE ":" ";" case "${case}")
    list(GET case 0 version)
    list(GET case 1 expected)
    # A stand-in Boost package: what BoostConfig.cmake sets for its users.
    set(fake ${WORK_DIR}/boost-${version})
    file(WRITE ${fake}/BoostConfigVersion.cmake "set(PACKAGE_VERSION ${version})
set(PACKAGE_VERSION_COMPATIBLE TRUE)
")
    file(WRITE ${fake}/BoostConfig.cmake "set(Boost_VERSION ${version})
set(Boost_VERSION_STRING ${version})
set(Boost_INCLUDE_DIRS ${fake}/include)
set(Boost_json_FOUND TRUE)
set(Boost_url_FOUND TRUE)
set(Boost_FOUND TRUE)
")
    execute_process(COMMAND ${CMAKE_COMMAND} -S ${WORK_DIR}/project -B ${WORK_DIR}/build-${version}
                            -DBoost_DIR=${fake}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    verdict(CMake ${version} ${expected} "${rc}" "${out}${err}"
            "Boost ${version} found .*needs Boost 1.81 or later \\(tested: ${tested}\\)"
            "accepted Boost ${version}"
            "CMake Warning.*Boost ${version} is not one of the versions it is tested with \\(${tested}\\)")
endforeach()

# meson.build's rule, when meson is given (-DMESON=...): `meson setup` of this
# repository with BOOST_ROOT at a stand-in Boost of each version (the system's
# headers with another boost/version.hpp, its JSON and URL libraries copied
# under the version's names; meson reads the version from both).
if(NOT MESON)
    message("meson not given (-DMESON=...): meson.build's rule not checked")
    return()
endif()
foreach(case 1.80.0:refused 1.83.0:accepted 1.93.0:warned)
    string(REPLACE ":" ";" case "${case}")
    list(GET case 0 version)
    list(GET case 1 expected)
    string(REPLACE "." ";" parts "${version}")
    list(GET parts 0 major)
    list(GET parts 1 minor)
    math(EXPR number "${major} * 100000 + ${minor} * 100")
    set(fake ${WORK_DIR}/meson-boost-${version})
    file(MAKE_DIRECTORY ${fake}/include/boost ${fake}/lib)
    file(GLOB entries /usr/include/boost/*)
    foreach(e IN LISTS entries)
        get_filename_component(name ${e} NAME)
        if(NOT name STREQUAL "version.hpp")
            file(CREATE_LINK ${e} ${fake}/include/boost/${name} SYMBOLIC)
        endif()
    endforeach()
    file(WRITE ${fake}/include/boost/version.hpp
         "#define BOOST_VERSION ${number}\n#define BOOST_LIB_VERSION \"${major}_${minor}\"\n")
    foreach(lib json url)
        file(GLOB real /usr/lib/x86_64-linux-gnu/libboost_${lib}.so.*)
        list(GET real 0 real)
        file(COPY_FILE ${real} ${fake}/lib/libboost_${lib}.so.${version})
        file(CREATE_LINK libboost_${lib}.so.${version} ${fake}/lib/libboost_${lib}.so SYMBOLIC)
    endforeach()
    execute_process(COMMAND ${CMAKE_COMMAND} -E env BOOST_ROOT=${fake}
                            ${MESON} setup ${WORK_DIR}/meson-build-${version} ${DD_SOURCE_DIR}
                            -Dtests=false -Dcli=false -Dsandbox=false
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    verdict(meson ${version} ${expected} "${rc}" "${out}${err}"
            "Boost ${version} found: digital_delivery needs Boost 1.81 or later \\(tested: ${tested}\\)"
            "dependency Boost \\(found: json, url\\) found: YES ${version}"
            "WARNING: digital_delivery: Boost ${version} is not one of the versions it is tested with \\(${tested}\\)")
endforeach()
