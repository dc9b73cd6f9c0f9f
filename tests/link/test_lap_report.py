"""``tablectl lap --report``: the LAP's accounting report of a gaming day (N.J.A.C. 13:69E-1.39A(b),
9 NYCRR 5320.8(b)): per level its roll-forward (checked), coin-in and parameters, per table the day's
figures, the last 25 hits; as CSV (the table report's layout) and as PDF (rendered to PNG and read
back with pdftotext: page N of M, PROVISIONAL on every page, headings kept with their tables,
signature lines); bad input is refused clearly."""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
from datetime import timedelta
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from controller.cli import main
from controller.core.money import format_cents
from controller.reports.reportcsv import CSV_COLUMNS
from controller.reports.reportview import dollars


def _toml(lap: Any, path: Path) -> Path:
    cfg = lap.cfg
    lines = [
        f'[link]\ngroup = "{cfg.group}"\nschema = "{cfg.schema}"\nheartbeat = "100ms"\ncasino = "Keystone Riverside"\n'
    ]
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
        hit = lap.claim("T2", seq, rnd, 1, "royal-flush")
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


def _csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def _by(rows: list[dict[str, str]], table: str = "") -> dict[tuple[str, str], str]:
    return {(r["section"], r["item"]): r["value"] for r in rows if r["table"] == table and r["item"] != "note"}


def test_csv_has_the_roll_forward_every_table_and_the_last_25_hits(make_lap, pg_dsn, tmp_path, capsys):
    lap, hits = _played(make_lap)
    conf = _toml(lap, tmp_path / "lap.toml")
    rc, out, err = _run(["lap", "--sim", "--db", pg_dsn, "--config", str(conf), "--report"], capsys)
    assert rc == 0, err
    rows = _csv_rows(out)
    assert list(rows[0]) == CSV_COLUMNS  # the table report's layout
    by = _by(rows)
    coin_in = 3 * 1000 + 26 * 1  # the three $10 wagers and the 26 one-cent wagers before the claims
    won = sum(h["amount_cents"] for h in hits)
    assert by[("coin_in", "coin_in_amount")] == dollars(coin_in) and by[("coin_in", "coin_in_wagers")] == "29"
    assert by[("level", "contribution_count")] == "29" and by[("level", "meter_hits")] == "26"
    assert by[("level", "won_all")] == dollars(won)
    assert by[("level", "paid_cumulative")] == dollars(won - hits[0]["amount_cents"])  # the newest is not paid
    assert by[("level", "seed")] == "1000.00" and by[("report", "casino")] == "Keystone Riverside"
    # the roll-forward: $1,000 seed + 21% of the wagers - the hits = the meter now, checked
    level = lap.store.levels()["primary"]
    assert by[("rollforward", "rollforward_start")] == "1000.00"
    assert by[("rollforward", "rollforward_hits")] == dollars(won)
    assert by[("rollforward", "rollforward_end")] == by[("rollforward", "rollforward_recorded")]
    assert by[("rollforward", "rollforward_check")] == "agrees, exactly"
    assert Fraction(100000) + Fraction(21, 100) * coin_in - won == level.value + level.reserve + level.overflow
    # per table: T1's coin-in, T2's hits decided and paid (the words of each table's own report)
    t1, t2 = _by(rows, "T1"), _by(rows, "T2")
    assert t1[("coin_in", "coin_in_amount")] == "30.00" and t1[("hit_totals", "meter_hits_hits")] == "0"
    assert t2[("coin_in", "coin_in_amount")] == "0.26" and t2[("lap_hits", "hits_decided_hits")] == "26"
    assert t2[("hit_totals", "meter_hits_hits")] == "25"
    assert t2[("hit_totals", "meter_hits_paid")] == dollars(won - hits[0]["amount_cents"])
    listed = [r for r in rows if r["section"] == "hit" and r["item"] == "hit"]
    assert len(listed) == 25  # the last 25 of 26, newest first
    assert [r["note"].split("Hit #: ")[1].split(";")[0] for r in listed] == [str(h["order_no"]) for h in hits[:25]]
    first, second = listed[0], listed[1]
    assert (first["table"], first["seat"], first["hand"]) == ("T2", "1", "Royal Flush")
    assert first["value"] == dollars(hits[0]["amount_cents"]) and first["validated_by"] == "pending"
    assert second["validated_by"] == "floor:bob" and "Paid at: " in second["note"]


