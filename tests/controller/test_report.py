"""The accounting report of a gaming day (issue 15; controller/report.py, cf. § 605a.7(a))."""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
from datetime import UTC, date, datetime, time
from fractions import Fraction
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from controller import report as R
from controller.cli import main
from controller.history import open_readonly
from controller.ledger import Ledger, Record
from controller.ledgerkey import init_key, read_key
from controller.pdf import render
from controller.records import Kind
from controller.witness import Witness, default_witness_dir

NY = ZoneInfo("America/New_York")
DAY = date(2026, 7, 4)  # EDT: UTC-4; the gaming day is 2026-07-04 10:00Z .. 2026-07-05 10:00Z


class Wall:
    def __init__(self) -> None:
        self.t = 0.0

    def at(self, iso: str) -> None:
        self.t = datetime.fromisoformat(iso).timestamp()

    def __call__(self) -> float:
        return self.t


def _ledger(tmp_path: Path) -> tuple[Path, Path]:
    """A table's ledger across three gaming days; returns (state dir, key file)."""
    keyfile = init_key(tmp_path / "key" / "ledger.key")
    state = tmp_path / "state"
    wall = Wall()
    led = Ledger(state / "ledger.sqlite3", "T-9", key=read_key(keyfile), wall_clock=wall)
    inc = {"level": "primary", "wager": 100, "rate": "1/3"}  # 33 1/3 cents: a hidden remainder
    # the day before (ends 2026-07-04 05:59:59 New York time)
    wall.at("2026-07-03T20:00:00+00:00")
    led.append([Record(Kind.METER_INIT, 0, {"level": "primary", "seed": 100000, "rate": "1/3"})])
    wall.at("2026-07-04T09:59:59+00:00")
    led.append([Record(Kind.ROUND_OPEN, 1, {}), Record(Kind.METER_INCREMENT, 1, inc)])
    # the gaming day
    wall.at("2026-07-04T10:00:00+00:00")
    led.append([Record(Kind.ROUND_COMPLETE, 1, {})])
    wall.at("2026-07-04T15:00:00+00:00")
    led.append(
        [
            Record(Kind.ROUND_OPEN, 2, {}),
            Record(Kind.METER_INCREMENT, 2, inc),
            Record(Kind.METER_INCREMENT, 2, inc),
            Record(Kind.HIT_VALIDATED, 2, {"seat": 3, "hand": "royal_flush", "by": "floor 17", "order": 1}),
            Record(
                Kind.METER_PAYOUT,
                2,
                {"level": "primary", "cents": 50033, "seat": 3, "hand": "royal_flush", "order": 1, "fraction": "1/2"},
            ),
            Record(Kind.METER_FIXED_PAID, 2, {"level": "primary", "cents": 2500, "seat": 5, "hand": "straight"}),
            Record(Kind.ROUND_COMPLETE, 2, {}),
        ]
    )
    wall.at("2026-07-05T02:00:00+00:00")
    led.append(
        [
            Record(Kind.ROUND_OPEN, 3, {}),
            Record(Kind.METER_INCREMENT, 3, inc),
            Record(Kind.TILT_RAISED, 3, {"source": "shoe", "reason": "jam"}),
            Record(Kind.METER_VOID, 3, {"level": "primary", "wager": 100, "rate": "1/3"}),
            Record(Kind.ROUND_VOID, 3, {"reason": "shoe jam (§ 670a.13(g))"}),
            Record(Kind.TILT_CLEARED, 3, {"source": "shoe", "by": "tech 2"}),
        ]
    )
    wall.at("2026-07-05T09:59:59.999999+00:00")
    led.append([Record(Kind.ROUND_OPEN, 4, {}), Record(Kind.METER_INCREMENT, 4, inc)])
    head_of_day = led.head()
    # the next gaming day
    wall.at("2026-07-05T10:00:00+00:00")
    led.append([Record(Kind.ROUND_COMPLETE, 4, {})])
    Witness(default_witness_dir(state), "T-9").write(led.head())
    led.close()
    assert head_of_day.count == 19
    return state, keyfile


