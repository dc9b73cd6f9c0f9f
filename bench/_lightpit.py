"""A light pit: many tables' uplink traffic from a few processes (``bench link --light``).

Each table is the real :class:`controller.uplink.uplink.Uplink` (its sender, its read of the
LAP's rows, its check of the LAP's memory, with the real SQL) logged in as the table's own role
with the table's own link key, over its own connection, sending the records of a real ledger
signed with the table's own ledger key; the LAP (``tablectl lap``) and PostgreSQL are the real
ones.  What is light is the client: no table service, no link socket, no thread per table.  One
worker process drives its share of the tables from one loop, waiting on every table's
connection at once (``poll``) and running a table's turn (``Uplink._cycle``) when its socket
has something or its timer is due; the watchdog thread per connection is left out (a bench on
one machine has no swallowing network).  The table's outbox message is a command on the
worker's standard input; the ledger's fallback re-read (``poll_s``) is slowed to 5 s (a
client-side SQLite read, no database work).

Worker protocol (JSON lines): in ``{"write": [table, n, round]}``, ``{"pushes": since}``,
``{"stop": 1}``; out ``{"up": n}`` once every table has connected, ``{"lat": [...]}`` the meter
pushes' latencies (ms) received since ``since`` (epoch s), ``{"err": text}``.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg

#: the uplink's fallback re-read of its ledger, in light mode (the table's wake-up is the command)
LIGHT_POLL_S = 5.0


class _NoWatchdog:
    """The statement watchdog's interface without its thread (one per table would be 1,000
    threads ticking five times a second)."""

    def tick(self, conn: Any, limit_s: float | None = None) -> None:
        return None


def _service(listener: Any, conn: psycopg.Connection) -> None:
    """One turn of the listener without waiting: what arrived, a read when due, the deadline."""
    if hasattr(listener, "service"):
        listener.service(conn)
        return
    listener._drain(conn)  # the release before: the same steps, spelt out
    if listener.bell.due():
        listener._read(conn)
        listener.bell.done()
    listener._deadline()


class LightTable:
    def __init__(self, spec: dict[str, Any], tid: str, tmp: Path):
        from controller.books.ledger import Ledger
        from controller.books.ledgerkey import init_key, read_key
        from controller.lap.linkauth import read_key as read_link_key
        from controller.uplink.uplink import Uplink, UplinkConfig

        self.tid = tid
        key = read_key(init_key(tmp / f"{tid}.key"))
        self.ledger = Ledger(tmp / f"{tid}.sqlite3", tid, key=key)
        cfg = UplinkConfig(
            dsn=spec["dsn"][tid],
            schema=spec["schema"],
            table_id=tid,
            ledger=tmp / f"{tid}.sqlite3",
            socket=tmp / f"{tid}.sock",
            key=key,
            link_key=read_link_key(Path(spec["link_keys"]) / f"{tid}.link.key"),
            poll_s=LIGHT_POLL_S,
            link_timeout_s=float(spec.get("link_timeout_s", 3.0)),
        )
        self.lat: list[tuple[float, float]] = []  # (received, ms)
        self.rate_version: int | None = None
        self.up = Uplink(cfg, log=self._log)
        self.up.connection.watchdog = _NoWatchdog()  # type: ignore[assignment]
        self.up.view.send = self._told
        self.up.listener.send = self._told
        self.conn: psycopg.Connection | None = None
        self.source: Any = None
        self.errors = 0

    def _log(self, text: str) -> None:
        print(json.dumps({"log": f"{self.tid}: {text}"}), flush=True)

    def _told(self, msg: dict[str, Any], key: str | None = None) -> None:
        if msg.get("t") == "meter" and "at" in msg:
            now = time.time()
            self.lat.append((now, (now - float(msg["at"])) * 1000))
            self.rate_version = msg.get("rate_version")
        self.up.channel.send(msg, key)

    def fileno(self) -> int | None:
        return None if self.conn is None else self.conn.pgconn.socket

    def due(self, now: float) -> float:
        """When this table's next turn is due without a doorbell (monotonic)."""
        if self.conn is None:
            return now
        return min(self.up._next_poll, now + self.up.listener.bell.wait_s())

    def turn(self) -> None:
        from controller.uplink.ledgerseam import SqliteLedgerSource

        up = self.up
        try:
            if self.source is None:
                self.source = SqliteLedgerSource(up.cfg.ledger, up.cfg.key)
            if self.conn is None:
                self.conn = up.connection.open()
                up.listener.attach(self.conn)
                up._connected(self.conn, self.source)
            up._cycle(self.conn, self.source)
        except psycopg.Error as e:
            self.errors += 1
            self._log(f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}")
            if self.conn is not None:
                self.conn.close()
            self.conn = None

    def write(self, n: int, round_no: int) -> None:
        from controller.books.ledger import Record
        from controller.core.records import Kind

        recs = []
        for s in range(n):
            data: dict[str, Any] = {"level": "primary", "wager": 100, "seat": s % 6 + 1}
            if self.rate_version is not None:
                data["rate_version"] = self.rate_version
            recs.append(Record(Kind.LINK_CONTRIBUTION, round_no, data))
        self.ledger.append(recs)
        self.up.wake.set()


