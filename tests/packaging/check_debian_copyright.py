#!/usr/bin/env python3
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
"""debian/copyright (machine-readable format 1.0) covers every file of the
source tree:

  - it parses: a header paragraph with Format, then Files paragraphs (Files,
    Copyright, License), and a standalone License paragraph with the text of
    every licence a Files paragraph names;
  - every file of the tree (git ls-files, or the unpacked tree) is matched by
    a Files paragraph (the last match wins, as the format says), and every
    pattern matches at least one file;
  - a file whose notice names another copyright holder than the Files
    paragraph it falls under, or another licence, is reported;
  - the BSL-1.0 text is LICENSE_1_0.txt's.

    check_debian_copyright.py [ROOT]
"""
import fnmatch
import os
import re
import subprocess
import sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def paragraphs(text):
    out = []
    for block in re.split(r"\n\s*\n", text.strip("\n")):
        fields, key = {}, None
        for line in block.split("\n"):
            if line.startswith((" ", "\t")):
                check(key is not None, f"continuation line without a field: {line!r}")
                fields[key] += "\n" + line[1:]
            else:
                key, _, value = line.partition(":")
                check(_ == ":", f"not a field: {line!r}")
                fields[key] = value.strip()
        out.append(fields)
    return out


def tree_files():
    if os.path.isdir(os.path.join(root, ".git")) or os.path.isfile(os.path.join(root, ".git")):
        out = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard"], check=True,
                             capture_output=True, text=True).stdout
        return sorted(f for f in out.splitlines() if os.path.isfile(os.path.join(root, f)))
    files = []
    for r, ds, fs in os.walk(root):
        ds[:] = [d for d in ds if not d.startswith(("_build", "build", ".")) and d != "node_modules"]
        files += [os.path.relpath(os.path.join(r, f), root) for f in fs]
    return sorted(files)


def dep5_match(pattern, path):
    # '*' matches any run of characters, '/' included; '?' one character.
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, path) is not None


with open(os.path.join(root, "debian", "copyright"), encoding="utf-8") as f:
    paras = paragraphs(f.read())
header, rest = paras[0], paras[1:]
check(header.get("Format") == "https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/",
      "header: Format is copyright-format 1.0")
files_paras = [p for p in rest if "Files" in p]
licences = {p["License"].split("\n", 1)[0]: p["License"].split("\n", 1)[1] if "\n" in p["License"] else ""
            for p in rest if "Files" not in p and "License" in p}
for p in files_paras:
    check("Copyright" in p and "License" in p, f"Files: {p.get('Files')} has Copyright and License")
    name = p.get("License", "").split("\n", 1)[0]
    check("\n" in p.get("License", "") or licences.get(name), f"licence {name} has its text")

with open(os.path.join(root, "LICENSE_1_0.txt"), encoding="utf-8") as f:
    bsl = f.read().strip("\n")
text = "\n".join("" if l == "." else l for l in licences.get("BSL-1.0", "").split("\n"))
check(text == bsl, "the BSL-1.0 text in debian/copyright is LICENSE_1_0.txt")

files = tree_files()
check(len(files) > 0, "the tree has files")
used = set()
# A notice is a line of its own, in a comment or not (a string that holds one,
# as in tests/consumer/licence_lines.py, is code, not a notice).
notice = re.compile(r"^[ \t]*(?://|#|/?\*|--|;)?[ \t]*Copyright\s+(?:\(c\)|©)\s*(\d{4}(?:[-, ]+\d{4})*)\s+(.+)", re.I | re.M)
for path in files:
    match = None
    for p in files_paras:
        for pattern in p["Files"].split():
            if dep5_match(pattern, path):
                match = p
                used.add(pattern)
    check(match is not None, f"{path} is covered by no Files paragraph")
    if match is None:
        continue
    try:
        with open(os.path.join(root, path), encoding="utf-8") as f:
            head = f.read(4000)
    except (UnicodeDecodeError, OSError):
        continue
    for m in notice.finditer(head):
        holder = m.group(2).strip().rstrip(".")
        check(holder in match["Copyright"], f"{path}: notice '{m.group(0).strip()}' is not in its Files paragraph ({match['Files']})")
    spdx = re.search(r"SPDX-License-Identifier:\s*(\S+)", head)
    if spdx:
        check(spdx.group(1) == match["License"].split("\n", 1)[0], f"{path}: SPDX {spdx.group(1)} is not its Files paragraph's licence")
    if "Distributed under the Boost Software License" not in head and re.search(r"\blicen[cs]ed? under\b", head, re.I):
        check(False, f"{path} names a licence: give it a Files paragraph of its own")
for p in files_paras:
    for pattern in p["Files"].split():
        check(pattern in used, f"Files pattern {pattern} matches no file")

if failures:
    print(f"check_debian_copyright: {len(failures)} failure(s)")
    sys.exit(1)
print(f"check_debian_copyright: {len(files)} files, each covered by debian/copyright")
