// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
#include "payload.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

namespace ddctl {

namespace json = boost::json;

std::string option_name(std::string_view member)
{
    std::string r = "--";
    for (char c : member)
        r += c == '_' ? '-' : c;
    return r;
}

namespace {

std::map<const CLI::Option*, std::vector<std::string>>& completions()
{
    static std::map<const CLI::Option*, std::vector<std::string>> values;
    return values;
}

}  // namespace

CLI::Option* completes_with(CLI::Option* option, std::vector<std::string> values)
{
    completions()[option] = std::move(values);
    return option;
}

const std::vector<std::string>* completion_values(const CLI::Option* option)
{
    const auto it = completions().find(option);
    return it == completions().end() ? nullptr : &it->second;
}

void bad_value(std::string_view member, const std::string& value, std::string_view expected)
{
    throw cli_error(exit_usage, "invalid value for " + option_name(member) + ": `" + value + "` (expected " +
                                    std::string(expected) + ")");
}

std::string read_file_argument(const std::string& arg, const char* option)
{
    std::ostringstream text;
    if (arg == "@-")
    {
        text << std::cin.rdbuf();
        if (std::cin.bad())
            throw cli_error(exit_usage, std::string(option) + ": cannot read stdin");
        return text.str();
    }
    std::ifstream in(arg.substr(1), std::ios::binary);
    if (!in)
        throw cli_error(exit_usage, std::string(option) + ": cannot read " + arg.substr(1));
    text << in.rdbuf();
    return text.str();
}

std::string read_data(const std::string& data)
{
    if (data.empty() || data[0] != '@')
        return data;
    return read_file_argument(data, "--data");
}

typed_field parse_field(const std::string& arg)
{
    const auto eq = arg.find('=');
    if (eq == std::string::npos || eq == 0)
        throw cli_error(exit_usage, "-F takes KEY=VALUE, not `" + arg + "`");
    typed_field f;
    const std::string key = arg.substr(0, eq);
    const auto open = key.find('[');
    f.path.push_back(key.substr(0, open));
    for (auto i = open; i != std::string::npos && i < key.size();)
    {
        const auto close = key.find(']', i);
        if (key[i] != '[' || close == std::string::npos)
            throw cli_error(exit_usage, "-F: `" + key + "` is not NAME, NAME[SUB]... or NAME[]");
        f.path.push_back(key.substr(i + 1, close - i - 1));
        i = close + 1;
    }
    if (f.path.front().empty())
        throw cli_error(exit_usage, "-F: `" + key + "` has no name");
    f.text = arg.substr(eq + 1);
    if (f.text == "true" || f.text == "false")
        f.value = f.text == "true";
    else if (f.text == "null")
        f.value = nullptr;
    else if (!f.text.empty() && f.text[0] == '@')
        f.value = f.text = read_file_argument(f.text, "-F");
    else
    {
        boost::system::error_code ec;
        json::value n = json::parse(f.text, ec);
        f.value = !ec && n.is_number() ? std::move(n) : json::value(f.text);
    }
    return f;
}

json::object fields_object(const std::vector<typed_field>& fields)
{
    json::object root;
    for (const auto& f : fields)
    {
        json::value* at = nullptr;
        json::object* in = &root;
        std::string where;
        for (std::size_t i = 0; i < f.path.size(); ++i)
        {
            const std::string& name = f.path[i];
            where += i ? "[" + name + "]" : name;
            if (in)
                at = &(*in)[name];
            else if (name.empty())  // NAME[]: appended
                at = &at->as_array().emplace_back(nullptr);
            else
                throw cli_error(exit_usage, "-F: `" + where + "`: a list takes NAME[], not a member name");
            if (i + 1 == f.path.size())
                break;
            const bool next_is_array = f.path[i + 1].empty();
            if (at->is_null())
                *at = next_is_array ? json::value(json::array()) : json::value(json::object());
            if (next_is_array ? !at->is_array() : !at->is_object())
                throw cli_error(exit_usage, "-F: `" + where + "` is given as a value and as " +
                                                (next_is_array ? "a list" : "an object"));
            in = at->if_object();
        }
        if (!at->is_null() && !at->is_array() && !at->is_object())
            throw cli_error(exit_usage, "-F: `" + where + "` is given twice");
        if (at->is_array() || at->is_object())
            throw cli_error(exit_usage, "-F: `" + where + "` is given as a value and as a list or object");
        *at = f.value;
    }
    return root;
}

void merge_data(payload_values& v, const std::vector<std::string>& known_lists, const std::vector<std::string>& known)
{
    if (v.data.empty())
        return;
    boost::system::error_code ec;
    const json::value doc = json::parse(read_data(v.data), ec);
    if (ec || !doc.is_object())
        throw cli_error(exit_usage, "--data must be a JSON object" + (ec ? ": " + ec.message() : std::string()));
    auto has = [](const std::vector<std::string>& names, std::string_view n) {
        return std::find(names.begin(), names.end(), n) != names.end();
    };
    for (const auto& kv : doc.get_object())
    {
        const std::string name(kv.key());
        const json::value& val = kv.value();
        if (has(known_lists, name))
        {
            if (!val.is_array())
                throw cli_error(exit_usage, "--data: `" + name + "` must be an array of ids");
            if (v.lists.count(name))
                continue;  // the option wins
            auto& ids = v.lists[name];
            for (const auto& e : val.get_array())
            {
                if (!e.is_string())
                    throw cli_error(exit_usage, "--data: `" + name + "` must be an array of strings");
                ids.emplace_back(e.get_string());
            }
            continue;
        }
        if (!has(known, name))
            throw cli_error(exit_usage, "--data: this command has no field `" + name +
                                            "` (fields the typed API does not know: use `ddctl request`)");
        if (v.text.count(name) || val.is_null())
            continue;  // the option wins; null: not set
        if (val.is_string())
            v.text[name] = std::string(val.get_string());
        else if (val.is_object() || val.is_array())
            throw cli_error(exit_usage, "--data: `" + name + "` must be a single value");
        else
            v.text[name] = json::serialize(val);  // numbers and true/false, as written
    }
}

}  // namespace ddctl
