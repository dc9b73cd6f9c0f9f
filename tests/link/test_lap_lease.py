"""The standby LAP: leadership is a lease in PostgreSQL with a fencing epoch
(controller/lap/lease.py, controller/lap/schema_lease.py).  Exactly one LAP is active; a LAP
whose epoch is no longer the lease's has every write refused and steps down (9 NYCRR 5321.18:
a LAP recovers to its prior state; here, without a person).

The process tests run two real ``tablectl lap`` processes on one database, named by
``TABLECTL_LAP_NAME`` as two hosts would be by their host names."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from controller.lap import lease
from controller.lap.config import parse_lap
from controller.lap.lap import LapStore, connect, wait_until
from controller.lap.service import LapService
from tests.link.conftest import lap_doc


def _lease_row(dsn: str, schema: str) -> dict[str, Any]:
    with psycopg.connect(dsn, autocommit=True, row_factory=psycopg.rows.dict_row) as c:
        row = c.execute(sql.SQL("SELECT * FROM {}.lap_lease").format(sql.Identifier(schema))).fetchone()
    assert row is not None
    return row


def _link(dsn: str, schema: str) -> dict[str, Any]:
    with psycopg.connect(dsn, autocommit=True, row_factory=psycopg.rows.dict_row) as c:
        row = c.execute(sql.SQL("SELECT * FROM {}.link").format(sql.Identifier(schema))).fetchone()
    assert row is not None
    return row


# ---------------------------------------------------------------------------- the lease itself
def test_one_holder_at_a_time_and_a_lapsed_lease_goes_to_the_other(make_lap: Any) -> None:
    lap = make_lap()
    s = lap.cfg.schema
    with connect(lap.dsn) as other:
        assert lease.acquire(lap.store.conn, s, "host-a", 0.5) == 1
        assert lease.acquire(other, s, "host-b", 0.5) is None  # host-a's lease runs
        st = lease.status(other, s)
        assert st is not None and st.holder == "host-a" and st.live and "active LAP: host-a" in st.line()
        assert wait_until(lambda: not lease.status(other, s).live, 3)  # type: ignore[union-attr]
        assert "lapsed" in lease.status(other, s).line()  # type: ignore[union-attr]
        assert lease.acquire(other, s, "host-b", 5) == 2
        # the same host's LAP restarted takes its own lease back at once, with a new epoch
        assert lease.acquire(other, s, "host-b", 5) == 3
        log = lap.store._rows("SELECT epoch, holder, previous FROM {s}.lap_lease_log ORDER BY id")
    assert [(r["epoch"], r["holder"], r["previous"]) for r in log] == [
        (1, "host-a", "(none)"),
        (2, "host-b", "host-a"),
        (3, "host-b", "host-b"),
    ]


def test_every_write_of_a_lap_that_lost_the_lease_is_refused_and_changes_nothing(make_lap: Any) -> None:
    lap = make_lap()
    s = lap.cfg.schema
    old = LapStore(lap.store.conn, s, epoch=lease.acquire(lap.store.conn, s, "host-a", 0.2))
    old.heartbeat()  # the holder writes
    with connect(lap.dsn) as c:
        assert wait_until(lambda: lease.acquire(c, s, "host-b", 30) is not None, 3)
        new = LapStore(c, s, epoch=2)
        new.heartbeat()
        before = (_link(lap.dsn, s), lap.store.param_changes(), _lease_row(lap.dsn, s))
        svc = LapService(lap.cfg, lap.dsn, log=lambda m: None)
        writes = {
            "heartbeat": old.heartbeat,
            "set_state": lambda: old.set_state("stopped"),
            "set_inoperable": lambda: old.set_inoperable("forged"),
            "record_replication": lambda: old.record_replication("forged"),
            "push_meters": lambda: old.push_meters(-1),
            "guard": lambda: svc._keep_deadlines(old),
        }
        for name, write in writes.items():
            with pytest.raises(lease.LeaseLost, match="epoch 2 held by host-b: epoch 1 lost it"):
                write()
            assert old.conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE, name
        after = (_link(lap.dsn, s), lap.store.param_changes(), _lease_row(lap.dsn, s))
        assert after == before
        new.heartbeat()  # the holder still writes


def test_a_configuration_change_by_a_lap_that_lost_the_lease_is_refused(make_lap: Any) -> None:
    lap = make_lap()
    s = lap.cfg.schema
    lap.store.set_state("stopped")
    old = LapStore(lap.store.conn, s, epoch=lease.acquire(lap.store.conn, s, "host-a", 0.1))
    with connect(lap.dsn) as c:
        assert wait_until(lambda: lease.acquire(c, s, "host-b", 30) is not None, 3)
    doc = lap_doc(s)
    doc["levels"]["primary"]["increment_rate"] = "20%"
    with pytest.raises(lease.LeaseLost):
        old.configure(parse_lap(doc, "lap.toml"))
    assert old.differences(parse_lap(doc, "lap.toml")) != []  # nothing applied


def test_a_table_role_cannot_take_or_renew_the_lease(make_lap: Any) -> None:
    """Who can write the lease: the LAP's owner only; a table's role cannot make itself (or
    nobody) the active LAP, read the lease's holder or forge a grant's record."""
    lap = make_lap()
    s = sql.Identifier(lap.cfg.schema)
    t = lap.table("T1")
    for q in (
        "SELECT {s}.lease_acquire('evil', 600, 1)",
        "SELECT {s}.lease_renew(1)",
        "SELECT {s}.lease_hold(1)",
        "UPDATE {s}.lap_lease SET expires_at = now()",
        "SELECT * FROM {s}.lap_lease",
        "INSERT INTO {s}.lap_lease_log (epoch, holder, previous) VALUES (9, 'x', 'y')",
    ):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            t.execute(sql.SQL(q).format(s=s))
    assert _lease_row(lap.dsn, lap.cfg.schema)["epoch"] == 0


def test_the_lease_log_is_append_only_even_for_the_owner(make_lap: Any) -> None:
    lap = make_lap()
    lease.acquire(lap.store.conn, lap.cfg.schema, "host-a", 5)
    for q in (
        "UPDATE {s}.lap_lease_log SET holder = 'x'",
        "DELETE FROM {s}.lap_lease_log",
        "DELETE FROM {s}.lap_lease",
    ):
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
            lap.store.conn.execute(lap.store.q(q))


@pytest.mark.slow  # over 2 s on a quiet 2-core machine
def test_two_lap_services_one_active_the_other_takes_over_when_it_dies(pg_dsn: str, lap_schema: str) -> None:
    """In one process (the fast check; the real processes are below): the standby starts nothing
    while the active one beats, and takes over once the active one is killed."""
    cfg = parse_lap(lap_doc(lap_schema), "lap.toml")
    logs: dict[str, list[str]] = {"a": [], "b": []}
    a = LapService(cfg, pg_dsn, log=logs["a"].append, name="host-a")
    b = LapService(cfg, pg_dsn, log=logs["b"].append, name="host-b")
    ta = threading.Thread(target=a.run, daemon=True)
    ta.start()
    assert wait_until(lambda: any("host-a is the active LAP" in m for m in logs["a"]), 20)
    tb = threading.Thread(target=b.run, daemon=True)
    tb.start()
    try:
        assert wait_until(lambda: any("host-b is the standby; active LAP: host-a" in m for m in logs["b"]), 20)
        time.sleep(1)
        assert not any("running" in m for m in logs["b"]), logs["b"]
        a.kill()
        ta.join(10)
        assert wait_until(lambda: any("host-b is the active LAP (lease epoch 2" in m for m in logs["b"]), 15)
        assert wait_until(lambda: _link(pg_dsn, lap_schema)["state"] == "running", 10)
    finally:
        b.stop_event.set()
        tb.join(15)
    # a clean stop lets the lease go: nobody holds it now
    assert _lease_row(pg_dsn, lap_schema)["holder"] == "host-b"
    with connect(pg_dsn) as c:
        st = lease.status(c, lap_schema)
    assert st is not None and not st.live


def test_lap_check_says_which_host_is_active(pg_dsn: str, lap_schema: str, tmp_path: Path, capsys: Any) -> None:
    from controller.cli import main

    conf = _lap_toml(tmp_path, lap_schema)
    cfg = parse_lap(lap_doc(lap_schema), "lap.toml")
    a = LapService(cfg, pg_dsn, log=lambda m: None, name="pit-lap-1")
    store = a.start_link()
    try:
        assert main(["lap", "--sim", "--db", pg_dsn, "--config", str(conf), "--check"]) == 0
        out = capsys.readouterr().out
        assert "active LAP: pit-lap-1 (lease epoch 1" in out, out
    finally:
        store.conn.close()


def test_the_floor_view_says_which_host_is_active(make_lap: Any, pg_dsn: str) -> None:
    from controller.lap.floor import FloorData

    lap = make_lap(tables=1)
    data = FloorData(pg_dsn, lap.cfg.schema)
    try:
        assert data.snapshot()["active_lap"] == "active LAP: none yet (no LAP has held the lease)"
        lease.acquire(lap.store.conn, lap.cfg.schema, "pit-lap-2", 30)
        got = data.snapshot()["active_lap"]
        assert got.startswith("active LAP: pit-lap-2 (lease epoch 1, pid ") and "s left" in got, got
        lease.release(lap.store.conn, lap.cfg.schema, 1)
        assert "active LAP: NONE: the lease of pit-lap-2 (lease epoch 1" in data.snapshot()["active_lap"]
    finally:
        data.close()


# ---------------------------------------------------------------------------- real processes
def _lap_toml(tmp_path: Path, schema: str, heartbeat: str = "1s") -> Path:
    doc = lap_doc(schema)
    lines = [
        f'[link]\ngroup = "pit"\nschema = "{schema}"\nheartbeat = "{heartbeat}"\nallow_async_replication = true\n',
        '[levels.primary]\nseed = "$1,000"\nreset = "$1,000"\nincrement_rate = "21%"\nmax_wager = "$10"\n'
        'meter_pays = ["100%", "10%"]\n',
    ]
    lines += [f'[tables.{tid}]\nasset = "{t["asset"]}"\ngame = "{t["game"]}"\n' for tid, t in doc["tables"].items()]
    conf = tmp_path / "lap.toml"
    conf.write_text("\n".join(lines))
    return conf


class LapProc:
    """A ``tablectl lap`` process, its output collected line by line."""

    def __init__(self, dsn: str, conf: Path, name: str):
        env = {**os.environ, "TABLECTL_LAP_NAME": name, "PYTHONUNBUFFERED": "1"}
        exe = [sys.executable, "-m", "controller.cli", "lap", "--sim", "--db", dsn, "--config", str(conf)]
        self.name = name
        self.proc = subprocess.Popen(exe, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        self.lines: list[tuple[float, str]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append((time.monotonic(), line.rstrip()))

    def said(self, text: str) -> float | None:
        return next((t for t, line in list(self.lines) if text in line), None)

    def out(self) -> str:
        return "\n".join(line for _t, line in list(self.lines))

    def end(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def _two_laps(pg_dsn: str, conf: Path) -> tuple[LapProc, LapProc]:
    a = LapProc(pg_dsn, conf, "pit-lap-a")
    assert wait_until(lambda: a.said("lap: link pit running") is not None, 60), a.out()
    b = LapProc(pg_dsn, conf, "pit-lap-b")
    assert wait_until(lambda: b.said("pit-lap-b is the standby; active LAP: pit-lap-a") is not None, 60), b.out()
    return a, b


@pytest.mark.slow
def test_the_standby_lap_takes_over_within_10_s_of_the_active_ones_sigkill(
    pg_dsn: str, lap_schema: str, tmp_path: Path
) -> None:
    a, b = _two_laps(pg_dsn, _lap_toml(tmp_path, lap_schema))
    try:
        hb_before = _link(pg_dsn, lap_schema)["heartbeat_at"]
        killed = time.monotonic()
        a.proc.kill()
        assert wait_until(lambda: b.said("lap: link pit running") is not None, 20), b.out()
        took = b.said("lap: link pit running")
        assert took is not None
        elapsed = took - killed
        print(f"standby LAP running {elapsed:.2f} s after the active one's SIGKILL")
        assert elapsed < 10, b.out()
        assert wait_until(lambda: _link(pg_dsn, lap_schema)["heartbeat_at"] > hb_before, 5)
        row = _lease_row(pg_dsn, lap_schema)
        assert (row["holder"], row["epoch"]) == ("pit-lap-b", 2)
    finally:
        a.end()
        b.end()


@pytest.mark.slow
@pytest.mark.soak
def test_a_lap_paused_past_its_lease_has_every_write_refused_and_steps_down(
    pg_dsn: str, lap_schema: str, tmp_path: Path
) -> None:
    a, b = _two_laps(pg_dsn, _lap_toml(tmp_path, lap_schema))
    try:
        a.proc.send_signal(signal.SIGSTOP)
        assert wait_until(lambda: b.said("lap: link pit running") is not None, 20), b.out()
        new_pid = _link(pg_dsn, lap_schema)["lap_pid"]
        a.proc.send_signal(signal.SIGCONT)
        # its next write refused by the epoch — or, paused inside a write (holding the lease's row), its
        # session ended by the new LAP once idle past a lease's length: either way it cannot write
        stepped = ("pit-lap-a lost the lease, stepping down to standby", "lap: database unreachable")
        assert wait_until(lambda: any(a.said(m) is not None for m in stepped), 15), a.out()
        assert wait_until(lambda: a.said("pit-lap-a is the standby; active LAP: pit-lap-b") is not None, 10), a.out()
        # what the woken LAP would have written is not there: the heartbeat's row is still the new
        # LAP's session's, the lease still the new LAP's, the link still running
        for _ in range(6):
            link = _link(pg_dsn, lap_schema)
            assert (link["lap_pid"], link["state"]) == (new_pid, "running")
            time.sleep(0.5)
        row = _lease_row(pg_dsn, lap_schema)
        assert (row["holder"], row["epoch"]) == ("pit-lap-b", 2)
        assert a.proc.poll() is None  # a standby again, not dead
        # and it is a standby that works: the new active one dies, the old one takes over again
        b.proc.kill()
        assert wait_until(lambda: a.said("pit-lap-a is the active LAP (lease epoch 3") is not None, 20), a.out()
    finally:
        a.end()
        b.end()


def test_a_schema_without_the_lease_is_refused_with_a_reason(pg_dsn: str, lap_schema: str) -> None:
    """A schema an older release made (no ``lap_lease``): said, not a traceback."""
    from controller.lap.lap import LapError

    cfg = parse_lap(lap_doc(lap_schema), "lap.toml")
    with connect(pg_dsn) as c:
        LapStore(c, lap_schema).install("pit")
        for obj in ("FUNCTION {}.lease_acquire", "FUNCTION {}.lease_renew", "FUNCTION {}.lease_hold"):
            c.execute(sql.SQL("DROP " + obj + " CASCADE").format(sql.Identifier(lap_schema)))
        c.execute(sql.SQL("DROP TABLE {}.lap_lease CASCADE").format(sql.Identifier(lap_schema)))
    svc = LapService(cfg, pg_dsn, log=lambda m: None, name="host-a")
    with pytest.raises(LapError, match="without the LAP's lease"):
        svc.start_link()


def _floor_login(port: int) -> str:
    """A floor person's session cookie on the floor view at ``port`` (waits for it to serve)."""
    import http.client

    deadline = time.monotonic() + 60
    while True:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=3)
            c.request(
                "POST",
                "/login",
                "person=alice&pin=4821",
                {"Content-Type": "application/x-www-form-urlencoded", "Origin": f"http://127.0.0.1:{port}"},
            )
            resp = c.getresponse()
            assert resp.status == 303, resp.status
            return str(resp.getheader("Set-Cookie")).split(";")[0]
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)


