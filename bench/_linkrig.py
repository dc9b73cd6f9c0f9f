"""A pit for the link benchmarks: the LAP (``tablectl lap``) and one uplink per table
(``tablectl uplink``) as real processes, PostgreSQL (``--db`` or a throwaway cluster), and on
the table side of each link socket the table's own pieces: its SQLite ledger (the outbox) and a
:class:`controller.play.linked.Linkage` fed by the same socket (controller/play/linked.py ``LinkPort``).
Optionally every uplink reaches PostgreSQL through TCP proxies the bench can cut or hold
(hil/netproxy.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.books.ledger import Ledger, Record
from controller.books.ledgerkey import init_key, read_key
from controller.core.records import Kind
from controller.play.linked import Linkage, LinkPort
from hil.netproxy import NetProxy

TABLECTL = [sys.executable, "-m", "controller.cli"]


@contextlib.contextmanager
def database(dsn: str | None, *, fsync: bool = True, max_connections: int = 300) -> Iterator[str]:
    """``dsn``, or a throwaway cluster as production runs it (``fsync=on``) with room for a pit
    of 200 tables (each table's uplink, the LAP, the floor view)."""
    if dsn:
        yield dsn
        return
    from controller.lap.pgtemp import temp_cluster

    with temp_cluster(prefix="tablectl-bench-pg-", fsync=fsync, max_connections=max_connections) as d:
        yield d


def _cpu_ticks(pid: int) -> tuple[int, int, int]:
    """(ppid, own utime+stime, reaped children's cutime+cstime) in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        rest = f.read().rsplit(")", 1)[1].split()
    return int(rest[1]), int(rest[11]) + int(rest[12]), int(rest[13]) + int(rest[14])


def postmaster_pid(dsn: str) -> int | None:
    """The PostgreSQL server's postmaster on this machine (its data directory's postmaster.pid),
    or None when it is elsewhere or not readable."""
    import psycopg

    try:
        with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as c:
            row = c.execute("SHOW data_directory").fetchone()
        pid = int(Path(str(row[0] if row else ""), "postmaster.pid").read_text().split()[0])
        _cpu_ticks(pid)
    except (OSError, ValueError, IndexError, psycopg.Error):
        return None
    return pid


def db_cpu_s(postmaster: int) -> float:
    """CPU seconds the database's processes have used: the postmaster's own and every live
    child's (backends, WAL writer, checkpointer...) by the scheduler's own count, and its reaped
    children's (backends that have exited) by clock ticks, the only count the kernel keeps of
    them.  A difference of two readings is the database's CPU between them.  (All by clock
    ticks, an idle pit's backends, each running a tenth of a millisecond at a time, were
    sampled, not counted: the whole server's figure and its backends' own, counted, disagreed.)"""
    _pp, _own, reaped = _cpu_ticks(postmaster)
    total = _run_s(postmaster) + reaped / os.sysconf("SC_CLK_TCK")
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) != postmaster:
            try:
                ppid, _mine, _r = _cpu_ticks(int(d))
                if ppid == postmaster:
                    total += _run_s(int(d))
            except (OSError, IndexError, ValueError):
                continue
    return total


def _run_s(pid: int) -> float:
    """The seconds ``pid`` has run, by the scheduler's count (nanoseconds)."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9


