// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The payload of an endpoint (its query or body model) on the command line:
// one option per described member (`byte_size` -> `--byte-size`), and
// `--data JSON` / `--data @file.json` for the whole body. Found with
// Boost.Describe, so every field of every request model is reachable and a
// field added to a model gets its option without a change here.
//
// The models are views: their strings refer to the std::string values kept
// in `payload_values` (named, alive until the request is built), assigned as
// explicit std::string_view, never from a temporary.
#ifndef DDCTL_PAYLOAD_HPP
#define DDCTL_PAYLOAD_HPP

#include "errors.hpp"

#include <digital_delivery/id_list.hpp>
#include <digital_delivery/open_enum.hpp>
#include <digital_delivery/timestamp.hpp>

#include <CLI/CLI.hpp>

#include <boost/describe/enumerators.hpp>
#include <boost/describe/members.hpp>
#include <boost/json/value.hpp>
#include <boost/mp11/algorithm.hpp>

#include <charconv>
#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace ddctl {

namespace dd = digital_delivery;

/// What the command line (and --data) gave for one payload, by member name.
struct payload_values
{
    std::map<std::string, std::string> text;                 ///< scalar members, as text
    std::map<std::string, std::vector<std::string>> lists;   ///< id lists
    std::string data;                                        ///< --data: JSON text or @file

    bool empty() const { return text.empty() && lists.empty() && data.empty(); }
};

/// The content of the file `@FILE` names, or of stdin for `@-` (`option`
/// names the option in the error). Throws cli_error(exit_usage).
std::string read_file_argument(const std::string& arg, const char* option);

/// The text of --data: the argument itself, or the file named after '@' (`@-`: stdin).
std::string read_data(const std::string& data);

/// One `-F KEY=VALUE` field of `ddctl request`.
struct typed_field
{
    std::vector<std::string> path;  ///< `asset[name]` -> {"asset", "name"}; "" for `[]`: appended to an array
    std::string text;               ///< the value as text (the file's content for @FILE)
    boost::json::value value;       ///< the value typed: a number, true, false, null, else the text
};

/// Parses `-F KEY=VALUE` (KEY: `name`, `name[sub]...`, `name[]`; VALUE: a JSON
/// number, true, false, null, `@FILE`/`@-` for a file's content as a string,
/// else a string). Throws cli_error(exit_usage).
typed_field parse_field(const std::string& arg);

/// The fields as one JSON object (`a[b]=1 a[c]=x` -> {"a": {"b": 1, "c": "x"}}).
/// Throws cli_error(exit_usage) when two fields disagree on a member's type.
boost::json::object fields_object(const std::vector<typed_field>& fields);

/// `--data`'s JSON object merged under the options (an option wins over the
/// same field in --data). Throws cli_error(exit_usage).
void merge_data(payload_values& v, const std::vector<std::string>& known_lists, const std::vector<std::string>& known);

/// "byte_size" -> "--byte-size".
std::string option_name(std::string_view member);

/// The values shell completion offers after `option` (an enumeration's names,
/// true|false): set where the option is made, read by `ddctl __complete`.
CLI::Option* completes_with(CLI::Option* option, std::vector<std::string> values);
const std::vector<std::string>* completion_values(const CLI::Option* option);

[[noreturn]] void bad_value(std::string_view member, const std::string& value, std::string_view expected);

