#!/usr/bin/env bash
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# Upload benchmark (issue 6): a 2 GiB PUT through a local nginx
# (client_max_body_size 0, proxy_request_buffering off) to an upstream that
# reads and discards every byte, measured side by side in one run:
#   ours     digital_delivery::async_upload_asset over beast_transport
#            (POST /assets, streamed PUT, GET /assets/{id}); defaults (64 KiB
#            chunks, TCP_NOTSENT_LOWAT 16 KiB while the body is sent), and with
#            beast_transport_params::upload_send_lowat = 0 (the socket left
#            alone, as before) or upload_chunk_size = 256 KiB
#   libcurl  easy handle with a read callback (same headers, 64 KiB buffer)
#   curl -T  the curl command line
# After one unmeasured warm-up upload, each is run REPS times (default 3), in an
# order rotated every repetition, under /usr/bin/time -v; prints a markdown
# table with the median MB/s (2147483648 bytes / wall time of the PUT as the
# program measures it; curl -T: wall time of the process), the largest
# peak RSS, and the median CPU time (user + system) of the client process, of
# nginx and of the upstream during each run (which side sets the pace).
# Usage: [REPS=N] [TLS=1] benchmarks/upload/run.sh [BUILD_DIR]  (TLS=1: the same over https)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${1:-$root/build-upload/bench}"
reps="${REPS:-3}"
mkdir -p "$build"
CXX="${CXX:-g++-12}"
FLAGS="-std=c++20 -O2 -DNDEBUG -Wall -Wextra -Wno-missing-field-initializers -DDIGITAL_DELIVERY_SEPARATE_COMPILATION -I$root/include"

# --- build: the library compiled once (src.hpp) + the driver ---------------------
echo '#include <digital_delivery/src.hpp>' > "$build/dd_src.cpp"
if [[ ! -f "$build/dd_src.o" || -n "$(find "$root/include" -newer "$build/dd_src.o" -name '*.?pp' | head -1)" ]]; then
    $CXX $FLAGS -c "$build/dd_src.cpp" -o "$build/dd_src.o"
fi
if [[ ! -x "$build/upload_bench" || "$here/upload_bench.cpp" -nt "$build/upload_bench" || "$build/dd_src.o" -nt "$build/upload_bench" ]]; then
    $CXX $FLAGS -c "$here/upload_bench.cpp" -o "$build/upload_bench.o"
    $CXX "$build/upload_bench.o" "$build/dd_src.o" -o "$build/upload_bench" \
        -lboost_json -lboost_url -lssl -lcrypto -lcurl -lpthread
fi
# The same driver without libcurl (and its ~30 shared libraries), for ours' peak RSS.
if [[ ! -x "$build/upload_bench_ours" || "$build/upload_bench" -nt "$build/upload_bench_ours" ]]; then
    $CXX $FLAGS -DDD_BENCH_NO_CURL -c "$here/upload_bench.cpp" -o "$build/upload_bench_ours.o"
    $CXX "$build/upload_bench_ours.o" "$build/dd_src.o" -o "$build/upload_bench_ours" \
        -lboost_json -lboost_url -lssl -lcrypto -lpthread
fi
bench="$build/upload_bench"
bench_ours="$build/upload_bench_ours"

# --- a sparse 2 GiB file, the discarding upstream, nginx -------------------------------
dir="$(mktemp -d /tmp/dd-upload-bench-XXXXXX)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port="$(free_port)"; up="$(free_port)"
# TLS=1: nginx terminates TLS with a certificate from a CA made now (openssl
# CLI); every client trusts that CA (ours and libcurl via DD_BENCH_CA).
scheme=http; listen_opts=""; ssl_conf=""; curl_ca=()
if [[ "${TLS:-0}" == 1 ]]; then
    scheme=https; listen_opts=" ssl"
    openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=dd bench CA" \
        -keyout "$dir/ca.key" -out "$dir/ca.pem" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$dir/server.key" -out "$dir/server.csr" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1\n' > "$dir/san.ext"
    openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial -days 1 \
        -extfile "$dir/san.ext" -out "$dir/server.pem" 2>/dev/null
    ssl_conf="ssl_certificate $dir/server.pem; ssl_certificate_key $dir/server.key;"
    export DD_BENCH_CA="$dir/ca.pem"
    curl_ca=(--cacert "$dir/ca.pem")
