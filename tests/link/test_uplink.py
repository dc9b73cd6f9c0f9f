"""The uplink against a real PostgreSQL and a real SQLite ledger: link records reach the LAP
exactly once whatever restarts, meter pushes and hit answers reach the table over its Unix
socket through LISTEN/NOTIFY, a refused event latches."""

from __future__ import annotations

import json
import os
import socket
import threading
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from controller.books.ledger import Ledger, Record
from controller.books.ledgerkey import throwaway_key
from controller.core.records import Kind
from controller.lap.lap import wait_until
from controller.uplink.ledgerseam import SqliteLedgerSource
from controller.uplink.uplink import Uplink, UplinkConfig


class FakeTableSocket:
    """The table service's side of the link socket (the real one is in the table service)."""

    def __init__(self, path: Path):
        self.path = path
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(str(path))
        self.srv.listen(4)
        self.srv.settimeout(0.2)
        self.msgs: list[dict[str, Any]] = []
        self.conn: socket.socket | None = None
        self.stop = threading.Event()
        self.th = threading.Thread(target=self._run, daemon=True)
        self.th.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                c, _ = self.srv.accept()
            except TimeoutError:
                continue
            self.conn = c
            c.settimeout(0.2)
            buf = b""
            while not self.stop.is_set():
                try:
                    chunk = c.recv(65536)
                except TimeoutError:
                    continue
                except OSError:
                    break
                if not chunk:
                    break
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    self.msgs.append(json.loads(line))

    def wake(self, seq: int) -> None:
        if self.conn is not None:
            self.conn.sendall(json.dumps({"t": "outbox", "seq": seq}).encode() + b"\n")

    def of(self, t: str) -> list[dict[str, Any]]:
        return [m for m in list(self.msgs) if m.get("t") == t]

    def close(self) -> None:
        self.stop.set()
        self.th.join(2)
        self.srv.close()


@pytest.fixture
def rig(make_lap, pg_dsn, tmp_path):
    lap = make_lap()
    key = throwaway_key()
    ledger = Ledger(tmp_path / "ledger.sqlite3", "T1", key=key)
    table = FakeTableSocket(tmp_path / "link.sock")
    dsn = psycopg.conninfo.make_conninfo(pg_dsn, user=lap.cfg.role_for("T1"))
    cfg = UplinkConfig(
        dsn,
        lap.cfg.schema,
        "T1",
        tmp_path / "ledger.sqlite3",
        tmp_path / "link.sock",
        poll_s=0.2,
        key=key,
        link_key=lap.keys["T1"],
    )
    ups: list[Uplink] = []

    def uplink() -> Uplink:
        u = Uplink(cfg, log=lambda m: None)
        u.start()
        ups.append(u)
        return u

    yield lap, ledger, table, uplink
    for u in ups:
        u.stop()
    table.close()
    ledger.close()


def contrib(seat: int, wager: int = 100, round_no: int = 1) -> Record:
    return Record(Kind.LINK_CONTRIBUTION, round_no, {"level": "primary", "wager": wager, "seat": seat})


