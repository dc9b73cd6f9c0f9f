"""The attacks played against a pit — real table controllers (the harness's
Table and SQLite ledger) on their real link sockets, real uplinks logging in as their own roles,
the real LAP service and PostgreSQL (tests/link/test_link_scenarios.py's Pit).

- finding 3: a table's role floods 200,000 forged notifications (heartbeats, a replayed hit,
  reconciliations, a stopped link): no table closes, no sign announces anything, the uplinks
  stop listening for a while and read a bounded number of times;
- finding 2: a refusal closes that table's linked wager, the reason on its sign and in its
  ``link.state`` record; the operator's reopening opens it again;
- finding 6: the owner edits a meter while the link runs: every table closes, "LAP INOPERABLE";
- finding 8: a wager taken at one rate, its contribution sent after a rate change made with the
  link stopped, is priced at the rate it was taken under;
- finding 1: a record forged into a table's ledger latches the table's ledger tilt."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg import sql

from controller.core.records import Kind
from controller.lap.config import parse_lap
from tests.integration.harness import Harness, records
from tests.integration.test_table_progressive import FIVE_ACES, play_to_settlement
from tests.link.conftest import lap_doc
from tests.link.test_link_scenarios import Pit, paid

pytestmark = pytest.mark.slow

LEVEL = {"seed": "$5,000", "reset": "$5,000", "increment_rate": "21%"}


@pytest.fixture
def pit(make_lap, pg_dsn, tmp_path) -> Iterator[Pit]:
    lap = make_lap(tables=2, **LEVEL)
    p = Pit(lap, pg_dsn, tmp_path, timeout=2)
    yield p
    p.close()


def signs(h: Harness) -> list[str]:
    return [c[1][0] for c in h.sign.calls if c[0] == "message"]


def announced(h: Harness) -> int:
    return sum(1 for m in signs(h) if m.startswith("LINKED HIT"))


FLOOD = """
SELECT count(pg_notify(%(ch)s, CASE i %% 5
    WHEN 0 THEN json_build_object('t', 'hb', 'state', 'running', 'meters', json_build_object('primary', 1), 'n', i)
    WHEN 1 THEN json_build_object('t', 'meter', 'level', 'primary', 'cents', 1, 'n', i,
        'hit', json_build_object('table', 'T2', 'seq', 1, 'order', 1, 'amount', 999999, 'asset', 'FAKE'))
    WHEN 2 THEN json_build_object('t', 'reconciled', 'table', 'T1', 'seq', 1000000, 'n', i)
    WHEN 3 THEN json_build_object('t', 'state', 'state', 'stopped', 'n', i)
    ELSE json_build_object('t', 'mismatch', 'table', 'T1', 'problem', 'forged', 'n', i) END::text))
