"""The history sealed in segments — start-up checks the last seal and what follows
it, whatever the ledger's age; the audit checks every sealed segment by its digest.

The attacker can write the state directory (the database, its seals, meters, checkpoints)
but has not got the key (docs/security.md).  Where each attack is found is asserted: at
start-up (``Ledger.verify()``, the witness) or by the audit (``verify(full=True)``, and the
service's periodic runs, ``AuditRunner``, within ``runs_per_pass`` runs)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

import controller.books.ledger as L
from controller.books import ledgercheck
from controller.books import seals as S
from controller.books.audit import Where, audit
from controller.books.auditrun import AuditRunner
from controller.books.ledger import Ledger, Record
from controller.books.witness import Witness
from tests.conftest import TEST_KEY
from tests.controller.test_ledger_trust import rechain

TABLE = "T1"
EVERY = 40  # a checkpoint and a seal every 40 events here (2,000 in the product)


def _round(r: int) -> list[Record]:
    return [
        Record("round.open", r, {}),
        Record("wager.accepted", r, {"seat": 2, "spot": "progressive", "cents": 100}),
        Record("meter.increment", r, {"level": "primary", "wager": 100, "rate": "21/100"}),
        Record("round.complete", r, {"note": 'it\'s "done" \\ ok'}),
    ]


class Table:
    def __init__(self, tmp: Path, rounds: int = 60):
        self.where = Where(tmp / "state", TEST_KEY, tmp / "witness", TABLE)
        self.witness = Witness(self.where.witness_dir, TABLE, TEST_KEY)
        self.led = Ledger(self.where.ledger_path, TABLE, key=TEST_KEY)
        self.append([Record("meter.init", 0, {"level": "primary", "seed": 500_000, "rate": "21/100"})])
        for r in range(1, rounds + 1):
            self.append(_round(r))

    def append(self, recs: list[Record]) -> None:
        self.led.append(recs)
        self.witness.write(self.led.head())

    def seals(self) -> list[S.Seal]:
        return list(S.seals_from(self.led.db))

    def close(self) -> None:
        self.led.close()

    def sql(self, *statements: str) -> None:
        db = sqlite3.connect(self.where.ledger_path)
        for st in statements:
            db.execute(st)
        db.commit()
        db.close()


@pytest.fixture
def table(tmp_path, monkeypatch):
    monkeypatch.setattr(L, "CHECKPOINT_EVERY", EVERY)
    monkeypatch.setattr(ledgercheck, "MAX_TAIL", 100)
    t = Table(tmp_path)
    yield t
    t.close()


def _ro(t: Table) -> Ledger:
    return Ledger.open_readonly(t.where.ledger_path, key=TEST_KEY)


def start_up(t: Table) -> list[str]:
    """What the service checks at start-up: the ledger from its last seal on, and the witness."""
    return audit(t.where, full=False)


def whole(t: Table) -> list[str]:
    return audit(t.where, full=True)


# ---------------------------------------------------------------------- the seals themselves


@pytest.mark.parametrize(
    "value",
    ["plain", 'q"uo\\te', "a\nb\tc\r\x01\x1f\x7f", "é ü 漢 😀", "\u2028\u2029", "nul\x00inside", ""],
)
def test_a_row_is_encoded_as_sqlites_json_array_encodes_it(value):
    db = sqlite3.connect(":memory:")
    row = (7, value, value, 3, value, value, value, value)
    (text,) = db.execute("SELECT json_array(?,?,?,?,?,?,?,?) || char(10)", row).fetchone()
    assert S.row_text(L.EventRow(*row[:7]), row[7]) == text


def test_a_seal_is_written_with_every_checkpoint_and_the_seals_are_a_chain(table):
    seals = table.seals()
    cps = [r[0] for r in table.led.db.execute("SELECT seq FROM checkpoints ORDER BY seq")]
    assert [s.last for s in seals] == cps and len(seals) == 6
    prev_mac, first = ledgercheck.GENESIS, 1
    for i, s in enumerate(seals, 1):
        assert (s.n, s.first, s.prev) == (i, first, prev_mac)
        assert table.led.sealer.valid(s)
        _count, blob = S.segment_blob(table.led.db, s.first, s.last)
        assert table.led.sealer.digest(blob) == s.digest  # made in memory by the writer, as stored
        prev_mac, first = s.mac, s.last + 1
    assert start_up(table) == [] and whole(table) == []


def test_a_reopened_ledger_goes_on_sealing_from_its_stored_tail(table, tmp_path):
    table.close()
    table.led = Ledger(table.where.ledger_path, TABLE, key=TEST_KEY)
    for r in range(61, 75):
        table.append(_round(r))
    assert len(table.seals()) == 7 and whole(table) == []


def test_start_up_walks_only_the_events_after_the_last_seal(table, monkeypatch):
    walked: list[tuple[int, int | None]] = []
    real = ledgercheck.walk

    def spy(led, w, after, upto, keyed_from, cps):
        walked.append((after, upto))
        return real(led, w, after, upto, keyed_from, cps)

    monkeypatch.setattr(ledgercheck, "walk", spy)
    assert start_up(table) == []
    assert walked == [(table.seals()[-1].last, None)]


# ---------------------------------------------------------------------- the attacks


def test_an_edit_in_an_old_sealed_segment_is_found_by_the_audit_not_at_start_up(table):
    """Bounded start-up does not read old segments; the audit (full, or the service's runs
    within runs_per_pass) finds the edit and names the event."""
    table.close()
    table.sql("UPDATE events SET data = replace(data, '100', '900') WHERE seq = 7")
    assert start_up(table) == []  # by design: the start-up check does not depend on the ledger's age
    problems = whole(table)
    assert problems[0].startswith("event 7: MAC does not match its contents"), problems
    runner = AuditRunner(table.where, TABLE, slice_events=EVERY * 2)
    found = runner.run()
    for _ in range(runner.runs_per_pass() - 1):  # the stated bound: a whole pass within runs_per_pass runs
        found += runner.run()
    assert runner.passes >= 1
    assert any(p.startswith("event 7: MAC does not match") for p in found), found


def test_an_edit_that_keeps_the_row_the_same_length_or_hides_behind_a_nul_is_found(table):
    table.close()
    table.sql("UPDATE events SET kind = kind || char(0) WHERE seq = 44")  # quote() would stop at the NUL
    assert any("event 44: MAC does not match" in p for p in whole(table))


def test_a_blob_put_in_a_sealed_row_is_a_finding_not_a_crash(table):
    table.close()
    table.sql("UPDATE events SET data = X'00ff' WHERE seq = 10")
    problems = whole(table)
    assert any("event 10" in p for p in problems), problems


def test_a_rechain_from_an_old_event_is_found_at_start_up(table):
    """Rewriting from an old event on (the SHA-256 chain, meters and checkpoints recomputed)
    changes every event after it, the tail too: the start-up check finds it."""
    table.close()
    rechain(table.where.ledger_path, lambda seq, kind, d: {**d, "cents": 10_000} if seq == 7 else d)
    problems = start_up(table)
    assert any("MAC does not match its contents" in p for p in problems), problems
    assert any("events after the last seal" in p for p in problems), problems  # the seals name the old chain
    assert whole(table)[0].startswith("event 7: MAC does not match"), whole(table)


def test_a_rechain_that_moves_the_seals_heads_too_fails_their_mac_at_start_up(table):
    table.close()
    rechain(table.where.ledger_path, lambda seq, kind, d: {**d, "cents": 10_000} if seq == 7 else d)
    table.sql("UPDATE seals SET head = (SELECT hash FROM events WHERE seq = seals.last)")
    problems = start_up(table)
    assert any("seal 6 (events 202-241): its MAC does not match" in p for p in problems), problems


def test_a_forged_meter_snapshot_in_the_last_seal_is_found_at_start_up(table):
    last = table.seals()[-1]
    table.close()
    rows = json.loads(last.meters)
    rows["primary"]["value"] = "1"
    table.sql(f"UPDATE seals SET meters = '{json.dumps(rows, sort_keys=True)}' WHERE n = {last.n}")
    assert any("its MAC does not match" in p for p in start_up(table))


def test_a_rollback_to_an_older_copy_is_found_at_start_up_by_the_witness(table, tmp_path):
    table.led.checkpoint()
    old = tmp_path / "old.sqlite3"
    shutil.copy(table.where.ledger_path, old)
    for r in range(61, 80):  # across the next seal
        table.append(_round(r))
    table.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{table.where.ledger_path}{suffix}").unlink(missing_ok=True)
    shutil.copy(old, table.where.ledger_path)
    problems = start_up(table)
    assert problems == [
        "the ledger ends at event 241, but the witness says 317 events were recorded "
        "(cut tail, lost WAL or an older copy restored)"
    ]


def test_a_cut_tail_across_seals_is_found_at_start_up(table):
    table.close()
    table.sql("DELETE FROM events WHERE seq > 150")
    problems = start_up(table)
    assert any("the ledger ends at event 150, but the witness says 241" in p for p in problems), problems
    assert any("seal 4 (events 122-161) does not name an event of this ledger" in p for p in problems), problems


def test_an_emptied_ledger_is_found_at_start_up(table):
    table.close()
    table.sql("DELETE FROM events", "DELETE FROM seals", "DELETE FROM checkpoints")
    assert any("the ledger is empty or missing, but the witness says 241" in p for p in start_up(table))


def test_a_seal_removed_from_the_middle_is_found_by_the_audit(table):
    table.close()
    table.sql("DELETE FROM seals WHERE n = 3")
    assert start_up(table) == []
    assert any("seal 3 is missing" in p for p in whole(table)), whole(table)


def test_every_seal_removed_keeps_start_up_bounded_and_says_so(table):
    """More than a segment after the last seal never happens to a sound ledger; the start-up
    check walks at most MAX_TAIL events (here 100) and reports it."""
    table.close()
    table.sql("DELETE FROM seals")
    problems = start_up(table)
    assert problems and "events after the last seal (at event 0)" in problems[0], problems


# ---------------------------------------------------------------------- migration (schema 2 -> 3)


def _as_schema_2(t: Table) -> None:
    t.sql("DELETE FROM seals", "UPDATE meta SET value = '2' WHERE name = 'schema'")


def test_a_schema_2_ledger_is_sealed_at_its_checkpoints_when_opened(table):
    before = table.seals()
    table.close()
    _as_schema_2(table)
    led = Ledger(table.where.ledger_path, TABLE, key=TEST_KEY)
    assert led.migrated_from == 2 and led.schema() == 3
    assert list(S.seals_from(led.db)) == before  # the same segments, digests and MACs as the writer's
    led.close()
    assert whole(table) == []


def test_migration_never_seals_damage(table, monkeypatch):
    monkeypatch.setattr(ledgercheck, "MAX_TAIL", 1000)
    table.close()
    _as_schema_2(table)
    table.sql("UPDATE events SET data = replace(data, '100', '900') WHERE seq = 131")  # a meter.increment
    led = Ledger(table.where.ledger_path, TABLE, key=TEST_KEY)
    assert [s.last for s in S.seals_from(led.db)] == [41, 81, 121]  # up to the segment before the edit
    led.close()
    assert any(p.startswith("event 131: MAC does not match") for p in start_up(table)), start_up(table)


def test_a_forged_last_seal_never_gives_the_live_meters_and_the_ledger_goes_on(table):
    """At open the live meters come from the last seal's snapshot only when its MAC holds."""
    last = table.seals()[-1]
    real = table.led.meters["primary"]
    table.close()
    rows = json.loads(last.meters)
    rows["primary"]["value"] = "1"
    table.sql(f"UPDATE seals SET meters = '{json.dumps(rows, sort_keys=True)}' WHERE n = {last.n}")
    table.led = Ledger(table.where.ledger_path, TABLE, key=TEST_KEY)
    assert table.led.meters["primary"] == real  # from the checkpoint and the events after it
    for r in range(61, 75):  # across the next seal: it follows the forged one (whose MAC the audit reports)
        table.append(_round(r))
    assert [s.n for s in table.seals()][-2:] == [6, 7]
    assert [p for p in whole(table) if "MAC does not match" in p] == [
        "seal 6 (events 202-241): its MAC does not match (edited, or written without the key)"
    ]


def test_with_every_seal_gone_the_next_seal_is_made_from_the_stored_rows_a_piece_at_a_time(table, monkeypatch):
    monkeypatch.setattr(S, "PIECE_EVENTS", 7)
    table.close()
    table.sql("DELETE FROM seals")
    table.led = Ledger(table.where.ledger_path, TABLE, key=TEST_KEY)
    for r in range(61, 75):
        table.append(_round(r))
    first = table.seals()[0]
    assert (first.n, first.first) == (1, 1)  # one segment over all the events before it
    _count, blob = S.segment_blob(table.led.db, first.first, first.last)
    assert table.led.sealer.digest(blob) == first.digest
