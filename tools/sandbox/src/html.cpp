// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The HTML shell of the sandbox's pages: escaping, the document, the stylesheet.
#include "html.hpp"

#include <cstdio>

namespace dd_sandbox::html {

namespace {

// One stylesheet for every page: readable at a phone's width (tables stack into
// labelled rows under 40rem), contrast at least 4.5:1 for all text.
constexpr std::string_view stylesheet = R"css(
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif;color:#1b1b1b;background:#f6f6f4}
header.top{background:#1f3a5f;color:#fff;padding:.6rem 1rem}
header.top a{color:#fff}
header.top .brand{font-weight:700;margin:0}
header.top nav ul{list-style:none;display:flex;flex-wrap:wrap;gap:.25rem 1rem;margin:.4rem 0 0;padding:0}
header.top form{display:inline;margin:0}
header.top button{background:transparent;color:#fff;border:1px solid #fff;border-radius:4px;font:inherit;padding:0 .5rem;cursor:pointer}
.clock{margin:.3rem 0 0;font-size:.9rem}
main{max-width:46rem;margin:0 auto;padding:1rem}
main.wide{max-width:76rem}
h1{font-size:1.5rem;line-height:1.25;margin:.25rem 0 1rem}
h2{font-size:1.2rem;margin:0 0 .5rem}
h3{font-size:1.05rem;margin:0 0 .25rem}
a{color:#0b57a4}
.card{background:#fff;border:1px solid #d6d6d2;border-radius:8px;padding:1rem;margin:0 0 1rem}
.note{color:#474747;font-size:.9rem}
.message,.body{white-space:pre-wrap;overflow-wrap:anywhere}
.preorder{background:#e6eefb;border-radius:6px;padding:.75rem;margin:0 0 .75rem}
.files{list-style:none;margin:0;padding:0}
.file{border-top:1px solid #e2e2de;padding:.75rem 0;display:flex;flex-wrap:wrap;gap:.25rem 1rem;align-items:center}
.file .name{font-weight:600;overflow-wrap:anywhere;flex:1 1 14rem}
.file .detail{flex:1 1 100%;margin:0;color:#474747;font-size:.9rem}
.state{display:inline-block;padding:.05rem .6rem;border-radius:999px;font-weight:600;font-size:.9rem}
.state-ready{background:#dff3e4;color:#0f5429}
.state-processing{background:#fff1cc;color:#5c3f00}
.state-blocked{background:#fbe2e2;color:#7f1a1a}
.state-waiting{background:#e1e9f8;color:#1d3f7a}
.button{display:inline-block;background:#0b57a4;color:#fff;padding:.45rem 1rem;border-radius:6px;text-decoration:none;font-weight:600;border:0;font:inherit;cursor:pointer}
.button.secondary{background:#fff;color:#0b57a4;border:1px solid #0b57a4}
.key{font-family:ui-monospace,Menlo,Consolas,monospace;background:#f0f0ec;padding:.1rem .4rem;border-radius:4px;overflow-wrap:anywhere}
.sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{text-align:start;padding:.4rem .6rem;border-bottom:1px solid #e2e2de;vertical-align:top;overflow-wrap:anywhere}
th{background:#ecece8}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0 0 1rem}
dt{font-weight:600}
dd{margin:0;overflow-wrap:anywhere}
label{display:block;font-weight:600;margin:.5rem 0 .25rem}
input{font:inherit;padding:.4rem;border:1px solid #6b6b6b;border-radius:4px;width:100%;max-width:20rem}
.row{display:flex;flex-wrap:wrap;gap:.5rem;align-items:flex-end}
.error{background:#fbe2e2;color:#7f1a1a;padding:.5rem .75rem;border-radius:6px}
footer{max-width:46rem;margin:0 auto;padding:0 1rem 2rem;color:#474747;font-size:.85rem}
@media (max-width:40rem){
 table.stack thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0,0,0,0)}
 table.stack tr{display:block;border-bottom:2px solid #d6d6d2;padding:.25rem 0}
 table.stack td{display:block;border:0;padding:.15rem .6rem}
 table.stack td::before{content:attr(data-label) ": ";font-weight:600}
 dl{grid-template-columns:1fr}
}
)css";

void add_security_headers(response& r)
{
    // No script at all; styles only from the page's own <style>; forms post to
    // the sandbox only; no framing; the link of a download page (a capability)
    // is never sent as a Referer, not even to an external asset's host.
    r.headers.emplace_back("Content-Security-Policy",
                           "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; "
                           "form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
    r.headers.emplace_back("Referrer-Policy", "no-referrer");
    r.headers.emplace_back("X-Content-Type-Options", "nosniff");
    r.headers.emplace_back("Cache-Control", "no-store");
}

} // namespace

std::string escape(std::string_view s)
{
    return xml_escape(s);  // &apos; is HTML 5 too
}

std::string value(std::string_view s)
{
    return "<bdi>" + escape(s) + "</bdi>";
}

std::string linkify(std::string_view text)
{
    std::string out;
    std::size_t i = 0;
    while (i < text.size()) {
        std::size_t at = std::string_view::npos;
        for (std::string_view scheme : {"http://", "https://"}) {
            const auto p = text.find(scheme, i);
            if (p != std::string_view::npos && (at == std::string_view::npos || p < at))
                at = p;
        }
        if (at == std::string_view::npos) {
            out += escape(text.substr(i));
            break;
        }
        out += escape(text.substr(i, at - i));
        std::size_t end = at;
        while (end < text.size() && static_cast<unsigned char>(text[end]) > 0x20 &&
               std::string_view("<>\"'`").find(text[end]) == std::string_view::npos)
            ++end;
        const std::string_view url = text.substr(at, end - at);
        out += "<a href=\"" + escape(url) + "\">" + escape(url) + "</a>";
        i = end;
    }
    return out;
}

std::string bytes(std::int64_t n)
{
    char buf[64];
    if (n < 1000)
        std::snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(n));
    else if (n < 1000 * 1000)
        std::snprintf(buf, sizeof buf, "%.1f KB", static_cast<double>(n) / 1e3);
    else if (n < 1000LL * 1000 * 1000)
        std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(n) / 1e6);
    else
        std::snprintf(buf, sizeof buf, "%.2f GB", static_cast<double>(n) / 1e9);
    return buf;
}

std::string date(time_point t)
{
    const std::string iso = format_iso8601(t);  // 2026-11-22T10:00:00.000Z
    return "<time datetime=\"" + iso + "\">" + iso.substr(0, 10) + " " + iso.substr(11, 5) +
           " UTC</time>";
}

response page(std::string_view title, std::string_view main_html, const page_options& opts)
{
    response r;
    r.status = opts.status;
    r.headers.emplace_back("Content-Type", "text/html; charset=utf-8");
    add_security_headers(r);
    std::string& b = r.body;
    b.reserve(4096 + main_html.size());
    b += "<!DOCTYPE html>\n<html lang=\"";
    b += escape(opts.lang);
    b += "\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<meta name=\"robots\" content=\"noindex\">\n<title>";
    b += escape(title);
    b += "</title>\n<style>";
    b += stylesheet;
    b += "</style>\n</head>\n<body>\n";
    if (!opts.header_html.empty()) {
        b += "<header class=\"top\">";
        b += opts.header_html;
        b += "</header>\n";
    }
    b += opts.wide ? "<main class=\"wide\">\n" : "<main>\n";
    b += main_html;
    b += "</main>\n<footer><p>Rendered by digital-delivery-sandbox: the Digital Delivery Service "
         "describes this page's content, not its layout.</p></footer>\n</body>\n</html>\n";
    return r;
}

response page(std::string_view title, std::string_view main_html, int status)
{
    page_options opts;
    opts.status = status;
    return page(title, main_html, opts);
}

response see_other(std::string location)
{
    response r;
    r.status = 303;
    r.headers.emplace_back("Location", std::move(location));
    r.headers.emplace_back("Cache-Control", "no-store");
    r.headers.emplace_back("Referrer-Policy", "no-referrer");
    return r;
}

} // namespace dd_sandbox::html
