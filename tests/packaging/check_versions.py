#!/usr/bin/env python3
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
"""VERSION is the one place of the version: everything that cannot read it
says the same (CMake, meson, pkg-config and <digital_delivery/version.hpp> are
checked by the consumer tests).

  - debian/changelog's newest entry (a native package: the version itself);
  - ports/digital-delivery/vcpkg.json's "version";
  - conan/conanfile.py reads VERSION in set_version() (no version written in it);
  - CHANGELOG.md: the newest released section is VERSION's, and every section
    heading is "## [X.Y.Z] - YYYY-MM-DD" (or "## [Unreleased]" first), newest first;
  - include/digital_delivery/version.hpp's string.

    check_versions.py [ROOT]
"""
import ast
import json
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def read(rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


version = read("VERSION").strip()
check(re.fullmatch(r"\d+\.\d+\.\d+", version) is not None, f"VERSION is MAJOR.MINOR.PATCH ({version!r})")

m = re.match(r"digital-delivery \(([^)]+)\) (\S+); urgency=\w+", read("debian/changelog"))
check(m is not None, "debian/changelog starts with an entry of digital-delivery")
if m:
    check(m.group(1) == version, f"debian/changelog's newest version {m.group(1)} is VERSION {version}")

check(json.loads(read("ports/digital-delivery/vcpkg.json")).get("version") == version,
      f"vcpkg.json's version is VERSION {version}")

recipe = ast.parse(read("conan/conanfile.py"))
cls = next(n for n in recipe.body if isinstance(n, ast.ClassDef))
assigned = [t.id for n in cls.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)]
check("version" not in assigned, "conanfile.py writes no version of its own")
set_version = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "set_version"), None)
check(set_version is not None and "VERSION" in ast.unparse(set_version),
      "conanfile.py's set_version() reads the file VERSION")

headings = re.findall(r"^## (.*)$", read("CHANGELOG.md"), re.M)
released = []
for i, h in enumerate(headings):
    if h == "[Unreleased]":
        check(i == 0, "CHANGELOG.md: [Unreleased] is the first section")
        continue
    hm = re.fullmatch(r"\[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})", h)
    check(hm is not None, f"CHANGELOG.md: section heading '## {h}' is '## [X.Y.Z] - YYYY-MM-DD'")
    if hm:
        released.append(tuple(int(x) for x in hm.group(1).split(".")))
check(released and ".".join(map(str, released[0])) == version,
      f"CHANGELOG.md's newest release is VERSION {version}")
check(released == sorted(released, reverse=True), "CHANGELOG.md is newest first")

check(f'#define DIGITAL_DELIVERY_VERSION_STRING "{version}"' in read("include/digital_delivery/version.hpp"),
      "version.hpp's DIGITAL_DELIVERY_VERSION_STRING is VERSION")

if failures:
    print(f"check_versions: {len(failures)} failure(s)")
    sys.exit(1)
print(f"check_versions: {version} everywhere")
