#!/usr/bin/env bash
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# The packaging checks (docs/packaging.md): the Debian packages, the vcpkg port,
# the Conan recipe, the version in every place, the release tarball.
#
#   tests/packaging.sh [--cheap] [--work DIR] [--jobs N] [STEP...]
#
# Steps (all, in this order, when none is named):
#   deps       installs what the full run needs (debhelper, devscripts, dpkg-dev,
#              lintian, fakeroot; ajv-cli with npm ci) when missing
#   schema     ports/digital-delivery/vcpkg.json against tests/packaging/vcpkg.schema.json
#              (ajv-cli), and three broken copies of it refused
#   versions   VERSION agrees with debian/changelog, vcpkg.json, conanfile.py, CHANGELOG.md
#   copyright  debian/copyright covers every file of the tree
#   vcpkg      the portfile run by tests/packaging/vcpkg_emulation.cmake, vcpkg's
#              post-build rules (check_vcpkg.py), the package moved to another
#              prefix and conan/test_package configured (--cheap) or built and run
#              against it, and pkg-config from there. Header-only; the full run
#              also with the features $DD_VCPKG_FEATURES (default compiled;sandbox;
#              release and debug), the sandbox started from tools/
#   conan      conan/conanfile.py called through a stand-in of Conan's API
#              (check_conan.py): header-only; the full run also with the options
#              $DD_CONAN_OPTIONS (default compiled=True sandbox=True)
#   deb        dpkg-buildpackage -us -uc -b, lintian, the packages unpacked into a
#              temporary root (dpkg-deb -x): conan/test_package built with
#              find_package, a consumer with pkg-config, ddctl --version, the
#              sandbox's /sandbox/health (full run only)
#   dist       meson dist --no-tests from a git clone (the committed HEAD), the
#              tarball unpacked, the library and the unit tests built and
#              `ctest -L unit` run there (full run only)
#
# --cheap: schema, versions, copyright, vcpkg and conan header-only, nothing
# compiled (a few seconds of CPU; what the ctest test `packaging_checks` runs).
# Nothing is installed into the system but by the step deps.
# Ends with one line per step: result, seconds, CPU seconds.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
here=$root/tests/packaging
work=$root/_build-packaging
cheap=0
jobs=2
steps=()
run_step=""
while [ $# -gt 0 ]; do
  case $1 in
    --cheap) cheap=1 ;;
    --work) work=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --run-step) run_step=$2; shift ;;
    -h|--help) sed -n '5,39p' "$0"; exit 0 ;;
    -*) echo "packaging.sh: unknown option $1" >&2; exit 2 ;;
    *) steps+=("$1") ;;
  esac
  shift
done
mkdir -p "$work"
work=$(cd "$work" && pwd)
version=$(head -n1 "$root/VERSION")
cxx=${CXX:-g++-12}
launcher=()
# The full run's vcpkg features and Conan options (beside header-only). The
# default leaves out ddctl (cli), which the deb step builds and runs: each
# build of the tools costs minutes of CPU. DD_VCPKG_FEATURES="compiled;sandbox;cli"
# DD_CONAN_OPTIONS="compiled=True sandbox=True cli=True" for everything.
vcpkg_features=${DD_VCPKG_FEATURES:-compiled;sandbox}
conan_options=${DD_CONAN_OPTIONS:-compiled=True sandbox=True}
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

say() { echo "== $*"; }

need_ajv() {
  if [ ! -x "$here/node_modules/.bin/ajv" ]; then
    echo "ajv-cli is not installed: run tests/install_deps.sh (npm ci in tests/packaging)" >&2
    exit 1
  fi
}

