"""A throwaway PostgreSQL high-availability cluster run by Patroni, as a casino's IT runs one: three
Patroni members (PostgreSQL 15 from the machine), etcd as their distributed configuration store,
synchronous mode on, all on 127.0.0.1 on ports of their own (docs/linked.md, "Running the LAP's
database on Patroni").  The LAP, the uplinks and the floor view reach it only through
:attr:`PatroniCluster.dsn`: every member's address, ``target_session_attrs=read-write``, so libpq
finds whichever member Patroni made the primary.

The failover is Patroni's own, never one of ours: :meth:`PatroniCluster.kill_primary` only
SIGKILLs the primary's postmaster (``primary_start_timeout = 0``: Patroni does not try to restart
a crashed primary in place, it promotes the synchronous standby, which holds every acknowledged
commit) and then watches.

PostgreSQL refuses to run as root: under root, etcd and Patroni run as an unprivileged user
(``nobody``, or ``TABLECTL_PG_USER``) with the machine's ``python3`` and Patroni from this
environment's site-packages (copied into the cluster's directory when that user cannot read them).
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.lap.pgtemp import PgUnavailable, find_bin, free_port

#: Patroni's timings (seconds).  ``ttl`` is the leader key's lifetime in etcd (a dead member's
#: key lapses after it: Patroni's minimum is 20), ``loop_wait`` its cycle, ``retry_timeout`` how
#: long it retries etcd and PostgreSQL before demoting itself.
TIMINGS = {"ttl": 20, "loop_wait": 1, "retry_timeout": 5}


@dataclass
class Member:
    name: str
    pg_port: int
    api_port: int
    data: Path
    log: Path
    proc: subprocess.Popen[bytes] | None = None


@dataclass
class PatroniCluster:
    base: Path
    run_as: list[str]
    scope: str
    etcd_port: int
    members: list[Member]
    python: list[str]
    etcd: subprocess.Popen[bytes] | None = None
    failovers: int = 0
    _env: dict[str, str] = field(default_factory=dict)

    # ------------------------------------------------------------------ addresses
    @property
    def dsn(self) -> str:
        """Every member; libpq tries them in turn and keeps the one that takes writes."""
        hosts = ",".join("127.0.0.1" for _ in self.members)
        ports = ",".join(str(m.pg_port) for m in self.members)
        return (
            f"host={hosts} port={ports} user=postgres dbname=postgres target_session_attrs=read-write connect_timeout=3"
        )

    def member_dsn(self, m: Member) -> str:
        return f"host=127.0.0.1 port={m.pg_port} user=postgres dbname=postgres connect_timeout=3"

    # ------------------------------------------------------------------ what Patroni says
    def cluster(self) -> list[dict[str, Any]]:
        """Patroni's view of its members (``GET /cluster`` on the first member that answers)."""
        for m in self.members:
            with contextlib.suppress(OSError, ValueError):
                with urllib.request.urlopen(f"http://127.0.0.1:{m.api_port}/cluster", timeout=2) as r:
                    return list(json.loads(r.read())["members"])
        return []

    def role_of(self, role: str) -> list[Member]:
        names = {
            x["name"] for x in self.cluster() if x.get("role") == role and x.get("state") in ("running", "streaming")
        }
        return [m for m in self.members if m.name in names]

    def leader(self) -> Member | None:
        lead = self.role_of("leader")
        return lead[0] if lead else None

    def healthy(self) -> bool:
        """A leader, a synchronous standby streaming, every member running or streaming."""
        got = self.cluster()
        states = {x["name"]: (x.get("role"), x.get("state")) for x in got}
        if len(states) != len(self.members) or any(s not in ("running", "streaming") for _r, s in states.values()):
            return False
        roles = [r for r, _s in states.values()]
        return roles.count("leader") == 1 and "sync_standby" in roles

    def wait_healthy(self, timeout: float = 120) -> float:
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if self.healthy():
                return time.monotonic() - t0
            time.sleep(0.25)
        raise PgUnavailable(f"the Patroni cluster is not healthy after {timeout:.0f} s: {self.cluster()}")

    def writable(self) -> bool:
        import psycopg

        try:
            with psycopg.connect(self.dsn, autocommit=True) as c:
                c.execute("CREATE TEMP TABLE probe (x int)")
                return True
        except psycopg.Error:
            return False

    def postmaster_pid(self, m: Member) -> int | None:
        with contextlib.suppress(OSError, ValueError, IndexError):
            return int((m.data / "postmaster.pid").read_text().split()[0])
        return None

    # ------------------------------------------------------------------ faults
    def kill_primary(self, timeout: float = 60) -> tuple[str, str, float]:
        """SIGKILL the primary's postmaster; (the old primary, the new, seconds until the cluster
        takes writes again through :attr:`dsn`).  The new one is the old one when Patroni had no
        synchronous standby ready to promote (one still catching up after the last failover): it
        then restarts the crashed primary in place, as it should."""
        old = self.leader()
        if old is None:
            raise PgUnavailable(f"no Patroni leader to kill: {self.cluster()}")
        pid = self.postmaster_pid(old)
        if pid is None:
            raise PgUnavailable(f"{old.name}: no postmaster.pid in {old.data}")
        t0 = time.monotonic()
        os.kill(pid, signal.SIGKILL)
        while time.monotonic() - t0 < timeout:
            new = self.leader()
            if new is not None and (new is not old or self.postmaster_pid(new) != pid) and self.writable():
                self.failovers += new is not old
                return old.name, new.name, time.monotonic() - t0
            time.sleep(0.1)
        raise PgUnavailable(
            f"no new primary {timeout:.0f} s after {old.name}'s postmaster was killed: {self.cluster()}"
        )

    def kill_host(self, timeout: float = 120) -> tuple[str, str, float]:
        """The primary's whole host dies: its Patroni and its postmaster SIGKILLed together (its
        leader key in etcd lapses after ``ttl``); as :meth:`kill_primary`."""
        old = self.leader()
        if old is None:
            raise PgUnavailable(f"no Patroni leader to kill: {self.cluster()}")
        pids = [p for p in (self.patroni_pid(old), self.postmaster_pid(old)) if p is not None]
        t0 = time.monotonic()
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        while time.monotonic() - t0 < timeout:
            new = self.leader()
            if new is not None and new is not old and self.writable():
                self.failovers += 1
                return old.name, new.name, time.monotonic() - t0
            time.sleep(0.2)
        raise PgUnavailable(f"no new primary {timeout:.0f} s after {old.name}'s host died: {self.cluster()}")

    def patroni_pid(self, m: Member) -> int | None:
        """The member's Patroni process: the Python one whose command line names the member's
        configuration (not ``runuser``, its parent)."""
        conf = str(self.base / f"{m.name}.yml").encode()
        for d in filter(str.isdigit, os.listdir("/proc")):
            with contextlib.suppress(OSError):
                args = Path(f"/proc/{d}/cmdline").read_bytes().split(b"\0")
                if conf in args and b"patroni" in args and Path(f"/proc/{d}/comm").read_text().startswith("python"):
                    return int(d)
        return None

    # ------------------------------------------------------------------ life
    def start(self) -> None:
        self._start_etcd()
        for m in self.members:
            self._start_member(m)
            if m is self.members[0]:  # the first bootstraps the cluster; the others clone it
                self._wait(lambda: self.leader() is not None, 120, "the first member did not become the leader")

    def _wait(self, pred: Any, timeout: float, what: str) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if pred():
                return
            time.sleep(0.2)
        raise PgUnavailable(f"{what} within {timeout:.0f} s")

    def _start_etcd(self) -> None:
        etcd = shutil.which("etcd")
        if etcd is None:
            raise PgUnavailable(
                "no etcd: install Debian's etcd-server (`apt-get install etcd-server`; ./bootstrap does)"
            )
        peer = free_port()
        url = f"http://127.0.0.1:{self.etcd_port}"
        cmd = [
            etcd,
            *("--name", "etcd1", "--data-dir", str(self.base / "etcd")),
            *("--listen-client-urls", url, "--advertise-client-urls", url),
            *("--listen-peer-urls", f"http://127.0.0.1:{peer}"),
            *("--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}"),
            *("--initial-cluster", f"etcd1=http://127.0.0.1:{peer}", "--initial-cluster-state", "new"),
        ]
        with (self.base / "etcd.log").open("ab") as log:
            self.etcd = subprocess.Popen([*self.run_as, *cmd], stdout=log, stderr=subprocess.STDOUT)
        self._wait(self._etcd_up, 30, "etcd did not answer")

    def _etcd_up(self) -> bool:
        with contextlib.suppress(OSError, ValueError):
            with urllib.request.urlopen(f"http://127.0.0.1:{self.etcd_port}/health", timeout=1) as r:
                return bool(json.loads(r.read()).get("health") == "true")
        return False

    def _config(self, m: Member) -> dict[str, Any]:
        trust = ["local all all trust", "host all all 127.0.0.1/32 trust", "host replication all 127.0.0.1/32 trust"]
        return {
            "scope": self.scope,
            "namespace": "/tablectl/",
            "name": m.name,
            "restapi": {"listen": f"127.0.0.1:{m.api_port}", "connect_address": f"127.0.0.1:{m.api_port}"},
            "etcd3": {"hosts": [f"127.0.0.1:{self.etcd_port}"]},
            "bootstrap": {
                "dcs": {
                    **TIMINGS,
                    "maximum_lag_on_failover": 1048576,
                    # a crashed primary is not restarted in place: its synchronous standby is promoted
                    "primary_start_timeout": 0,
                    "synchronous_mode": True,
                    "postgresql": {"use_pg_rewind": True, "use_slots": True, "parameters": _PG_PARAMETERS},
                },
                "initdb": [{"encoding": "UTF8"}, {"auth": "trust"}],
                "pg_hba": trust,
            },
            "postgresql": {
                "listen": f"127.0.0.1:{m.pg_port}",
                "connect_address": f"127.0.0.1:{m.pg_port}",
                "data_dir": str(m.data),
                "bin_dir": _bin_dir(),
                "pgpass": str(self.base / f"{m.name}.pgpass"),
                "authentication": {
                    "superuser": {"username": "postgres", "password": "postgres"},
                    "replication": {"username": "replicator", "password": "replicator"},
                    "rewind": {"username": "postgres", "password": "postgres"},
                },
                "parameters": {"unix_socket_directories": str(self.base)},
                "pg_hba": trust,
            },
            "tags": {"nofailover": False, "noloadbalance": False, "clonefrom": False, "nosync": False},
        }

    def _start_member(self, m: Member) -> None:
        conf = self.base / f"{m.name}.yml"
        conf.write_text(json.dumps(self._config(m)))  # YAML is a superset of JSON
        with m.log.open("ab") as log:
            m.proc = subprocess.Popen(
                [*self.run_as, *self.python, str(conf)], stdout=log, stderr=subprocess.STDOUT, env=self._env
            )

    def stop(self) -> None:
        """Patroni asked to stop each member (it stops PostgreSQL), then whatever is left killed."""
        for m in self.members:
            if m.proc is not None and m.proc.poll() is None:
                m.proc.send_signal(signal.SIGTERM)
        for m in self.members:
            _end(m.proc, 20)
            pid = self.postmaster_pid(m)
            if pid is not None:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)  # a postmaster Patroni left behind
        if self.etcd is not None and self.etcd.poll() is None:
            self.etcd.terminate()
        _end(self.etcd, 10)

    def logs(self, tail: int = 1500) -> str:
        out = []
        for p in [self.base / "etcd.log", *(m.log for m in self.members)]:
            with contextlib.suppress(OSError):
                out.append(f"--- {p.name}\n" + p.read_text(errors="replace")[-tail:])
        return "\n".join(out)


