# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# Builds and runs tests/consumer/project as a user would.
#   -DMODE=install -DDD_BINARY_DIR=... -DWORK_DIR=<prefix>: installs the package
#   there, once for every test of the installed package (the fixture dd_install),
#   and checks that the licence is in share/doc/digital_delivery/
#   -DMODE=find_package -DPREFIX=<prefix> -DWORK_DIR=...: main.cpp + other.cpp
#   (every header of the umbrella, -Wall -Wextra -Werror), header-only and compiled
#   -DMODE=subdirectory -DDD_SOURCE_DIR=... -DWORK_DIR=...
#   -DMODE=fetchcontent -DDD_SOURCE_DIR=... -DWORK_DIR=...
# In the subdirectory and fetchcontent modes it first builds the project with
# only the header-only program and checks that our part of the build compiled
# nothing (no compiled library, sandbox, ddctl, examples or tests) and that
# installing the user's project installs none of our files; then asks for the
# program that links digital_delivery::compiled: configured, and in
# subdirectory mode a dry run of its build (`--target consumer_compiled -- -n`)
# plans the compiled library and the link (the main build compiles that library
# from the same CMakeLists.txt; compiling it here again cost a minute of CPU).
#   -DMODE=pkg_config   -DPREFIX=<prefix> -DWORK_DIR=... -DCXX=...: header-only as
#   C++23 (digital_delivery.pc), then the compiled library (digital_delivery_compiled.pc)
# Every mode but find_package builds minimal.cpp: it proves that its way in
# works (include directories, version, one function linked); find_package and
# headers_self_contained check every header.
include(${CMAKE_CURRENT_LIST_DIR}/consumer_common.cmake)
set(project_dir ${CMAKE_CURRENT_LIST_DIR}/project)
if(MODE STREQUAL "install")
    run(${CMAKE_COMMAND} --install ${DD_BINARY_DIR} --prefix ${WORK_DIR})
    # The licence is installed with the headers, as it is in the source tree.
    set(licence ${WORK_DIR}/share/doc/digital_delivery/LICENSE_1_0.txt)
    if(NOT EXISTS ${licence})
        message(FATAL_ERROR "the install did not put the licence at ${licence}")
    endif()
    file(SHA256 ${licence} installed_sha)
    file(SHA256 ${CMAKE_CURRENT_LIST_DIR}/../../LICENSE_1_0.txt source_sha)
    if(NOT installed_sha STREQUAL source_sha)
        message(FATAL_ERROR "${licence} is not the source tree's LICENSE_1_0.txt")
    endif()
elseif(MODE STREQUAL "find_package")
    run(${CMAKE_COMMAND} -S ${project_dir} -B ${WORK_DIR}/build -DDD_CONSUMER_MODE=find_package
        -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_BUILD_TYPE=Debug -DDD_CONSUMER_SQLITE=ON)
    run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
    run(${WORK_DIR}/build/consumer)
    run(${WORK_DIR}/build/consumer_compiled)
    run(${WORK_DIR}/build/consumer_sqlite)  # the component "sqlite" of the installed package
