#!/usr/bin/env python3
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
"""Compile every C++ snippet of the documentation (README.md, docs/*.md), and
run those marked `run`.

Every fenced block whose info string starts with `cpp` or `c++` becomes its own
translation unit, compiled with `<cxx> -std=c++20 -fsyntax-only -I<root>/include`
plus the -I/-D/--cxxflag options given here. Each TU starts with a fixed prelude
(PRELUDE_HEADERS and PRELUDE_ALIASES below: the umbrella header and the other
public headers a snippet may use, Asio, Boost.JSON, the standard library, and
`dd`, `asio`, `json`, chrono literals). Then:

  * a snippet that looks like a complete TU (an `#include` line, or a top-level
    definition at column 0: `int main`, `struct`, `class`, `template`,
    `namespace x {`, or a function definition such as
    `asio::awaitable<void> f(...)` followed by `{`) is placed as is;
  * anything else is statement code and is placed in a block inside
        asio::awaitable<void> snippet_body(<CONTEXT parameters>) {
            <CONTEXT locals>
            { <snippet> }
            co_return;
        }
    so it may use the names of CONTEXT (client, diag, order_id, ...) and may
    declare its own variables with the same names.

Compiler messages point at the Markdown file and line (`#line`).

Conventions in the Markdown, an HTML comment on the line(s) right before the
opening fence (several may be stacked, one after another):

  <!-- snippet: not-compiled (reason) -->
      The snippet is not compiled, e.g. code shown as what NOT to write, or
      pseudo code. The reason is mandatory and printed.
  <!-- snippet: run -->
      The snippet is statement code that is also RUN: all `run` snippets go
      into ONE program (one translation unit, compiled and linked once, with
      GoogleTest), each as a test that runs it to completion as a coroutine on
      its own `asio::io_context ioc`. It is also given RUN_CONTEXT's names: a
      `testing::fake_transport` `fake` and a `client` over it (retries off,
      its parameters in `params`), ids (`order_id` is "o1", ...), `url`,
      `key`, `ex`, `diag`, the type `my_transport`. The run program's working
      directory is the script's work directory (temporary unless --keep), so
      relative paths a snippet writes go there. The test fails when
      an EXPECT_/ASSERT_ fails, the snippet throws, it does not finish (the
      io_context ran out of work first), or a line it claims to print (the
      comment after a line writing to std::cout, std::cerr, printf or puts,
      `<...>` standing for anything) is not a line of what it printed (stdout
      and stderr are captured while it runs). Its `context` declarations go in
      a namespace of its own (their `#include` lines before it); when they
      define `void script(dd::testing::fake_transport& fake)`, it is called
      first, to script the fake's answers.
  <!-- snippet: run sandbox [STORE FLAGS] -->
      The same, against the digital-delivery-sandbox (--sandbox-exe, or the
      environment variable DIGITAL_DELIVERY_SANDBOX_EXE), started once for the
      whole run program: the snippet gets a store of its own, created with the
      STORE FLAGS (e.g. `--seed-orders 300`; none: the built-in defaults), as
      `store` (dd::testing::sandbox::store) of `sb` (dd::testing::sandbox&),
      a `client` of it over a `dd::beast_transport transport` (default
      parameters, in `params`), `order_id` (the store's first order, "" when it
      has none), `asset_id` (a new licence asset), `product_id` (a new digital
      product with that asset), `url`, `key`, `ex`, `diag`, `my_transport`.
      Without a sandbox executable these snippets are compiled only, and the
      summary says so.
  <!-- snippet: no-run (reason) -->
      The snippet is compiled but not run; the reason is mandatory and printed
      in the summary. A snippet that claims a result (EXPECT_/ASSERT_/assert,
      or a comment after a line that prints, showing its output) must be
      either `run` or `no-run (reason)`: otherwise it is a convention error.
  <!-- snippet: context DECLARATIONS -->
      DECLARATIONS (C++, may span several lines up to `-->`) are placed after
      the prelude at namespace scope, before the snippet: an extra #include, a
      type or function the snippet assumes, ...

Any other `<!-- snippet: ... -->` comment, or one not directly before a C++
block, is an error.

Output: one line per snippet, `ok|ran|FAIL|skipped file:line`, the first compiler
errors (or test output) under each failure, then a summary: compiled N, run M,
and why each of the others is not run. Exit status: 0 when every compiled
snippet compiles and every `run` snippet passes, 1 when one fails, 2 on a
usage or convention error.

Running needs --link (the libraries of the run program, repeatable: GoogleTest,
Boost.JSON, Boost.URL, OpenSSL, -pthread; tests/docs/CMakeLists.txt passes
them); without --link, `run` snippets are only compiled and the summary says so.

Usage:
  check_snippets.py [--root DIR] [--cxx g++-12] [-j N] [-I DIR] [-D NAME[=V]]
                    [--cxxflag FLAG] [--link LIB] [--errors N] [--keep DIR] [FILE.md ...]
Without files: <root>/README.md and <root>/docs/*.md (root defaults to the
repository this script is in).
"""

import argparse
import concurrent.futures
import fnmatch
import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile

# --- the prelude ------------------------------------------------------------
# Public headers: only those that exist under <root>/include are included.
PRELUDE_HEADERS = [
    "digital_delivery.hpp",
    "digital_delivery/beast_transport.hpp",
    "digital_delivery/paginate.hpp",
    "digital_delivery/raw_request.hpp",
    "digital_delivery/upload.hpp",
    "digital_delivery/watermark.hpp",
    "digital_delivery/asset_edits.hpp",
    "digital_delivery/testing/fake_transport.hpp",
    "digital_delivery/testing/virtual_clock.hpp",
    "digital_delivery/testing/cassette.hpp",
    "digital_delivery/otlp_exporter.hpp",
]
SYSTEM_HEADERS = [
    "boost/asio.hpp",
    "boost/asio/experimental/awaitable_operators.hpp",
    "boost/json.hpp",
    "chrono", "cstdint", "cstdio", "cstdlib", "functional", "iostream", "map",
    "memory", "optional", "span", "string", "string_view", "system_error",
    "utility", "vector",
]
PRELUDE_ALIASES = """\
namespace dd = digital_delivery;
namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;
"""

# --- the context of statement snippets (the one place to extend) -----------
# (C++ type, names): parameters of snippet_body, the names snippets rely on.
CONTEXT_PARAMETERS = [
    ("dd::client&", ["client"]),
    ("dd::diagnostics&", ["diag"]),
    ("std::string", ["id", "order_id", "product_id", "asset_id"]),
    ("asio::any_io_executor", ["ex", "executor"]),
    ("asio::io_context&", ["ioc"]),
    ("dd::client_params", ["params"]),
    ("std::string", ["url", "key"]),                        # base URL, API key
    ("std::shared_ptr<dd::body_source>", ["src", "other_src"]),
    ("dd::upload_asset_params", ["meta"]),
]
# Declarations at the start of snippet_body, before the snippet's block.
CONTEXT_LOCALS = """\
using my_transport = dd::beast_transport;   // "your transport" in docs/transport.md
"""

DIRECTIVE_RE = re.compile(r"^\s*<!--\s*snippet:\s*(.*?)\s*(-->)?\s*$")
FENCE_RE = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)(.*)$")
CPP_INFO = {"cpp", "c++"}

# A top-level definition at column 0 makes the snippet a complete TU.
TU_LINE_RES = [
    re.compile(r"^\s*#\s*include\b"),
    re.compile(r"^int\s+main\s*\("),
    re.compile(r"^(struct|class|union|enum)\s+\w+[^;]*$"),   # a definition, not `struct x;`
    re.compile(r"^template\s*<"),
    re.compile(r"^namespace\s+[\w:]*\s*\{?\s*$"),            # not `namespace dd = ...;`
    re.compile(r"^(inline\s+)?(constexpr\s+)?concept\b"),
]
STATEMENT_KEYWORDS = {"if", "else", "for", "while", "switch", "return", "co_return",
                      "co_await", "catch", "do", "sizeof", "decltype"}
# `type name(args)` at column 0 with `{` at its end or on the next line.
FUNCTION_HEAD_RE = re.compile(
    r"^(?:[A-Za-z_][\w:]*(?:<[^;{}]*>)?[\s*&]+)+([A-Za-z_]\w*)\s*\([^;{}]*\)"
    r"\s*(?:const\s*)?(?:noexcept\s*)?(?:->\s*[^;{}]+)?(\{)?\s*$")


class ConventionError(Exception):
    pass


class Snippet:
    def __init__(self, path, display, line, code, code_line, skip_reason, context, run=False, no_run=None,
                 sandbox=None):
        self.path = path            # file on disk
        self.display = display      # file as printed (relative to root when possible)
        self.line = line            # line of the opening fence (1-based)
        self.code = code            # the block's text
        self.code_line = code_line  # line of the block's first line of code
        self.skip_reason = skip_reason
        self.context = context      # list of (line, text) of `snippet: context` directives
        self.run = run              # `snippet: run`: compiled into the run program and run
        self.no_run = no_run        # `snippet: no-run (reason)`: why it is compiled only
        self.sandbox = sandbox      # `snippet: run sandbox FLAGS`: the store's flags (a list), else None


def parse_directive(lines, i):
    """The `<!-- snippet: ... -->` comment starting at line i: (kind, text, last line index)."""
    m = DIRECTIVE_RE.match(lines[i])
    body = [m.group(1)]
    j = i
    if not m.group(2):  # spans several lines
        while True:
            j += 1
            if j >= len(lines):
                raise ConventionError("unterminated <!-- snippet: comment")
            end = lines[j].find("-->")
            if end >= 0:
                if lines[j][end + 3:].strip():
                    raise ConventionError("text after --> of a snippet comment")
                body.append(lines[j][:end])
                break
            body.append(lines[j])
    raw = "\n".join(body)          # line k of raw is line i + 1 + k of the file
    m = re.match(r"\s*(\S*)", raw)
    kind = m.group(1)
    rest = raw[m.end():].strip()
    if kind == "run":
        if rest and not re.fullmatch(r"sandbox(\s.*)?", rest, re.S):
            raise ConventionError("`snippet: run` takes nothing after it, or `sandbox [STORE FLAGS]`")
        return kind, rest, j
    if kind in ("not-compiled", "no-run"):
        m = re.fullmatch(r"\((.*)\)", rest, re.S)
        if not m or not m.group(1).strip():
            raise ConventionError(f"`snippet: {kind}` needs a reason: "
                                  f"<!-- snippet: {kind} (why) -->")
        return kind, m.group(1).strip(), j
    if kind == "context":
        if not rest:
            raise ConventionError("`snippet: context` needs declarations")
        return kind, raw[m.end():], j   # as is: its first line is the comment's first line
    raise ConventionError(f"unknown snippet comment `{kind}` "
                          "(known: not-compiled (reason), run, no-run (reason), context DECLARATIONS)")


