"""The lock-out journal (controller/books/lockjournal.py): the accepted set durable in one
keyed block before the count is shown; a block the ledger lacks is put into the ledger at
start-up, once, and nothing else ever is."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from controller.books.ledger import Ledger, Record
from controller.books.lockjournal import BLOCK, JOURNAL_FILE, SLOTS, LockoutJournal, recover
from controller.core.records import Kind
from tests.conftest import TEST_KEY

OTHER_KEY = b"another table's key, 32 bytes.."


def lockout_records(round_no: int, seats: tuple[int, ...] = (1, 4)) -> list[Record]:
    recs = [Record(Kind.LOCKOUT, round_no, {"t": 12.5, "count": len(seats), "wagers": len(seats)})]
    return recs + [Record(Kind.WAGER_ACCEPTED, round_no, {"seat": s, "spot": "base", "cents": 500}) for s in seats]


def journal(tmp_path: Path, table: str = "T1", key: bytes = TEST_KEY) -> LockoutJournal:
    return LockoutJournal(tmp_path / JOURNAL_FILE, table, key)


def write(j: LockoutJournal, round_no: int, recs: list[Record] | None = None) -> None:
    block = j.block(round_no, recs if recs is not None else lockout_records(round_no))
    assert block is not None and len(block) == BLOCK
    j.write(block)


def test_a_block_reads_back_as_written_and_the_file_is_preallocated(tmp_path):
    j = journal(tmp_path)
    assert (tmp_path / JOURNAL_FILE).stat().st_size == BLOCK * SLOTS
    assert (tmp_path / JOURNAL_FILE).stat().st_mode & 0o777 == 0o600
    write(j, 7)
    (e,) = j.entries()
    assert (e.n, e.round) == (1, 7)
    assert e.records == lockout_records(7)


def test_blocks_go_round_the_slots_and_numbering_goes_on_after_a_reopen(tmp_path):
    j = journal(tmp_path)
    for r in range(1, SLOTS + 4):
        write(j, r)
    assert [e.round for e in j.entries()] == list(range(4, SLOTS + 4))  # the newest SLOTS, oldest first
    j.close()
    j = journal(tmp_path)
    write(j, 99)
    assert j.entries()[-1].n == SLOTS + 4 and j.entries()[-1].round == 99


def test_a_torn_or_edited_block_another_tables_or_another_keys_is_ignored(tmp_path):
    j = journal(tmp_path)
    write(j, 1)
    write(j, 2)
    fd = os.open(tmp_path / JOURNAL_FILE, os.O_RDWR)
    try:
        raw = bytearray(os.pread(fd, BLOCK, 2 * BLOCK))  # block 2, in slot 2
        raw[40] ^= 0x01  # one bit of its body: the MAC no longer checks
        os.pwrite(fd, bytes(raw), 2 * BLOCK)
    finally:
        os.close(fd)
    assert [e.round for e in j.entries()] == [1]
    assert journal(tmp_path, table="T2").entries() == []  # a block names its table
    assert journal(tmp_path, key=OTHER_KEY).entries() == []  # and is keyed


def test_records_too_many_for_one_block_are_not_journaled(tmp_path):
    j = journal(tmp_path)
    many = lockout_records(3, seats=tuple(range(1, 7))) * 12
    assert j.block(3, many) is None


def ledger_with_round(tmp_path: Path, round_no: int, *more: Record) -> Ledger:
    led = Ledger(tmp_path / "ledger.sqlite3", "T1", key=TEST_KEY)
    led.append([Record(Kind.POWER_UP, 0, {}), Record(Kind.ROUND_OPEN, round_no, {}), *more])
    return led


def test_start_up_puts_the_lockout_the_ledger_lacks_into_it_once(tmp_path):
    j = journal(tmp_path)
    write(j, 4)
    led = ledger_with_round(tmp_path, 4)
    try:
        added = recover(j, led)
        assert [e.kind for e in added] == [
            Kind.LOCKOUT,
            Kind.WAGER_ACCEPTED,
            Kind.WAGER_ACCEPTED,
            Kind.LOCKOUT_RECOVERED,
        ]
        assert [e.data for e in added[:-1]] == [r.data for r in lockout_records(4)]
        assert added[-1].data == {"journal_block": 1, "records": 3} and {e.round for e in added} == {4}
        assert recover(j, led) == []  # the ledger has it now: never twice
        assert led.verify(full=True) == []
    finally:
        led.close()


@pytest.mark.parametrize(
    "ledger_round, more, why",
    [
        (4, [Record(Kind.LOCKOUT, 4, {"t": 12.5, "count": 2, "wagers": 2})], "the ledger has the lock-out"),
        (5, [], "a later round is in play: the block is old"),
        (4, [Record(Kind.ROUND_VOID, 4, {"reason": "dealer"})], "the round was voided"),
    ],
)
def test_start_up_adds_nothing_when_the_ledger_has_moved_on(tmp_path, ledger_round, more, why):
    j = journal(tmp_path)
    write(j, 4)
    led = ledger_with_round(tmp_path, ledger_round, *more)
    try:
        before = led.last_seq
        assert recover(j, led) == [], why
        assert led.last_seq == before
    finally:
        led.close()


def test_a_round_never_opened_in_the_ledger_gets_nothing(tmp_path):
    """A block for a round the ledger does not have open (another ledger put in place)."""
    j = journal(tmp_path)
    write(j, 4)
    led = Ledger(tmp_path / "ledger.sqlite3", "T1", key=TEST_KEY)
    try:
        led.append([Record(Kind.POWER_UP, 4, {})])  # round 4 in the ledger, but never opened
        assert recover(j, led) == []
    finally:
        led.close()