def _patch_listener(t: LightTable) -> None:
    """The listener's wait is the worker's one ``poll`` over every table: a table's own step never waits."""
    lis = t.up.listener
    lis.step = lambda conn, timeout, wake_fd=None: _service(lis, conn)  # type: ignore[method-assign]


def worker(spec_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text())
    tmp = Path(spec["tmp"])
    tables = [LightTable(spec, tid, tmp) for tid in spec["tables"]]
    for t in tables:
        _patch_listener(t)
    return Worker(tables).run()


class Worker:
    """One worker process's loop: one ``poll`` over its tables' connections and the parent's
    commands (stdin), each table's turn when its connection spoke or its timer is due."""

    def __init__(self, tables: list[LightTable]):
        self.tables = tables
        self.stdin = sys.stdin.fileno()
        os.set_blocking(self.stdin, False)
        self.buf = b""
        self.told_up = False

    def run(self) -> int:
        while True:
            ready = self._wait()
            if self.stdin in ready and self._commands():
                return 0
            now = time.monotonic()
            for t in self.tables:
                fd = t.fileno()
                if fd is None or fd in ready or t.due(now) <= now or t.up.wake.is_set():
                    t.turn()
            self._say_up()

    def _wait(self) -> set[int]:
        """The descriptors ready, after a wait until the soonest table's turn (at most 0.25 s)."""
        now = time.monotonic()
        p = select.poll()
        p.register(self.stdin, select.POLLIN)
        for t in self.tables:
            fd = t.fileno()
            if fd is not None:
                p.register(fd, select.POLLIN)
        wait = min([t.due(now) for t in self.tables] + [now + 0.25]) - now
        return {fd for fd, _ev in p.poll(max(0.0, wait) * 1000)}

    def _commands(self) -> bool:
        """The parent's commands that arrived; True: stop (told so, or the parent is gone)."""
        chunk = os.read(self.stdin, 65536)
        if not chunk:
            return True
        self.buf += chunk
        *lines, self.buf = self.buf.split(b"\n")
        return any(_command(json.loads(line), self.tables) for line in lines)

    def _say_up(self) -> None:
        """Tell the parent once every table is connected and has heard a fresh heartbeat."""
        if not self.told_up and all(t.conn is not None and t.up.view.fresh for t in self.tables):
            self.told_up = True
            print(json.dumps({"up": len(self.tables)}), flush=True)


def _command(cmd: dict[str, Any], tables: list[LightTable]) -> bool:
    by_id = {t.tid: t for t in tables}
    if "write" in cmd:
        tid, n, round_no = cmd["write"]
        by_id[tid].write(int(n), int(round_no))
    elif "pushes" in cmd:
        since = float(cmd["pushes"])
        lat = [ms for t in tables for rx, ms in t.lat if rx >= since]
        errors = sum(t.errors for t in tables)
        print(json.dumps({"lat": lat, "errors": errors}), flush=True)
    elif "stop" in cmd:
        return True
    return False


