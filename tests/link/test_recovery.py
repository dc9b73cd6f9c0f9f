"""The link's connections and recovery, against a real PostgreSQL: dead connections found
and replaced (libpq deadlines, the uplink's heartbeat deadline, a statement watchdog), one
connection per table, a LAP that went back in time found by the tables and given back what it
lost (a hit already paid re-established at the amount paid), the LAP's replication check, and
the batch check reading running totals instead of the table's history."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from controller.books.ledger import Ledger, Record
from controller.books.ledgerkey import throwaway_key
from controller.core.records import Kind
from controller.lap import pgconn
from controller.lap.config import parse_lap
from controller.lap.lap import LapError, connect, wait_until
from controller.lap.service import LapService
from controller.uplink.uplink import Uplink, UplinkConfig
from tests.link.conftest import lap_doc
from tests.link.test_uplink import FakeTableSocket, contrib


class Beat:
    """The LAP's heartbeat, as its service beats it (every 100 ms), until paused."""

    def __init__(self, dsn: str, schema: str):
        from controller.lap.lap import LapStore, connect

        self.store = LapStore(connect(dsn), schema)
        self.on = threading.Event()
        self.on.set()
        self.stop = threading.Event()
        self.th = threading.Thread(target=self._run, daemon=True)
        self.th.start()

    def _run(self) -> None:
        while not self.stop.wait(0.1):
            if self.on.is_set():
                try:
                    self.store.heartbeat()
                except psycopg.Error:
                    pass

    def close(self) -> None:
        self.stop.set()
        self.th.join(2)
        self.store.conn.close()


@pytest.fixture
def rig(make_lap, pg_dsn, tmp_path) -> Iterator[Any]:
    lap = make_lap()
    key = throwaway_key()
    ledger = Ledger(tmp_path / "ledger.sqlite3", "T1", key=key)
    table = FakeTableSocket(tmp_path / "link.sock")
    beat = Beat(pg_dsn, lap.cfg.schema)
    ups: list[Uplink] = []

    def uplink(dsn: str | None = None, **kw: Any) -> Uplink:
        dsn = psycopg.conninfo.make_conninfo(dsn or pg_dsn, user=lap.cfg.role_for("T1"))
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
        u = Uplink(dataclasses.replace(cfg, **kw), log=lambda m: None)
        u.start()
        ups.append(u)
        return u

    yield lap, ledger, table, uplink, beat
    for u in ups:
        u.stop()
    beat.close()
    table.close()
    ledger.close()


def rows(lap: Any, text: str) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = lap.store._rows(text)
    return got


def assert_only_told_of_the_wait(table: Any) -> None:
    """While a batch waits for the level's lock past the link timeout the table hears no
    heartbeat (and closes by its own timeout): it is told the database is silent — never that
    the connection was lost — and told the link is up again once the batch is answered."""
    told = table.of("link")
    assert wait_until(lambda: table.of("link")[-1]["up"], 5), told
    down = [m["reason"] for m in table.of("link") if not m["up"]]
    assert all(r.startswith("no answer from the database for ") for r in down), down


def reconciled_to(lap: Any, seq: int) -> bool:
    return bool(rows(lap, "SELECT reconciled_seq FROM {s}.members WHERE table_id = 'T1'")[0]["reconciled_seq"] >= seq)


# ---------------------------------------------------------------------------- connection parameters
def test_every_link_connection_carries_keepalives_and_deadlines(pg_dsn):
    """uplink, LAP and floor view open their connections through one place with keepalives,
    ``tcp_user_timeout`` and the server's statement and idle-in-transaction timeouts."""
    from controller.lap.lap import connect as lap_connect

    for deadlines, conn in (
        (pgconn.UPLINK, pgconn.connect(pg_dsn, pgconn.UPLINK)),
        (pgconn.LAP, lap_connect(pg_dsn)),
        (pgconn.FLOOR, pgconn.connect(pg_dsn, pgconn.FLOOR)),
    ):
        with conn:
            p = conn.info.get_parameters()
            assert (p["keepalives"], p["keepalives_idle"], p["keepalives_count"]) == (
                "1",
                str(deadlines.keepalive_idle_s),
                str(deadlines.keepalive_count),
            )
            assert p["tcp_user_timeout"] == str(deadlines.tcp_user_timeout_ms)
            got: dict[str, int] = dict(
                conn.execute(
                    "SELECT name, setting::int FROM pg_settings"
                    " WHERE name IN ('statement_timeout', 'idle_in_transaction_session_timeout')"
                ).fetchall()
            )
            assert got["statement_timeout"] == deadlines.statement_timeout_ms  # milliseconds
            assert got["idle_in_transaction_session_timeout"] == deadlines.idle_in_transaction_ms


