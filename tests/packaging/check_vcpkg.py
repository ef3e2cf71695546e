#!/usr/bin/env python3
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
"""vcpkg's post-build rules, reproduced, on the package directory that
vcpkg_emulation.cmake produced from ports/digital-delivery/portfile.cmake:

  - headers under include/ only, and none in debug/include; nothing in debug/share;
  - the licence at share/<port>/copyright, the port's usage file beside it;
  - CMake files only under share/, the CMake config in share/digital_delivery/;
  - a static triplet: no bin/ nor debug/bin/, executables only in tools/<port>/;
  - no empty directories;
  - pkg-config files in lib/pkgconfig when the package has a library
    (share/pkgconfig only for a header-only package), debug ones in debug/lib/pkgconfig;
  - the same libraries in lib/ and debug/lib/;
  - no absolute path of the build (package, build tree, source, installed
    directories) in any installed file other than compiled objects.

    check_vcpkg.py PACKAGE_DIR --port NAME --licence FILE --forbid PATH...
"""
import argparse
import filecmp
import os
import sys

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def is_binary_object(path):
    with open(path, "rb") as f:
        head = f.read(8)
    return head.startswith(b"\x7fELF") or head.startswith(b"!<arch>\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("package")
    ap.add_argument("--port", required=True)
    ap.add_argument("--licence", required=True)
    ap.add_argument("--forbid", nargs="+", default=[])
    a = ap.parse_args()
    pkg = os.path.abspath(a.package)
    files, dirs = [], []
    for root, ds, fs in os.walk(pkg):
        dirs += [os.path.join(root, d) for d in ds]
        files += [os.path.relpath(os.path.join(root, f), pkg) for f in fs]

    check(os.path.isfile(os.path.join(pkg, "include", "digital_delivery.hpp")), "include/digital_delivery.hpp")
    for f in files:
        if f.endswith((".hpp", ".ipp", ".h")):
            check(f.startswith("include/"), f"header outside include/: {f}")
        if f.endswith(".cmake"):
            check(f.startswith("share/"), f"CMake file outside share/: {f}")
        if f.startswith(("debug/include/", "debug/share/")):
            check(False, f"debug/include and debug/share must not exist: {f}")
        if f.startswith(("bin/", "debug/bin/")):
            check(False, f"a static package has no bin/: {f}")
        full = os.path.join(pkg, f)
        if os.access(full, os.X_OK) and is_binary_object(full):
            check(f.startswith(f"tools/{a.port}/"), f"executable outside tools/{a.port}/: {f}")
    copyright_file = os.path.join(pkg, "share", a.port, "copyright")
    check(os.path.isfile(copyright_file) and filecmp.cmp(copyright_file, a.licence, shallow=False),
          f"share/{a.port}/copyright is the licence")
    check(os.path.isfile(os.path.join(pkg, "share", a.port, "usage")), f"share/{a.port}/usage")
    check(os.path.isfile(os.path.join(pkg, "share", "digital_delivery", "digital_delivery-config.cmake")),
          "share/digital_delivery/digital_delivery-config.cmake")
    for d in dirs:
        check(os.listdir(d), f"empty directory: {os.path.relpath(d, pkg)}")

    libs = sorted(f for f in files if f.startswith("lib/") and f.endswith(".a"))
    dlibs = sorted(f[len("debug/"):] for f in files if f.startswith("debug/lib/") and f.endswith(".a"))
    if any(f.startswith("debug/") for f in files):
        check(libs == dlibs, f"the same libraries in lib/ {libs} and debug/lib/ {dlibs}")
    for f in files:
        if f.endswith(".pc"):
            if f.startswith("debug/"):
                check(os.path.dirname(f) == "debug/lib/pkgconfig", f"misplaced pkg-config file: {f}")
            elif libs:
                check(os.path.dirname(f) == "lib/pkgconfig", f"misplaced pkg-config file (the package has a library): {f}")
            else:
                check(os.path.dirname(f) in ("lib/pkgconfig", "share/pkgconfig"), f"misplaced pkg-config file: {f}")
            with open(os.path.join(pkg, f)) as pc:
                check("prefix=${pcfiledir}/" in pc.read(), f"{f}: prefix relative to ${{pcfiledir}}")

    forbid = [os.path.abspath(p) for p in a.forbid] + [pkg]
    for f in files:
        full = os.path.join(pkg, f)
        if is_binary_object(full):
            continue
        with open(full, "rb") as fh:
            data = fh.read()
        for p in forbid:
            check(p.encode() not in data, f"absolute path {p} in {f}")

    if failures:
        print(f"check_vcpkg: {len(failures)} failure(s) in {pkg}")
        return 1
    print(f"check_vcpkg: {len(files)} files in {pkg} follow vcpkg's post-build rules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
