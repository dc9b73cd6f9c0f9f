"""A pit for the link benchmarks: the LAP (``tablectl lap``) and one uplink per table
(``tablectl uplink``) as real processes, PostgreSQL (``--db`` or a throwaway cluster), and on
the table side of each link socket the table's own pieces: its SQLite ledger (the outbox) and a
:class:`controller.linked.Linkage` fed by the same socket (controller/linked.py ``LinkPort``).
Optionally every uplink reaches PostgreSQL through a TCP proxy the bench can cut.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from controller.ledger import Ledger, Record
from controller.ledgerkey import init_key, read_key
from controller.linked import Linkage, LinkPort
from controller.records import Kind

TABLECTL = [sys.executable, "-m", "controller.cli"]


@contextlib.contextmanager
def database(dsn: str | None) -> Iterator[str]:
    if dsn:
        yield dsn
        return
    from controller.link.pgtemp import temp_cluster

    with temp_cluster(prefix="tablectl-bench-pg-") as d:
        yield d


class Proxy:
    """A TCP forwarder to PostgreSQL; :meth:`cut` drops every connection through it."""

    def __init__(self, host: str, port: int):
        self.target = (host, port)
        self.srv = socket.socket()
        self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(64)
        self.port = int(self.srv.getsockname()[1])
        self.conns: list[socket.socket] = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            try:
                u = socket.create_connection(self.target, timeout=3)
            except OSError:
                c.close()
                continue
            with self.lock:
                self.conns += [c, u]
            for a, b in ((c, u), (u, c)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(a: socket.socket, b: socket.socket) -> None:
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> int:
        with self.lock:
            conns, self.conns = self.conns, []
        for s in conns:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()
        return len(conns) // 2

    def close(self) -> None:
        self.stop.set()
        self.srv.close()
        self.cut()


class TableEnd:
    """The table's side of one link: its ledger (outbox), its link socket, its Linkage."""

    def __init__(self, tid: str, tmp: Path, timeout_s: float = 3.0):
        self.tid = tid
        self.ledger_path = tmp / f"{tid}.sqlite3"
        self.sock = tmp / f"{tid}.sock"
        self.key_file = init_key(tmp / f"{tid}.key")  # the uplink verifies every record with it
        self.ledger = Ledger(self.ledger_path, tid, key=read_key(self.key_file))
        self.lock = threading.Lock()
        self.msgs: list[tuple[float, dict[str, Any]]] = []
        self.link = Linkage("bench", timeout_s, time.monotonic)
        self.port = LinkPort(self.sock, self._post)
        self.port.start()
        self.link.send = self.port.send

    def _post(self, kind: str, source: str, data: dict[str, Any]) -> None:
        now = time.time()
        with self.lock:
            self.msgs.append((now, data))
            self.link.on_message(data)
            self.link.change()

    def tick(self) -> bool | None:
        with self.lock:
            ch = self.link.change()
            return None if ch is None else ch[0]

    def is_open(self) -> bool:
        with self.lock:
            self.link.change()
            return bool(self.link.open)

    def write(self, records: list[Record]) -> list[Any]:
        evs = self.ledger.append(records)
        link = [e.seq for e in evs if e.kind.startswith("link.")]
        if link:
            with self.lock:
                self.link.committed(max(link))
        return evs

    def contribution(self, seat: int = 1, wager: int = 100, round_no: int = 1) -> Record:
        data: dict[str, Any] = {"level": "primary", "wager": wager, "seat": seat}
        with self.lock:
            version = self.link.rate_versions.get("primary")
        if version is not None:  # the LAP's rate version the wager is taken under
            data["rate_version"] = version
        return Record(Kind.LINK_CONTRIBUTION, round_no, data)

    def of(self, t: str) -> list[tuple[float, dict[str, Any]]]:
        with self.lock:
            return [(ts, m) for ts, m in self.msgs if m.get("t") == t]

    def close(self) -> None:
        self.port.close()
        self.ledger.close()


