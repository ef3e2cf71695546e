#!/usr/bin/env bash
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# One API key, four hosts, faults on purpose (docs/performance.md, "One key,
# four hosts"). Not a test: a benchmark, run by hand, as root.
#
# Hosts are Linux network namespaces this script makes and removes: a bridge
# namespace holding two bridges (the API network 10.213.34.0/25 and the store
# network 10.213.34.128/25: one private /24 between them), and one namespace
# per host with a veth pair to the bridges: the sandbox (the API, its window
# compressed to 40 points per 2 s), Redis over TLS (certificates made here with
# openssl), for run (c) a replica and three sentinels, and 4 client hosts of 8
# worker processes each on one API key (2 busy processes of 10 request loops
# and 6 light ones of 1 loop per host). No namespace has a default route: the
# script checks every namespace's routes before anything is sent, and aborts
# otherwise. The root namespace's interfaces and routes are never touched.
#
# Runs (each on a fresh Redis key, after the buckets have refilled):
#   fleet:   (a) no fault; (b) Redis killed, restarted 10 s later (empty);
#            (d) client host 4's store link down for 10 s (its veth port on
#            the bridge: its packets to Redis are dropped, the API still
#            reachable); (c) Sentinel: the master killed, the sentinels
#            promote the replica (the old master comes back 10 s later).
#   latency: one process per client host at a light rate, 10 s per row: the
#            in-process bucket, Redis over TCP, over TLS, Redis unreachable
#            (its veth port down) and Redis killed, each 10 s.
#
# Usage: benchmarks/fleet/run.sh BUILD_DIR [fleet|latency|all] [OUT_DIR]
#   BUILD_DIR: a CMake build with -DDIGITAL_DELIVERY_BUILD_BENCHMARKS=ON where
#   the target digital_delivery_fleet_worker was built (it builds the sandbox).
#   OUT_DIR (default: a new /tmp/dd-fleet-XXXXXX): the workers' files and the
#   tables (summary.md); it is kept.
# Exit status: 0 done; 77 not run: not root or no network namespaces (a message
# says why; nothing was made); 2 usage or a missing program; 1 a failure (the
# message says where; everything made is removed).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-}"
what="${2:-all}"
if [[ -z "$build" || ! "$what" =~ ^(fleet|latency|all)$ ]]; then
    sed -n '/^# Usage/,/^#   tables/p' "$0" >&2
    exit 2
fi
worker="$build/benchmarks/fleet/digital_delivery_fleet_worker"
sandbox="$build/tools/sandbox/digital-delivery-sandbox"
for exe in "$worker" "$sandbox"; do
    [[ -x "$exe" ]] || { echo "missing $exe: cmake --build $build --target digital_delivery_fleet_worker" >&2; exit 2; }
done
for tool in ip redis-server redis-cli openssl python3; do
    command -v "$tool" >/dev/null || { echo "missing program: $tool" >&2; exit 2; }
done
if [[ "$(id -u)" != 0 ]]; then
    echo "benchmarks/fleet/run.sh needs root (it makes network namespaces with ip netns): not run" >&2
    exit 77
fi

# --- parameters ------------------------------------------------------------------
NET=10.213.34                  # the /24 of the benchmark
CAPACITY=40 WINDOW=2           # the sandbox's bucket and the clients' (points, seconds)
RETRY_MS=1000                  # store_retry_interval in the fleet runs (scaled to the 2 s window)
TIMEOUT_MS=500                 # command_timeout (the default)
RUN_SECONDS=34 FAULT_AT=10 FAULT_SECONDS=10
HOSTS=4 PROCS=8 BUSY=2 BUSY_LOOPS=10 THINK_MS=250
STAGGER=0.05                   # seconds between two workers' starts (32 at once on 2 cores: see performance.md)
LAT_THINK_MS=500               # latency run: about 2 requests/s per process
LAT_RETRY_MS=5000              # latency run: store_retry_interval (the default)

if ip -4 addr show | grep -q "inet $NET\." || ip -4 route show | grep -q "^$NET\."; then
    echo "$NET.0/24 is in use in this namespace: not run" >&2
    exit 77
fi
P="ddfl$$"                      # prefix of every namespace made here
out="${3:-}"
if [[ -z "$out" ]]; then out="$(mktemp -d /tmp/dd-fleet-XXXXXX)"; else mkdir -p "$out"; fi
tmp="$(mktemp -d /tmp/dd-fleet-tmp-XXXXXX)"
echo "$(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start, $(redis-server --version | cut -d' ' -f1-3)" >"$out/machine"
made_ns=()
pids=()

