# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
"""conan.tools.files of the stand-in: copy, load, rmdir (Conan 2 semantics:
copy's pattern is matched with fnmatch against the path relative to src, so
'include/*' takes the whole folder; keep_path keeps that relative path)."""
import fnmatch
import os
import shutil


def load(conanfile, path, encoding="utf-8"):
    with open(path, encoding=encoding) as f:
        return f.read()


def rmdir(conanfile, path):
    if os.path.isdir(path):
        shutil.rmtree(path)


def copy(conanfile, pattern, src, dst, keep_path=True, excludes=None):
    copied = []
    src = os.path.normpath(src)
    for root, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            full = os.path.join(root, name)
            rel = os.path.relpath(full, src)
            if not fnmatch.fnmatch(rel, pattern):
                continue
            if excludes and any(fnmatch.fnmatch(rel, e) for e in excludes):
                continue
            target = os.path.join(dst, rel if keep_path else name)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(full, target)
            copied.append(target)
    return copied
