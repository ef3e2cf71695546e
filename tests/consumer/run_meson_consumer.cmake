# Builds tests/consumer/meson_project, a user's meson project with
# digital_delivery as a subproject (a link to DD_SOURCE_DIR), as a user would:
# a plain build compiles only the header-only program, nothing of ours (no
# compiled library, sandbox or ddctl); installing it installs none of our
# files; the program that links dependency('digital_delivery_compiled') builds
# when asked for. Runs both.   -DDD_SOURCE_DIR=... -DWORK_DIR=... -DCXX=...
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
run(${NINJA} -C ${WORK_DIR}/build consumer_compiled)
run(${WORK_DIR}/build/consumer)
run(${WORK_DIR}/build/consumer_compiled)
