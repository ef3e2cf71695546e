#!/usr/bin/env python3
# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
"""Checks the layering of include/digital_delivery/impl/ that docs/architecture.md
draws, from the #include lines of every file of the library:

  * every file of impl/ lives in one of the folders of LAYERS;
  * a folder includes only folders of its own layer or below, and of its own
    layer only itself (http and rate_limit, both drivers, do not see each other);
  * a sans-io folder (`sansio/`, and the folders that are all sans-io) includes
    no I/O: no socket, timer, io_context, coroutine launch, file or memory map;
  * no .ipp includes another .ipp (an .ipp includes the header it defines,
    which includes its .ipp in header-only mode);
  * only the folders above the engine include <digital_delivery/endpoints.hpp>;
  * the Redis and shared-memory stores and the SQLite component are opt-in:
    only their public header (<digital_delivery/redis_rate_limit_store.hpp>,
    shm_rate_limit_store.hpp, sqlite_state.hpp), its .ipp and the component's
    own files include the component's files (redis_link, redis_store, resp;
    shm_store; <sqlite3.h>), and only the component's files and its source
    file (src.hpp; sqlite_src.hpp, which src.hpp does not include) include
    that header.
  * Beast and OpenSSL (with Asio's SSL) are included by the files of
    BEAST_FILES and OPENSSL_FILES only, the lists docs/architecture.md names.

Usage: layering.py INCLUDE_DIR. Prints one line per violation; exit 1 if any.
"""
import pathlib
import re
import sys

# Folder of impl/ -> layer. A folder may include the folders of lower layers,
# and of its own layer only itself.
LAYERS = {
    # Sans-io: plain classes and functions, tested without sockets or sleeps.
    "crypto": 1,
    "json": 1,
    "retry": 1,
    "http/sansio": 1,
    "rate_limit/sansio": 1,
    "upload/sansio": 1,
    # The sync's planner and apply rules (on the public sync_plan.hpp, never sync.hpp).
    "sync/sansio": 2,
    # Trace context and one operation's spans (no I/O: the drivers pass the times).
    "trace": 1,
    # Sans-io too, on the cores above: the request pipeline's core (retry
    # state, response facts, deadline and attempt timeout).
    "engine/sansio": 2,
    # The OTLP encoding of finished spans (on json/'s text helpers).
    "otlp/sansio": 2,
    # The order feed's core: scans, change detection, the delivery queue.
    "feed/sansio": 2,
    # Error codes, their messages, the server's words, diagnostics.
    "error": 3,
    # What the public value types compile: models (with their checks), observers.
    "model": 4,
    "observe": 4,
    # Drivers of the sans-io cores: the Beast transport, the rate limiter.
    "http": 5,
    "rate_limit": 5,
    # The OTLP exporter: batches, timers, the collector's transport, the file.
    "otlp": 5,
    # The SQLite state file of the durable jobs (opt-in: sqlite_state.hpp).
    "sqlite": 5,
    # The request pipeline: one request, from the call to the decoded result.
    "engine": 6,
    # Built on the endpoints: uploads, the asset-edit helpers, the watermark waiter.
    "upload": 7,
    "workflows": 7,
    # The folder sync's driver: scan, listing, plan, apply through the upload journal.
    "sync": 7,
    # The order feed's driver (polls, look-back, checkpoint commits) and its event's JSON form.
    "feed": 7,
    # Test doubles and cassettes.
    "testing": 8,
}
SANS_IO = {f for f, layer in LAYERS.items() if layer <= 2}
IO_HEADERS = re.compile(
    r"boost/asio/(ip/|ssl|local/|posix/|steady_timer|system_timer|io_context|co_spawn|awaitable|use_awaitable"
    r"|strand|connect|read|write|any_io_executor|signal_set)"
    r"|boost/beast/(core/(tcp_stream|basic_stream|ssl_stream)|ssl|http/(read|write)|websocket)"
    r"|^(sys/socket|sys/mman|netinet/|unistd|fcntl|liburing)"
)
# The stores that a translation unit parses only when it names them: their
# opt-in public header, its .ipp, and the files of the store, which only
# those (and each other) include.
OPT_IN_STORES = {
    "redis": {
        "redis_rate_limit_store.hpp",
        "impl/rate_limit/redis_rate_limit_store.ipp",
        "impl/rate_limit/redis_link.hpp",
        "impl/rate_limit/redis_session.hpp",
        "impl/rate_limit/sansio/redis_store.hpp",
        "impl/rate_limit/sansio/resp.hpp",
        "redis_feed_checkpoint.hpp",
        "impl/feed/redis_feed_checkpoint.ipp",
    },
    "shm": {
        "shm_rate_limit_store.hpp",
        "impl/rate_limit/shm_rate_limit_store.ipp",
        "impl/rate_limit/shm_store.hpp",
    },
    "sqlite": {
        "sqlite_state.hpp",
        "sqlite_src.hpp",
        "sqlite_upload_journal.hpp",
        "impl/sqlite/sqlite_state.ipp",
        "sqlite_feed_checkpoint.hpp",
        "impl/feed/sqlite_feed_checkpoint.ipp",
        "impl/upload/sqlite_upload_journal.ipp",
        "sqlite_sync_manifest.hpp",
        "impl/sync/sqlite_sync_manifest.ipp",
    },
}
# Each opt-in component's public header(s), and the source file that compiles
# it once (separate compilation): src.hpp for the stores; sqlite_src.hpp for
# SQLite, as src.hpp (digital_delivery::compiled) must not need libsqlite3.
OPT_IN_HEADERS = {
    "digital_delivery/redis_rate_limit_store.hpp": "redis",
    "digital_delivery/redis_feed_checkpoint.hpp": "redis",
    "digital_delivery/shm_rate_limit_store.hpp": "shm",
    "digital_delivery/sqlite_state.hpp": "sqlite",
    "digital_delivery/sqlite_upload_journal.hpp": "sqlite",
    "digital_delivery/sqlite_sync_manifest.hpp": "sqlite",
}
OPT_IN_SOURCE = {"redis": "src.hpp", "shm": "src.hpp", "sqlite": "sqlite_src.hpp"}
OPT_IN_STORE_FILES = {f"digital_delivery/{f}": store for store, files in OPT_IN_STORES.items()
                      for f in files if f.startswith("impl/") and not f.endswith(".ipp")}
