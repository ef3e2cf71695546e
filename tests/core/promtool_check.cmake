# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# The Prometheus exposition of metrics_observer, checked by Prometheus's own
# `promtool check metrics` (parse and lint): every series of the exposition
# (metrics_exposition.cpp), label values that need escaping included. A control
# proves the check can fail: the same text with one label value's quotes left
# unescaped is refused.
# -DPROGRAM=metrics_exposition -DPROMTOOL=... -DWORK_DIR=...
if(NOT PROMTOOL)
    message(FATAL_ERROR "promtool not found: tests/install_deps.sh extracts it from Debian's prometheus "
                        "package into ${XDG_CACHE_HOME:-~/.cache}/digital_delivery/promtool (or configure with -DDD_PROMTOOL=...)")
endif()
file(MAKE_DIRECTORY ${WORK_DIR})
execute_process(COMMAND ${PROGRAM} OUTPUT_FILE ${WORK_DIR}/exposition.txt RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} failed: ${rc}")
endif()
execute_process(COMMAND ${PROMTOOL} check metrics INPUT_FILE ${WORK_DIR}/exposition.txt
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT "${out}${err}" STREQUAL "")
    message(FATAL_ERROR "promtool check metrics refused the exposition (exit ${rc}):\n${out}${err}")
endif()
file(READ ${WORK_DIR}/exposition.txt text)
string(FIND "${text}" [[\"quoted\"]] escaped)
if(escaped EQUAL -1)
    message(FATAL_ERROR "the exposition lacks the escaped label value the control breaks")
endif()
string(REPLACE [[\"quoted\"]] [["quoted"]] broken "${text}")
file(WRITE ${WORK_DIR}/broken.txt "${broken}")
execute_process(COMMAND ${PROMTOOL} check metrics INPUT_FILE ${WORK_DIR}/broken.txt
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
if(rc EQUAL 0)
    message(FATAL_ERROR "control: promtool accepted a label value with unescaped quotes")
endif()
string(REGEX MATCHALL "\n# TYPE " types "${text}")
list(LENGTH types n)
message("promtool check metrics: ${n} metric families accepted; the broken control refused")
