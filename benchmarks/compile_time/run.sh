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
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
inc="$here/../../include"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cxx="${CXX:-g++-12} -std=c++20 -O0 -c"
uptime
hyperfine --warmup 1 --runs "${RUNS:-5}" --export-markdown "$out/t.md" --export-json "$out/t.json" \
  -n "timer TU (baseline)" "$cxx $here/timer.cpp -o $out/timer.o" \
  -n "peer TU (Beast + TLS + json::value_to)" "$cxx $here/peer.cpp -o $out/peer.o" \
  -n "client + Beast transport + one call, header-only" "$cxx -I$inc $here/client_call.cpp -o $out/ho.o" \
  -n "client + Beast transport + one call, separate compilation" \
     "$cxx -DDIGITAL_DELIVERY_SEPARATE_COMPILATION -I$inc $here/client_call.cpp -o $out/sep.o" \
  ${BASELINE_INCLUDE:+-n "client + Beast transport + one call, header-only, headers of $BASELINE_INCLUDE" \
     "$cxx -I$BASELINE_INCLUDE $here/client_call.cpp -o $out/base.o"} >/dev/null
cat "$out/t.md"
# CPU seconds (user + system) of the same runs: on a shared machine the wall
# time also counts waiting for a core, the CPU time does not.
echo
echo "| Command | CPU [s] (user + sys) | vs timer TU | vs peer TU |"
echo "|:---|---:|---:|---:|"
jq -r '.results | (.[0].user + .[0].system) as $timer | (.[1].user + .[1].system) as $peer
  | .[] | (.user + .system) as $t
  | "| \(.command) | \($t * 1000 | round / 1000) | \($t / $timer * 100 | round / 100) | \($t / $peer * 100 | round / 100) |"' "$out/t.json"
uptime
