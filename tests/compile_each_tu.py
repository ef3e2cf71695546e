#!/usr/bin/env python3
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
"""Compiles each source of this repository as its own translation unit, once,
with `-fsyntax-only` and the real flags of a build (its compile_commands.json).

Every source must compile on its own (it includes what it uses). A unity build
hides a missing include: in one translation unit made of several sources, a
source sees what the sources before it included. This script takes the
compile commands of one or more build directories (CMake with
-DCMAKE_EXPORT_COMPILE_COMMANDS=ON; meson writes the file always), replaces
each unity translation unit (CMake's `unity_<n>_cxx.cxx`, meson's
`<target>-unity<n>.cpp`) by the sources it includes, and compiles every source
of the repository found there once (the first command that compiles it), with
the same compiler and flags, `-fsyntax-only` instead of `-c -o ...`.

  tests/compile_each_tu.py BUILD_DIR [BUILD_DIR...] [-j N] [--unity-only]
                           [--cxx COMPILER] [--filter REGEX] [--extra FILE...]

--unity-only  only the sources that a unity translation unit includes (every
              other source is compiled on its own by the build itself): what
              tests/ci.sh runs.
--cxx         another compiler with the same flags (from a g++ build, clang++
              gets -Wno-unknown-warning-option for g++'s warning flags).
--filter      only the sources whose path in the repository matches REGEX.
--extra FILE  sources that no build compiles (the benchmarks that their run.sh
              compiles by hand), compiled with the flags of the compiled
              library's translation unit (src/digital_delivery.cpp).

It prints each source that fails with the compiler's first lines, the sources
of the repository that none of the build directories compiles (for the
record), then a summary, and exits 1 when a source fails (2: no compile
commands).
"""
import argparse
import concurrent.futures
import json
import os
import re
import resource
import shlex
import subprocess
import sys
import time

ROOT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
SOURCE_EXTENSIONS = ('.cpp', '.cc', '.cxx')
# The folders whose sources a build compiles (tools/ holds the sandbox and ddctl).
SOURCE_FOLDERS = ('src', 'tests', 'examples', 'tools', 'benchmarks')
UNITY_NAME = re.compile(r'(^unity_\d+_cxx\.cxx$)|(-unity\d+\.cpp$)')
UNITY_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')
LAUNCHERS = ('ccache', 'sccache', 'distcc')
# Arguments dropped (with the value that follows them): outputs and dependency files.
DROP_WITH_VALUE = ('-o', '-MF', '-MT', '-MQ')
DROP = ('-c', '-MD', '-MMD')


def command_of(entry):
    if 'arguments' in entry:
        return list(entry['arguments'])
    return shlex.split(entry['command'])


def syntax_only(args, source, cxx):
    """The entry's command for `source`, -fsyntax-only, without outputs."""
    if args and os.path.basename(args[0]) in LAUNCHERS:
        args = args[1:]
    out = [cxx or args[0]]
    skip = False
    entry_file = None
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a in DROP_WITH_VALUE:
            skip = True
            continue
        if a in DROP or (a.startswith('-o') and len(a) > 2) or a.startswith(('-MF', '-MT', '-MQ')):
            continue
        if not a.startswith('-') and a.endswith(SOURCE_EXTENSIONS):
            entry_file = a
            continue
        out.append(a)
    if cxx and 'clang' in os.path.basename(cxx):
        out.append('-Wno-unknown-warning-option')
    return out + ['-fsyntax-only', source], entry_file


def in_repository(path, build_dirs):
    real = os.path.realpath(path)
    if not real.startswith(ROOT + os.sep):
        return False
    if any(real.startswith(b + os.sep) for b in build_dirs):
        return False
    rel = os.path.relpath(real, ROOT)
    return rel.split(os.sep)[0] in SOURCE_FOLDERS


def unity_sources(unity_file, directory):
    """The sources a unity translation unit includes, as absolute paths."""
    sources = []
    with open(unity_file, encoding='utf-8') as f:
        for line in f:
            m = UNITY_INCLUDE.match(line)
            if not m:
                continue
            p = m.group(1)
            for base in ('', directory, os.path.dirname(unity_file)):
                candidate = os.path.join(base, p) if base else p
                if os.path.isabs(candidate) and os.path.exists(candidate):
                    sources.append(os.path.realpath(candidate))
                    break
            else:
                raise SystemExit(f'{unity_file}: cannot find the source it includes: {p}')
    return sources