def lap_rows(lap, what: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = lap.store._rows(f"SELECT * FROM {{s}}.{what} ORDER BY seq")
    return rows


def test_events_reach_the_lap_once_and_answers_come_back(rig):
    lap, ledger, table, uplink = rig
    ledger.append([Record(Kind.POWER_UP, 0, {}), contrib(1), contrib(2, 500)])
    u = uplink()
    assert wait_until(lambda: len(lap_rows(lap, "contributions")) == 2, 10)
    assert wait_until(lambda: any(m.get("cents") == 100_000 + 21 + 105 for m in table.of("meter")), 5)
    hit = ledger.append([Record(Kind.LINK_HIT, 1, {"level": "primary", "fraction": "1", "seat": 2, "hand": "7 high"})])
    table.wake(hit[0].seq)
    assert wait_until(lambda: table.of("hit"), 5)
    answer = dict(table.of("hit")[-1])
    proof = answer.pop("proof")  # the LAP's proof of the amount (the table keeps it with its payment)
    assert answer == {"t": "hit", "seq": hit[0].seq, "level": "primary", "order": 1, "amount": 100_126}
    assert isinstance(proof, str) and len(proof) == 64
    paid = ledger.append([Record(Kind.LINK_PAID, 1, {"level": "primary", "hit_seq": hit[0].seq, "cents": 100_126})])
    table.wake(paid[0].seq)
    assert wait_until(lambda: len(lap.store._rows("SELECT * FROM {s}.payouts")) == 1, 5)
    assert wait_until(lambda: table.of("reconciled") and table.of("reconciled")[-1]["seq"] == paid[0].seq, 5)
    u.stop()
    # a second uplink (a restart) resends nothing, and tells the table it is reconciled again (from
    # the LAP's rows: a batch that would not move the head forward would only be refused)
    batches = lap.store._rows("SELECT count(*) AS n FROM {s}.batches")[0]["n"]
    told = len(table.of("reconciled"))
    uplink()
    assert wait_until(lambda: len(table.of("reconciled")) > told, 5)
    assert table.of("reconciled")[-1]["seq"] == paid[0].seq
    assert lap.store._rows("SELECT count(*) AS n FROM {s}.batches")[0]["n"] == batches
    rec = lap.store.reconcile()
    assert rec.ok and rec.contributions == 2 and rec.hits == 1
    head = lap.store._rows("SELECT chain_head FROM {s}.members WHERE table_id = 'T1'")[0]["chain_head"]
    assert head == f"{ledger.last_seq}:{ledger.last_hash}"  # the table's chain head, recorded centrally


def test_resending_an_already_held_batch_is_a_no_op(rig):
    lap, ledger, table, uplink = rig
    ledger.append([contrib(1), contrib(2)])
    u = uplink()
    assert wait_until(lambda: len(lap_rows(lap, "contributions")) == 2, 10)
    before = u.sender.sent_batches
    u.sender.acked = 0  # as if the acknowledgement had been lost: everything is sent again
    u.wake.set()
    assert wait_until(lambda: u.sender.sent_batches > before, 5)
    assert len(lap_rows(lap, "contributions")) == 2 and lap.store.reconcile().ok


def test_reconnects_after_its_connections_are_cut(rig, pg_dsn):
    lap, ledger, table, uplink = rig
    ledger.append([contrib(1)])
    uplink()
    assert wait_until(lambda: len(lap_rows(lap, "contributions")) == 1, 10)
    role = lap.cfg.role_for("T1")
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        c.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,))
    assert wait_until(lambda: any(not m["up"] for m in table.of("link")), 5)  # the table is told
    ledger.append([contrib(3)])
    assert wait_until(lambda: len(lap_rows(lap, "contributions")) == 2, 10)
    assert wait_until(lambda: table.of("link")[-1]["up"], 5)
    assert lap.store.reconcile().ok


def test_lap_heartbeat_reaches_the_table(rig):
    lap, ledger, table, uplink = rig
    uplink()
    assert wait_until(lambda: table.of("link"), 10)
    wait_until(lambda: False, 0.3)  # the listener is listening
    lap.store.heartbeat()
    assert wait_until(lambda: table.of("hb"), 5)
    assert table.of("hb")[-1]["state"] == "running" and table.of("hb")[-1]["meters"] == {"primary": 100_000}


def test_an_event_the_lap_refuses_is_recorded_and_closes_the_table(rig):
    lap, ledger, table, uplink = rig
    ledger.append([Record(Kind.LINK_PAID, 1, {"level": "primary", "hit_seq": 99, "cents": 5})])  # no such hit
    u = uplink()
    assert wait_until(lambda: any(m["reason"] for m in table.of("refused")), 10)
    reason = [m for m in table.of("refused") if m["reason"]][-1]["reason"]
    assert "the LAP refused record 1 (paid): no hit 99 of this table answered 5 cents" == reason
    assert [(r["seq"], r["kind"]) for r in lap.store.refusals()] == [(1, "paid")]
    assert u.rejected is None  # recorded by the LAP, not an error: the uplink goes on
    ledger.append([contrib(1)])  # a wager accepted before the closure still reaches the LAP
    table.wake(2)
    assert wait_until(lambda: len(lap_rows(lap, "contributions")) == 1, 5)
    assert lap.store.reconcile().ok
    assert lap.store.reopen("T1", "checked with the table's ledger") == reason  # the operator's act
    assert wait_until(lambda: table.of("refused")[-1]["reason"] is None, 5)


