#!/usr/bin/env bash
# The test command (README.md), what CI runs (.ci/run). On a fresh Debian 12
# machine it installs what it needs, then builds and tests in three
# configurations, each compiling the library once and the test programs marked
# UNITY as one translation unit each (tests/CMakeLists.txt, tests/meson.build),
# and runs the fuzzers briefly:
#   1. CMake + g++-12, -Werror: every test program (labels unit and
#      integration: cli, ddctl against the sandbox, included), the consumer/
#      packaging tests, the documentation snippets (compiled, those marked run
#      run) and the examples (against the sandbox);
#   2. meson + clang++-16 with ASan+UBSan, -Werror: every test program (suites
#      unit and integration, cli included); not the docs suite (step 1 compiles
#      the snippets and runs those marked run);
#   3. CMake + clang++-16 with TSan: the areas that run threads (transport with
#      a multi-threaded io_context, scheduler's limiter shared across threads);
#      core runs on one thread (the library starts none): steps 1 and 2 test it;
#   4. CMake + clang++-16, libFuzzer with ASan+UBSan: the fuzz targets of
#      tests/fuzz/, each run briefly over its corpus (docs/reliability.md);
# then, against the other Boost versions tested (the system's is 1.81), CMake +
# clang++-16, -Werror (tests/boost_versions.sh): the newest, the compiled
# library, sandbox, ddctl and every test program built, the unit tests run;
# 1.83, the same with the unit test programs only.
# The consumer tests (which configure and build projects of their own) and
# the other long tests have a ctest COST: `ctest -j` starts them first, so
# that both cores stay busy to the end. Where each test runs: docs/testing.md.
# Every step runs even when an earlier one failed; the summary at the end has
# one line per step with its result, duration and CPU seconds (user + system of
# everything it ran, from `times`), and the exit status is 0
# only when every step passed.
# Environment: DD_CI_JOBS (default: nproc), DD_CI_BUILD_DIR (default: _build-ci).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=${DD_CI_JOBS:-$(nproc)}
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

# Sanitizer builds run slower: more room before an operation counts as hung.
san_env=(DD_TEST_OP_SECONDS=180 DD_TEST_HANG_SECONDS=600)

# -U: every area (the default list, docs included) even in a reused build directory.
gcc_build() {
  cmake -S . -B "$out/gcc" -G Ninja -DCMAKE_CXX_COMPILER=g++-12 -DDIGITAL_DELIVERY_WERROR=ON \
    -DDIGITAL_DELIVERY_BUILD_TESTS=ON -DDIGITAL_DELIVERY_UNITY_TESTS=ON -UDIGITAL_DELIVERY_TEST_AREAS >/dev/null &&
  cmake --build "$out/gcc" -j "$jobs"
}
gcc_test() { (cd "$out/gcc" && ctest -j "$jobs" --output-on-failure); }

meson_asan_build() {
  rm -rf "$out/meson-asan"
  CXX=clang++-16 meson setup "$out/meson-asan" -Dtests=true -Dwerror_flag=true -Db_sanitize=address,undefined \
    -Db_lundef=false >/dev/null &&
  ninja -C "$out/meson-asan" -j "$jobs" >/dev/null
}
meson_asan_test() {
  env "${san_env[@]}" ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    meson test -C "$out/meson-asan" --num-processes "$jobs" --print-errorlogs --timeout-multiplier 3 --no-suite docs
}

tsan_build() {
  cmake -S . -B "$out/tsan" -G Ninja -DCMAKE_CXX_COMPILER=clang++-16 -DDIGITAL_DELIVERY_WERROR=ON -DDIGITAL_DELIVERY_BUILD_TESTS=ON \
    -DDIGITAL_DELIVERY_UNITY_TESTS=ON \
    -DDIGITAL_DELIVERY_SANITIZE=thread -DDIGITAL_DELIVERY_BUILD_EXAMPLES=OFF -DDIGITAL_DELIVERY_BUILD_SANDBOX=OFF \
    -DDIGITAL_DELIVERY_BUILD_CLI=OFF \
    "-DDIGITAL_DELIVERY_TEST_AREAS=transport;scheduler" >/dev/null &&
  cmake --build "$out/tsan" -j "$jobs"
}
tsan_test() {
  (cd "$out/tsan" && env "${san_env[@]}" TSAN_OPTIONS=halt_on_error=1 ctest -j "$jobs" --output-on-failure \
    --timeout 1200)
}

