#!/usr/bin/env bash
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# Decoding benchmark: builds core_bench.cpp (-O2 -DNDEBUG, g++-12) against
# this tree's headers and, when OLD_INCLUDE is set, a second binary against
# another tree's headers (e.g. a checkout of the previous commit), then
# prints callgrind instructions per call, (Ir(N2) - Ir(N1)) / (N2 - N1), for
# parse (default allocator: the baseline), parse into a reused arena and
# decode_response, on the 250-order page and on one order.
# Usage: benchmarks/core/run.sh [BUILD_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${1:-$root/build-perf-core}"
mkdir -p "$build"
CXX="${CXX:-g++-12}"
build_one() {  # include_dir output
    printf '#include <digital_delivery/src.hpp>\n' > "$build/src.cpp"
    local f="-std=c++20 -O2 -DNDEBUG -g -DDIGITAL_DELIVERY_SEPARATE_COMPILATION -I$1"
    $CXX $f -c "$build/src.cpp" -o "$2.src.o"
    $CXX $f -c "$here/core_bench.cpp" -o "$2.o"
    $CXX "$2.o" "$2.src.o" -o "$2" -lbenchmark -lboost_json -lboost_url -lssl -lcrypto -lpthread
}
build_one "$root/include" "$build/core_bench"
bins=(new:"$build/core_bench")
if [[ -n "${OLD_INCLUDE:-}" ]]; then build_one "$OLD_INCLUDE" "$build/core_bench_old"; bins+=(old:"$build/core_bench_old"); fi
instr() {  # bin what payload n
    valgrind --tool=callgrind --callgrind-out-file="$build/cg.out" "$1" --count "$2" "$3" "$4" >/dev/null 2>&1
    awk '/^(summary|totals):/ {print $2; exit}' "$build/cg.out"
}
echo "$(date -u +%Y-%m-%dT%H:%MZ), $CXX -O2, $(nproc) cores"
echo
echo "| payload | build | operation | instructions/call (callgrind) |"
echo "|---|---|---|---:|"
for payload in page order; do
    if [[ $payload == page ]]; then n1=5; n2=25; else n1=200; n2=2200; fi
    for b in "${bins[@]}"; do
        tag="${b%%:*}"; bin="${b#*:}"
        for what in parse parse_arena decode; do
            [[ $tag == old && $what != decode ]] && continue
            a=$(instr "$bin" "$what" "$payload" "$n1"); z=$(instr "$bin" "$what" "$payload" "$n2")
            echo "| $payload | $tag | $what | $(( (z - a) / (n2 - n1) )) |"
        done
    done
done
