#!/usr/bin/env bash
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# Installs what building, testing and running the examples need on Debian 12
# (root, or sudo). Only missing packages are installed.
set -euo pipefail
pkgs=(
  g++-12 cmake ninja-build meson pkg-config xz-utils
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev libssl-dev openssl ca-certificates
  libgtest-dev libgmock-dev googletest
  clang-16 libclang-rt-16-dev lld
  nginx-light libcurl4-openssl-dev curl libbenchmark-dev liburing-dev
  tinyproxy redis-server libcli11-dev libjq-dev zsh fish stunnel4 libsqlite3-dev
  doxygen
  chromium
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# promtool, Prometheus's own checker of the metrics exposition (test
# metrics_promtool): extracted from Debian's prometheus package into the cache,
# not installed (the package would install and start a Prometheus server).
promtool_dir=${XDG_CACHE_HOME:-$HOME/.cache}/digital_delivery/promtool
if [ ! -x "$promtool_dir/usr/bin/promtool" ]; then
  echo "fetching promtool (Debian's prometheus package) into $promtool_dir"
  tmp=$(mktemp -d)
  chmod 755 "$tmp"  # apt-get download runs as _apt where it can
  if ! (cd "$tmp" && apt-get download -qq prometheus 2>/dev/null); then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    (cd "$tmp" && apt-get download -qq prometheus 2>/dev/null)
  fi
  mkdir -p "$promtool_dir"
  dpkg-deb --fsys-tarfile "$tmp"/prometheus_*.deb | tar -x -C "$promtool_dir" ./usr/bin/promtool
  rm -rf "$tmp"
fi

# The OTLP schema check of the trace tests (tests/trace/otlp_schema): node and
# npm (any Debian or NodeSource build), then the schema pinned in its
# package-lock.json, reinstalled only when the lockfile changed.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
# npm_ci DIR: the packages pinned in DIR/package-lock.json (`npm ci`: exactly
# the lockfile, nothing resolved anew), reinstalled only when the lockfile changed.
tests_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
npm_ci() {
  if ! cmp -s "$1/package-lock.json" "$1/node_modules/.package-lock.json.installed"; then
    (cd "$1" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    cp "$1/package-lock.json" "$1/node_modules/.package-lock.json.installed"
  fi
}
npm_ci "$tests_dir/trace/otlp_schema"
# The sandbox's pages in a browser (tests/sandbox/browser): Debian's chromium
# (above), driven by puppeteer-core and checked by axe-core.
npm_ci "$tests_dir/sandbox/browser"
# The packaging checks (tests/packaging.sh, ctest packaging_checks): ajv-cli.
npm_ci "$tests_dir/packaging"
