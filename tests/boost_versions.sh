#!/usr/bin/env bash
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# Builds and tests this project against the Boost versions it supports besides
# the system's (Debian 12: 1.81), without installing any Boost over the
# system's: 1.83 (Debian's bookworm-backports, built for Debian 12) and the
# newest Boost Debian packages (sid). docs/testing.md describes it.
#
#   tests/boost_versions.sh --all             every extra version: build (the
#                                             compiled library, sandbox, ddctl,
#                                             every test program, the examples,
#                                             the benchmarks; -Werror) and run
#                                             the unit tests, odr_* and the
#                                             integration tests
#   tests/boost_versions.sh prefix VERSION    fetch VERSION (1.83 or newest)
#                                             into the cache, print its prefix
#   tests/boost_versions.sh build VERSION [what...]
#                                             configure and build against it;
#                                             what: cmake targets (default: all)
#   tests/boost_versions.sh test VERSION [REGEX]
#                                             ctest -L unit, then ctest -R REGEX
#                                             (default ^odr_: every public header,
#                                             a call through the fake transport)
#   tests/boost_versions.sh versions          print the extra versions (1.83, newest's number)
#
# Fetching uses apt-get with a private sources list, state and cache (nothing
# of the system's apt configuration or dpkg database changes): 1.83's headers
# and libraries come from bookworm-backports as they are; from sid only the
# headers (its compiled libraries need a newer C library than Debian 12's):
# Boost.JSON and Boost.URL, the compiled parts this project links, are built
# with the compiler given from that release's own sources (Debian's orig
# tarball, only libs/json/src, libs/url/src and libs/container/src taken out of
# it). Boost.Container is built too, because the CMake package of Boost.JSON
# links it.
#
# Cache: ${XDG_CACHE_HOME:-~/.cache}/digital_delivery/boost/<version>-<checksum>
# (checksum: the first 12 hex digits of the SHA-256 of the packages' and the
# tarball's SHA-256 sums, so that a new Debian revision gets a new folder).
# The script works from an empty cache. Build folders: DD_BOOST_BUILD_DIR
# (default: _build-boost in the repository), one per version.
# Environment: DD_CI_JOBS (default: nproc), CXX (default: clang++-16, which
# compiles this project faster than g++-12; CXX=g++-12 for g++).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/digital_delivery/boost
builds=${DD_BOOST_BUILD_DIR:-$root/_build-boost}
jobs=${DD_CI_JOBS:-$(nproc)}
cxx=${CXX:-clang++-16}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

# --- a private apt: its own sources list, lists and cache under $cache/apt ---
apt_dir=$cache/apt
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
          -o APT::Sandbox::User=root -o Debug::NoLocking=1 -q)
# The lists are read again at most every 10 minutes (one run of --all or of
# CI's steps asks several times, some from subshells).
apt_update() {
  [ -z "$(find "$apt_dir/updated" -mmin -10 2>/dev/null)" ] || return 0
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
  # The system's Debian mirror (deb.debian.org when there is none).
  local uri
  uri=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  [ -n "$uri" ] || uri=$(awk '$1 == "deb" && $2 !~ /^\[/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
  [ -n "$uri" ] || uri=http://deb.debian.org/debian
  {
    echo "deb [signed-by=$keyring] $uri bookworm-backports main"
    echo "deb [signed-by=$keyring] $uri sid main"
    echo "deb-src [signed-by=$keyring] $uri sid main"
  } > "$apt_dir/sources.list"
  apt-get "${apt_opts[@]}" update >&2 && touch "$apt_dir/updated"
}
# pkg_field PKG/SUITE FIELD: a field of the candidate of PKG in SUITE.
pkg_field() {
  local pkg=${1%/*} suite=${1#*/}
  apt-cache "${apt_opts[@]}" show "$pkg" 2>/dev/null |
    awk -v suite="$suite" -v field="$2" '
      BEGIN { RS = ""; FS = "\n" }
      { for (i = 1; i <= NF; i++) if ($i ~ "^" field ": ") v = substr($i, length(field) + 3)
        print v; exit }'
}
# The newest Boost of sid, e.g. 1.92: what its libboost-dev depends on.
newest_version() {
  apt_update
  apt-cache "${apt_opts[@]}" show libboost-dev 2>/dev/null |
    sed -n 's/^Depends:.*libboost\([0-9]*\.[0-9]*\)-dev.*/\1/p' | sort -V | tail -n 1
}

# Versions: pin each package to the suite that has the version wanted.
pkgs_of() {  # VERSION -> packages/suite
  local v=$1
  if [ "$v" = 1.83 ]; then
    for p in libboost1.83-dev libboost-json1.83-dev libboost-json1.83.0 libboost-url1.83-dev \
             libboost-url1.83.0 libboost-container1.83-dev libboost-container1.83.0 \
             libboost-system1.83-dev libboost-system1.83.0; do
      echo "$p/bookworm-backports"
    done
  else
    # Headers and the CMake package files of JSON and URL; their libraries are built here.
    for p in "libboost$v-dev" "libboost-json$v-dev" "libboost-url$v-dev" "libboost-container$v-dev"; do
      echo "$p/sid"
    done
  fi
}

# checksum of the SHA-256 sums of what VERSION is made of (packages, tarball).
version_key() {
  local v=$1 sums=""
  local p
  for p in $(pkgs_of "$v"); do
    sums+="$(apt-cache "${apt_opts[@]}" show "$p" 2>/dev/null | awk '/^SHA256: / { print $2; exit }')"
  done
  if [ "$v" != 1.83 ]; then
    sums+=$(apt-get "${apt_opts[@]}" --print-uris source "boost$v" 2>/dev/null | awk '/orig\.tar/ { print $4 }' | head -n 1)
  fi
  [ -n "$sums" ] || { echo "no packages of Boost $v found" >&2; return 1; }
  printf '%s' "$sums" | sha256sum | cut -c 1-12
}

resolve_version() {  # 1.83 | newest | 1.NN -> 1.NN
  case $1 in
    newest) newest_version ;;
    1.*) echo "$1" ;;
    *) echo "unknown Boost version: $1 (1.83 or newest)" >&2; return 1 ;;
  esac
}

