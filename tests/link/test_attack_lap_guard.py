"""What one table's database role can still do to the LAP's database, played as that role would:
a session logged in as the table's role (its password is in the uplink's DSN), issuing SQL as
the uplink never would.  In each, the other tables (T02 and T03: real tables, real uplinks, the
real LAP service) stay open — or close for at most the link timeout — and no amount but the
LAP's own is paid (docs/security.md, "what one table's role can do").

- an amount named by the table is never paid: a hit claim carrying ``paid_cents`` is taken at
  that amount only with the LAP's own proof that it decided it (a LAP that went back in time);
- a table's fault closes that table only: a batch with wrong totals does not make the link
  inoperable, nor a restarted LAP fail its self-check;
- deadlines the LAP keeps whatever the role sets in its session: a session holding a level's
  lock is ended, a transaction past the rules' deadline rolled back, a statement run past the
  LAP's deadline ended, each recorded; every table role has a connection limit;
- every field a table writes is bounded in bytes;
- payouts and voids only in the order a genuine round makes them; a rate version only if it was
  in force when the record says the wager was taken;
- the floor view reads as a role of its own, which cannot write a record of money;
- database-to-table loss (the answers lost, the table's bytes still delivered) reopens the table
  within 10 s.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

from controller.lap.config import parse_lap
from tests.integration.harness import Harness
from tests.link.conftest import lap_doc
from tests.link.test_link_scenarios import Pit

pytestmark = pytest.mark.slow

LEVEL = {"seed": "$5,000", "reset": "$5,000", "increment_rate": "21%"}
TIMEOUT = 2  # the tables' link timeout here (s)
SEED = 500_000


# ---------------------------------------------------------------------------------------- the pit


class RealPit(Pit):
    """The pit, its tables' clocks moved by real time (a table's link timeout is then real seconds)."""

    _last = 0.0

    def pump(self) -> None:
        now = time.monotonic()
        dt = min(0.5, now - self._last) if self._last else 0.05
        self._last = now
        for h in self.tables.values():
            h.clock.advance(dt)
            h.pump()


class Watch:
    """Pumps the pit and keeps, per table, the longest time it was closed (real seconds)."""

    def __init__(self, pit: RealPit, tables: tuple[str, ...] = ("T2", "T3")):
        self.pit, self.tables = pit, tables
        self.since: dict[str, float | None] = dict.fromkeys(tables)
        self.longest = dict.fromkeys(tables, 0.0)

    def step(self) -> None:
        self.pit.pump()
        now = time.monotonic()
        for t in self.tables:
            if self.pit.is_open(t):
                self.since[t] = None
            else:
                start = self.since[t] = self.since[t] or now
                self.longest[t] = max(self.longest[t], now - start)

    def run(self, seconds: float, until: Callable[[], bool] | None = None) -> float:
        """Pump for ``seconds`` (or until ``until``); the seconds it took."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < seconds:
            self.step()
            if until is not None and until():
                break
            time.sleep(0.01)
        return time.monotonic() - t0

    def assert_open(self) -> None:
        """The other tables closed for at most the link timeout (and are open now)."""
        assert all(v <= TIMEOUT for v in self.longest.values()), self.longest
        assert all(self.pit.is_open(t) for t in self.tables), {t: self.pit.is_open(t) for t in self.tables}


@pytest.fixture
def pit(make_lap, pg_dsn, tmp_path) -> Iterator[RealPit]:
    lap = make_lap(tables=3, **LEVEL)
    p = RealPit(lap, pg_dsn, tmp_path, timeout=TIMEOUT)
    p.add("T2")
    p.add("T3")
    p.until(lambda: p.is_open("T2") and p.is_open("T3"))
    yield p
    p.close()


def role(pit: Pit, tid: str = "T1") -> psycopg.Connection:
    """A session as the table's role, as its uplink's DSN opens it (and nothing else)."""
    return psycopg.connect(make_conninfo(pit.dsn, user=pit.lap.cfg.role_for(tid)), autocommit=True)


def q(pit: Pit, text: str) -> sql.Composed:
    return sql.SQL(text).format(s=sql.Identifier(pit.lap.cfg.schema))


def event(c: psycopg.Connection, pit: Pit, seq: int, kind: str, table_time: Any = None, **data: Any) -> None:
    """An event as T1's role, signed with T1's link key: what the rules refuse even from a table
    that holds its key (the Pi's root)."""
    body = json.dumps(data)
    c.execute(
        q(
            pit,
            "INSERT INTO {s}.events (table_id, seq, kind, level, data, table_time, key_no, auth)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
        ),
        ("T1", seq, kind, "primary", body, table_time, *pit.lap.auth_raw("T1", seq, kind, "primary", body, table_time)),
    )


