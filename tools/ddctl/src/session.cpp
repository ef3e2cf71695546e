// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
#include "session.hpp"

#include "errors.hpp"

#include <iostream>
#include <string>

namespace ddctl {

std::string session::relative(const std::string& url) const
{
    if (url.compare(0, tap->api_prefix.size(), tap->api_prefix) == 0)
        return url.substr(tap->api_prefix.size());
    return url;
}

void session::check(const dd::error_code& ec, const dd::diagnostics& diag, const std::string& then) const
{
    if (dry_run && !tap->not_sent.empty())
    {
        // What would have been sent: method, path (with its query), body. Never a header.
        std::cout << "dry run: nothing was sent\n";
        const auto& r = tap->not_sent.front();
        std::cout << dd::to_string(r.method) << ' ' << relative(r.url) << '\n';
        if (!r.body.empty())
            std::cout << r.body << '\n';
        if (!then.empty())
            std::cout << "then " << then << '\n';
        std::cout.flush();
        throw dry_run_done{};
    }
    if (!ec)
        return;
    std::string line = diag.to_string();
    if (!diag.http_status && diag.server_message.empty() && diag.client_message.empty())
    {
        // no answer and nothing said by the client (a transport failure, a
        // cancellation, a deadline): the error itself says what happened
        line = ec.message();
        if (!diag.method.empty())
            line = diag.method + " " + diag.path + ": " + line + (diag.host.empty() ? "" : " (" + diag.host + ")");
    }
    cli_error err(exit_code_for(ec), line);
    err.status = diag.http_status;
    if (!diag.method.empty())
        err.request = diag.method + " " + diag.path;
    throw err;
}

void session::confirm(const std::string& what) const
{
    if (yes || dry_run)
        return;
    if (!terminal_in)
        throw cli_error(exit_usage, what + ": not confirmed (no terminal to ask): pass --yes");
    std::cerr << what << ". Send it? [y/N] " << std::flush;
    std::string answer;
    std::getline(std::cin, answer);
    if (answer != "y" && answer != "Y" && answer != "yes")
        throw cli_error(exit_failure, "not sent: not confirmed");
}

}  // namespace ddctl
