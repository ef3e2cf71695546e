# Fails when <digital_delivery.hpp> includes, directly or not, a header of
# Boost.Beast or OpenSSL (they belong to <digital_delivery/beast_transport.hpp>
# only) or of the Redis or shared-memory rate-limit store (opt-in headers); with separate compilation, when it includes Boost.JSON's DOM or
# parser, or when a translation unit that co_awaits a request function
# compiles any of what src.hpp compiles once per endpoint (the encoder, the
# decoder, the launch, the default awaitable).
# -DCXX=... -DINCLUDE_DIR=... -DWORK_DIR=...
file(MAKE_DIRECTORY ${WORK_DIR})
file(WRITE ${WORK_DIR}/umbrella.cpp "#include <digital_delivery.hpp>\n")

# Fails when the umbrella, compiled with the extra flags that follow, includes
# a header matching <pattern> (a regex over the paths of `-H`).
function(check_umbrella what pattern)
    set(mode "${ARGN}")
    if(NOT mode)
        set(mode "header-only")
    endif()
    execute_process(COMMAND ${CXX} -std=c++20 -fsyntax-only -H ${ARGN} -I${INCLUDE_DIR} ${WORK_DIR}/umbrella.cpp
                    RESULT_VARIABLE rc ERROR_VARIABLE tree)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "<digital_delivery.hpp> does not compile (${mode}):\n${tree}")
    endif()
    string(REGEX MATCHALL "[^\n]*(${pattern})[^\n]*" offenders "${tree}")
    string(REGEX MATCHALL "\n\\.+ " all "\n${tree}")
    list(LENGTH all n)
    if(offenders)
        list(JOIN offenders "\n" text)
        message(FATAL_ERROR "<digital_delivery.hpp> (${mode}) includes ${what}:\n${text}")
    endif()
    message("<digital_delivery.hpp> (${mode}): ${n} header inclusions, none of ${what}")
endfunction()

check_umbrella("Beast or OpenSSL headers" "openssl/|boost/beast/|boost/asio/ssl")
# The Redis and shared-memory rate-limit stores are opt-in headers: a TU that
# never names them does not parse them (nor their .ipp in header-only mode).
check_umbrella("the Redis or shared-memory rate-limit store"
               "impl/rate_limit/(redis_link|shm_store|sansio/redis_store|sansio/resp)\\.hpp|(redis|shm)_rate_limit_store\\.(hpp|ipp)")
# Separate compilation: the call site sees declarations only.
check_umbrella("Boost.JSON's DOM or parser" "boost/json/(value|object|array|basic_parser|parser|serialize)"
               -DDIGITAL_DELIVERY_SEPARATE_COMPILATION)
file(WRITE ${WORK_DIR}/one_call.cpp [=[
#include <digital_delivery.hpp>
boost::asio::awaitable<digital_delivery::order> one_call(digital_delivery::client& c)
{
    digital_delivery::order o = co_await digital_delivery::async_get_order(c, "o1");
    co_return o;
}
void with_token(digital_delivery::client& c)
{
    digital_delivery::async_create_asset(c, {.type = digital_delivery::asset_type::internal, .name = "a"},
                                         [](digital_delivery::error_code, digital_delivery::asset_with_upload) {});
}
]=])
execute_process(COMMAND ${CXX} -std=c++20 -c -DDIGITAL_DELIVERY_SEPARATE_COMPILATION -I${INCLUDE_DIR}
                        ${WORK_DIR}/one_call.cpp -o ${WORK_DIR}/one_call.o
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the one-call translation unit does not compile:\n${err}")
endif()
execute_process(COMMAND nm -C --defined-only ${WORK_DIR}/one_call.o
                RESULT_VARIABLE rc OUTPUT_VARIABLE symbols)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm failed on the one-call translation unit")
endif()
string(REGEX MATCHALL "[^\n]*(endpoint_ops<|json_decod|decode_json|encode_value|boost::json::)[^\n]*" compiled "${symbols}")
if(compiled)
    list(JOIN compiled "\n" text)
    message(FATAL_ERROR "a call site compiles what src.hpp compiles once per endpoint:\n${text}")
endif()
execute_process(COMMAND nm -C --undefined-only ${WORK_DIR}/one_call.o OUTPUT_VARIABLE undefined)
if(NOT undefined MATCHES "endpoint_ops<digital_delivery::endpoints::get_order>::await"
   OR NOT undefined MATCHES "endpoint_ops<digital_delivery::endpoints::create_asset>::launch")
    message(FATAL_ERROR "the one-call translation unit does not call the compiled endpoint operations:\n${undefined}")
endif()
message("separate compilation: the umbrella includes no Boost.JSON DOM or parser; a call site compiles no endpoint operation")