def test_an_earlier_day_has_no_day_figures_and_no_later_hits(make_lap, pg_dsn, tmp_path, capsys):
    from controller.lap.floor import gaming_day_start

    lap, _hits = _played(make_lap)
    conf = _toml(lap, tmp_path / "lap.toml")
    yesterday = (gaming_day_start() - timedelta(days=1)).date().isoformat()
    out_csv = tmp_path / "r.csv"
    args = ["lap", "--sim", "--db", pg_dsn, "--config", str(conf), "--report", "--day", yesterday]
    rc, out, err = _run([*args, "--out", str(out_csv)], capsys)
    assert rc == 0, err
    assert out.startswith(f"{out_csv}: csv report of gaming day {yesterday} (1 level, 2 tables, 0 hits listed)")
    rows = _csv_rows(out_csv.read_text())
    by = _by(rows)
    assert by[("coin_in", "wagers_counted_wagers")] == "0" and by[("level", "contribution_count")] == "29"
    # before any record: the seed at both ends, and the LAP's accounts less everything after agree
    assert by[("rollforward", "rollforward_start")] == by[("rollforward", "rollforward_end")] == "1000.00"
    assert by[("rollforward", "rollforward_recorded")] == "1000.00"
    assert by[("rollforward", "rollforward_check")] == "agrees, exactly"
    assert not any(r["section"] == "hit" and r["item"] == "hit" for r in rows)
    assert not any(r["item"] == "provisional" for r in rows)


def test_the_roll_forward_catches_accounts_that_disagree_with_the_records(make_lap):
    """A meter moved behind the rules (the database's owner): the roll-forward says so."""
    from controller.lap import lapreport
    from controller.lap.floor import gaming_day_start

    lap, _hits = _played(make_lap)
    lap.store.conn.execute(lap.store.q("UPDATE {s}.levels SET value_num = value_num + den * 500"))
    rep = lapreport.read(lap.store, "pit", gaming_day_start().date())
    by = _by(_csv_rows(lapreport.to_csv(rep)))
    assert by[("rollforward", "rollforward_check")].startswith("DOES NOT AGREE: the figures give $")
    assert Decimal(by[("rollforward", "rollforward_recorded")].split(" ")[0]) - Decimal(
        by[("rollforward", "rollforward_end")].split(" ")[0]
    ) == Decimal("5.00")


def _pdf_pages(pdf: Path, tmp_path: Path) -> list[str]:
    """The PDF rendered to PNG (every page, not blank) and its text per page (pdftotext -layout)."""
    subprocess.run(["pdftoppm", "-png", "-r", "60", str(pdf), str(tmp_path / "page")], check=True)
    pngs = sorted(tmp_path.glob("page*.png"))
    for png in pngs:  # drawn: a blank page compresses to a few hundred bytes
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 8000, f"{png.name} is blank"
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    pages = [p for p in text.split("\f") if p.strip()]
    assert len(pages) == len(pngs)
    return pages


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext (poppler-utils) is not installed")
def test_pdf_reads_back_with_the_roll_forward_the_tables_and_the_hits(make_lap, pg_dsn, tmp_path, capsys):
    pytest.importorskip("reportlab")
    lap, hits = _played(make_lap)
    conf = _toml(lap, tmp_path / "lap.toml")
    pdf = tmp_path / "r.pdf"
    args = ["lap", "--sim", "--db", pg_dsn, "--config", str(conf), "--report", "--format", "pdf", "--out", str(pdf)]
    rc, _out, err = _run(args, capsys)
    assert rc == 0, err
    assert pdf.read_bytes()[:5] == b"%PDF-"
    pages = _pdf_pages(pdf, tmp_path)
    flat = " ".join(" ".join(pages).split())
    n = len(pages)
    assert n >= 2
    for i, page in enumerate(pages, 1):
        assert f"Page {i} of {n}" in page, i  # page N of M
        assert "PROVISIONAL" in page, i  # on every page while the day runs
        assert "Keystone Riverside" in page  # the casino's name heads every page
    won = sum(h["amount_cents"] for h in hits)
    for want in [
        "Time zone",
        "Roll-forward - level primary",
        "Meter at the start of the gaming day $1,000.00",
        f"less: meter hits (paid from the meter) {format_cents(won)}",
        "Start + contributions - voids - hits + reseeds = end agrees, exactly",
        "Tables: the gaming day",
        "T1 A-1001 Six-Card Fortune Pai Gow 3 $30.00 $6.30 0 0 $0.00 $0.00",  # the per-table rows, the game
        "T2 A-1002 Six-Card Fortune Pai Gow 26 $0.26",  # by its name ("Poker" wraps to the next line)
        "Prepared by: Date:",
        "Reviewed by: Date:",
    ]:
        assert want in flat, want
    # headings whole (a column never narrower than its longest word) and kept with their tables
    assert "Seat" in flat and "Round" in flat and "Sea t" not in flat and "Roun d" not in flat
    for heading in ("Last 25 hits (up to the end of the day)", "Tables: the gaming day"):
        page = next(p for p in pages if heading in p)
        after = page.split(heading, 1)[1]
        assert "Time" in after or "Table" in after, f"{heading!r} stranded at the foot of its page"
    assert flat.count("Royal Flush") == 25 and "pending" in flat and "floor:bob" in flat
    assert format_cents(hits[0]["amount_cents"]) in flat


