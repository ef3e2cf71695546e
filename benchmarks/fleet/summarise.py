#!/usr/bin/env python3
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# The tables of benchmarks/fleet/run.sh from the files of its runs (the
# workers' RUN.cH.pP files, RUN.events and params; formats in fleet_worker.cpp).
#
#   summarise.py OUT_DIR
#
# Fleet runs (a, b, c, d), per run:
#   429: answers 429; failed: operations that ended in an error (cancelled at
#   the end of the run excepted); 429 late: 429 answers to requests sent more
#   than one window after the fault ended (or at all, without a fault).
#   Utilisation outside the fault: points of the requests the server served
#   (any answer but 429), sent before the fault or from one window after its
#   end, over what the server's bucket allowed in those spans: refill x time,
#   plus at the start of the run its capacity (both buckets are full then),
#   after the fault the X-RateLimit-Remaining of its last answer before, plus
#   the refill since that answer (at most capacity).
#   Guard span: from the fault's start to one window after its end. Sent: the
#   points of every request sent in it (whatever the answer), by the time the
#   attempt started; bound = capacity + refill x (length of the guard span) + B,
#   B = refill x store_retry_interval (docs/rate-limiting.md, "A fleet while
#   Redis is away"); excess = sent - bound.
# Latency rows (L1..L5): the operations that started in the row's span (the
# whole run, or the fault): p50/p99 of the call-to-end duration and of the
# limiter wait, the longest wait, the waits of at least command_timeout, and
# the most of them one process had within one store_retry_interval.
import collections
import glob
import os
import sys


def load(out, run):
    files = sorted(glob.glob(os.path.join(out, run + ".c*.p*")))
    procs = []
    for f in files:
        p = collections.defaultdict(list)
        with open(f) as fh:
            for line in fh:
                parts = line.split()
                if parts:
                    p[parts[0]].append(parts[1:])
        host = os.path.basename(f).split(".")[1]
        procs.append((host, p))
    events = {}
    with open(os.path.join(out, run + ".events")) as fh:
        for line in fh:
            name, t = line.split()
            events[name] = int(t) / 1e9
    return procs, events


def pct(values, q):
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))]


def fleet_row(out, run, label, cap, window, b_points):
    procs, ev = load(out, run)
    if not procs:
        return None
    refill = cap / window
    start = min(float(s[0]) / 1e9 for _, p in procs for s in p["S"])
    end = min(float(s[1]) / 1e9 for _, p in procs for s in p["S"])
    sent = []  # (time, status, points, host)
    ops = collections.Counter()
    for host, p in procs:
        for t, status, pts, answered, remaining in p["R"]:
            sent.append((int(t) / 1e9, int(status), int(pts), host, int(answered) / 1e9, int(remaining)))
        for o in p["O"]:
            ops[o[1]] += 1
    n429 = sum(1 for s in sent if s[1] == 429)
    fs, fe = ev.get("fault_start"), ev.get("fault_end")
    guard_end = fe + window if fe is not None else None
    late = sum(1 for s in sent if s[1] == 429 and (fs is None or not (fs <= s[0] < guard_end)))

    def served(a, b):
        return sum(s[2] for s in sent if a <= s[0] < b and s[1] not in (0, 429))

    if fs is None:
        spans = [(start, end, True)]
    else:
        spans = [(start, fs, True), (guard_end, end, False)]
    def remaining_at(t):  # from the server's X-RateLimit-Remaining in its last answer before t, refilled since
        before = [s for s in sent if s[4] <= t and s[5] >= 0]
        if not before:
            return cap
        last = max(before, key=lambda s: s[4])
        return min(cap, last[5] + refill * (t - last[4]))

    got = sum(served(a, b) for a, b, _ in spans if b > a)
    allowed = sum((cap if first else remaining_at(a)) + refill * (b - a) for a, b, first in spans if b > a)
    row = {
        "run": label,
        "ops": sum(ops.values()),
        "ok": ops["ok"],
        "failed": ops["failed"],
        "n429": n429,
        "late": late,
        "util": 100.0 * got / allowed if allowed else float("nan"),
    }
    if fs is not None:
        during = sum(s[2] for s in sent if fs <= s[0] < fe)
        after = sum(s[2] for s in sent if fe <= s[0] < guard_end)
        bound = cap + refill * (guard_end - fs) + b_points
        row.update(fault=fe - fs, during=during, after=after, total=during + after, bound=bound,
                   excess=during + after - bound)
        per_host = collections.Counter()
        for t, _, pts, host, _, _ in sent:
            if fs <= t < guard_end:
                per_host[host] += pts
        row["per_host"] = ", ".join("%s %d" % (h, per_host[h]) for h in sorted(per_host))
    failures = collections.Counter(" ".join(o[3:]) for _, p in procs for o in p["O"] if o[1] == "failed")
    return row, failures