step_deps() {
  local pkgs=(debhelper devscripts dpkg-dev lintian fakeroot curl pkg-config meson git xz-utils)
  local missing=()
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  if ! cmp -s "$here/package-lock.json" "$here/node_modules/.package-lock.json.installed"; then
    (cd "$here" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    cp "$here/package-lock.json" "$here/node_modules/.package-lock.json.installed"
  fi
}

step_schema() {
  need_ajv
  local ajv=("$here/node_modules/.bin/ajv" validate --spec=draft7 --strict=true --errors=text -s "$here/vcpkg.schema.json")
  "${ajv[@]}" -d "$root/ports/digital-delivery/vcpkg.json"
  # The schema refuses what it must: a misspelt field, a version that is not
  # the 'version' scheme, a feature dependency without a name.
  local d=$work/schema
  rm -rf "$d"; mkdir -p "$d"
  python3 - "$root/ports/digital-delivery/vcpkg.json" "$d" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
bad = {
    "misspelt_field": dict(m, dependancies=m["dependencies"]),
    "semver_prerelease": dict(m, version=m["version"] + "-rc1"),
    "dependency_without_name": dict(m, features=dict(m["features"], cli={"description": "x", "dependencies": [{"features": ["compiled"]}]})),
}
for name, value in bad.items():
    json.dump(value, open(f"{sys.argv[2]}/{name}.json", "w"))
EOF
  for f in "$d"/*.json; do
    if "${ajv[@]}" -d "$f" >/dev/null 2>&1; then
      echo "the schema accepts $(basename "$f" .json): it must refuse it" >&2
      return 1
    fi
    echo "refused, as it must be: $(basename "$f" .json)"
  done
}

step_versions() { python3 "$here/check_versions.py" "$root"; }

step_copyright() { python3 "$here/check_debian_copyright.py" "$root"; }

# vcpkg_port NAME FEATURES BUILD(0|1): the emulated port, its checks, the
# package moved to WORK/NAME/installed, test_package configured (BUILD=0) or
# built and run (1) against it, pkg-config from there (BUILD=1).
vcpkg_port() {
  local name=$1 features=$2 build=$3
  local d=$work/vcpkg/$name
  rm -rf "$d"
  cmake -DPORT_DIR="$root/ports/digital-delivery" -DWORK_DIR="$d" -DFEATURES="$features" -DCXX="$cxx" \
        ${launcher:+-DLAUNCHER=ccache} -DJOBS="$jobs" -P "$here/vcpkg_emulation.cmake"
  local pkg=$d/packages/digital-delivery_x64-linux
  python3 "$here/check_vcpkg.py" "$pkg" --port digital-delivery --licence "$root/LICENSE_1_0.txt" \
          --forbid "$root" "$d"
  # vcpkg installs the package directory into installed/<triplet>: the
  # package must work from there, with the directory it was built in gone.
  local moved=$d/installed/x64-linux
  mkdir -p "$(dirname "$moved")"
  mv "$pkg" "$moved"
  cmake -S "$root/conan/test_package" -B "$d/test_package" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" \
        -DCMAKE_PREFIX_PATH="$moved" -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON >"$d/test_package.log"
  local found
  found=$(sed -n 's/^digital_delivery_DIR:PATH=//p' "$d/test_package/CMakeCache.txt")
  [ "$found" = "$moved/share/digital_delivery" ] || { echo "find_package found '$found', not the moved prefix" >&2; return 1; }
  echo "find_package(digital_delivery) from the moved prefix: $found"
  if [ "$build" = 1 ]; then
    cmake --build "$d/test_package" --parallel "$jobs"
    "$d/test_package/test_package"
    if [ -f "$moved/lib/pkgconfig/digital_delivery_compiled.pc" ]; then
      cmake -DMODE=pkg_config -DPREFIX="$moved" -DWORK_DIR="$d/pkg_config" -DCXX="$cxx" \
            -P "$root/tests/consumer/run_consumer.cmake"
    else
      # Header-only: digital_delivery.pc alone.
      local flags
      flags=$(PKG_CONFIG_PATH=$moved/share/pkgconfig pkg-config --cflags --libs digital_delivery)
      [[ "$flags" == *"-I$moved/share/pkgconfig/../../include"* ]] || { echo "pkg-config: $flags" >&2; return 1; }
      # shellcheck disable=SC2086
      "$cxx" -std=c++20 -Wall -Wextra -Werror "$root/tests/consumer/project/minimal.cpp" -o "$d/minimal" $flags \
        "-DDD_EXPECTED_VERSION=\"$version\""
      "$d/minimal"
    fi
  fi
}

step_vcpkg() {
  vcpkg_port header-only "" "$((1 - cheap))"
  if [ "$cheap" = 0 ]; then
    vcpkg_port features "$vcpkg_features" 1
    local installed=$work/vcpkg/features/installed/x64-linux
    if [[ ";$vcpkg_features;" == *";cli;"* ]]; then
      "$installed/tools/digital-delivery/ddctl" --version | grep -F "$version"
    fi
    if [[ ";$vcpkg_features;" == *";sandbox;"* ]]; then
      # The exported target follows the executable into tools/; it starts.
      grep 'tools/digital-delivery/digital-delivery-sandbox' \
        "$installed/share/digital_delivery/digital_delivery-targets-release.cmake"
      bash "$root/tests/common/with_sandbox.sh" "$installed/tools/digital-delivery/digital-delivery-sandbox" -- \
        bash -c 'curl -fsS "${DIGITAL_DELIVERY_BASE_URL%/api/v1/external}/sandbox/health"'
      echo
    fi
  fi
}

step_conan() {
  DD_QUIET=1 CXX=$cxx DD_CXX_LAUNCHER=${launcher:+ccache} DD_JOBS=$jobs \
    python3 "$here/check_conan.py" --work "$work/conan/header-only"
  if [ "$cheap" = 0 ]; then
    local opts=()
    for o in $conan_options; do opts+=(--option "$o"); done
    DD_QUIET=1 CXX=$cxx DD_CXX_LAUNCHER=${launcher:+ccache} DD_JOBS=$jobs \
      python3 "$here/check_conan.py" --work "$work/conan/options" "${opts[@]}"
  fi
}

step_deb() {
  local d=$work/deb
  rm -rf "$d"; mkdir -p "$d/src"
  # The tree as it is (committed or not), without build directories.
  (cd "$root" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$d/src")
  say "dpkg-buildpackage -us -uc -b -j$jobs (log: $d/build.log)"
  (cd "$d/src" && CMAKE_CXX_COMPILER_LAUNCHER=${launcher:+ccache} DEB_BUILD_OPTIONS="nocheck parallel=$jobs" \
     dpkg-buildpackage -us -uc -b -j"$jobs" >"$d/build.log" 2>&1) || { tail -40 "$d/build.log"; return 1; }
  local changes
  changes=$(ls "$d"/digital-delivery_"$version"_*.changes)
  say "lintian $(basename "$changes")"
  # The verdict: no error, no warning that is not overridden. Then the record,
  # with the overridden tags, their reasons and the informational tags (lintian
  # exits non-zero when it shows overrides).
  lintian --fail-on error,warning "$changes"
  lintian --display-info --show-overrides "$changes" | tee "$d/lintian.txt" || true
  ls -l "$d"/*.deb
  local r=$d/root
  for deb in "$d"/libdigital-delivery-dev_*.deb "$d"/ddctl_*.deb "$d"/digital-delivery-sandbox_*.deb; do
    dpkg-deb -x "$deb" "$r"
  done
  say "the packages' files"
  (cd "$r" && find . -type f | sort | grep -v '^./usr/include/digital_delivery/' ; echo "+ $(find usr/include -type f | wc -l) headers")
  say "find_package from the unpacked root: conan/test_package"
  cmake -S "$root/conan/test_package" -B "$d/test_package" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" \
        -DCMAKE_PREFIX_PATH="$r/usr" -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON >"$d/test_package.log"
  grep -F "digital_delivery_DIR:PATH=$r/usr/lib/" "$d/test_package/CMakeCache.txt"
  cmake --build "$d/test_package" --parallel "$jobs"
  "$d/test_package/test_package"
  say "pkg-config from the unpacked root (header-only and compiled)"
  cmake -DMODE=pkg_config -DPREFIX="$r/usr" -DWORK_DIR="$d/pkg_config" -DCXX="$cxx" \
        -P "$root/tests/consumer/run_consumer.cmake"
  PKG_CONFIG_PATH=$r/usr/share/pkgconfig pkg-config --cflags digital_delivery | grep -F -- "-I$r/usr/share/pkgconfig/../../include"
  say "ddctl --version"
  "$r/usr/bin/ddctl" --version | tee "$d/ddctl_version.txt"
  grep -qF "$version" "$d/ddctl_version.txt"
  say "digital-delivery-sandbox: GET /sandbox/health"
  bash "$root/tests/common/with_sandbox.sh" "$r/usr/bin/digital-delivery-sandbox" -- \
    bash -c 'curl -fsS -i "${DIGITAL_DELIVERY_BASE_URL%/api/v1/external}/sandbox/health"' | tee "$d/health.txt"
  grep -q '"service":"digital-delivery-sandbox"' "$d/health.txt"
}

step_dist() {
  local d=$work/dist
  rm -rf "$d"; mkdir -p "$d"
  if [ -n "$(cd "$root" && git status --porcelain --untracked-files=no)" ]; then
    echo "note: uncommitted changes are not in the tarball (it is made from the committed HEAD)"
  fi
  git clone -q "$root" "$d/clone"
  meson setup "$d/clone/_mbuild" "$d/clone" -Dtests=false -Dcli=false -Dsandbox=false >"$d/meson-setup.log"
  meson dist -C "$d/clone/_mbuild" --no-tests --formats xztar
  local tarball=$d/clone/_mbuild/meson-dist/digital_delivery-$version.tar.xz
  ls -l "$tarball"
  # Unpacked next to the worktree's build directory (relative paths as in
  # every worktree: ccache reuses their objects).
  mkdir -p "$d/unpacked"
  tar -xJf "$tarball" -C "$d/unpacked"
  local src=$d/unpacked/digital_delivery-$version
  [ ! -e "$src/.git" ] || { echo "the tarball has a .git" >&2; return 1; }
  local in_git in_tar
  in_git=$(cd "$d/clone" && git ls-files | wc -l)
  in_tar=$(tar -tJf "$tarball" | grep -v '/$' | wc -l)
  echo "files: $in_tar in the tarball, $in_git in git"
  [ "$in_git" = "$in_tar" ]
  cmake -S "$src" -B "$src/_build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" \
        -DDIGITAL_DELIVERY_BUILD_TESTS=ON >"$d/configure.log"
  ninja -C "$src/_build" -j"$jobs" -k 0 unit_tests >"$d/build.log" || { grep -A12 "^FAILED" "$d/build.log" | head -80; return 1; }
  ctest --test-dir "$src/_build" -L unit -j"$jobs" --output-on-failure
}

if [ -n "$run_step" ]; then
  "step_$run_step"
  exit
fi

if [ ${#steps[@]} -eq 0 ]; then
  if [ "$cheap" = 1 ]; then
    steps=(schema versions copyright vcpkg conan)
  else
    steps=(deps schema versions copyright deb vcpkg conan dist)
  fi
fi
summary=()
failed=0
TIMEFORMAT='%R %U %S'
for s in "${steps[@]}"; do
  declare -F "step_$s" >/dev/null || { echo "packaging.sh: unknown step $s" >&2; exit 2; }
  say "step $s"
  args=(--work "$work" --jobs "$jobs" --run-step "$s")
  [ "$cheap" = 1 ] && args+=(--cheap)
  # bash's time (TIMEFORMAT) into the file; the step's own stderr to ours (fd 3).
  if { time bash "$0" "${args[@]}" 2>&3; } 3>&2 2>"$work/time.$s"; then
    result=ok
  else
    result=FAILED
    failed=1
  fi
  summary+=("$(awk -v s="$s" -v r="$result" 'END { printf "%-10s %-7s %7.1f s %8.1f CPU-s", s, r, $1, $2 + $3 }' "$work/time.$s")")
done
say "summary: step, result, wall seconds, CPU seconds (user + system, with every child)"
printf '%s\n' "${summary[@]}"
exit $failed