def test_the_dsns_own_options_are_kept_beside_the_deadlines(pg_dsn):
    dsn = psycopg.conninfo.make_conninfo(pg_dsn, options="-c search_path=public")
    with pgconn.connect(dsn, pgconn.UPLINK) as c:
        assert c.execute("SHOW search_path").fetchone()[0] == "public"  # type: ignore[index]
        assert c.execute("SHOW statement_timeout").fetchone()[0] == "10s"  # type: ignore[index]


def test_the_uplinks_tcp_user_timeout_follows_the_tables_link_timeout():
    assert pgconn.for_link_timeout(3).tcp_user_timeout_ms == 3000
    assert pgconn.for_link_timeout(10).tcp_user_timeout_ms == 10_000


def test_a_statement_that_never_returns_is_ended_by_the_watchdog(pg_dsn):
    stop = threading.Event()
    dog = pgconn.Watchdog(0.5, stop, step=0.05)
    try:
        with pgconn.connect(pg_dsn, pgconn.UPLINK) as c:
            dog.tick(c)
            with pytest.raises(psycopg.OperationalError):
                c.execute("SELECT pg_sleep(5)")
            assert dog.fired == 1
    finally:
        stop.set()


# ---------------------------------------------------------------------------- one connection per table
@pytest.mark.slow  # over 1.5 s on a quiet 2-core machine
def test_an_uplink_holds_one_connection_for_sending_listening_and_reading(rig, pg_dsn):
    lap, ledger, table, uplink, beat = rig
    ledger.append([contrib(1)])
    uplink()
    assert wait_until(lambda: len(rows(lap, "SELECT * FROM {s}.contributions")) == 1, 10)
    lap.store.heartbeat()
    assert wait_until(lambda: table.of("hb"), 5)  # it listens and reads …
    role = lap.cfg.role_for("T1")
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        n = c.execute("SELECT count(*) FROM pg_stat_activity WHERE usename = %s", (role,)).fetchone()
    assert n is not None and n[0] == 1  # … on the one connection it sends on


# ---------------------------------------------------------------------------- deadlines
@pytest.mark.slow
def test_no_fresh_heartbeat_within_the_link_timeout_ends_the_connection_and_another_is_made(rig):
    lap, ledger, table, uplink, beat = rig
    u = uplink(link_timeout_s=1.0)
    assert wait_until(lambda: table.of("hb"), 10)
    beat.on.clear()  # the LAP's heartbeats stop reaching this table (its connection is silent)
    assert wait_until(lambda: u.listener.reconnects >= 1, 4)
    assert wait_until(lambda: any(not m["up"] and "no fresh heartbeat" in m["reason"] for m in table.of("link")), 2)
    beat.on.set()
    told = len(table.of("hb"))
    assert wait_until(lambda: len(table.of("hb")) > told, 5)
    assert table.of("link")[-1]["up"]


@pytest.mark.slow  # over 2 s on a quiet 2-core machine
def test_a_heartbeat_written_before_the_connection_opens_nothing(rig):
    """After a failover the promoted standby holds the old primary's last heartbeat row: it is
    not news (the tables reopened on it briefly)."""
    lap, ledger, table, uplink, beat = rig
    beat.on.clear()
    lap.store.heartbeat()  # an old heartbeat row, then no LAP
    u = uplink(link_timeout_s=5.0)
    assert wait_until(lambda: u.listener.reads >= 3, 10)
    assert table.of("hb") == []
    lap.store.heartbeat()  # the LAP beats again: fresh
    assert wait_until(lambda: table.of("hb"), 5)


@pytest.mark.slow
def test_a_batch_waiting_for_the_levels_lock_is_not_taken_for_a_dead_connection(rig, pg_dsn):
    """Another session holds the level's row (``FOR UPDATE``) longer than the read deadline (the
    old watchdog's limit, link timeout + 2 s): the uplink's batch waits for it on the same
    connection; the server ends the wait at its ``statement_timeout`` (link timeout + 1 s: a
    table's session holding a level's row is ended by the LAP after ``[link] table_hold``, so a
    wait is short; this holder is the owner's) and answers, and the batch is sent again on the
    same connection — never ended by the watchdog, no reconnection — and completes once released
    (the first one-connection uplink cut 500-event batches queued behind each other and resent them: a livelock)."""
    import time

    lap, ledger, table, uplink, beat = rig
    ledger.append([contrib(1)])
    u = uplink(link_timeout_s=1.0)
    assert wait_until(lambda: reconciled_to(lap, 1), 10)
    assert wait_until(lambda: table.of("hb"), 5)
    held = u.connection.read_limit_s + 0.5  # 3.5 s: past the read deadline, within the batch's (4 s)
    assert held < u.connection.send_limit_s
    with psycopg.connect(pg_dsn) as locker:
        locker.execute(sql.SQL("SELECT * FROM {}.levels FOR UPDATE").format(sql.Identifier(lap.cfg.schema)))
        ledger.append([contrib(2), contrib(3)])
        table.msgs.clear()
        time.sleep(held)
        assert not reconciled_to(lap, 2)  # it waited …
        locker.commit()
    assert wait_until(lambda: reconciled_to(lap, 3), 10)  # … and completed once released
    assert (u.connection.fired, u.listener.reconnects) == (0, 0)
    assert_only_told_of_the_wait(table)
    got = rows(lap, "SELECT count(*) AS n FROM {s}.contributions")
    assert got[0]["n"] == 3