def test_seam_reads_link_records_only(tmp_path):
    led = Ledger(tmp_path / "l.sqlite3", "T9", key=throwaway_key())
    led.append([Record(Kind.POWER_UP, 0, {}), contrib(4, 300), Record(Kind.ROUND_OPEN, 1, {})])
    led.append([Record(Kind.LINK_VOID, 1, {"level": "primary", "of_seq": 2})])
    src = SqliteLedgerSource(tmp_path / "l.sqlite3", led._key)
    assert src.link_events(0, 10) == []  # nothing before it is verified
    assert src.verify(0) is None
    evs = src.link_events(0, 10)
    assert [(e.seq, e.kind) for e in evs] == [(2, "contribution"), (4, "void")]
    assert evs[0].data == {"round": 1, "wager": 300, "seat": 4}
    t = src.totals(4)
    assert (t.events, t.wagers, t.head) == (2, 300, f"4:{led.last_hash}")
    with pytest.raises(Exception, match="readonly|read-only"):
        src.db.execute("DELETE FROM events")
    src.close()
    led.close()


def test_table_role_cannot_send_as_another_table(rig, pg_dsn):
    lap, ledger, table, uplink = rig
    dsn = psycopg.conninfo.make_conninfo(pg_dsn, user=lap.cfg.role_for("T1"))
    with psycopg.connect(dsn, autocommit=True) as c, pytest.raises(psycopg.errors.InsufficientPrivilege):
        c.execute(
            sql.SQL(
                "INSERT INTO {}.batches (table_id, last_seq, events_total, wagers_total, chain_head)"
                " VALUES ('T2', 1, 0, 0, 'x')"
            ).format(sql.Identifier(lap.cfg.schema))
        )


@pytest.mark.slow  # over 1.5 s on a quiet 2-core machine
def test_a_forged_notification_is_never_believed(rig, pg_dsn):
    """Any role may NOTIFY any channel: another table forging a hit answer, a meter or a
    heartbeat for T1 changes nothing T1 is told (the uplink reads the LAP's rows instead)."""
    lap, ledger, table, uplink = rig
    uplink()
    assert wait_until(lambda: table.of("reconciled"), 10)
    wait_until(lambda: False, 0.3)
    t2 = psycopg.conninfo.make_conninfo(pg_dsn, user=lap.cfg.role_for("T2"))
    forged = [
        {"t": "meter", "level": "primary", "cents": 1, "hit": {"table": "T1", "seq": 1, "order": 1, "amount": 999}},
        {"t": "hb", "state": "running", "meters": {"primary": 1}},
        {"t": "reconciled", "table": "T1", "seq": 10_000},
    ]
    with psycopg.connect(t2, autocommit=True) as c:
        for f in forged:
            c.execute("SELECT pg_notify(%s, %s)", (lap.cfg.schema, json.dumps(f)))
    wait_until(lambda: False, 0.5)
    assert table.of("hit") == [] and table.of("hb") == []
    assert {m["cents"] for m in table.of("meter")} == {100_000}  # the meter as the LAP has it
    assert all(m["seq"] == 0 for m in table.of("reconciled"))
    lap.store.heartbeat()  # the LAP's own heartbeat still counts
    assert wait_until(lambda: table.of("hb"), 5)


def test_a_hit_at_another_table_is_announced_with_its_asset_number_from_the_laps_rows(rig, pg_dsn):
    """Every linked table's sign shows the winning table and its asset number (docs/linked.md):
    the uplink tells its table ``won`` with the asset read from the LAP's ``members`` (through
    ``asset_of``; a table reads only its own row), never from a notification's payload."""
    lap, ledger, table, uplink = rig
    uplink()
    assert wait_until(lambda: table.of("reconciled"), 10)
    lap.send("T2", 1, "contribution", {"wager": 100, "round": 1, "seat": 1})
    lap.send("T2", 2, "hit", {"fraction_num": 1, "fraction_den": 1, "round": 1, "seat": 1, "hand": "five aces"})
    assert wait_until(lambda: table.of("won"), 5)
    want = {"t": "won", "level": "primary", "order": 1, "table": "T2", "asset": "A-1002", "amount": 100_021}
    assert table.of("won") == [want]
    assert table.of("hit") == []  # T2's answer is not T1's
    # another table forges the notification with a false asset: the LAP's rows are what T1 hears
    t2 = psycopg.conninfo.make_conninfo(pg_dsn, user=lap.cfg.role_for("T2"))
    with psycopg.connect(t2, autocommit=True) as c:
        forged = {"t": "meter", "level": "primary", "hit": {"table": "T2", "order": 1, "asset": "FAKE-1"}}
        c.execute("SELECT pg_notify(%s, %s)", (lap.cfg.schema, json.dumps(forged)))
    wait_until(lambda: False, 0.5)
    assert {m["asset"] for m in table.of("won")} == {"A-1002"}
    assert {m["amount"] for m in table.of("won")} == {100_021}