# Only the fuzz targets (header-only, and the sandbox's core instrumented):
# nothing else of the project is built here.
fuzz_build() {
  cmake -S . -B "$out/fuzz" -G Ninja -DCMAKE_CXX_COMPILER=clang++-16 -DDIGITAL_DELIVERY_WERROR=ON \
    -DDIGITAL_DELIVERY_FUZZ=ON -DDIGITAL_DELIVERY_BUILD_TESTS=OFF -DDIGITAL_DELIVERY_BUILD_EXAMPLES=OFF \
    -DDIGITAL_DELIVERY_BUILD_SANDBOX=OFF -DDIGITAL_DELIVERY_BUILD_COMPILED=OFF >/dev/null &&
  cmake --build "$out/fuzz" -j "$jobs"
}
# Each target: 20000 runs (at most 20 s) from its committed corpus.
fuzz_test() { (cd "$out/fuzz" && ctest -j "$jobs" -L fuzz --output-on-failure); }

step "1/4 build: CMake, g++-12, -Werror" gcc_build
step "1/4 test: unit, integration, consumer, examples" gcc_test
step "2/4 build: meson, clang++-16, ASan+UBSan" meson_asan_build
step "2/4 test: unit, integration (ASan+UBSan)" meson_asan_test
step "3/4 build: CMake, clang++-16, TSan" tsan_build
step "3/4 test: transport, scheduler (TSan)" tsan_test
step "4/4 build: fuzz targets, clang++-16 libFuzzer" fuzz_build
step "4/4 fuzz: every target, 20000 runs each" fuzz_test

# The other Boost versions tested (tests/boost_versions.sh, docs/testing.md):
# 1.83 and the newest Boost of Debian unstable, fetched into a cache outside
# the clone (never installed); CMake + clang++-16, -Werror. The newest: the
# compiled library, the sandbox, ddctl and every test program, then the unit
# tests and odr_* (every public header, the default transport, a call through
# the fake transport; odr_separate as C++23). 1.83, to keep CI under 20
# minutes: the compiled library, the sandbox, ddctl, the unit test programs and
# odr_separate, then those. The rest (1.83's integration test programs and
# odr_header_only, both versions' examples and benchmarks):
# tests/boost_versions.sh --all.
boost_env=(env DD_BOOST_BUILD_DIR="$out/boost" DD_CI_JOBS="$jobs" DD_BOOST_EXAMPLES=OFF DD_BOOST_BENCHMARKS=OFF)
boost_fetch() {
  mkdir -p "$out" &&
  "${boost_env[@]}" bash tests/boost_versions.sh prefix 1.83 >/dev/null &&
  "${boost_env[@]}" bash tests/boost_versions.sh prefix newest > "$out/boost-newest"
}
step "Boost 1.83 and newest: fetch (or cached)" boost_fetch
boost_newest=$(basename "$(cat "$out/boost-newest" 2>/dev/null)" | cut -d - -f 1)
boost_newest=${boost_newest:-newest}
step "Boost 1.83 build: clang++-16, unit programs" "${boost_env[@]}" bash tests/boost_versions.sh build 1.83 \
  digital_delivery_compiled digital-delivery-sandbox ddctl unit_tests odr_separate
step "Boost 1.83 test: unit, odr_separate" "${boost_env[@]}" bash tests/boost_versions.sh test 1.83 '^odr_separate$'
step "Boost $boost_newest build: clang++-16, all tests" "${boost_env[@]}" bash tests/boost_versions.sh build "$boost_newest"
step "Boost $boost_newest test: unit, odr_*" "${boost_env[@]}" bash tests/boost_versions.sh test "$boost_newest"

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
