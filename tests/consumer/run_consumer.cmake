# Builds and runs tests/consumer/project as a user would.
#   -DMODE=find_package -DDD_BINARY_DIR=... -DWORK_DIR=...
#   -DMODE=subdirectory -DDD_SOURCE_DIR=... -DWORK_DIR=...
#   -DMODE=pkg_config   -DDD_BINARY_DIR=... -DWORK_DIR=... -DCXX=...
include(${CMAKE_CURRENT_LIST_DIR}/consumer_common.cmake)
set(project_dir ${CMAKE_CURRENT_LIST_DIR}/project)
if(MODE STREQUAL "find_package" OR MODE STREQUAL "pkg_config")
    run(${CMAKE_COMMAND} --install ${DD_BINARY_DIR} --prefix ${WORK_DIR}/prefix)
endif()
if(MODE STREQUAL "find_package")
    run(${CMAKE_COMMAND} -S ${project_dir} -B ${WORK_DIR}/build -DDD_CONSUMER_MODE=find_package
        -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Debug)
    run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
    run(${WORK_DIR}/build/consumer)
    run(${WORK_DIR}/build/consumer_compiled)
elseif(MODE STREQUAL "subdirectory")
    run(${CMAKE_COMMAND} -S ${project_dir} -B ${WORK_DIR}/build -DDD_CONSUMER_MODE=subdirectory
        -DDD_SOURCE_DIR=${DD_SOURCE_DIR} -DCMAKE_BUILD_TYPE=Debug)
    run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
    run(${WORK_DIR}/build/consumer)
    run(${WORK_DIR}/build/consumer_compiled)
elseif(MODE STREQUAL "pkg_config")
    set(ENV{PKG_CONFIG_PATH} ${WORK_DIR}/prefix/share/pkgconfig)
    execute_process(COMMAND pkg-config --cflags --libs digital_delivery OUTPUT_VARIABLE flags
                    OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "pkg-config does not know digital_delivery")
    endif()
    separate_arguments(flags UNIX_COMMAND "${flags}")
    execute_process(COMMAND pkg-config --modversion digital_delivery OUTPUT_VARIABLE version
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    run(${CXX} ${project_dir}/other.cpp ${project_dir}/main.cpp -o ${WORK_DIR}/consumer ${flags}
        "-DDD_EXPECTED_VERSION=\"${version}\"")
    run(${WORK_DIR}/consumer)
endif()