def _copy_of(ledger: Ledger, dest: Path) -> Path:
    """A consistent copy of the ledger as it is now (SQLite's online backup)."""
    import sqlite3

    with sqlite3.connect(dest) as out:
        ledger.db.backup(out)
    out.close()
    return dest


def _reconciled_head(lap) -> str:
    return str(lap.store._rows("SELECT chain_head FROM {s}.members WHERE table_id = 'T1'")[0]["chain_head"])


@pytest.mark.slow  # over 1.5 s on a quiet 2-core machine
def test_an_older_ledger_put_back_is_found_against_the_laps_record_of_its_head(rig, tmp_path):
    """A ledger restored from an older copy together with its witness passes the table's own
    checks; the LAP's record of the chain head is the central copy that does not go back
    (docs/security.md).  The uplink tells the table, which closes its linked wager, and sends
    nothing from that ledger: its new events would carry numbers the LAP holds other events under."""
    lap, ledger, table, uplink = rig
    ledger.append([Record(Kind.POWER_UP, 0, {}), contrib(1)])
    older = _copy_of(ledger, tmp_path / "older.sqlite3")
    u = uplink()
    ledger.append([contrib(2), contrib(3)])
    table.wake(ledger.last_seq)
    assert wait_until(lambda: _reconciled_head(lap) == f"{ledger.last_seq}:{ledger.last_hash}", 10)
    assert table.of("diverged") == []
    u.stop()
    key, path, held = ledger._key, ledger.path, ledger.last_seq
    ledger.close()
    os.replace(older, path)  # put back while the uplink is stopped, as a technician's restore does

    uplink()
    assert wait_until(lambda: table.of("diverged"), 10)
    problem = table.of("diverged")[-1]["problem"]
    assert f"the LAP holds this table's ledger up to event {held}, which the ledger here does not have" in problem
    restored = Ledger(path, "T1", key=key)
    try:
        restored.append([contrib(4), contrib(5)])  # numbers the LAP holds other contributions under
        table.wake(restored.last_seq)
        wait_until(lambda: False, 1.0)
        assert len(lap_rows(lap, "contributions")) == 3  # nothing of the older ledger was sent
    finally:
        restored.close()


def test_a_ledger_replaced_under_a_running_uplink_is_found_and_the_right_one_agrees_again(rig, tmp_path):
    lap, ledger, table, uplink = rig
    ledger.append([Record(Kind.POWER_UP, 0, {}), contrib(1), contrib(2)])
    uplink()
    assert wait_until(lambda: _reconciled_head(lap) == f"{ledger.last_seq}:{ledger.last_hash}", 10)
    key, path = ledger._key, ledger.path
    saved = _copy_of(ledger, tmp_path / "saved.sqlite3")
    other = Ledger(tmp_path / "other.sqlite3", "T1", key=key)  # as many events: other times, other MACs
    other.append([Record(Kind.POWER_UP, 0, {"other": True}), contrib(1), contrib(2)])
    other.close()
    ledger.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # nothing of it left in a WAL beside the file
    ledger.close()
    os.replace(tmp_path / "other.sqlite3", path)
    assert wait_until(lambda: table.of("diverged"), 10)
    assert "has another MAC than the LAP recorded" in table.of("diverged")[-1]["problem"]

    os.replace(saved, path)  # the right ledger back: the uplink finds it agrees, and sends again
    assert wait_until(lambda: table.of("agrees"), 10)
    right = Ledger(path, "T1", key=key)
    try:
        right.append([contrib(6)])
        table.wake(right.last_seq)
        assert wait_until(lambda: len(lap_rows(lap, "contributions")) == 3, 10)
    finally:
        right.close()


