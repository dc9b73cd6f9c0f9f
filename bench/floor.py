"""``tablectl bench floor --tables T``: the floor view's data endpoint under a busy link.

A linked group of T member tables in PostgreSQL (``--db DSN`` or a throwaway cluster), each
table's role reporting its status and sending contributions (a round's worth at a time) and now
and then a hit claim and its payment, all the while; ``--viewers`` logged-in pages hold the
Server-Sent Events stream open (each push is a full read, as the page's is).  Meanwhile
``/api/floor`` is requested ``--requests`` times, one after another, each a fresh read of the
whole picture (T tables, the levels, the hits, the day's chart) over HTTP, 10 ms apart.

* ``api_ms_p50`` / ``api_ms_p99`` / ``api_ms_max`` — request sent to body received; goal p99 ≤ 100 ms.
* ``contributions_during`` — what the tables wrote while it was measured (the load was real).
"""

from __future__ import annotations

import argparse
import http.client
import json
import tempfile
import threading
import time
import urllib.parse
import uuid
from pathlib import Path
from typing import Any

from bench import percentile

NAME = "floor"
HELP = "floor view: /api/floor p50/p99 with T tables on a busy link and SSE viewers open (goal p99 <= 100 ms)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tables", type=int, default=40)
    p.add_argument("--db", help="PostgreSQL DSN (default: a throwaway cluster)")
    p.add_argument("--requests", type=int, default=500, help="data endpoint requests timed (default 500)")
    p.add_argument("--viewers", type=int, default=5, help="event streams held open meanwhile (default 5)")
    p.add_argument(
        "--rounds-before",
        type=int,
        default=30,
        help="rounds each table plays before timing (six contributions each, a hit every 25; default 30)",
    )


def run(args: argparse.Namespace, emit: Any) -> int:
    from bench._linkrig import database
    from controller.lap.config import parse_lap
    from controller.lap.floor_auth import StaffStore
    from controller.lap.floor_server import FloorServer, FloorSettings
    from controller.lap.lap import LapStore, connect
    from hil.linksim import drop_schema, lap_doc

    ids = [f"T{i + 1:02d}" for i in range(args.tables)]
    with database(args.db) as dsn, tempfile.TemporaryDirectory(prefix="tablectl-bench-floor-") as tmp:
        schema = f"bench_{uuid.uuid4().hex[:10]}"
        cfg = parse_lap(lap_doc(schema, ids, ["six-card-fortune"]), "<bench lap.toml>")
        store = LapStore(connect(dsn), schema)
        stop = threading.Event()
        server: FloorServer | None = None
        writers: list[threading.Thread] = []
        counts: dict[str, int] = {}
        try:
            store.install(cfg.group)
            store.configure(cfg)
            store.set_state("running")
            staff = Path(tmp) / "staff.toml"
            StaffStore(staff).set("bench", "floorperson", "2468")
            server = FloorServer(dsn, schema, FloorSettings("127.0.0.1", 0, staff), log=lambda m: None)
            server.start()
            tables = [_Table(dsn, cfg, tid, counts) for tid in ids]
            for t in tables:
                t.report(1)
                for _ in range(args.rounds_before):
                    t.round()
            cookie = _login(server)
            viewers = [
                threading.Thread(target=_view, args=(server, cookie, stop), daemon=True) for _ in range(args.viewers)
            ]
            for th in viewers:
                th.start()
            writers = [threading.Thread(target=t.play, args=(stop,), daemon=True) for t in tables]
            for th in writers:
                th.start()
            time.sleep(1.0)
            before = sum(counts.values())
            timed = _time_api(server, cookie, args.requests, emit)
            if timed is None:
                return 1
            lat, body = timed
            pic = json.loads(body)
            emit("tables", len(pic["tables"]))
            emit("viewers", args.viewers)
            emit("contributions_during", sum(counts.values()) - before)
            emit("hits_shown", len(pic["hits"]))
            emit("api_bytes", len(body))
            lat.sort()
            emit("api_requests", len(lat))
            emit("api_ms_p50", f"{percentile(lat, 50):.1f}")
            emit("api_ms_p99", f"{percentile(lat, 99):.1f}")
            emit("api_ms_max", f"{lat[-1]:.1f}")
            emit("api_goal_p99_ms", 100)
        finally:
            stop.set()
            for th in writers:
                th.join(5)
            if server is not None:
                server.stop()
            store.conn.close()
            drop_schema(dsn, schema)
    return 0


