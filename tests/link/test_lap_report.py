"""``tablectl lap --report``: every level's meters over a gaming day and the last 25 hits
(N.J.A.C. 13:69E-1.39A(b), 9 NYCRR 5320.8(b)), as CSV and as PDF; bad input is refused clearly."""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from controller.cli import main
from controller.core.money import format_exact


def _toml(lap: Any, path: Path) -> Path:
    cfg = lap.cfg
    lines = [f'[link]\ngroup = "{cfg.group}"\nschema = "{cfg.schema}"\nheartbeat = "100ms"\n']
    lines.append(
        '[levels.primary]\nseed = "$1,000"\nreset = "$1,000"\nincrement_rate = "21%"\nmax_wager = "$10"\n'
        'meter_pays = ["100%", "10%"]\n'
    )
    for t in cfg.tables:
        lines.append(f'[tables.{t.table_id}]\nasset = "{t.asset}"\ngame = "{t.game}"\n')
    path.write_text("\n".join(lines))
    return path


def _played(make_lap: Any) -> tuple[Any, list[dict[str, Any]]]:
    """T1 wagers $10 on three seats; T2 hits 26 times (a 1-cent wager before each claim) and the
    first 25 hits are paid, validated by floor:bob; the last is pending."""
    lap = make_lap(tables=2)
    for seat in (1, 2, 3):
        lap.send("T1", seat, "contribution", {"wager": 1000, "round": 1, "seat": seat})
    seq = 1
    for rnd in range(1, 27):
        hit = lap.claim("T2", seq, rnd, 1, "royal")
        seq = hit + 1
        if rnd < 26:
            amount = lap.store._rows("SELECT amount_cents FROM {s}.hits WHERE table_id = 'T2' AND seq = %s", (hit,))
            lap.send("T2", seq, "paid", {"hit_seq": hit, "cents": amount[0]["amount_cents"], "by": "floor:bob"})
            seq += 1
    hits = lap.store._rows("SELECT * FROM {s}.hits ORDER BY order_no DESC")
    return lap, hits


def _run(args: list[str], capsys: Any) -> tuple[int, str, str]:
    rc = main(args)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_csv_has_every_meter_and_the_last_25_hits(make_lap, pg_dsn, tmp_path, capsys):
    lap, hits = _played(make_lap)
    conf = _toml(lap, tmp_path / "lap.toml")
    rc, out, err = _run(["lap", "--sim", "--db", pg_dsn, "--config", str(conf), "--report"], capsys)
    assert rc == 0, err
    rows = list(csv.reader(io.StringIO(out)))
    meters = {r[2]: r[3] for r in rows if r and r[0] == "meters" and r[1] == "primary"}
    coin_in = 3 * 1000 + 26 * 1  # the three $10 wagers and the 26 one-cent wagers before the claims
    assert meters["Day: progressive coin-in"] == format_exact(coin_in)
    assert meters["Since start: progressive coin-in"] == format_exact(coin_in)
    assert meters["Day: progressive wagers"] == "29" and meters["Since start: hits"] == "26"
    won = sum(h["amount_cents"] for h in hits)
    assert meters["Day: amount won"] == format_exact(won)
    assert meters["Day: amount paid"] == format_exact(won - hits[0]["amount_cents"])  # the newest is not paid
    assert meters["Meter (amount shown)"] == format_exact(lap.store.levels()["primary"].value)
    assert meters["Seed"] == "$1,000.00"
    listed = [r for r in rows if r and r[0] == "hit"]
    assert len(listed) == 25  # the last 25 of 26
    assert [int(r[3]) for r in listed] == [h["order_no"] for h in hits[:25]]  # newest first
    first, second = listed[0], listed[1]
    assert (first[4], first[5], first[6]) == ("T2", "A-1002", "1")
    assert first[9] == format_exact(hits[0]["amount_cents"]) and first[10] == "awaiting floor validation"
    assert second[10].startswith("validated by floor:bob, paid " + format_exact(hits[1]["amount_cents"]))