class Pit:
    def __init__(
        self,
        dsn: str,
        tables: int,
        tmp: Path,
        *,
        heartbeat: str = "200ms",
        proxy: bool = False,
        make_table: bool = True,
    ):
        import psycopg

        self.dsn, self.tmp = dsn, tmp
        self.schema = f"bench_{uuid.uuid4().hex[:10]}"
        self.ids = [f"T{i + 1:02d}" for i in range(tables)]
        info = psycopg.conninfo.conninfo_to_dict(dsn)
        self.proxy = Proxy(str(info.get("host", "127.0.0.1")), int(info.get("port", 5432))) if proxy else None
        # the release's digest, checked by every LAP and uplink process before it operates
        # (--sim: a record in a directory the bench's user can write)
        from controller.selfcheck import record_digest

        self.software = tmp / "software.json"
        record_digest(self.software)
        lines = [
            f'[link]\ngroup = "bench"\nschema = "{self.schema}"\nheartbeat = "{heartbeat}"\nreconcile = "2s"\nallow_async_replication = true\n'
            f"software_record = {json.dumps(str(self.software))}\n"
        ]
        lines.append(
            '[levels.primary]\nseed = "$5,000"\nreset = "$5,000"\nincrement_rate = "21%"\nmax_wager = "$5"\n'
            'meter_pays = ["100%", "10%"]\n'
        )
        for i, t in enumerate(self.ids):
            lines.append(f'[tables.{t}]\nasset = "A-{10001 + i}"\ngame = "six-card-fortune"\n')
        self.lap_toml = tmp / "lap.toml"
        self.lap_toml.write_text("\n".join(lines))
        self.lap: subprocess.Popen[bytes] | None = None
        self.uplinks: dict[str, subprocess.Popen[bytes]] = {}
        self.tables: dict[str, Any] = {t: TableEnd(t, tmp) for t in self.ids} if make_table else {}
        self.store: Any = None

    def role(self, tid: str) -> str:
        return f"{self.schema}_{tid.lower()}"

    def uplink_dsn(self, tid: str) -> str:
        import psycopg

        kw: dict[str, Any] = {"user": self.role(tid)}
        if self.proxy is not None:
            kw.update(host="127.0.0.1", port=self.proxy.port)
        return str(psycopg.conninfo.make_conninfo(self.dsn, **kw))

    def start_lap(self) -> None:
        self.lap = subprocess.Popen(
            [*TABLECTL, "lap", "--sim", "--db", self.dsn, "--config", str(self.lap_toml)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def start_uplink(self, tid: str) -> None:
        cfg = self.tmp / f"{tid}.uplink.toml"
        t = self.tables[tid]
        cfg.write_text(
            f'[uplink]\ndb = {json.dumps(self.uplink_dsn(tid))}\nschema = "{self.schema}"\ntable = "{tid}"\n'
            f"ledger = {json.dumps(str(t.ledger_path))}\nsocket = {json.dumps(str(t.sock))}\n"
            f"key_file = {json.dumps(str(t.key_file))}\nsoftware_record = {json.dumps(str(self.software))}\n"
        )
        self.uplinks[tid] = subprocess.Popen(
            [*TABLECTL, "uplink", "--sim", "--config", str(cfg)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )

    def kill(self, proc: subprocess.Popen[bytes] | None) -> None:
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)

    def start(self, timeout: float = 60) -> None:
        from controller.link.lap import LapStore, connect, wait_until

        self.start_lap()
        self.store = LapStore(connect(self.dsn), self.schema)
        if not wait_until(
            lambda: self.store.installed() is not None and self.store.state() == "running", timeout, 0.05
        ):
            raise RuntimeError("the LAP did not start")
        for t in self.ids:
            self.start_uplink(t)
        if not wait_until(lambda: all(te.is_open() for te in self.tables.values()), timeout, 0.05):
            raise RuntimeError("the links did not open")

    def reconnect_store(self) -> None:
        """A fresh connection for the bench's own queries (after PostgreSQL restarted)."""
        from controller.link.lap import LapStore, connect

        if self.store is not None:
            with contextlib.suppress(Exception):
                self.store.conn.close()
        self.store = LapStore(connect(self.dsn), self.schema)

    def lap_count(self, what: str = "contributions") -> int:
        return int(self.store._rows(f"SELECT count(*) AS n FROM {{s}}.{what}")[0]["n"])

    def close(self) -> None:
        for p in self.uplinks.values():
            self.kill(p)
        if self.lap is not None and self.lap.poll() is None:
            self.lap.send_signal(signal.SIGTERM)
            try:
                self.lap.wait(10)
            except subprocess.TimeoutExpired:
                self.kill(self.lap)
        for te in self.tables.values():
            te.close()
        if self.store is not None:
            self.store.conn.close()
        if self.proxy is not None:
            self.proxy.close()
        from hil.linksim import drop_schema

        with contextlib.suppress(Exception):
            drop_schema(self.dsn, self.schema)


def env_note() -> str:
    return f"{os.cpu_count()} cpu"
