#!/usr/bin/env python3
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
"""Checks conan/conanfile.py without Conan: parses it, then calls its methods
with a stand-in of the Conan API it imports (fake_conan/): set_version,
export_sources, configure, requirements, validate, package_id, generate,
build and package (a real CMake configure, build and install of the exported
sources), and package_info, whose every field is then checked against what the
install produced: include and library directories, libraries, executables,
the licence, and the usage requirements of the project's own CMake package
(the same build installed a second time, with its CMake files) and the names
of its pkg-config files.

    check_conan.py --work DIR [--option compiled=True ...]
"""
import argparse
import ast
import importlib.util
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
RECIPE = os.path.join(ROOT, "conan", "conanfile.py")

# The CMake package's link dependencies and what the Conan components say for them.
CMAKE_TO_CONAN = {
    "Boost::headers": ("requires", "boost::headers"),
    "Boost::json": ("requires", "boost::json"),
    "Boost::url": ("requires", "boost::url"),
    "OpenSSL::SSL": ("requires", "openssl::ssl"),
    "OpenSSL::Crypto": ("requires", "openssl::crypto"),
    "Threads::Threads": ("system_libs", "pthread"),
    "digital_delivery::digital_delivery": ("requires", "digital_delivery"),
}

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def parse_bool(v):
    return {"true": True, "false": False}[v.lower()]