namespace detail {

template <class T>
struct optional_of
{
    using type = T;
    static constexpr bool is_optional = false;
};
template <class T>
struct optional_of<std::optional<T>>
{
    using type = T;
    static constexpr bool is_optional = true;
};

template <class T>
constexpr bool is_id_list = std::is_same_v<typename optional_of<T>::type, dd::id_list>;

template <class E>
std::vector<std::string> enum_values()
{
    std::vector<std::string> r;
    boost::mp11::mp_for_each<boost::describe::describe_enumerators<E>>([&](auto d) { r.emplace_back(d.name); });
    return r;
}

template <class E>
std::string enum_names()
{
    std::string r;
    for (const auto& n : enum_values<E>())
        r += (r.empty() ? "" : "|") + n;
    return r;
}

/// What the help says a member takes.
template <class U>
std::string value_help()
{
    if constexpr (std::is_same_v<U, bool>)
        return "true|false";
    else if constexpr (std::is_integral_v<U>)
        return "integer";
    else if constexpr (std::is_enum_v<U>)
        return enum_names<U>();
    else if constexpr (std::is_same_v<U, dd::timestamp>)
        return "ISO 8601 time, e.g. 2026-12-01T10:00:00Z";
    else if constexpr (std::is_same_v<U, dd::date>)
        return "date YYYY-MM-DD";
    else if constexpr (std::is_same_v<U, dd::id_list>)
        return "ids, comma-separated or repeated";
    else
        return "text";
}

/// Sets `member` (a U or an optional<U>) from the text `s`.
template <class M>
void assign(M& member, std::string_view name, const std::string& s)
{
    using U = typename optional_of<M>::type;
    if constexpr (std::is_same_v<U, bool>)
    {
        if (s == "true")
            member = true;
        else if (s == "false")
            member = false;
        else
            bad_value(name, s, "true or false");
    }
    else if constexpr (std::is_integral_v<U>)
    {
        U v{};
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc{} || p != s.data() + s.size())
            bad_value(name, s, "an integer");
        member = v;
    }
    else if constexpr (std::is_enum_v<U>)
    {
        auto v = dd::enum_from_string<U>(s);
        if (!v)
            bad_value(name, s, enum_names<U>());
        member = *v;
    }
    else if constexpr (std::is_same_v<U, dd::timestamp>)
    {
        auto v = dd::parse_timestamp(s);
        if (!v)
            bad_value(name, s, "an ISO 8601 time such as 2026-12-01T10:00:00Z");
        member = *v;
    }
    else if constexpr (std::is_same_v<U, dd::date>)
    {
        auto v = dd::parse_date(s);
        if (!v)
            bad_value(name, s, "a date YYYY-MM-DD");
        member = *v;
    }
    else
        member = std::string_view(s);  // a view of the named string kept in payload_values
}

}  // namespace detail

/// Adds one option per member of the model M to `app`, storing into `v`,
/// plus --data. `skip`: members given otherwise (positionals).
template <class M>
void add_payload_options(CLI::App& app, payload_values& v, std::vector<std::string_view> skip = {})
{
    boost::mp11::mp_for_each<boost::describe::describe_members<M, boost::describe::mod_public>>([&](auto d) {
        const std::string name = d.name;
        for (auto s : skip)
            if (s == name)
                return;
        using T = std::remove_cvref_t<decltype(std::declval<M&>().*d.pointer)>;
        using U = typename detail::optional_of<T>::type;
        const std::string help = "`" + name + "` (" + detail::value_help<U>() + ")";
        if constexpr (detail::is_id_list<T>)
            app.add_option_function<std::vector<std::string>>(
                   option_name(name), [&v, name](const std::vector<std::string>& ids) { v.lists[name] = ids; }, help)
                ->delimiter(',');
        else
        {
            auto* o = app.add_option_function<std::string>(
                option_name(name), [&v, name](const std::string& s) { v.text[name] = s; }, help);
            if constexpr (std::is_same_v<U, bool>)
                completes_with(o, {"true", "false"});
            else if constexpr (std::is_enum_v<U>)
                completes_with(o, detail::enum_values<U>());
        }
    });
    app.add_option("--data", v.data, "the whole payload as a JSON object, or @FILE to read it from a file, @- from stdin "
                                     "(options given as well win over its fields)");
}

/// Fills the model from the values (after merging --data). Throws
/// cli_error(exit_usage) for a malformed value or an unknown --data field.
template <class M>
void fill_payload(M& m, payload_values& v)
{
    std::vector<std::string> known, known_lists;
    boost::mp11::mp_for_each<boost::describe::describe_members<M, boost::describe::mod_public>>([&](auto d) {
        using T = std::remove_cvref_t<decltype(m.*d.pointer)>;
        (detail::is_id_list<T> ? known_lists : known).push_back(d.name);
    });
    merge_data(v, known_lists, known);
    boost::mp11::mp_for_each<boost::describe::describe_members<M, boost::describe::mod_public>>([&](auto d) {
        auto& member = m.*d.pointer;
        using T = std::remove_cvref_t<decltype(member)>;
        if constexpr (detail::is_id_list<T>)
        {
            if (auto it = v.lists.find(d.name); it != v.lists.end())
                member = dd::id_list(it->second);  // a view of the named vector kept in payload_values
        }
        else if (auto it = v.text.find(d.name); it != v.text.end())
            detail::assign(member, d.name, it->second);
    });
}

}  // namespace ddctl

#endif
