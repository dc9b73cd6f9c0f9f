"""The uplink's parts, each alone against a real PostgreSQL and a real SQLite ledger (no thread of
the uplink's running): the connection's deadlines, batching and verification, the LAP's memory, the
table's status.  The uplink as a whole: tests/link/test_uplink.py, test_recovery.py."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from controller.books.ledger import Ledger, Record
from controller.books.ledgerkey import throwaway_key
from controller.core.records import Kind
from controller.uplink.batching import Batcher
from controller.uplink.config import UplinkConfig
from controller.uplink.connection import Connection
from controller.uplink.lapview import LapView, Listener, ListenerTiming
from controller.uplink.ledgerseam import SqliteLedgerSource
from controller.uplink.memory import LapMemory
from controller.uplink.status import StatusRelay


class Parts:
    """The parts as the uplink wires them, the table's messages kept, a connection as the table's role."""

    def __init__(self, lap: Any, pg_dsn: str, tmp_path: Path):
        self.lap = lap
        key = throwaway_key()
        self.ledger = Ledger(tmp_path / "ledger.sqlite3", "T1", key=key)
        dsn = psycopg.conninfo.make_conninfo(pg_dsn, user=lap.cfg.role_for("T1"))
        self.cfg = UplinkConfig(
            dsn,
            lap.cfg.schema,
            "T1",
            tmp_path / "ledger.sqlite3",
            tmp_path / "link.sock",
            key=key,
            link_key=lap.keys["T1"],
        )
        self.told: list[dict[str, Any]] = []
        self.logs: list[str] = []
        self.stop = threading.Event()
        self.view = LapView("T1", self.send)
        self.listener = Listener(
            self.cfg.schema, self.view, self.send, self.logs.append, ListenerTiming(deadline_s=4.0)
        )
        self.connection = Connection(self.cfg, self.listener, self.stop)
        self.connection.arm()
        self.sender = Batcher(self.cfg, self.logs.append, self.send, self.connection, self.listener)
        self.memory = LapMemory(self.cfg, self.logs.append, self.send, self.view)
        self.sender.on_sent = self.memory.sent
        self.source = SqliteLedgerSource(self.cfg.ledger, key)
        self.conn = self.connection.open()

    def send(self, msg: dict[str, Any], key: str | None = None) -> None:
        self.told.append(msg)

    def of(self, t: str) -> list[dict[str, Any]]:
        return [m for m in self.told if m.get("t") == t]

    def close(self) -> None:
        self.stop.set()
        self.conn.close()
        self.source.close()
        self.ledger.close()


@pytest.fixture
def parts(make_lap: Any, pg_dsn: str, tmp_path: Path) -> Iterator[Parts]:
    p = Parts(make_lap(), pg_dsn, tmp_path)
    yield p
    p.close()


def contrib(seat: int, wager: int = 100) -> Record:
    return Record(Kind.LINK_CONTRIBUTION, 1, {"level": "primary", "wager": wager, "seat": seat})


def test_the_connections_deadlines_follow_the_link_timeout(parts: Parts) -> None:
    c = parts.connection
    assert c.read_limit_s == parts.cfg.link_timeout_s + 2.0  # 5 s at 3 s: nothing waits for a lock on a read
    # a batch may wait for a level's lock up to the server's statement_timeout: the watchdog waits 2 s past it
    assert c.send_limit_s == c.deadlines.statement_timeout_ms / 1000 + 2.0 > c.read_limit_s - 2.0
    assert c.relink.progress_s == c.send_limit_s - 1.0  # the server's answer to a batch comes first
    assert c.claim_s == c.send_limit_s + 1.0
    assert c.fired == 0
    before = Connection(parts.cfg, parts.listener, parts.stop)
    with pytest.raises(AssertionError, match="not started"):
        before.tick(None)  # the watchdog is armed by the uplink's start


def test_a_batch_sends_the_verified_records_once(parts: Parts) -> None:
    parts.ledger.append([Record(Kind.POWER_UP, 0, {}), contrib(1), contrib(2, 500)])
    last = parts.source.last_seq()
    assert parts.sender.batch(parts.conn, parts.source) is False  # fewer than a whole batch: no more
    assert (parts.sender.acked, parts.sender.sent_batches, parts.memory.lap_high) == (last, 1, last)
    held = parts.lap.store._rows("SELECT max_seq FROM {s}.held WHERE table_id = 'T1'")
    assert held == [{"max_seq": last}]
    assert parts.sender.batch(parts.conn, parts.source) is False  # nothing new: no batch
    assert parts.sender.sent_batches == 1
    parts.sender.force = True  # the LAP holds records it has not reconciled: a batch anyway
    parts.sender.batch(parts.conn, parts.source)
    assert (parts.sender.sent_batches, parts.sender.force) == (2, False)


def test_a_batchs_size_follows_the_time_it_took(parts: Parts) -> None:
    s, target, most = parts.sender, parts.cfg.batch_target_s, parts.cfg.batch_max
    s.took(target * 2)
    assert s.batch_n == most // 2  # slower: in proportion
    s.took(target / 2)
    assert s.batch_n == most  # quicker: doubled, up to batch_max
    s.took(target / 2)
    assert s.batch_n == most
    parts.stop.set()  # the pause after a cancelled batch returns at once
    s.cancelled_by_server(psycopg.errors.QueryCanceled("canceling statement due to statement timeout"))
    assert (s.cancelled, s.batch_n) == (1, most // 4)
    assert "the LAP cancelled a batch (canceling statement due to statement timeout)" in parts.logs[-1]


def test_the_lap_behind_its_own_past_is_found_and_the_records_resent(parts: Parts) -> None:
    parts.ledger.append([contrib(1), contrib(2)])
    parts.sender.batch(parts.conn, parts.source)
    acked = parts.sender.acked
    parts.memory.check(parts.conn, parts.source, parts.sender)
    assert (parts.memory.behind, parts.memory.diverged, parts.memory.identity is not None) == (None, None, True)
    parts.memory.sent(acked + 5)  # as if the LAP had held more of this table before (restored from a backup)
    parts.memory.check(parts.conn, parts.source, parts.sender)
    assert parts.memory.behind == f"it holds this table's records up to event {acked}, it held them up to {acked + 5}"
    assert parts.of("mismatch") == [
        {"t": "mismatch", "problem": f"the LAP is behind this table: {parts.memory.behind}"}
    ]
    assert parts.memory.recoveries == 1
    kinds = parts.lap.store._rows("SELECT kind FROM {s}.recoveries")
    assert kinds == [{"kind": "lap-behind"}]


def test_an_idle_tables_memory_is_compared_less_often(parts: Parts) -> None:
    """Nothing sent since the last comparison: the next one after ``memory_idle_s`` (an idle
    table's records at the LAP change only by a restore or a failover); records sent, or the LAP
    found behind: after ``memory_s`` again."""
    m, cfg = parts.memory, parts.cfg
    parts.ledger.append([contrib(1)])
    parts.sender.batch(parts.conn, parts.source)
    m.check(parts.conn, parts.source, parts.sender)  # the first: records just sent
    assert m.next_check - time.monotonic() == pytest.approx(cfg.memory_s, abs=1.0)
    m.check(parts.conn, parts.source, parts.sender)  # nothing sent since
    assert m.next_check - time.monotonic() == pytest.approx(cfg.memory_idle_s, abs=1.0)
    parts.ledger.append([contrib(2)])
    parts.sender.batch(parts.conn, parts.source)
    m.check(parts.conn, parts.source, parts.sender)
    assert m.next_check - time.monotonic() == pytest.approx(cfg.memory_s, abs=1.0)
    m.sent(parts.sender.acked + 5)  # the LAP held more before: behind, compared at every turn until caught up
    m.check(parts.conn, parts.source, parts.sender)
    assert m.behind is not None
    m.check(parts.conn, parts.source, parts.sender)
    assert m.next_check - time.monotonic() == pytest.approx(cfg.memory_s, abs=1.0)


def test_the_head_check_of_a_ledger_the_lap_knows_stops_nothing(parts: Parts) -> None:
    parts.ledger.append([contrib(1)])
    parts.sender.batch(parts.conn, parts.source)
    parts.memory.check_head(parts.conn, parts.source)
    assert parts.memory.diverged is None and parts.of("diverged") == []


def test_the_tables_status_is_written_once(parts: Parts) -> None:
    relay = StatusRelay(parts.cfg, parts.logs.append)
    relay.send(parts.conn)  # nothing heard: nothing written
    assert parts.lap.store._rows("SELECT count(*) AS n FROM {s}.table_status") == [{"n": 0}]
    relay.heard({"t": "status", "state": "idle", "round": 3, "open": True, "reason": "", "tilts": {}, "sign": "x"})
    assert relay.pending() == {"state": "idle", "round": 3, "open": True, "reason": "", "tilts": {}, "sign": "x"}
    relay.send(parts.conn)
    assert relay.pending() is None
    rows = parts.lap.store._rows("SELECT state, round_no FROM {s}.table_status WHERE table_id = 'T1'")
    assert rows == [{"state": "idle", "round_no": 3}]
    relay.heard({"state": "idle", "tilts": []})  # the LAP refuses it: logged, never latched
    relay.send(parts.conn)
    assert "the LAP refused the table's status: report_status: tilts must be an object" in parts.logs[-1]
