"""The payout slip of a progressive hit (``tablectl slip ROUND SEAT``; controller/reports/slip.py):
the amount, the table, seat, hand, round, the meter before and after (replayed exactly), who validated
it, the dealer's line, the time; signature lines for the dealer and the floorperson.  The PDF is
rendered to PNG (pdftoppm) and read back (pdftotext)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from controller.books.history import open_readonly
from controller.books.ledger import Ledger, Record
from controller.books.ledgerkey import init_key, read_key
from controller.cli import main
from controller.core.records import Kind
from controller.reports import slip as S
from tests.controller.test_report import NY, START_RECORDS, Wall, _ledger

pytest.importorskip("reportlab")
pytestmark = pytest.mark.skipif(shutil.which("pdftotext") is None, reason="poppler-utils (pdftotext) missing")


def _text(pdf: Path, tmp_path: Path) -> str:
    subprocess.run(["pdftoppm", "-png", "-r", "60", str(pdf), str(tmp_path / "slip")], check=True)
    pngs = sorted(tmp_path.glob("slip*.png"))
    assert len(pngs) == 1 and pngs[0].stat().st_size > 8000  # one page, drawn
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], check=True, capture_output=True, text=True).stdout
    return " ".join(text.split())


def _run(state: Path, key: Path, *args: str) -> int:
    return main(["slip", *args, "--state-dir", str(state), "--key-file", str(key), "--tz", "America/New_York"])


def test_the_slip_of_a_meter_hit_reads_back_with_its_meter_and_signature_lines(tmp_path, capsys):
    state, key = _ledger(tmp_path)
    out = tmp_path / "slip.pdf"
    assert _run(state, key, "2", "3", "--out", str(out)) == 0
    assert capsys.readouterr().out.strip() == str(out)
    text = _text(out, tmp_path)
    for want in [
        "Progressive payout slip",
        "$500.33",
        "Table T-9 · seat 3 · Royal Flush · round 2",
        "Casino Keystone & Sons <Riverside> Casino",
        "Table T-9 (asset A-10009)",
        "Location Pit 2, table 9",
        "Game Six-Card Fortune Pai Gow Poker",
        "Pay meter hit, 50% of the meter, paid by an attendant",
        "Meter before the hit $1,001.00",  # the meter as it stood when the hit was paid, replayed
        "Meter after the hit $500.67",
        "Paid 2026-07-04 11:00:00 EDT",
        "Validated by (floorperson) floor 17",
        "Dealer write the name below",
        "Dealer: Date:",  # the signature lines
        "Floorperson (validated): Date:",
        "Page 1 of 1",
    ]:
        assert want in text, want


def test_a_fixed_pay_and_a_pending_hit_and_a_linked_one(tmp_path):
    state, _ = _ledger(tmp_path)
    conn = open_readonly(state / "ledger.sqlite3")
    try:
        fixed = S.from_ledger(conn, 2, 5, NY)
    finally:
        conn.close()
    assert (fixed.amount_cents, fixed.kind) == (2500, "fixed pay, from the table inventory")
    assert fixed.meter.before == fixed.meter.after  # a fixed pay does not move the meter
    keyfile = init_key(tmp_path / "k2" / "ledger.key")
    wall = Wall()
    wall.at("2026-07-04T12:00:00+00:00")
    led = Ledger(tmp_path / "s2" / "ledger.sqlite3", "T-9", key=read_key(keyfile), wall_clock=wall)
    pending = {"seat": 2, "hand": "five-aces", "fraction": "1", "cents": 100, "order": 1}
    paid = {"level": "primary", "hit_seq": 9, "cents": 512345, "seat": 4, "hand": "royal-flush", "order": 1,
            "lap_order": 17, "by": "console:floorperson"}  # fmt: skip
    led.append(
        [
            *START_RECORDS,
            Record(Kind.ROUND_OPEN, 1, {}),
            Record(Kind.HIT_PENDING, 1, pending),
            Record(Kind.ROUND_OPEN, 2, {}),
            Record(Kind.LINK_PAID, 2, paid),
        ]
    )
    led.close()
    conn = open_readonly(tmp_path / "s2" / "ledger.sqlite3")
    try:
        held = S.from_ledger(conn, 1, 2, NY)
        linked = S.from_ledger(conn, 2, 4, NY)
        with pytest.raises(
            S.SlipError, match="round 2 has no progressive hit at seat 3 \\(its progressive hits: seat 4\\)"
        ):
            S.from_ledger(conn, 2, 3, NY)
    finally:
        conn.close()
    lines = dict(held.lines())
    assert held.pending and lines["Amount"] == "decided at the validation" and lines["Hand"] == "Five Aces"
    assert lines["Paid"].startswith("NOT YET") and lines["Validated by (floorperson)"] == "not yet"
    assert (linked.amount_cents, linked.validated_by) == (512345, "console:floorperson")
    assert "the LAP's hit #17" in linked.order and "floor view" in linked.meter.note  # the LAP's meter


def test_a_100_percent_hit_shows_the_meter_reset_to_its_seed(tmp_path):
    keyfile = init_key(tmp_path / "k" / "ledger.key")
    wall = Wall()
    wall.at("2026-07-04T12:00:00+00:00")
    led = Ledger(tmp_path / "s" / "ledger.sqlite3", "T-9", key=read_key(keyfile), wall_clock=wall)
    inc = {"level": "primary", "wager": 100, "rate": "21/100"}
    led.append(
        [
            *START_RECORDS,
            Record(Kind.METER_INIT, 0, {"level": "primary", "seed": 500000, "rate": "21/100"}),
            Record(Kind.ROUND_OPEN, 1, {}),
            Record(Kind.METER_INCREMENT, 1, inc),
            Record(Kind.HIT_VALIDATED, 1, {"seat": 6, "hand": "five-aces", "by": "key switch", "order": 1}),
            Record(
                Kind.METER_PAYOUT,
                1,
                {"level": "primary", "cents": 500021, "seat": 6, "hand": "five-aces", "order": 1, "fraction": "1"},
            ),  # fmt: skip
            Record(Kind.METER_RESEED, 1, {"level": "primary", "cents": 500000}),
        ]
    )
    led.close()
    conn = open_readonly(tmp_path / "s" / "ledger.sqlite3")
    try:
        slip = S.from_ledger(conn, 1, 6, NY)
    finally:
        conn.close()
    lines = dict(slip.lines())
    assert lines["Meter before the hit"] == "$5,000.21" and lines["Meter after the hit"] == "$5,000.00"
    assert "reset to its seed" in lines["About the meter"] and lines["Validated by (floorperson)"] == "key switch"


def test_bad_input_is_said_and_nothing_written(tmp_path, capsys):
    state, key = _ledger(tmp_path)
    out = tmp_path / "x.pdf"
    assert _run(state, key, "2", "4", "--out", str(out)) == 1
    assert "round 2 has no progressive hit at seat 4 (its progressive hits: seat 3, 5)" in capsys.readouterr().err
    assert _run(state, key, "99", "1", "--out", str(out)) == 1
    assert "there is no round 99 in the ledger" in capsys.readouterr().err
    assert _run(state, key, "2", "3", "--out", str(tmp_path / "nowhere" / "x.pdf")) == 2
    assert not out.exists()
    with pytest.raises(SystemExit):
        main(["slip", "two", "3", "--state-dir", str(state)])
    assert main(["slip", "2", "3", "--config", str(tmp_path / "none.toml")]) == 2
    assert "configuration error" in capsys.readouterr().err


def test_a_slip_is_refused_from_a_ledger_failing_its_audit(tmp_path, capsys):
    import sqlite3

    state, key = _ledger(tmp_path)
    db = sqlite3.connect(state / "ledger.sqlite3")
    db.execute('UPDATE events SET data = \'{"level":"primary","cents":1,"seat":3}\' WHERE seq = 17')
    db.commit()
    db.close()
    assert _run(state, key, "2", "3", "--out", str(tmp_path / "x.pdf")) == 1
    assert "fails its audit" in capsys.readouterr().err and not (tmp_path / "x.pdf").exists()
