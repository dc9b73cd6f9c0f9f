"""`tablectl report` for a day of sim play (issue 15 acceptance): the CSV's totals match
`tablectl history --hits`, the ledger's meters and the simulator's own summary; the PDF renders."""

from __future__ import annotations

import csv
import io
import re
import shutil
import sqlite3
import subprocess
import sys
from decimal import Decimal

import pytest

from controller import report as R
from controller.cli import main
from controller.ledger import Ledger
from hil.rig import rig_key_file

pytestmark = pytest.mark.slow


def test_report_of_a_day_of_sim_play_matches_history_and_meters(tmp_path, capsys):
    state = tmp_path / "state"
    sim = subprocess.run(
        [sys.executable, "-m", "controller", "sim", "--rounds", "40", "--state-dir", str(state)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert sim.returncode == 0, sim.stdout + sim.stderr
    summary = dict(line.strip().split(": ", 1) for line in sim.stdout.splitlines() if line.startswith("  "))
    ledger = state / "ledger.sqlite3"
    db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True)
    first, last = db.execute("SELECT MIN(ts), MAX(ts) FROM events").fetchone()
    kinds = dict(db.execute("SELECT kind, COUNT(*) FROM events GROUP BY kind").fetchall())
    db.close()
    day = R.gaming_day_of(first)
    assert R.gaming_day_of(last) == day, "the play straddled the gaming day's start: run again"
    where = ["--state-dir", str(state), "--key-file", str(rig_key_file(state))]

    assert main(["report", "--day", day.isoformat(), *where]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    total = {r["item"]: r["amount"] for r in rows if r["section"] == "total"}
    meter = {r["item"]: r for r in rows if r["section"] == "meter"}
    hits = [r for r in rows if r["section"] == "hit"]

    # history --hits: the same hits, the same amounts
    assert main(["history", "--hits", *where]) == 0
    # each line: "<local time>  round N  seat S  <hand>  $1,234.56 paid by ..." (history --hits)
    hist = [
        Decimal(m.group(1).replace(",", ""))
        for line in capsys.readouterr().out.splitlines()
        if (m := re.search(r"\$([\d,]+\.\d\d)", line))
    ]
    assert 0 < len(hist) < 25  # all of them fit in history's window
    assert [Decimal(h["amount"]) for h in hits] == hist
    assert Decimal(total["hits_paid"]) == sum(hist)
    assert total["hits"] == str(len(hist))
    attendant = [h for h in hits if h["paid_by"] == "attendant"]
    assert str(len(attendant)) == summary["hits"]  # the simulator counts the meter's (attendant-paid) hits
    assert all(h["validated_by"] for h in attendant)  # each validated, and by whom

    # the ledger's meters (replayed from its events) and the simulator's own figures
    led = Ledger.open_readonly(ledger)
    try:
        m = led.recompute_meters()["primary"]
    finally:
        led.close()
    assert meter["amount"]["end"] == R.exact_text(m.value)
    assert "$" + f"{Decimal(R.dollars(m.cents)):,}" == summary["meter_end"]
    assert meter["contribution_count"]["end"] == str(kinds["meter.increment"]) == summary["progressive_wagers"]
    assert meter["paid_cumulative"]["end"] == total["hits_paid"]
    assert total["rounds"] == str(kinds["round.open"]) and total["voids"] == str(kinds.get("round.void", 0))
    assert total["events"] == str(sum(kinds.values()))

    # and the PDF renders
    out = tmp_path / "day.pdf"
    assert main(["report", "--day", day.isoformat(), "--format", "pdf", "--out", str(out), *where]) == 0
    assert shutil.which("pdftotext"), "pdftotext missing: ./bootstrap installs Debian's poppler-utils"
    text = subprocess.run(["pdftotext", "-layout", str(out), "-"], capture_output=True, text=True, check=True).stdout
    assert f"gaming day {day.isoformat()}" in text and R.exact_text(m.value) in text
