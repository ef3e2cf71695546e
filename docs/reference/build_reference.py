#!/usr/bin/env python3
#
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
#
"""Builds the API reference with Doxygen (docs/reference.md, "API reference").

Fills in docs/reference/Doxyfile.in (version, source and output directories),
runs doxygen and writes OUTPUT_DIR/html/index.html. The Doxyfile makes every
warning fatal (WARN_AS_ERROR = FAIL_ON_WARNINGS): a public type, function,
member, enum value, parameter or return value without a `///` comment fails
the build, and so does a public header without a `/// \\file` comment (its
page in the reference). This script then lists every problem, each with where it is (for
the warnings doxygen 1.9.4 gives without a location, such as "parameters of
member digital_delivery::x are not documented", the public headers' lines
that declare `x`), and exits 1.

Run by the CMake target docs_reference and by the ctest/meson test
docs_reference (label/suite docs).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time


def public_headers(root):
    base = os.path.join(root, "include")
    for d, dirs, files in os.walk(base):
        dirs[:] = sorted(x for x in dirs if x not in ("detail", "impl"))
        for f in sorted(files):
            if f.endswith(".hpp"):
                yield os.path.join(d, f)


def declarations_of(root, name):
    """Lines of the public headers that seem to declare `name` (not comments)."""
    pat = re.compile(r"(?<![\w.])" + re.escape(name) + r"\s*[({]")
    found = []
    for path in public_headers(root):
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                code = line.split("//", 1)[0]
                if pat.search(code) and not re.search(r"\breturn\b|\.\s*" + re.escape(name), code):
                    found.append("%s:%d" % (os.path.relpath(path, root), n))
    return found


def code_of(line, state):
    """`line` without comments, string and character literals (state: inside /* */)."""
    out, i, n = [], 0, len(line)
    while i < n:
        if state["block"]:
            j = line.find("*/", i)
            if j < 0:
                return "".join(out)
            state["block"], i = False, j + 2
        elif line.startswith("//", i):
            break
        elif line.startswith("/*", i):
            state["block"], i = True, i + 2
        elif line[i] == "'" and i > 0 and line[i - 1].isalnum():  # a digit separator: 30'000
            out.append(line[i])
            i += 1
        elif line[i] in "\"'":
            q, i = line[i], i + 1
            while i < n and line[i] != q:
                i += 2 if line[i] == "\\" else 1
            i += 1
            out.append('""')
        else:
            out.append(line[i])
            i += 1
    return "".join(out)


def public_lines(path):
    """(number, text) of the lines of a header outside `namespace detail { ... }`."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    state, depth, detail_depth = {"block": False}, 0, None
    for n, text in enumerate(lines, 1):
        code = code_of(text, state)
        inside = detail_depth is not None
        if not inside and re.search(r"\bnamespace\s+detail\s*\{", code):
            detail_depth, inside = depth, True
        depth += code.count("{") - code.count("}")
        if detail_depth is not None and depth <= detail_depth:
            detail_depth = None
        if not inside:
            yield n, text


FILE_COMMENT = re.compile(r"^\s*///\s*\\file\b", re.M)


