// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
#include "jq_filter.hpp"

#include "errors.hpp"

#include <climits>
#include <ostream>

extern "C" {
#include <jq.h>
#include <jv.h>
}

namespace ddctl {

namespace {

/// The text of a jv string, or of any value as compact JSON; consumes `v`.
std::string text_of(jv v)
{
    if (jv_get_kind(v) != JV_KIND_STRING)
        v = jv_dump_string(v, 0);
    std::string r(jv_string_value(v), static_cast<std::size_t>(jv_string_length_bytes(jv_copy(v))));
    jv_free(v);
    return r;
}

[[noreturn]] void jq_failure(const std::string& expr, const std::string& what)
{
    throw cli_error(exit_usage, "--jq `" + expr + "`: " + what);
}

}  // namespace

jq_filter::jq_filter(std::string expr) : expr_(std::move(expr))
{
    jq_ = jq_init();
    if (!jq_)
        jq_failure(expr_, "libjq could not start");
    jq_set_error_cb(
        jq_,
        [](void* self, jv msg) {
            auto& errors = static_cast<jq_filter*>(self)->errors_;
            std::string m = text_of(jq_format_error(msg));
            if (m.starts_with("jq: error: "))
                m.erase(0, 11);
            if (m.starts_with("jq: "))
                m.erase(0, 4);
            if (m.ends_with("compile error") || m.ends_with("compile errors"))
                return;  // the count that follows the errors
            for (auto& c : m)  // one line: the program is quoted on a line of its own
                c = c == '\n' ? ' ' : c;
            while (!m.empty() && m.back() == ' ')
                m.pop_back();
            errors += (errors.empty() ? "" : "; ") + m;
        },
        this);
    if (!jq_compile(jq_, expr_.c_str()))
    {
        const std::string what = errors_.empty() ? std::string("does not compile") : errors_;
        jq_teardown(&jq_);
        jq_failure(expr_, what);
    }
}

jq_filter::~jq_filter()
{
    if (jq_)
        jq_teardown(&jq_);
}

void jq_filter::run(std::string_view json_text, std::ostream& out)
{
    if (json_text.size() > static_cast<std::size_t>(INT_MAX))
        jq_failure(expr_, "the JSON is too large for libjq");
    jv input = jv_parse_sized(json_text.data(), static_cast<int>(json_text.size()));
    if (!jv_is_valid(input))
    {
        const std::string what = jv_invalid_has_msg(jv_copy(input)) ? text_of(jv_invalid_get_msg(input)) : (jv_free(input), "");
        throw cli_error(exit_failure, "the answer is not JSON jq can read: " + what);
    }
    errors_.clear();
    jq_start(jq_, input, 0);  // takes `input`
    for (;;)
    {
        jv result = jq_next(jq_);
        if (jv_is_valid(result))
        {
            out << text_of(result) << '\n';
            continue;
        }
        if (jv_invalid_has_msg(jv_copy(result)))
            jq_failure(expr_, text_of(jv_invalid_get_msg(result)));
        jv_free(result);
        break;
    }
    if (!errors_.empty())
        jq_failure(expr_, errors_);
}

}  // namespace ddctl