fi
truncate -s 2147483648 "$dir/body.bin"
printf x > "$dir/one.bin"
python3 "$here/discard_upstream.py" "$up" "$port" "$scheme" &
pids+=($!); upstream_pid=$!
mkdir -p "$dir/www"
cat > "$dir/nginx.conf" <<CONF
daemon off; master_process off; worker_processes 1; pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 1024; }
http {
    client_body_temp_path $dir/cb; proxy_temp_path $dir/px; fastcgi_temp_path $dir/fc;
    uwsgi_temp_path $dir/uw; scgi_temp_path $dir/sc;
    access_log off; keepalive_timeout 75s;
    client_max_body_size 0;
    client_body_buffer_size 256k;
    proxy_request_buffering off;
    proxy_http_version 1.1;
    server {
        listen 127.0.0.1:$port$listen_opts; $ssl_conf
        location / { proxy_pass http://127.0.0.1:$up; proxy_set_header Connection ""; }
    }
}
CONF
/usr/sbin/nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" &
pids+=($!); nginx_pid=$!
for _ in $(seq 200); do curl -sf "${curl_ca[@]}" -o /dev/null "$scheme://127.0.0.1:$port/api/v1/external/assets/a1" && break; sleep 0.05; done

put_url="$scheme://127.0.0.1:$port/upload/bench.bin?X-Amz-Signature=x"
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # user + system, in clock ticks
hz=$(getconf CLK_TCK)
measure() {  # name command... -> "MBps RSS_KiB client_cpu_s nginx_cpu_s upstream_cpu_s"
    local name="$1"; shift
    local n0 u0 n1 u1
    n0=$(cpu_ticks "$nginx_pid"); u0=$(cpu_ticks "$upstream_pid")
    /usr/bin/time -v -o "$dir/time.txt" "$@" > "$dir/out.txt" 2>"$dir/err.txt" || { cat "$dir/err.txt" >&2; return 1; }
    n1=$(cpu_ticks "$nginx_pid"); u1=$(cpu_ticks "$upstream_pid")
    local rss secs mbps cpu
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$dir/time.txt")
    cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.2f", s}' "$dir/time.txt")
    if [[ "$name" == "curl -T" ]]; then
        secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$dir/time.txt" | awk -F: '{ if (NF==3) print $1*3600+$2*60+$3; else print $1*60+$2 }')
        mbps=$(python3 -c "print(round(2147483648/1e6/$secs, 1))")
    else
        mbps=$(awk '{print $4}' "$dir/out.txt")
    fi
    echo "$mbps $rss $cpu $(python3 -c "print('%.2f %.2f' % (($n1 - $n0) / $hz, ($u1 - $u0) / $hz))")"
}

api="$scheme://127.0.0.1:$port/api/v1/external"
names=(ours "ours, upload_send_lowat = 0 (before)" "ours, 256 KiB chunks" "ours, driver without libcurl" libcurl "curl -T"
       "ours, 1-byte body (process baseline; MB/s meaningless)")
run_one() {  # variant name
    case "$1" in
        ours) measure ours "$bench" ours "$api" "$dir/body.bin" ;;
        "ours, upload_send_lowat = 0 (before)") UPLOAD_LOWAT=0 measure ours "$bench" ours "$api" "$dir/body.bin" ;;
        "ours, 256 KiB chunks") UPLOAD_CHUNK=262144 measure ours "$bench" ours "$api" "$dir/body.bin" ;;
        "ours, driver without libcurl") measure ours "$bench_ours" ours "$api" "$dir/body.bin" ;;
        libcurl) measure libcurl "$bench" libcurl "$put_url" "$dir/body.bin" ;;
        "curl -T") measure "curl -T" curl -sS "${curl_ca[@]}" -o /dev/null -f -H 'Content-Type: application/octet-stream' \
            -H 'Content-Disposition: inline; filename="bench.bin"' -T "$dir/body.bin" "$put_url" ;;
        *) measure ours "$bench" ours "$api" "$dir/one.bin" ;;
    esac
}
# One unmeasured upload first (the first 2 GiB through a fresh nginx and
# upstream is 3-6x slower whoever sends it), then every repetition in a
# rotated order, so that no client always runs first or last.
run_one libcurl >/dev/null
declare -A results
n=${#names[@]}
for ((i = 0; i < reps; ++i)); do
    for ((k = 0; k < n; ++k)); do
        name="${names[$(( (i + k) % n ))]}"
        results["$name"]+="$(run_one "$name")"$'\n'
    done
done

echo "2 GiB PUT via nginx 1.22 (loopback, $scheme), $reps runs each, $(date -u +%Y-%m-%d), $(nproc) cores, $($CXX --version | head -1)"
echo
echo "| client | MB/s (median) | MB/s (all runs) | peak RSS (max of runs) | CPU s per upload, median: client / nginx / upstream |"
echo "|---|---|---|---|---|"
for name in "${names[@]}"; do
    python3 - "$name" "${results[$name]}" <<'PY'
import statistics, sys
rows = [l.split() for l in sys.argv[2].strip().splitlines()]
mb = [float(r[0]) for r in rows]; rss = max(int(r[1]) for r in rows)
cpu = " / ".join("%.2f" % statistics.median(float(r[i]) for r in rows) for i in (2, 3, 4))
print("| %s | %.0f | %s | %.1f MiB | %s |" % (sys.argv[1], statistics.median(mb), " / ".join("%.0f" % x for x in mb), rss / 1024, cpu))
PY
done
# Paired: each repetition's ours / libcurl (the two ran minutes apart at most,
# in the same rotation round), which cancels part of the machine's drift.
python3 - "${results[ours]}" "${results[libcurl]}" "${results["ours, driver without libcurl"]}" <<'PY'
import statistics, sys
col = lambda s: [float(l.split()[0]) for l in s.strip().splitlines()]
ours, curl, nocurl = col(sys.argv[1]), col(sys.argv[2]), col(sys.argv[3])
for name, xs in (("ours", ours), ("ours, driver without libcurl", nocurl)):
    r = [a / b for a, b in zip(xs, curl)]
    print()
    print("%s / libcurl per repetition: median %.2f, %d of %d at or above 1, range %.2f-%.2f"
          % (name, statistics.median(r), sum(x >= 1 for x in r), len(r), min(r), max(r)))
PY
