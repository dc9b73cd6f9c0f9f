"""Link scenarios end to end: table controllers (the synchronous harness's real
Table and SQLite ledger) with their real link sockets, real uplinks logging in as their own
roles, the real LAP service and PostgreSQL.  The harness's reactor is pumped here while real
time passes, so the heartbeat, the NOTIFY pushes and the uplinks' threads run as on a table.

§ 688a.2(d) -> § 605a.8, read with N.J.A.C. 13:69E-1.39B and 9 NYCRR 5321.18: the order of
hits recorded when two tables hit at nearly the same time; every linked progressive unplayable
when the controller is down or unreachable; recovery to exactly the state before."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from controller.lap.service import LapService
from controller.play.linked import LinkPort
from controller.uplink.uplink import Uplink, UplinkConfig
from tests.conftest import TEST_KEY
from tests.integration.harness import Harness, records
from tests.integration.test_table_linked import linked_doc
from tests.integration.test_table_progressive import FIVE_ACES, play_to_settlement


class Pit:
    """Linked harness tables, their uplinks and the LAP."""

    def __init__(self, lap: Any, dsn: str, tmp: Path, timeout: int = 1):
        self.lap, self.dsn, self.tmp, self.timeout = lap, dsn, tmp, timeout
        self.tables: dict[str, Harness] = {}
        self.ports: dict[str, LinkPort] = {}
        self.uplinks: dict[str, Uplink] = {}
        self.service: LapService | None = None
        self.thread: threading.Thread | None = None
        self.start_lap()

    def start_lap(self) -> None:
        self.service = LapService(self.lap.cfg, self.dsn, log=lambda m: None)
        self.thread = threading.Thread(target=self.service.run, daemon=True)
        self.thread.start()

    def stop_lap(self, crash: bool = False) -> None:
        assert self.service is not None and self.thread is not None
        if crash:
            self.service.kill()
        else:
            self.service.stop_event.set()
        self.thread.join(5)

    def add(self, tid: str, wall_clock: Callable[[], float] | None = None) -> Harness:
        h = self.add_table_only(tid, wall_clock)
        self.start_uplink(tid)
        return h

    def add_table_only(self, tid: str, wall_clock: Callable[[], float] | None = None) -> Harness:
        """The table service and its link socket (started again after a restart: its uplink stays)."""
        # a wrong clock is wrong from the table's power-up on (its ledger refuses a clock that goes back)
        h = Harness(self.tmp / f"{tid}.db", linked_doc(self.timeout), wall_clock=wall_clock)
        port = LinkPort(self.tmp / f"{tid}.sock", h.reactor.post)
        assert h.table.lap is not None
        h.lap.send = port.send
        port.start()
        self.tables[tid], self.ports[tid] = h, port
        return h

    def start_uplink(self, tid: str) -> Uplink:
        dsn = psycopg.conninfo.make_conninfo(self.dsn, user=self.lap.cfg.role_for(tid))
        cfg = UplinkConfig(
            dsn,
            self.lap.cfg.schema,
            tid,
            self.tmp / f"{tid}.db",
            self.tmp / f"{tid}.sock",
            poll_s=0.2,
            key=TEST_KEY,
            link_key=self.lap.keys[tid],
            refresh_s=self.timeout / 3,  # as the uplink sizes it to its table's link timeout
        )
        up = Uplink(cfg, log=lambda m: None)
        up.start()
        self.uplinks[tid] = up
        return up

    def pump(self) -> None:
        for h in self.tables.values():
            h.clock.advance(0.05)  # the table's 0.25 s link tick runs on its (manual) clock
            h.pump()

    def until(self, pred: Callable[[], bool], timeout: float = 10.0) -> float:
        """Pump until ``pred``; the seconds it took."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            self.pump()
            if pred():
                return time.monotonic() - t0
            time.sleep(0.01)
        raise AssertionError(f"not within {timeout} s")

    def is_open(self, tid: str) -> bool:
        link = self.tables[tid].table.lap
        return link is not None and bool(link.open)

    def close(self) -> None:
        for up in self.uplinks.values():
            up.stop()
        for p in self.ports.values():
            p.close()
        for h in self.tables.values():
            h.close()
        if self.service is not None:
            self.stop_lap()


@pytest.fixture
def pit(make_lap, pg_dsn, tmp_path) -> Iterator[Pit]:
    lap = make_lap(tables=2, seed="$5,000", reset="$5,000", increment_rate="21%")
    p = Pit(lap, pg_dsn, tmp_path)
    yield p
    p.close()


def hits(p: Pit) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = p.lap.store._rows("SELECT * FROM {s}.hits ORDER BY order_no")
    return rows