def extract(path, display):
    """The C++ snippets of one Markdown file."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    snippets = []
    pending = []        # directives directly above the current line: (kind, text, line)
    pending_end = -2    # index of the last line of the last pending directive
    i = 0
    while i < len(lines):
        line = lines[i]
        where = f"{display}:{i + 1}"
        try:
            if DIRECTIVE_RE.match(line):
                if pending and pending_end != i - 1:
                    raise ConventionError("snippet comment not directly before a ```cpp block")
                kind, text, end = parse_directive(lines, i)
                pending.append((kind, text, i + 1))
                pending_end = end
                i = end + 1
                continue
        except ConventionError as e:
            raise ConventionError(f"{where}: {e}") from None
        m = FENCE_RE.match(line)
        if not m:
            if pending:
                raise ConventionError(f"{display}:{pending[0][2]}: snippet comment "
                                      "not directly before a ```cpp block")
            i += 1
            continue
        indent, fence, info = len(m.group(1)), m.group(2), m.group(3).lower()
        if fence[0] == "`" and "`" in m.group(4):
            i += 1  # not a fence (inline code)
            continue
        close = re.compile(r"^ {0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$")
        j = i + 1
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        body = [l[indent:] if l[:indent].strip() == "" else l.lstrip() for l in lines[i + 1:j]]
        if info in CPP_INFO:
            skip = None
            run = False
            sandbox = None
            no_run = None
            context = []
            for kind, text, dline in pending:
                if kind == "not-compiled":
                    skip = text
                elif kind == "run":
                    run = True
                    if text:
                        sandbox = shlex.split(text)[1:]
                elif kind == "no-run":
                    no_run = text
                else:
                    context.append((dline, text))
            code = "\n".join(body) + "\n"
            where = f"{display}:{i + 1}"
            if sum([skip is not None, run, no_run is not None]) > 1:
                raise ConventionError(f"{where}: at most one of not-compiled, run, no-run")
            if sandbox is not None and any(SCRIPT_RE.search(text) for _, text in context):
                raise ConventionError(f"{where}: a `run sandbox` snippet has no fake to script")
            if run and is_complete_tu(code):
                raise ConventionError(f"{where}: a `run` snippet is statement code (it looks like a complete TU)")
            if skip is None and not run and no_run is None and claims_result(code):
                raise ConventionError(f"{where}: the snippet claims a result ({claims_result(code)}): "
                                      "mark it <!-- snippet: run --> or <!-- snippet: no-run (why) -->")
            snippets.append(Snippet(path, display, i + 1, code, i + 2, skip, context, run, no_run, sandbox))
        elif pending:
            raise ConventionError(f"{display}:{pending[0][2]}: snippet comment before a "
                                  f"```{info or '(no language)'} block, not a ```cpp one")
        pending = []
        i = j + 1
    if pending:
        raise ConventionError(f"{display}:{pending[0][2]}: snippet comment not directly before a ```cpp block")
    return snippets


# What makes a snippet claim a result: an assertion, or a comment showing the
# output of a line that prints.
CLAIM_RES = [
    re.compile(r"\b(?:EXPECT|ASSERT)_\w+\s*\("),
    re.compile(r"(?<![\w.])assert\s*\("),
    re.compile(r"(?:\bcout\b|\bcerr\b|\bprintf\s*\(|\bprintln\s*\(|\bputs\s*\().*;\s*//"),
]


def claims_result(code):
    """The first line of `code` that claims a result, or None."""
    for line in code.split("\n"):
        if any(r.search(line) for r in CLAIM_RES):
            return line.strip()
    return None


def is_complete_tu(code):
    lines = code.split("\n")
    for n, line in enumerate(lines):
        if any(r.match(line) for r in TU_LINE_RES):
            return True
        m = FUNCTION_HEAD_RE.match(line)
        if m and m.group(1) not in STATEMENT_KEYWORDS:
            if m.group(2):
                return True
            rest = [l for l in lines[n + 1:] if l.strip()]
            if rest and rest[0].lstrip().startswith("{") and not rest[0].startswith((" ", "\t")):
                return True
    return False


def prelude(include_dir):
    out = ["// Generated by tests/docs/check_snippets.py: the prelude."]
    for h in PRELUDE_HEADERS:
        if os.path.isfile(os.path.join(include_dir, h)):
            out.append(f"#include <{h}>")
    out += [f"#include <{h}>" for h in SYSTEM_HEADERS]
    out.append("")
    out.append(PRELUDE_ALIASES)
    return "\n".join(out)


def cxx_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def translation_unit(snippet, include_dir, pch=False):
    """(text of the TU, whether the snippet is wrapped as statement code).
    With `pch`, the prelude comes from the precompiled header instead."""
    md = cxx_string(snippet.display)
    out = [] if pch else [prelude(include_dir)]
    for dline, text in snippet.context:
        out.append(f"#line {dline} {md}")
        out.append(text)
    wrapped = not is_complete_tu(snippet.code)
    if wrapped:
        params = ", ".join(f"{t} {n}" for t, names in CONTEXT_PARAMETERS for n in names)
        out.append(f"asio::awaitable<void> snippet_body({params})")
        out.append("{")
        out.append(CONTEXT_LOCALS)
        out.append("{")
    out.append(f"#line {snippet.code_line} {md}")
    out.append(snippet.code)
    if wrapped:
        out.append("}")
        out.append("co_return;")
        out.append("}")
    return "\n".join(out) + "\n", wrapped


# The names every `run` snippet is given, whatever it runs against.
RUN_LOCALS = CONTEXT_LOCALS + """\
asio::any_io_executor ex = ioc.get_executor(), executor = ex;
dd::diagnostics diag;
"""
# The names a `run` snippet is given (the fixture of the run program).
RUN_CONTEXT = RUN_LOCALS + """\
auto fake = std::make_shared<dd::testing::fake_transport>(ioc.get_executor());
std::string url = "https://dd.test/api/v1/external", key = "k";
dd::client_params params{.base_url = url, .api_key = key, .retry = {.enabled = false}};
dd::client client(fake, params);
std::string id = "a1", order_id = "o1", product_id = "p1", asset_id = "a1";
"""
# The names a `run sandbox` snippet is given: a store of its own in the one
# sandbox of the run program, a client of it over the Beast transport (the
# default parameters), the store's first order, a new licence asset and a new
# digital product with that asset.
RUN_SANDBOX_CONTEXT = RUN_LOCALS + """\
dd::beast_transport transport(ioc.get_executor());
dd::client_params params{.base_url = store.base_url, .api_key = store.api_key};
dd::client client(transport, params);
std::string order_id, asset_id, product_id;
co_await dd_snippets::sandbox_ids(client, order_id, asset_id, product_id);
std::string id = asset_id;
std::string url = store.base_url, key = store.api_key;
"""
# Once in the run program, before the snippets.
RUN_HELPERS = """\
namespace dd_snippets {
// The sandbox of the `run sandbox` snippets, started by the first of them;
// null when DIGITAL_DELIVERY_SANDBOX_EXE is not set (they are skipped).
inline dd::testing::sandbox* shared_sandbox()
{
    const char* exe = std::getenv("DIGITAL_DELIVERY_SANDBOX_EXE");
    if (!exe || !*exe)
        return nullptr;
    static dd::testing::sandbox sb;
    return &sb;
}

// The ids of RUN_SANDBOX_CONTEXT.
inline asio::awaitable<void> sandbox_ids(dd::client& client, std::string& order_id, std::string& asset_id,
                                         std::string& product_id)
{
    const dd::order_list first = co_await dd::async_list_orders(client, {.per_page = 1});
    if (!first.orders.empty())
        order_id = first.orders.front().id;
    const dd::asset_with_upload a =
        co_await dd::async_create_asset(client, dd::new_asset{.type = dd::asset_type::licence, .name = "licence"});
    asset_id = a.asset.id;
    const std::string ids[] = {asset_id};
    const dd::digital_product p =
        co_await dd::async_create_digital_product(client, {.store_product_id = 7500000002222, .asset_ids = ids});
    product_id = p.id;
}

// While a snippet runs, file descriptors 1 and 2 (std::cout, std::cerr,
// printf) write to a file; finish() restores them and returns what was written.
class output_capture
{
public:
    output_capture() : file_(std::tmpfile())
    {
        flush();
        if (!file_)
            throw std::runtime_error("tmpfile() failed");
        out_ = ::dup(1);
        err_ = ::dup(2);
        ::dup2(::fileno(file_), 1);
        ::dup2(::fileno(file_), 2);
    }
    output_capture(const output_capture&) = delete;
    output_capture& operator=(const output_capture&) = delete;
    ~output_capture() { finish(); }