def rows(pit: Pit, text: str, params: Any = None) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = pit.lap.store._rows(text, params)
    return got


def meter(pit: Pit) -> int:
    return int(pit.lap.store.levels()["primary"].cents)


def refusals(pit: Pit) -> dict[int, str]:
    return {int(r["seq"]): str(r["reason"]) for r in pit.lap.store.refusals() if r["table_id"] == "T1"}


def closed(pit: Pit, tid: str = "T1") -> str | None:
    got: str | None = rows(pit, "SELECT closed FROM {s}.members WHERE table_id = %s", (tid,))[0]["closed"]
    return got


def wager(h: Harness, seat: int) -> None:
    """A round's progressive wager at ``seat``, its count confirmed: a contribution in the outbox."""
    h.shuffled()
    h.edge(f"bet.progressive.{seat}", True)
    h.press("lockout")
    h.edge(f"bet.progressive.{seat}", False)
    h.press("confirm")


def contributions(pit: Pit, tid: str) -> int:
    return int(rows(pit, "SELECT count(*) AS n FROM {s}.contributions WHERE table_id = %s", (tid,))[0]["n"])


def ended(pit: Pit) -> list[dict[str, Any]]:
    return rows(pit, "SELECT * FROM {s}.terminations ORDER BY id")


def ended_soon(pit: Pit, timeout: float = 5.0) -> list[dict[str, Any]]:
    """The LAP's records of the sessions it ended, once there is one: the record is committed by the
    statement that signalled the session, whose commit may still be under way when the session's
    end is seen (a loaded machine's disk)."""
    end = time.monotonic() + timeout
    while not ended(pit) and time.monotonic() < end:
        time.sleep(0.05)
    return ended(pit)


# ---------------------------------------------------------------------------------------- amounts


