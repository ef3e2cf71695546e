#include "payload.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <fstream>
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

void bad_value(std::string_view member, const std::string& value, std::string_view expected)
{
    throw cli_error(exit_usage, "invalid value for " + option_name(member) + ": `" + value + "` (expected " +
                                    std::string(expected) + ")");
}

std::string read_data(const std::string& data)
{
    if (data.empty() || data[0] != '@')
        return data;
    std::ifstream in(data.substr(1), std::ios::binary);
    if (!in)
        throw cli_error(exit_usage, "--data: cannot read " + data.substr(1));
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
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
