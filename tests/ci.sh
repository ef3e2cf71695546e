#!/usr/bin/env bash
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# The test command (README.md), what CI runs (.ci/run). On a fresh Debian 12
# machine it installs what it needs, then builds and tests in three
# configurations, each compiling the library once and the test programs marked
# UNITY as one translation unit each (tests/CMakeLists.txt, tests/meson.build),
# and runs the fuzzers briefly:
#   1. CMake + g++-12, -Werror: every test program (labels unit and
#      integration: cli, ddctl against the sandbox, included), the consumer/
#      packaging tests, the documentation snippets (compiled, those marked run
#      run) and the examples (against the sandbox);
#   2. meson + clang++-16 with ASan+UBSan, -Werror, against the newest Boost
#      Debian packages (sid's headers, its Boost.JSON/URL/Container built from
#      that release's sources): every test program (suites unit and
#      integration, cli included), the compiled library, the sandbox and ddctl;
#      not the docs suite (step 1 compiles the snippets and runs those marked run);
#   3. CMake + clang++-16 with TSan, -Werror, against Boost 1.83 (Debian's
#      bookworm-backports): the compiled library and the areas that run threads
#      (transport with a multi-threaded io_context, scheduler's limiter shared
#      across threads); core runs on one thread (the library starts none):
#      steps 1 and 2 test it;
#   4. CMake + clang++-16, libFuzzer with ASan+UBSan: the fuzz targets of
#      tests/fuzz/, each run briefly over its corpus (docs/reliability.md).
# The unity builds hide a missing #include: in a program's one translation
# unit a source sees what the sources before it included, where a plain build
# (each source its own TU: CMake's default) stops. So each source of the
# programs marked UNITY is also compiled on its own, once:
# tests/compile_each_tu.py with clang++-16 -fsyntax-only and step 1's flags
# (its compile_commands.json), a step of its own after step 1's build
# ("each UNITY source on its own").
# Steps 1 and 4 use the system's Boost (Debian 12: 1.81). The other two
# versions are fetched first by tests/boost_versions.sh into a cache outside
# the clone, never installed; that script builds and tests everything against
# each of them by hand (--all: docs/testing.md).
# The consumer tests (which configure and build projects of their own) and
# the other long tests have a ctest COST: `ctest -j` starts them first, so
# that both cores stay busy to the end. Where each test runs: docs/testing.md.
# Every step runs even when an earlier one failed; the summary at the end has
# one line per step with its result, duration and CPU seconds (user + system of
# everything it ran, from `times`), and the exit status is 0
# only when every step passed.
# Environment: DD_CI_JOBS (default: nproc), DD_CI_TEST_JOBS (default: DD_CI_JOBS + 1),
# DD_CI_BUILD_DIR (default: _build-ci).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=${DD_CI_JOBS:-$(nproc)}
# Tests: one more at a time than cores. Several tests wait on real servers
# (a Sentinel failover, the sandbox, nginx) more than they compute: in the
# run of docs/performance.md#ci step 1's tests used 488 CPU-s in 331 s on 2 cores.
test_jobs=${DD_CI_TEST_JOBS:-$(( jobs + 1 ))}
out=${DD_CI_BUILD_DIR:-$root/_build-ci}
start=$(date +%s)
summary=()
failed=0

# Sets CPU to the CPU seconds (user + system) of every finished child of this
# shell so far: the second line of `times`, e.g. "12m3.500s 0m40.250s".
# `times` runs in this shell (in a $(...) subshell it would see no children).
cpu_file=$(mktemp)
trap 'rm -f "$cpu_file"' EXIT
read_cpu() {
  times > "$cpu_file"
  CPU=$(tail -n 1 "$cpu_file" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, t, /m|s/); s += t[1] * 60 + t[2] } printf "%.0f", s }')
}

# step NAME COMMAND...: runs COMMAND, records its result, duration and CPU time.
step() {
  local name=$1; shift
  local t0 c0; t0=$(date +%s); read_cpu; c0=$CPU
  echo "== [$(( t0 - start ))s] $name"
  local result=passed
  if ! "$@"; then result=FAILED; failed=1; fi
  local t1 c1; t1=$(date +%s); read_cpu; c1=$CPU
  summary+=("$(printf '%-44s %-7s %4ss %6s CPU-s' "$name" "$result" "$(( t1 - t0 ))" "$(( c1 - c0 ))")")
}

step "dependencies" bash tests/install_deps.sh
if [ $failed -ne 0 ]; then printf '%s\n' "${summary[@]}"; exit 1; fi

# Every step links with lld (Debian's lld: ld.lld), not GNU ld: the same
# programs, about a fifth of the linking CPU time (docs/performance.md#ci).
lld=(-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_MODULE_LINKER_FLAGS=-fuse-ld=lld)

# Sanitizer builds run slower: more room before an operation counts as hung.
san_env=(DD_TEST_OP_SECONDS=180 DD_TEST_HANG_SECONDS=600)