def test_a_hit_claim_cannot_name_the_amount_it_is_paid(pit):
    w = Watch(pit)
    c = role(pit)
    event(c, pit, 1, "contribution", wager=100, round=1, seat=1)
    whole = meter(pit)  # $5,000.21
    # a 10 % claim naming the whole meter as "the amount the table paid" (the LAP-went-back-in-time
    # resend), and a 100 % claim naming far more than the meter, with a made-up proof
    event(c, pit, 2, "hit", fraction_num=1, fraction_den=10, round=1, seat=1, hand="x", paid_cents=whole)
    event(c, pit, 3, "contribution", wager=100, round=2, seat=1)
    event(
        c, pit, 4, "hit", fraction_num=1, fraction_den=1, round=2, seat=1, hand="x",
        paid_cents=10 * whole, paid_proof="0" * 64,
    )  # fmt: skip
    w.run(1.0)
    assert rows(pit, "SELECT * FROM {s}.hits") == []
    assert meter(pit) == SEED + 42  # nothing taken off
    got = refusals(pit)
    assert set(got) == {2, 4} and all("amount" in r for r in got.values()), got
    assert closed(pit) is not None  # the claiming table closed, the others not
    # the LAP's own amount: a 10 % claim without one is decided from the meter
    event(c, pit, 5, "contribution", wager=100, round=3, seat=1)
    event(c, pit, 6, "hit", fraction_num=1, fraction_den=10, round=3, seat=1, hand="x")
    (hit,) = rows(pit, "SELECT seq, amount_cents, proof FROM {s}.hits")
    assert (hit["seq"], hit["amount_cents"]) == (6, (SEED + 63) // 10)
    # its proof binds it to its own claim: replayed on another claim it names nothing payable
    event(c, pit, 7, "contribution", wager=100, round=4, seat=1)
    event(
        c, pit, 8, "hit", fraction_num=1, fraction_den=10, round=4, seat=1, hand="x",
        paid_cents=hit["amount_cents"], paid_proof=hit["proof"],
    )  # fmt: skip
    assert [h["seq"] for h in rows(pit, "SELECT seq FROM {s}.hits")] == [6]
    assert 8 in refusals(pit)
    w.run(0.5)
    w.assert_open()
    assert pit.lap.store.reconcile().ok
    c.close()


# ---------------------------------------------------------------------------------------- a table's fault


def test_a_batch_with_wrong_totals_closes_its_own_table_only_and_a_restarted_lap_runs(pit):
    w = Watch(pit)
    c = role(pit)
    event(c, pit, 1, "contribution", wager=100, round=1, seat=1)
    pit.lap.batch("T1", 1, 5, 500, "1:abc")
    assert "table says 5 events" in str(rows(pit, "SELECT mismatch FROM {s}.members WHERE table_id = 'T1'"))
    w.run(2.0)  # ten of the LAP's reconciliations (every 200 ms here)
    assert pit.lap.store.state() == "running", pit.lap.store.inoperable_reason()
    w.assert_open()
    # a restarted LAP passes its self-check (the mismatch is T1's, shown to T1 and the operator)
    pit.stop_lap()
    pit.start_lap()
    assert pit.thread is not None
    w.run(10, until=lambda: pit.is_open("T2") and pit.is_open("T3") and pit.lap.store.state() == "running")
    assert pit.thread.is_alive() and pit.lap.store.state() == "running"
    assert all(pit.is_open(t) for t in ("T2", "T3"))
    c.close()


# ---------------------------------------------------------------------------------------- deadlines


def test_a_table_role_holding_the_levels_lock_is_ended_and_no_other_table_closes(pit):
    w = Watch(pit)
    c = role(pit)
    c.execute("SET statement_timeout = 0")
    c.execute("SET idle_in_transaction_session_timeout = 0")
    c.execute("SET lock_timeout = 0")
    c.execute("BEGIN")
    event(c, pit, 1, "contribution", wager=100, round=1, seat=1)  # the level's row now locked
    held_at = time.monotonic()
    wager(pit.tables["T2"], 3)  # T2's contribution waits for the level's row
    took = w.run(8.0, until=lambda: contributions(pit, "T2") == 1)
    print(f"lock held idle: T2's wager applied {took:.2f} s after it was made; longest closed {w.longest}")
    assert contributions(pit, "T2") == 1, f"T2's wager not applied after {took:.1f} s"
    with pytest.raises(psycopg.OperationalError):
        c.execute("COMMIT")  # the session was ended
    assert time.monotonic() - held_at < TIMEOUT + 1.5
    (rec,) = ended_soon(pit)
    assert rec["table_id"] == "T1" and rec["action"] == "ended" and "lock" in rec["why"], rec
    assert contributions(pit, "T1") == 0  # rolled back with its session
    w.run(0.5)
    w.assert_open()
    assert pit.lap.store.reconcile().ok
    c.close()


def test_a_huge_insert_is_ended_before_it_closes_another_table(pit):
    w = Watch(pit)
    c = role(pit)
    c.execute("SET statement_timeout = 0")
    err: list[BaseException] = []
    done = threading.Event()
    k = pit.lap.keys["T1"]
    ki, ko = k.pads()

    def flood() -> None:
        try:
            # signed in SQL with T1's link key (its HMAC pads): a table that holds its key
            c.execute(
                q(pit, "INSERT INTO {s}.events (table_id, seq, kind, level, data, key_no, auth)"
                       " SELECT 'T1', g, 'contribution', 'primary', d, %(n)s, encode(sha256(%(ko)s::bytea || sha256("
                       "%(ki)s::bytea || convert_to(jsonb_build_array('event', %(s)s::text, 'T1', g, 'contribution',"
                       " 'primary', %(n)s::int, NULL::bigint, d)::text, 'UTF8'))), 'hex')"
                       " FROM generate_series(1, 50000) g, jsonb_build_object('wager', 1, 'round', g, 'seat', 1) d"),
                {"n": k.key_no, "ki": ki, "ko": ko, "s": pit.lap.cfg.schema},
            )  # fmt: skip
        except psycopg.Error as e:
            err.append(e)
        done.set()

    th = threading.Thread(target=flood, daemon=True)
    th.start()
    # the rows go in first; then their rules run, one by one, the level's row locked: T2 wagers then
    locked = q(pit, "SELECT level FROM {s}.levels FOR UPDATE SKIP LOCKED")
    w.run(10.0, until=lambda: done.is_set() or not pit.lap.store.conn.execute(locked).fetchall())
    wager(pit.tables["T2"], 3)
    waited = w.run(10.0, until=lambda: done.is_set() and contributions(pit, "T2") == 1)
    print(f"a 50,000-row INSERT: T2's wager applied {waited:.2f} s after it was made; longest closed {w.longest}")
    assert done.is_set() and err, "the 50,000-row statement still runs"
    assert contributions(pit, "T2") == 1 and contributions(pit, "T1") == 0  # nothing of it applied
    # the LAP cancelled it (it held the level's row T2 waited for), or, on a machine too loaded for
    # the LAP to act first, the rules' own deadline rolled it back
    # the LAP's own deadline may end it first: each row's authenticator is checked before any rule
    # runs (and before any level's lock), so 50,000 of them can run past table_run holding none
    recs = ended_soon(pit, 1.0 if "past the LAP's 5 s" in str(err[0]) else 5.0)
    got = [(r["table_id"], r["action"]) for r in recs]
    assert got in ([("T1", "cancelled")], [("T1", "ended")]) or (not recs and "past the LAP's 5 s" in str(err[0])), (
        err,
        recs,
    )
    assert all("lock" in r["why"] or "ran" in r["why"] for r in recs), recs
    w.run(0.5)
    w.assert_open()
    c.close()


def test_the_rules_end_a_transaction_past_their_deadline_whatever_the_session_sets(make_lap, pg_dsn):
    """The LAP process aside (it may be restarting), the rules refuse to go on applying events in a
    transaction that has run 5 s: it is rolled back with the level's lock it holds."""
    lap = make_lap()
    c = psycopg.connect(make_conninfo(pg_dsn, user=lap.cfg.role_for("T1")), autocommit=True)
    ins = sql.SQL("INSERT INTO {}.events (table_id, seq, kind, level, data, key_no, auth) VALUES ('T1', %s,"
                  " 'contribution', 'primary', %s, %s, %s)").format(sql.Identifier(lap.cfg.schema))  # fmt: skip
    one, two = json.dumps({"wager": 1, "round": 1, "seat": 1}), json.dumps({"wager": 1, "round": 2, "seat": 1})
    signed = [lap.auth_raw("T1", n, "contribution", "primary", b) for n, b in ((1, one), (2, two))]
    c.execute("SET statement_timeout = 0")
    c.execute("BEGIN")
    c.execute(ins, (1, one, *signed[0]))
    c.execute("SELECT pg_sleep(5.2)")
    with pytest.raises(psycopg.errors.QueryCanceled, match="past the LAP's 5 s"):
        c.execute(ins, (2, two, *signed[1]))
    c.execute("ROLLBACK")
    assert lap.store._rows("SELECT * FROM {s}.contributions") == []
    c.close()


def test_a_statement_run_past_the_deadline_is_ended_and_recorded(pit):
    w = Watch(pit)
    said: list[str] = []
    assert pit.service is not None
    pit.service.log = said.append
    c = role(pit)
    c.execute("SET statement_timeout = 0")
    err: list[BaseException] = []

    def sleep() -> None:
        try:
            c.execute("SELECT pg_sleep(60)")
        except psycopg.Error as e:
            err.append(e)

    th = threading.Thread(target=sleep, daemon=True)
    th.start()
    took = w.run(14.0, until=lambda: bool(err))
    assert err and isinstance(err[0], psycopg.OperationalError), f"still running after {took:.1f} s"
    assert took <= 10.0 + 1.5  # [link] table_run: 10 s by default
    # recorded in the statement that ended it (its commit may still be on its way to the disk)
    recs = ended_soon(pit)
    assert len(recs) == 1, (err, recs, said)
    (rec,) = recs
    assert rec["table_id"] == "T1" and rec["action"] == "ended" and "10 s" in rec["why"], rec
    w.assert_open()
    c.close()


def test_a_table_roles_connections_are_limited(pit):
    w = Watch(pit)
    held: list[psycopg.Connection] = []
    refused: list[str] = []
    for _ in range(8):
        try:
            held.append(role(pit))
        except psycopg.OperationalError as e:
            refused.append(str(e))
    assert len(held) == 4 and refused and all("too many connections for role" in r for r in refused), refused
    lim = rows(pit, "SELECT rolconnlimit FROM pg_roles WHERE rolname = %s", (pit.lap.cfg.role_for("T1"),))
    assert lim == [{"rolconnlimit": 4}]
    # the other tables' uplinks connect again meanwhile (their own roles' slots)
    pit.uplinks["T2"].stop()
    w.run(1.0)
    pit.start_uplink("T2")
    w.longest["T2"] = 0.0  # (closed by its uplink's stop, not by T1)
    w.run(10, until=lambda: pit.is_open("T2"))
    w.assert_open()
    for c in held:
        c.close()


# ---------------------------------------------------------------------------------------- sizes


def test_every_field_a_table_writes_is_bounded_in_bytes(pit):
    w = Watch(pit)
    c = role(pit)
    too_big: list[tuple[str, Callable[[], object]]] = [
        ("event data", lambda: event(c, pit, 1, "contribution", wager=1, round=1, seat=1, pad="x" * 100_000)),
        ("a hit's hand", lambda: event(c, pit, 2, "hit", fraction_num=1, fraction_den=10, round=1, seat=1,
                                       hand="x" * 10_000)),
        ("a level's name", lambda: c.execute(
            q(pit, "INSERT INTO {s}.events (table_id, seq, kind, level, data, key_no, auth)"
                   " VALUES ('T1', 3, 'void', %s, '{{}}', %s, %s)"),
            ("x" * 10_000, *pit.lap.auth_raw("T1", 3, "void", "x" * 10_000, "{}")))),
        ("a batch's chain head", lambda: pit.lap.batch("T1", 1, 0, 0, "1:" + "a" * 1_000_000)),
    ]  # fmt: skip
    for what, do in too_big:
        with pytest.raises(psycopg.errors.CheckViolation):
            do()
        assert rows(pit, "SELECT count(*) AS n FROM {s}.events")[0]["n"] == 0, what
    # and the columns the LAP writes are not the table's to set
    for text in (
        "INSERT INTO {s}.events (table_id, seq, kind, level, data, received_at)"
        " VALUES ('T1', 4, 'void', 'primary', '{{}}', '2000-01-01')",
        "INSERT INTO {s}.batches (table_id, last_seq, events_total, wagers_total, chain_head, verified, problem)"
        " VALUES ('T1', 1, 0, 0, '1:x', true, NULL)",
    ):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            c.execute(q(pit, text))
    w.run(0.5)
    w.assert_open()
    c.close()


# ---------------------------------------------------------------------------------------- order


def test_payouts_and_voids_are_taken_only_in_a_genuine_rounds_order(pit):
    w = Watch(pit)
    c = role(pit)
    event(c, pit, 1, "contribution", wager=100, round=1, seat=1)
    event(c, pit, 2, "hit", fraction_num=1, fraction_den=10, round=1, seat=1, hand="x")
    (amount,) = [h["amount_cents"] for h in rows(pit, "SELECT amount_cents FROM {s}.hits")]
    event(c, pit, 3, "paid", hit_seq=2, cents=amount)
    after_pay = meter(pit)
    event(c, pit, 4, "void", round=1, seat=1)  # the wager voided after its hit was paid: refund and jackpot
    assert meter(pit) == after_pay and rows(pit, "SELECT * FROM {s}.voids") == []
    # a payout recorded before its claim, a void before its contribution, a claim before its wager
    event(c, pit, 20, "contribution", wager=100, round=2, seat=1)
    event(c, pit, 22, "hit", fraction_num=1, fraction_den=10, round=2, seat=1, hand="x")
    (second,) = [h["amount_cents"] for h in rows(pit, "SELECT amount_cents FROM {s}.hits WHERE seq = 22")]
    event(c, pit, 21, "paid", hit_seq=22, cents=second)
    event(c, pit, 31, "contribution", wager=100, round=3, seat=1)
    event(c, pit, 30, "void", of_seq=31)
    event(c, pit, 41, "contribution", wager=100, round=4, seat=1)
    event(c, pit, 40, "hit", fraction_num=1, fraction_den=10, round=4, seat=1, hand="x")
    assert [p["hit_seq"] for p in rows(pit, "SELECT hit_seq FROM {s}.payouts")] == [2]
    assert rows(pit, "SELECT * FROM {s}.voids") == []
    assert [h["seq"] for h in rows(pit, "SELECT seq FROM {s}.hits ORDER BY seq")] == [2, 22]
    assert set(refusals(pit)) == {4, 21, 30, 40}, refusals(pit)
    assert closed(pit) is not None
    w.run(0.5)
    w.assert_open()
    assert pit.lap.store.reconcile().ok
    c.close()


# ---------------------------------------------------------------------------------------- rate versions


def test_an_old_rate_version_is_refused_once_it_was_no_longer_in_force(pit, lap_schema):
    w = Watch(pit)
    before = datetime.now(UTC)  # a wager taken now, at 21 % (version 1) …
    pit.stop_lap()  # … then the rate lowered to 10 %, with the link stopped
    pit.lap.cfg = parse_lap(lap_doc(lap_schema, 3, **{**LEVEL, "increment_rate": "10%"}), "lap.toml")
    pit.start_lap()
    version = "SELECT rate_version FROM {s}.levels"
    w.run(10, until=lambda: rows(pit, version)[0]["rate_version"] == 2 and pit.lap.store.state() == "running")
    w.run(10, until=lambda: pit.is_open("T2") and pit.is_open("T3"))
    w.longest = dict.fromkeys(w.tables, 0.0)  # (closed by the stop)
    c = role(pit)
    start = meter(pit)
    # taken after the change, naming version 1 (what the record says: its lock-out's time)
    later = datetime.now(UTC) + timedelta(seconds=6)
    event(c, pit, 1, "contribution", table_time=later, wager=100, round=1, seat=1, rate_version=1)
    event(c, pit, 2, "contribution", wager=100, round=2, seat=1, rate_version=1, taken_ms=int(later.timestamp() * 1000))
    assert meter(pit) == start and set(refusals(pit)) == {1, 2}, refusals(pit)
    assert all("rate version 1" in r for r in refusals(pit).values())
    # the outbox: taken before the change, sent after it, at the rate it was taken under
    event(c, pit, 3, "contribution", table_time=before, wager=100, round=3, seat=1, rate_version=1)
    assert meter(pit) == start + 21
    # but not once the table took a round under the new version (a table learns versions in order)
    event(c, pit, 4, "contribution", table_time=before, wager=100, round=4, seat=1, rate_version=2)
    event(c, pit, 5, "contribution", table_time=before, wager=100, round=5, seat=1, rate_version=1)
    assert meter(pit) == start + 21 + 10 and "round 4's wager under version 2" in refusals(pit)[5]
    w.run(0.5)
    w.assert_open()
    c.close()


# ---------------------------------------------------------------------------------------- the floor view


def test_the_floor_view_reads_as_a_read_only_role_of_its_own(make_lap, pg_dsn, tmp_path):
    from controller.commands.lap import _floor_server
    from controller.lap.floor_auth import StaffStore

    lap = make_lap(tables=3)
    doc = lap_doc(lap.cfg.schema, 3)
    StaffStore(tmp_path / "floor-staff.toml").set("alice", "floorperson", "4821")
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    doc["floor"] = {"bind": "127.0.0.1", "port": port, "staff": str(tmp_path / "floor-staff.toml")}
    cfg = parse_lap(doc, str(tmp_path / "lap.toml"))
    lap.store.set_state("stopped")
    lap.store.configure(cfg)  # (what tablectl lap does at its start)
    lap.store.set_state("running")
    lap.send("T2", 1, "contribution", {"wager": 100, "round": 1, "seat": 1})
    srv = _floor_server(cfg, pg_dsn, lambda m: None)
    assert srv is not None
    srv.start()
    try:
        pic = srv.data.snapshot()
        assert sorted(t["id"] for t in pic["tables"]) == ["T1", "T2", "T3"]
        users = {
            r["usename"]
            for r in lap.store._rows("SELECT usename FROM pg_stat_activity WHERE application_name = 'tablectl floor'")
        }
        floor_role = f"{lap.cfg.schema}__floor"
        assert users == {floor_role}, users
    finally:
        srv.stop()
    with psycopg.connect(make_conninfo(pg_dsn, user=floor_role), autocommit=True) as c:
        s = sql.Identifier(lap.cfg.schema)
        for text in (
            "INSERT INTO {}.events (table_id, seq, kind, level, data) VALUES ('T1', 9, 'void', 'primary', '{{}}')",
            "UPDATE {}.levels SET value_num = value_num + 1",
            "SELECT * FROM {}.lap_key",
            "INSERT INTO {}.hits SELECT * FROM {}.hits LIMIT 0",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                c.execute(sql.SQL(text).format(s, s))


# ---------------------------------------------------------------------------------------- database -> table loss


def test_database_to_table_loss_reopens_within_ten_seconds(make_lap, pg_dsn, tmp_path):
    """The database's answers lost on the way (a one-way loss: a NAT entry gone one way, a
    middlebox that swallows one direction), the table's own bytes still delivered, just as a
    batch is sent: the uplink gives the connection up and the table hears a fresh heartbeat on a
    new one within 10 s (docs/linked.md), the LAP beating every second as lap.toml's default."""
    from controller.books.ledger import Ledger
    from controller.books.ledgerkey import throwaway_key
    from controller.lap.lap import LapStore, connect, wait_until
    from controller.uplink.uplink import Uplink, UplinkConfig
    from hil.netproxy import NetProxy
    from tests.link.test_uplink import FakeTableSocket, contrib

    info = psycopg.conninfo.conninfo_to_dict(pg_dsn)
    if str(info.get("host", "")).startswith("/") or not info.get("host"):
        pytest.skip("the test server is on a Unix socket: no TCP to break")
    lap = make_lap()
    key = throwaway_key()
    ledger = Ledger(tmp_path / "ledger.sqlite3", "T1", key=key)
    table = FakeTableSocket(tmp_path / "link.sock")
    beat, stop = LapStore(connect(pg_dsn), lap.cfg.schema), threading.Event()

    def beating() -> None:
        while not stop.wait(1.0):
            try:
                beat.heartbeat()
            except psycopg.Error:
                pass

    proxy = NetProxy(str(info["host"]), int(info.get("port") or 5432))
    threading.Thread(target=beating, daemon=True).start()
    dsn = make_conninfo(pg_dsn, host="127.0.0.1", port=proxy.port, user=lap.cfg.role_for("T1"))
    cfg = UplinkConfig(
        dsn, lap.cfg.schema, "T1", tmp_path / "ledger.sqlite3", tmp_path / "link.sock", key=key, link_key=lap.keys["T1"]
    )
    u = Uplink(cfg, log=lambda m: None)
    try:
        ledger.append([contrib(1)])
        u.start()
        assert wait_until(lambda: bool(table.of("hb")) and table.of("link")[-1]["up"], 10)
        with proxy.lock:  # every byte from the database thrown away; the table's still delivered
            proxy.dead.update(id(s) for s in proxy.conns[1::2])
        t0 = time.monotonic()
        ledger.append([contrib(2)])
        table.wake(2)
        # given up by the progress deadline (the batch waiting, nothing acknowledged) or the
        # statement's own watchdog, whichever comes first
        assert wait_until(lambda: u.connection.fired > 0 or u.connection.relink.drops > 0, 15)
        found = time.monotonic() - t0
        told = len(table.of("hb"))
        assert wait_until(lambda: table.of("link")[-1]["up"] and len(table.of("hb")) > told, 15)
        back = time.monotonic() - t0
        print(f"one-way loss: connection given up after {found:.2f} s, the table open again after {back:.2f} s")
        # the progress deadline: the server's statement_timeout for the uplink (link timeout + 1 s)
        # + 1 s (the batch's watchdog: + 2 s); then a new connection and the LAP's next heartbeat (1 s)
        assert found <= cfg.link_timeout_s + 3.0 + 1.0 and back <= 10, (found, back)
    finally:
        u.stop()
        stop.set()
        proxy.close()
        table.close()
        ledger.close()
        beat.conn.close()


# ---------------------------------------------------------------------------------------- the LAP's own rights


def test_a_lap_that_is_no_superuser_can_end_its_tables_sessions(pg_dsn, lap_schema):
    """The LAP's role needs CREATEROLE and CREATE on the database, not superuser: it makes itself a
    member of each table's role it creates, so that it sees and may end their sessions."""
    from controller.lap.guard import SessionGuard
    from controller.lap.lap import LapStore, connect

    lap_role = f"{lap_schema}_the_lap"
    dbname = str(psycopg.conninfo.conninfo_to_dict(pg_dsn).get("dbname") or "postgres")
    with connect(pg_dsn) as su:
        su.execute(sql.SQL("CREATE ROLE {} LOGIN CREATEROLE").format(sql.Identifier(lap_role)))
        su.execute(
            sql.SQL("GRANT CREATE ON DATABASE {} TO {}").format(sql.Identifier(dbname), sql.Identifier(lap_role))
        )
    cfg = parse_lap(lap_doc(lap_schema, 2), "lap.toml")
    try:
        with connect(pg_dsn, user=lap_role) as conn:
            store = LapStore(conn, lap_schema)
            store.install(cfg.group)
            store.configure(cfg)
            assert store.role_differences(cfg) == [] and store.schema_differences() == []
            t1 = psycopg.connect(make_conninfo(pg_dsn, user=cfg.role_for("T1")), autocommit=True)
            t1.execute("SET statement_timeout = 0")
            err: list[BaseException] = []

            def sleep() -> None:
                try:
                    t1.execute("SELECT pg_sleep(30)")
                except psycopg.Error as e:
                    err.append(e)

            th = threading.Thread(target=sleep, daemon=True)
            th.start()
            time.sleep(1.3)
            done, problem = SessionGuard(lap_schema, hold_s=1.0, run_s=1.0).check(conn)
            th.join(5)
            assert problem is None and [(r["table_id"], r["action"], r["signalled"]) for r in done] == [
                ("T1", "ended", True)
            ]
            assert err and isinstance(err[0], psycopg.OperationalError)
            t1.close()
    finally:
        with connect(pg_dsn) as su:
            su.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(lap_schema)))
            su.execute(
                sql.SQL("REVOKE CREATE ON DATABASE {} FROM {}").format(sql.Identifier(dbname), sql.Identifier(lap_role))
            )


