#!/usr/bin/env bash
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# Regenerates the screenshots of docs/sandbox.md (docs/images/sandbox-*.png) with
# the browser test (tests/sandbox/browser: Debian's chromium, puppeteer-core from
# tests/install_deps.sh), at a phone's width (390 CSS pixels).
#   tools/sandbox/screenshots.sh [path/to/digital-delivery-sandbox]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
exe="${1:-$root/_build/tools/sandbox/digital-delivery-sandbox}"
[ -x "$exe" ] || { echo "no sandbox at $exe: build the target digital-delivery-sandbox first" >&2; exit 2; }
node "$root/tests/sandbox/browser/browser_test.js" --sandbox "$exe" --screenshots "$root/docs/images"
ls -l "$root"/docs/images/sandbox-*.png