def paid(h: Harness) -> list[int]:
    return [e.data["cents"] for e in records(h, "link.paid")]


@pytest.mark.slow
def test_two_tables_hit_in_the_same_second_are_ordered_and_the_second_is_paid_from_the_reset(pit):
    t1, t2 = pit.add("T1"), pit.add("T2")
    pit.until(lambda: pit.is_open("T1") and pit.is_open("T2"))
    # both tables play a round with five aces (100 % of the meter, § 670a.12(d)) at once
    play_to_settlement(t1, (3,), hands={3: FIVE_ACES})
    play_to_settlement(t2, (3, 4), hands={3: FIVE_ACES})
    t0 = time.monotonic()
    pit.until(lambda: len(hits(pit)) == 2)
    h = hits(pit)
    assert [r["order_no"] for r in h] == [1, 2]
    first, second = h
    # the first is paid the meter as it stood; the second from the reset plus what came in after
    at = [r["at"] for r in pit.lap.store._rows("SELECT at FROM {s}.contributions")]
    before = sum(1 for a in at if a < first["decided_at"])
    assert len(at) == 3 and first["amount_cents"] == 500_000 + 21 * before
    assert second["amount_cents"] == 500_000 + 21 * (3 - before)
    for h_ in (t1, t2):
        h_.press("key")
    pit.until(lambda: t1.state == "open_for_wagers" and t2.state == "open_for_wagers")
    by_table = {r["table_id"]: r["amount_cents"] for r in h}
    assert paid(t1) == [by_table["T1"]] and paid(t2) == [by_table["T2"]]
    assert time.monotonic() - t0 < 5
    assert pit.lap.store.reconcile().ok


@pytest.mark.slow
def test_second_table_paid_from_the_reset_plus_its_later_contribution(pit):
    t1, t2 = pit.add("T1"), pit.add("T2")
    pit.until(lambda: pit.is_open("T1") and pit.is_open("T2"))
    play_to_settlement(t1, (3,), hands={3: FIVE_ACES})
    pit.until(lambda: len(hits(pit)) == 1)
    play_to_settlement(t2, (3, 5), hands={3: FIVE_ACES})  # its two contributions come after the first hit
    pit.until(lambda: len(hits(pit)) == 2)
    first, second = hits(pit)
    assert (first["table_id"], first["amount_cents"]) == ("T1", 500_021)
    assert (second["table_id"], second["amount_cents"]) == ("T2", 500_042)  # reset + 2 × 21 cents
    t2.press("key")
    t1.press("key")
    pit.until(lambda: paid(t1) == [500_021] and paid(t2) == [500_042])


@pytest.mark.slow
def test_link_drops_mid_round_accepted_wager_stays_and_reaches_the_lap(pit):
    t1 = pit.add("T1")
    pit.until(lambda: pit.is_open("T1"))
    t1.shuffled()
    t1.edge("bet.progressive.2", True)
    t1.press("lockout")
    pit.uplinks["T1"].stop()  # the uplink dies mid-round
    took = pit.until(lambda: not pit.is_open("T1"))
    assert took < pit.timeout + 0.5
    t1.edge("bet.progressive.2", False)
    t1.press("confirm")  # still valid: written to the outbox
    seq = records(t1, "link.contribution")[0].seq
    assert pit.lap.store._rows("SELECT count(*) AS n FROM {s}.contributions")[0]["n"] == 0
    pit.start_uplink("T1")
    pit.until(lambda: pit.is_open("T1"))  # reopens once the LAP has reconciled the outbox
    rows = pit.lap.store._rows("SELECT seq FROM {s}.contributions WHERE table_id = 'T1'")
    assert rows == [{"seq": seq}]
    states = [e.data["open"] for e in records(t1, "link.state")]
    assert states == [False, True, False, True]  # closed at start-up until the LAP is heard


@pytest.mark.slow
def test_lap_restarts_during_a_pending_hit(pit):
    t1 = pit.add("T1")
    pit.until(lambda: pit.is_open("T1"))
    play_to_settlement(t1, (3,), hands={3: FIVE_ACES})
    pit.stop_lap(crash=True)  # the LAP process dies with the hit pending at the table
    pit.until(lambda: not pit.is_open("T1"), timeout=pit.timeout + 1)
    # the amount is the database's decision, so the claim is answered; the floor validates
    t1.press("key")
    pit.until(lambda: paid(t1) == [500_021])
    pit.start_lap()
    pit.until(lambda: pit.is_open("T1"))
    assert [(r["table_id"], r["amount_cents"]) for r in hits(pit)] == [("T1", 500_021)]
    assert pit.lap.store.reconcile().ok


