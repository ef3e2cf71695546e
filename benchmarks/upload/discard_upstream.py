#!/usr/bin/env python3
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
"""Upstream for the upload benchmark: reads every body byte and discards it.

Also plays the API's asset endpoints so that digital_delivery's full flow
(POST /assets -> PUT upload.url -> GET /assets/{id}) can run through nginx:
  POST .../assets      -> 201 {"asset":..., "upload": {url: http://127.0.0.1:<NGINX>/upload/bench.bin?X-Amz-Signature=x}}
  PUT  /upload/...     -> 200 after reading Content-Length bytes
  GET  .../assets/{id} -> 200 {"asset":...}
Usage: discard_upstream.py PORT NGINX_PORT [SCHEME]   (SCHEME of the upload URL: http (default) or https)
"""
import socket, socketserver, sys

NGINX_PORT = int(sys.argv[2])
SCHEME = sys.argv[3] if len(sys.argv) > 3 else "http"
ASSET = ('{"id":"a1","type":"internal","name":null,"filename":"bench.bin","external_url":null,'
         '"content_type":"application/octet-stream","byte_size":%d,"watermark_asset":false,'
         '"autogenerate_licence_key":false,"created_at":"2026-11-22T10:00:00.000Z","updated_at":"2026-11-22T10:00:00.000Z"}')


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        s = self.request
        buf = bytearray(1 << 20)
        view = memoryview(buf)
        pending = b""
        while True:
            while b"\r\n\r\n" not in pending:
                chunk = s.recv(65536)
                if not chunk:
                    return
                pending += chunk
            head, _, rest = pending.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            length = 0
            for l in lines[1:]:
                k, _, v = l.partition(":")
                if k.strip().lower() == "content-length":
                    length = int(v.strip())
            left = length - len(rest)
            pending = b""
            while left > 0:
                n = s.recv_into(view, min(left, len(buf)))
                if n == 0:
                    return
                left -= n
            if method == "POST":
                body = ('{"asset":' + ASSET % 2147483648 + ',"upload":{"method":"PUT","url":"%s://127.0.0.1:%d/upload/bench.bin?X-Amz-Signature=x",'
                        '"headers":{"Content-Type":"application/octet-stream","Content-Disposition":"inline; filename=\\"bench.bin\\""},'
                        '"expires_at":"2099-01-01T00:00:00.000Z"}}' % (SCHEME, NGINX_PORT))
                status = "201 Created"
            elif method == "GET":
                body, status = '{"asset":' + ASSET % 2147483648 + '}', "200 OK"
            else:
                body, status = "", "200 OK"
            data = body.encode()
            s.sendall(("HTTP/1.1 %s\r\nContent-Length: %d\r\nContent-Type: application/json\r\nConnection: keep-alive\r\n\r\n"
                       % (status, len(data))).encode() + data)


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


Server(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
