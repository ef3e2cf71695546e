# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# Builds tests/consumer/sandbox_project as a user would and runs its test
# program (the sandbox fixture against digital-delivery-sandbox) with ctest.
#   -DMODE=find_package -DPREFIX=... -DDD_BINARY_DIR=... -DWORK_DIR=... -DCXX=...  (the package installed
#   in PREFIX by the test consumer_install)
#   -DMODE=subdirectory -DDD_SOURCE_DIR=... -DWORK_DIR=... -DCXX=...
include(${CMAKE_CURRENT_LIST_DIR}/consumer_common.cmake)
set(project_dir ${CMAKE_CURRENT_LIST_DIR}/sandbox_project)
if(MODE STREQUAL "find_package")
    if(NOT EXISTS ${PREFIX}/bin/digital-delivery-sandbox)
        message(FATAL_ERROR "the package does not install bin/digital-delivery-sandbox")
    endif()
    # ddctl, when the build has it (DIGITAL_DELIVERY_BUILD_CLI), and its bash completion
    if(EXISTS ${DD_BINARY_DIR}/tools/ddctl AND NOT (EXISTS ${PREFIX}/bin/ddctl AND
            EXISTS ${PREFIX}/share/bash-completion/completions/ddctl))
        message(FATAL_ERROR "the package does not install bin/ddctl and share/bash-completion/completions/ddctl")
    endif()
    run(${CMAKE_COMMAND} -S ${project_dir} -B ${WORK_DIR}/build -DDD_CONSUMER_MODE=find_package
        -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Debug)
elseif(MODE STREQUAL "subdirectory")
    run(${CMAKE_COMMAND} -S ${project_dir} -B ${WORK_DIR}/build -DDD_CONSUMER_MODE=subdirectory
        -DDD_SOURCE_DIR=${DD_SOURCE_DIR} -DCMAKE_CXX_COMPILER=${CXX})
else()
    message(FATAL_ERROR "MODE must be find_package or subdirectory")
endif()
cmake_host_system_information(RESULT jobs QUERY NUMBER_OF_PHYSICAL_CORES)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build --parallel ${jobs})
# The environment must not choose the executable: the compile definition does.
unset(ENV{DIGITAL_DELIVERY_SANDBOX_EXE})
run(${CMAKE_CTEST_COMMAND} --test-dir ${WORK_DIR}/build --output-on-failure --no-tests=error)
