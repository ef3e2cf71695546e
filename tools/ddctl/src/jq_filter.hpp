// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// `--jq EXPR`: a jq program (libjq, the library of the jq tool) run on each
// JSON document or list item ddctl prints, like gh's --jq.
#ifndef DDCTL_JQ_FILTER_HPP
#define DDCTL_JQ_FILTER_HPP

#include <iosfwd>
#include <string>
#include <string_view>

struct jq_state;

namespace ddctl {

/// A compiled jq program. Not copyable (it owns libjq's state).
class jq_filter
{
public:
    /// Compiles `expr`; throws cli_error(exit_usage) naming it and saying
    /// what jq found wrong.
    explicit jq_filter(std::string expr);
    ~jq_filter();
    jq_filter(const jq_filter&) = delete;
    jq_filter& operator=(const jq_filter&) = delete;

    /// Runs the program on one JSON text and writes each of its results on a
    /// line: a string as its text (no quotes, no escapes), any other value as
    /// compact JSON. A jq runtime error throws cli_error(exit_usage) naming
    /// the expression.
    void run(std::string_view json_text, std::ostream& out);

private:
    jq_state* jq_ = nullptr;
    std::string expr_;
    std::string errors_;  ///< what jq reported (its error callback)
};

}  // namespace ddctl

#endif