def test_the_guard_reads_every_session_only_for_its_run_deadline_or_when_a_lock_is_waited_for(make_lap, pg_dsn):
    """An idle pit's sessions are not read four times a second: a check that is not the run
    deadline's (at most every second) acts only when some lock is waited for.  (The test
    database is shared with other tests, whose lock waits open the gate: such a moment is
    not counted.)"""
    from controller.lap.guard import SessionGuard

    lap = make_lap(tables=2)
    g = SessionGuard(lap.cfg.schema, hold_s=1.0, run_s=1.0)
    assert g.full_every_s == 0.1 and SessionGuard("s", run_s=10.0).full_every_s == 1.0
    waited = "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE NOT granted)"
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        for _attempt in range(5):
            t1 = psycopg.connect(make_conninfo(pg_dsn, user=lap.cfg.role_for("T1")), autocommit=True)
            t1.execute("SET statement_timeout = 0")
            th = threading.Thread(target=_quietly, args=(t1, "SELECT pg_sleep(30)"), daemon=True)
            th.start()
            time.sleep(1.3)  # past the run deadline
            g._next_full = time.monotonic() + 60  # not the run deadline's turn
            quiet = conn.execute(waited).fetchone() == (False,)
            skipped = g.check(conn)
            if quiet and conn.execute(waited).fetchone() == (False,):
                break
            t1.close()  # another test's lock wait opened the gate meanwhile: again
        assert skipped == ([], None)
        g._next_full = 0.0
        done, problem = g.check(conn)
    th.join(5)
    assert problem is None and [(r["table_id"], r["action"]) for r in done] == [("T1", "ended")]
    assert g._next_full > time.monotonic()  # the next full read a run deadline's tenth later
    t1.close()


