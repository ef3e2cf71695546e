# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# The typical flow recorded against a sandbox (with_sandbox.sh stops it at the
# end), then replayed from its cassette with no sandbox and no credentials:
# the two runs print the same (the progress bar's rate aside), and the
# cassette holds neither the API key, nor a signature, nor the buyer's email.
#   cmake -DWITH_SANDBOX=... -DSANDBOX=... -DFLOW=... -DCASSETTE=... -P typical_flow_cassette.cmake
file(REMOVE "${CASSETTE}")
execute_process(COMMAND "${WITH_SANDBOX}" "${SANDBOX}" --watermark-delay-ms 1500 -- "${FLOW}" --record "${CASSETTE}"
    OUTPUT_VARIABLE recorded ERROR_VARIABLE recorded_err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "recording failed (${rc}):\n${recorded}\n${recorded_err}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -E env --unset=DIGITAL_DELIVERY_BASE_URL --unset=DIGITAL_DELIVERY_API_KEY
        "${FLOW}" --replay "${CASSETTE}"
    OUTPUT_VARIABLE replayed ERROR_VARIABLE replayed_err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "replay failed (${rc}):\n${replayed}\n${replayed_err}")
endif()

# Without what may differ: which cassette, the progress bar (its rate), and
# the masked values (the replay prints their placeholders).
function(comparable out text)
    string(REPLACE "\r" "\n" text "${text}")
    string(REGEX REPLACE "notified [^ ]*: " "notified <email>: " text "${text}")
    string(REGEX REPLACE "(MASKED-licence_key-[0-9]+|[A-Z0-9]+(-[A-Z0-9]+)+)\n" "<licence key>\n" text "${text}")
    string(REGEX REPLACE "cassette: [^\n]*\n" "" text "${text}")
    # The download page's link (a capability) is masked in the cassette: the replay does not print it.
    string(REGEX REPLACE "the buyer's download page \\(sandbox\\): [^\n]*\n" "" text "${text}")
    string(REGEX REPLACE "[^\n]*MiB/s[^\n]*\n?" "" text "${text}")
    set(${out} "${text}" PARENT_SCOPE)
endfunction()
comparable(a "${recorded}")
comparable(b "${replayed}")
if(NOT a STREQUAL b)
    message(FATAL_ERROR "the replay differs from the recording:\n--- recorded\n${a}\n--- replayed\n${b}")
endif()
if(NOT recorded MATCHES "the buyer's download page \\(sandbox\\): http://[^\n]*/download-page/")
    message(FATAL_ERROR "the recording did not print the download page's link:\n${recorded}")
endif()
if(NOT a MATCHES "mode: sandbox, every step" OR NOT a MATCHES "8\\. downloads of order")
    message(FATAL_ERROR "the flow did not run every step:\n${a}")
endif()

file(READ "${CASSETTE}" cassette)
foreach(secret "sandbox-key" "ada@example.com" "Ada Lovelace" "/download-page/")
    string(FIND "${cassette}" "${secret}" at)
    if(NOT at EQUAL -1)
        message(FATAL_ERROR "the cassette contains ${secret}")
    endif()
endforeach()
if(cassette MATCHES "(Signature|Credential|Security-Token)=[^R]")
    message(FATAL_ERROR "the cassette contains a signature or a credential: ${CMAKE_MATCH_0}")
endif()
string(LENGTH "${cassette}" size)
message(STATUS "replay identical to the recording; cassette ${CASSETTE}: ${size} bytes")
