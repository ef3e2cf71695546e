# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# Builds tests/consumer/meson_project, a user's meson project with
# digital_delivery as a subproject (a link to DD_SOURCE_DIR), as a user would:
# a plain build compiles only the header-only program, nothing of ours (no
# compiled library, sandbox or ddctl); installing it installs none of our
# files; the program that links dependency('digital_delivery_compiled') is in
# the build when asked for (a dry run: `ninja -n consumer_compiled` plans the
# compiled library of the subproject and the link; CI's meson step compiles
# that library from the same meson.build). Runs the header-only program.
#   -DDD_SOURCE_DIR=... -DWORK_DIR=... -DCXX=...
include(${CMAKE_CURRENT_LIST_DIR}/consumer_common.cmake)
find_program(MESON meson REQUIRED)
find_program(NINJA NAMES ninja ninja-build REQUIRED)
set(src ${WORK_DIR}/src)
file(COPY ${CMAKE_CURRENT_LIST_DIR}/meson_project/meson.build ${CMAKE_CURRENT_LIST_DIR}/project/minimal.cpp
          DESTINATION ${src})
file(MAKE_DIRECTORY ${src}/subprojects)
file(CREATE_LINK ${DD_SOURCE_DIR} ${src}/subprojects/digital_delivery SYMBOLIC)
set(ENV{CXX} ${CXX})
run(${MESON} setup ${WORK_DIR}/build ${src} --prefix ${WORK_DIR}/prefix)
run(${NINJA} -C ${WORK_DIR}/build)
file(GLOB_RECURSE built LIST_DIRECTORIES false ${WORK_DIR}/build/subprojects/*)
list(FILTER built INCLUDE REGEX "\\.(o|a|so)$|/(digital-delivery-sandbox|ddctl)$")
if(built)
    message(FATAL_ERROR "a plain build of a project that uses dependency('digital_delivery') built: ${built}")
endif()
run(${MESON} install -C ${WORK_DIR}/build --quiet)
file(GLOB_RECURSE installed LIST_DIRECTORIES false RELATIVE ${WORK_DIR}/prefix ${WORK_DIR}/prefix/*)
if(NOT installed STREQUAL "bin/consumer")
    message(FATAL_ERROR "installing the user's project installed more than its bin/consumer: ${installed}")
endif()
execute_process(COMMAND ${NINJA} -C ${WORK_DIR}/build -n consumer_compiled RESULT_VARIABLE rc OUTPUT_VARIABLE plan
                ERROR_VARIABLE plan)
if(NOT rc EQUAL 0 OR NOT plan MATCHES "digital_delivery\\.cpp\\.o" OR NOT plan MATCHES "Linking target consumer_compiled")
    message(FATAL_ERROR "`ninja -n consumer_compiled` does not plan the compiled library and the link (exit ${rc}):\n${plan}")
endif()
run(${WORK_DIR}/build/consumer)