def collect(build_dirs, unity_only):
    """[(source, cwd, args)] in the order of the compile commands, each source once."""
    real_builds = [os.path.realpath(b) for b in build_dirs]
    jobs = {}
    library_flags = None
    for build in build_dirs:
        db = os.path.join(build, 'compile_commands.json')
        if not os.path.exists(db):
            print(f'{db}: not found (CMake: configure with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)', file=sys.stderr)
            sys.exit(2)
        with open(db, encoding='utf-8') as f:
            entries = json.load(f)
        for e in entries:
            directory = e['directory']
            path = e['file'] if os.path.isabs(e['file']) else os.path.join(directory, e['file'])
            path = os.path.realpath(path)
            args = command_of(e)
            if path == os.path.join(ROOT, 'src', 'digital_delivery.cpp') and library_flags is None:
                library_flags = (directory, args)
            if UNITY_NAME.search(os.path.basename(path)):
                for s in unity_sources(path, directory):
                    if in_repository(s, real_builds) and s not in jobs:
                        jobs[s] = (directory, args)
            elif not unity_only and in_repository(path, real_builds) and path not in jobs:
                jobs[path] = (directory, args)
    return jobs, library_flags


def compile_one(source, directory, args, cxx):
    command, _ = syntax_only(args, source, cxx)
    p = subprocess.Popen(command, cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = p.stdout.read()
    p.stdout.close()
    _, status, usage = os.wait4(p.pid, 0)  # its own CPU time
    p.returncode = os.waitstatus_to_exitcode(status)
    return source, p.returncode, output, usage.ru_utime + usage.ru_stime, command


def repository_sources():
    found = []
    for folder in SOURCE_FOLDERS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, folder)):
            dirnames[:] = [d for d in dirnames if d not in ('node_modules', 'corpus') and not d.startswith(('_build', '.'))]
            found += [os.path.join(dirpath, n) for n in filenames if n.endswith(SOURCE_EXTENSIONS)]
    return sorted(found)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('build_dirs', nargs='+', metavar='BUILD_DIR')
    ap.add_argument('-j', '--jobs', type=int, default=os.cpu_count() or 1)
    ap.add_argument('--unity-only', action='store_true',
                    help='only the sources that a unity translation unit includes')
    ap.add_argument('--cxx', help='compile with this compiler instead of the build\'s')
    ap.add_argument('--extra', nargs='*', default=[], metavar='FILE',
                    help='sources no build compiles, with the flags of src/digital_delivery.cpp')
    ap.add_argument('--filter', metavar='REGEX',
                    help='only the sources whose path (relative to the repository) matches REGEX')
    ap.add_argument('-v', '--verbose', action='store_true', help='print every source with its CPU time and command')
    opts = ap.parse_args()

    jobs, library_flags = collect(opts.build_dirs, opts.unity_only)
    for extra in opts.extra:
        path = os.path.realpath(extra)
        if library_flags is None:
            print('--extra needs a build that compiles src/digital_delivery.cpp', file=sys.stderr)
            return 2
        jobs.setdefault(path, library_flags)
    if opts.filter:
        jobs = {s: j for s, j in jobs.items() if re.search(opts.filter, os.path.relpath(s, ROOT))}
    if not jobs:
        print('compile_each_tu: no source to compile'
              + (' (no unity translation unit: was the build configured with unity on?)' if opts.unity_only else ''),
              file=sys.stderr)
        return 2

    failed = []
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        futures = [pool.submit(compile_one, s, d, a, opts.cxx) for s, (d, a) in jobs.items()]
        for fut in concurrent.futures.as_completed(futures):
            source, rc, output, cpu, command = fut.result()
            rel = os.path.relpath(source, ROOT)
            if opts.verbose:
                print(f'{"ok" if rc == 0 else "FAIL"} {rel} ({cpu:.1f} CPU-s): {shlex.join(command)}', flush=True)
            if rc != 0:
                failed.append(rel)
                lines = output.splitlines()
                print(f'FAIL {rel}: does not compile as its own translation unit', flush=True)
                print('\n'.join('  ' + l for l in lines[:30]), flush=True)
                if len(lines) > 30:
                    print(f'  ... ({len(lines) - 30} more lines)', flush=True)
            elif output.strip():
                print(f'warnings {rel}:\n' + '\n'.join('  ' + l for l in output.splitlines()[:30]), flush=True)
    wall = time.monotonic() - t0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)

    if not opts.unity_only and not opts.filter:
        checked = set(jobs)
        unchecked = [os.path.relpath(s, ROOT) for s in repository_sources() if s not in checked]
        if unchecked:
            print(f'not compiled here (no build directory given compiles them): {len(unchecked)}')
            for u in unchecked:
                print(f'  {u}')
    print(f'compile_each_tu: {len(jobs)} sources, each compiled as its own translation unit (-fsyntax-only), '
          f'{len(failed)} failed; {wall:.0f} s, {usage.ru_utime + usage.ru_stime:.0f} CPU-s')
    for f in sorted(failed):
        print(f'  failed: {f}')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