    std::string finish()
    {
        std::string text;
        if (!file_)
            return text;
        flush();
        ::dup2(out_, 1);
        ::dup2(err_, 2);
        ::close(out_);
        ::close(err_);
        std::rewind(file_);
        char buf[4096];
        for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, file_)) > 0;)
            text.append(buf, n);
        std::fclose(file_);
        file_ = nullptr;
        return text;
    }

private:
    static void flush()
    {
        std::cout.flush();
        std::cerr.flush();
        std::fflush(stdout);
        std::fflush(stderr);
    }
    std::FILE* file_;
    int out_ = -1, err_ = -1;
};
}  // namespace dd_snippets
"""
SCRIPT_RE = re.compile(r"\bvoid\s+script\s*\(\s*dd::testing::fake_transport\s*&")
# A line that prints (std::cout, std::cerr, printf, puts) and, in the comment
# after it, what it prints.
PRINT_CLAIM_RE = re.compile(r"(?:\bstd::cout\b|\bstd::cerr\b|\bprintf\s*\(|\bputs\s*\().*;\s*//\s*(.*?)\s*$")


def expected_output(code):
    """Regexes (ECMAScript) of the lines a snippet claims to print."""
    out = []
    for line in code.split("\n"):
        m = PRINT_CLAIM_RE.search(line)
        if m:
            parts = re.split(r"(<[^<>]*>)", m.group(1))
            out.append("".join(".+" if p.startswith("<") else re.escape(p) for p in parts if p))
    return out


def run_test_name(index):
    return f"snippet_{index:03d}"


def run_program(snippets, include_dir, pch=False):
    """The one translation unit of every `run` snippet: [(index, snippet)]."""
    out = [] if pch else [prelude(include_dir)]
    out.append("#include <digital_delivery/testing/sandbox.hpp>")
    out.append("#include <gtest/gtest.h>")
    for h in ("cstdio", "exception", "regex", "stdexcept", "unistd.h"):
        out.append(f"#include <{h}>")
    out.append(RUN_HELPERS)
    for index, sn in snippets:
        md = cxx_string(sn.display)
        name = run_test_name(index)
        sandbox = sn.sandbox is not None
        for dline, text in sn.context:        # includes at namespace scope, the rest in the snippet's namespace
            for k, line in enumerate(text.split("\n")):
                if re.match(r"^\s*#\s*include\b", line):
                    out.append(f"#line {dline + k} {md}")
                    out.append(line)
        out.append(f"namespace {name} {{")
        for dline, text in sn.context:
            out.append(f"#line {dline} {md}")
            out.append("\n".join("" if re.match(r"^\s*#\s*include\b", l) else l for l in text.split("\n")))
        has_script = any(SCRIPT_RE.search(text) for _, text in sn.context)
        if sandbox:
            out.append("asio::awaitable<void> body(asio::io_context& ioc, dd::testing::sandbox& sb, "
                       "dd::testing::sandbox::store store)")
        else:
            out.append("asio::awaitable<void> body(asio::io_context& ioc)")
        out.append("{")
        out.append(RUN_SANDBOX_CONTEXT if sandbox else RUN_CONTEXT)
        if has_script:
            out.append("script(*fake);")
        out.append("{")
        out.append(f"#line {sn.code_line} {md}")
        out.append(sn.code)
        out.append("}")
        out.append("co_return;")
        out.append("}")
        out.append(f"}}  // namespace {name}")
        out.append(f"TEST(docs, {name})")
        out.append("{")
        out.append(f"    SCOPED_TRACE({cxx_string(f'{sn.display}:{sn.line}')});")
        if sandbox:
            out.append("    dd::testing::sandbox* sb = dd_snippets::shared_sandbox();")
            out.append("    if (!sb)")
            out.append('        GTEST_SKIP() << "DIGITAL_DELIVERY_SANDBOX_EXE is not set";')
            flags = ", ".join(cxx_string(f) for f in sn.sandbox)
            out.append(f"    const dd::testing::sandbox::store store = sb->create_store({{{flags}}});")
        out.append("    asio::io_context ioc;")
        out.append("    bool finished = false;")
        out.append("    std::exception_ptr error;")
        out.append("    dd_snippets::output_capture capture;")
        args = "ioc, *sb, store" if sandbox else "ioc"
        out.append(f"    asio::co_spawn(ioc, {name}::body({args}), [&](std::exception_ptr e) {{ finished = true; error = e; }});")
        out.append("    while (!finished && ioc.run_one())")   # the Beast transport's idle connections keep it busy
        out.append("        ;")
        out.append("    const std::string printed = capture.finish();")
        out.append("    std::cout << printed;")
        for rx in expected_output(sn.code):
            out.append(f'    EXPECT_TRUE(std::regex_search(printed, std::regex(R"dd_re((^|\\n){rx}(\\n|$))dd_re")))')
            out.append(f'        << "the snippet claims it prints a line like " << {cxx_string(rx)} << ", it printed:\\n" << printed;')
        out.append('    ASSERT_TRUE(finished) << "the snippet did not finish: the io_context ran out of work first";')
        out.append("    if (error)")
        out.append("    {")
        out.append("        try { std::rethrow_exception(error); }")
        out.append('        catch (const std::exception& e) { FAIL() << "the snippet threw: " << e.what(); }')
        out.append('        catch (...) { FAIL() << "the snippet threw"; }')
        out.append("    }")
        out.append("}")
    out.append("int main(int argc, char** argv)")
    out.append("{")
    out.append("    testing::InitGoogleTest(&argc, argv);")
    out.append("    return RUN_ALL_TESTS();")
    out.append("}")
    return "\n".join(out) + "\n"


def build_and_run(snippets, args, work_dir, pch_flags):
    """Compiles, links and runs the run program. {index: (status, lines)}."""
    src = os.path.join(work_dir, "run_snippets.cpp")
    exe = os.path.join(work_dir, "run_snippets")
    with open(src, "w", encoding="utf-8") as f:
        f.write(run_program(snippets, args.include_dir, pch=pch_flags is not None))
    cmd = base_command(args) + (pch_flags or []) + [src, "-o", exe] + args.link
    if not args.link:
        cmd = base_command(args) + ["-fsyntax-only"] + (pch_flags or []) + [src]
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=args.timeout)
    except (subprocess.TimeoutExpired, OSError) as e:
        return {i: ("FAIL", [f"the run program: {e}"]) for i, _ in snippets}
    if r.returncode != 0:
        errs = first_errors(r.stdout, args.errors)
        return {i: ("FAIL", ["the run program does not compile:"] + errs) for i, _ in snippets}
    if not args.link:
        return {i: ("ok", []) for i, _ in snippets}
    env = dict(os.environ)
    if args.sandbox_exe:
        env["DIGITAL_DELIVERY_SANDBOX_EXE"] = os.path.abspath(args.sandbox_exe)   # the program runs elsewhere
    try:
        r = subprocess.run([os.path.abspath(exe)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=args.timeout, env=env, cwd=work_dir)
        output = r.stdout
    except subprocess.TimeoutExpired as e:
        output = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        output += f"\ntimed out after {args.timeout} s"
    results = {}
    for i, _ in snippets:
        name = f"docs.{run_test_name(i)}"
        if re.search(r"^\[\s+OK \] " + re.escape(name) + r"\b", output, re.M):
            results[i] = ("ran", [])
        elif re.search(r"^\[\s+SKIPPED \] " + re.escape(name) + r"\b", output, re.M):
            results[i] = ("ok", [])   # a `run sandbox` snippet without a sandbox: compiled only
        else:
            # the test's own output: from its RUN line to its end
            m = re.search(r"^\[ RUN\s+\] " + re.escape(name) + r"\n(.*?)(?=^\[ RUN|\Z)", output, re.M | re.S)
            lines = [l for l in (m.group(1) if m else output).splitlines() if l.strip()][:args.errors * 4]
            results[i] = ("FAIL", lines)
    return results


def first_errors(output, n):
    lines = output.splitlines()
    errors = [l for l in lines if re.search(r"\b(error|fatal error)\b:|undefined reference", l)]
    picked = errors[:n] if errors else [l for l in lines if l.strip()][:n]
    return picked


def base_command(args):
    cmd = shlex.split(args.cxx) + ["-std=c++20", f"-I{args.include_dir}"]
    cmd += [f"-I{d}" for d in args.include]
    cmd += [f"-D{d}" for d in args.define]
    cmd += args.cxxflag
    return cmd


def build_pch(args, work_dir):
    """Compiles the prelude once into a precompiled header (the prelude is most
    of each snippet's compile time). Returns the flags that use it, or None
    (then every TU carries the prelude as text)."""
    header = os.path.join(work_dir, "prelude.hpp")
    with open(header, "w", encoding="utf-8") as f:
        f.write(prelude(args.include_dir) + "\n")
    clang = "clang" in os.path.basename(shlex.split(args.cxx)[-1])
    out = header + (".pch" if clang else ".gch")
    r = subprocess.run(base_command(args) + ["-x", "c++-header", header, "-o", out],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=args.timeout)
    if r.returncode != 0:
        print("note: no precompiled prelude (" + " ".join(first_errors(r.stdout, 1)) + "); compiling it in every TU",
              flush=True)
        return None
    return ["-include-pch", out] if clang else ["-include", header, "-Winvalid-pch"]


def compile_one(snippet, index, args, work_dir, pch_flags=None):
    if snippet.skip_reason is not None:
        return ("skipped", snippet, [], False)
    if snippet.run:
        return ("run", snippet, [], True)   # compiled in the run program
    tu, wrapped = translation_unit(snippet, args.include_dir, pch=pch_flags is not None)
    base = re.sub(r"[^\w]+", "_", snippet.display) + f"_{snippet.line}"
    tu_path = os.path.join(work_dir, f"{index:03d}_{base}.cpp")
    with open(tu_path, "w", encoding="utf-8") as f:
        f.write(tu)
    cmd = base_command(args) + ["-fsyntax-only"] + (pch_flags or []) + [tu_path]
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return ("FAIL", snippet, [f"compiler timed out after {args.timeout} s ({tu_path})"], wrapped)
    except OSError as e:
        return ("FAIL", snippet, [f"cannot run {args.cxx}: {e}"], wrapped)
    if r.returncode == 0:
        return ("ok", snippet, [], wrapped)
    return ("FAIL", snippet, first_errors(r.stdout, args.errors), wrapped)


def test_programs(root):
    """The test programs and targets the build defines, each with the
    GoogleTest suites of its sources: `<area>_tests` or `<NAME>_tests` of each
    digital_delivery_test_program() of tests/, and the custom targets
    (unit_tests, suites unknown: None)."""
    programs = {}
    labels = {}  # ctest label -> the programs that have it
    for cml in glob.glob(os.path.join(root, "tests", "**", "CMakeLists.txt"), recursive=True):
        with open(cml, encoding="utf-8") as f:
            text = "\n".join(l for l in f.read().splitlines() if not l.lstrip().startswith("#"))
        for m in re.finditer(r"digital_delivery_test_program\(\s*(\w+)([^)]*)\)", text):
            name = re.search(r"\bNAME\s+(\w+)", m.group(2))
            suites = set()
            for src in re.findall(r"[\w/]+\.cpp", m.group(2)):
                path = os.path.join(os.path.dirname(cml), src)
                if os.path.isfile(path):
                    with open(path, encoding="utf-8") as f:
                        suites.update(re.findall(r"^\s*TEST(?:_F|_P)?\(\s*(\w+)\s*,", f.read(), re.M))
            programs[(name.group(1) if name else m.group(1)) + "_tests"] = suites
            kind = "integration" if re.search(r"\b(SANDBOX|INTEGRATION)\b", m.group(2)) else "unit"
            labels.setdefault(m.group(1), set()).add((name.group(1) if name else m.group(1)) + "_tests")
            labels.setdefault(kind, set()).add((name.group(1) if name else m.group(1)) + "_tests")
        for m in re.finditer(r"add_custom_target\(\s*(\w+_tests)\b", text):
            programs[m.group(1)] = None
    return programs, labels


def check_test_program_names(files, root):
    """Every `<name>_tests` a page names (a command to build or run, a path) is
    a test program of the build, or one the page itself defines (a user's
    add_executable / executable in an example); a `--gtest_filter` given to one
    names suites of that program (a filter that matches nothing runs no test);
    a line that builds `--target`s and runs `ctest -L <label>` builds every
    program with that label. Returns the offending lines."""
    programs, labels = test_programs(root)
    errors = []
    for f in files:
        with open(f, encoding="utf-8") as fh:
            text = fh.read()
        own = set(re.findall(r"(?:add_executable\(|executable\(')(\w+_tests)\b", text))
        for n, line in enumerate(text.splitlines(), 1):
            where = f"{os.path.relpath(f, root)}:{n}"
            for name in re.findall(r"\b([a-z][a-z0-9_]*_tests)\b", line):
                if name not in programs and name not in own:
                    errors.append(f"{where}: `{name}` is no test program of tests/ "
                                  f"(known: {', '.join(sorted(programs))})")
            # One line that builds targets and runs a label: the label's programs are built.
            built = re.search(r"--target((?:\s+[\w-]+)+)", line)
            label = re.search(r"\bctest\b.*\s-L\s+(\w+)", line)
            if built and label:
                targets = set(built.group(1).split())
                if "unit_tests" in targets:
                    targets |= labels.get("unit", set())
                missing = sorted(labels.get(label.group(1), set()) - targets)
                if missing:
                    errors.append(f"{where}: `ctest -L {label.group(1)}` also runs {', '.join(missing)}, "
                                  f"which the line does not build (ctest reports it Not Run)")
            for name, flt in re.findall(r"\b([a-z][a-z0-9_]*_tests)\s+--gtest_filter=['\"]?([^'\"\s`]+)", line):
                suites = programs.get(name)
                if not suites:
                    continue
                for part in re.split(r"[:\-]", flt):
                    if part and not any(fnmatch.fnmatchcase(suite + ".x", part.split(".")[0] + ".*")
                                        for suite in suites):
                        errors.append(f"{where}: `{name} --gtest_filter={flt}`: `{part}` names no suite of "
                                      f"{name} ({', '.join(sorted(suites))})")
    return errors


def check_readme_headers(root):
    """README.md's table "What is in it": a type or concept a row names in
    backticks (`testing::fake_transport`, `any_transport`) that a public header
    declares is declared in one of the headers the row lists (globs allowed:
    `testing/*.hpp`). Returns the offending rows."""
    path = os.path.join(root, "README.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    start = text.find("## What is in it")
    if start < 0:
        return [f"README.md: no section \"What is in it\""]
    end = text.find("\n## ", start + 1)
    include = os.path.join(root, "include", "digital_delivery")
    headers = glob.glob(os.path.join(root, "include", "**", "*.hpp"), recursive=True)
    sources = {h: open(h, encoding="utf-8").read() for h in headers}

    def declares(h, name):
        return re.search(r"\b(?:class|struct|using|concept|enum class)\s+" + re.escape(name) + r"\b",
                         sources.get(h, "")) is not None

    errors = []
    first = text.count("\n", 0, start) + 1
    for n, line in enumerate(text[start:end if end > 0 else len(text)].splitlines(), first):
        cols = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cols) < 2 or set(cols[0]) <= set("-: "):
            continue
        listed = []
        for h in re.findall(r"`([\w/.*]+\.hpp)`", cols[1]):
            listed += glob.glob(os.path.join(include, h))
        for name in re.findall(r"`((?:\w+::)*\w+)`", cols[0]):
            base = name.split("::")[-1]
            anywhere = [os.path.relpath(h, include) for h in headers if declares(h, base)]
            if anywhere and not any(declares(h, base) for h in listed):
                errors.append(f"README.md:{n}: `{name}` is declared in {', '.join(anywhere)}, "
                              f"which the row does not list")
    return errors


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description="Compile the C++ snippets of the documentation.",
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("files", nargs="*", help="Markdown files (default: README.md and docs/*.md under --root)")
    p.add_argument("--root", default=os.path.normpath(os.path.join(here, "..", "..")),
                   help="repository root (default: the one this script is in)")
    p.add_argument("--cxx", default=os.environ.get("DD_SNIPPETS_CXX", "g++-12"),
                   help="compiler command, may include a launcher: 'ccache g++-12' "
                        "(default: g++-12, or $DD_SNIPPETS_CXX)")
    p.add_argument("-j", "--jobs", type=int, default=2, help="parallel compilations (default 2)")
    p.add_argument("-I", dest="include", action="append", default=[], help="extra include directory")
    p.add_argument("-D", dest="define", action="append", default=[], help="extra definition")
    p.add_argument("--cxxflag", action="append", default=[], help="extra compiler flag (repeatable)")
    p.add_argument("--link", action="append", default=[],
                   help="a library or linker flag of the run program (repeatable); without any, "
                        "`run` snippets are compiled only")
    p.add_argument("--sandbox-exe", default="",
                   help="the digital-delivery-sandbox executable of the `run sandbox` snippets (default: "
                        "$DIGITAL_DELIVERY_SANDBOX_EXE; neither: they are compiled only)")
    p.add_argument("--errors", type=int, default=3, help="compiler error lines shown per failure (default 3)")
    p.add_argument("--timeout", type=int, default=300, help="seconds per compilation (default 300)")
    p.add_argument("--keep", metavar="DIR", help="write the translation units to DIR and keep them")
    p.add_argument("-v", "--verbose", action="store_true", help="also say how each snippet was compiled")
    args = p.parse_args(argv)

    root = os.path.abspath(args.root)
    args.include_dir = os.path.join(root, "include")
    if not os.path.isfile(os.path.join(args.include_dir, "digital_delivery.hpp")):
        print(f"error: {args.include_dir}/digital_delivery.hpp not found (--root?)", file=sys.stderr)
        return 2
    files = args.files or ([os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md"))))

    snippets = []
    try:
        for f in files:
            display = os.path.relpath(os.path.abspath(f), root)
            if display.startswith(".."):
                display = f
            snippets += extract(f, display)
    except (ConventionError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not snippets:
        print("error: no ```cpp snippet found in " + ", ".join(files), file=sys.stderr)
        return 2
    # The commands of the pages name test programs that exist.
    bad_names = check_test_program_names(files, root)
    if not args.files:
        bad_names += check_readme_headers(root)
    for e in bad_names:
        print(f"FAIL {e}", flush=True)

    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        work_dir = args.keep
        tmp = None
    else:
        tmp = tempfile.TemporaryDirectory(prefix="dd_snippets_")
        work_dir = tmp.name

    pch_flags = build_pch(args, work_dir)
    to_run = [(i, s) for i, s in enumerate(snippets) if s.run and s.skip_reason is None]
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        # the run program first: it is the longest compilation
        run_future = pool.submit(build_and_run, to_run, args, work_dir, pch_flags) if to_run else None
        futures = [pool.submit(compile_one, s, i, args, work_dir, pch_flags) for i, s in enumerate(snippets)]
        run_results = run_future.result() if run_future else {}
        compiled = ran = failed = 0
        not_run = {}     # reason -> [file:line]
        for i, fut in enumerate(futures):  # in document order
            status, s, errors, wrapped = fut.result()
            if status == "run":
                status, errors = run_results[i]
                if status == "ok" and not args.link:    # compiled only
                    not_run.setdefault("run snippet, but no --link given: compiled only", []).append(s)
                elif status == "ok":
                    not_run.setdefault("run sandbox snippet, but no sandbox (--sandbox-exe, "
                                       "DIGITAL_DELIVERY_SANDBOX_EXE): compiled only", []).append(s)
            where = f"{s.display}:{s.line}"
            line = f"{status} {where}"
            if status == "skipped":
                line += f" (not compiled: {s.skip_reason})"
                not_run.setdefault(f"not compiled: {s.skip_reason}", []).append(s)
            elif status == "FAIL":
                failed += 1
            else:
                compiled += 1
                ran += status == "ran"
                if s.no_run is not None:
                    not_run.setdefault(s.no_run, []).append(s)
                elif not s.run:
                    not_run.setdefault("claims no result (compiling it is the check)", []).append(s)
                if args.verbose:
                    line += " [statements in snippet_body]" if wrapped else " [complete TU]"
            print(line, flush=True)
            for e in errors:
                print(f"    {e}", flush=True)
    if tmp:
        tmp.cleanup()
    print(f"snippets: {len(snippets)} in {len(files)} files ({args.cxx}): compiled {compiled}, run {ran}, "
          f"failed {failed}; not run:")
    for reason, ss in sorted(not_run.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(ss):3d}  {reason}: " + ", ".join(f"{s.display}:{s.line}" for s in ss))
    if bad_names:
        print(f"test program names, README's headers: {len(bad_names)} wrong (above)")
    return 1 if failed or bad_names else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
