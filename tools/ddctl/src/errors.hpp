// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// ddctl's exit codes (one table, docs/cli.md) and the exception that carries one.
#ifndef DDCTL_ERRORS_HPP
#define DDCTL_ERRORS_HPP

#include <digital_delivery/error.hpp>

#include <stdexcept>
#include <string>

namespace ddctl {

enum exit_code : int
{
    exit_ok = 0,
    exit_failure = 1,      ///< anything else: a 5xx, a storage refusal, an undecodable answer, "no" at the prompt
    exit_usage = 2,        ///< bad command line, configuration or --data; a write that emails without --yes
    exit_not_found = 3,    ///< 404
    exit_validation = 4,   ///< 422, or refused by the client before sending (invalid input)
    exit_auth = 5,         ///< 401: missing or wrong API key
    exit_rate_limit = 6,   ///< 429 after retries, a rate-limit wait or deadline that could not be met
    exit_transport = 7,    ///< connection, TLS or HTTP failure, the transport's timeouts, a stalled upload
    exit_partial = 8,      ///< assets sync stopped before its end and the next run resumes (--max-points, a file that changed during the run, failed uploads)
    exit_refused = 9,      ///< assets sync refused: deletes refused by a guard, the folder locked by another sync, the state directory inside the folder
    exit_quota = 10,       ///< assets sync stopped by the store's asset storage or asset count quota
    exit_interrupted = 130,  ///< SIGINT / SIGTERM
};

/// A failure with its exit code; what() is the line written to stderr.
struct cli_error : std::runtime_error
{
    int code;
    unsigned status = 0;  ///< the API's HTTP status, 0 when there was no answer
    std::string request;  ///< "GET /orders/ID" when a request was made
    cli_error(int c, const std::string& what) : std::runtime_error(what), code(c) {}
};

/// The exit code of a failed operation.
inline int exit_code_for(const digital_delivery::error_code& ec)
{
    namespace dd = digital_delivery;
    if (ec == dd::condition::cancelled)
        return exit_interrupted;
    if (ec == dd::condition::not_found)
        return exit_not_found;
    if (ec == dd::condition::validation || ec == dd::condition::invalid_input)
        return exit_validation;
    if (ec == dd::condition::unauthorized)
        return exit_auth;
    if (ec == dd::condition::rate_limited)
        return exit_rate_limit;
    // before `timeout`: the transport's own timeouts (resolve, connect, TLS
    // handshake, request, idle) are transport failures, as is a stalled upload
    if (ec == dd::condition::transport || ec == dd::client_errc::upload_stalled)
        return exit_transport;
    if (ec == dd::condition::timeout)  // what remains: the operation's deadline
        return exit_rate_limit;
    return exit_failure;
}

}  // namespace ddctl

#endif
