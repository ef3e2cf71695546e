// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// digital-delivery-sandbox: the HTML of its pages (the buyer's download page, the
// store's outbox/assets/products/orders pages). Plain HTML and one stylesheet, no
// script; every value from a request or the store goes through escape().
#pragma once

#include "service.hpp"

#include <string>
#include <string_view>

namespace dd_sandbox::html {

// Text and attribute values (inside double quotes): & < > " ' escaped, bytes that
// are not UTF-8 and control characters replaced by U+FFFD.
std::string escape(std::string_view s);
// A value of the store or the buyer inside text: escaped and isolated in <bdi>,
// so that right-to-left text does not reorder what is around it.
std::string value(std::string_view s);
// Escaped text whose http:// and https:// URLs become links.
std::string linkify(std::string_view text);
// "1.5 MB", "12 KB", "800 bytes"
std::string bytes(std::int64_t n);
// "2026-11-22 10:00 UTC" inside <time datetime="...">
std::string date(time_point t);

struct page_options {
    int status = 200;
    bool wide = false;            // tables: a wider column
    std::string header_html;      // inside <header> (already HTML)
    std::string lang = "en";
};
// A whole document: doctype, lang, viewport, title, stylesheet, header, <main>.
response page(std::string_view title, std::string_view main_html, const page_options& opts = {});
// The same with only a status (the other options their defaults).
response page(std::string_view title, std::string_view main_html, int status);
// 303 See Other to `location` (no body worth reading).
response see_other(std::string location);

} // namespace dd_sandbox::html
