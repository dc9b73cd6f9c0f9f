"""Meters (exact, remainder carried) and the hash-chained SQLite ledger."""

from __future__ import annotations

import sqlite3
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.books import meters as M
from controller.books.ledger import Ledger, Record
from tests.conftest import TEST_KEY

RATE = "21/100"


def test_increment_carries_fraction_of_a_cent():
    m = M.apply({}, "meter.init", {"level": "p", "seed": 500_000, "rate": "3/200"})  # 1.5%
    m = M.apply(m, "meter.increment", {"level": "p", "wager": 100, "rate": "3/200"})
    assert m["p"].cents == 500_001 and m["p"].remainder == Fraction(1, 2)
    m = M.apply(m, "meter.increment", {"level": "p", "wager": 100, "rate": "3/200"})
    assert m["p"].cents == 500_003 and m["p"].remainder == 0  # the half cent was carried, not dropped


def test_percent_payout_from_meter_as_it_stands_670a_12_d_3():
    m = M.apply({}, "meter.init", {"level": "p", "seed": 500_083, "rate": RATE})["p"]
    assert M.percent_payout(m, Fraction(1, 10)) == 50_008  # floor; 0.3 cent stays in the meter
    assert M.percent_payout(m, Fraction(1)) == 500_083


def test_payout_larger_than_meter_is_refused():
    m = M.apply({}, "meter.init", {"level": "p", "seed": 100, "rate": RATE})
    with pytest.raises(M.MeterError):
        M.apply(m, "meter.payout", {"level": "p", "cents": 101})


