# Fails when <digital_delivery.hpp> includes, directly or not, a header of
# Boost.Beast or OpenSSL (they belong to <digital_delivery/beast_transport.hpp>
# only). -DCXX=... -DINCLUDE_DIR=... -DWORK_DIR=...
file(MAKE_DIRECTORY ${WORK_DIR})
file(WRITE ${WORK_DIR}/umbrella.cpp "#include <digital_delivery.hpp>\n")
execute_process(COMMAND ${CXX} -std=c++20 -fsyntax-only -H -I${INCLUDE_DIR} ${WORK_DIR}/umbrella.cpp
                RESULT_VARIABLE rc ERROR_VARIABLE tree)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "<digital_delivery.hpp> does not compile:\n${tree}")
endif()
string(REGEX MATCHALL "[^\n]*(openssl/|boost/beast/|boost/asio/ssl)[^\n]*" offenders "${tree}")
string(REGEX MATCHALL "\n\\.+ " all "\n${tree}")
list(LENGTH all n)
if(offenders)
    list(JOIN offenders "\n" text)
    message(FATAL_ERROR "<digital_delivery.hpp> includes Beast or OpenSSL headers:\n${text}")
endif()
message("<digital_delivery.hpp>: ${n} header inclusions, none of Beast or OpenSSL")
