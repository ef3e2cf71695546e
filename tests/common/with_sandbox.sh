#!/usr/bin/env bash
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# Runs a command against a fresh digital-delivery-sandbox on 127.0.0.1 (a port
# the sandbox binds itself: --port 0).
#   with_sandbox.sh SANDBOX_EXE [sandbox flags...] -- COMMAND [args...]
# In COMMAND's arguments, @BASE_URL@ and @API_KEY@ are replaced; the
# environment gets DIGITAL_DELIVERY_BASE_URL and DIGITAL_DELIVERY_API_KEY too.
set -euo pipefail
sandbox=$1; shift
flags=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do flags+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
key=sandbox-key
# The sandbox's first line on stdout is "listening on http://HOST:PORT": read it
# from a pipe (a blocking read with a time limit, no polling).
fifo=$(mktemp -u)
mkfifo "$fifo"
"$sandbox" --host 127.0.0.1 --port 0 --api-key "$key" "${flags[@]}" >"$fifo" 2>"${SANDBOX_LOG:-/dev/null}" &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true' EXIT
exec 3<"$fifo"
rm -f "$fifo"
line=""
IFS= read -r -t 30 line <&3 || true
origin=${line#listening on }
if [ -z "$line" ] || [ "$origin" = "$line" ]; then
  echo "sandbox did not start (first line: '$line')" >&2
  exit 1
fi
base="$origin/api/v1/external"
args=()
for a in "$@"; do a=${a//@BASE_URL@/$base}; a=${a//@API_KEY@/$key}; args+=("$a"); done
DIGITAL_DELIVERY_BASE_URL=$base DIGITAL_DELIVERY_API_KEY=$key "${args[@]}"
