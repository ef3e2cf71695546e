# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# Fails when <digital_delivery.hpp> includes, directly or not, a header of
# Boost.Beast or OpenSSL (beast_transport.hpp and otlp_exporter.hpp include
# them, the opt-in Redis store OpenSSL) or of the Redis or shared-memory rate-limit store or SQLite (opt-in headers); with separate compilation, when it includes Boost.JSON's DOM or
# parser, or when a call site instantiates other than README.md says, per kind
# of call (below; none compiles what src.hpp compiles once per endpoint: the
# encoder, the decoder, the launch, the default awaitable).
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
# The SQLite component is opt-in too: the umbrella parses neither
# <sqlite3.h> nor the component's headers.
check_umbrella("the Redis or shared-memory rate-limit store or SQLite"
               "impl/rate_limit/(redis_link|shm_store|sansio/redis_store|sansio/resp)\\.hpp|(redis|shm)_rate_limit_store\\.(hpp|ipp)|sqlite3\\.h|impl/sqlite/|sqlite_state\\.(hpp|ipp)")
# With separate compilation, even a TU that includes <digital_delivery/sqlite_state.hpp>
# does not parse <sqlite3.h> (the handles are declared, not defined).
file(WRITE ${WORK_DIR}/sqlite_state.cpp "#include <digital_delivery/sqlite_state.hpp>\n")
execute_process(COMMAND ${CXX} -std=c++20 -fsyntax-only -H -DDIGITAL_DELIVERY_SEPARATE_COMPILATION -I${INCLUDE_DIR}
                        ${WORK_DIR}/sqlite_state.cpp RESULT_VARIABLE rc ERROR_VARIABLE tree)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "<digital_delivery/sqlite_state.hpp> does not compile (separate compilation):\n${tree}")
endif()
if(tree MATCHES "sqlite3\\.h")
    message(FATAL_ERROR "<digital_delivery/sqlite_state.hpp> (separate compilation) parses <sqlite3.h>")
endif()
# Separate compilation: the call site sees declarations only.
check_umbrella("Boost.JSON's DOM or parser" "boost/json/(value|object|array|basic_parser|parser|serialize)"
               -DDIGITAL_DELIVERY_SEPARATE_COMPILATION)
# What a call site instantiates with separate compilation, per kind of call
# (README.md, "Using it in your project"), checked on the defined symbols (nm):
#  - an endpoint called with the default token: no Asio initiation, a call of
#    the compiled endpoint_ops<D>::await (a translation unit of its own);
#  - an endpoint called with a token: async_initiate for that token, the
#    handler made an any_completion_handler; the launch is compiled;
#  - uploads, the watermark waiter, asset-list edits, raw requests: async_initiate
#    with any token, the default one included (use_awaitable);
#  - pagination: the range's composed operation (async_compose) and async_initiate;
#    its page requests call the compiled endpoint_ops<D>::launch.
# None of them compiles JSON encoding or decoding or an endpoint operation.
set(_prologue [=[
#include <digital_delivery.hpp>
#include <digital_delivery/raw_request.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/deferred.hpp>
namespace dd = digital_delivery;
namespace asio = boost::asio;
]=])
file(WRITE ${WORK_DIR}/call_plain.cpp "${_prologue}" [=[
asio::awaitable<dd::order> plain(dd::client& c) { co_return co_await dd::async_get_order(c, "o1"); }
]=])
file(WRITE ${WORK_DIR}/call_others.cpp "${_prologue}" [=[
asio::awaitable<void> with_token(dd::client& c)
{
    auto [ec, d] = co_await dd::async_get_order_downloads(c, "o1", asio::as_tuple(asio::deferred));
    (void)ec;
    (void)d;
}
void with_callback(dd::client& c)
{
    dd::async_create_asset(c, {.type = dd::asset_type::internal, .name = "a"}, [](dd::error_code, dd::asset_with_upload) {});
}
asio::awaitable<dd::asset> upload(dd::client& c, std::shared_ptr<dd::body_source> s)
{
    co_return co_await dd::async_upload_asset(c, std::move(s), {.filename = "a.pdf"});
}
asio::awaitable<dd::order_downloads> waiter(dd::client& c) { co_return co_await dd::async_wait_for_downloads(c, "o1"); }
asio::awaitable<dd::digital_product> edit(dd::client& c, const std::vector<std::string>& ids)
{
    co_return co_await dd::async_add_assets(c, "p1", ids);
}
asio::awaitable<boost::json::value> raw(dd::client& c)
{
    co_return co_await dd::async_raw_request(c, {.method = dd::http_method::get, .path = "/orders"});
}
asio::awaitable<void> pages(dd::client& c)
{
    auto orders = dd::paginate(dd::async_list_orders, c);
    while (auto o = co_await orders.async_next())
        (void)o;
}
]=])

