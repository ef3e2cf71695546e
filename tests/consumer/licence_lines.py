#!/usr/bin/env python3
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
"""Every source file of the repository carries the licence lines (README.md,
"Licence"), within its first lines (after a shebang or `#compdef` line):

  // Copyright (c) <year> <holder>
  // Distributed under the Boost Software License, Version 1.0.
  // (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)

with `//` in C++ (.hpp .ipp .cpp .h and their .in templates) and JavaScript,
`#` in Python, shell, completions, CMake (CMakeLists.txt, .cmake and their .in
templates), meson (meson.build, meson_options.txt) and any other file that
starts with `#!` (a script).

  licence_lines.py ROOT

walks the source tree under ROOT (no git needed: a release tarball is checked
the same way), skipping .git, node_modules, build directories (_build*, or any
directory holding CMakeCache.txt, build.ninja or meson-info), the fuzz corpora
and data (JSON, Markdown, text, dictionaries, files without an extension and
without a shebang). It first checks itself: in a temporary copy of one real
file of each kind, it removes the lines from some and expects exactly those to
be reported. It names every file without the lines and the lines expected, and
exits 1 when there is one.
"""
import os
import re
import shutil
import sys
import tempfile

HEAD_LINES = 10  # the lines must start within this many lines of the top
DISTRIBUTED = 'Distributed under the Boost Software License, Version 1.0.'
SEE = '(See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)'
COPYRIGHT = re.compile(r'Copyright \(c\) \d{4}(-\d{4})? \S')
EXPECTED_HOLDER = 'Copyright (c) 2026 The digital_delivery authors'

SKIP_DIRS = {'.git', 'node_modules', '__pycache__', '.cache'}
BUILD_MARKERS = ('CMakeCache.txt', 'build.ninja', 'meson-info')

SLASHES = ('.hpp', '.ipp', '.cpp', '.cxx', '.cc', '.h', '.hh', '.js', '.mjs', '.cjs')
HASH = ('.py', '.sh', '.bash', '.zsh', '.fish', '.cmake', '.pc')
HASH_NAMES = ('CMakeLists.txt', 'meson.build', 'meson_options.txt', 'meson.options', 'Doxyfile')


def comment_of(path):
    """'//' or '#' for a source file, None for a file that is not a source."""
    name = os.path.basename(path)
    stem = name[:-3] if name.endswith('.in') else name
    if stem in HASH_NAMES or stem.endswith(HASH):
        return '#'
    if stem.endswith(SLASHES):
        return '//'
    if name.endswith('.in'):
        return 'either'  # a template of something else: either comment style
    try:
        with open(path, 'rb') as f:
            first = f.readline(200)
    except OSError:
        return None
    if first.startswith(b'#!'):
        return '//' if b'node' in first else '#'
    return None


def skipped_dir(dirpath, name):
    if name in SKIP_DIRS or name.startswith('_build'):
        return True
    if name == 'corpus' and os.path.basename(dirpath) == 'fuzz':
        return True
    full = os.path.join(dirpath, name)
    return any(os.path.exists(os.path.join(full, m)) for m in BUILD_MARKERS)


def sources(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not skipped_dir(dirpath, d))
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                continue
            comment = comment_of(path)
            if comment:
                yield path, comment


def has_lines(path, comment):
    try:
        with open(path, encoding='utf-8', errors='replace') as f:
            head = [f.readline().rstrip('\r\n') for _ in range(HEAD_LINES + 2)]
    except OSError:
        return False
    prefixes = ('//', '#') if comment == 'either' else (comment,)
    for i in range(HEAD_LINES):
        for c in prefixes:
            if (head[i].startswith(c + ' ') and COPYRIGHT.search(head[i]) and
                    head[i + 1] == f'{c} {DISTRIBUTED}' and head[i + 2] == f'{c} {SEE}'):
                return True
    return False


def check(root):
    """The files under root without the lines: [(path, comment)], and how many were checked."""
    missing, count = [], 0
    for path, comment in sources(root):
        count += 1
        if not has_lines(path, comment):
            missing.append((path, comment))
    return missing, count


def expected(comment):
    c = '#' if comment == 'either' else comment
    return '\n'.join(f'    {c} {line}' for line in (EXPECTED_HOLDER, DISTRIBUTED, SEE))


# The self-check: one real file of each kind, copied; the lines removed from
# those marked True.
SELF_CHECK = [
    ('include/digital_delivery.hpp', True),
    ('include/digital_delivery/client.hpp', False),
    ('src/digital_delivery.cpp', True),
    ('tests/consumer/odr/tu.cpp.in', True),
    ('tests/consumer/layering.py', True),
    ('tests/ci.sh', True),
    ('.ci/run', True),
    ('tests/trace/otlp_schema/check_otlp.js', True),
    ('tools/ddctl/completion/ddctl.zsh', True),
    ('tools/ddctl/completion/ddctl.fish', False),
    ('CMakeLists.txt', True),
    ('cmake/digital_delivery-boost.cmake', True),
    ('cmake/digital_delivery.pc.in', True),
    ('meson.build', True),
    ('meson_options.txt', False),
]


def self_check(root):
    with tempfile.TemporaryDirectory(prefix='licence_lines_') as tmp:
        stripped = set()
        for rel, strip in SELF_CHECK:
            src = os.path.join(root, rel)
            if not os.path.exists(src):
                continue
            dst = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(src, dst)
            if strip:
                with open(dst, encoding='utf-8') as f:
                    lines = f.readlines()
                with open(dst, 'w', encoding='utf-8') as f:
                    f.writelines(l for l in lines if DISTRIBUTED not in l)
                stripped.add(dst)
        # Not sources: never reported.
        for rel in ('data/VERSION', 'data/payload.json', 'data/notes.md', 'fuzz/corpus/x.cpp',
                    '_build/x.cpp', 'node_modules/x/index.js'):
            dst = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(dst, 'w', encoding='utf-8') as f:
                f.write('no licence line\n')
        missing, _ = check(tmp)
        reported = {p for p, _ in missing}
        if reported != stripped:
            print('licence_lines: the self-check failed: files without the lines that were not reported: '
                  f'{sorted(os.path.relpath(p, tmp) for p in stripped - reported)}; files reported wrongly: '
                  f'{sorted(os.path.relpath(p, tmp) for p in reported - stripped)}')
            return False
        print(f'self-check: each of {len(stripped)} copies without the lines reported '
              f'({", ".join(sorted(os.path.relpath(p, tmp) for p in stripped))}); '
              f'{len(SELF_CHECK) - len(stripped)} with them and 6 non-sources not reported')
        return True


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    root = os.path.abspath(sys.argv[1])
    if not self_check(root):
        return 1
    missing, count = check(root)
    for path, comment in missing:
        print(f'{os.path.relpath(path, root)}: no licence lines in its first {HEAD_LINES} lines; '
              f'expected (after a shebang line, if any):\n{expected(comment)}')
    print(f'licence_lines: {count} source files checked, {len(missing)} without the licence lines')
    return 1 if missing else 0


if __name__ == '__main__':
    sys.exit(main())
