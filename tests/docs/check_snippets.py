#!/usr/bin/env python3
"""Compile every C++ snippet of the documentation (README.md, docs/*.md).

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
  <!-- snippet: context DECLARATIONS -->
      DECLARATIONS (C++, may span several lines up to `-->`) are placed after
      the prelude at namespace scope, before the snippet: an extra #include, a
      type or function the snippet assumes, ...

Any other `<!-- snippet: ... -->` comment, or one not directly before a C++
block, is an error.

Output: one line per snippet, `ok|FAIL|skipped file:line`, the first compiler
errors under each failure, then a summary. Exit status: 0 when every compiled
snippet compiles, 1 when one fails, 2 on a usage or convention error.

Usage:
  check_snippets.py [--root DIR] [--cxx g++-12] [-j N] [-I DIR] [-D NAME[=V]]
                    [--cxxflag FLAG] [--errors N] [--keep DIR] [FILE.md ...]
Without files: <root>/README.md and <root>/docs/*.md (root defaults to the
repository this script is in).
"""

import argparse
import concurrent.futures
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
    def __init__(self, path, display, line, code, code_line, skip_reason, context):
        self.path = path            # file on disk
        self.display = display      # file as printed (relative to root when possible)
        self.line = line            # line of the opening fence (1-based)
        self.code = code            # the block's text
        self.code_line = code_line  # line of the block's first line of code
        self.skip_reason = skip_reason
        self.context = context      # list of (line, text) of `snippet: context` directives


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
    if kind == "not-compiled":
        m = re.fullmatch(r"\((.*)\)", rest, re.S)
        if not m or not m.group(1).strip():
            raise ConventionError("`snippet: not-compiled` needs a reason: "
                                  "<!-- snippet: not-compiled (why) -->")
        return kind, m.group(1).strip(), j
    if kind == "context":
        if not rest:
            raise ConventionError("`snippet: context` needs declarations")
        return kind, raw[m.end():], j   # as is: its first line is the comment's first line
    raise ConventionError(f"unknown snippet comment `{kind}` "
                          "(known: not-compiled (reason), context DECLARATIONS)")


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
            context = []
            for kind, text, dline in pending:
                if kind == "not-compiled":
                    skip = text
                else:
                    context.append((dline, text))
            snippets.append(Snippet(path, display, i + 1, "\n".join(body) + "\n", i + 2, skip, context))
        elif pending:
            raise ConventionError(f"{display}:{pending[0][2]}: snippet comment before a "
                                  f"```{info or '(no language)'} block, not a ```cpp one")
        pending = []
        i = j + 1
    if pending:
        raise ConventionError(f"{display}:{pending[0][2]}: snippet comment not directly before a ```cpp block")
    return snippets


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


def first_errors(output, n):
    lines = output.splitlines()
    errors = [l for l in lines if re.search(r"\b(error|fatal error)\b:", l)]
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

    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        work_dir = args.keep
        tmp = None
    else:
        tmp = tempfile.TemporaryDirectory(prefix="dd_snippets_")
        work_dir = tmp.name

    counts = {"ok": 0, "FAIL": 0, "skipped": 0}
    pch_flags = build_pch(args, work_dir)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(compile_one, s, i, args, work_dir, pch_flags) for i, s in enumerate(snippets)]
        for fut in futures:  # in document order
            status, s, errors, wrapped = fut.result()
            counts[status] += 1
            line = f"{status} {s.display}:{s.line}"
            if status == "skipped":
                line += f" ({s.skip_reason})"
            elif args.verbose:
                line += " [statements in snippet_body]" if wrapped else " [complete TU]"
            print(line, flush=True)
            for e in errors:
                print(f"    {e}", flush=True)
    if tmp:
        tmp.cleanup()
    print(f"snippets: {counts['ok']} ok, {counts['FAIL']} failed, {counts['skipped']} skipped "
          f"({len(snippets)} in {len(files)} files, {args.cxx})")
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
