"""A writer of the table's state directory (no key) forges ledger records.

The attacker opens the table's SQLite ledger as any process of its user can and appends a
$1,000,000-style contribution and a 100 % hit claim with made-up MACs, or edits a record the LAP
has not had yet.  Against a real PostgreSQL LAP and the real uplink: nothing of it is forwarded,
the table is told (it latches its ledger tilt), the LAP records it and closes the table's linked
wager; the LAP's meter, hits and record of the chain head do not move."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import psycopg
import pytest

from controller.books.ledger import Ledger, Record
from controller.books.ledgerkey import throwaway_key
from controller.core.records import Kind
from controller.lap.lap import wait_until
from controller.uplink.uplink import Uplink, UplinkConfig
from tests.link.test_uplink import FakeTableSocket


def _rig(make_lap: Any, pg_dsn: str, tmp: Path) -> tuple[Any, Ledger, FakeTableSocket, Uplink]:
    lap = make_lap()
    key = throwaway_key()
    ledger = Ledger(tmp / "ledger.sqlite3", "T1", key=key)
    table = FakeTableSocket(tmp / "link.sock")
    dsn = psycopg.conninfo.make_conninfo(pg_dsn, user=lap.cfg.role_for("T1"))
    cfg = UplinkConfig(
        dsn,
        lap.cfg.schema,
        "T1",
        tmp / "ledger.sqlite3",
        tmp / "link.sock",
        poll_s=0.1,
        key=key,
        link_key=lap.keys["T1"],
    )
    return lap, ledger, table, Uplink(cfg, log=lambda m: None)


def _forge(path: Path, round_no: int, kind: str, data: dict[str, Any]) -> int:
    """Append a record as someone who can write the file but has no key: the chain's ``prev`` is
    right (the last record's MAC is in the file), the record's own MAC is made up."""
    db = sqlite3.connect(path)
    seq, prev = db.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
    db.execute(
        "INSERT INTO events (seq, ts, table_id, round, kind, data, prev, hash) VALUES (?, ?, 'T1', ?, ?, ?, ?, ?)",
        (seq + 1, "2026-01-01T00:00:00.000000+00:00", round_no, kind, json.dumps(data), prev, "f" * 64),
    )
    db.commit()
    db.close()
    return int(seq) + 1


def _lap_state(lap: Any) -> tuple[Any, ...]:
    lv = lap.store.levels()["primary"]
    head = lap.store._rows("SELECT chain_head FROM {s}.members WHERE table_id = 'T1'")[0]["chain_head"]
    return lv.value, lv.hits, head


@pytest.mark.slow
def test_forged_ledger_records_are_not_forwarded_and_are_reported(make_lap, pg_dsn, tmp_path):
    lap, ledger, table, up = _rig(make_lap, pg_dsn, tmp_path)
    try:
        ledger.append([Record(Kind.POWER_UP, 0, {})])
        ledger.append([Record(Kind.LINK_CONTRIBUTION, 1, {"level": "primary", "wager": 100, "seat": 1})])
        up.start()
        assert wait_until(lambda: lap.store._rows("SELECT count(*) AS n FROM {s}.contributions")[0]["n"] == 1, 10)
        assert wait_until(lambda: _lap_state(lap)[2] == f"{ledger.last_seq}:{ledger.last_hash}", 5)
        before = _lap_state(lap)
        # the attack: a contribution and a 100 % claim for it, MACs made up
        first = _forge(
            tmp_path / "ledger.sqlite3", 2, Kind.LINK_CONTRIBUTION, {"level": "primary", "wager": 500, "seat": 3}
        )
        _forge(
            tmp_path / "ledger.sqlite3", 2, Kind.LINK_HIT, {"level": "primary", "fraction": "1", "seat": 3, "hand": "x"}
        )
        table.wake(first + 1)
        wait_until(lambda: False, 1.5)  # the uplink's wake-up and polls (every 100 ms) come and go
        held = [r["seq"] for r in lap.store._rows("SELECT seq FROM {s}.events WHERE table_id = 'T1'")]
        assert held == [2]  # nothing forged reached the LAP
        assert _lap_state(lap) == before  # meter, hits and the recorded chain head unchanged
        assert wait_until(lambda: bool(table.of("unverified")), 5), table.msgs
        told = table.of("unverified")[-1]
        assert told["seq"] == first and "MAC does not match" in told["problem"]
        assert [(r["seq"], r["kind"]) for r in lap.store.refusals()] == [(first, "ledger")]  # recorded
        closed = lap.store._rows("SELECT closed FROM {s}.members WHERE table_id = 'T1'")[0]["closed"]
        assert closed and f"ledger record {first}" in closed  # the table's linked wager closed at the LAP
        assert wait_until(lambda: any(m.get("reason") for m in table.of("refused")), 5)
    finally:
        up.stop()
        table.close()
        ledger.close()


def test_an_edited_record_not_yet_sent_stops_forwarding_there(make_lap, pg_dsn, tmp_path):
    """The attacker edits a genuine contribution the LAP has not had yet (its wager): the record
    and everything after it — genuine records too — stay in the ledger until a technician acts."""
    lap, ledger, table, up = _rig(make_lap, pg_dsn, tmp_path)
    try:
        evs = ledger.append(
            [
                Record(Kind.LINK_CONTRIBUTION, 1, {"level": "primary", "wager": 100, "seat": 1}),
                Record(Kind.LINK_CONTRIBUTION, 1, {"level": "primary", "wager": 100, "seat": 2}),
                Record(Kind.LINK_CONTRIBUTION, 1, {"level": "primary", "wager": 100, "seat": 3}),
            ]
        )
        db = sqlite3.connect(tmp_path / "ledger.sqlite3")
        db.execute(
            "UPDATE events SET data = ? WHERE seq = ?",
            (
                json.dumps({"level": "primary", "wager": 1000, "seat": 2}, sort_keys=True, separators=(",", ":")),
                evs[1].seq,
            ),
        )
        db.commit()
        db.close()
        up.start()
        assert wait_until(lambda: lap.store._rows("SELECT count(*) AS n FROM {s}.batches")[0]["n"] > 0, 10)
        wait_until(lambda: False, 0.5)
        rows = lap.store._rows("SELECT seq, wager_cents FROM {s}.contributions ORDER BY seq")
        assert rows == [{"seq": evs[0].seq, "wager_cents": 100}]  # only what verifies, up to the edit
        assert wait_until(lambda: bool(table.of("unverified")), 10)
        assert table.of("unverified")[-1]["seq"] == evs[1].seq
    finally:
        up.stop()
        table.close()
        ledger.close()
