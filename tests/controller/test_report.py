"""The accounting report of a gaming day (controller/reports/report.py, cf. § 605a.7(a))."""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
from datetime import UTC, date, datetime, time, timedelta
from fractions import Fraction
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from controller.books.history import open_readonly
from controller.books.ledger import Ledger, Record
from controller.books.ledgerkey import init_key, read_key
from controller.books.witness import Witness, default_witness_dir
from controller.cli import main
from controller.core.records import Kind
from controller.reports import report as R
from controller.reports import reportpdf as RP
from controller.reports import reportview as V

NY = ZoneInfo("America/New_York")
DAY = date(2026, 7, 4)  # EDT: UTC-4; the gaming day is 2026-07-04 10:00Z .. 2026-07-05 10:00Z


class Wall:
    def __init__(self) -> None:
        self.t = 0.0

    def at(self, iso: str) -> None:
        self.t = datetime.fromisoformat(iso).timestamp()

    def __call__(self) -> float:
        return self.t


#: the table's start-up records (controller/daemon/service.py, controller/play/table.py): who and what recorded the day
CONFIG = {
    "table_id": "T-9",
    "casino": "Keystone & Sons <Riverside> Casino",  # markup characters print as they are
    "asset": "A-10009",
    "location": "Pit 2, table 9",
    "profile.name": "Six-Card Fortune Pai Gow Poker",
    "profile.game": "six-card-fortune",
    "profile.progressive.paytable": "Six-Card Fortune Progressive",
    "profile.progressive.increment_rate": "1/3",
    "profile.progressive.linked": "None",
}
DIGEST = "ab" * 32
START_RECORDS = [
    Record(Kind.POWER_UP, 0, {"version": "0.1.0"}),
    Record(Kind.SELFCHECK, 0, {"digest": DIGEST, "recorded_digest": DIGEST, "results": {"software": "pass"}}),
    Record(Kind.CONFIG_LOADED, 0, {"file": "/etc/tablectl/table.toml", "digest": "cd" * 32, "values": CONFIG}),
]


