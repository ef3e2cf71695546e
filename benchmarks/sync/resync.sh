#!/usr/bin/env bash
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# Issue 45, benchmark b: a no-change re-sync of FILES (default 100000) small files
# (1 B to 4 KiB, 100 folders) with a warm manifest. The store is filled once by
# `ddctl assets sync` (sandbox store without rate limit, asset-count quota
# 200000: the fill's time is printed too; ddctl's state file, the upload
# journal with the manifest, on tmpfs (/dev/shm), so that the fill, a set-up
# step, does not wait for the journal's fsyncs of 100,000 uploads: the measured
# re-sync only reads it, from the page cache wherever it is); then, page cache warm, runs
# interleaved REPS times (default 5), each under /usr/bin/time -v:
#   find      `find DIR -type f -printf '%s %T@\n'`: one stat per file, the floor
#   local     the local side of the re-sync as one process (scan_bench.cpp): the
#             manifest read from the state file, the scan, the compare
#   rclone    `rclone sync --dry-run DIR COPY` (Debian's rclone; COPY = `cp -a DIR`:
#             it lists two trees and compares size and mtime), for reference
#   ddctl     `ddctl assets check DIR`: the whole command, the remote listing
#             (GET /assets, 250 a page) included; its points reported apart
# Usage: [FILES=N] [REPS=N] [FILL_BUILD=DIR] [KEEP=1] benchmarks/sync/resync.sh BUILD_DIR
#   FILL_BUILD: the build whose sandbox and ddctl do the set-up (default BUILD_DIR), e.g. a
#   debug build while BUILD_DIR's Release build is still being made (waited for);
#   (a CMake build with -DDIGITAL_DELIVERY_BUILD_BENCHMARKS=ON and the targets ddctl,
#   digital-delivery-sandbox and digital_delivery_sync_scan_bench)
set -euo pipefail
build="$(cd "${1:?usage: resync.sh BUILD_DIR}" && pwd)"
files="${FILES:-100000}"
reps="${REPS:-5}"
dir="$(mktemp -d /tmp/ddctl-sync-resync-XXXXXX)"
source "$(dirname "$0")/common.sh"
fill_build="$(cd "${FILL_BUILD:-$build}" && pwd)"
measured_ddctl="$ddctl"
ddctl="$fill_build/tools/ddctl/ddctl" sandbox="$fill_build/tools/sandbox/digital-delivery-sandbox"
state="$(mktemp -d /dev/shm/ddctl-sync-state-XXXXXX)"
# KEEP=1: the tree, its copy and the state file are kept (their paths printed at the end) to
# measure the local side again later (scan_bench STATE_DB DIR against find) without a new fill.
if [[ -n "${KEEP:-}" ]]; then
    trap 'dir_saved=$dir; dir=/nonexistent-resync-kept; sync_bench_cleanup; echo "kept: tree $dir_saved/tree, copy $dir_saved/copy, state ${state_db:-none}" >&2' EXIT
else
    trap 'sync_bench_cleanup; rm -rf "$state"' EXIT
fi
scan_bench="$build/benchmarks/sync/digital_delivery_sync_scan_bench"

python3 - "$dir/tree" "$files" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(4545)
for d in range(100):
    os.makedirs(os.path.join(root, "folder-%02d" % d))
for i in range(n):
    with open(os.path.join(root, "folder-%02d" % (i % 100), "file-%06d.bin" % i), "wb") as f:
        f.write(os.urandom(rng.randint(1, 4096)))
PY
sandbox_start --quota-storage-bytes 1099511627776
key="resync-$$-$RANDOM"
new_store "$key" --no-rate-limit --quota-asset-count 200000 --quota-storage-bytes 1099511627776
export DIGITAL_DELIVERY_BASE_URL="$origin/api/v1/external" DIGITAL_DELIVERY_API_KEY="$key" \
       XDG_STATE_HOME="$state" XDG_CONFIG_HOME="$dir/config"
mkdir -p "$dir/config"
limits=(--rate-limit-points 100000000 --rate-limit-store in-process)
fill=$(measure "$dir/fill.out" "$dir/fill.err" "$ddctl" "${limits[@]}" assets sync "$dir/tree" --transfers 32 --no-progress -o json)
fill_points=$(points "$key")
state_db=$(ls "$state"/ddctl/uploads-*.db)
cp -a "$dir/tree" "$dir/copy"
ddctl="$measured_ddctl"
for _ in $(seq 3600); do [[ -x "$ddctl" && -x "$scan_bench" ]] && break; sleep 1; done

declare -A res
one() {  # name command...
    local name=$1; shift
    res[$name]+="$(measure "$dir/$name.out" "$dir/$name.err" "$@")"$'\n'
}
run_all() {
    one find find "$dir/tree" -type f -printf '%s %T@\n'
    one local "$scan_bench" "$state_db" "$dir/tree"
    one rclone rclone --config /dev/null sync --dry-run "$dir/tree" "$dir/copy"
    local before; before=$(points "$key")
    one ddctl "$ddctl" "${limits[@]}" assets check "$dir/tree" -o json
    check_points=$(( $(points "$key") - before ))
}
run_all  # warm-up: page cache, the state file's pages
unset res; declare -A res
for ((i = 0; i < reps; ++i)); do run_all; done
grep -q '"unchanged":'"$files" "$dir/ddctl.out" || { echo "ddctl check did not find every file unchanged:" >&2; tail -c 600 "$dir/ddctl.out" >&2; }
local_line=$(cat "$dir/local.out")

echo "$files files, $(du -sb "$dir/tree" | cut -f1) bytes; $reps interleaved runs after a warm-up; $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "fill: \`ddctl assets sync\` of the $files files into an empty store without rate limit: $(echo "$fill" | awk '{printf "%.1f s wall, %.1f s CPU, %.1f MiB peak RSS, exit %d", $1, $2, $3/1024, $4}'), $fill_points points counted by the sandbox"
echo "the local side's steps (last run, wall/CPU s): $local_line"
echo "\`ddctl assets check\`'s remote listing: $check_points points (GET /assets, 250 a page), counted by the sandbox"
echo
echo "| command | wall s median (all runs) | CPU s user+sys median | peak RSS max | wall / find | CPU / find |"
echo "|---|---|---|---|---|---|"
for name in find local rclone ddctl; do
    case $name in
        find) label="\`find DIR -type f -printf '%s %T@\\n'\` (floor)";;
        local) label="the local side of the re-sync (manifest read, scan, compare)";;
        rclone) label="\`rclone sync --dry-run DIR COPY\`";;
        ddctl) label="\`ddctl assets check DIR\` (remote listing included)";;
    esac
    python3 - "$label" "${res[$name]}" "${res[find]}" <<'PY'
import statistics, sys
def rows(t): return [l.split() for l in t.strip().splitlines()]
r, f = rows(sys.argv[2]), rows(sys.argv[3])
wall = [float(x[0]) for x in r]; cpu = [float(x[1]) for x in r]; rss = max(int(x[2]) for x in r)
fw = statistics.median(float(x[0]) for x in f); fc = statistics.median(float(x[1]) for x in f)
w, c = statistics.median(wall), statistics.median(cpu)
print("| %s | %.3f (%s) | %.3f | %.1f MiB | %.2f | %.2f |" % (sys.argv[1], w, " / ".join("%.3f" % x for x in wall), c, rss / 1024,
      w / fw if fw else 0, c / fc if fc else 0))
PY
done