@pytest.mark.slow
def test_a_batch_the_server_cancels_is_sent_again_smaller_on_the_same_connection(rig, pg_dsn, monkeypatch):
    """The server's ``statement_timeout`` cancels a batch waiting for the level's lock: the
    transaction is rolled back whole and sent again, smaller, after a pause, on the same
    connection (the server answered: it is alive) — no reconnection, nothing lost or doubled."""
    import time

    quick = pgconn.Deadlines(tcp_user_timeout_ms=1000, statement_timeout_ms=1500)
    monkeypatch.setattr(pgconn, "for_link_timeout", lambda s: quick)
    lap, ledger, table, uplink, beat = rig
    ledger.append([contrib(1)])
    u = uplink(link_timeout_s=1.0)
    assert wait_until(lambda: reconciled_to(lap, 1), 10)
    with psycopg.connect(pg_dsn) as locker:
        locker.execute(sql.SQL("SELECT * FROM {}.levels FOR UPDATE").format(sql.Identifier(lap.cfg.schema)))
        ledger.append([contrib(s) for s in range(2, 7)])
        table.msgs.clear()
        assert wait_until(lambda: u.sender.cancelled >= 1, 6)
        assert u.sender.batch_n < u.cfg.batch_max
        time.sleep(0.5)
        locker.commit()
    assert wait_until(lambda: reconciled_to(lap, 6), 15)
    assert (u.connection.fired, u.listener.reconnects) == (0, 0)
    assert_only_told_of_the_wait(table)
    assert rows(lap, "SELECT count(*) AS n FROM {s}.contributions")[0]["n"] == 6


def test_reconnection_pauses_grow_with_jitter_to_a_cap_and_reset_after_a_connection():
    draws = iter([0.0, 1.0] * 20)
    b = pgconn.Backoff(0.2, 5.0, rand=lambda: next(draws))
    pauses = [b.next() for _ in range(10)]
    # each pause lies in the upper half of 0.2 · 2^k, capped at 5 s: 0.1–0.2, 0.2–0.4, … 2.5–5
    tops = [min(5.0, 0.2 * 2**k) for k in range(10)]
    for p, top in zip(pauses, tops, strict=True):
        assert top / 2 <= p <= top
    assert pauses[0] == pytest.approx(0.1) and pauses[1] == pytest.approx(0.4)
    assert max(pauses) == pytest.approx(5.0) and pauses[-2] == pytest.approx(2.5)  # capped
    b.reset()
    assert b.next() <= 0.2  # a successful connection starts again from the first pause
    real = pgconn.Backoff(0.2, 5.0)
    for _ in range(8):
        real.next()
    assert len({round(real.next(), 6) for _ in range(5)}) > 1  # jitter: tables do not retry in lockstep


def test_the_heartbeat_deadline_has_jitter_and_grows_while_the_lap_stays_silent():
    """A LAP alive but slow closes the tables (their own link timeout) without every uplink
    reconnecting every few seconds in lockstep: each missed deadline doubles the next (to a
    cap), each deadline is drawn up to a quarter longer, a fresh heartbeat resets it."""
    from controller.uplink.lapview import LapView, LinkDeadline, Listener, ListenerTiming

    clock = [0.0]
    draws = iter([0.0, 1.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0])
    view = LapView("T1", lambda *a, **k: None)
    lis = Listener(
        "s",
        view,
        lambda *a, **k: None,
        lambda m: None,
        ListenerTiming(deadline_s=4.0, deadline_cap_s=30.0, now=lambda: clock[0], rand=lambda: next(draws)),
    )

    class Conn:
        class pgconn:  # noqa: N801
            notify_handler = None

        def execute(self, *a: Any) -> Any:
            class R:
                def fetchone(self) -> Any:
                    return (0.0,)

            return R()

    got = []
    for _ in range(5):
        lis.attach(Conn())  # type: ignore[arg-type]
        got.append(lis.current_s)
        clock[0] += lis.current_s + 0.1
        with pytest.raises(LinkDeadline):
            lis._deadline()
    assert got == [4.0, 10.0, 18.0, 30.0, 30.0]  # 4, 8 · 1.25, 16 · 1.125, capped
    view.fresh += 1  # a fresh heartbeat: back to the link timeout's deadline
    lis._deadline()
    assert lis.missed == 0
    lis.attach(Conn())  # type: ignore[arg-type]
    assert lis.current_s == 4.0


