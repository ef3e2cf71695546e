#!/usr/bin/env bash
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# ddctl upload benchmark (issue 27): `ddctl assets upload` of a 2 GiB file
# against `curl -T` of the same file to the same storage, the sandbox's
# (digital-delivery-sandbox on 127.0.0.1, its files in a temporary directory).
#   ddctl    the whole command: POST /assets, the streamed PUT to the presigned
#            URL, GET /assets/{id}; progress lines on stderr (not a terminal)
#   curl -T  the PUT alone, to a presigned URL the sandbox issued for an asset
#            created beforehand (not measured), with the handle's headers
# After one unmeasured upload, each runs REPS times (default 3), alternating
# which goes first, under /usr/bin/time -v: wall
# time, CPU time (user + system) and peak RSS of the client process. The file
# is sparse (/tmp); the sandbox writes every byte to its data directory, so
# both sides pay the same storage cost.
# Usage: [REPS=N] benchmarks/cli/run.sh BUILD_DIR   (a CMake build with the targets ddctl and digital-delivery-sandbox)
set -euo pipefail
build="$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)"
reps="${REPS:-3}"
ddctl="$build/tools/ddctl/ddctl"
sandbox="$build/tools/sandbox/digital-delivery-sandbox"
size=2147483648

dir="$(mktemp -d /tmp/ddctl-bench-XXXXXX)"
sb_pid=""
cleanup() { [[ -n "$sb_pid" ]] && kill "$sb_pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
truncate -s "$size" "$dir/body.bin"
mkdir -p "$dir/data" "$dir/config/ddctl"
# The sandbox runs without a rate limit: so does ddctl's client-side limiter
# (a profile of its config file), or its waits would count in the uploads' time.
printf '[default]\nrate_limit_points = 1000000\nrate_limit_store = in-process\n' > "$dir/config/ddctl/config"
"$sandbox" --port 0 --no-rate-limit --seed-orders 1 --data-dir "$dir/data" --quota-storage-bytes 1099511627776 \
    > "$dir/sandbox.out" 2> /dev/null &
sb_pid=$!
for _ in $(seq 200); do grep -q listening "$dir/sandbox.out" && break; sleep 0.05; done
origin=$(sed -n 's/^listening on //p' "$dir/sandbox.out")
export DIGITAL_DELIVERY_BASE_URL="$origin/api/v1/external" DIGITAL_DELIVERY_API_KEY=sandbox-key XDG_CONFIG_HOME="$dir/config"

measure() {  # command... -> "wall_s cpu_s rss_kib"
    /usr/bin/time -v -o "$dir/time.txt" "$@" > "$dir/out.txt" 2> "$dir/err.txt" || { cat "$dir/err.txt" >&2; return 1; }
    awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); w = (n == 3) ? t[1]*3600 + t[2]*60 + t[3] : t[1]*60 + t[2]}
                /User time|System time/ {cpu += $2}
                /Maximum resident set size/ {rss = $2}
                END {printf "%.2f %.2f %d\n", w, cpu, rss}' "$dir/time.txt"
}

run_ddctl() {
    measure "$ddctl" assets upload "$dir/body.bin" --output json
    "$ddctl" assets delete "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$dir/out.txt")" 2>/dev/null
}
run_curl() {
    "$ddctl" assets create --type internal --filename body.bin --byte-size "$size" --output json > "$dir/handle.json"
    mapfile -t args < <(python3 - "$dir/handle.json" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
for name, value in h["upload"]["headers"].items():
    print("-H"); print("%s: %s" % (name, value))
print(h["upload"]["url"])
print(h["asset"]["id"])
PY
)
    local id="${args[-1]}"; unset 'args[-1]'
    measure curl -sS -f -o /dev/null -X PUT -T "$dir/body.bin" "${args[@]}"
    "$ddctl" assets delete "$id" 2>/dev/null
}

# One unmeasured upload first: the first 2 GiB into a fresh sandbox data
# directory is several times slower whoever sends it.
run_curl > /dev/null
declare -A results
for ((i = 0; i < reps; ++i)); do
    if ((i % 2 == 0)); then results[ddctl]+="$(run_ddctl)"$'\n'; results[curl]+="$(run_curl)"$'\n'
    else results[curl]+="$(run_curl)"$'\n'; results[ddctl]+="$(run_ddctl)"$'\n'; fi
done

echo "2 GiB upload to the sandbox's storage (loopback, http), $reps runs each, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| client | wall s (median) | MB/s (median) | wall s (all runs) | CPU s user+sys (median) | peak RSS (max) |"
echo "|---|---|---|---|---|---|"
for name in "ddctl assets upload" "curl -T"; do
    key=ddctl; [[ "$name" == "curl -T" ]] && key=curl
    python3 - "$name" "${results[$key]}" "$size" <<'PY'
import statistics, sys
rows = [l.split() for l in sys.argv[2].strip().splitlines()]
wall = [float(r[0]) for r in rows]; cpu = [float(r[1]) for r in rows]; rss = max(int(r[2]) for r in rows)
w = statistics.median(wall)
print("| %s | %.2f | %.0f | %s | %.2f | %.1f MiB |" % (sys.argv[1], w, int(sys.argv[3]) / 1e6 / w,
      " / ".join("%.2f" % x for x in wall), statistics.median(cpu), rss / 1024))
PY
done
