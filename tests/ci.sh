#!/usr/bin/env bash
# The test command (README.md): on a fresh Debian 12 machine, installs what it
# needs, then builds and tests three ways:
#   1. CMake + g++-12, -Werror: every test (unit, scheduler, transport against
#      nginx, sandbox, upload, workflows, consumer/packaging, examples);
#   2. meson + clang++-16, -Werror: the same tests through meson;
#   3. CMake + clang++-16 with ASan+UBSan: the unit and sandbox tests;
#   4. CMake + clang++-16 with TSan: the transport (incl. a multi-threaded
#      io_context against nginx) and the rate limiter.
# Environment: DD_CI_JOBS (default: nproc). Everything runs, the 2 GiB sparse
# upload (label large) included: it takes a few seconds.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=${DD_CI_JOBS:-$(nproc)}
out=${DD_CI_BUILD_DIR:-$root/_build-ci}
start=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - start ))s] $*"; }

stamp "dependencies"
bash tests/install_deps.sh

stamp "1/4 CMake, g++-12, -Werror"
cmake -S . -B "$out/gcc" -G Ninja -DCMAKE_CXX_COMPILER=g++-12 -DDIGITAL_DELIVERY_WERROR=ON \
  -DDIGITAL_DELIVERY_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$out/gcc" -j "$jobs"
stamp "1/4 ctest"
(cd "$out/gcc" && ctest -j "$jobs" --output-on-failure --timeout 600)

stamp "2/4 meson, clang++-16, -Werror"
rm -rf "$out/meson"
CXX=clang++-16 meson setup "$out/meson" -Dwerror_flag=true >/dev/null
ninja -C "$out/meson" -j "$jobs" >/dev/null
stamp "2/4 meson test"
meson test -C "$out/meson" --num-processes "$jobs" --print-errorlogs

stamp "3/4 CMake, clang++-16, ASan+UBSan"
cmake -S . -B "$out/asan" -G Ninja -DCMAKE_CXX_COMPILER=clang++-16 -DDIGITAL_DELIVERY_WERROR=ON \
  -DDIGITAL_DELIVERY_SANITIZE=address,undefined -DDIGITAL_DELIVERY_BUILD_EXAMPLES=OFF \
  "-DDIGITAL_DELIVERY_TEST_AREAS=unit;scheduler;integration" >/dev/null
cmake --build "$out/asan" -j "$jobs"
stamp "3/4 ctest (ASan+UBSan)"
(cd "$out/asan" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest -j "$jobs" --output-on-failure --timeout 600 -L "unit|sandbox")

stamp "4/4 CMake, clang++-16, TSan"
cmake -S . -B "$out/tsan" -G Ninja -DCMAKE_CXX_COMPILER=clang++-16 -DDIGITAL_DELIVERY_WERROR=ON \
  -DDIGITAL_DELIVERY_SANITIZE=thread -DDIGITAL_DELIVERY_BUILD_EXAMPLES=OFF -DDIGITAL_DELIVERY_BUILD_SANDBOX=OFF \
  "-DDIGITAL_DELIVERY_TEST_AREAS=transport;scheduler" >/dev/null
cmake --build "$out/tsan" -j "$jobs"
stamp "4/4 ctest (TSan)"
(cd "$out/tsan" && TSAN_OPTIONS=halt_on_error=1 ctest -j "$jobs" --output-on-failure --timeout 600)

stamp "all passed"