def _proxy_dsn(pg_dsn: str, port: int) -> str:
    return psycopg.conninfo.make_conninfo(pg_dsn, host="127.0.0.1", port=port)


@pytest.mark.slow
def test_silent_loss_closes_within_the_link_timeout_and_recovers_within_ten_seconds(rig, pg_dsn):
    """Bytes swallowed without a reset (hil/netproxy.py ``blackhole``): the uplink finds its
    connection dead by its own deadline, makes another once the network carries again, and
    the table hears fresh heartbeats within 10 s; nothing sent meanwhile is lost."""
    import time

    from hil.netproxy import NetProxy

    info = psycopg.conninfo.conninfo_to_dict(pg_dsn)
    if str(info.get("host", "")).startswith("/") or not info.get("host"):
        pytest.skip("the test server is on a Unix socket: no TCP to break")
    proxy = NetProxy(str(info["host"]), int(info.get("port") or 5432))
    try:
        lap, ledger, table, uplink, beat = rig
        ledger.append([contrib(1)])
        u = uplink(_proxy_dsn(pg_dsn, proxy.port))
        assert wait_until(lambda: reconciled_to(lap, 1), 10)
        proxy.hold()  # silent both ways, nothing closed
        t0 = time.monotonic()
        ledger.append([contrib(2)])
        table.wake(2)
        assert wait_until(lambda: any(not m["up"] for m in table.of("link")), 6)
        found = time.monotonic() - t0
        proxy.release()
        proxy.blackhole()  # what was open stays silent for good; new connections carry
        t1 = time.monotonic()
        told = len(table.of("hb"))
        assert wait_until(lambda: len(table.of("hb")) > told and table.of("link")[-1]["up"], 10)
        back = time.monotonic() - t1
        assert wait_until(lambda: reconciled_to(lap, 2), 10)  # nothing lost
        assert lap.store.reconcile().ok
        print(f"silent loss: connection found dead after {found:.2f} s, table open again {back:.2f} s after")
        assert found <= u.cfg.link_timeout_s + 2.5 and back <= 10, (found, back)
    finally:
        proxy.close()


# ---------------------------------------------------------------------------- the LAP's memory
def _pg_env(pg_dsn: str) -> dict[str, str]:
    args = psycopg.conninfo.conninfo_to_dict(pg_dsn)
    env = {**os.environ, "PGHOST": str(args.get("host", "")), "PGDATABASE": str(args.get("dbname", ""))}
    if args.get("port"):
        env["PGPORT"] = str(args["port"])
    if args.get("user"):
        env["PGUSER"] = str(args["user"])
    return env


def _dump(pg_dsn: str, schema: str, path: Path) -> None:
    subprocess.run(["pg_dump", "-n", schema, "-f", str(path)], check=True, env=_pg_env(pg_dsn))


def _restore(pg_dsn: str, schema: str, path: Path) -> None:
    """Put the schema back as the dump has it, in one transaction (the LAP restored from a backup)."""
    script = path.with_suffix(".restore.sql")
    script.write_text(f'DROP SCHEMA "{schema}" CASCADE;\n' + path.read_text())
    subprocess.run(
        ["psql", "-q", "-1", "-v", "ON_ERROR_STOP=1", "-f", str(script)],
        check=True,
        env=_pg_env(pg_dsn),
        stdout=subprocess.DEVNULL,
    )


def _paid_hit(ledger: Ledger, table: FakeTableSocket) -> tuple[int, int]:
    """A 100 % hit at seat 2, answered by the LAP and paid at the table: (hit seq, cents)."""
    hit = ledger.append([Record(Kind.LINK_HIT, 1, {"level": "primary", "fraction": "1", "seat": 2, "hand": "x"})])
    table.wake(hit[0].seq)
    assert wait_until(lambda: bool(table.of("hit")), 10)
    cents, proof = int(table.of("hit")[-1]["amount"]), table.of("hit")[-1]["proof"]
    # the table records the LAP's proof of the amount with its payment (controller/play/progressive.py)
    paid = ledger.append(
        [Record(Kind.LINK_PAID, 1, {"level": "primary", "hit_seq": hit[0].seq, "cents": cents, "proof": proof})]
    )
    table.wake(paid[0].seq)
    return hit[0].seq, cents