class LightPit:
    """The parent's side: the LAP, the tables' roles and link keys (as ``tablectl lap
    --enrol-table`` makes them), and ``procs`` worker processes sharing the tables."""

    def __init__(self, dsn: str, tables: int, tmp: Path, procs: int, link_timeout_s: float = 3.0):
        from bench._linkrig import LinkSetup, Pit

        self.pit = Pit(dsn, tables, tmp, links=LinkSetup(tls=False), make_table=False)
        self.tmp, self.procs = tmp, max(1, min(procs, tables))
        self.link_timeout_s = link_timeout_s
        self.workers: list[Any] = []
        self.of: dict[str, int] = {}  # table -> its worker
        self._lines: list[Any] = []  # one queue per worker

    @property
    def ids(self) -> list[str]:
        return list(self.pit.ids)

    def start(self, timeout: float | None = None) -> None:
        import queue
        import threading

        from controller.lap.lap import LapStore, connect, wait_until

        pit = self.pit
        # the LAP's first configuration of 1,000 tables takes minutes on this machine
        timeout = timeout if timeout is not None else max(120.0, 1.2 * len(pit.ids))
        pit.start_lap()
        pit.store = LapStore(connect(pit.dsn), pit.schema)
        if not wait_until(lambda: pit.store.installed() is not None and pit.store.state() == "running", timeout, 0.05):
            raise RuntimeError("the LAP did not start")
        pit.enrol()
        shares = [pit.ids[i :: self.procs] for i in range(self.procs)]
        env = dict(os.environ)
        for w, share in enumerate(shares):
            spec = {
                "tmp": str(self.tmp),
                "schema": pit.schema,
                "tables": share,
                "dsn": {t: pit.uplink_dsn(t) for t in share},
                "link_keys": str(self.tmp),
                "link_timeout_s": self.link_timeout_s,
            }
            path = self.tmp / f"light-{w}.json"
            path.write_text(json.dumps(spec))
            log = (self.tmp / f"light-{w}.log").open("ab")
            proc = subprocess.Popen(
                [sys.executable, "-m", "bench._lightpit", str(path)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                env=env,
            )
            q: queue.Queue[dict[str, Any]] = queue.Queue()
            threading.Thread(target=self._read, args=(proc, q, log), daemon=True).start()
            self.workers.append(proc)
            self._lines.append(q)
            for t in share:
                self.of[t] = w
        deadline = time.monotonic() + timeout
        for w, q in enumerate(self._lines):
            self._wait(q, "up", deadline - time.monotonic(), f"worker {w}'s tables did not all hear the LAP")

    @staticmethod
    def _read(proc: Any, q: Any, log: Any) -> None:
        for line in proc.stdout:
            msg = json.loads(line)
            if "log" in msg:
                log.write((msg["log"] + "\n").encode())
                log.flush()
            else:
                q.put(msg)

    @staticmethod
    def _wait(q: Any, key: str, timeout: float, what: str) -> dict[str, Any]:
        import queue

        end = time.monotonic() + max(0.0, timeout)
        while True:
            try:
                msg: dict[str, Any] = q.get(timeout=max(0.01, end - time.monotonic()))
            except queue.Empty:
                raise RuntimeError(what) from None
            if key in msg:
                return msg

    def _send(self, w: int, cmd: dict[str, Any]) -> None:
        stdin = self.workers[w].stdin
        stdin.write((json.dumps(cmd) + "\n").encode())
        stdin.flush()

    def write(self, tid: str, n: int, round_no: int) -> None:
        self._send(self.of[tid], {"write": [tid, n, round_no]})

    def latencies(self, since: float) -> tuple[list[float], int]:
        """Every meter push received since ``since`` (ms, all tables), and the uplinks' errors."""
        lat: list[float] = []
        errors = 0
        for w in range(len(self.workers)):
            self._send(w, {"pushes": since})
            msg = self._wait(self._lines[w], "lat", 60, f"worker {w} did not answer")
            lat += msg["lat"]
            errors += int(msg["errors"])
        return lat, errors

    def lap_count(self) -> int:
        return int(self.pit.lap_count())

    def logs(self, words: str) -> int:
        n = 0
        for w in range(len(self.workers)):
            text = (self.tmp / f"light-{w}.log").read_text(errors="replace")
            n += text.count(words)
        return n

    def close(self) -> None:
        for w, proc in enumerate(self.workers):
            if proc.poll() is None:
                try:
                    self._send(w, {"stop": 1})
                    proc.wait(10)
                except (OSError, subprocess.TimeoutExpired):
                    proc.kill()
        self.pit.close()


if __name__ == "__main__":
    sys.exit(worker(sys.argv[1]))
