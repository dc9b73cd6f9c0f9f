"""A throwaway PostgreSQL primary with a streaming standby, for failover tests and the chaos bench.

``initdb`` the primary (``fsync=on``), ``pg_basebackup -R`` the standby from it, both on
127.0.0.1 on ports of their own.  The standby's replication connection runs through a
:class:`hil.netproxy.NetProxy` so a test can make it lag (``hold`` it: the primary goes on
committing, the standby receives nothing — an asynchronous standby that lags).

* ``sync=True``: the primary waits for the standby's flush at every commit
  (``synchronous_standby_names``, ``synchronous_commit = on``): a committed transaction is on both.
* :meth:`PgPair.failover`: the primary is stopped (``-m immediate``: a crash) and the standby
  promoted.  The DSN (``host=127.0.0.1,127.0.0.1 port=P1,P2 target_session_attrs=read-write``)
  then reaches the new primary.  :meth:`PgPair.rebuild_standby` makes a new standby of it on the
  old primary's port (``pg_basebackup`` again), so the pair can fail over once more.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from controller.lap.pgtemp import PgUnavailable, find_bin, free_port, write_conf
from hil.netproxy import NetProxy

STANDBY_NAME = "standby"
_QUIET = {"stdin": subprocess.DEVNULL, "capture_output": True}


@dataclass
class Node:
    data: Path
    port: int
    log: Path


@dataclass
class PgPair:
    base: Path
    run_as: list[str]
    sync: bool
    nodes: list[Node]  # [primary, standby] (the order changes at each failover)
    proxy: NetProxy | None = None
    failovers: int = 0
    generation: int = 0
    _bins: dict[str, str] = field(default_factory=dict)

    # ------------------------------------------------------------------ addresses
    @property
    def primary(self) -> Node:
        return self.nodes[0]

    @property
    def standby(self) -> Node:
        return self.nodes[1]

    @property
    def dsn(self) -> str:
        """Both hosts; libpq tries them in turn and keeps the one that takes writes."""
        ports = ",".join(str(n.port) for n in sorted(self.nodes, key=lambda n: n.port))
        return (
            f"host=127.0.0.1,127.0.0.1 port={ports} user=postgres dbname=postgres "
            "target_session_attrs=read-write connect_timeout=3"
        )

    def node_dsn(self, node: Node) -> str:
        return f"host=127.0.0.1 port={node.port} user=postgres dbname=postgres connect_timeout=3"

    # ------------------------------------------------------------------ commands
    def _bin(self, name: str) -> str:
        if name not in self._bins:
            self._bins[name] = find_bin(name)
        return self._bins[name]

    def _run(self, *cmd: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([*self.run_as, *cmd], check=check, **_QUIET)  # type: ignore[call-overload,no-any-return]

    def pg_ctl(self, node: Node, *args: str, check: bool = True) -> None:
        self._run(self._bin("pg_ctl"), "-D", str(node.data), "-l", str(node.log), "-w", "-t", "60", *args, check=check)

    def sql(self, node: Node, text: str) -> None:
        import psycopg

        with psycopg.connect(self.node_dsn(node), autocommit=True) as c:
            c.execute(text.encode())

    # ------------------------------------------------------------------ the pair
    def make_standby(self, of: Node, at: Node) -> None:
        """A standby of ``of`` in ``at``'s place (its data directory made anew), streaming
        through the proxy (retargeted to ``of``)."""
        assert self.proxy is not None
        self.proxy.retarget("127.0.0.1", of.port)
        self.proxy.release()
        shutil.rmtree(at.data, ignore_errors=True)
        self._run(
            self._bin("pg_basebackup"),
            *("-D", str(at.data), "-h", "127.0.0.1", "-p", str(self.proxy.port), "-U", "postgres"),
            *("-R", "-X", "stream", "-c", "fast", "--no-sync"),
        )
        # postgresql.conf came from the primary: this node's own port; its name for the
        # primary's synchronous_standby_names
        write_conf(at.data, at.port, self.base, {"cluster_name": STANDBY_NAME, "hot_standby": "on"})
        self.pg_ctl(at, "start")

    def failover(self) -> float:
        """Crash the primary (``pg_ctl stop -m immediate``), promote the standby; the seconds
        from the crash until the new primary takes writes."""
        old, new = self.primary, self.standby
        t0 = time.monotonic()
        self.pg_ctl(old, "-m", "immediate", "stop", check=False)
        if self.proxy is not None:
            self.proxy.cut()  # the standby's stream from the old primary
            self.proxy.release()
        self.pg_ctl(new, "promote")
        # alone now: a synchronous primary without a standby would wait at every commit for
        # one (Patroni and pg_auto_failover turn it off until a standby is back)
        self.sql(new, "ALTER SYSTEM SET synchronous_standby_names = ''")
        self.sql(new, "SELECT pg_reload_conf()")
        self.nodes = [new, old]
        self.failovers += 1
        return time.monotonic() - t0

    def rebuild_standby(self) -> None:
        """A new standby of the current primary on the old primary's port (synchronous again
        when the pair is)."""
        self.pg_ctl(self.standby, "-m", "immediate", "stop", check=False)
        self.make_standby(self.primary, self.standby)
        if self.sync:
            self.sql(self.primary, f"ALTER SYSTEM SET synchronous_standby_names = '{STANDBY_NAME}'")
            self.sql(self.primary, "SELECT pg_reload_conf()")
            self.wait_streaming()

    def wait_streaming(self, timeout: float = 30) -> None:
        import psycopg

        end = time.monotonic() + timeout
        want = "sync" if self.sync else "async"
        while time.monotonic() < end:
            with psycopg.connect(self.node_dsn(self.primary), autocommit=True) as c:
                row = c.execute(
                    "SELECT sync_state FROM pg_stat_replication WHERE application_name = %s", (STANDBY_NAME,)
                ).fetchone()
            if row is not None and row[0] == want:
                return
            time.sleep(0.1)
        raise PgUnavailable(f"the standby is not streaming ({want}) after {timeout:.0f} s")

    def lag_bytes(self) -> int:
        """WAL the primary wrote that the standby has not flushed."""
        import psycopg

        with psycopg.connect(self.node_dsn(self.primary), autocommit=True) as c:
            row = c.execute(
                "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), flush_lsn) FROM pg_stat_replication"
                " WHERE application_name = %s",
                (STANDBY_NAME,),
            ).fetchone()
        return int(row[0]) if row and row[0] is not None else -1

    def stop(self) -> None:
        for n in self.nodes:
            self.pg_ctl(n, "-m", "immediate", "stop", check=False)
        if self.proxy is not None:
            self.proxy.close()


@contextlib.contextmanager
def temp_pair(*, sync: bool = True, max_connections: int = 200, prefix: str = "tablectl-pgpair-") -> Iterator[PgPair]:
    """A primary and its standby (synchronous or not), stopped and removed afterwards."""
    base = Path(tempfile.mkdtemp(prefix=prefix))
    run_as: list[str] = []
    if os.geteuid() == 0:
        user = os.environ.get("TABLECTL_PG_USER", "nobody")
        pw = pwd.getpwnam(user)
        os.chown(base, pw.pw_uid, pw.pw_gid)
        os.chmod(base, 0o700)
        run_as = ["runuser", "-u", user, "--"]
    a = Node(base / "a", free_port(), base / "a.log")
    b = Node(base / "b", free_port(), base / "b.log")
    pair = PgPair(base, run_as, sync, [a, b])
    try:
        pair._run(pair._bin("initdb"), "-D", str(a.data), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")
        settings = {
            "fsync": "on",
            "max_connections": str(max_connections),
            "wal_level": "replica",
            "synchronous_commit": "on",
            "synchronous_standby_names": STANDBY_NAME if sync else "",
            "wal_keep_size": "256MB",
        }
        write_conf(a.data, a.port, base, settings)
        pair.pg_ctl(a, "start")
        pair.proxy = NetProxy("127.0.0.1", a.port)
        pair.make_standby(a, b)
        pair.wait_streaming()
    except (subprocess.CalledProcessError, PgUnavailable) as e:
        err = getattr(e, "stderr", b"") or b""
        logs = "".join(n.log.read_text(errors="replace")[-1500:] for n in (a, b) if n.log.exists())
        pair.stop()
        shutil.rmtree(base, ignore_errors=True)
        raise PgUnavailable(
            f"throwaway primary/standby did not start: {e} {err.decode(errors='replace')} {logs}"
        ) from None
    try:
        yield pair
    finally:
        pair.stop()
        shutil.rmtree(base, ignore_errors=True)