@pytest.mark.slow  # over 1.5 s on a quiet 2-core machine
@pytest.mark.parametrize("restart", [False, True], ids=["running-uplink", "restarted-uplink"])
def test_a_lap_restored_from_an_older_backup_is_found_and_given_back_what_it_lost(rig, pg_dsn, tmp_path, restart):
    lap, ledger, table, uplink, beat = rig
    schema = lap.cfg.schema
    ledger.append([Record(Kind.POWER_UP, 0, {}), contrib(1, 500), contrib(2, 300)])
    u = uplink()
    assert wait_until(lambda: reconciled_to(lap, 3), 10)
    _dump(pg_dsn, schema, tmp_path / "older.sql")  # the backup: before the hit
    hit_seq, cents = _paid_hit(ledger, table)
    assert wait_until(lambda: reconciled_to(lap, ledger.last_seq), 10)
    assert cents == 100_000 + 105 + 63  # the meter with both wagers' 21 %
    name = lap.cfg.role_for("T1")
    role = sql.Identifier(name)
    with psycopg.connect(pg_dsn, autocommit=True) as c:  # the LAP's server goes away …
        if restart:
            u.stop()
        c.execute(sql.SQL("ALTER ROLE {} NOLOGIN").format(role))
        c.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (name,))
        # … and comes back from a backup: the hit and its payout lost, the meter as before the hit
        _restore(pg_dsn, schema, tmp_path / "older.sql")
        more = ledger.append([contrib(3, 100, round_no=2)])  # a wager made while the LAP was away
        c.execute(sql.SQL("ALTER ROLE {} LOGIN").format(role))
    for store in (beat.store, lap.store):
        store.conn.close()
        store.conn = connect(pg_dsn)
    if restart:
        table.msgs.clear()
        u = uplink()
    # the table is told the LAP is behind it (its linked wager stays closed) …
    assert wait_until(lambda: any("the LAP is behind this table" in m["problem"] for m in table.of("mismatch")), 10)
    # … every missing record is resent, the paid hit at the amount paid, and the LAP reconciles
    assert wait_until(lambda: reconciled_to(lap, more[0].seq), 15)
    hits = rows(lap, "SELECT seq, amount_cents FROM {s}.hits WHERE table_id = 'T1'")
    assert [(h["seq"], h["amount_cents"]) for h in hits] == [(hit_seq, cents)]
    assert [p["cents"] for p in rows(lap, "SELECT cents FROM {s}.payouts")] == [cents]
    rec = lap.store.reconcile()
    assert rec.ok, rec.problems
    assert rec.levels["primary"].cents == 100_000 + 21  # reset, plus the wager made meanwhile

    def kinds() -> list[str]:
        return [r["kind"] for r in rows(lap, "SELECT kind FROM {s}.recoveries ORDER BY id")]

    # recorded at the uplink's next check of the LAP's memory after the LAP reconciled (a moment
    # after the reconciliation itself: read at once, the last kind was still "hit-restored")
    assert wait_until(lambda: kinds()[-1] == "caught-up", 10)
    assert kinds()[0] == "lap-behind" and "hit-restored" in kinds()
    # and only then is the table told it is reconciled again
    assert wait_until(lambda: table.of("reconciled") and table.of("reconciled")[-1]["seq"] >= more[0].seq, 10)
    last_mismatch = max(i for i, m in enumerate(table.msgs) if m.get("t") == "mismatch")
    first_after = [m for m in table.msgs[last_mismatch:] if m.get("t") == "reconciled"]
    assert first_after and first_after[0]["seq"] >= more[0].seq  # never the restored, older position
    assert u.memory.behind is None
    from controller.lap.floor import FloorData

    floor = FloorData(pg_dsn, schema)
    try:
        shown = floor.snapshot()["recoveries"]  # the floor view's data shows each, newest first
    finally:
        floor.close()
    assert [r["kind"] for r in reversed(shown)] == kinds() and all(r["table_id"] == "T1" for r in shown)
    assert any(r["kind"] == "hit-restored" and r["cents"] == cents for r in shown)


def test_a_lap_whose_database_is_another_one_is_checked_before_the_table_reopens(rig, pg_dsn):
    """The system identifier or the timeline changed (a failover, a restore): the table is
    closed until the LAP has reconciled it on the new database; recorded."""
    lap, ledger, table, uplink, beat = rig
    ledger.append([contrib(1)])
    u = uplink()
    assert wait_until(lambda: reconciled_to(lap, 1) and u.memory.identity is not None, 10)
    assert u.memory.identity is not None
    u.memory.identity = ("1", 99)  # as if the last connection had been to another server
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        c.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (lap.cfg.role_for("T1"),)
        )
    assert wait_until(lambda: any("another one now" in m["problem"] for m in table.of("mismatch")), 10)
    assert wait_until(lambda: u.memory.behind is None, 10)
    kinds = [r["kind"] for r in rows(lap, "SELECT kind FROM {s}.recoveries ORDER BY id")]
    assert kinds == ["identity-changed", "caught-up"]
    # told on the table's channel after the check (its own thread): waited for, not raced
    assert wait_until(lambda: [m["seq"] for m in table.of("reconciled")][-1:] == [1], 5)


def lap_proof(lap: Any, table: str, seq: int, rnd: int, seat: int, fraction: tuple[int, int], cents: int) -> str:
    """The LAP's proof that it decided ``cents`` for this claim (as a LAP that then lost the hit did)."""
    row = lap.store.conn.execute(
        sql.SQL("SELECT {}.hit_proof(%s, %s, 'primary', %s, %s, %s, %s, %s)").format(sql.Identifier(lap.cfg.schema)),
        (table, seq, rnd, seat, fraction[0], fraction[1], cents),
    ).fetchone()
    return str(row[0])