def _build(state: Path) -> R.DayReport:
    conn = open_readonly(state / "ledger.sqlite3")
    try:
        return R.build(conn, DAY, tz=NY)
    finally:
        conn.close()


def test_the_gaming_day_starts_at_0600_local_by_default():
    start, end = R.day_bounds(DAY, tz=NY)
    assert (start, end) == (datetime(2026, 7, 4, 10, tzinfo=UTC), datetime(2026, 7, 5, 10, tzinfo=UTC))
    assert R.day_bounds(DAY, time(8, 30), ZoneInfo("UTC"))[0] == datetime(2026, 7, 4, 8, 30, tzinfo=UTC)
    assert R.gaming_day_of("2026-07-04T09:59:59.000000+00:00", tz=NY) == date(2026, 7, 3)
    assert R.gaming_day_of("2026-07-04T10:00:00.000000+00:00", tz=NY) == DAY


def test_meters_at_start_and_end_contributions_hits_voids_faults_head(tmp_path):
    state, _ = _ledger(tmp_path)
    rep = _build(state)
    assert rep.table_id == "T-9" and rep.rounds == 3  # rounds 2, 3, 4 opened in the day
    (lv,) = rep.levels
    third = Fraction(100, 3)
    assert lv.start is not None
    assert lv.start.value == 100000 + third  # the increment at 05:59:59 belongs to the day before
    assert lv.contribution_count == 4 and lv.contributions == 4 * third  # the void does not undo the count
    assert lv.voided == third
    assert lv.end.value == 100000 + 5 * third - third - 50033
    assert (lv.end.paid_attendant, lv.end.paid_table, lv.end.hits, lv.end.fixed_hits) == (50033, 2500, 1, 1)
    assert [(h.seat, h.cents, h.paid_by, h.validated_by) for h in rep.hits] == [
        (3, 50033, "attendant", "floor 17"),
        (5, 2500, "table", ""),
    ]
    assert [(v["round"], v["reason"]) for v in rep.voids] == [(3, "shoe jam (§ 670a.13(g))")]
    assert [(f["what"], f["source"]) for f in rep.faults] == [("raised", "shoe"), ("cleared", "shoe")]
    assert rep.head.count == 19  # the last event before 06:00 the next morning, not the one at 06:00


def test_csv_totals_and_exact_amounts(tmp_path):
    state, _ = _ledger(tmp_path)
    rows = list(csv.DictReader(io.StringIO(R.to_csv(_build(state), NY))))
    by = {(r["section"], r["item"]): r for r in rows}
    assert by[("total", "hits_paid")]["amount"] == "525.33"
    assert by[("total", "hits_paid_attendant")]["amount"] == "500.33"
    assert by[("total", "voids")]["amount"] == "1" and by[("total", "faults")]["amount"] == "1"
    amount = by[("meter", "amount")]
    assert amount["start"] == "1000.33 + 1/3 cent"  # whole cents, and the remainder exact, as text
    assert amount["end"] == "501.00 + 1/3 cent"  # 1000.00 + 5 x 33 1/3 - 33 1/3 (void) - 500.33
    assert by[("meter", "increment_rate")]["end"] == "33.33333333333333333333333333%"
    assert by[("contributions", "day")]["amount"] == "1.33 + 1/3 cent"
    assert by[("head", "chain_head")]["seq"] == "19"
    hits = [r for r in rows if r["section"] == "hit"]
    assert [(h["amount"], h["validated_by"], h["time_local"]) for h in hits][0] == (
        "500.33",
        "floor 17",
        "2026-07-04 11:00:00 EDT",
    )


def test_a_day_with_no_events_reports_the_meters_unchanged(tmp_path):
    state, _ = _ledger(tmp_path)
    conn = open_readonly(state / "ledger.sqlite3")
    try:
        rep = R.build(conn, date(2026, 7, 10), tz=NY)
    finally:
        conn.close()
    (lv,) = rep.levels
    assert lv.start == lv.end and lv.contribution_count == 0 and rep.hits == [] and rep.head.count == 20