def missing_comments(root):
    """What doxygen 1.9.4 does not report: a public header without a `/// \\file`
    comment (it then has no page of its own in the reference), enumerators and
    concepts without a /// comment."""
    problems = []
    for path in public_headers(root):
        lines = list(public_lines(path))
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8") as f:
            if not FILE_COMMENT.search(f.read()):
                problems.append("%s:1: error: a public header without a `/// \\file` comment (what it is for:"
                                " its page of the reference)." % rel)
        in_enum = None
        for k, (n, text) in enumerate(lines):
            s = text.strip()
            above = lines[k - 1][1].strip() if k > 0 else ""
            documented_above = above.startswith("///") and not above.startswith("///<")
            m = re.match(r"(?:template\s*<.*>\s*)?concept\s+(\w+)", s)
            if m:
                template_above = re.match(r"template\s*<", above)
                doc = lines[k - 2][1].strip() if template_above and k > 1 else above
                if not (doc.startswith("///") and not doc.startswith("///<")):
                    problems.append("%s:%d: error: Concept %s is not documented." % (rel, n, m.group(1)))
            m = re.match(r"enum\s+(?:class\s+|struct\s+)?(\w+)", s)
            if m and not s.endswith(";"):
                in_enum = m.group(1)
                continue
            if in_enum:
                if s.startswith("}"):
                    in_enum = None
                    continue
                m = re.match(r"(\w+)\s*(?:=[^,]*)?,?\s*(//.*)?$", s)
                if m and s != "{" and not ("///<" in s or "//!<" in s or documented_above):
                    problems.append("%s:%d: error: Enumerator %s::%s is not documented." % (rel, n, in_enum, m.group(1)))
    return problems


# ---- the tables of docs/reference.md --------------------------------------------
#
# Between `<!-- generated: NAME... -->` and `<!-- end generated -->`,
# docs/reference.md holds one table per struct NAME of the public headers:
# each data member, its type, its initializer and its comment, taken from the
# header. --update-tables rewrites them; a build fails when they are stale.

GENERATED = re.compile(r"(<!-- generated: ([\w ]+?) -->\n)(.*?)(<!-- end generated -->)", re.S)
MEMBER = re.compile(r"^(?P<type>[\w:<>,()&*\s]+?[\w>*&)])\s+(?P<name>\w+)\s*(?P<init>\{.*\}|=\s*[^;]+)?;\s*(?://(?:/|!)<\s*(?P<doc>.*))?$")


def comment_text(lines):
    text, skipping = [], False
    for l in lines:
        if l.startswith("\\code"):
            skipping = True
        elif l.startswith("\\endcode"):
            skipping = False
        elif not skipping:
            text.append(l)
    joined = " ".join(t for t in text if t).replace("|", "\\|")
    return re.sub(r"\\(warning|note)\b", lambda m: m.group(1).capitalize() + ":", joined)


def struct_members(root, name):
    """(header, [(member, type, initializer, comment)]) of `struct name`."""
    for path in public_headers(root):
        lines = [t for _, t in public_lines(path)]
        for i, text in enumerate(lines):
            if not re.match(r"\s*(?:struct|class)\s+" + name + r"\b[^;]*$", text):
                continue
            members, doc, depth, state = [], [], 0, {"block": False}
            for t in lines[i + 1:]:
                s = t.strip()
                code = code_of(t, state).strip()
                before = depth
                depth += code.count("{") - code.count("}")
                if before == 0 and depth <= 0 and members:
                    break
                if before != 1:
                    continue
                if s.startswith("///") and not s.startswith("///<"):
                    doc.append(s[3:].strip())
                    continue
                m = MEMBER.match(s)
                skip = re.match(r"(?:using|struct|class|enum|friend|template|static_assert|public:|private:)\b", s)
                if m and not skip:
                    init = (m.group("init") or "").strip()
                    init = init[1:].strip() if init.startswith("=") else init
                    comment = comment_text(doc + ([m.group("doc")] if m.group("doc") else []))
                    members.append((m.group("name"), " ".join(m.group("type").split()), init, comment))
                if s and not s.startswith("//"):
                    doc = []
            return os.path.relpath(path, os.path.join(root, "include")), members
    return None, []


def tables(root, names):
    out = []
    for name in names.split():
        header, members = struct_members(root, name)
        if not members:
            out.append("(no struct %s in the public headers)\n" % name)
            continue
        out.append("`%s` (`<%s>`):\n\n| Member | Type | Initializer | |\n|---|---|---|---|\n" % (name, header))
        for member, type_, init, comment in members:
            out.append("| `%s` | `%s` | %s | %s |\n" % (member, type_, "`%s`" % init if init else "", comment))
        out.append("\n")
    return "".join(out).rstrip("\n") + "\n"