def test_a_restored_hit_is_held_while_the_meter_is_short_and_a_table_role_cannot_record_one(rig, pg_dsn):
    """``paid_cents`` on a hit the LAP does not hold: above what the meter holds after it (reset
    included) it is held (the other tables are still resending), never taken into a negative
    meter; and a table role cannot
    write a recovery of a kind only the LAP's rules record."""
    lap, ledger, table, uplink, beat = rig
    lap.send("T2", 1, "contribution", {"wager": 100, "round": 1, "seat": 1})
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState, match="less than the"):
        lap.send(
            "T2",
            2,
            "hit",
            {
                **{"fraction_num": 1, "fraction_den": 1, "round": 1, "seat": 1, "hand": "x"},
                **{"paid_cents": 10_000_000, "paid_proof": lap_proof(lap, "T2", 2, 1, 1, (1, 1), 10_000_000)},
            },
        )
    assert rows(lap, "SELECT * FROM {s}.hits") == []
    t2 = lap.table("T2")
    with pytest.raises(psycopg.errors.InvalidParameterValue):
        t2.execute(sql.SQL("SELECT {}.report_recovery('hit-restored', 'x')").format(sql.Identifier(lap.cfg.schema)))
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        t2.execute(
            sql.SQL("INSERT INTO {}.recoveries (table_id, kind, detail) VALUES ('T2', 'caught-up', 'x')").format(
                sql.Identifier(lap.cfg.schema)
            )
        )


def test_a_restored_full_hit_the_meter_is_short_of_is_taken_from_the_reset_meter(rig):
    """After an asynchronous failover the tables resend in their own order: another table's later
    hit, restored first, leaves the meter below this hit's paid amount, and no resend brings it
    back (held for that, the table stayed closed for good, lost 37-44 records).  A full
    hit is taken at the amount paid while the reset meter covers the shortfall (recorded as
    short), the meters reconcile; a partial hit that would take the meter negative is still held."""
    lap, ledger, table, uplink, beat = rig
    lap.send("T2", 1, "contribution", {"wager": 100, "round": 1, "seat": 1})
    lap.send("T2", 2, "contribution", {"wager": 100, "round": 1, "seat": 2})
    meter = 100_000 + 42  # seed, plus 21% of two wagers
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState, match="less than the"):
        lap.send(  # 10% of the meter: nothing resets it, the meter would go negative
            "T2",
            3,
            "hit",
            {
                **{"fraction_num": 1, "fraction_den": 10, "round": 1, "seat": 2, "hand": "x"},
                **{"paid_cents": meter + 1, "paid_proof": lap_proof(lap, "T2", 3, 1, 2, (1, 10), meter + 1)},
            },
        )
    paid = meter + 479  # decided on a meter that held more than this LAP's now
    proof = lap_proof(lap, "T2", 3, 1, 1, (1, 1), paid)
    claim = {"fraction_num": 1, "fraction_den": 1, "round": 1, "seat": 1, "hand": "x"}
    lap.send("T2", 3, "hit", {**claim, "paid_cents": paid, "paid_proof": proof})
    hits = rows(lap, "SELECT seq, amount_cents FROM {s}.hits WHERE table_id = 'T2'")
    assert [(h["seq"], h["amount_cents"]) for h in hits] == [(3, paid)]
    lap.send("T2", 4, "paid", {"hit_seq": 3, "cents": paid})
    rec = lap.store.reconcile()
    assert rec.ok, rec.problems
    assert rec.levels["primary"].cents == 100_000 - 479  # the reset meter, less what the meter lacked
    restored = rows(lap, "SELECT detail, cents FROM {s}.recoveries WHERE kind = 'hit-restored'")
    assert [r["cents"] for r in restored] == [paid] and "479 short" in restored[0]["detail"], restored


@pytest.mark.slow  # over 1.5 s on a quiet 2-core machine
def test_records_the_lap_holds_wait_on_the_same_connection(rig):
    """A LAP that takes no record (inoperable; a restored hit it cannot pay yet) answers SQLSTATE
    55000, which psycopg makes an OperationalError: the uplink keeps its connection and says the
    records wait (taken for a lost database, it reconnected every second and the table
    heard "the uplink lost the database"); they are sent once the LAP takes them."""
    lap, ledger, table, uplink, beat = rig
    ledger.append([contrib(1)])
    u = uplink()
    assert wait_until(lambda: reconciled_to(lap, 1), 10)
    said: list[str] = []
    u.log = said.append
    links = len(table.of("link"))
    lap.store.set_inoperable("a test")
    ledger.append([contrib(2)])
    u.wake.set()
    assert wait_until(lambda: any("takes no record" in m for m in said), 10), said
    lap.store.set_state("running")
    assert wait_until(lambda: reconciled_to(lap, 2), 10)
    assert not any("unreachable" in m for m in said), said
    assert len(table.of("link")) == links  # never told the link was lost


