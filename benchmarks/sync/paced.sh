#!/usr/bin/env bash
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# Issue 45, benchmark a: `ddctl assets sync` of 200 new files of 1-5 MiB and 3 of
# 200 MiB (random bytes, sizes seeded) into a sandbox store whose rate limit is
# 40 points per 15 s (--rate-limit-window-seconds 15), ddctl told the same
# (--rate-limit-window 15), a fresh key (a full bucket on both sides), an empty
# manifest (every file hashed: hashing included). P = the points of every API
# request of the run, counted by the sandbox (GET /sandbox/usage); the pace's
# floor is (P - 40) / (40 / 15 s) (the first 40 points are in the bucket), the
# bound 1.05 x that. Beside it, with the same settings and a fresh key, the
# shell loop users write today: `for f in DIR/*; do ddctl assets upload "$f"; done`.
# One run of each (about 4 minutes each); the files take 1.2 GB in a temporary directory.
# Usage: [CLIENTS="sync loop"] benchmarks/sync/paced.sh BUILD_DIR
#   (a CMake build with the targets ddctl and digital-delivery-sandbox; CLIENTS: which of the two run)
set -euo pipefail
build="$(cd "${1:?usage: paced.sh BUILD_DIR}" && pwd)"
dir="$(mktemp -d /tmp/ddctl-sync-paced-XXXXXX)"
source "$(dirname "$0")/common.sh"
trap sync_bench_cleanup EXIT
window=15

python3 - "$dir/tree" <<'PY'
import os, random, sys
root = sys.argv[1]; os.makedirs(root)
rng = random.Random(45)
sizes = [rng.randint(1 << 20, 5 << 20) for _ in range(200)] + [200 << 20] * 3
for i, n in enumerate(sizes):
    with open(os.path.join(root, "file-%03d.bin" % i), "wb") as f:
        left = n
        while left:
            chunk = min(left, 8 << 20); f.write(os.urandom(chunk)); left -= chunk
PY
files=$(find "$dir/tree" -type f | wc -l)
bytes=$(du -sb "$dir/tree" | cut -f1)
sandbox_start --quota-storage-bytes 1099511627776

export DIGITAL_DELIVERY_BASE_URL="$origin/api/v1/external" XDG_CONFIG_HOME="$dir/config"
mkdir -p "$dir/config"
declare -A row
run() {  # name key command...
    local name=$1 key=$2; shift 2
    new_store "$key" --rate-limit-window-seconds "$window" --quota-storage-bytes 1099511627776
    local r p
    r=$(DIGITAL_DELIVERY_API_KEY="$key" XDG_STATE_HOME="$dir/state-$key" measure "$dir/$name.out" "$dir/$name.err" "$@")
    p=$(points "$key")
    row[$name]="$r $p"
}
runs="${CLIENTS:-sync loop}"
[[ " $runs " == *" sync "* ]] && run sync "sync-$$-$RANDOM" "$ddctl" --rate-limit-window "$window" assets sync "$dir/tree" --no-progress -o json
[[ " $runs " == *" loop "* ]] && run loop "loop-$$-$RANDOM" bash -c 'for f in "$1"/*; do "$2" --rate-limit-window "$3" assets upload "$f" --no-progress -o json || exit; done' \
    loop "$dir/tree" "$ddctl" "$window"

echo "$files new files, $((bytes / 1048576)) MiB, sandbox store at 40 points per ${window} s, ddctl --rate-limit-window $window;" \
     "$(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| client | exit | wall s | P (sandbox) | floor (P-40)/(40/${window} s) | wall / floor | bound 1.05 x floor met | CPU s user+sys | peak RSS |"
echo "|---|---|---|---|---|---|---|---|---|"
for name in $runs; do
    label="\`ddctl assets sync DIR\`"; [[ $name == loop ]] && label="shell loop of \`ddctl assets upload\`"
    python3 - "$label" $window ${row[$name]} <<'PY'
import sys
label, window, wall, cpu, rss, status, p = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), sys.argv[6], int(sys.argv[7])
floor = max(0.0, (p - 40) / (40 / window))
print("| %s | %s | %.1f | %d | %.1f | %.3f | %s | %.1f | %.1f MiB |" % (label, status, wall, p, floor, wall / floor if floor else 0,
      "yes" if wall <= 1.05 * floor else "no", cpu, rss / 1024))
PY
done