def refresh_tables(root, write):
    """The generated tables of docs/reference.md: rewritten, or the stale ones named."""
    page = os.path.join(root, "docs", "reference.md")
    with open(page, encoding="utf-8") as f:
        text = f.read()
    stale = []

    def fill(m):
        fresh = tables(root, m.group(2))
        if fresh != m.group(3):
            stale.append(m.group(2))
        return m.group(1) + fresh + m.group(4)

    new = GENERATED.sub(fill, text)
    if write and new != text:
        with open(page, "w", encoding="utf-8") as f:
            f.write(new)
        return []
    return ["docs/reference.md: the table of %s differs from the headers: run python3 "
            "docs/reference/build_reference.py --update-tables" % " ".join(s.split()) for s in stale]


def explain(root, line):
    """One warning, its path relative to the root; a location where doxygen gave none."""
    line = line.replace(root + os.sep, "")
    m = re.match(r"<([^>]*)>:1: (?:error|warning): .* member ([\w:~]+)", line)
    if m:
        where = declarations_of(root, m.group(2).split("::")[-1])
        if where:
            line += "  [declared at %s]" % ", ".join(where[:4])
    return line


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--root", default=os.path.normpath(os.path.join(here, "..", "..")), help="repository root")
    p.add_argument("--output-dir", help="where the Doxyfile and html/ are written")
    p.add_argument("--doxygen", default="doxygen", help="the doxygen executable (default: doxygen)")
    p.add_argument("--update-tables", action="store_true",
                   help="rewrite the generated tables of docs/reference.md from the headers, then stop")
    a = p.parse_args()
    root = os.path.abspath(a.root)
    if a.update_tables:
        refresh_tables(root, write=True)
        return 0
    if not a.output_dir:
        p.error("--output-dir is required")
    out = os.path.abspath(a.output_dir)

    with open(os.path.join(root, "VERSION"), encoding="utf-8") as f:
        version = f.readline().strip()
    with open(os.path.join(root, "docs", "reference", "Doxyfile.in"), encoding="utf-8") as f:
        doxyfile = f.read()
    for key, value in (("@DD_VERSION@", version), ("@DD_SOURCE_DIR@", root), ("@DD_OUTPUT_DIR@", out)):
        doxyfile = doxyfile.replace(key, value)
    os.makedirs(out, exist_ok=True)
    shutil.rmtree(os.path.join(out, "html"), ignore_errors=True)  # no page of a name that is gone
    config = os.path.join(out, "Doxyfile")
    with open(config, "w", encoding="utf-8") as f:
        f.write(doxyfile)

    try:
        v = subprocess.run([a.doxygen, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as e:
        print("cannot run %s: %s" % (a.doxygen, e), file=sys.stderr)
        return 1
    t0 = time.monotonic()
    r = subprocess.run([a.doxygen, config], capture_output=True, text=True, cwd=out)
    seconds = time.monotonic() - t0
    problems = [explain(root, l) for l in r.stderr.splitlines() if l.strip()] + missing_comments(root)
    problems += refresh_tables(root, write=False)
    index = os.path.join(out, "html", "index.html")
    if r.returncode != 0 or problems or not os.path.exists(index):
        print("The API reference (doxygen %s) has %d problem(s). Every public type, function, member, enum value,"
              " parameter and return value needs a /// comment (docs/reference.md, \"Documenting a public name\"):"
              % (v, len(problems)))
        for l in problems:
            print("  " + l)
        if r.returncode != 0 and not problems:
            print("  doxygen exited with status %d" % r.returncode)
        return 1
    pages = len([x for x in os.listdir(os.path.join(out, "html")) if x.endswith(".html")])
    print("API reference (doxygen %s, %.1f s, %d pages): %s" % (v, seconds, pages, index))
    return 0


if __name__ == "__main__":
    sys.exit(main())