def backends_cpu_s(dsn: str, role_prefix: str) -> dict[int, float]:
    """CPU seconds each live backend of the roles named ``role_prefix…`` has used (this pit's
    uplinks): on a server other work shares, the pit's own cost, which the whole server's
    (:func:`db_cpu_s`) is not.  Compare two readings over the pids in both."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as c:
        pids = [
            r[0] for r in c.execute("SELECT pid FROM pg_stat_activity WHERE starts_with(usename, %s)", (role_prefix,))
        ]
    out = {}
    for pid in pids:
        try:
            # the scheduler's own count, in nanoseconds: an idle uplink's backend runs for a tenth of
            # a millisecond at a time, which clock ticks (sampled) miss or overcount
            out[pid] = _run_s(pid)
        except (OSError, IndexError, ValueError):
            continue
    return out


class Proxies:
    """One :class:`hil.netproxy.NetProxy` per host of the DSN (a multi-host DSN keeps its hosts:
    the uplinks' ``target_session_attrs`` still picks the primary through them)."""

    def __init__(self, dsn: str):
        import psycopg

        info = psycopg.conninfo.conninfo_to_dict(dsn)
        hosts = str(info.get("host") or "127.0.0.1").split(",")
        ports = str(info.get("port") or "5432").split(",")
        if len(ports) == 1:
            ports = ports * len(hosts)
        self.each = [NetProxy(h, int(p)) for h, p in zip(hosts, ports)]

    def conninfo(self) -> dict[str, str]:
        return {"host": ",".join("127.0.0.1" for _ in self.each), "port": ",".join(str(p.port) for p in self.each)}

    def cut(self) -> int:
        return sum(p.cut() for p in self.each)

    def hold(self, seconds: float | None = None) -> int:
        return sum(p.hold(seconds) for p in self.each)

    def blackhole(self) -> int:
        return sum(p.blackhole() for p in self.each)

    def release(self) -> None:
        for p in self.each:
            p.release()

    def close(self) -> None:
        for p in self.each:
            p.close()


class ProxyGroup:
    """Several :class:`Proxies` acted on as one (a pit whose every table has its own, so that
    a fault can hit one table's link or all of them)."""

    def __init__(self, members: list[Proxies]):
        self.members = members

    @property
    def each(self) -> list[NetProxy]:
        return [p for m in self.members for p in m.each]

    def cut(self) -> int:
        return sum(m.cut() for m in self.members)

    def hold(self, seconds: float | None = None) -> int:
        return sum(m.hold(seconds) for m in self.members)

    def blackhole(self) -> int:
        return sum(p.blackhole() for p in self.each)

    def release(self) -> None:
        for m in self.members:
            m.release()

    def close(self) -> None:
        for m in self.members:
            m.close()


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
            self._changed(self.link.change())

    def _changed(self, ch: Any) -> None:
        """When the linked wager last closed (the uplink's own deadline may close it by a
        message, before the table's tick does)."""
        if ch is not None and ch[0] is False:
            self.closed_at = time.monotonic()

    closed_at: float | None = None

    def tick(self) -> bool | None:
        with self.lock:
            ch = self.link.change()
            self._changed(ch)
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


@dataclass(frozen=True, slots=True)
class LinkSetup:
    """How the pit's links run."""

    heartbeat: str = "200ms"  # the LAP's [link] heartbeat
    #: the uplinks reach PostgreSQL through TCP proxies (``Pit.proxy``); with ``proxy_each`` each
    #: table's uplink through its own (``Pit.proxy_of``), so that a fault can hit one table's link,
    #: and the LAP reaches it through one of its own (``Pit.lap_proxy``)
    proxy: bool = False
    proxy_each: bool = False
    tls: Any = None  # None: TLS on a throwaway cluster; False: none; a Pki: that one (Pit._tls)


class Pit:
    def __init__(self, dsn: str, tables: int, tmp: Path, *, links: LinkSetup | None = None, make_table: bool = True):
        """``links``: how the links run (None: the defaults); ``make_table``: the pit makes an
        in-process table end for each table (:class:`TableEnd`); else the caller sets :attr:`tables`."""
        links = links or LinkSetup()
        heartbeat, proxy, proxy_each, tls = links.heartbeat, links.proxy, links.proxy_each, links.tls
        self.dsn, self.tmp = dsn, tmp
        self.schema = f"bench_{uuid.uuid4().hex[:10]}"
        self.ids = [f"T{i + 1:02d}" for i in range(tables)]
        self.pki = self._tls(tmp, tls)
        self.proxy_of: dict[str, Proxies] = {t: Proxies(dsn) for t in self.ids} if proxy and proxy_each else {}
        self.lap_proxy: Proxies | None = Proxies(dsn) if proxy and proxy_each else None
        self.proxy: Proxies | ProxyGroup | None = (
            ProxyGroup(list(self.proxy_of.values())) if self.proxy_of else Proxies(dsn) if proxy else None
        )
        # the release's digest, checked by every LAP and uplink process before it operates
        # (--sim: a record in a directory the bench's user can write)
        from controller.boot.selfcheck import record_digest

        self.software = tmp / "software.json"
        record_digest(self.software)
        lines = [
            f'[link]\ngroup = "bench"\nschema = "{self.schema}"\nheartbeat = "{heartbeat}"\nreconcile = "2s"\n'
            "allow_async_replication = true\n"
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

    def _tls(self, tmp: Path, tls: Any) -> Any:
        """The link over TLS with each table's own client certificate (``sslmode=verify-full``,
        ``hostssl … clientcert=verify-full``: controller/lap/pgtls.py), as production runs it: by
        default whenever the database is a throwaway cluster (a given ``--db`` keeps its own setup)."""
        from controller.lap.pgtemp import CLUSTERS

        if tls not in (None, True, False):
            return tls  # a Pki the caller made its cluster with (a primary and its standby)
        if tls is False or (tls is None and self.dsn not in CLUSTERS):
            return None
        from controller.lap.pgtls import enable_tls, make_pki

        pki = make_pki(tmp / "pki")
        enable_tls(self.dsn, pki)
        return pki

    @property
    def tls_note(self) -> str:
        from controller.lap.pgtemp import CLUSTERS

        if self.pki is None:
            return "no (--no-tls)" if self.dsn in CLUSTERS else "no (the DSN given: its own setup)"
        return "TLS, sslmode=verify-full, a client certificate per table role (hostssl clientcert=verify-full)"

    def role(self, tid: str) -> str:
        return f"{self.schema}_{tid.lower()}"

    def uplink_dsn(self, tid: str) -> str:
        import psycopg

        kw: dict[str, Any] = {"user": self.role(tid)}
        if tid in self.proxy_of:
            kw.update(self.proxy_of[tid].conninfo())
        elif isinstance(self.proxy, Proxies):
            kw.update(self.proxy.conninfo())
        dsn = str(psycopg.conninfo.make_conninfo(self.dsn, **kw))
        return dsn if self.pki is None else str(self.pki.dsn(dsn, self.role(tid)))

    def lap_dsn(self) -> str:
        import psycopg

        if self.lap_proxy is None:
            return self.dsn
        return str(psycopg.conninfo.make_conninfo(self.dsn, **self.lap_proxy.conninfo()))

    def start_lap(self) -> None:
        with (self.tmp / "lap.log").open("ab") as log:  # what it said (a closed pit: why)
            self.lap = subprocess.Popen(
                [*TABLECTL, "lap", "--sim", "--db", self.lap_dsn(), "--config", str(self.lap_toml)],
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def start_uplink(self, tid: str) -> None:
        cfg = self.tmp / f"{tid}.uplink.toml"
        t = self.tables[tid]
        cfg.write_text(
            f'[uplink]\ndb = {json.dumps(self.uplink_dsn(tid))}\nschema = "{self.schema}"\ntable = "{tid}"\n'
            f"ledger = {json.dumps(str(t.ledger_path))}\nsocket = {json.dumps(str(t.sock))}\n"
            f"key_file = {json.dumps(str(t.key_file))}\nsoftware_record = {json.dumps(str(self.software))}\n"
            f"link_key_file = {json.dumps(str(self.tmp / f'{tid}.link.key'))}\n"
        )
        with (self.tmp / f"{tid}.uplink.log").open("ab") as log:  # what it said (capacity: why it failed)
            self.uplinks[tid] = subprocess.Popen(
                [*TABLECTL, "uplink", "--sim", "--config", str(cfg)], stdout=log, stderr=subprocess.STDOUT
            )

    def kill(self, proc: subprocess.Popen[bytes] | None) -> None:
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)

    def start(self, timeout: float | None = None) -> None:
        from controller.lap.lap import LapStore, connect, wait_until

        # each uplink starts a Python process and checks the release's digest: on a busy 2-core
        # machine a pit of 200 takes minutes
        timeout = timeout if timeout is not None else max(120.0, 3.0 * len(self.ids))
        self.start_lap()
        self.store = LapStore(connect(self.dsn), self.schema)
        if not wait_until(
            lambda: self.store.installed() is not None and self.store.state() == "running", timeout, 0.05
        ):
            raise RuntimeError("the LAP did not start")
        self.enrol()
        for t in self.ids:
            self.start_uplink(t)
        if not wait_until(lambda: all(te.is_open() for te in self.tables.values()), timeout, 0.05):
            raise RuntimeError("the links did not open")

    def enrol(self) -> None:
        """Each table's link key, as `tablectl lap --enrol-table` makes it, in a file its uplink reads."""
        from controller.lap.linkauth import write_key
        from controller.lap.linkkeys import enrol

        for t in self.ids:
            path = self.tmp / f"{t}.link.key"
            if not path.exists():
                write_key(path, enrol(self.store.conn, self.schema, t))

    def uplink_says(self, words: str) -> int:
        """How many uplinks' logs contain ``words`` (e.g. ``too many clients``)."""
        n = 0
        for tid in self.uplinks:
            with contextlib.suppress(OSError):
                n += words in (self.tmp / f"{tid}.uplink.log").read_text(errors="replace")
        return n

    def uplink_last_words(self, tid: str) -> str:
        with contextlib.suppress(OSError):
            lines = (self.tmp / f"{tid}.uplink.log").read_text(errors="replace").strip().splitlines()
            return lines[-1][:300] if lines else "(nothing)"
        return "(no log)"

    def reconnect_store(self) -> None:
        """A fresh connection for the bench's own queries (after PostgreSQL restarted)."""
        from controller.lap.lap import LapStore, connect

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
        if self.lap_proxy is not None:
            self.lap_proxy.close()
        from hil.linksim import drop_schema

        with contextlib.suppress(Exception):
            drop_schema(self.dsn, self.schema)


def env_note() -> str:
    return f"{os.cpu_count()} cpu"
