# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# Compiles every public header on its own (header-only mode, -fsyntax-only):
# each header includes what it uses, and is warning-free under a user's
# -Wall -Wextra -Werror (no -Wno-missing-field-initializers here), also where
# users designated-initialize our structs (designated_init.py).
# -DCXX=... -DINCLUDE_DIR=... -DWORK_DIR=... [-DPYTHON=python3] [-DSHARD=i -DSHARDS=n]
# SHARD/SHARDS: this run checks the headers whose index modulo n is i (ctest
# runs the shards side by side), and shard 0 the designated initializers.
if(NOT SHARDS)
    set(SHARDS 1)
    set(SHARD 0)
endif()
file(GLOB_RECURSE all_headers RELATIVE ${INCLUDE_DIR} ${INCLUDE_DIR}/*.hpp)
list(SORT all_headers)
list(FILTER all_headers EXCLUDE REGEX "/impl/|src\\.hpp$")  # implementation files are included by their headers
set(headers "")
set(index 0)
foreach(h IN LISTS all_headers)
    math(EXPR mine "${index} % ${SHARDS}")
    if(mine EQUAL SHARD)
        list(APPEND headers ${h})
    endif()
    math(EXPR index "${index} + 1")
endforeach()
file(MAKE_DIRECTORY ${WORK_DIR})
set(failed "")
foreach(h IN LISTS headers)
    string(MAKE_C_IDENTIFIER ${h} id)
    file(WRITE ${WORK_DIR}/${id}.cpp "#include <${h}>\n#include <${h}>\n")
    execute_process(COMMAND ${CXX} -std=c++20 -fsyntax-only -Wall -Wextra -Werror
                            -I${INCLUDE_DIR} ${WORK_DIR}/${id}.cpp
                    RESULT_VARIABLE rc ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        message("not self-contained: ${h}\n${err}")
        list(APPEND failed ${h})
    endif()
endforeach()
list(LENGTH headers n)
if(failed)
    message(FATAL_ERROR "headers that do not compile alone: ${failed}")
endif()
list(LENGTH all_headers total)
message("${n} headers (shard ${SHARD} of ${SHARDS}, ${total} in all) compile on their own")
if(NOT SHARD EQUAL 0)
    return()
endif()

# Designated initializers as users write them ({.api_key = key}): g++ 12 warns
# (-Wmissing-field-initializers, in -Wextra) at the user's line for every
# omitted member without a default member initializer. Every public struct,
# initialized with its first member only, compiles warning-free.
if(PYTHON)
    execute_process(COMMAND ${PYTHON} ${CMAKE_CURRENT_LIST_DIR}/designated_init.py ${INCLUDE_DIR}
                            ${WORK_DIR}/designated_init.cpp RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "designated_init.py failed")
    endif()
    execute_process(COMMAND ${CXX} -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I${INCLUDE_DIR}
                            ${WORK_DIR}/designated_init.cpp
                    RESULT_VARIABLE rc ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "a public struct initialized as users do warns (give the member a default "
                            "member initializer, e.g. `{}`):\n${err}")
    endif()
else()
    message("python3 not given (-DPYTHON=...): the designated-initializer check did not run")
endif()