def _end(proc: subprocess.Popen[bytes] | None, wait_s: float) -> None:
    """Wait for a process told to stop; kill it past ``wait_s``."""
    if proc is None:
        return
    try:
        proc.wait(wait_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


_PG_PARAMETERS = {
    "fsync": "on",
    "synchronous_commit": "on",
    "wal_level": "replica",
    "hot_standby": "on",
    "wal_log_hints": "on",  # pg_rewind: the old primary rejoins as a standby
    "max_connections": 300,
    "max_wal_senders": 10,
    "max_replication_slots": 10,
    "wal_keep_size": "256MB",
}


def _bin_dir() -> str:
    """The newest PostgreSQL server's binaries (Debian keeps each major version's apart)."""
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]), reverse=True):
        if all(os.access(f"{d}/{b}", os.X_OK) for b in ("postgres", "pg_ctl", "initdb", "pg_isready", "pg_rewind")):
            return d
    return str(Path(find_bin("pg_ctl")).parent)


def _not_for_patroni(site: Path) -> Any:
    """copytree's ``ignore``: the big packages Patroni never imports (at the top level only: a
    module of the same name inside a package stays), and byte code."""
    big = ("mypy", "numpy", "hypothesis", "ruff", "reportlab", "radon", "pytest", "_pytest")

    def ignore(d: str, names: list[str]) -> set[str]:
        top = Path(d) == site
        return {n for n in names if n == "__pycache__" or (top and n.split("-")[0].split(".")[0] in big)}

    return ignore