# prefix VERSION: the cache folder of VERSION, fetched and built when missing.
# Its layout is Debian's: usr/include, usr/lib/x86_64-linux-gnu (+ cmake/).
prefix() {
  local v; v=$(resolve_version "$1") || return 1
  apt_update || return 1
  local key; key=$(version_key "$v") || return 1
  local dir=$cache/$v-$key
  if [ -f "$dir/.complete" ]; then echo "$dir"; return 0; fi
  rm -rf "$dir" "$dir.tmp"
  mkdir -p "$dir.tmp/debs"
  echo "fetching Boost $v into $dir" >&2
  (cd "$dir.tmp/debs" && apt-get "${apt_opts[@]}" download $(pkgs_of "$v") >&2) || return 1
  local deb
  for deb in "$dir.tmp"/debs/*.deb; do dpkg-deb -x "$deb" "$dir.tmp" || return 1; done
  rm -rf "$dir.tmp/debs" "$dir.tmp/usr/share"
  if [ "$v" != 1.83 ]; then build_compiled "$v" "$dir.tmp" || return 1; fi
  touch "$dir.tmp/.complete"
  mv "$dir.tmp" "$dir"
  echo "$dir"
}

# build_compiled VERSION DIR: Boost.JSON, Boost.URL and Boost.Container (which
# the CMake package of JSON links) from VERSION's orig tarball, with $cxx
# against DIR's headers, as the shared and static libraries the CMake package
# files of DIR name (replacing sid's, built for another C library).
build_compiled() {
  local v=$1 dir=$2 src=$2/src
  mkdir -p "$src" || return 1
  # 'URI' NAME SIZE SHA256:HASH of the orig tarball; apt-helper checks the hash.
  local uri name size hash
  read -r uri name size hash < <(apt-get "${apt_opts[@]}" --print-uris source "boost$v" 2>/dev/null | grep "orig\.tar")
  [ -n "${hash:-}" ] || { echo "the sources of Boost $v were not found" >&2; return 1; }
  /usr/lib/apt/apt-helper "${apt_opts[@]}" download-file "${uri//\'/}" "$src/$name" "$hash" >&2 || return 1
  # boost1.92_1.92.0.orig.tar.xz holds boost1.92-1.92.0/.
  local top=${name%%.orig.tar.*}; top=${top/_/-}
  tar -xf "$src/$name" -C "$src" "$top/libs/json/src" "$top/libs/url/src" "$top/libs/container/src" || return 1
  local libdir=$dir/usr/lib/x86_64-linux-gnu full
  full=$(awk '/^#define BOOST_VERSION / { v = $3; printf "%d.%d.%d", v / 100000, v / 100 % 1000, v % 100 }' \
    "$dir/usr/include/boost/version.hpp")
  local lib LIB defs
  for lib in json url container; do
    LIB=$(echo "$lib" | tr a-z A-Z)
    # Container's sources define BOOST_CONTAINER_SOURCE themselves.
    defs="-DBOOST_${LIB}_DYN_LINK"; [ "$lib" = container ] || defs+=" -DBOOST_${LIB}_SOURCE"
    mkdir -p "$src/obj/$lib"
    # Every .cpp; of Container's C files alloc_lib.c (dlmalloc, which it
    # includes), compiled as C, as Boost's own build does.
    find "$src/$top/libs/$lib/src" -name '*.cpp' -o -name alloc_lib.c | sort > "$src/$lib.sources"
    xargs -P "$jobs" -I {} sh -c '
      o='"$src/obj/$lib"'/$(echo "$1" | md5sum | cut -c 1-16).o
      case $1 in *.c) std="-x c -std=gnu11" ;; *) std=-std=c++17 ;; esac
      '"$cxx"' $std -O2 -fPIC -DNDEBUG '"$defs"' \
        -DBOOST_ALL_NO_LIB -isystem '"$dir"'/usr/include -c "$1" -o "$o"' sh {} < "$src/$lib.sources" || return 1
    rm -f "$libdir/libboost_$lib".*
    ar rcs "$libdir/libboost_$lib.a" "$src/obj/$lib"/*.o || return 1
    "$cxx" -shared -Wl,-soname,"libboost_$lib.so.$full" -o "$libdir/libboost_$lib.so.$full" "$src/obj/$lib"/*.o ||
      return 1
    ln -s "libboost_$lib.so.$full" "$libdir/libboost_$lib.so" || return 1
  done
  rm -rf "$src"
}

# The folder of Boost's CMake package in PREFIX (Boost-1.92.0).
boost_cmake_dir() { ls -d "$1"/usr/lib/x86_64-linux-gnu/cmake/Boost-* | head -n 1; }

# build VERSION [TARGET...]: configures $builds/VERSION with $cxx, -Werror, the
# test programs compiled as one translation unit each, against the Boost of
# the cache (CMAKE_PREFIX_PATH and Boost_DIR; the system's Boost is not seen:
# the configuration fails unless the Boost found is VERSION's), and builds
# TARGETs (default: all). DD_BOOST_EXAMPLES / DD_BOOST_BENCHMARKS (ON/OFF,
# default ON): also the examples / the benchmarks.
build() {
  # (|| return: under --all this runs as an if's condition, where set -e does not apply)
  local v; v=$(resolve_version "$1") || return 1; shift
  local p; p=$(prefix "$v") || return 1
  local cmake_dir; cmake_dir=$(boost_cmake_dir "$p") || return 1
  local dir=$builds/$v
  cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DDIGITAL_DELIVERY_WERROR=ON \
    -DDIGITAL_DELIVERY_BUILD_TESTS=ON -DDIGITAL_DELIVERY_UNITY_TESTS=ON \
    -DDIGITAL_DELIVERY_BUILD_EXAMPLES="${DD_BOOST_EXAMPLES:-ON}" \
    -DDIGITAL_DELIVERY_BUILD_BENCHMARKS="${DD_BOOST_BENCHMARKS:-ON}" \
    -DCMAKE_PREFIX_PATH="$p/usr" -DBoost_DIR="$cmake_dir" >/dev/null || return 1
  local found; found=$(sed -n 's/^Boost_DIR:[A-Z]*=//p' "$dir/CMakeCache.txt")
  if [ "$found" != "$cmake_dir" ]; then
    echo "configured with the Boost of $found, not $cmake_dir" >&2; return 1
  fi
  local targets=()
  local t; for t in "$@"; do targets+=(--target "$t"); done
  cmake --build "$dir" -j "$jobs" "${targets[@]}"
}

# test VERSION [REGEX]: the unit tests, then the tests matching REGEX (default
# ^odr_: the programs that include every public header, construct the default
# transport and make a call through testing::fake_transport).
# DD_BOOST_INTEGRATION=ON: then the integration tests too (--all sets it).
run_tests() {
  local v; v=$(resolve_version "$1") || return 1
  local dir=$builds/$v
  (cd "$dir" && ctest -j "$jobs" -L unit --output-on-failure && ctest -R "${2:-^odr_}" --output-on-failure &&
   if [ "${DD_BOOST_INTEGRATION:-OFF}" = ON ]; then ctest -j "$jobs" -L integration --output-on-failure; fi)
}

case ${1:-} in
  versions) apt_update; echo "1.83 $(newest_version)" ;;
  prefix) prefix "${2:?VERSION}" ;;
  build) build "${2:?VERSION}" "${@:3}" ;;
  test) run_tests "${2:?VERSION}" "${3:-}" ;;
  --all)
    export DD_BOOST_INTEGRATION=ON
    failed=0
    for v in 1.83 newest; do
      if build "$v" && run_tests "$v"; then echo "Boost $v: passed"; else echo "Boost $v: FAILED"; failed=1; fi
    done
    exit $failed ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
esac