# compile_call_site(name): compiles call_<name>.cpp; sets <name>_defined and
# <name>_undefined (demangled symbols); fails when it compiles what src.hpp
# compiles once per endpoint.
function(compile_call_site name)
    execute_process(COMMAND ${CXX} -std=c++20 -c -DDIGITAL_DELIVERY_SEPARATE_COMPILATION -I${INCLUDE_DIR}
                            ${WORK_DIR}/call_${name}.cpp -o ${WORK_DIR}/call_${name}.o
                    RESULT_VARIABLE rc ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "call_${name}.cpp does not compile:\n${err}")
    endif()
    execute_process(COMMAND nm -C --defined-only ${WORK_DIR}/call_${name}.o RESULT_VARIABLE rc OUTPUT_VARIABLE defined)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "nm failed on call_${name}.o")
    endif()
    execute_process(COMMAND nm -C --undefined-only ${WORK_DIR}/call_${name}.o OUTPUT_VARIABLE undefined)
    string(REGEX MATCHALL "[^\n]*(endpoint_ops<|json_decod|decode_json|encode_value|boost::json::(parse|basic_parser|serialize|value_to|value_from))[^\n]*"
           compiled "${defined}")
    if(compiled)
        list(JOIN compiled "\n" text)
        message(FATAL_ERROR "call_${name}.cpp compiles what src.hpp compiles once per endpoint:\n${text}")
    endif()
    set(${name}_defined "${defined}" PARENT_SCOPE)
    set(${name}_undefined "${undefined}" PARENT_SCOPE)
endfunction()

# expect(kind, symbols, present|absent|called, regex)
function(expect kind symbols what regex)
    if(what STREQUAL "absent")
        if(symbols MATCHES "${regex}")
            message(FATAL_ERROR "a call site (${kind}) instantiates ${regex}: README.md's list is stale")
        endif()
    elseif(NOT symbols MATCHES "${regex}")
        message(FATAL_ERROR "a call site (${kind}) does not ${what} ${regex}: README.md's list is stale")
    endif()
endfunction()

compile_call_site(plain)
expect("default token" "${plain_defined}" absent "async_initiate|any_completion_handler")
expect("default token" "${plain_undefined}" call "endpoint_ops<digital_delivery::endpoints::get_order>::await")
compile_call_site(others)
set(d "${others_defined}")
set(initiate "async_initiate<[^\n]*")
expect("with a token" "${d}" instantiate "${initiate}boost::asio::as_tuple_t<boost::asio::deferred_t>[^\n]*endpoint_initiation<digital_delivery::endpoints::get_order_downloads>")
expect("with a token" "${d}" instantiate "any_completion_handler<void \\(boost::system::error_code, digital_delivery::order_downloads\\)>")
expect("with a token" "${others_undefined}" call "endpoint_ops<digital_delivery::endpoints::get_order_downloads>::launch")
expect("with a callback" "${d}" instantiate "${initiate}endpoint_initiation<digital_delivery::endpoints::create_asset>")
foreach(kind upload_initiation wait_downloads_initiation asset_edit_initiation raw_initiation)
    expect("${kind}" "${d}" instantiate "${initiate}default_initiation<digital_delivery::detail::${kind}>")
endforeach()
expect("pagination" "${d}" instantiate "${initiate}paginate_next_op<digital_delivery::endpoints::list_orders, true>")
expect("pagination" "${others_undefined}" call "endpoint_ops<digital_delivery::endpoints::list_orders>::launch")
message("separate compilation: the umbrella includes no Boost.JSON DOM or parser; call sites instantiate what README.md lists")
