#!/usr/bin/env python3
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
"""Checks that docs/reference.md's table "Environment variables" names every
environment variable the repository reads, found in the files git tracks:

  * C++ (.cpp .hpp .ipp .h): a string literal passed to getenv, to CLI11's
    envname, or to a helper defined to read the environment in that file
    (ddctl's env/var/either, the proxy settings' get): an upper-case name, or
    one of the proxy variables (http_proxy, https_proxy, no_proxy); and in such
    a file every string literal that is a name of the project's prefixes
    (DD_, DDCTL_, DIGITAL_DELIVERY_, OTEL_, XDG_); anywhere, the default of a
    `const char* variable` parameter (the variable a function reads);
  * shell scripts (*.sh, .ci/run): `${NAME` and `$NAME` of an upper-case NAME
    that the script does not set itself (assignment, local, read, for, export
    NAME=...; `${NAME:-default}` counts as read even so), but for the shell's
    own variables (SHELL_OWN); single-quoted text is not expanded;
  * CMake: `$ENV{NAME}` (not where the file sets it: set(ENV{NAME}));
    meson: `${NAME` / `$NAME` in its shell commands;
  * Python: os.environ.get, os.environ[...], os.getenv, a test of membership
    in os.environ;
  * JavaScript: process.env.NAME.

A variable that is set only for a program the test starts (a worker's
environment) is read there too, so it is listed as well. Prints each missing
variable with where it is read; exit 1 if any.

Usage: check_env_table.py [--root DIR]
"""
import argparse
import os
import re
import subprocess
import sys

# Variables of the shell itself, or of every POSIX process, not the project's.
SHELL_OWN = {
    "PATH", "PWD", "OLDPWD", "IFS", "RANDOM", "SECONDS", "LINENO", "BASH_SOURCE", "BASHPID",
    "FUNCNAME", "PIPESTATUS", "UID", "EUID", "PPID", "OPTARG", "OPTIND", "HOSTNAME", "SHELL",
    "USER", "TERM", "TMPDIR", "BASH_REMATCH", "BASH_VERSION", "EPOCHREALTIME", "SUDO_USER",
}

CPP_SUFFIXES = (".cpp", ".hpp", ".ipp", ".h", ".cc")
# Calls whose string argument names an environment variable.
CPP_CALL = re.compile(r"\b(getenv|secure_getenv|envname|env|var|either|get)\(\s*\"([A-Za-z_]\w*)\""
                      r"(?:\s*,\s*\"([A-Za-z_]\w*)\")?")
PROXY_VARS = {"http_proxy", "https_proxy", "no_proxy"}
# In a file that reads the environment, a string literal that is a whole name of
# the project's own prefixes is taken as read too (passed to a helper, or a
# default argument: ddctl's resolve(..., "DDCTL_RATE_LIMIT_STORE", ...)).
CPP_OWN_NAME = re.compile(r"\"((?:DD|DDCTL|DIGITAL_DELIVERY|OTEL|XDG)_[A-Z0-9_]*[A-Z0-9])\"")
# Anywhere: a parameter that names the variable to read, with its default
# (testing::record_mode_from_env(..., const char* variable = "...")).
CPP_VARIABLE_DEFAULT = re.compile(r"\bconst\s+char\s*\*\s*(?:variable|env_var)\s*=\s*\"([A-Za-z_]\w*)\"")
SH_REF = re.compile(r"\$\{?([A-Z_][A-Z0-9_]*)")
# `${NAME:-default}` and its kin: read from the environment even where the script sets it too.
SH_DEFAULTED = re.compile(r"\$\{([A-Z_][A-Z0-9_]*):?[-=?+]")
SH_SINGLE_QUOTED = re.compile(r"'[^'\n]*'")
SH_SET = re.compile(r"(?:^|[\s;(&|])(?:local\s+|export\s+|readonly\s+|declare\s+(?:-\w+\s+)*)?([A-Z_][A-Z0-9_]*)(?:\[[^\]]*\])?\+?=")
SH_READ = re.compile(r"\b(?:read(?:\s+-\w+)*|for)\s+((?:[A-Z_][A-Z0-9_]*\s*)+)")
CMAKE_ENV = re.compile(r"\$ENV\{(\w+)\}")
CMAKE_SET_ENV = re.compile(r"\bset\(\s*ENV\{(\w+)\}")
MESON_ENV = re.compile(r"environment\(\)\.get\(\s*'(\w+)'|\$\{?([A-Z_][A-Z0-9_]*)")
PY_ENV = re.compile(r"os\.environ\.get\(\s*[\"'](\w+)[\"']|os\.environ\[\s*[\"'](\w+)[\"']\s*\]"
                    r"|os\.getenv\(\s*[\"'](\w+)[\"']|[\"'](\w+)[\"']\s+in\s+os\.environ")