def load_recipe():
    with open(RECIPE) as f:
        tree = ast.parse(f.read(), RECIPE)
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("conan"):
            imported |= {f"{node.module}.{a.name}" for a in node.names}
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    check(len(classes) == 1 and any(getattr(b, "id", None) == "ConanFile" for b in classes[0].bases),
          "conanfile.py defines one class, derived from ConanFile")
    sys.path.insert(0, os.path.join(HERE, "fake_conan"))
    spec = importlib.util.spec_from_file_location("dd_conanfile", RECIPE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # fails if the stand-in lacks a name the recipe imports
    return module, getattr(module, classes[0].name), imported


def targets_properties(cmake_dir):
    """INTERFACE_* properties of each target in the installed CMake package."""
    props = {}
    for name in os.listdir(cmake_dir):
        if not name.endswith(".cmake"):
            continue
        with open(os.path.join(cmake_dir, name)) as f:
            text = f.read()
        for m in re.finditer(r"set_target_properties\((\S+) PROPERTIES\n(.*?)\n\)", text, re.S):
            for p in re.finditer(r'^\s*(INTERFACE_\w+) "([^"]*)"', m.group(2), re.M):
                props.setdefault(m.group(1), {})[p.group(1)] = p.group(2).split(";")
    return props


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--option", action="append", default=[])
    args = ap.parse_args()
    options = {}
    for o in args.option:
        k, v = o.split("=", 1)
        options[k] = parse_bool(v)

    module, Recipe, imported = load_recipe()
    print("conanfile.py imports:", ", ".join(sorted(imported)))
    work = os.path.abspath(args.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    c = Recipe(options, {"os": "Linux", "arch": "x86_64", "compiler": "gcc", "compiler.cppstd": "20",
                         "build_type": "Release"})
    c.recipe_folder = os.path.dirname(RECIPE)
    c.export_sources_folder = os.path.join(work, "export_source")
    c.source_folder = c.export_sources_folder
    c.build_folder = os.path.join(work, "build")
    c.generators_folder = os.path.join(c.build_folder, "generators")
    c.package_folder = os.path.join(work, "package")

    c.set_version()
    with open(os.path.join(ROOT, "VERSION")) as f:
        check(c.version == f.read().strip(), f"set_version() gives VERSION ({c.version})")
    check(Recipe.license == "BSL-1.0", "license is BSL-1.0")
    check(all(v is False for v in Recipe.default_options.values()), "header-only by default (every option False)")

    c.export_sources()
    c.configure()
    compiled = bool(c.options.compiled)
    tools = bool(c.options.cli) or bool(c.options.sandbox)
    built = compiled or tools
    check(c.package_type == ("static-library" if built else "header-library"),
          f"package_type {c.package_type} for options {dict(c.options.items())}")
    c.layout()
    c.requirements()
    reqs = [r for r, _ in c.requires_seen]
    check(any(r.startswith("boost/") for r in reqs) and any(r.startswith("openssl/") for r in reqs),
          f"requires boost and openssl ({reqs})")
    check(any(r.startswith("cli11/") for r in reqs) == bool(c.options.cli), "requires cli11 exactly with cli")
    c.validate()
    c.package_id()
    check(c.info.cleared == (not built), "package_id() is cleared (one package for every setting) when header-only")

    # The recipe's own build, from its exported sources only.
    c.generate()
    c.build()
    c.package()
    # The same build installed with the project's CMake files, for comparison.
    reference = os.path.join(work, "reference")
    subprocess.run(["cmake", "--install", c.build_folder, "--prefix", reference], check=True,
                   stdout=subprocess.DEVNULL)

    c.package_info()
    info = c.cpp_info
    pf = c.package_folder
    check(info.get_property("cmake_file_name") == "digital_delivery", "cmake_file_name digital_delivery")
    check(os.path.isdir(os.path.join(reference, "lib", "cmake", "digital_delivery")),
          "the project's CMake package is named digital_delivery too")
    with open(os.path.join(ROOT, "LICENSE_1_0.txt")) as a, open(os.path.join(pf, "licenses", "LICENSE_1_0.txt")) as b:
        check(a.read() == b.read(), "licenses/LICENSE_1_0.txt is the licence")
    expected = {"digital_delivery"} | ({"compiled"} if compiled else set()) | ({"tools"} if tools else set())
    check(set(info.components) == expected, f"components {sorted(info.components)} == {sorted(expected)}")

    props = targets_properties(os.path.join(reference, "lib", "cmake", "digital_delivery"))
    pcs = {os.path.basename(p)[:-3] for d in ("lib/pkgconfig", "share/pkgconfig")
           for p in (os.path.join(reference, d, n) for n in (os.listdir(os.path.join(reference, d))
                                                            if os.path.isdir(os.path.join(reference, d)) else []))}
    for name, comp in info.components.items():
        for d in comp.includedirs:
            check(os.path.isfile(os.path.join(pf, d, "digital_delivery.hpp")), f"{name}: includedir {d} has the headers")
        for lib in comp.libs:
            check(any(os.path.isfile(os.path.join(pf, d, f"lib{lib}.a")) for d in comp.libdirs),
                  f"{name}: lib{lib}.a in {comp.libdirs}")
        for d in comp.libdirs:
            check(os.path.isdir(os.path.join(pf, d)), f"{name}: libdir {d} exists")
        for d in comp.bindirs:
            present = set(os.listdir(os.path.join(pf, d))) if os.path.isdir(os.path.join(pf, d)) else set()
            want = ({"ddctl"} if c.options.cli else set()) | ({"digital-delivery-sandbox"} if c.options.sandbox else set())
            check(present == want, f"{name}: bindir {d} holds {sorted(present)}, expected {sorted(want)}")
        target = comp.get_property("cmake_target_name")
        if name == "tools":
            continue
        check(target in props, f"{name}: {target} is a target of the project's CMake package")
        p = props.get(target, {})
        check(sorted(comp.defines) == sorted(d for d in p.get("INTERFACE_COMPILE_DEFINITIONS", []) if d),
              f"{name}: defines {comp.defines} == the CMake target's {p.get('INTERFACE_COMPILE_DEFINITIONS', [])}")
        want_req, want_sys = set(), set()
        for l in p.get("INTERFACE_LINK_LIBRARIES", []):
            if not l:
                continue
            kind, value = CMAKE_TO_CONAN.get(l, ("unknown", l))
            check(kind != "unknown", f"{name}: the CMake target links {l}, which the check does not map")
            (want_req if kind == "requires" else want_sys).add(value)
        check(set(comp.requires) == want_req, f"{name}: requires {sorted(comp.requires)} == {sorted(want_req)}")
        check(set(comp.system_libs) == want_sys, f"{name}: system_libs {sorted(comp.system_libs)} == {sorted(want_sys)}")
        check(comp.get_property("pkg_config_name") in pcs,
              f"{name}: pkg_config_name {comp.get_property('pkg_config_name')} is an installed .pc ({sorted(pcs)})")
    # Nothing installed that package_info does not describe.
    top = set(os.listdir(pf)) - {"licenses"}
    described = {"include"} | ({"lib"} if compiled else set()) | ({"bin"} if tools else set()) | (
        {"share"} if c.options.cli else set())  # ddctl's shell completions
    check(top == described, f"the package holds {sorted(top)}, package_info describes {sorted(described)}")

    if failures:
        print(f"check_conan: {len(failures)} failure(s)")
        return 1
    print(f"check_conan: conanfile.py {c.version} with {dict(c.options.items())}: package_info matches the install")
    return 0


if __name__ == "__main__":
    sys.exit(main())
