#!/usr/bin/env python3
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
"""A stand-in for a service that is not the sandbox but answers 200
{"status":"ok"} to every method and path (a health route of its own, a
proxy's catch-all route), on 127.0.0.1 and a free port chosen by the kernel.

    stand_in_service.py [--server NAME] [--service NAME] -- COMMAND...

runs COMMAND with DIGITAL_DELIVERY_BASE_URL pointing at it (path
/api/v1/external) and DIGITAL_DELIVERY_API_KEY set, then fails unless
COMMAND printed "mode: real service, read-only", sent no request but GET
and HEAD, and sent no API key to /sandbox/health. --server sets the Server
header of every answer, --service adds "service": NAME to every body: one
of the two sandbox marks alone must not be taken for the sandbox.
"""
import argparse
import http.server
import json
import os
import subprocess
import sys
import threading

KEY = "stand-in-key-0123456789"


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--server", default="")
    p.add_argument("--service", default="")
    p.add_argument("--timeout", type=int, default=120)
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        p.error("no command")

    seen = []  # (method, path, carried the key)
    lock = threading.Lock()
    body = {"status": "ok"}
    if args.service:
        body["service"] = args.service
    payload = json.dumps(body).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def answer(self):
            n = int(self.headers.get("Content-Length") or 0)
            if n:
                self.rfile.read(n)
            with lock:
                seen.append((self.command, self.path, self.headers.get("X-Auth-Token") is not None))
            self.send_response_only(200)
            if args.server:
                self.send_header("Server", args.server)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = answer

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = dict(os.environ, DIGITAL_DELIVERY_BASE_URL=f"http://127.0.0.1:{server.server_address[1]}/api/v1/external",
               DIGITAL_DELIVERY_API_KEY=KEY)
    try:
        r = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=args.timeout)
        out, rc = r.stdout, r.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or ""), None
    finally:
        server.shutdown()
    print(out)
    print(f"exit status: {rc}; requests: " + ", ".join(f"{m} {p}" for m, p, _ in seen))
    problems = []
    if rc is None:
        problems.append(f"did not finish within {args.timeout} s")
    if "mode: real service, read-only" not in out:
        problems.append("did not run read-only")
    writes = [f"{m} {p}" for m, p, _ in seen if m not in ("GET", "HEAD")]
    if writes:
        problems.append("wrote to a service it did not know: " + ", ".join(writes))
    if any(key for m, p, key in seen if p.startswith("/sandbox/")):
        problems.append("sent the API key outside the API's base path")
    for pr in problems:
        print(f"FAIL: {pr}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