def test_a_line_from_the_table_that_is_no_object_is_ignored_and_the_channel_goes_on(rig):
    """It used to raise in the channel's thread, which then never read the table again."""
    lap, ledger, table, uplink = rig
    logs: list[str] = []
    u = uplink()
    u.channel.log = logs.append
    assert wait_until(lambda: table.conn is not None, 10)
    assert table.conn is not None
    table.conn.sendall(b'[1]\n"outbox"\nnot json\n')
    assert wait_until(lambda: sum("garbled line from the table ignored" in m for m in logs) == 3, 5), logs
    ledger.append([contrib(1)])
    table.wake(ledger.last_seq)
    assert wait_until(lambda: len(lap_rows(lap, "contributions")) == 1, 5)


@pytest.mark.slow  # over 2 s on a quiet 2-core machine
def test_an_idle_uplink_reads_on_its_slow_timer_and_a_doorbell_only_wakes_it_sooner(rig, pg_dsn):
    """The LAP's rows are read on a slow timer (liveness: a third of the link timeout); a
    doorbell (any role's ``pg_notify``, whatever it says) makes the next read come sooner and
    tells the table nothing by itself; the LAP's heartbeat doorbell wakes nothing (its row is
    read on the timer)."""
    lap, ledger, table, uplink = rig
    up = uplink()
    assert up.listener.refresh == pytest.approx(up.cfg.link_timeout_s / 3)
    assert wait_until(lambda: table.of("reconciled") and up.listener.listening, 10)
    # a long timer, so that any read within the next seconds is a doorbell's
    up.listener.refresh = up.listener.bell.refresh = 30.0
    wait_until(lambda: False, 0.5)
    reads = up.listener.reads
    wait_until(lambda: False, 2.0)
    assert up.listener.reads == reads  # idle: no read before the timer
    t2 = psycopg.conninfo.make_conninfo(pg_dsn, user=lap.cfg.role_for("T2"))
    with psycopg.connect(t2, autocommit=True) as c:
        c.execute("SELECT pg_notify(%s, %s)", (lap.cfg.schema, '{"t": "hb"}'))
        wait_until(lambda: False, 1.5)
        assert up.listener.reads == reads  # the heartbeat's doorbell: nothing read
        hb = len(table.of("hb"))
        c.execute("SELECT pg_notify(%s, %s)", (lap.cfg.schema, json.dumps({"t": "meter", "cents": 1})))
        assert wait_until(lambda: up.listener.reads > reads, 5)  # woken long before its timer
    assert len(table.of("hb")) == hb  # nothing new told: the rows did not move
    assert {m["cents"] for m in table.of("meter")} == {100_000}
    # the LAP's heartbeat row is what the timer reads
    up.listener.refresh = up.listener.bell.refresh = 1.0

    def beat() -> bool:  # (no LAP service here: its heartbeat, every time asked)
        lap.store.heartbeat()
        return len(table.of("hb")) > hb

    assert wait_until(beat, 5)


def test_a_flood_of_doorbells_stops_the_listening_for_a_while_doubling_while_it_goes_on():
    """More doorbells than the LAP rings (a flood from some table's role): not listening for a
    quiet spell, twice as long at the next flood (to a cap), short again after a long calm."""
    from controller.uplink.lapview import FloodGuard

    clock = [0.0]
    g = FloodGuard(limit=10, window=1.0, quiet_s=5.0, quiet_cap_s=20.0, now=lambda: clock[0])
    assert not any(g.heard_one() for _ in range(10)) and not g.deaf()  # the LAP's own rate
    clock[0] += 1.5  # a new window: its count starts again
    assert not any(g.heard_one() for _ in range(10))
    assert g.heard_one() and g.deaf()  # the 11th within a second
    clock[0] += 4.9
    assert g.deaf()
    clock[0] += 0.2
    assert not g.deaf()
    quiet = []
    for _ in range(4):
        t0 = clock[0]
        assert any(g.heard_one() for _ in range(11))
        quiet.append(g.deaf_until - t0)
        clock[0] = g.deaf_until
    assert quiet == pytest.approx([10.0, 20.0, 20.0, 20.0])  # doubling, capped
    clock[0] += 21.0  # a calm longer than the cap
    assert any(g.heard_one() for _ in range(11))
    assert g.deaf_until - clock[0] == pytest.approx(5.0)
