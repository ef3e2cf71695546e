# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# What the sync benchmarks share (sourced by paced.sh and resync.sh): a sandbox
# on 127.0.0.1 with its files in a temporary directory, a store of its own
# with a fresh key, the store's points counted by the sandbox
# (GET /sandbox/usage), and /usr/bin/time -v figures of a command.
# Needs: $build (a CMake build dir with ddctl and digital-delivery-sandbox), $dir (a scratch dir).
ddctl="$build/tools/ddctl/ddctl"
sandbox="$build/tools/sandbox/digital-delivery-sandbox"
sb_pid=""
sync_bench_cleanup() { [[ -n "$sb_pid" ]] && kill "$sb_pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$dir"; }

# sandbox_start [FLAGS...]: the default store's key is bench-admin-key; sets $origin.
sandbox_start() {
    mkdir -p "$dir/data"
    "$sandbox" --port 0 --seed-orders 1 --no-rate-limit --api-key bench-admin-key --data-dir "$dir/data" "$@" \
        > "$dir/sandbox.out" 2> /dev/null &
    sb_pid=$!
    for _ in $(seq 200); do grep -q listening "$dir/sandbox.out" && break; sleep 0.05; done
    origin=$(sed -n 's/^listening on //p' "$dir/sandbox.out")
    [[ -n "$origin" ]] || { echo "the sandbox did not start" >&2; exit 1; }
}

# new_store KEY FLAGS...: a store with the store flags FLAGS and the key KEY (fresh:
# its bucket, in the sandbox and in ddctl's shared-memory store, starts full).
new_store() {
    local key=$1; shift
    local opts
    opts=$(python3 -c 'import json,sys; print(json.dumps({"options": sys.argv[2:], "api_key": sys.argv[1]}))' "$key" "$@")
    curl -sS -f -X POST -H 'X-Auth-Token: bench-admin-key' -H 'Content-Type: application/json' \
        --data "$opts" "$origin/sandbox/stores" > /dev/null
}

# points KEY: the points the store's API requests have cost so far.
points() {
    curl -sS -f -H "X-Auth-Token: $1" "$origin/sandbox/usage" | python3 -c 'import json,sys; print(json.load(sys.stdin)["points"])'
}

# measure OUT ERR command...: "wall_s cpu_s rss_kib" of the command (its stdout in OUT, stderr in ERR).
measure() {
    local out=$1 err=$2; shift 2
    /usr/bin/time -v -o "$dir/time.txt" "$@" > "$out" 2> "$err" || true
    awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); w = (n == 3) ? t[1]*3600 + t[2]*60 + t[3] : t[1]*60 + t[2]}
                /User time|System time/ {cpu += $2}
                /Maximum resident set size/ {rss = $2}
                /Exit status/ {st = $2}
                END {printf "%.2f %.2f %d %d\n", w, cpu, rss, st}' "$dir/time.txt"
}
