#!/usr/bin/env bash
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# The main job (README.md): the typical flow of examples/typical_flow.cpp.
#  - with DIGITAL_DELIVERY_BASE_URL and DIGITAL_DELIVERY_API_KEY set: against that service;
#  - otherwise: against a digital-delivery-sandbox started here on 127.0.0.1 (free port).
#  - --record CASSETTE: the same, every exchange written to CASSETTE (docs/cassettes.md);
#    --replay CASSETTE: the flow served from CASSETTE, no sandbox, no service.
# Installs missing Debian packages, builds (Release) into _build-main/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash tests/install_deps.sh
build=${DD_MAIN_BUILD_DIR:-$root/_build-main}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=g++-12 \
  -DDIGITAL_DELIVERY_BUILD_TESTS=OFF -DDIGITAL_DELIVERY_BUILD_EXAMPLES=ON -DDIGITAL_DELIVERY_BUILD_SANDBOX=ON >/dev/null
cmake --build "$build" -j "$(nproc)" --target typical_flow digital-delivery-sandbox

for arg in "$@"; do
  if [ "$arg" = "--replay" ]; then
    echo "== replaying a cassette (no service)"
    exec "$build/examples/typical_flow" "$@"
  fi
done
if [ -n "${DIGITAL_DELIVERY_BASE_URL:-}" ] && [ -n "${DIGITAL_DELIVERY_API_KEY:-}" ]; then
  echo "== running against ${DIGITAL_DELIVERY_BASE_URL%%\?*}"
  exec "$build/examples/typical_flow" "$@"
fi
echo "== running against a local digital-delivery-sandbox"
exec tests/common/with_sandbox.sh "$build/tools/sandbox/digital-delivery-sandbox" --watermark-delay-ms 2000 -- \
  "$build/examples/typical_flow" "$@"
