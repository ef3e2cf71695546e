# The Boost versions CMake accepts (cmake/digital_delivery-boost.cmake, used by
# CMakeLists.txt and the installed package): with stand-in Boost packages of
# the versions given, a project that applies the rule
#   - refuses 1.80 with a message that names the versions tested,
#   - accepts 1.83 (tested) without a warning,
#   - accepts 1.93 (newer, not tested) with a warning that names them.
# -DDD_SOURCE_DIR=... -DWORK_DIR=...
include(${CMAKE_CURRENT_LIST_DIR}/consumer_common.cmake)
include(${DD_SOURCE_DIR}/cmake/digital_delivery-boost.cmake)
string(REPLACE ";" ", " tested "${DIGITAL_DELIVERY_TESTED_BOOST_VERSIONS}")
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
    set(all "${out}${err}")
    string(REGEX REPLACE "[ \n]+" " " flat "${all}")
    if(expected STREQUAL "refused")
        if(rc EQUAL 0 OR NOT flat MATCHES "Boost ${version} found .*needs Boost 1.81 or later \\(tested: ${tested}\\)")
            message(FATAL_ERROR "Boost ${version} was not refused with the tested versions named:\n${all}")
        endif()
    elseif(NOT rc EQUAL 0 OR NOT flat MATCHES "accepted Boost ${version}")
        message(FATAL_ERROR "Boost ${version} was not accepted:\n${all}")
    elseif(expected STREQUAL "warned" AND NOT flat MATCHES "CMake Warning.*Boost ${version} is not one of the versions it is tested with \\(${tested}\\)")
        message(FATAL_ERROR "Boost ${version} was accepted without the warning:\n${all}")
    elseif(expected STREQUAL "accepted" AND flat MATCHES "Warning")
        message(FATAL_ERROR "Boost ${version}, a tested version, got a warning:\n${all}")
    endif()
    message("Boost ${version}: ${expected}")
endforeach()
