# ctest's entry to the OTLP schema check. -D NODE=<node> -D DIR=<this folder>
# -D SCRIPT=<a script of DIR> [-D TESTS=<trace_otlp_tests> -D FILTER=<gtest filter>
# -D OUT=<file>]: with TESTS, the test program first writes the exporter's
# file to OUT (DD_OTLP_SCHEMA_OUT), and SCRIPT checks it.
if(NOT NODE)
    message(FATAL_ERROR "node not found: tests/install_deps.sh installs nodejs and the pinned OTLP schema (npm ci)")
endif()
if(NOT EXISTS "${DIR}/node_modules/@opentelemetry/otlp-transformer/build/src/generated/root.js")
    message(FATAL_ERROR "the OTLP schema is not installed: run tests/install_deps.sh (npm ci in ${DIR})")
endif()
set(args "")
if(TESTS)
    file(REMOVE "${OUT}")
    set(ENV{DD_OTLP_SCHEMA_OUT} "${OUT}")
    execute_process(COMMAND "${TESTS}" --gtest_filter=${FILTER} RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "${TESTS} --gtest_filter=${FILTER} failed (${rc})")
    endif()
    set(args "${OUT}")
endif()
execute_process(COMMAND "${NODE}" "${DIR}/${SCRIPT}" ${args} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${SCRIPT} ${args} failed (${rc})")
endif()