# -U: every area (the default list, docs included) even in a reused build directory.
gcc_build() {
  cmake -S . -B "$out/gcc" -G Ninja -DCMAKE_CXX_COMPILER=g++-12 -DDIGITAL_DELIVERY_WERROR=ON \
    -DDIGITAL_DELIVERY_BUILD_TESTS=ON -DDIGITAL_DELIVERY_UNITY_TESTS=ON -UDIGITAL_DELIVERY_TEST_AREAS \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "${lld[@]}" >/dev/null &&
  cmake --build "$out/gcc" -j "$jobs"
}
gcc_test() { (cd "$out/gcc" && ctest -j "$test_jobs" --output-on-failure); }

# Each source of the programs marked UNITY (tests/CMakeLists.txt, and
# unity_programs of tests/meson.build: the same programs) compiled as its own
# translation unit, once: tests/compile_each_tu.py --unity-only takes step 1's
# compile_commands.json (its flags, -Werror included), replaces each unity TU
# by the sources it includes and compiles each with -fsyntax-only. Every
# other test, tool and example source is compiled on its own by the builds
# themselves. The options measured (docs/testing.md, "Each source on its own"),
# for the 30 sources of the 7 programs:
#   - unity off in the TSan step: it builds scheduler's two programs only,
#     not core, trace_otlp, upload_sandbox, workflows, integration: rejected;
#   - unity off in step 1 (g++-12): about as much as the -fsyntax-only pass
#     (objects of each source against the one unity object, CPU-s: core
#     97.8 - 44.7 = +53.0, its pass 55.0; integration 77.7 - 30.1 = +47.6,
#     its pass 45.3; scheduler 37.4 - 19.4 = +18.0, its pass 21.2), so about
#     190 CPU-s, in step 1's build, which keeps both cores busy: about 95 s
#     more of wall time;
#   - -fsyntax-only, g++-12: 190 CPU-s; clang++-16: 188 CPU-s (the whole pass,
#     on a loaded machine). In a step of its own, about 95 s of wall time too.
# Chosen: clang++-16 -fsyntax-only, as a step of its own right after step 1's
# build. (Run in the background at nice 19 beside the test steps, it cost no
# wall time of its own but loaded the machine while the tests ran, and the
# rate-limit tests on a 0.5 s window are what such load disturbs: in one run
# shared_store_processes saw two 429s under ASan with the pass beside it,
# none in three runs of that program alone.)
each_tu() {
  [ -f "$out/gcc/compile_commands.json" ] || { echo "no $out/gcc/compile_commands.json (step 1's configure failed)"; return 1; }
  python3 tests/compile_each_tu.py "$out/gcc" --unity-only --cxx clang++-16 -j "$jobs"
}

# The other Boost versions (tests/boost_versions.sh prefix VERSION prints the
# prefix of VERSION in the cache, fetching it first if need be).
boost_fetch() {
  mkdir -p "$out" &&
  bash tests/boost_versions.sh prefix 1.83 > "$out/boost-1.83" &&
  bash tests/boost_versions.sh prefix newest > "$out/boost-newest"
}
step "Boost 1.83 and newest: fetch (or cached)" boost_fetch
boost_183=$(cat "$out/boost-1.83" 2>/dev/null)
boost_newest=$(cat "$out/boost-newest" 2>/dev/null)
newest_version=$(basename "${boost_newest:-/newest}" | cut -d - -f 1)
boost_libdir() { echo "$1/usr/lib/x86_64-linux-gnu"; }

meson_asan_build() {
  [ -n "$boost_newest" ] || { echo "no newest Boost (the fetch step failed)"; return 1; }
  rm -rf "$out/meson-asan"
  # The run path: the programs (ddctl too, which tests/cli starts with an
  # environment of its own) find the newest Boost's JSON and URL libraries.
  # Line tables only (-gline-tables-only, not meson's -g): what the sanitizers'
  # reports need (file and line of each frame), for less compile and link time.
  BOOST_ROOT="$boost_newest/usr" CXX=clang++-16 meson setup "$out/meson-asan" -Dtests=true -Dwerror_flag=true \
    -Db_sanitize=address,undefined -Db_lundef=false -Ddebug=false -Dcpp_args=-gline-tables-only \
    -Dcpp_link_args="-fuse-ld=lld -Wl,-rpath,$(boost_libdir "$boost_newest")" >/dev/null &&
  { grep -Eq "Run-time dependency Boost .* found: YES ${newest_version}[. ]" "$out/meson-asan/meson-logs/meson-log.txt" ||
    { echo "meson did not take Boost $newest_version from $boost_newest"; false; }; } &&
  ninja -C "$out/meson-asan" -j "$jobs" >/dev/null
}
meson_asan_test() {
  env "${san_env[@]}" ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    meson test -C "$out/meson-asan" --num-processes "$test_jobs" --print-errorlogs --timeout-multiplier 3 --no-suite docs
}