def _time_api(server: Any, cookie: str, requests: int, emit: Any) -> tuple[list[float], bytes] | None:
    """``requests`` GETs of /api/floor, one after the other: each one's milliseconds, and the last
    answer; None (said) when one is not 200."""
    lat = []
    body = b""
    host, port = server.address
    c = http.client.HTTPConnection(host, port, timeout=10)
    for _ in range(requests):
        t0 = time.perf_counter()
        c.request("GET", "/api/floor", headers={"Cookie": cookie})
        r = c.getresponse()
        body = r.read()
        lat.append((time.perf_counter() - t0) * 1000)
        if r.status != 200:
            emit("error", f"/api/floor answered {r.status}")
            return None
        time.sleep(0.01)  # spread over a few seconds of the tables' traffic
    c.close()
    return lat, body


class _Table:
    """One member table's role: status reports, contributions, now and then a hit and its payment."""

    def __init__(self, dsn: str, cfg: Any, tid: str, counts: dict[str, int]):
        from controller.lap.lap import connect

        self.tid, self.counts = tid, counts
        self.conn = connect(dsn, user=cfg.role_for(tid))
        self.s = cfg.schema
        self.seq = 0
        self.rnd = 0

    def _ins(self, kind: str, data: dict[str, Any]) -> int:
        self.seq += 1
        self.conn.execute(
            f"INSERT INTO {self.s}.events (table_id, seq, kind, level, data) VALUES (%s, %s, %s, 'primary', %s)",
            (self.tid, self.seq, kind, json.dumps(data)),
        )
        return self.seq

    def report(self, rnd: int) -> None:
        st = {"state": "open_for_wagers", "round": rnd, "open": True, "reason": "link reconciled", "tilts": {}}
        self.conn.execute(f"SELECT {self.s}.report_status(%s::jsonb)", (json.dumps(st),))

    def round(self) -> None:
        self.rnd += 1
        with self.conn.transaction():
            for seat in range(1, 7):
                self._ins("contribution", {"wager": 500, "round": self.rnd, "seat": seat})
        self.counts[self.tid] = self.counts.get(self.tid, 0) + 6
        if self.rnd % 25 == 0:
            hit = self._ins("hit", {"fraction_num": 1, "fraction_den": 10, "round": self.rnd, "seat": 1, "hand": "x"})
            amount = self.conn.execute(
                f"SELECT amount_cents FROM {self.s}.hits WHERE table_id = %s AND seq = %s", (self.tid, hit)
            ).fetchone()
            assert amount is not None
            self._ins("paid", {"hit_seq": hit, "cents": int(amount[0]), "by": "floor:bench"})
        self.report(self.rnd)

    def play(self, stop: threading.Event) -> None:
        try:
            while not stop.wait(0.25):  # a round's contributions every 250 ms per table
                self.round()
        finally:
            self.conn.close()


def _login(server: Any) -> str:
    host, port = server.address
    c = http.client.HTTPConnection(host, port, timeout=10)
    c.request(
        "POST",
        "/login",
        urllib.parse.urlencode({"person": "bench", "pin": "2468"}),
        {
            "Content-Type": "application/x-www-form-urlencoded",
            "Origin": f"http://{server.address[0]}:{server.address[1]}",
        },
    )
    r = c.getresponse()
    r.read()
    c.close()
    return str(r.getheader("Set-Cookie", "")).split(";")[0]


def _view(server: Any, cookie: str, stop: threading.Event) -> None:
    host, port = server.address
    c = http.client.HTTPConnection(host, port, timeout=10)
    c.request("GET", "/events", headers={"Cookie": cookie})
    r = c.getresponse()
    while not stop.is_set():
        try:
            if not r.fp.readline():
                return
        except OSError:
            return
    c.close()