elseif(MODE STREQUAL "subdirectory" OR MODE STREQUAL "fetchcontent")
    if(MODE STREQUAL "subdirectory")
        set(ours ${WORK_DIR}/build/digital_delivery)
    else()
        set(ours ${WORK_DIR}/build/_deps/digital_delivery-build)
    endif()
    # Ninja: its dry run (-n) plans a whole build, where make's stops at the
    # first sub-make whose inputs are not built.
    run(${CMAKE_COMMAND} -G Ninja -S ${project_dir} -B ${WORK_DIR}/build -DDD_CONSUMER_MODE=${MODE}
        -DDD_SOURCE_DIR=${DD_SOURCE_DIR} -DFETCHCONTENT_SOURCE_DIR_DIGITAL_DELIVERY=${DD_SOURCE_DIR}
        -DDD_CONSUMER_COMPILED=OFF -DDD_CONSUMER_FULL=OFF -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Debug)
    run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
    if(NOT EXISTS ${ours}/CMakeFiles)
        message(FATAL_ERROR "${ours}: not our binary directory")
    endif()
    file(GLOB_RECURSE built LIST_DIRECTORIES false ${ours}/*.o ${ours}/*.a ${ours}/*.so)
    foreach(name digital-delivery-sandbox ddctl typical_flow)
        file(GLOB_RECURSE found LIST_DIRECTORIES false ${ours}/${name})
        list(APPEND built ${found})
    endforeach()
    if(built)
        message(FATAL_ERROR "a plain build of a project that links digital_delivery::digital_delivery built: ${built}")
    endif()
    run(${CMAKE_COMMAND} --install ${WORK_DIR}/build --prefix ${WORK_DIR}/user_prefix)
    file(GLOB_RECURSE installed LIST_DIRECTORIES false RELATIVE ${WORK_DIR}/user_prefix ${WORK_DIR}/user_prefix/*)
    if(NOT installed STREQUAL "bin/consumer")
        message(FATAL_ERROR "installing the user's project installed more than its bin/consumer: ${installed}")
    endif()
    # Then the program that links digital_delivery::compiled. FetchContent adds
    # our project as add_subdirectory() does: the same target, so there the
    # configure step proves that it exists (a missing digital_delivery::compiled
    # fails it); the subdirectory test also plans its build (a dry run).
    run(${CMAKE_COMMAND} -DDD_CONSUMER_COMPILED=ON ${WORK_DIR}/build)
    if(MODE STREQUAL "subdirectory")
        execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build --target consumer_compiled -- -n
                        RESULT_VARIABLE rc OUTPUT_VARIABLE plan ERROR_VARIABLE plan)
        if(NOT rc EQUAL 0 OR NOT plan MATCHES "src/digital_delivery\\.cpp" OR NOT plan MATCHES "Linking CXX executable consumer_compiled")
            message(FATAL_ERROR "a dry run of consumer_compiled's build plans neither the compiled library "
                                "nor the link (exit ${rc}):\n${plan}")
        endif()
    endif()
    run(${WORK_DIR}/build/consumer)
elseif(MODE STREQUAL "pkg_config")
    # digital_delivery.pc (share/pkgconfig) and digital_delivery_compiled.pc (LIBDIR/pkgconfig).
    file(GLOB_RECURSE pc_files ${PREFIX}/*.pc)
    set(pc_path "")
    foreach(pc IN LISTS pc_files)
        get_filename_component(dir ${pc} DIRECTORY)
        list(APPEND pc_path ${dir})
    endforeach()
    list(REMOVE_DUPLICATES pc_path)
    string(REPLACE ";" ":" pc_path "${pc_path}")
    set(ENV{PKG_CONFIG_PATH} "${pc_path}")
    # pkg_flags(out pkg): `pkg-config --cflags --libs pkg`; no -std among
    # them (the user's standard is the user's: C++20, C++23...).
    function(pkg_flags out pkg)
        execute_process(COMMAND pkg-config --cflags --libs ${pkg} OUTPUT_VARIABLE flags
                        OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
        if(NOT rc EQUAL 0)
            message(FATAL_ERROR "pkg-config does not know ${pkg} (PKG_CONFIG_PATH=$ENV{PKG_CONFIG_PATH})")
        endif()
        if(flags MATCHES "-std=")
            message(FATAL_ERROR "pkg-config's flags for ${pkg} choose a C++ standard: ${flags}")
        endif()
        separate_arguments(flags UNIX_COMMAND "${flags}")
        set(${out} ${flags} PARENT_SCOPE)
    endfunction()
    execute_process(COMMAND pkg-config --modversion digital_delivery OUTPUT_VARIABLE version
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    # Header-only, as a C++23 user (clang 16 spells it c++2b).
    if(CXX MATCHES "clang")
        set(cxx23 -std=c++2b)
    else()
        set(cxx23 -std=c++23)
    endif()
    pkg_flags(flags digital_delivery)
    run(${CXX} ${cxx23} -Wall -Wextra -Werror ${project_dir}/minimal.cpp -o ${WORK_DIR}/consumer ${flags}
        "-DDD_EXPECTED_VERSION=\"${version}\"")
    run(${WORK_DIR}/consumer)
    # The compiled library, as a C++20 user: its function comes from libdigital_delivery.a.
    pkg_flags(flags digital_delivery_compiled)
    if(NOT flags MATCHES "-DDIGITAL_DELIVERY_SEPARATE_COMPILATION" OR NOT flags MATCHES "-ldigital_delivery")
        message(FATAL_ERROR "digital_delivery_compiled.pc: not the compiled library's flags: ${flags}")
    endif()
    run(${CXX} -std=c++20 -Wall -Wextra -Werror ${project_dir}/minimal.cpp -o ${WORK_DIR}/consumer_compiled
        ${flags} "-DDD_EXPECTED_VERSION=\"${version}\"")
    run(${WORK_DIR}/consumer_compiled)
    # The SQLite component: digital_delivery_sqlite_compiled.pc requires
    # digital_delivery_compiled and sqlite3.
    pkg_flags(flags digital_delivery_sqlite_compiled)
    if(NOT flags MATCHES "-ldigital_delivery_sqlite" OR NOT flags MATCHES "-lsqlite3")
        message(FATAL_ERROR "digital_delivery_sqlite_compiled.pc: not the SQLite component's flags: ${flags}")
    endif()
    run(${CXX} -std=c++20 -Wall -Wextra -Werror ${project_dir}/sqlite.cpp -o ${WORK_DIR}/consumer_sqlite ${flags})
    run(${WORK_DIR}/consumer_sqlite)
    # Both files name the sandbox the same (empty when it was not built).
    foreach(pkg digital_delivery digital_delivery_compiled)
        execute_process(COMMAND pkg-config --variable=sandbox_exe ${pkg} OUTPUT_VARIABLE sandbox_${pkg}
                        OUTPUT_STRIP_TRAILING_WHITESPACE)
        if(sandbox_${pkg})
            cmake_path(SET sandbox_${pkg} NORMALIZE "${sandbox_${pkg}}")
        endif()
    endforeach()
    if(NOT sandbox_digital_delivery STREQUAL sandbox_digital_delivery_compiled)
        message(FATAL_ERROR "sandbox_exe: '${sandbox_digital_delivery}' in digital_delivery.pc, "
                            "'${sandbox_digital_delivery_compiled}' in digital_delivery_compiled.pc")
    endif()
endif()