def _ledger(tmp_path: Path) -> tuple[Path, Path]:
    """A table's ledger across three gaming days; returns (state dir, key file)."""
    keyfile = init_key(tmp_path / "key" / "ledger.key")
    state = tmp_path / "state"
    wall = Wall()
    led = Ledger(state / "ledger.sqlite3", "T-9", key=read_key(keyfile), wall_clock=wall)
    inc = {"level": "primary", "wager": 100, "rate": "1/3"}  # 33 1/3 cents: a hidden remainder
    # the day before (ends 2026-07-04 05:59:59 New York time)
    wall.at("2026-07-03T20:00:00+00:00")
    led.append(START_RECORDS + [Record(Kind.METER_INIT, 0, {"level": "primary", "seed": 100000, "rate": "1/3"})])
    wall.at("2026-07-04T09:59:59+00:00")
    led.append([Record(Kind.ROUND_OPEN, 1, {}), Record(Kind.METER_INCREMENT, 1, inc)])
    # the gaming day
    wall.at("2026-07-04T10:00:00+00:00")
    led.append([Record(Kind.ROUND_COMPLETE, 1, {})])
    wall.at("2026-07-04T15:00:00+00:00")
    led.append(
        [
            Record(Kind.ROUND_OPEN, 2, {}),
            Record(Kind.WAGER_ACCEPTED, 2, {"seat": 3, "spot": "progressive", "cents": 100}),
            Record(Kind.WAGER_ACCEPTED, 2, {"seat": 5, "spot": "progressive", "cents": 100}),
            Record(Kind.WAGER_ACCEPTED, 2, {"seat": 5, "spot": "base", "cents": 150000}),
            Record(Kind.WAGER_REJECTED, 2, {"seat": 1, "spot": "progressive", "reason": "placed after lock-out"}),
            Record(Kind.METER_INCREMENT, 2, inc),
            Record(Kind.METER_INCREMENT, 2, inc),
            Record(
                Kind.WAGER_RESULT, 2, {"seat": 5, "wager": "base", "cents": 150000, "net": 150000, "outcome": "win"}
            ),
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
    assert head_of_day.count == 27
    # the next gaming day
    wall.at("2026-07-05T10:00:00+00:00")
    led.append([Record(Kind.ROUND_COMPLETE, 4, {})])
    Witness(default_witness_dir(state), "T-9", read_key(keyfile)).write(led.head())
    led.close()
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
    assert lv.start is not None and not lv.born_ts
    assert lv.start.value == 100000 + third  # the increment at 05:59:59 belongs to the day before
    assert lv.contribution_count == 4 and lv.contributions == 4 * third  # the void does not undo the count
    assert lv.voided == third
    assert lv.end.value == 100000 + 5 * third - third - 50033
    assert (lv.end.paid_attendant, lv.end.paid_table, lv.end.hits, lv.end.fixed_hits) == (50033, 2500, 1, 1)
    assert [(h.seat, h.cents, h.paid_by, h.validated_by, h.kind) for h in rep.hits] == [
        (3, 50033, "attendant", "floor 17", R.METER_HIT),
        (5, 2500, "table", "", R.FIXED_PAY),
    ]
    assert [(v["round"], v["reason"]) for v in rep.voids] == [(3, "shoe jam (§ 670a.13(g))")]
    assert [(f["what"], f["source"]) for f in rep.faults] == [("raised", "shoe"), ("cleared", "shoe")]
    assert rep.head.count == 27  # the last event before 06:00 the next morning, not the one at 06:00


def test_coin_in_rate_times_wagers_and_the_play(tmp_path):
    rep = _build(_ledger(tmp_path)[0])
    (lv,) = rep.levels
    ci = lv.coin_in
    assert (ci.wagers, ci.cents, ci.voided_wagers, ci.voided_cents) == (4, 400, 1, 100)
    assert ci.by_rate == {Fraction(1, 3): 300} and ci.expected == 100  # $3.00 x 1/3 = 100 cents, exactly
    assert lv.net_contributions == 100 and lv.contributions_agree
    a = rep.activity
    assert (a.opened, a.completed, a.voided, a.played) == (3, 2, 1, 3)  # round 1 opened the day before
    assert a.open_rounds == {4: "2026-07-05T09:59:59.999999+00:00"}  # opened, not ended, in the day
    assert (a.wagers, a.wagered_cents, a.refused_late, a.refused_other) == (3, 150200, 1, 0)
    assert (a.won_cents, a.returned_cents, a.meter_paid_cents) == (150000, 150000, 50033)
    assert a.paid_cents == 350033
    assert rep.info.get("asset") == "A-10009" and rep.info.version == "0.1.0" and rep.info.digest == DIGEST


def _csv(state: Path, generated: datetime | None = None) -> list[dict[str, str]]:
    text = V.to_csv(_build(state), NY, generated=generated or datetime(2026, 7, 6, tzinfo=UTC))
    return list(csv.DictReader(io.StringIO(text)))


def test_csv_one_row_per_figure_labelled_with_its_rule(tmp_path):
    rows = _csv(_ledger(tmp_path)[0])
    by = {(r["section"], r["item"]): r for r in rows}
    shown = by[("meter", "meter_shown")]
    assert (shown["label"], shown["regulation"], shown["unit"]) == (
        "Progressive meter, as shown to players",
        "§ 605a.7(a)(1)",
        "USD",
    )
    assert (shown["start"], shown["end"]) == ("1000.33", "501.00")
    assert by[("meter", "remainder")]["start"] == "1/3" and by[("meter", "remainder")]["unit"] == "cent"
    assert (
        by[("meter", "paid_table")]["regulation"] == "§ 605a.7(a)(2)" and by[("meter", "paid_table")]["end"] == "25.00"
    )
    assert by[("meter", "paid_attendant")]["regulation"] == "§ 605a.7(a)(3)"
    assert by[("meter", "paid_cumulative")]["regulation"] == "§ 605a.7(a)(4)"
    assert by[("meter", "paid_cumulative")]["end"] == "525.33"
    assert by[("meter", "rate")]["end"] == "33 1/3%"  # exact, not 33.333...
    assert by[("meter", "contributions")]["end"] == "1.66 + 2/3 cent"
    assert by[("coin_in", "coin_in_wagers")]["value"] == "3" and by[("coin_in", "coin_in_amount")]["value"] == "3.00"
    assert by[("coin_in", "check_amount")]["value"] == "agrees, exactly"
    assert by[("hit_totals", "hits_hits")]["value"] == "2" and by[("hit_totals", "hits_paid")]["value"] == "525.33"
    assert by[("play", "rounds_played")]["value"] == "3" and by[("play", "paid")]["value"] == "3500.33"
    assert by[("report", "asset_number")]["value"] == "A-10009"
    assert by[("head", "chain_head")]["note"] == "event #27"
    hits = [r for r in rows if r["section"] == "hit" and r["item"] == "hit"]
    assert [(h["value"], h["validated_by"], h["time_local"], h["paid_by"]) for h in hits] == [
        ("500.33", "floor 17", "2026-07-04 11:00:00 EDT", "attendant"),  # the year and the zone
        ("25.00", "(note 2)", "2026-07-04 11:00:00 EDT", "table"),
    ]
    assert not any(r["item"] == "provisional" for r in rows)  # the day has ended


def test_a_level_created_during_the_day_starts_at_its_creation(tmp_path):
    """'Start of day' for a ledger born during the day is the meter as created, labelled."""
    keyfile = init_key(tmp_path / "key" / "ledger.key")
    wall = Wall()
    led = Ledger(tmp_path / "s" / "ledger.sqlite3", "T-9", key=read_key(keyfile), wall_clock=wall)
    wall.at("2026-07-04T14:00:00+00:00")
    led.append([*START_RECORDS, Record(Kind.METER_INIT, 0, {"level": "primary", "seed": 500000, "rate": "21/100"})])
    led.append([Record(Kind.METER_INCREMENT, 1, {"level": "primary", "wager": 100, "rate": "21/100"})])
    led.close()
    rep = _build(tmp_path / "s")
    (lv,) = rep.levels
    assert lv.born_ts and lv.start is not None and lv.start.value == 500000 and lv.contribution_count == 1
    sec = V.meter_section(rep, lv, NY)
    assert sec.columns == ["Created 2026-07-04 10:00:00 EDT", "End of day"]
    assert sec.rows[0].values[0].shown() == "$5,000.00" and sec.rows[0].values[1].shown() == "$5,000.21"
    assert "created during the day (event #4" in sec.notes[0]
    assert _check(rep) == "DOES NOT AGREE: a rate other than the configured 33 1/3%"  # CONFIG says 1/3


def _check(rep: R.DayReport) -> str:
    sec = V.coin_in_section(rep, "primary", NY)
    return next(r for r in sec.rows if r.item == "check").values[1].shown()


def test_contributions_that_are_not_rate_times_wagers_are_shown(tmp_path):
    rep = _build(_ledger(tmp_path)[0])
    lv = rep.levels[0]
    lv.coin_in.by_rate = {Fraction(1, 4): 300}  # as if the meter had credited another rate
    assert _check(rep).startswith("DOES NOT AGREE: the meter has $1.00, rate × wagers $0.75")


def test_a_day_with_no_events_reports_the_meters_unchanged(tmp_path):
    state, _ = _ledger(tmp_path)
    conn = open_readonly(state / "ledger.sqlite3")
    try:
        rep = R.build(conn, date(2026, 7, 10), tz=NY)
    finally:
        conn.close()
    (lv,) = rep.levels
    assert lv.start == lv.end and lv.contribution_count == 0 and rep.hits == [] and rep.head.count == 28


def _pdftext(pdf: Path, tmp_path: Path) -> str:
    """The PDF rendered to PNG (every page, not blank) and its text (pdftotext -layout)."""
    for tool in ("pdftoppm", "pdftotext"):
        assert shutil.which(tool), f"{tool} missing: ./bootstrap installs Debian's poppler-utils"
    subprocess.run(["pdftoppm", "-png", "-r", "60", str(pdf), str(tmp_path / "page")], check=True)
    pngs = sorted(tmp_path.glob("page*.png"))
    assert pngs and all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 8000 for p in pngs)
    return subprocess.run(["pdftotext", "-layout", str(pdf), "-"], check=True, capture_output=True, text=True).stdout


def test_pdf_renders_and_reads(tmp_path):
    state, keyfile = _ledger(tmp_path)
    out = tmp_path / "r.pdf"
    argv = ["report", "--day", "2026-07-04", "--tz", "America/New_York", "--format", "pdf", "--out", str(out)]
    assert main([*argv, "--state-dir", str(state), "--key-file", str(keyfile)]) == 0
    text = _pdftext(out, tmp_path)
    flat = " ".join(text.split())
    rep = _build(state)
    for want in [
        "Progressive accounting report",
        "Keystone & Sons <Riverside> Casino",  # escaped for the layout engine, printed as written
        "Table T-9",
        "A-10009",
        "Pit 2, table 9",
        "Six-Card Fortune Pai Gow Poker",
        "Six-Card Fortune Progressive (§ 670a.12(d))",
        "2026-07-04: 2026-07-04 06:00:00 EDT to 2026-07-05 06:00:00 EDT",
        "Generated",
        f"tablectl 0.1.0, SHA-256 {DIGEST} (matches the digest recorded at installation)",
        rep.head.mac,
        "Page 1 of",
        # the § 605a.7(a) meters, each with its item, in dollars with separators
        "Progressive meter, as shown to players § 605a.7(a)(1) $1,000.33 $501.00",
        "Progressive pays made by the table § 605a.7(a)(2) $0.00 $25.00",
        "Progressive pays made by an attendant § 605a.7(a)(3) $0.00 $500.33",
        "Cumulative progressive paid § 605a.7(a)(4) $0.00 $525.33",
        "Fraction of a cent carried (hidden remainder) SPEC § 5 1/3 of a cent 1/3 of a cent",
        # coin-in and the check
        "Progressive coin-in 3 $3.00",
        "$3.00 × 33 1/3%",
        "Contributions = rate × wagers agrees, exactly",
        # hits: who validated the meter hit; why the fixed pay has no name
        "Royal Flush meter hit, 50% of the meter attendant $500.33 floor 17",  # the hand as players say it
        "(note 2)",
        "§ 670a.11(h)(3)(i)(B)(III)",
        "Meter hits, paid by an attendant § 605a.7(a)(3) 1 $500.33",
        # the play, voids, faults
        "Rounds played (completed or voided) 3",
        "Rounds still open at the end 4 (opened 2026-07-05 05:59:59 EDT)",
        "Paid to players $3,500.33",
        "shoe jam (§ 670a.13(g))",
        "Prepared by:",
        "Reviewed by:",
        # the meter's roll-forward, checked
        "Meter at the start of the gaming day $1,000.33 + 1/3 of a cent",
        "add: contributions credited (wager × rate) $1.33 + 1/3 of a cent",
        "less: contributions taken back by voided rounds $0.33 + 1/3 of a cent",
        "less: meter hits (paid from the meter) $500.33",
        "Meter at the end of the gaming day (the sum) $501.00 + 1/3 of a cent",
        "Start + contributions - voids - hits + reseeds = end agrees, exactly",
        "Time zone America/New_York (EDT, UTC-04:00)",
    ]:
        assert want in flat, want
    assert "PROVISIONAL" not in text  # a day that has ended
    assert "seed_reset" not in text and "hits_attendant" not in text  # no code identifiers as labels


def test_a_report_for_today_or_a_future_day_is_provisional(tmp_path):
    keyfile = init_key(tmp_path / "key" / "ledger.key")
    led = Ledger(tmp_path / "s" / "ledger.sqlite3", "T-9", key=read_key(keyfile))  # the real clock: now
    led.append([*START_RECORDS, Record(Kind.METER_INIT, 0, {"level": "primary", "seed": 500000, "rate": "1/3"})])
    led.close()
    ro = Ledger.open_readonly(tmp_path / "s" / "ledger.sqlite3")
    Witness(default_witness_dir(tmp_path / "s"), "T-9", read_key(keyfile)).write(ro.head())
    ro.close()
    today = R.gaming_day_of(datetime.now(UTC).isoformat(), tz=NY)
    where = ["--state-dir", str(tmp_path / "s"), "--key-file", str(keyfile), "--tz", "America/New_York"]
    for day in (today, today + timedelta(days=30)):
        out = tmp_path / f"{day}.pdf"
        assert main(["report", "--day", day.isoformat(), "--format", "pdf", "--out", str(out), *where]) == 0
        (tmp_path / day.isoformat()).mkdir()
        text = _pdftext(out, tmp_path / day.isoformat())
        assert "PROVISIONAL — the gaming day has not ended" in text
        first_page = text.split("\f")[0]
        assert first_page.index("PROVISIONAL") < first_page.index("Asset number")  # above the figures
    out = tmp_path / "today.csv"
    assert main(["report", "--day", today.isoformat(), "--out", str(out), *where]) == 0
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert any(r["item"] == "provisional" and r["value"] == "yes" for r in rows)
    yesterday = (today - timedelta(days=1)).isoformat()
    assert main(["report", "--day", yesterday, "--out", str(out), *where]) == 0
    assert "PROVISIONAL" not in out.read_text()


def test_many_hits_flow_over_pages_with_their_headings(tmp_path):
    keyfile = init_key(tmp_path / "key" / "ledger.key")
    wall = Wall()
    wall.at("2026-07-04T12:00:00+00:00")
    led = Ledger(tmp_path / "s" / "ledger.sqlite3", "T-9", key=read_key(keyfile), wall_clock=wall)
    led.append([*START_RECORDS, Record(Kind.METER_INIT, 0, {"level": "primary", "seed": 500000, "rate": "1/3"})])
    for n in range(1, 81):
        fixed = {"level": "primary", "cents": 300, "seat": n % 6 + 1, "hand": "straight"}
        led.append(
            [
                Record(Kind.ROUND_OPEN, n, {}),
                Record(Kind.METER_FIXED_PAID, n, fixed),
                Record(Kind.ROUND_COMPLETE, n, {}),
            ]
        )
    led.close()
    pdf = RP.render(_build(tmp_path / "s"), NY, generated=datetime(2026, 7, 6, tzinfo=UTC))
    (tmp_path / "m.pdf").write_bytes(pdf)
    text = _pdftext(tmp_path / "m.pdf", tmp_path)
    pages = text.split("\f")
    assert len([p for p in pages if p.strip()]) >= 3
    assert sum("Validated by" in p for p in pages) >= 2  # the hits' column headings repeat on the next page
    assert "Fixed pays, paid by the table § 605a.7(a)(2) 80 $240.00" in " ".join(text.split())


def test_hostile_texts_from_the_ledger_cannot_break_the_pdf(tmp_path):
    """A void's or a fault's reason comes from the table (a device's message, a technician's words):
    markup prints as text, and a huge one is cut with a note instead of stopping the layout."""
    keyfile = init_key(tmp_path / "key" / "ledger.key")
    wall = Wall()
    wall.at("2026-07-04T12:00:00+00:00")
    led = Ledger(tmp_path / "s" / "ledger.sqlite3", "T-9", key=read_key(keyfile), wall_clock=wall)
    huge = "x" * 50_000  # one word, no spaces
    led.append(
        [
            *START_RECORDS,
            Record(Kind.ROUND_OPEN, 1, {}),
            Record(Kind.TILT_RAISED, 1, {"source": "shoe", "reason": huge}),
            Record(Kind.ROUND_VOID, 1, {"reason": '<para><font size="80">FORGED</font></para> & </b>'}),
        ]
    )
    led.close()
    pdf = RP.render(_build(tmp_path / "s"), NY, generated=datetime(2026, 7, 6, tzinfo=UTC))
    (tmp_path / "h.pdf").write_bytes(pdf)
    text = _pdftext(tmp_path / "h.pdf", tmp_path)
    assert '<para><font size="80">FORGED</font></para> & </b>' in " ".join(text.split())
    assert "(49,600 more characters in the ledger)" in text


def test_pdf_without_reportlab_says_what_to_install(tmp_path, capsys, monkeypatch):
    import sys

    state, keyfile = _ledger(tmp_path)
    monkeypatch.delitem(sys.modules, "controller.reports.reportpdf", raising=False)
    for name in [m for m in sys.modules if m.startswith("reportlab.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "reportlab", None)  # as if the `report` extra were not installed
    argv = ["report", "--day", "2026-07-04", "--format", "pdf", "--out", str(tmp_path / "x.pdf")]
    assert main([*argv, "--state-dir", str(state), "--key-file", str(keyfile)]) == 2
    assert "pip install 'tablectl[report]'" in capsys.readouterr().err
    assert not (tmp_path / "x.pdf").exists()


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
    import controller.books.ledger as L

    plain = _build(_ledger(tmp_path / "a")[0])
    monkeypatch.setattr(L, "CHECKPOINT_EVERY", 3)  # a checkpoint every 3 events
    state, _ = _ledger(tmp_path / "b")
    conn = open_readonly(state / "ledger.sqlite3")
    try:
        cps = [r[0] for r in conn.execute("SELECT seq FROM checkpoints")]
    finally:
        conn.close()
    assert cps == [4, 6, 19, 25, 27]  # seq 6 (05:59:59 New York) is the one before the day
    cp = _build(state)
    assert [(lv.start, lv.end) for lv in cp.levels] == [(lv.start, lv.end) for lv in plain.levels]
    assert (cp.hits, cp.voids, cp.rounds, cp.head.count, cp.events) == (
        plain.hits,
        plain.voids,
        plain.rounds,
        plain.head.count,
        plain.events,
    )
    monkeypatch.setattr(L, "CHECKPOINT_EVERY", 7)  # one at the last event (28)
    state, _ = _ledger(tmp_path / "c")
    conn = open_readonly(state / "ledger.sqlite3")
    try:
        assert conn.execute("SELECT MAX(seq) FROM checkpoints").fetchone()[0] == 28
        later = R.build(conn, date(2026, 7, 10), tz=NY)  # nothing after the last checkpoint
    finally:
        conn.close()
    assert later.head.count == 28 and later.table_id == "T-9" and later.levels[0].end.increment_count == 5


def test_the_roll_forward_is_in_the_csv_and_checked(tmp_path):
    rows = _csv(_ledger(tmp_path)[0])
    roll = {r["item"]: r["value"] for r in rows if r["section"] == "rollforward" and r["item"] != "note"}
    assert roll == {
        "rollforward_start": "1000.33 + 1/3 cent",
        "rollforward_contributions": "1.33 + 1/3 cent",  # four $1 wagers at 1/3
        "rollforward_voided": "0.33 + 1/3 cent",
        "rollforward_hits": "500.33",
        "rollforward_reseeds": "0.00",
        "rollforward_end": "501.00 + 1/3 cent",
        "rollforward_recorded": "501.00 + 1/3 cent",
        "rollforward_check": "agrees, exactly",
    }


def test_the_roll_forward_counts_a_reseed_and_the_reserve_moved_in():
    """A 100 % hit: the meter paid out whole, the seed added back with the reserve."""
    from controller.books import meters as M

    start = M.Meter("primary", 100000, Fraction(1, 10), Fraction(120000), reserve_rate=Fraction(1, 100))
    m = M.apply({"primary": start}, Kind.METER_INCREMENT, {"level": "primary", "wager": 500, "rate": "1/10",
                                                            "reserve_rate": "1/100"})  # fmt: skip
    m = M.apply(m, Kind.METER_PAYOUT, {"level": "primary", "cents": 120050})
    m = M.apply(m, Kind.METER_RESEED, {"level": "primary", "cents": 100000})
    lv = R.LevelReport("primary", start, m["primary"])
    rep = R.DayReport(
        "T-9", DAY, datetime(2026, 7, 4, 10, tzinfo=UTC), datetime(2026, 7, 5, 10, tzinfo=UTC), "", R.DEFAULT_DAY_START
    )
    sec = V.roll_forward_section(rep, lv, NY)
    got = {r.item: r.values[0].shown() for r in sec.rows}
    assert got["rollforward_hits"] == "$1,200.50" and got["rollforward_reseeds"] == "$1,000.00"
    assert got["rollforward_reserve_moved"] == "$0.05"  # 1% of the $5 wager, moved into the reset meter
    assert got["rollforward_end"] == got["rollforward_recorded"] == "$1,000.05"
    assert got["rollforward_check"] == "agrees, exactly"


def test_a_day_before_the_ledger_began_still_names_its_table(tmp_path):
    """A day without play: the table, its casino, asset and location as the ledger first recorded
    them (not "(no events)" and "not set"), and why there is nothing else."""
    state, _ = _ledger(tmp_path)
    conn = open_readonly(state / "ledger.sqlite3")
    try:
        rep = R.build(conn, date(2026, 6, 1), tz=NY)
    finally:
        conn.close()
    ident = dict(V.identity(rep, datetime(2026, 7, 6, tzinfo=UTC), NY))
    assert ident["Table"] == "T-9" and ident["Casino"] == CONFIG["casino"]
    assert ident["Asset number"] == "A-10009" and ident["Location"] == "Pit 2, table 9"
    assert ident["Records of the day"] == "none: the ledger begins 2026-07-03 16:00:00 EDT, after this day"
    assert rep.levels == [] and rep.hits == []


def test_headings_never_break_mid_word():
    """Every column at least as wide as its longest word: no "Sea t", "Roun d"."""
    from reportlab.pdfbase.pdfmetrics import stringWidth

    st = RP.styles()
    head = [(h, st["head"]) for h in ["Time", "Level", "Hit #", "Table", "Asset", "Round", "Seat", "Hand", "Amount"]]
    rows = [[("2026-07-04 11:00:00 EDT", st["cell"]), ("primary", st["cell"]), ("12", st["cell"]),
             ("T-10", st["cell"]), ("A-100001", st["cell"]), ("12345", st["cell"]), ("6", st["cell"]),
             ("Four of a Kind", st["cell"]), ("$12,345.67", st["cell"])]] * 3  # fmt: skip
    for width in (520.0, 400.0):
        widths = RP.fit_widths([head, *rows], width)
        assert abs(sum(widths) - width) < 0.01
        for (text, style), w in zip(head, widths):
            assert w - 2 * RP.PAD >= max(stringWidth(x, style.fontName, style.fontSize) for x in text.split()), text


def test_provisional_and_page_n_of_m_on_every_page(tmp_path):
    keyfile = init_key(tmp_path / "key" / "ledger.key")
    led = Ledger(tmp_path / "s" / "ledger.sqlite3", "T-9", key=read_key(keyfile))  # the real clock: today
    led.append([*START_RECORDS, Record(Kind.METER_INIT, 0, {"level": "primary", "seed": 500000, "rate": "1/3"})])
    for n in range(1, 61):
        fixed = {"level": "primary", "cents": 300, "seat": n % 6 + 1, "hand": "straight"}
        led.append([Record(Kind.ROUND_OPEN, n, {}), Record(Kind.METER_FIXED_PAID, n, fixed),
                    Record(Kind.ROUND_COMPLETE, n, {})])  # fmt: skip
    led.close()
    conn = open_readonly(tmp_path / "s" / "ledger.sqlite3")
    try:
        rep = R.build(conn, R.gaming_day_of(datetime.now(UTC).isoformat(), tz=NY), tz=NY)
    finally:
        conn.close()
    (tmp_path / "p.pdf").write_bytes(RP.render(rep, NY))
    pages = [p for p in _pdftext(tmp_path / "p.pdf", tmp_path).split("\f") if p.strip()]
    assert len(pages) >= 2
    for i, page in enumerate(pages, 1):
        assert "PROVISIONAL" in page and f"Page {i} of {len(pages)}" in page, i
