#!/usr/bin/env python3
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
"""`meson install` of a top-level meson build puts the licence with the
headers: LICENSE_1_0.txt in <prefix>/<datadir>/doc/digital_delivery/, and the
headers in <prefix>/<includedir>/.

  meson_licence_installed.py BUILD_DIR SOURCE_DIR

reads what meson will install from BUILD_DIR/meson-info (intro-installed.json,
the file list `meson install` works from, and intro-buildoptions.json for the
prefix and directories): nothing is installed. (The CMake install is checked
by the test consumer_install, which installs.) Exits 1, saying what is
missing, when the licence or the umbrella header is not installed there.
"""
import json
import os
import sys


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    build, source = sys.argv[1], os.path.realpath(sys.argv[2])
    with open(os.path.join(build, 'meson-info', 'intro-installed.json'), encoding='utf-8') as f:
        installed = {os.path.realpath(k): v for k, v in json.load(f).items()}
    with open(os.path.join(build, 'meson-info', 'intro-buildoptions.json'), encoding='utf-8') as f:
        options = {o['name']: o['value'] for o in json.load(f)}
    prefix = options['prefix']
    expected = {
        os.path.join(source, 'LICENSE_1_0.txt'):
            os.path.join(prefix, options['datadir'], 'doc', 'digital_delivery', 'LICENSE_1_0.txt'),
        os.path.join(source, 'include', 'digital_delivery.hpp'):
            os.path.join(prefix, options['includedir'], 'digital_delivery.hpp'),
    }
    failed = False
    for src, dst in expected.items():
        got = installed.get(src)
        if got is None:
            print(f'meson install does not install {os.path.relpath(src, source)} (expected at {dst})')
            failed = True
        elif os.path.normpath(got) != os.path.normpath(dst):
            print(f'meson install puts {os.path.relpath(src, source)} at {got}, expected {dst}')
            failed = True
        else:
            print(f'{os.path.relpath(src, source)} -> {got}')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