ops = st.lists(
    st.one_of(
        st.tuples(st.just("inc"), st.integers(1, 10_000)),
        st.tuples(st.just("pay"), st.fractions(0, 1)),
        st.tuples(st.just("void"), st.integers(1, 10_000)),
        st.tuples(st.just("reseed"), st.integers(0, 100_000)),
    ),
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(ops, st.sampled_from(["21/100", "3/200", "1/3", "7/1000"]))
def test_meter_equals_seed_plus_increments_minus_payouts(seq, rate):
    m = M.apply({}, "meter.init", {"level": "p", "seed": 500_000, "rate": rate})
    seed, incs, pays, voids, reseeds = 500_000, Fraction(0), 0, Fraction(0), 0
    for op, x in seq:
        if op == "inc":
            m = M.apply(m, "meter.increment", {"level": "p", "wager": x, "rate": rate})
            incs += x * Fraction(rate)
        elif op == "pay":
            cents = M.percent_payout(m["p"], x) if x > 0 else 0
            m = M.apply(m, "meter.payout", {"level": "p", "cents": cents})
            pays += cents
        elif op == "void":
            if m["p"].value - x * Fraction(rate) < 0:
                continue
            m = M.apply(m, "meter.void", {"level": "p", "wager": x, "rate": rate})
            voids += x * Fraction(rate)
        else:
            m = M.apply(m, "meter.reseed", {"level": "p", "cents": x})
            reseeds += x
        assert m["p"].value == seed + reseeds + incs - pays - voids == m["p"].expected_value()
        assert 0 <= m["p"].remainder < 1


def make_ledger(tmp_path):
    led = Ledger(tmp_path / "l.sqlite3", "T1", key=TEST_KEY)
    led.append([Record("meter.init", 0, {"level": "p", "seed": 500_000, "rate": RATE})])
    led.append(
        [
            Record("meter.increment", 1, {"level": "p", "wager": 100, "rate": RATE}),
            Record("wager.accepted", 1, {"seat": 3, "cents": 100}),
        ]
    )
    return led


def test_ledger_uses_wal_and_full_sync(tmp_path):
    led = make_ledger(tmp_path)
    assert led.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert led.db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_ledger_chain_and_meters_verify_and_survive_reopen(tmp_path):
    led = make_ledger(tmp_path)
    assert led.verify() == []
    led.close()
    again = Ledger(tmp_path / "l.sqlite3", "T1", key=TEST_KEY)
    assert again.verify() == [] and again.meters["p"].cents == 500_021 and again.last_seq == 3


def test_edited_event_breaks_the_chain(tmp_path):
    led = make_ledger(tmp_path)
    led.db.execute("UPDATE events SET data = replace(data, '100', '900') WHERE kind = 'wager.accepted'")
    problems = led.verify()
    assert any("does not match its contents" in p for p in problems)


def test_deleted_event_is_detected(tmp_path):
    led = make_ledger(tmp_path)
    led.db.execute("DELETE FROM events WHERE seq = 2")
    problems = led.verify()
    assert any("gap" in p for p in problems) and any("chain broken" in p for p in problems)


def test_stored_meter_mismatch_is_detected(tmp_path):
    led = make_ledger(tmp_path)
    led.db.execute("UPDATE meters SET row = replace(row, '\"hits\":0', '\"hits\":5')")
    assert any("stored meter differs" in p for p in led.verify())


def test_failed_transaction_leaves_nothing(tmp_path):
    led = make_ledger(tmp_path)
    before = led.last_seq
    with pytest.raises(M.MeterError):
        led.append(
            [Record("wager.accepted", 2, {"seat": 1}), Record("meter.payout", 2, {"level": "p", "cents": 10**9})]
        )
    assert led.last_seq == before
    assert sqlite3.connect(tmp_path / "l.sqlite3").execute("SELECT COUNT(*) FROM events").fetchone()[0] == before


def _many(tmp_path, monkeypatch, n=23, every=5):
    import controller.books.ledger as L

    monkeypatch.setattr(L, "CHECKPOINT_EVERY", every)
    led = Ledger(tmp_path / "c.sqlite3", "T1", key=TEST_KEY)
    led.append([Record("meter.init", 0, {"level": "p", "seed": 500_000, "rate": "1/3"})])
    for i in range(n):
        led.append([Record("meter.increment", i + 1, {"level": "p", "wager": 100, "rate": "1/3"})])
    return led


def test_checkpoints_written_and_startup_replays_from_the_last(tmp_path, monkeypatch):
    led = _many(tmp_path, monkeypatch)
    seqs = [r[0] for r in led.db.execute("SELECT seq FROM checkpoints ORDER BY seq")]
    assert seqs == [5, 10, 15, 20]
    assert led.recompute_meters(from_checkpoint=True) == led.recompute_meters()
    assert led.meters["p"].value == 500_000 + Fraction(2300, 3)
    assert led.verify() == [] and led.verify(full=True) == []


def test_startup_check_sees_edits_after_the_last_checkpoint(tmp_path, monkeypatch):
    led = _many(tmp_path, monkeypatch)
    led.db.execute("UPDATE events SET data = replace(data, '100', '900') WHERE seq = 22")
    assert any("event 22" in p for p in led.verify())


def test_edit_before_the_checkpoint_found_by_the_full_audit(tmp_path, monkeypatch):
    led = _many(tmp_path, monkeypatch)
    led.db.execute("UPDATE events SET data = replace(data, '100', '900') WHERE seq = 3")
    assert led.verify() == []  # start-up: only after the last checkpoint
    problems = Ledger.open_readonly(tmp_path / "c.sqlite3", key=TEST_KEY).verify(full=True)
    assert any("event 3: MAC does not match" in p for p in problems)


def test_audit_reads_one_snapshot_while_the_writer_appends(tmp_path):
    import threading

    led = make_ledger(tmp_path)
    ro = Ledger.open_readonly(tmp_path / "l.sqlite3", key=TEST_KEY)
    stop = threading.Event()

    def write():
        i = 0
        while not stop.is_set():
            led.append([Record("meter.increment", 2, {"level": "p", "wager": 100, "rate": RATE})])
            i += 1

    t = threading.Thread(target=write)
    t.start()
    try:
        for _ in range(30):
            assert ro.verify(full=True) == []
    finally:
        stop.set()
        t.join()
