#!/usr/bin/env bash
# Issue 3's compile-time target: a TU that includes the umbrella header and
# co_awaits one call, g++-12 -O0, against a TU that co_awaits one Asio timer,
# measured side by side with hyperfine (apt-get install hyperfine).
#   separate compilation (DIGITAL_DELIVERY_SEPARATE_COMPILATION, the
#   recommended mode) and header-only mode.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
inc="$here/../../include"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cxx="g++-12 -std=c++20 -O0 -c"
hyperfine --warmup 1 --runs "${RUNS:-5}" --export-markdown "$out/t.md" \
  -n "timer TU (baseline)" "$cxx $here/timer.cpp -o $out/timer.o" \
  -n "umbrella + one call, separate compilation" "$cxx -DDIGITAL_DELIVERY_SEPARATE_COMPILATION -I$inc $here/call.cpp -o $out/call.o" \
  -n "umbrella + one call, header-only" "$cxx -I$inc $here/call.cpp -o $out/call_ho.o" >/dev/null
cat "$out/t.md"
