# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# ctest's (and meson's) entry to the OTLP schema check:
#   cmake -D NODE=<node> -D DIR=<this folder> -D SCRIPT=<a script of DIR>
#         [-D SCRIPT_ARGS=<its options, separated by commas>]
#         [-D OUT=<file> (-D TESTS=<a test program> -D FILTER=<gtest filter> | -P run_node.cmake -- COMMAND...)]
#         -P run_node.cmake
# With TESTS, the test program first writes the exporter's file to OUT
# (DD_OTLP_SCHEMA_OUT); with a COMMAND after `--`, that command does (it names
# OUT itself). SCRIPT then checks OUT.
if(NOT NODE)
    message(FATAL_ERROR "node not found: tests/install_deps.sh installs nodejs and the pinned OTLP schema (npm ci)")
endif()
if(NOT EXISTS "${DIR}/node_modules/@opentelemetry/otlp-transformer/build/src/generated/root.js")
    message(FATAL_ERROR "the OTLP schema is not installed: run tests/install_deps.sh (npm ci in ${DIR})")
endif()
set(producer "")
set(after_dashes FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last})
    if(after_dashes)
        list(APPEND producer "${CMAKE_ARGV${i}}")
    elseif(CMAKE_ARGV${i} STREQUAL "--")
        set(after_dashes TRUE)
    endif()
endforeach()
if(TESTS)
    set(producer "${TESTS}" "--gtest_filter=${FILTER}")
endif()
set(args "")
if(SCRIPT_ARGS)
    string(REPLACE "," ";" args "${SCRIPT_ARGS}")
endif()
if(OUT)
    file(REMOVE "${OUT}")
    set(ENV{DD_OTLP_SCHEMA_OUT} "${OUT}")
    execute_process(COMMAND ${producer} RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "${producer} failed (${rc})")
    endif()
    list(APPEND args "${OUT}")
endif()
execute_process(COMMAND "${NODE}" "${DIR}/${SCRIPT}" ${args} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${SCRIPT} ${args} failed (${rc})")
endif()