JS_ENV = re.compile(r"process\.env\.(\w+)|process\.env\[\s*[\"'](\w+)[\"']\s*\]")


def tracked(root):
    """The files git tracks; without git (a source tarball), every file but build folders'."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True, check=True).stdout
        return [f for f in out.splitlines() if os.path.isfile(os.path.join(root, f))]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = sorted(x for x in dirs if not x.startswith(("_build", ".git", "node_modules")))
            files += [os.path.relpath(os.path.join(d, n), root) for n in sorted(names)]
        return files


def reads_of(root, rel):
    """{variable: line} of what the file reads."""
    path = os.path.join(root, rel)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (UnicodeDecodeError, OSError):
        return {}
    found = {}

    def add(name, pos, within=None):
        if name and name not in found:
            found[name] = (text if within is None else within).count("\n", 0, pos) + 1

    base = os.path.basename(rel)
    if rel.endswith(CPP_SUFFIXES):
        for m in CPP_VARIABLE_DEFAULT.finditer(text):
            add(m.group(1), m.start())
        if "getenv" not in text and "envname" not in text:
            return found
        for m in CPP_CALL.finditer(text):
            for name in (m.group(2), m.group(3)):
                if not name:
                    continue
                if m.group(1) in ("getenv", "secure_getenv", "envname") or name.isupper() or name in PROXY_VARS:
                    if name.isupper() or name in PROXY_VARS or m.group(1) in ("getenv", "secure_getenv"):
                        add(name, m.start())
        for m in CPP_OWN_NAME.finditer(text):
            add(m.group(1), m.start())
    elif rel.endswith(".sh") or rel == ".ci/run":
        code = "\n".join(line.split(" #", 1)[0] if not line.lstrip().startswith("#") else ""
                         for line in text.split("\n"))
        code = SH_SINGLE_QUOTED.sub(lambda m: "'" + " " * (len(m.group(0)) - 2) + "'", code)
        own = set(SH_SET.findall(code)) - set(SH_DEFAULTED.findall(code))
        for m in SH_READ.finditer(code):
            own.update(m.group(1).split())
        for m in SH_REF.finditer(code):
            name = m.group(1)
            if name not in own and name not in SHELL_OWN and not name.isdigit():
                add(name, m.start(), code)
    elif base == "CMakeLists.txt" or rel.endswith(".cmake"):
        own = set(CMAKE_SET_ENV.findall(text))
        for m in CMAKE_ENV.finditer(text):
            if m.group(1) not in own:
                add(m.group(1), m.start())
    elif base in ("meson.build", "meson_options.txt"):
        for m in MESON_ENV.finditer(text):
            add(next(g for g in m.groups() if g), m.start())
    elif rel.endswith(".py"):
        for m in PY_ENV.finditer(text):
            add(next(g for g in m.groups() if g), m.start())
    elif rel.endswith((".js", ".mjs")):
        for m in JS_ENV.finditer(text):
            add(next(g for g in m.groups() if g), m.start())
    return found


def documented(root):
    with open(os.path.join(root, "docs", "reference.md"), encoding="utf-8") as f:
        text = f.read()
    section = text.split("\n## Environment variables\n", 1)
    if len(section) != 2:
        sys.exit("docs/reference.md has no section '## Environment variables'")
    body = section[1].split("\n## ", 1)[0]
    names = set()
    for line in body.split("\n"):
        if line.startswith("| ") and not line.startswith("| Variable") and not line.startswith("|---"):
            first = line.split("|")[1]
            names.update(re.findall(r"`([A-Za-z_]\w*)`", first))
    return names


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--root", default=os.path.normpath(os.path.join(here, "..", "..")))
    root = os.path.abspath(p.parse_args().root)
    table = documented(root)
    missing = {}
    files = 0
    for rel in tracked(root):
        if rel.startswith("docs/"):
            continue
        reads = reads_of(root, rel)
        files += bool(reads)
        for name, line in reads.items():
            if name not in table:
                missing.setdefault(name, []).append("%s:%d" % (rel, line))
    for name in sorted(missing):
        where = missing[name]
        print("%s: read at %s%s, not in docs/reference.md's table \"Environment variables\""
              % (name, ", ".join(where[:3]), " and %d more" % (len(where) - 3) if len(where) > 3 else ""))
    print("env_table: %d variables documented, %d files read the environment, %d variable(s) missing"
          % (len(table), files, len(missing)))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
