#!/bin/sh
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# Every case of the order-feed benchmark at once (each on a sandbox of its
# own, so each has its own 40 points per 60 s): run.sh BUILD_DIR [SECONDS]
set -eu
bench="$1/benchmarks/feed/digital_delivery_feed_bench"
secs="${2:-600}"
echo "| case | consumer | purchases | delivered | missed | delivered twice | p50 | p99 | points | points/hour |"
echo "|---|---|---|---|---|---|---|---|---|---|"
tmp=$(mktemp -d)
for c in idle rate1 burst; do
  for m in feed naive; do
    "$bench" "$m" "$c" "$secs" > "$tmp/$c-$m" &
  done
done
wait
for c in idle rate1 burst; do for m in feed naive; do cat "$tmp/$c-$m"; done; done
rm -rf "$tmp"
