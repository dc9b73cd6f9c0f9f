"""`tablectl report` for a day of sim play: the sim's summary and the day's report
agree figure by figure (the same words, the same numbers); the CSV's hits match
`tablectl history --hits` and the ledger's meters; the PDF renders."""

from __future__ import annotations

import csv
import datetime
import io
import re
import shutil
import sqlite3
import subprocess
import sys
from decimal import Decimal

import pytest

from controller.books.ledger import Ledger
from controller.cli import main
from controller.reports import report as R
from controller.reports.reportview import dollars
from hil.rig import rig_key_file

pytestmark = pytest.mark.slow

#: each line of the sim's summary, and the report's figures (CSV section, item, column) that are
#: its numbers, in the order the line prints them
SAME_FIGURES: dict[str, list[tuple[str, ...]]] = {
    "rounds played": [("play", "rounds_played"), ("play", "rounds_completed"), ("play", "rounds_voided")],
    "wagers accepted": [("play", "wagers"), ("play", "wagered")],
    "late wagers refused": [("play", "refused_late")],
    "progressive coin-in": [("coin_in", "coin_in_wagers"), ("coin_in", "coin_in_amount")],
    "meter at the start": [("meter", "meter_shown", "start")],
    "meter at the end": [("meter", "meter_shown", "end")],
    "progressive hits": [
        ("hit_totals", "hits_hits"),
        ("hit_totals", "meter_hits_hits"),
        ("hit_totals", "fixed_pays_hits"),
    ],
    "progressive paid": [
        ("hit_totals", "hits_paid"),
        ("hit_totals", "meter_hits_paid"),
        ("hit_totals", "fixed_pays_paid"),
    ],
    "paid to players": [("play", "paid"), ("play", "paid_won"), ("play", "paid_meter"), ("play", "paid_returned")],
    "wagers returned by voided rounds": [("play", "void_returned"), ("play", "void_returned_amount")],
}

NUMBER = re.compile(r"\$?-?\d+(?:,\d{3})*(?:\.\d\d)?")


def _numbers(text: str) -> list[Decimal]:
    """The counts and dollar amounts in a summary line, in order (``$1,111.00`` -> 1111.00)."""
    return [Decimal(m.group(0).replace("$", "").replace(",", "")) for m in NUMBER.finditer(text)]


def _sim(state, rounds: int, seed: int) -> list[str]:
    sim = subprocess.run(
        [
            sys.executable,
            "-m",
            "controller",
            "sim",
            "--rounds",
            str(rounds),
            "--seed",
            str(seed),
            "--state-dir",
            str(state),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert sim.returncode == 0, sim.stdout + sim.stderr
    lines = sim.stdout.splitlines()
    return [line.strip() for line in lines[lines.index("summary:") + 1 :] if line.startswith("  ")]


def _day(ledger) -> datetime.date:
    db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True)
    first, last = db.execute("SELECT MIN(ts), MAX(ts) FROM events").fetchone()
    db.close()
    day = R.gaming_day_of(first)
    assert R.gaming_day_of(last) == day, "the play straddled the gaming day's start: run again"
    return day


@pytest.mark.slow
@pytest.mark.soak
def test_the_sims_summary_and_the_days_report_agree_figure_by_figure(tmp_path, capsys):
    state = tmp_path / "state"
    summary = _sim(state, 40, 1)
    day = _day(state / "ledger.sqlite3")
    where = ["--state-dir", str(state), "--key-file", str(rig_key_file(state))]
    assert main(["report", "--day", day.isoformat(), *where]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    figure: dict[tuple[str, ...], str] = {}
    for r in rows:
        figure[(r["section"], r["item"])] = r["value"]
        figure[(r["section"], r["item"], "start")] = r["start"]
        figure[(r["section"], r["item"], "end")] = r["end"]
    seen = set()
    for line in summary:
        label, _, rest = line.partition(": ")
        assert label in SAME_FIGURES, f"the sim prints {label!r}, which the report does not name"
        seen.add(label)
        want = [Decimal(figure[key]) for key in SAME_FIGURES[label]]
        assert _numbers(rest) == want, (line, want)
    assert seen == set(SAME_FIGURES)
    # the play made progressive hits of some kind, so the comparison compared something
    assert int(figure[("hit_totals", "hits_hits")]) > 0 and int(figure[("coin_in", "coin_in_wagers")]) > 0
    # the round still open for wagers when the sim stopped is counted as opened, not as played (7 vs 6)
    assert int(figure[("play", "rounds_opened")]) == int(figure[("play", "rounds_played")]) + 1


def test_report_of_a_day_of_sim_play_matches_history_and_meters(tmp_path, capsys):
    state = tmp_path / "state"
    _sim(state, 40, 1)
    ledger = state / "ledger.sqlite3"
    day = _day(ledger)
    db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True)
    kinds = dict(db.execute("SELECT kind, COUNT(*) FROM events GROUP BY kind").fetchall())
    db.close()
    where = ["--state-dir", str(state), "--key-file", str(rig_key_file(state))]

    assert main(["report", "--day", day.isoformat(), *where]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    value = {(r["section"], r["item"]): r["value"] for r in rows}
    meter = {r["item"]: r for r in rows if r["section"] == "meter"}
    hits = [r for r in rows if r["section"] == "hit" and r["item"] == "hit"]

    # history --hits: the same hits, the same amounts
    assert main(["history", "--hits", *where]) == 0
    hist = [
        Decimal(m.group(1).replace(",", ""))
        for line in capsys.readouterr().out.splitlines()
        if (m := re.search(r"\$([\d,]+\.\d\d)", line))
    ]
    assert 0 < len(hist) < 25  # all of them fit in history's window
    assert [Decimal(h["value"]) for h in hits] == hist
    assert Decimal(value[("hit_totals", "hits_paid")]) == sum(hist)
    attendant = [h for h in hits if h["paid_by"] == "attendant"]
    assert all(h["validated_by"] and h["validated_by"] != "NOT RECORDED" for h in attendant)

    # the ledger's meters (replayed from its events)
    led = Ledger.open_readonly(ledger)
    try:
        primary = led.recompute_meters()["primary"]
    finally:
        led.close()
    assert meter["meter_shown"]["end"] == dollars(primary.cents)
    assert meter["contribution_count"]["end"] == str(kinds["meter.increment"])
    assert meter["paid_cumulative"]["end"] == value[("hit_totals", "hits_paid")]
    assert value[("play", "rounds_opened")] == str(kinds["round.open"])
    assert value[("coin_in", "check_amount")] == "agrees, exactly"

    # and the PDF renders, with the sim's casino and asset from the ledger's configuration record
    out = tmp_path / "day.pdf"
    assert main(["report", "--day", day.isoformat(), "--format", "pdf", "--out", str(out), *where]) == 0
    assert shutil.which("pdftotext"), "pdftotext missing: ./bootstrap installs Debian's poppler-utils"
    text = subprocess.run(["pdftotext", "-layout", str(out), "-"], capture_output=True, text=True, check=True).stdout
    assert f"Gaming day {day.isoformat()}" in text and "Simulated Casino (tablectl sim)" in text
    assert "SIM-A-SIM-01" in text