def test_the_two_reports_csvs_share_one_layout(make_lap, tmp_path):
    """The table's report and the LAP's: the same columns, and the same items with the same labels
    for the figures a clerk ties together (the roll-forward, each table's coin-in, its meter hits)."""
    from datetime import UTC, date, datetime

    from controller.books.history import open_readonly
    from controller.lap import lapreport
    from controller.lap.floor import gaming_day_start
    from controller.reports import report as R
    from controller.reports import reportview
    from tests.controller.test_report import NY, _ledger

    lap, _hits = _played(make_lap)
    lap_rows = _csv_rows(lapreport.to_csv(lapreport.read(lap.store, "pit", gaming_day_start().date())))
    state, _key = _ledger(tmp_path)
    conn = open_readonly(state / "ledger.sqlite3")
    try:
        rep = R.build(conn, date(2026, 7, 4), tz=NY)
    finally:
        conn.close()
    table_rows = _csv_rows(reportview.to_csv(rep, NY, generated=datetime(2026, 7, 6, tzinfo=UTC)))
    assert list(lap_rows[0]) == list(table_rows[0]) == CSV_COLUMNS

    def labels(rows: list[dict[str, str]], section: str, table: str | None = None) -> dict[str, str]:
        return {
            r["item"]: r["label"]
            for r in rows
            if r["section"] == section and r["item"] != "note" and (table is None or r["table"] == table)
        }

    roll_lap, roll_table = labels(lap_rows, "rollforward"), labels(table_rows, "rollforward")
    shared = set(roll_lap) & set(roll_table)
    assert shared >= {f"rollforward_{k}" for k in ("start", "contributions", "voided", "hits", "reseeds", "end",
                                                   "check")}  # fmt: skip
    assert {k: roll_lap[k] for k in shared if k != "rollforward_recorded"} == {
        k: roll_table[k] for k in shared if k != "rollforward_recorded"
    }
    coin_lap, coin_table = labels(lap_rows, "coin_in", "T1"), labels(table_rows, "coin_in")
    assert coin_lap and all(coin_table[k] == v for k, v in coin_lap.items()), (coin_lap, coin_table)
    hits_lap, hits_table = labels(lap_rows, "hit_totals", "T1"), labels(table_rows, "hit_totals")
    assert hits_lap == {k: hits_table[k] for k in hits_lap} and "meter_hits_paid" in hits_lap
    # the hits themselves: the same columns filled
    lap_hit = next(r for r in lap_rows if r["section"] == "hit" and r["item"] == "hit")
    table_hit = next(r for r in table_rows if r["section"] == "hit" and r["item"] == "hit")
    for col in ("time_local", "round", "seat", "hand", "value", "validated_by"):
        assert lap_hit[col] and table_hit[col], col


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


def test_a_tables_hostile_hand_text_is_text_in_the_csv_and_the_pdf(make_lap, tmp_path):
    """A hand comes from a table: a formula is quoted in the CSV, markup prints as written in the PDF."""
    pytest.importorskip("reportlab")
    from controller.lap import lapreport
    from controller.lap.floor import gaming_day_start
    from controller.lap.lapreportpdf import render

    lap = make_lap(tables=2)
    lap.claim("T1", 1, 1, 1, "=HYPERLINK(1)")
    lap.claim("T2", 1, 1, 1, '<font size="80">FORGED</font>')
    rep = lapreport.read(lap.store, "pit", gaming_day_start().date())
    hands = {r["table"]: r["hand"] for r in _csv_rows(lapreport.to_csv(rep)) if r["item"] == "hit"}
    assert hands == {"T1": "'=HYPERLINK(1)", "T2": '<font size="80">FORGED</font>'}
    if shutil.which("pdftotext") is None:
        return
    (tmp_path / "h.pdf").write_bytes(render(rep))
    text = subprocess.run(["pdftotext", "-layout", str(tmp_path / "h.pdf"), "-"], capture_output=True, text=True).stdout
    assert '<font size="80">FORGED</font>' in " ".join(text.split())