def test_an_earlier_day_has_no_day_figures_and_no_later_hits(make_lap, pg_dsn, tmp_path, capsys):
    from controller.lap.floor import gaming_day_start

    lap, _hits = _played(make_lap)
    conf = _toml(lap, tmp_path / "lap.toml")
    yesterday = (gaming_day_start() - timedelta(days=1)).date().isoformat()
    out_csv = tmp_path / "r.csv"
    args = ["lap", "--sim", "--db", pg_dsn, "--config", str(conf), "--report", "--day", yesterday]
    rc, out, err = _run([*args, "--out", str(out_csv)], capsys)
    assert rc == 0, err
    assert out.startswith(f"{out_csv}: csv report of gaming day {yesterday} (1 levels, 0 hits listed)")
    rows = list(csv.reader(io.StringIO(out_csv.read_text())))
    meters = {r[2]: r[3] for r in rows if r and r[0] == "meters"}
    assert meters["Day: progressive wagers"] == "0" and meters["Day: hits"] == "0"
    assert meters["Since start: progressive wagers"] == "29"  # the group's totals are now's
    assert [r[1] for r in rows if r and r[0] == "hit"] == ["none up to the end of this gaming day"]


@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext (poppler-utils) is not installed")
def test_pdf_reads_back_with_the_meters_and_the_hits(make_lap, pg_dsn, tmp_path, capsys):
    pytest.importorskip("reportlab")
    lap, hits = _played(make_lap)
    conf = _toml(lap, tmp_path / "lap.toml")
    pdf = tmp_path / "r.pdf"
    args = ["lap", "--sim", "--db", pg_dsn, "--config", str(conf), "--report", "--format", "pdf", "--out", str(pdf)]
    rc, _out, err = _run(args, capsys)
    assert rc == 0, err
    assert pdf.read_bytes()[:5] == b"%PDF-"
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    assert "Level primary" in text and "Meter (amount shown)" in text and "Since start: amount paid" in text
    assert format_exact(lap.store.levels()["primary"].value) in text
    assert text.count("A-1002") == 25 and "awaiting floor validation" in text and "floor:bob" in text
    assert format_exact(hits[0]["amount_cents"]) in text and "PROVISIONAL" in text  # today has not ended


@pytest.mark.parametrize(
    ("extra", "words", "code"),
    [
        (["--day", "2026-13-01"], "--day: '2026-13-01' is not a date", 2),
        (["--day", "yesterday"], "--day: 'yesterday' is not a date", 2),
        (["--format", "pdf"], "--format pdf needs --out FILE", 2),
        (["--out", "/nonexistent-dir/r.csv"], "--out: directory /nonexistent-dir does not exist", 2),
        (["--out", "/"], "--out: / is a directory", 2),
        (["--out", "/proc/version"], "--out: ", 1),  # refused by the kernel even to root
    ],
)
def test_bad_input_is_a_clear_error_and_writes_nothing(make_lap, pg_dsn, tmp_path, capsys, extra, words, code):
    lap = make_lap(tables=1)
    conf = _toml(lap, tmp_path / "lap.toml")
    rc, out, err = _run(["lap", "--sim", "--db", pg_dsn, "--config", str(conf), "--report", *extra], capsys)
    assert (rc, out) == (code, ""), err
    assert err.startswith("tablectl lap: " + words) and "Traceback" not in err


def test_a_schema_not_there_is_said(pg_dsn, lap_schema, tmp_path, capsys):
    conf = tmp_path / "lap.toml"
    conf.write_text(
        f'[link]\ngroup = "pit"\nschema = "{lap_schema}"\n[levels.primary]\nseed = "$1,000"\nreset = "$1,000"\n'
        'increment_rate = "21%"\nmax_wager = "$10"\nmeter_pays = ["100%"]\n'
        '[tables.T1]\nasset = "A-1"\ngame = "six-card-fortune"\n'
    )
    rc, out, err = _run(["lap", "--sim", "--db", pg_dsn, "--config", str(conf), "--report"], capsys)
    assert (rc, out) == (
        1,
        "",
    ) and err == f"tablectl lap: schema {lap_schema} is not in the database: nothing to report\n"
