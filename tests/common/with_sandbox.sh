#!/usr/bin/env bash
# Runs a command against a fresh digital-delivery-sandbox on 127.0.0.1 (free port).
#   with_sandbox.sh SANDBOX_EXE [sandbox flags...] -- COMMAND [args...]
# In COMMAND's arguments, @BASE_URL@ and @API_KEY@ are replaced; the
# environment gets DIGITAL_DELIVERY_BASE_URL and DIGITAL_DELIVERY_API_KEY too.
set -euo pipefail
sandbox=$1; shift
flags=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do flags+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
key=sandbox-key
out=$(mktemp)
"$sandbox" --host 127.0.0.1 --port 0 --api-key "$key" "${flags[@]}" >"$out" 2>"${SANDBOX_LOG:-/dev/null}" &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -f "$out"' EXIT
for _ in $(seq 1 150); do
  grep -q '^listening on ' "$out" && break
  kill -0 $pid 2>/dev/null || { echo "sandbox exited early" >&2; exit 1; }
  sleep 0.1
done
origin=$(sed -n 's/^listening on //p' "$out" | head -n1)
[ -n "$origin" ] || { echo "sandbox did not start" >&2; exit 1; }
base="$origin/api/v1/external"
args=()
for a in "$@"; do a=${a//@BASE_URL@/$base}; a=${a//@API_KEY@/$key}; args+=("$a"); done
DIGITAL_DELIVERY_BASE_URL=$base DIGITAL_DELIVERY_API_KEY=$key "${args[@]}"