def _pdftext(pdf: Path, tmp_path: Path) -> str:
    for tool in ("pdftoppm", "pdftotext"):
        assert shutil.which(tool), f"{tool} missing: ./bootstrap installs Debian's poppler-utils"
    subprocess.run(["pdftoppm", "-png", "-r", "60", str(pdf), str(tmp_path / "page")], check=True)
    pngs = sorted(tmp_path.glob("page*.png"))
    assert pngs and all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 2000 for p in pngs)
    return subprocess.run(["pdftotext", "-layout", str(pdf), "-"], check=True, capture_output=True, text=True).stdout


def test_pdf_renders_and_reads(tmp_path):
    state, keyfile = _ledger(tmp_path)
    out = tmp_path / "r.pdf"
    argv = ["report", "--day", "2026-07-04", "--tz", "America/New_York", "--format", "pdf", "--out", str(out)]
    assert main([*argv, "--state-dir", str(state), "--key-file", str(keyfile)]) == 0
    text = _pdftext(out, tmp_path)
    assert "table T-9 - gaming day 2026-07-04" in text
    assert "§ 605a.7(a)" in text
    assert "floor 17" in text and "500.33" in text
    assert "shoe jam (§ 670a.13(g))" in text
    rep = _build(state)
    assert rep.head.mac in text


def test_pdf_of_many_lines_has_pages():
    pdf = render([f"line {i} (x) \\ y" for i in range(130)], title="t")
    assert pdf.startswith(b"%PDF-1.4") and pdf.rstrip().endswith(b"%%EOF")
    assert pdf.count(b"/Type /Page ") == 3
    assert b"(line 5 \\(x\\) \\\\ y)" in pdf


def test_report_refuses_a_ledger_failing_its_audit(tmp_path, capsys):
    import sqlite3

    state, keyfile = _ledger(tmp_path)
    db = sqlite3.connect(state / "ledger.sqlite3")
    db.execute('UPDATE events SET data = \'{"level":"primary","cents":1}\' WHERE seq = 8')
    db.commit()
    db.close()
    argv = ["report", "--day", "2026-07-04", "--state-dir", str(state), "--key-file", str(keyfile)]
    assert main(argv) == 1
    assert "fails its audit" in capsys.readouterr().err


@pytest.mark.parametrize("bad", [["--day", "2026-13-01"], ["--day", "2026-07-04", "--day-start", "25:00"]])
def test_bad_arguments_exit_2(bad, tmp_path):
    with pytest.raises(SystemExit) as e:
        main(["report", *bad, "--state-dir", str(tmp_path)])
    assert e.value.code == 2


def test_a_report_starting_from_a_checkpoint_is_the_same(tmp_path, monkeypatch):
    """A long ledger is replayed from its last checkpoint before the day, not from event 1."""
    import controller.ledger as L

    plain = _build(_ledger(tmp_path / "a")[0])
    monkeypatch.setattr(L, "CHECKPOINT_EVERY", 3)  # a checkpoint every 3 events
    state, _ = _ledger(tmp_path / "b")
    conn = open_readonly(state / "ledger.sqlite3")
    try:
        cps = [r[0] for r in conn.execute("SELECT seq FROM checkpoints")]
    finally:
        conn.close()
    assert cps == [3, 11, 17, 19]  # seq 3 (05:59:59 New York) is the one before the day
    cp = _build(state)
    assert [(lv.start, lv.end) for lv in cp.levels] == [(lv.start, lv.end) for lv in plain.levels]
    assert (cp.hits, cp.voids, cp.rounds, cp.head.count, cp.events) == (
        plain.hits,
        plain.voids,
        plain.rounds,
        plain.head.count,
        plain.events,
    )
    monkeypatch.setattr(L, "CHECKPOINT_EVERY", 4)  # one at the last event (20)
    state, _ = _ledger(tmp_path / "c")
    conn = open_readonly(state / "ledger.sqlite3")
    try:
        assert conn.execute("SELECT MAX(seq) FROM checkpoints").fetchone()[0] == 20
        later = R.build(conn, date(2026, 7, 10), tz=NY)  # nothing after the last checkpoint
    finally:
        conn.close()
    assert later.head.count == 20 and later.table_id == "T-9" and later.levels[0].end.increment_count == 5
