#include "output.hpp"

#include "errors.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <ostream>

namespace ddctl {

namespace json = boost::json;

namespace {

const json::value& select(const json::value& body, std::string_view member)
{
    if (member.empty())
        return body;
    const json::object* o = body.if_object();
    const json::value* v = o ? o->if_contains(member) : nullptr;
    if (!v)
        throw cli_error(exit_failure, "the answer has no `" + std::string(member) + "` member");
    return *v;
}

/// key: value lines, nested members flattened as a.b / a.0.b.
void flatten(std::ostream& out, const json::value& v, const std::string& prefix)
{
    if (const json::object* o = v.if_object(); o && !o->empty())
    {
        for (const auto& kv : *o)
            flatten(out, kv.value(), prefix.empty() ? std::string(kv.key()) : prefix + "." + std::string(kv.key()));
        return;
    }
    if (const json::array* a = v.if_array(); a && !a->empty() && (*a)[0].is_object())
    {
        for (std::size_t i = 0; i < a->size(); ++i)
            flatten(out, (*a)[i], prefix + "." + std::to_string(i));
        return;
    }
    out << prefix << ": " << cell(v) << '\n';
}

}  // namespace

std::string cell(const json::value& v)
{
    switch (v.kind())
    {
    case json::kind::null:
        return "-";
    case json::kind::string:
        return std::string(v.get_string());
    case json::kind::array:
    {
        std::string r;
        for (const auto& e : v.get_array())
        {
            if (!r.empty())
                r += ",";
            const json::object* o = e.if_object();
            const json::value* id = o ? o->if_contains("id") : nullptr;
            r += cell(id ? *id : e);
        }
        return r.empty() ? "-" : r;
    }
    default:
        return json::serialize(v);
    }
}

json::value parse_body(std::string_view body)
{
    boost::system::error_code ec;
    json::value v = json::parse(body, ec);
    if (ec)
        throw cli_error(exit_failure, "the answer is not JSON: " + ec.message());
    return v;
}

void printer::value(const json::value& v)
{
    if (json_)
        out_ << json::serialize(v) << '\n';
    else
        flatten(out_, v, "");
    out_.flush();
}

void printer::document(std::string_view body, const output_spec& spec)
{
    const json::value all = parse_body(body);
    const json::value& v = select(all, spec.member);
    if (json_ || spec.items.empty())
        return value(v);
    // a document with a list inside (order downloads): the rest, then the list as a table
    json::object rest = v.as_object();
    rest.erase(spec.items);
    flatten(out_, rest, "");
    out_ << '\n';
    if (const json::array* a = select(v, spec.items).if_array())
        rows(*a, spec);
    out_.flush();
}

void printer::page(std::string_view body, const output_spec& spec)
{
    const json::value all = parse_body(body);
    const json::array* items = select(all, spec.items).if_array();
    if (!items)
        throw cli_error(exit_failure, "`" + std::string(spec.items) + "` is not a list");
    if (json_)
    {
        for (const auto& item : *items)
            out_ << json::serialize(item) << '\n';
    }
    else
        rows(*items, spec);
    out_.flush();
}

void printer::rows(const json::array& items, const output_spec& spec)
{
    std::vector<std::vector<std::string>> cells;
    for (const auto& item : items)
    {
        std::vector<std::string> row;
        const json::object* o = item.if_object();
        for (auto c : spec.columns)
        {
            const json::value* f = o ? o->if_contains(c) : nullptr;
            row.push_back(f ? cell(*f) : std::string("-"));
        }
        cells.push_back(std::move(row));
    }
    const bool header = widths_.empty();
    if (header)
    {
        for (auto c : spec.columns)
            widths_.push_back(c.size());
        for (const auto& row : cells)
            for (std::size_t i = 0; i < row.size(); ++i)
                widths_[i] = std::max(widths_[i], std::min<std::size_t>(row[i].size(), 60));
    }
    auto line = [&](const std::vector<std::string>& row) {
        for (std::size_t i = 0; i < row.size(); ++i)
        {
            out_ << row[i];
            if (i + 1 < row.size())
                out_ << std::string(row[i].size() < widths_[i] ? widths_[i] - row[i].size() + 2 : 2, ' ');
        }
        out_ << '\n';
    };
    if (header)
    {
        std::vector<std::string> names;
        for (auto c : spec.columns)
        {
            std::string n(c);
            std::transform(n.begin(), n.end(), n.begin(), [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
            names.push_back(std::move(n));
        }
        line(names);
    }
    for (const auto& row : cells)
        line(row);
}

}  // namespace ddctl