# ---------------------------------------------------------------------------- the batch check
def test_the_batch_check_reads_running_totals_not_the_tables_history(make_lap, pg_dsn):
    """With 300 events held, a batch touches none of them but the one it names (counted by the
    statistics of the batch's own transaction); the totals equal the events."""
    lap = make_lap()
    for i in range(300):
        lap.send("T1", i + 1, "contribution", {"wager": 5, "round": i + 1, "seat": 1})
    held = rows(lap, "SELECT events, wagers, max_seq FROM {s}.held WHERE table_id = 'T1'")[0]
    assert (held["events"], held["wagers"], held["max_seq"]) == (300, 1500, 300)
    s = sql.Identifier(lap.cfg.schema)
    with psycopg.connect(pg_dsn, autocommit=True) as c, c.transaction():

        def touched() -> int:
            r = c.execute(
                "SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) FROM pg_stat_xact_user_tables"
                " WHERE schemaname = %s AND relname = 'events'",
                (lap.cfg.schema,),
            ).fetchone()
            return int(r[0]) if r else 0

        before = touched()
        c.execute(
            sql.SQL(
                "INSERT INTO {}.batches (table_id, last_seq, events_total, wagers_total, chain_head, key_no, auth)"
                " VALUES ('T1', 300, 300, 1500, '300:abc', %s, %s)"
            ).format(s),
            lap.batch_auth("T1", 300, 300, 1500, "300:abc"),
        )
        assert touched() - before <= 1
    assert rows(lap, "SELECT reconciled_seq FROM {s}.members WHERE table_id = 'T1'")[0]["reconciled_seq"] == 300
    assert lap.store.reconcile().ok


def test_running_totals_changed_behind_the_rules_fail_the_reconciliation(make_lap, pg_dsn):
    lap = make_lap()
    lap.send("T1", 1, "contribution", {"wager": 5, "round": 1, "seat": 1})
    with psycopg.connect(pg_dsn, autocommit=True) as c:  # the database's owner
        c.execute(sql.SQL("UPDATE {}.held SET events = 7").format(sql.Identifier(lap.cfg.schema)))
    rec = lap.store.reconcile()
    assert not rec.ok and any("running totals (7 events" in p for p in rec.problems)


# ---------------------------------------------------------------------------- replication
def test_the_lap_refuses_to_run_without_a_synchronous_standby_unless_lap_toml_allows_it(pg_dsn, lap_schema):
    doc = lap_doc(lap_schema)
    del doc["link"]["allow_async_replication"]
    logs: list[str] = []
    svc = LapService(parse_lap(doc, "lap.toml"), pg_dsn, log=logs.append)
    with pytest.raises(LapError, match="replication: no synchronous standby configured.*allow_async_replication"):
        svc.start_link()
    assert any("lap: replication: no synchronous standby" in m for m in logs)
    doc["link"]["allow_async_replication"] = True
    svc = LapService(parse_lap(doc, "lap.toml"), pg_dsn, log=logs.append)
    store = svc.start_link()
    try:
        got = store._rows("SELECT replication FROM {s}.link")[0]["replication"]
        assert "no synchronous standby" in got and got.endswith("(allowed by lap.toml)")
    finally:
        store.conn.close()


def test_allow_async_replication_is_validated_like_every_option(lap_schema):
    from controller.settings.config import ConfigError

    doc = lap_doc(lap_schema)
    doc["link"]["allow_async_replication"] = "yes"
    with pytest.raises(ConfigError, match=r"\[link\] allow_async_replication.*true or false"):
        parse_lap(doc, "lap.toml")


@pytest.mark.slow
def test_the_lap_finds_its_own_silent_connection_dead_and_beats_again(make_lap, pg_dsn):
    """The LAP's heartbeat statement sent into a connection gone silent (hil/netproxy.py
    ``blackhole``: nothing closed, bytes swallowed) is ended by its watchdog; it reconnects and
    beats again."""
    import time

    from hil.netproxy import NetProxy

    info = psycopg.conninfo.conninfo_to_dict(pg_dsn)
    if str(info.get("host", "")).startswith("/") or not info.get("host"):
        pytest.skip("the test server is on a Unix socket: no TCP to break")
    lap = make_lap()
    proxy = NetProxy(str(info["host"]), int(info.get("port") or 5432))
    logs: list[str] = []
    svc = LapService(lap.cfg, _proxy_dsn(pg_dsn, proxy.port), log=logs.append)
    th = threading.Thread(target=svc.run, daemon=True)
    th.start()

    def beat_at() -> float:
        r = rows(lap, "SELECT extract(epoch FROM heartbeat_at) AS t FROM {s}.link")[0]["t"]
        return 0.0 if r is None else float(r)

    try:
        assert wait_until(lambda: beat_at() > 0, 20)
        proxy.blackhole()
        t0 = time.monotonic()
        stalled = beat_at()
        time.sleep(1.0)
        first = beat_at()
        assert wait_until(lambda: beat_at() > first + 0.5, 15)  # beating again on a new connection
        assert time.monotonic() - t0 < 12
        assert first - stalled < 0.5  # it had stopped: the old connection was silent
        assert any("database unreachable" in m for m in logs)
    finally:
        svc.kill()
        th.join(10)
        proxy.close()