tsan_build() {
  [ -n "$boost_183" ] || { echo "no Boost 1.83 (the fetch step failed)"; return 1; }
  local boost_dir; boost_dir=$(ls -d "$(boost_libdir "$boost_183")"/cmake/Boost-1.83* | head -n 1)
  cmake -S . -B "$out/tsan" -G Ninja -DCMAKE_CXX_COMPILER=clang++-16 -DDIGITAL_DELIVERY_WERROR=ON -DDIGITAL_DELIVERY_BUILD_TESTS=ON \
    -DDIGITAL_DELIVERY_UNITY_TESTS=ON \
    -DDIGITAL_DELIVERY_SANITIZE=thread -DDIGITAL_DELIVERY_BUILD_EXAMPLES=OFF -DDIGITAL_DELIVERY_BUILD_SANDBOX=OFF \
    -DDIGITAL_DELIVERY_BUILD_CLI=OFF \
    -DCMAKE_PREFIX_PATH="$boost_183/usr" -DBoost_DIR="$boost_dir" "${lld[@]}" \
    "-DDIGITAL_DELIVERY_TEST_AREAS=transport;scheduler" >/dev/null &&
  [ "$(sed -n 's/^Boost_DIR:[A-Z]*=//p' "$out/tsan/CMakeCache.txt")" = "$boost_dir" ] &&
  cmake --build "$out/tsan" -j "$jobs"
}
tsan_test() {
  (cd "$out/tsan" && env "${san_env[@]}" TSAN_OPTIONS=halt_on_error=1 ctest -j "$test_jobs" --output-on-failure \
    --timeout 1200)
}

# Every public header in one translation unit as C++23, against each of the
# other Boost versions (step 1 checks the system's with g++-12, odr_separate).
cxx23_headers() {
  local tu="$out/all_public_headers_cxx23.cpp" p
  (cd include && find digital_delivery -name '*.hpp' -not -path '*/detail/*' -not -path '*/impl/*' -not -name src.hpp -not -name sqlite_src.hpp |
   LC_ALL=C sort | sed 's|.*|#include <&>|') > "$tu" || return 1
  for p in "$boost_183" "$boost_newest"; do
    [ -n "$p" ] || { echo "a Boost prefix is missing (the fetch step failed)"; return 1; }
    clang++-16 -std=c++2b -fsyntax-only -Wall -Wextra -Werror -Iinclude -isystem "$p/usr/include" "$tu" || return 1
  done
}

# Only the fuzz targets (header-only, and the sandbox's core instrumented):
# nothing else of the project is built here.
fuzz_build() {
  cmake -S . -B "$out/fuzz" -G Ninja -DCMAKE_CXX_COMPILER=clang++-16 -DDIGITAL_DELIVERY_WERROR=ON \
    -DDIGITAL_DELIVERY_FUZZ=ON -DDIGITAL_DELIVERY_BUILD_TESTS=OFF -DDIGITAL_DELIVERY_BUILD_EXAMPLES=OFF \
    -DDIGITAL_DELIVERY_BUILD_SANDBOX=OFF -DDIGITAL_DELIVERY_BUILD_COMPILED=OFF "${lld[@]}" >/dev/null &&
  cmake --build "$out/fuzz" -j "$jobs"
}
# Each target: 20000 runs (at most 20 s) from its committed corpus.
fuzz_test() { (cd "$out/fuzz" && ctest -j "$jobs" -L fuzz --output-on-failure); }

step "1/4 build: CMake, g++-12, -Werror" gcc_build
step "each UNITY source on its own: clang++-16 -fsyntax-only" each_tu
step "1/4 test: unit, integration, consumer, examples" gcc_test
step "2/4 build: meson, clang++-16, ASan+UBSan, Boost $newest_version" meson_asan_build
step "2/4 test: unit, integration (ASan+UBSan, Boost $newest_version)" meson_asan_test
step "3/4 build: CMake, clang++-16, TSan, Boost 1.83" tsan_build
step "3/4 test: transport, scheduler (TSan, Boost 1.83)" tsan_test
step "4/4 build: fuzz targets, clang++-16 libFuzzer" fuzz_build
step "4/4 fuzz: every target, 20000 runs each" fuzz_test
step "C++23: every public header, Boost 1.83 and $newest_version" cxx23_headers

echo
read_cpu
echo "== summary ($(( $(date +%s) - start ))s in all, $CPU CPU-s)"
printf '%s\n' "${summary[@]}"
passed_steps=$(printf '%s\n' "${summary[@]}" | grep -c ' passed ')
failed_steps=$(printf '%s\n' "${summary[@]}" | grep -c ' FAILED ')
echo "steps: $passed_steps passed, $failed_steps failed"
# The documentation's snippets (docs_snippets of 1/4): compiled N, run M, and
# why each of the others does not run.
docs_log="$out/gcc/Testing/Temporary/LastTest.log"
if [ -f "$docs_log" ] && grep -q '^snippets: ' "$docs_log"; then
  echo "== documentation snippets (1/4)"
  sed -n '/^snippets: /,/^[^ ]/{/^snippets: \|^  /p}' "$docs_log"
fi
exit $failed