@pytest.mark.slow
def test_a_tables_wrong_clock_does_not_order_its_hit(pit):
    t1 = pit.add("T1", wall_clock=lambda: time.time() - 3600)  # an hour slow
    t2 = pit.add("T2")
    pit.until(lambda: pit.is_open("T1") and pit.is_open("T2"))
    play_to_settlement(t2, (3,), hands={3: FIVE_ACES})
    pit.until(lambda: len(hits(pit)) == 1)
    play_to_settlement(t1, (3,), hands={3: FIVE_ACES})
    pit.until(lambda: len(hits(pit)) == 2)
    first, second = hits(pit)
    assert (first["table_id"], second["table_id"]) == ("T2", "T1")  # the LAP's order, by its commits
    assert second["table_time"] < first["table_time"]  # though T1's own clock says it came first
    assert second["decided_at"] > first["decided_at"]


@pytest.mark.slow
def test_a_table_that_loses_its_link_stops_accepting_the_linked_wager_within_the_configured_time(pit):
    t1 = pit.add("T1")
    pit.until(lambda: pit.is_open("T1"))
    t1.shuffled()
    pit.stop_lap(crash=True)  # no clean goodbye: only the heartbeat stops
    took = pit.until(lambda: not pit.is_open("T1"), timeout=5)
    assert took <= pit.timeout + 0.5, took  # configured 1 s (+ the heartbeat's 100 ms and a 0.25 s tick)
    t1.edge("bet.progressive.4", True)
    assert t1.lights.mode("light.progressive.4") == "off"
    t1.press("lockout")
    assert t1.table.round.accepted == {}
    last = records(t1, "link.state")[-1].data
    assert last["open"] is False and "no heartbeat" in last["reason"]


@pytest.mark.slow
def test_a_validation_given_while_waiting_for_the_lap_survives_a_table_restart(pit):
    # § 670a.11(h)(3)(i)(B)(III): the floorperson validates while the LAP's answer is held back
    # (a transaction holds the level's row, so the claim waits in the database); the table
    # service restarts in that wait; once the LAP decides, the hit is paid without a new validation
    t1 = pit.add("T1")
    pit.until(lambda: pit.is_open("T1"))
    blocker = psycopg.connect(pit.dsn)  # not autocommit: holds the row lock until rollback
    try:
        blocker.execute(
            psycopg.sql.SQL("SELECT 1 FROM {}.levels WHERE level = 'primary' FOR UPDATE").format(
                psycopg.sql.Identifier(pit.lap.cfg.schema)
            )
        )
        play_to_settlement(t1, (3,), hands={3: FIVE_ACES})
        assert t1.state == "floor_validation" and hits(pit) == []
        t1.press("key")  # validated; no answer yet
        pit.pump()
        assert [e.data["by"] for e in records(t1, "hit.awaiting_lap")] == ["key switch"]
        # the table service restarts (the uplink, its own process, stays)
        pit.ports.pop("T1").close()
        pit.tables.pop("T1").close()
        t1 = pit.add_table_only("T1")
        assert t1.state == "floor_validation" and t1.table.round.validated_by == "key switch"
    finally:
        blocker.rollback()
        blocker.close()
    pit.until(lambda: paid(t1) == [500_021])  # nobody turned the key again
    assert [e.data["by"] for e in records(t1, "hit.validated")] == ["key switch"]
    pit.until(lambda: t1.state == "open_for_wagers")
    assert [(r["table_id"], r["amount_cents"]) for r in hits(pit)] == [("T1", 500_021)]
    pit.until(lambda: pit.lap.store.reconcile().ok)


def sign_messages(h: Harness) -> list[str]:
    return [c[1][0] for c in h.sign.calls if c[0] == "message"]


@pytest.mark.slow
def test_every_linked_tables_sign_shows_the_winning_tables_asset_number(pit):
    # docs/linked.md: each linked table identified uniquely (its asset number, lap.toml); the
    # regulations we hold send a linked progressive to § 605a.8 (§ 688a.2(d)) without its text
    t1, t2 = pit.add("T1"), pit.add("T2")
    pit.until(lambda: pit.is_open("T1") and pit.is_open("T2"))
    play_to_settlement(t2, (3,), hands={3: FIVE_ACES})
    line = "LINKED HIT TABLE T2 ASSET A-1002 $5,000.21"
    pit.until(lambda: all(any(m.startswith(line) for m in sign_messages(t)) for t in (t1, t2)))
    assert sign_messages(t1)[-1] == f"{line} / PLACE YOUR BETS"  # beside what the line said
    assert sign_messages(t2)[-1] == f"{line} / HIT SEAT 3 FIVE-ACES - CALL FLOOR"  # the winner's own line beside it
    t2.press("key")
    pit.until(lambda: paid(t2) == [500_021])