# The only files that include Boost.Beast, and OpenSSL or Asio's SSL
# (docs/architecture.md, README.md "Compile time is a feature").
BEAST_FILES = {
    "impl/http/beast_transport.ipp",
    "impl/http/proxy_tunnel.hpp",
    "impl/http/sansio/http_exchange.hpp",
    "impl/http/sansio/response_parser.hpp",
}
OPENSSL_FILES = {
    "impl/http/beast_transport.ipp",
    "impl/rate_limit/redis_link.hpp",
}
BEAST = re.compile(r"^boost/beast[/.]")
OPENSSL = re.compile(r"^openssl/|^boost/asio/ssl[/.]|^boost/beast/(core/ssl_stream|ssl)")
# Headers outside the library that only an opt-in component's files include.
OPT_IN_SYSTEM = {"sqlite3.h": "sqlite"}
ABOVE_ENGINE = {f for f, layer in LAYERS.items() if layer > LAYERS["engine"]}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def folder_of(rel):
    """impl/http/sansio/x.hpp -> http/sansio; impl/engine/x.ipp -> engine."""
    parts = rel.split("/")
    if len(parts) >= 4 and parts[2] == "sansio":
        return parts[1] + "/sansio"
    return parts[1] if len(parts) >= 3 else None


def main():
    root = pathlib.Path(sys.argv[1])
    lib = root / "digital_delivery"
    problems = []
    checked = 0
    # The umbrella header (outside digital_delivery/) too: "digital_delivery.hpp".
    for path in [root / "digital_delivery.hpp"] + sorted(lib.rglob("*")):
        if path.suffix not in (".hpp", ".ipp"):
            continue
        rel = path.relative_to(lib if lib in path.parents else root).as_posix()
        text = path.read_text()
        includes = INCLUDE.findall(text)
        mine = folder_of(rel) if rel.startswith("impl/") else None
        if rel.startswith("impl/") and mine not in LAYERS:
            problems.append(f"{rel}: lives in no folder of the layering (tests/consumer/layering.py LAYERS)")
            continue
        checked += 1
        for inc in includes:
            if path.suffix == ".ipp" and inc.endswith(".ipp"):
                problems.append(f"{rel}: an .ipp includes an .ipp ({inc}); include the header it defines")
            if inc.startswith("digital_delivery/impl/") and mine is not None:
                theirs = folder_of(inc[len("digital_delivery/"):])
                if theirs not in LAYERS:
                    problems.append(f"{rel}: includes {inc}, in no folder of the layering")
                elif theirs != mine and (LAYERS[theirs] > LAYERS[mine] or
                                         (LAYERS[theirs] == LAYERS[mine] and not theirs.startswith(mine + "/"))):
                    problems.append(f"{rel} ({mine}, layer {LAYERS[mine]}) includes {inc} "
                                    f"({theirs}, layer {LAYERS[theirs]}): a layer sees only those below it")
            if mine in SANS_IO and IO_HEADERS.search(inc):
                problems.append(f"{rel}: sans-io, yet includes {inc} (I/O)")
            if inc == "digital_delivery/endpoints.hpp" and mine is not None and mine not in ABOVE_ENGINE:
                problems.append(f"{rel} ({mine}) includes endpoints.hpp: only {sorted(ABOVE_ENGINE)} are above the engine")
            if BEAST.search(inc) and rel not in BEAST_FILES:
                problems.append(f"{rel}: includes {inc} (Beast): only {sorted(BEAST_FILES)} may "
                                f"(docs/architecture.md)")
            if OPENSSL.search(inc) and rel not in OPENSSL_FILES:
                problems.append(f"{rel}: includes {inc} (OpenSSL): only {sorted(OPENSSL_FILES)} may "
                                f"(docs/architecture.md)")
            store = OPT_IN_STORE_FILES.get(inc) or OPT_IN_SYSTEM.get(inc)
            if store is not None and rel not in OPT_IN_STORES[store]:
                problems.append(f"{rel}: includes {inc}, a part of the opt-in {store} component: only its "
                                f"opt-in header and its files may")
            store = OPT_IN_HEADERS.get(inc)
            if store is not None and rel not in OPT_IN_STORES[store] and rel != OPT_IN_SOURCE[store]:
                problems.append(f"{rel}: includes {inc}, the opt-in header of the {store} component: only a "
                                f"translation unit that names it (or {OPT_IN_SOURCE[store]}) may")
    for p in problems:
        print(p)
    print(f"layering: {checked} files checked, {len(problems)} violation(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