def _patroni_python(base: Path, run_as: list[str]) -> tuple[list[str], dict[str, str]]:
    """How the unprivileged user runs Patroni: the machine's python3 with this environment's
    site-packages on its path (copied under ``base`` when that user cannot read them)."""
    import patroni  # type: ignore[import-untyped]

    site = Path(patroni.__file__).resolve().parent.parent
    python = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
    if run_as and subprocess.run([*run_as, "test", "-r", str(site / "patroni" / "__init__.py")]).returncode != 0:
        copy = base / "site"
        shutil.copytree(site, copy, ignore=_not_for_patroni(site))
        site = copy
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1"}
    if run_as:
        env["HOME"] = str(base)
    return [python, "-m", "patroni"], env


@contextlib.contextmanager
def temp_patroni(members: int = 3, *, prefix: str = "tablectl-patroni-") -> Iterator[PatroniCluster]:
    """A healthy three-member cluster (a leader, a synchronous standby, a replica), stopped and
    removed afterwards."""
    base = Path(tempfile.mkdtemp(prefix=prefix))
    run_as: list[str] = []
    if os.geteuid() == 0:
        user = os.environ.get("TABLECTL_PG_USER", "nobody")
        pw = pwd.getpwnam(user)
        os.chown(base, pw.pw_uid, pw.pw_gid)
        os.chmod(base, 0o700)
        run_as = ["runuser", "-u", user, "--"]
    nodes = [
        Member(f"pg{i + 1}", free_port(), free_port(), base / f"pg{i + 1}", base / f"pg{i + 1}.log")
        for i in range(members)
    ]
    python, env = _patroni_python(base, run_as)
    if run_as:
        subprocess.run(["chown", "-R", f"{run_as[2]}:", str(base)], check=True)
    cl = PatroniCluster(base, run_as, f"tablectl-{uuid.uuid4().hex[:8]}", free_port(), nodes, python, _env=env)
    try:
        cl.start()
        cl.wait_healthy()
    except BaseException as e:
        logs = cl.logs()
        cl.stop()
        shutil.rmtree(base, ignore_errors=True)
        if isinstance(e, PgUnavailable):
            raise PgUnavailable(f"{e}\n{logs}") from None
        raise
    try:
        yield cl
    finally:
        cl.stop()
        shutil.rmtree(base, ignore_errors=True)