@pytest.mark.slow
@pytest.mark.soak
@pytest.mark.usefixtures("whole_machine")  # tests/conftest.py
def test_two_hundred_tables_fit_in_three_hundred_connections(tmp_path):
    """The goal: 200 tables on one LAP with ``max_connections = 300`` (a throwaway
    cluster): every uplink reaches its LAP and is reconciled, each on one connection."""
    from controller.lap.lap import LapStore
    from controller.lap.linkkeys import enrol
    from controller.lap.pgtemp import temp_cluster

    n = 200
    with temp_cluster(max_connections=300) as dsn:
        doc = lap_doc("cap", tables=n)
        cfg = parse_lap(doc, "lap.toml")
        store = LapStore(connect(dsn), cfg.schema)
        store.install(cfg.group)
        store.configure(cfg)
        store.set_state("running")
        keys = {t.table_id: enrol(store.conn, cfg.schema, t.table_id) for t in cfg.tables}
        beat = Beat(dsn, cfg.schema)
        key = throwaway_key()
        ups: list[Uplink] = []
        socks: list[FakeTableSocket] = []
        logs: list[str] = []
        try:
            for i in range(n):
                tid = f"T{i + 1}"
                d = tmp_path / tid
                d.mkdir()
                led = Ledger(d / "l.sqlite3", tid, key=key)
                led.append([contrib(1)])
                led.close()
                socks.append(FakeTableSocket(d / "s.sock"))
                ucfg = UplinkConfig(
                    psycopg.conninfo.make_conninfo(dsn, user=cfg.role_for(tid)),
                    cfg.schema,
                    tid,
                    d / "l.sqlite3",
                    d / "s.sock",
                    poll_s=1.0,
                    refresh_s=1.0,
                    key=key,
                    link_key=keys[tid],
                )
                u = Uplink(ucfg, log=logs.append)
                u.start()
                ups.append(u)

            def reconciled() -> int:
                r = store.conn.execute(
                    sql.SQL("SELECT count(*) FROM {}.members WHERE reconciled_seq >= 1").format(
                        sql.Identifier(cfg.schema)
                    )
                ).fetchone()
                return int(r[0]) if r else 0

            assert wait_until(lambda: reconciled() == n, 120, 0.5), reconciled()

            def connections() -> int:
                r = store.conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE usename LIKE %s", (cfg.schema + "\\_%",)
                ).fetchone()
                return int(r[0]) if r else -1

            why = {m[:90] for m in logs if "connected to the table" not in m}
            stats = (
                sum(u.listener.reconnects for u in ups),
                sum(u.connection.fired for u in ups),
                sorted(why)[:8],
            )
            # one connection per table (an uplink whose read outlived its deadline on this loaded
            # process reconnects: the count settles back at one each)
            assert wait_until(lambda: connections() == n, 30, 0.5), (connections(), stats)
            assert store.reconcile().ok
        finally:
            for u in ups:
                u.stop_event.set()
            for u in ups:
                u.stop()
            for s in socks:
                s.close()
            beat.close()
            store.conn.close()


def test_lap_check_says_the_replication_and_fails_without_the_explicit_option(pg_dsn, lap_schema, tmp_path, capsys):
    from controller.cli import main

    lines = f'[link]\ngroup = "pit"\nschema = "{lap_schema}"\n'
    rest = (
        '[levels.primary]\nseed = "$1,000"\nincrement_rate = "10%"\nmax_wager = "$10"\nmeter_pays = ["100%"]\n'
        '[tables.T1]\nasset = "A-1"\ngame = "six-card-fortune"\n'
    )
    cfg = tmp_path / "lap.toml"
    cfg.write_text(lines + rest)
    assert main(["lap", "--sim", "--db", pg_dsn, "--config", str(cfg), "--check"]) == 1
    out = capsys.readouterr().out
    assert "replication: no synchronous standby configured" in out and "REFUSED" in out
    cfg.write_text(lines + "allow_async_replication = true\n" + rest)
    assert main(["lap", "--sim", "--db", pg_dsn, "--config", str(cfg), "--check"]) == 0
    out = capsys.readouterr().out
    assert "no synchronous standby configured" in out and "(allowed by lap.toml)" in out