def _quietly(conn: psycopg.Connection, q: str) -> None:
    try:
        conn.execute(q)
    except psycopg.Error:
        pass


def test_a_table_role_holding_a_levels_row_does_not_keep_the_lap_from_starting(make_lap, pg_dsn, lap_schema):
    """The LAP restarts with a rate change (its configuration updates the level's row) while a
    table's role holds that row in a transaction it leaves open: the LAP's wait is bounded, it
    ends the session once past ``table_run`` and starts (before: it waited for good, every table
    closed)."""
    from controller.lap.service import LapService

    lap = make_lap(tables=2)
    c = psycopg.connect(make_conninfo(pg_dsn, user=lap.cfg.role_for("T1")), autocommit=True)
    for setting in ("statement_timeout", "idle_in_transaction_session_timeout", "lock_timeout"):
        c.execute(sql.SQL("SET {} = 0").format(sql.Identifier(setting)))
    c.execute("BEGIN")
    body = json.dumps({"wager": 1, "round": 1, "seat": 1})
    c.execute(
        sql.SQL("INSERT INTO {}.events (table_id, seq, kind, level, data, key_no, auth)"
                " VALUES ('T1', 1, 'contribution', 'primary', %s, %s, %s)").format(sql.Identifier(lap.cfg.schema)),
        (body, *lap.auth_raw("T1", 1, "contribution", "primary", body)),
    )  # fmt: skip
    svc = LapService(parse_lap(lap_doc(lap_schema, 2, increment_rate="10%"), "lap.toml"), pg_dsn, log=lambda m: None)
    th = threading.Thread(target=svc.run, daemon=True)
    t0 = time.monotonic()
    th.start()
    try:
        version = "SELECT l.state, v.rate_version FROM {s}.link l, {s}.levels v"
        ready = wait(lambda: lap.store._rows(version) == [{"state": "running", "rate_version": 2}], 20)
        took = time.monotonic() - t0
        print(f"the LAP started {took:.2f} s after it was started, a level's row held by a table's role")
        assert ready, lap.store._rows(version)
        assert took < 10 + 5, took  # table_run (10 s), and the LAP's retries
        (rec,) = lap.store._rows("SELECT * FROM {s}.terminations")  # (committed before the LAP went on)
        assert rec["table_id"] == "T1" and rec["action"] == "ended" and "transaction ran" in rec["why"], rec
        with pytest.raises(psycopg.OperationalError):
            c.execute("COMMIT")
    finally:
        svc.stop_event.set()
        th.join(5)
        c.close()


def wait(pred: Callable[[], bool], timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return pred()
