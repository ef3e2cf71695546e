// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// What ddctl prints on stdout: the JSON the API sent (one document per
// resource, its bytes as they came; JSON lines for lists, each item's bytes
// with the whitespace between tokens removed) or a table for people. Both are
// made from the body the server sent, so no field is lost or reformatted.
#ifndef DDCTL_OUTPUT_HPP
#define DDCTL_OUTPUT_HPP

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace ddctl {

class jq_filter;

/// What to print of an answer.
struct output_spec
{
    /// The member holding the resource ("asset"), or "" for the whole body.
    std::string_view member;
    /// For lists: the member holding the items ("assets"); in a single
    /// document (order downloads), the list shown as a table under the rest.
    std::string_view items;
    /// The table's columns for the items.
    std::vector<std::string_view> columns;

    /// What the items are called ("assets", "digital products").
    std::string noun() const
    {
        std::string r(items);
        for (auto& c : r)
            c = c == '_' ? ' ' : c;
        return r;
    }
};

/// How tables are printed (--columns, --no-headers).
struct table_options
{
    std::vector<std::string> columns;  ///< empty: the command's own
    bool headers = true;
};

class printer
{
public:
    /// `filter`: --jq, run on each JSON document or list item (implies JSON).
    printer(std::ostream& out, bool json, jq_filter* filter = nullptr, table_options table = {})
        : out_(out), json_(json || filter), filter_(filter), table_(std::move(table))
    {
    }

    bool json() const { return json_; }
    /// Tables with their header line (no --no-headers): what is said about a
    /// list (its page, none at all) goes with it on stdout, else on stderr.
    bool headers() const { return table_.headers; }

    /// One resource: `body` is the JSON text the API sent.
    void document(std::string_view body, const output_spec& spec);

    /// One page of a list: each item as a JSON line, or table rows (the
    /// header and the column widths come from the first page with items).
    /// Returns the number of items.
    std::size_t page(std::string_view body, const output_spec& spec);

    /// Any JSON value, as `name: value` lines or re-encoded JSON.
    void value(const boost::json::value& v);

private:
    /// One JSON document or list item: printed as it is.
    void json_text(std::string_view text);
    void rows(const boost::json::array& items, const output_spec& spec);

    std::ostream& out_;
    bool json_;
    jq_filter* filter_;
    table_options table_;
    std::vector<std::size_t> widths_;  // the list's columns, once its first rows are out
};

/// With --output json, notices are JSON lines (set once, before any is written).
void set_json_notices(bool on);
bool json_notices();

/// What ddctl says on stderr besides its output and its errors (a retry, a
/// wait, progress, what a command did): `ddctl: MESSAGE`, or with --output
/// json one JSON line {"notice": {"kind": KIND, "message": MESSAGE, FIELDS...}}.
/// One write per line (safe from the limiter's thread).
void notice(std::string_view kind, const std::string& message, boost::json::object fields = {});

/// A cell: strings as they are, null as "-", arrays of objects by their ids.
std::string cell(const boost::json::value& v);

/// Parses the API's answer (throws cli_error when it is not JSON).
boost::json::value parse_body(std::string_view body);

/// A byte count for people: "950 B", "3.2 MB" with `base` 1000 (KB, MB, GB, TB),
/// "1.5 GiB" with `base` 1024 (KiB, MiB, GiB, TiB).
std::string human_size(double bytes, unsigned base);

}  // namespace ddctl

#endif