def latency_row(out, run, label, timeout_ms, retry_s):
    procs, ev = load(out, run)
    if not procs:
        return None
    a = ev.get("fault_start", 0.0)
    b = ev.get("fault_end", float("inf"))
    durations, waits, long_waits, most, longest = [], [], 0, 0, 0.0
    for _, p in procs:
        starts = sorted(t for t in (int(w[0]) / 1e9 - int(w[1]) / 1e9 for w in p["W"] if int(w[1]) / 1e6 >= timeout_ms)
                        if a <= t < b)
        for i, t in enumerate(starts):
            most = max(most, sum(1 for u in starts[i:] if u < t + retry_s))
        for o in p["O"]:
            t_end, what, d = int(o[0]) / 1e9, o[1], int(o[2]) / 1e9
            if what == "ok" and a <= t_end - d < b:
                durations.append(d * 1e3)
        for w in p["W"]:
            t, waited = int(w[0]) / 1e9, int(w[1]) / 1e9
            if a <= t - waited < b:
                waits.append(waited * 1e3)
                long_waits += waited * 1e3 >= timeout_ms
                longest = max(longest, waited * 1e3)
    failed = sum(1 for _, p in procs for o in p["O"] if o[1] == "failed")
    span = (b - a) if b != float("inf") else None
    return dict(run=label, n=len(durations), p50=pct(durations, 0.5), p99=pct(durations, 0.99),
                w50=pct(waits, 0.5), w99=pct(waits, 0.99), wmax=longest, long=long_waits, most=most, failed=failed, span=span,
                procs=len(procs))


def main():
    out = sys.argv[1]
    params = {}
    with open(os.path.join(out, "params")) as fh:
        for line in fh:
            k, v = line.split()
            params[k] = float(v)
    cap, window = params["capacity"], params["window"]
    labels = {"a": "(a) no fault", "b": "(b) Redis killed, restarted", "c": "(c) Sentinel failover",
              "d": "(d) one host cut off from Redis"}
    rows = []
    for run in "abcd":
        if os.path.exists(os.path.join(out, run + ".events")):
            r = fleet_row(out, run, labels[run], cap, window, params.get("b_points", 0))
            if r:
                rows.append(r)
    if rows:
        print("| run | operations | failed | 429 answers | 429 later than one window after the fault "
              "| utilisation outside the fault | fault (s) | points sent during the fault | in the window after "
              "| total | bound (capacity + refill x span + B, B = %g) | over the bound |" % params.get("b_points", 0))
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r, _ in rows:
            if "bound" in r:
                extra = "| %.1f | %d | %d | %d | %.0f | %+.0f |" % (r["fault"], r["during"], r["after"], r["total"],
                                                                    r["bound"], r["excess"])
            else:
                extra = "| – | – | – | – | – | – |"
            print("| %s | %d | %d | %d | %d | %.1f %% %s" % (r["run"], r["ops"], r["failed"], r["n429"], r["late"],
                                                            r["util"], extra))
        for r, _ in rows:
            if "per_host" in r:
                print("\n%s: points sent from the fault's start to one window after its end, per client host: %s"
                      % (r["run"], r["per_host"]))
        for r, failures in rows:
            for msg, n in failures.most_common(3):
                print("\n%s: %d failed: %s" % (r["run"], n, msg))
        print()
    lat_labels = {"L1": "in-process bucket (no store)", "L2": "Redis, TCP", "L3": "Redis, TLS",
                  "L4": "Redis unreachable (packets dropped)", "L5": "Redis killed (connection refused)"}
    lat = []
    for run in ("L1", "L2", "L3", "L4", "L5"):
        if os.path.exists(os.path.join(out, run + ".events")):
            r = latency_row(out, run, lat_labels[run], params["timeout_ms"], params["lat_retry_ms"] / 1e3)
            if r:
                lat.append(r)
    if lat:
        print("| store | requests | p50 (ms) | p99 (ms) | limiter wait p50 (ms) | p99 (ms) | longest (ms) "
              "| waits >= command_timeout | most of one process in one store_retry_interval | failed |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for r in lat:
            print("| %s | %d | %.2f | %.2f | %.2f | %.2f | %.1f | %d | %d | %d |" % (
                r["run"], r["n"], r["p50"], r["p99"], r["w50"], r["w99"], r["wmax"], r["long"], r["most"], r["failed"]))


if __name__ == "__main__":
    main()