FROM generate_series(1, 200000) i
"""


def test_a_flood_of_forged_notifications_closes_no_table_and_announces_nothing(pit):
    t1, t2 = pit.add("T1"), pit.add("T2")
    pit.until(lambda: pit.is_open("T1") and pit.is_open("T2"))
    # a genuine hit first, so that a forged doorbell has an old hit to replay
    play_to_settlement(t2, (3,), hands={3: FIVE_ACES})
    t2.press("key")
    pit.until(lambda: paid(t2) == [500_021] and announced(t1) == 1 and announced(t2) == 1)
    pit.until(lambda: pit.is_open("T1") and pit.is_open("T2"))
    floods = {tid: up.listener.floods for tid, up in pit.uplinks.items()}
    reads = {tid: up.listener.reads for tid, up in pit.uplinks.items()}
    started = time.monotonic()
    with psycopg.connect(psycopg.conninfo.make_conninfo(pit.dsn, user=pit.lap.cfg.role_for("T2"))) as c:
        c.execute(FLOOD, {"ch": pit.lap.cfg.schema})  # one statement, committed at once: 200,000
        c.commit()
    t0 = time.monotonic()
    while time.monotonic() - t0 < 5.0:  # more than twice the tables' link timeout (2 s)
        pit.pump()
        assert pit.is_open("T1") and pit.is_open("T2"), f"closed {time.monotonic() - t0:.2f} s into the flood"
        time.sleep(0.02)
    assert announced(t1) == 1 and announced(t2) == 1  # no replayed hit on any sign
    for tid, up in pit.uplinks.items():
        # the doorbells woke the uplink early, but the flood made it stop listening once (not once
        # per few hundred of the 200,000 it still had to receive) …
        assert up.listener.floods == floods[tid] + 1
        assert not up.listener.listening and up.listener.guard.deaf()
        # … and the LAP's rows were read at most once per ``min_gap_s`` (and every
        # ``flood_refresh_s`` while deaf): a bounded cost per second, whatever was rung
        assert up.cfg.flood_refresh_s >= up.cfg.min_gap_s
        assert up.listener.reads - reads[tid] <= (time.monotonic() - started) / up.cfg.min_gap_s + 2
    assert records(t1, "link.state")[-1].data["open"] is True  # never closed meanwhile
    # and the link still works: T1's wager reaches the meter every sign shows
    play_to_settlement(t1, (2,))
    pit.until(lambda: t2.table.lap is not None and t2.table.lap.meters.get("primary") == 500_021)


def test_a_refusal_closes_the_tables_wager_with_the_reason_on_its_sign_until_reopened(pit):
    t1 = pit.add("T1")
    pit.add("T2")
    pit.until(lambda: pit.is_open("T1") and pit.is_open("T2"))
    # T1's role (its password taken from its uplink's DSN) claims the whole meter for a seat it
    # never wagered on
    pit.lap.send("T1", 10_000, "hit", {"fraction_num": 1, "fraction_den": 1, "round": 1, "seat": 4})
    pit.until(lambda: not pit.is_open("T1"))
    last = records(t1, "link.state")[-1].data
    assert last["open"] is False
    assert last["reason"] == (
        "the LAP refused record 10000 (hit): this table made no progressive wager in round 1 at seat 4"
    )
    assert signs(t1)[-1] == "LINKED PROGRESSIVE CLOSED - REFUSED BY THE LAP"
    assert pit.lap.store._rows("SELECT * FROM {s}.hits") == []
    time.sleep(0.5)
    pit.pump()
    assert pit.is_open("T2")  # the other table plays on
    assert pit.lap.store.reopen("T1", "a technician checked T1's role") is not None
    pit.until(lambda: pit.is_open("T1"))


def test_an_owners_meter_edit_closes_every_table_with_the_lap_inoperable(pit):
    t1, t2 = pit.add("T1"), pit.add("T2")
    pit.until(lambda: pit.is_open("T1") and pit.is_open("T2"))
    pit.lap.store.conn.execute(
        sql.SQL("UPDATE {}.levels SET value_num = value_num + den * 100000").format(sql.Identifier(pit.lap.cfg.schema))
    )
    took = pit.until(lambda: not pit.is_open("T1") and not pit.is_open("T2"), timeout=5)
    assert took < 2.0  # reconcile every 200 ms here, the tables' tick 250 ms
    for h in (t1, t2):
        assert records(h, "link.state")[-1].data["reason"].startswith("the link is inoperable: ")
        assert signs(h)[-1] == "LINKED PROGRESSIVE CLOSED - LAP INOPERABLE"


def test_a_rate_change_does_not_reprice_a_contribution_waiting_in_the_outbox(pit, lap_schema):
    t1 = pit.add("T1")
    pit.until(lambda: pit.is_open("T1"))
    t1.shuffled()
    t1.edge("bet.progressive.2", True)
    t1.press("lockout")  # the wager taken at 21 % (rate version 1)
    pit.uplinks["T1"].stop()  # the uplink is down
    pit.until(lambda: not pit.is_open("T1"))
    t1.edge("bet.progressive.2", False)
    t1.press("confirm")  # the contribution waits in the ledger (the outbox)
    pit.stop_lap()  # the operator stops the link and changes the rate: 10 %
    pit.lap.cfg = parse_lap(lap_doc(lap_schema, 2, **{**LEVEL, "increment_rate": "10%"}), "lap.toml")
    pit.start_lap()
    pit.until(lambda: pit.lap.store.state() == "running")
    pit.start_uplink("T1")
    pit.until(lambda: pit.lap.store._rows("SELECT count(*) AS n FROM {s}.contributions")[0]["n"] == 1)
    assert pit.lap.store.levels()["primary"].cents == 500_021  # 21 cents, not 10
    (rec,) = records(t1, Kind.LINK_CONTRIBUTION)
    assert rec.data["rate_version"] == 1  # the table's record says which
    row = pit.lap.store._rows("SELECT rate_version, rate_num, rate_den FROM {s}.contributions")[0]
    assert (row["rate_version"], row["rate_num"], row["rate_den"]) == (1, 21, 100)
    assert pit.lap.store._rows("SELECT rate_version FROM {s}.levels")[0]["rate_version"] == 2
    pit.until(lambda: pit.is_open("T1"))
    link = t1.table.lap
    assert link is not None and link.rate_versions == {"primary": 2}  # the next wager is taken at the new rate
    assert pit.lap.store.reconcile().ok


def test_a_record_forged_into_the_tables_ledger_latches_its_ledger_tilt(pit):
    t1 = pit.add("T1")
    pit.until(lambda: pit.is_open("T1"))
    db = sqlite3.connect(pit.tmp / "T1.db")
    seq, prev = db.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
    data: dict[str, Any] = {"level": "primary", "wager": 100, "seat": 1}
    db.execute(
        "INSERT INTO events (seq, ts, table_id, round, kind, data, prev, hash) VALUES (?, ?, ?, 1, ?, ?, ?, ?)",
        (seq + 1, "2026-01-01T00:00:00+00:00", "HARNESS", Kind.LINK_CONTRIBUTION, json.dumps(data), prev, "0" * 64),
    )
    db.commit()
    db.close()
    t1.ledger._load_head()  # the table's next records follow it (its writer would otherwise collide)
    pit.until(lambda: t1.state == "tilt")
    raised = [e.data for e in records(t1, "tilt.raised")]
    assert any(d["source"] == "ledger" and "cannot verify a ledger record" in d["reason"] for d in raised), raised
    assert not pit.is_open("T1")
    assert pit.lap.store._rows("SELECT count(*) AS n FROM {s}.events")[0]["n"] == 0
    pit.until(lambda: [(r["seq"], r["kind"]) for r in pit.lap.store.refusals()] == [(seq + 1, "ledger")])