cleanup() {
    local rc=$?
    trap - EXIT INT TERM HUP PIPE
    for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
    for ns in "${made_ns[@]}"; do
        # Processes still in a namespace of ours (started here: nothing else runs there).
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
    done
    { wait; } 2>/dev/null || true
    for ns in "${made_ns[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
    cp "$tmp"/*.log "$out"/ 2>/dev/null || true
    rm -rf "$tmp"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
trap 'exit 141' PIPE

die() { echo "benchmarks/fleet/run.sh: $*" >&2; exit 1; }
now() { date +%s%N; }
in_ns() { local ns="$1"; shift; ip netns exec "$P-$ns" "$@"; }

# --- the hosts -----------------------------------------------------------------------
if ! ip netns add "$P-br" 2>/dev/null; then
    echo "cannot make network namespaces here (ip netns add failed): not run" >&2
    exit 77
fi
made_ns+=("$P-br")
ip -n "$P-br" link add api type bridge
ip -n "$P-br" link add store type bridge
ip -n "$P-br" link set lo up
ip -n "$P-br" link set api up
ip -n "$P-br" link set store up

# host NAME API_ADDR STORE_ADDR (either may be "-"): a namespace with eth0 on
# the API bridge and eth1 on the store bridge; their bridge ends are a-NAME and
# s-NAME in the bridge namespace.
host() {
    local name="$1" api="$2" store="$3"
    ip netns add "$P-$name"
    made_ns+=("$P-$name")
    ip -n "$P-$name" link set lo up
    if [[ "$api" != - ]]; then
        ip -n "$P-br" link add "a-$name" type veth peer name eth0 netns "$P-$name"
        ip -n "$P-br" link set "a-$name" master api up
        ip -n "$P-$name" addr add "$api/25" dev eth0
        ip -n "$P-$name" link set eth0 up
    fi
    if [[ "$store" != - ]]; then
        ip -n "$P-br" link add "s-$name" type veth peer name eth1 netns "$P-$name"
        ip -n "$P-br" link set "s-$name" master store up
        ip -n "$P-$name" addr add "$store/25" dev eth1
        ip -n "$P-$name" link set eth1 up
    fi
}
API_IP=$NET.10 REDIS_IP=$NET.130 REPLICA_IP=$NET.131 SENTINEL_IP=$NET.132
host api "$API_IP" -
host redis - "$REDIS_IP"
host replica - "$REPLICA_IP"
host sentinel - "$SENTINEL_IP"
for h in $(seq 1 $HOSTS); do host "c$h" "$NET.$((20 + h))" "$NET.$((140 + h))"; done

# No default route anywhere, and no route out of the /24.
for ns in "${made_ns[@]}"; do
    routes="$(ip -n "$ns" -4 route show; ip -n "$ns" -6 route show)"
    if grep -q '^default' <<<"$routes"; then die "namespace $ns has a default route: aborted"; fi
    while read -r dst _; do
        [[ -z "$dst" ]] && continue
        [[ "$dst" == "$NET".* || "$dst" == fe80::* ]] || die "namespace $ns routes to $dst: aborted"
    done <<<"$routes"
done
echo "hosts: ${made_ns[*]} (routes checked: none to outside $NET.0/24)" >&2

# --- certificates -------------------------------------------------------------------
(
    cd "$tmp"
    key="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
    echo "subjectAltName=IP:$REDIS_IP,IP:$REPLICA_IP,IP:$SENTINEL_IP" >server.ext
    openssl req -x509 $key -keyout ca.key -out ca.crt -days 2 -subj /CN=dd-fleet-ca
    openssl req $key -keyout server.key -out server.csr -subj /CN=dd-fleet-redis
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 2 -extfile server.ext
) >/dev/null 2>&1 || die "openssl failed"
TLS=(--tls-cert-file "$tmp/server.crt" --tls-key-file "$tmp/server.key" --tls-ca-cert-file "$tmp/ca.crt"
     --tls-auth-clients no --tls-replication yes)
cli() { local ns="$1" ip="$2" port="$3"; shift 3; in_ns "$ns" redis-cli --tls --cacert "$tmp/ca.crt" -h "$ip" -p "$port" "$@" 2>/dev/null; }

# --- servers ------------------------------------------------------------------------
declare -A pid_of
# redis NAME IP [args...]: redis-server in host NAME (TLS on 6380, plus what args add).
redis() {
    local name="$1" ip="$2"; shift 2
    mkdir -p "$tmp/$name"
    ip netns exec "$P-$name" redis-server --bind "$ip" --protected-mode no --port 0 --tls-port 6380 "${TLS[@]}" --save "" --appendonly no \
        --dir "$tmp/$name" --logfile "$tmp/$name.log" "$@" &
    pid_of[$name]=$!
    pids+=("$!")
    for _ in $(seq 100); do
        [[ "$(cli "$name" "$ip" 6380 ping)" == PONG ]] && return 0
        sleep 0.1
    done
    die "redis in $name did not start (see $tmp/$name.log)"
}

KEY="$(openssl rand -hex 16)"
ip netns exec "$P-api" "$sandbox" --host "$API_IP" --port 8080 --api-key "$KEY" --rate-limit-points $CAPACITY \
    --rate-limit-window-seconds $WINDOW --seed-orders 20 --log-file "$out/sandbox.log" >"$tmp/sandbox.out" &
pids+=("$!")
for _ in $(seq 100); do grep -q '^listening on' "$tmp/sandbox.out" 2>/dev/null && break; sleep 0.1; done
grep -q '^listening on' "$tmp/sandbox.out" || die "the sandbox did not start"
URL="http://$API_IP:8080/api/v1/external"
read -r ASSET ORDER < <(in_ns c1 env DD_BENCH_API_KEY="$KEY" "$worker" setup "$URL") || die "setup failed"
[[ -n "${ORDER:-}" ]] || die "setup failed"
export DD_BENCH_API_KEY="$KEY"

cat >"$out/params" <<EOF
capacity $CAPACITY
window $WINDOW
retry_ms $RETRY_MS
lat_retry_ms $LAT_RETRY_MS
timeout_ms $TIMEOUT_MS
b_points $((CAPACITY * RETRY_MS / WINDOW / 1000))
EOF

# event RUN NAME: the time of NAME in the run's events file.
event() { echo "$2 $(now)" >>"$out/$1.events"; }

# workers RUN SECONDS LOOPS_BUSY LOOPS_LIGHT PROCS THINK STORE_ARGS...: the run's
# processes, in the background (their pids in `running`).
running=()
workers() {
    local run="$1" seconds="$2" busy_loops="$3" light_loops="$4" procs="$5" think="$6"; shift 6
    running=()
    for h in $(seq 1 $HOSTS); do
        for p in $(seq 1 "$procs"); do
            local loops=$light_loops
            ((p <= BUSY)) && loops=$busy_loops
            ip netns exec "$P-c$h" "$worker" run "$URL" "$ASSET" "$ORDER" "$out/$run.c$h.p$p" seconds="$seconds" loops="$loops" \
                think_ms="$think" capacity=$CAPACITY window=$WINDOW timeout_ms=$TIMEOUT_MS "$@" \
                2>>"$out/$run.stderr" &
            running+=("$!")
            pids+=("$!")
            sleep "$STAGGER"
        done
    done
}
finish() {
    local rc=0
    for pid in "${running[@]}"; do wait "$pid" || rc=1; done
    ((rc == 0)) || die "a worker failed (see $out/$1.stderr)"
}
# Both buckets (the server's, the fresh Redis key's) full before a run.
refilled() { sleep "$(python3 -c "print($WINDOW * 1.5)")"; }

REDIS_ARGS=(store=redis host=$REDIS_IP port=6380 tls=1 ca=$tmp/ca.crt retry_ms=$RETRY_MS)

fleet_run() {
    local run="$1" store_args=("${@:2}")
    refilled
    : >"$out/$run.events"
    event "$run" start
    workers "$run" $RUN_SECONDS $BUSY_LOOPS 1 $PROCS $THINK_MS "${store_args[@]}" prefix="dd-fleet-$run-$$:"
    sleep $FAULT_AT
    case "$run" in
    b)
        event b fault_start
        kill -9 "${pid_of[redis]}"
        sleep $FAULT_SECONDS
        redis redis "$REDIS_IP"
        event b fault_end
        ;;
    d)
        event d fault_start
        ip -n "$P-br" link set s-c4 down
        sleep $FAULT_SECONDS
        ip -n "$P-br" link set s-c4 up
        event d fault_end
        ;;
    c)
        event c fault_start
        kill -9 "${pid_of[redis]}"
        local t0; t0=$(date +%s)
        while [[ "$(cli sentinel "$SENTINEL_IP" 26379 sentinel get-master-addr-by-name fleet | head -1)" != "$REPLICA_IP" ]]; do
            (( $(date +%s) - t0 < 30 )) || die "no failover within 30 s"
            sleep 0.05
        done
        event c fault_end   # the sentinels name the new master
        local left=$((FAULT_SECONDS - ($(date +%s) - t0)))
        ((left > 0)) && sleep "$left"
        redis redis "$REDIS_IP"   # the old master back (the sentinels make it a replica)
        event c old_master_back
        ;;
    esac
    finish "$run"
    event "$run" end
    echo "run $run done" >&2
}

if [[ "$what" != latency ]]; then
    redis redis "$REDIS_IP"
    fleet_run a "${REDIS_ARGS[@]}"
    fleet_run b "${REDIS_ARGS[@]}"
    fleet_run d "${REDIS_ARGS[@]}"
    # Sentinel: a replica of the master and three sentinels, all over TLS.
    redis replica "$REPLICA_IP" --replicaof "$REDIS_IP" 6380
    for s in 0 1 2; do
        port=$((26379 + s))
        cat >"$tmp/sentinel-$s.conf" <<EOF
bind $SENTINEL_IP
protected-mode no
port 0
tls-port $port
tls-cert-file $tmp/server.crt
tls-key-file $tmp/server.key
tls-ca-cert-file $tmp/ca.crt
tls-auth-clients no
tls-replication yes
dir $tmp
logfile $tmp/sentinel-$s.log
sentinel monitor fleet $REDIS_IP 6380 2
sentinel down-after-milliseconds fleet 1000
sentinel failover-timeout fleet 5000
EOF
        ip netns exec "$P-sentinel" redis-server "$tmp/sentinel-$s.conf" --sentinel &
        pids+=("$!")
    done
    # Ready: each sentinel knows the replica and the two other sentinels.
    t0=$(date +%s)
    for s in 0 1 2; do
        port=$((26379 + s))
        until [[ "$(cli sentinel "$SENTINEL_IP" $port sentinel master fleet | paste -sd' ' | grep -o 'num-slaves 1\|num-other-sentinels 2' | wc -l)" == 2 ]]; do
            (( $(date +%s) - t0 < 60 )) || die "the sentinels did not see the replica and each other within 60 s"
            sleep 0.2
        done
    done
    SENTINELS="$SENTINEL_IP:26379,$SENTINEL_IP:26380,$SENTINEL_IP:26381"
    fleet_run c store=sentinel sentinels=$SENTINELS master=fleet tls=1 ca=$tmp/ca.crt retry_ms=$RETRY_MS
    for s in "${pid_of[replica]}"; do kill -9 "$s"; done
fi

if [[ "$what" != fleet ]]; then
    # Latency: one process per host; the Redis master on plain TCP (6379) too.
    if [[ -n "${pid_of[redis]:-}" ]]; then kill -9 "${pid_of[redis]}"; fi
    redis redis "$REDIS_IP" --port 6379
    latency_row() {  # latency_row RUN FAULT STORE_ARGS...
        local run="$1" fault="$2"; shift 2
        refilled
        : >"$out/$run.events"
        event "$run" start
        local seconds=10
        [[ "$fault" != none ]] && seconds=14
        workers "$run" $seconds 1 1 1 $LAT_THINK_MS "$@" retry_ms=$LAT_RETRY_MS prefix="dd-fleet-$run-$$:"
        if [[ "$fault" != none ]]; then
            sleep 2
            event "$run" fault_start
            if [[ "$fault" == unreachable ]]; then ip -n "$P-br" link set s-redis down; else kill -9 "${pid_of[redis]}"; fi
            sleep 10
            event "$run" fault_end
            if [[ "$fault" == unreachable ]]; then ip -n "$P-br" link set s-redis up; else redis redis "$REDIS_IP" --port 6379; fi
        fi
        finish "$run"
        event "$run" end
        echo "latency row $run done" >&2
    }
    TLS_ARGS=(store=redis host=$REDIS_IP port=6380 tls=1 ca=$tmp/ca.crt)
    latency_row L1 none store=local
    latency_row L2 none store=redis host=$REDIS_IP port=6379
    latency_row L3 none "${TLS_ARGS[@]}"
    latency_row L4 unreachable "${TLS_ARGS[@]}"
    latency_row L5 killed "${TLS_ARGS[@]}"
fi

{ cat "$out/machine"; echo; python3 "$here/summarise.py" "$out"; } | tee "$out/summary.md"
echo "files: $out" >&2