def _floor_active(port: int, jar: str) -> str:
    import http.client
    import json

    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    c.request("GET", "/api/floor", headers={"Cookie": jar})
    return str(json.loads(c.getresponse().read())["active_lap"])


@pytest.mark.slow
def test_both_hosts_floor_views_say_which_lap_is_active(pg_dsn: str, lap_schema: str, tmp_path: Path) -> None:
    """Each LAP host serves its floor view, the standby's too; both say which host's LAP is active,
    and both follow a takeover."""
    import socket

    ports = []
    for _ in range(2):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
    confs = []
    for i, port in enumerate(ports):
        d = tmp_path / f"host{i}"
        d.mkdir()
        conf = _lap_toml(d, lap_schema)
        conf.write_text(conf.read_text() + f'\n[floor]\nport = {port}\nstaff = "staff.toml"\n')
        exe = [sys.executable, "-m", "controller.cli", "lap", "--sim", "--db", pg_dsn, "--config", str(conf)]
        r = subprocess.run([*exe, "--staff-pin", "alice:floorperson"], input="4821\n", capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        confs.append(conf)
    a = LapProc(pg_dsn, confs[0], "pit-lap-a")
    try:
        assert wait_until(lambda: a.said("lap: link pit running") is not None, 60), a.out()
        b = LapProc(pg_dsn, confs[1], "pit-lap-b")
        try:
            assert wait_until(lambda: b.said("pit-lap-b is the standby") is not None, 60), b.out()
            jars = [_floor_login(p) for p in ports]
            for port, jar in zip(ports, jars):
                assert _floor_active(port, jar).startswith("active LAP: pit-lap-a (lease epoch 1, pid ")
            a.proc.kill()
            assert wait_until(lambda: b.said("lap: link pit running") is not None, 20), b.out()
            assert _floor_active(ports[1], jars[1]).startswith("active LAP: pit-lap-b (lease epoch 2, pid ")
        finally:
            b.end()
    finally:
        a.end()


def test_a_session_the_network_swallowed_holding_the_lease_row_is_ended(make_lap: Any) -> None:
    """A LAP's connection swallowed in the middle of a write (its session idle in a transaction that
    holds the lease's row; the server would end it only at idle_in_transaction_session_timeout, a
    minute) kept the same host's LAP from taking its lease back: the pit stayed closed 60 s in a
    random chaos run.  Once idle past a lease's length, while the lease is the caller's or lapsed,
    it is ended; a live other LAP's write is never cut."""
    lap = make_lap()
    s = lap.cfg.schema
    ttl = 0.5
    assert lease.acquire(lap.store.conn, s, "host-a", ttl) == 1
    with psycopg.connect(lap.dsn) as zombie, connect(lap.dsn) as fresh:
        zombie.execute(sql.SQL("SELECT {}.lease_hold(1)").format(sql.Identifier(s)))  # a write began...
        pid = zombie.info.backend_pid  # ... and its client went silent, the transaction open
        # another host's LAP never ends it while host-a's lease runs
        assert lease.acquire(fresh, s, "host-b", 60) is None
        assert lease.end_swallowed_holders(fresh, s, "host-b", 60) == 0
        time.sleep(ttl + 0.3)
        # host-a's LAP on a fresh connection: the first try finds the row held and ends the session,
        # the next takes the lease with a new epoch
        assert lease.acquire(fresh, s, "host-a", ttl) is None
        # (pg_terminate_backend signals the session: it is gone a moment later, not at once)
        gone = "SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = %s"
        assert wait_until(lambda: fresh.execute(gone, (pid,)).fetchone() == (True,), 5)
        assert lease.acquire(fresh, s, "host-a", ttl) == 2
        with pytest.raises(psycopg.OperationalError):
            zombie.execute("SELECT 1")
