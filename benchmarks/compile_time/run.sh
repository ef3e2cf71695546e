#!/usr/bin/env bash
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# Compile time as a user feels it (issue 25, point 4), g++-12 -O0, one
# hyperfine run (apt-get install hyperfine) so that the machine's load weighs
# on every row alike:
#   - timer TU: co_awaits one Asio timer (the floor of any Asio coroutine TU);
#   - peer TU: what a user writes instead of using the library: one co_awaited
#     HTTPS GET with Beast over TLS, the body decoded with json::value_to into
#     a described struct;
#   - the library's TU (client_call.cpp): the client over the default Beast
#     transport and one co_awaited call, header-only (the implementation
#     compiles in this TU) and with DIGITAL_DELIVERY_SEPARATE_COMPILATION (it
#     compiles once, in src.hpp).
# Targets: header-only <= 0.75x the peer TU; separate compilation <= 1.3x the
# timer TU. CXX overrides the compiler, RUNS the runs per row (default 5).
# Prints hyperfine's table (wall time) and the CPU time of the same runs.
# BASELINE_INCLUDE=DIR adds a header-only row compiled against another
# include/ (e.g. an older commit's: git archive REV include | tar -x -C DIR).
# TUS=call measures instead the compile-time target of a call site
# (docs/performance.md, "A call site"): call.cpp, the umbrella header and one
# co_awaited call without a transport, separate compilation (<= 1.3x) and
# header-only (<= 2x), against the timer TU.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
inc="$here/../../include"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cxx="${CXX:-g++-12} -std=c++20 -O0 -c"
uptime
if [ "${TUS:-user}" = call ]; then
  rows=(-n "timer TU (baseline)" "$cxx $here/timer.cpp -o $out/timer.o"
        -n "umbrella + one call, separate compilation"
           "$cxx -DDIGITAL_DELIVERY_SEPARATE_COMPILATION -I$inc $here/call.cpp -o $out/call.o"
        -n "umbrella + one call, header-only" "$cxx -I$inc $here/call.cpp -o $out/call_ho.o")
  peer=null
else
  rows=(-n "timer TU (baseline)" "$cxx $here/timer.cpp -o $out/timer.o"
        -n "peer TU (Beast + TLS + json::value_to)" "$cxx $here/peer.cpp -o $out/peer.o"
        -n "client + Beast transport + one call, header-only" "$cxx -I$inc $here/client_call.cpp -o $out/ho.o"
        -n "client + Beast transport + one call, separate compilation"
           "$cxx -DDIGITAL_DELIVERY_SEPARATE_COMPILATION -I$inc $here/client_call.cpp -o $out/sep.o")
  peer=1
fi
if [ -n "${BASELINE_INCLUDE:-}" ]; then
  rows+=(-n "the same header-only, headers of $BASELINE_INCLUDE"
         "$cxx -I$BASELINE_INCLUDE $here/$([ "${TUS:-user}" = call ] && echo call || echo client_call).cpp -o $out/base.o")
fi
hyperfine --warmup 1 --runs "${RUNS:-5}" --export-markdown "$out/t.md" --export-json "$out/t.json" "${rows[@]}" >/dev/null
cat "$out/t.md"
# CPU seconds (user + system) of the same runs: on a shared machine the wall
# time also counts waiting for a core, the CPU time does not.
echo
if [ "$peer" = null ]; then
  echo "| Command | CPU [s] (user + sys) | vs timer TU |"
  echo "|:---|---:|---:|"
else
  echo "| Command | CPU [s] (user + sys) | vs timer TU | vs peer TU |"
  echo "|:---|---:|---:|---:|"
fi
jq -r --argjson peer "$peer" '.results | (.[0].user + .[0].system) as $timer
  | (if $peer == null then null else (.[$peer].user + .[$peer].system) end) as $p
  | .[] | (.user + .system) as $t
  | "| \(.command) | \($t * 1000 | round / 1000) | \($t / $timer * 100 | round / 100) |"
    + (if $p == null then "" else " \($t / $p * 100 | round / 100) |" end)' "$out/t.json"
uptime
