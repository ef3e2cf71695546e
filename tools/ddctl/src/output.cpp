// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
#include "output.hpp"

#include "errors.hpp"
#include "jq_filter.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <ostream>
#include <utility>

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

// ---- the API's own bytes: spans of a JSON text already checked by parse_body ----

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::size_t skip_ws(std::string_view s, std::size_t i)
{
    while (i < s.size() && is_ws(s[i]))
        ++i;
    return i;
}

/// `i` at a string's opening quote: the index after its closing quote.
std::size_t skip_string(std::string_view s, std::size_t i)
{
    for (++i; i < s.size() && s[i] != '"'; ++i)
        if (s[i] == '\\')
            ++i;
    return i + 1;
}

/// `i` at a value: the index after it.
std::size_t skip_value(std::string_view s, std::size_t i)
{
    if (i >= s.size())
        return i;
    if (s[i] == '"')
        return skip_string(s, i);
    if (s[i] != '{' && s[i] != '[')
    {
        while (i < s.size() && !is_ws(s[i]) && s[i] != ',' && s[i] != '}' && s[i] != ']')
            ++i;
        return i;
    }
    int depth = 0;
    while (i < s.size())
    {
        const char c = s[i];
        if (c == '"')
        {
            i = skip_string(s, i);
            continue;
        }
        if (c == '{' || c == '[')
            ++depth;
        else if ((c == '}' || c == ']') && --depth == 0)
            return i + 1;
        ++i;
    }
    return i;
}

std::string_view trimmed(std::string_view s)
{
    const std::size_t b = skip_ws(s, 0);
    std::size_t e = s.size();
    while (e > b && is_ws(s[e - 1]))
        --e;
    return s.substr(b, e - b);
}

/// The text of the value of `name` in the object `text`, as the API wrote it
/// (empty when absent or written with escapes in its name).
std::string_view member_text(std::string_view text, std::string_view name)
{
    std::size_t i = skip_ws(text, 0);
    if (i >= text.size() || text[i] != '{')
        return {};
    for (i = skip_ws(text, i + 1); i < text.size() && text[i] == '"';)
    {
        const std::size_t key_end = skip_string(text, i);
        const std::string_view key = text.substr(i + 1, key_end - i - 2);
        const std::size_t v = skip_ws(text, skip_ws(text, key_end) + 1);  // past the ':'
        const std::size_t v_end = skip_value(text, v);
        if (key == name)
            return text.substr(v, v_end - v);
        i = skip_ws(text, v_end);
        if (i < text.size() && text[i] == ',')
            i = skip_ws(text, i + 1);
    }
    return {};
}

/// The elements of the array `text`, each as the API wrote it.
std::vector<std::string_view> element_texts(std::string_view text)
{
    std::vector<std::string_view> r;
    std::size_t i = skip_ws(text, 0);
    if (i >= text.size() || text[i] != '[')
        return r;
    for (i = skip_ws(text, i + 1); i < text.size() && text[i] != ']';)
    {
        const std::size_t e = skip_value(text, i);
        r.push_back(text.substr(i, e - i));
        i = skip_ws(text, e);
        if (i < text.size() && text[i] == ',')
            i = skip_ws(text, i + 1);
    }
    return r;
}

/// The text with the whitespace between its tokens removed (one line; every
/// token, string and number as written).
std::string one_line(std::string_view text)
{
    std::string r;
    r.reserve(text.size());
    for (std::size_t i = 0; i < text.size();)
    {
        if (text[i] == '"')
        {
            const std::size_t e = skip_string(text, i);
            r.append(text.substr(i, e - i));
            i = e;
        }
        else
        {
            if (!is_ws(text[i]))
                r += text[i];
            ++i;
        }
    }
    return r;
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
        return json_text(json::serialize(v));
    flatten(out_, v, "");
    out_.flush();
}

void printer::json_text(std::string_view text)
{
    if (filter_)
        filter_->run(text, out_);
    else
        out_ << text << '\n';
    out_.flush();
}

void printer::document(std::string_view body, const output_spec& spec)
{
    const json::value all = parse_body(body);
    const json::value& v = select(all, spec.member);
    if (json_)
    {
        // the API's bytes; a member whose name the API wrote with escapes: re-encoded
        const std::string_view text = spec.member.empty() ? trimmed(body) : member_text(body, spec.member);
        return text.empty() ? json_text(json::serialize(v)) : json_text(text);
    }
    if (spec.items.empty())
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

std::size_t printer::page(std::string_view body, const output_spec& spec)
{
    const json::value all = parse_body(body);
    const json::array* items = select(all, spec.items).if_array();
    if (!items)
        throw cli_error(exit_failure, "`" + std::string(spec.items) + "` is not a list");
    if (json_)
    {
        const std::vector<std::string_view> texts = element_texts(member_text(body, spec.items));
        if (texts.size() == items->size())
            for (auto t : texts)
                json_text(one_line(t));
        else  // a member whose name the API wrote with escapes: re-encoded
            for (const auto& item : *items)
                json_text(json::serialize(item));
    }
    else if (!items->empty())
        rows(*items, spec);
    out_.flush();
    return items->size();
}

void printer::rows(const json::array& items, const output_spec& spec)
{
    std::vector<std::string_view> columns(table_.columns.begin(), table_.columns.end());
    if (columns.empty())
        columns = spec.columns;
    std::vector<std::vector<std::string>> cells;
    for (const auto& item : items)
    {
        std::vector<std::string> row;
        const json::object* o = item.if_object();
        for (auto c : columns)
        {
            const json::value* f = o ? o->if_contains(c) : nullptr;
            row.push_back(f ? cell(*f) : std::string("-"));
        }
        cells.push_back(std::move(row));
    }
    const bool first = widths_.empty();
    if (first)
    {
        for (auto c : columns)
            widths_.push_back(table_.headers ? c.size() : 0);
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
    if (first && table_.headers)
    {
        std::vector<std::string> names;
        for (auto c : columns)
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

namespace {
std::atomic<bool> json_notices_on{false};
}  // namespace

void set_json_notices(bool on) { json_notices_on = on; }
bool json_notices() { return json_notices_on; }

void notice(std::string_view kind, const std::string& message, json::object fields)
{
    std::string line;
    if (json_notices_on)
    {
        json::object n;
        n["kind"] = kind;
        n["message"] = message;
        for (auto& kv : fields)
            n[kv.key()] = std::move(kv.value());
        line = json::serialize(json::object{{"notice", std::move(n)}});
    }
    else
        line = "ddctl: " + message;
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
}

std::string human_size(double bytes, unsigned base)
{
    static const char* const decimal[] = {"B", "KB", "MB", "GB", "TB"};
    static const char* const binary[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    const char* const* units = base == 1024 ? binary : decimal;
    int u = 0;
    while (bytes >= base && u < 4)
        bytes /= base, ++u;
    char buf[32];
    std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
    return buf;
}

}  // namespace ddctl
