"""The accounting report as a clerk reads it: plain-English labels, each with
the rule it answers to, money in dollars, and the same sections for the PDF
(controller/reports/reportpdf.py) and the CSV (:func:`to_csv`).

The words are the house's, the same in every output (the sim's summary, ``history``,
``status``, ``meters``, ``lap --reconcile``):

* a **progressive hit** is a winning Progressive Payout Wager paid from the progressive:
  a **meter hit** (a share of the meter, paid by an attendant once a floorperson has
  validated it) or a **fixed pay** (a fixed amount, paid by the dealer from the table
  inventory);
* counts are counts, money is dollars (``$1,234.56``), exact where a fraction of a cent is
  carried (``$1,000.33 + 1/3 of a cent``).

§ 605a.7(a) asks for four meters (the progressive meter, pays made directly by the table,
pays made by an attendant, the cumulative paid: (a)(1)-(4)); the others shown here are SPEC
§ 5's and the paytable's (seed/reset and increment rate).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from fractions import Fraction
from typing import Any

from controller.books import meters as M
from controller.core.money import format_cents, format_exact, format_rate
from controller.gamedefs import games
from controller.reports.report import FIXED_PAY, CoinIn, DayReport, LevelReport, _iso, local_zone
from controller.reports.words import hand_name, zone_name

# ---------------------------------------------------------------------- values

USD, EXACT, COUNT, RATE, CENT, TEXT = "USD", "USD exact", "count", "percent", "cent", "text"


@dataclass(frozen=True)
class V:
    """One value with its unit: shown as a person reads it (:meth:`shown`) or as a
    spreadsheet keeps it (:meth:`plain`)."""

    unit: str
    raw: Any

    def shown(self) -> str:
        if self.unit == USD:
            return format_cents(int(self.raw))
        if self.unit == EXACT:
            return exact_usd(Fraction(self.raw))
        if self.unit == COUNT:
            return f"{int(self.raw):,}"
        if self.unit == RATE:
            return percent(Fraction(self.raw))
        if self.unit == CENT:
            return cent_fraction(Fraction(self.raw))
        return str(self.raw)

    def plain(self) -> str:
        if self.unit == USD:
            return dollars(int(self.raw))
        if self.unit == EXACT:
            whole, rest = whole_and_rest(Fraction(self.raw))
            return dollars(whole) + (f" + {rest} cent" if rest else "")
        if self.unit == CENT:
            return str(Fraction(self.raw))
        if self.unit == RATE:
            return percent(Fraction(self.raw))
        return str(self.raw)


def dollars(cents: int) -> str:
    """Exact, for a spreadsheet: integer cents as dollars with two decimals, no ``$``, no separators."""
    sign = "-" if cents < 0 else ""
    c = abs(cents)
    return f"{sign}{c // 100}.{c % 100:02d}"


def whole_and_rest(x: Fraction) -> tuple[int, Fraction]:
    whole = x.numerator // x.denominator
    return whole, x - whole


def cent_fraction(x: Fraction) -> str:
    return "none" if x == 0 else f"{x} of a cent"


def exact_usd(x: Fraction) -> str:
    """``$1,000.33 + 1/3 of a cent``: the whole cents in dollars, the fraction carried below."""
    return format_exact(x)


def percent(rate: Fraction) -> str:
    """A rate as a percentage, exact (``3/200`` -> ``1.5%``; ``1/3`` -> ``33 1/3%``)."""
    return format_rate(rate)


def local_time(ts: str, tz: tzinfo | None = None) -> str:
    return datetime.fromisoformat(ts).astimezone(tz or local_zone()).strftime("%Y-%m-%d %H:%M:%S %Z")


def clock_time(ts: str, tz: tzinfo | None = None) -> str:
    """A time as a clerk files it: the date with its year, the time and the zone
    (``2026-07-04 22:00:00 EDT``; a gaming day spans two dates, a report outlives its year)."""
    return local_time(ts, tz)


# ---------------------------------------------------------------------- the rules cited


def paytable_section(rep: DayReport) -> str:
    """The progressive paytable's section, to the subsection (``§ 670a.12(d)``): seed and rate."""
    from controller.rules.paytables import all_paytables

    pt = all_paytables().get(rep.info.get("profile.progressive.paytable"))
    if pt is None:
        return "the Rules Submission"
    sec = pt.section
    cut = sec.find(")")
    return sec[: cut + 1] if cut > 0 else sec


def validation_notes(rep: DayReport) -> list[str]:
    """Why a meter hit has a validation and a fixed pay none recorded, in the game's own rules."""
    game = rep.info.get("profile.game")
    decl = games().get(game)
    # where the game's rules ask a floorperson to validate a progressive payout, and say that a
    # percentage-of-meter payout is not paid from the table inventory (58 Pa. Code)
    cite = decl.validation if decl is not None and decl.validation else None
    if game == "dj-wild":
        return [
            "Meter hits: the table holds the round until a floorperson validates the hit (key switch or console PIN) "
            "and records who did, as for every game with a share-of-the-meter pay.",
            "Fixed pays: paid by the dealer from the table inventory (§ 687a.11(f)(1)(ii), at the odds of "
            "§ 687a.12(c)); chapter 687a asks for no floorperson validation of a Progressive Bonus Wager.",
        ]
    if cite is None:
        return [
            "Meter hits: the table holds the round until a floorperson validates the hit (key switch or console "
            "PIN) and records who did.",
            f"Fixed pays: paid by the dealer from the table inventory; no validation is recorded by the table "
            f"(the game {game or '(not recorded)'} has no rule cited here: see its chapter).",
        ]
    validate, inventory = cite
    return [
        f"Meter hits: a share of the meter, not paid from the table inventory ({inventory}); the table holds the "
        f"round until a floorperson validates the hit ({validate}) and records who did.",
        f"Fixed pays: paid by the dealer from the table inventory at settlement; the table does not hold them for a "
        f"validation. A floorperson validates them under the casino's approved internal controls ({validate}), on "
        "paper: no name is recorded here.",
    ]


# ---------------------------------------------------------------------- sections


@dataclass
class Row:
    item: str  # a stable name (the CSV's ``item``)
    label: str  # plain English (the same in the PDF and the CSV)
    ref: str  # the rule the figure answers to, "" for none
    values: list[V]


@dataclass
class Section:
    key: str  # the CSV's ``section``
    title: str
    columns: list[str]  # headers of the value columns
    rows: list[Row] = field(default_factory=list)
    level: str = ""
    notes: list[str] = field(default_factory=list)
    table: str = ""  # the table the figures are of, when not the report's own (the LAP's per-table rows)


def _meter_rows(lv: LevelReport, seed_ref: str) -> list[Row]:
    def both(get: Any) -> list[Any]:
        return [get(lv.start) if lv.start is not None else None, get(lv.end)]

    def row(item: str, label: str, ref: str, unit: str, get: Any) -> Row:
        return Row(item, label, ref, [V(unit, x) if x is not None else V(TEXT, "-") for x in both(get)])

    rows = [
        row("meter_shown", "Progressive meter, as shown to players", "§ 605a.7(a)(1)", USD, lambda m: m.cents),
        row("remainder", "Fraction of a cent carried (hidden remainder)", "SPEC § 5", CENT, lambda m: m.remainder),
        row("paid_table", "Progressive pays made by the table", "§ 605a.7(a)(2)", USD, lambda m: m.paid_table),
        row(
            "paid_attendant", "Progressive pays made by an attendant", "§ 605a.7(a)(3)", USD, lambda m: m.paid_attendant
        ),
        row("paid_cumulative", "Cumulative progressive paid", "§ 605a.7(a)(4)", USD, lambda m: m.paid_total),
        row("meter_hits", "Meter hits (share of the meter, attendant)", "SPEC § 5", COUNT, lambda m: m.hits),
        row("fixed_pays", "Fixed pays (from the table inventory)", "SPEC § 5", COUNT, lambda m: m.fixed_hits),
        row("seed", "Seed / reset amount", seed_ref, USD, lambda m: m.seed_cents),
        row("rate", "Increment rate (share of each wager to the meter)", seed_ref, RATE, lambda m: m.rate),
        row(
            "contributions", "Contributions credited, since the level began", "SPEC § 5", EXACT, lambda m: m.increments
        ),
        row(
            "contribution_count",
            "Wagers contributing, since the level began",
            "SPEC § 5",
            COUNT,
            lambda m: m.increment_count,
        ),
        row("reseeds", "Reseeds added after a 100% meter hit", seed_ref, USD, lambda m: m.reseeds),
        row("voided", "Contributions taken back by voided rounds", "SPEC § 4", EXACT, lambda m: m.voided),
    ]
    if lv.end.reserve_rate or lv.end.reserve or lv.end.reserve_moved:
        rows += [
            row(
                "reserve_rate",
                "Reserve rate (share of each wager to the reserve)",
                seed_ref,
                RATE,
                lambda m: m.reserve_rate,
            ),
            row("reserve", "Hidden reserve (funds the next reset)", seed_ref, EXACT, lambda m: m.reserve),
        ]
    return rows


def meter_section(rep: DayReport, lv: LevelReport, tz: tzinfo | None) -> Section:
    first = "Start of day"
    notes = []
    if lv.born_ts:
        first = f"Created {clock_time(lv.born_ts, tz)}"
        notes.append(
            f"Level {lv.level} was created during the day (event #{lv.born_seq}, {local_time(lv.born_ts, tz)}): "
            "the first column is the meter as created, at its seed."
        )
    return Section(
        "meter",
        f"Progressive meters - level {lv.level}",
        [first, "End of day"],
        _meter_rows(lv, paytable_section(rep)),
        lv.level,
        notes,
    )


#: the roll-forward's rows (CSV ``item``, label), the same in the table's report and the LAP's
ROLL_FORWARD = {
    "start": "Meter at the start of the gaming day",
    "contributions": "add: contributions credited (wager × rate)",
    "voided": "less: contributions taken back by voided rounds",
    "hits": "less: meter hits (paid from the meter)",
    "reseeds": "add: reseeds after 100% meter hits",
    "reserve_moved": "add: hidden reserve moved into the meter at a reset",
    "end": "Meter at the end of the gaming day (the sum)",
    "recorded": "Meter at the end of the gaming day, as recorded",
    "check": "Start + contributions - voids - hits + reseeds = end",
}


def roll_forward(
    figures: list[tuple[str, Fraction]], end: Fraction, recorded: Fraction, recorded_label: str = ""
) -> tuple[list[Row], bool]:
    """The roll-forward's rows from its figures ((item of :data:`ROLL_FORWARD`, amount), the start
    first; a figure is added or taken by its label's sign), the end they sum to and the end as
    recorded; and whether they agree, exactly."""
    rows = [Row(f"rollforward_{k}", ROLL_FORWARD[k], "", [V(EXACT, x)]) for k, x in figures]
    agrees = end == recorded
    check = (
        "agrees, exactly"
        if agrees
        else f"DOES NOT AGREE: the figures give {exact_usd(end)}, the meter {exact_usd(recorded)}"
    )
    rows += [
        Row("rollforward_end", ROLL_FORWARD["end"], "", [V(EXACT, end)]),
        Row("rollforward_recorded", recorded_label or ROLL_FORWARD["recorded"], "", [V(EXACT, recorded)]),
        Row("rollforward_check", ROLL_FORWARD["check"], "", [V(TEXT, check)]),
    ]
    return rows, agrees


def roll_forward_section(rep: DayReport, lv: LevelReport, tz: tzinfo | None) -> Section:
    """The meter's roll-forward over the day, the first thing a clerk checks: the meter at the
    start, plus what was credited, less what voids took back and the meter hits paid, plus the
    reseeds, is the meter at the end, exactly (every figure replayed from the ledger's events)."""
    end = lv.end
    start = lv.start or M.Meter(lv.level, end.seed_cents, end.rate, Fraction(0))

    def delta(attr: str) -> Fraction:
        return Fraction(getattr(end, attr)) - Fraction(getattr(start, attr))

    figures = [
        ("start", start.value),
        ("contributions", delta("increments")),
        ("voided", delta("voided")),
        ("hits", delta("paid_attendant")),
        ("reseeds", delta("reseeds")),
    ]
    moved = delta("reserve_moved")
    if moved or end.reserve_rate:
        figures.append(("reserve_moved", moved))
    total = figures[0][1] + figures[1][1] - figures[2][1] - figures[3][1] + figures[4][1] + moved
    rows, _ok = roll_forward(figures, total, end.value)
    notes = [
        "Exact, in dollars and the fraction of a cent carried. Fixed pays are paid from the table "
        "inventory: they do not move the meter."
    ]
    if lv.born_ts:
        created = f"Meter as created {clock_time(lv.born_ts, tz)}"
        rows[0] = Row("rollforward_start", created, "", [V(EXACT, start.value)])
    return Section("rollforward", f"Roll-forward - level {lv.level}", ["Amount"], rows, lv.level, notes)


def coin_in_section(rep: DayReport, level: str, tz: tzinfo | None) -> Section:
    ci = rep.coin_in.get(level) or CoinIn()
    lv = next((x for x in rep.levels if x.level == level), None)
    rows = [
        Row("wagers_counted", "Progressive wagers counted", "", [V(COUNT, ci.wagers), V(USD, ci.cents)]),
        Row("wagers_voided", "Taken back by voided rounds", "", [V(COUNT, ci.voided_wagers), V(USD, ci.voided_cents)]),
        Row("coin_in", "Progressive coin-in", "", [V(COUNT, ci.net_wagers), V(USD, ci.net_cents)]),
    ]
    notes = ["Wagers are counted when the dealer confirms the count after the lock-out, and only then credited."]
    if lv is None:
        group = rep.linked or "its group"
        notes.append(
            f"This table's progressive is linked ({group}): the meter and its contributions are the LAP's "
            "(`tablectl lap --reconcile` checks contributions = rate × wagers there)."
        )
        return Section("coin_in", f"Progressive coin-in - level {level}", ["Wagers", "Amount"], rows, level, notes)
    rows += [
        Row(
            "contributions_day",
            "Contributions credited in the day",
            "",
            [V(COUNT, lv.contribution_count), V(EXACT, lv.contributions)],
        ),
        Row("voided_day", "Contributions taken back by voids", "", [V(TEXT, ""), V(EXACT, lv.voided)]),
        Row("net_contributions", "Net contributions", "", [V(TEXT, ""), V(EXACT, lv.net_contributions)]),
    ]
    for rate, cents in sorted(ci.by_rate.items()):
        rows.append(
            Row(
                "rate_x_wagers",
                f"{format_cents(cents)} × {percent(rate)}",
                paytable_section(rep),
                [V(RATE, rate), V(EXACT, rate * cents)],
            )
        )
    rows.append(Row("check", "Contributions = rate × wagers", "", [V(TEXT, ""), V(TEXT, _check_text(rep, lv))]))
    return Section(
        "coin_in", f"Progressive coin-in and contributions - level {level}", ["Wagers", "Amount"], rows, level, notes
    )


def _check_text(rep: DayReport, lv: LevelReport) -> str:
    problems = []
    if lv.net_contributions != lv.coin_in.expected:
        problems.append(
            f"the meter has {exact_usd(lv.net_contributions)}, rate × wagers {exact_usd(lv.coin_in.expected)}"
        )
    if lv.contribution_count != lv.coin_in.wagers:
        problems.append(f"{lv.contribution_count} contributions for {lv.coin_in.wagers} wagers")
    configured = rep.info.get("profile.progressive.increment_rate")
    if configured and any(rate != Fraction(configured) for rate in lv.coin_in.by_rate):
        problems.append(f"a rate other than the configured {percent(Fraction(configured))}")
    return "agrees, exactly" if not problems else "DOES NOT AGREE: " + "; ".join(problems)


HIT_COLUMNS = ["Time", "Round", "Seat", "Hand", "Kind", "Paid by", "Amount", "Validated by"]


def hits_section(rep: DayReport, tz: tzinfo | None) -> Section:
    rows = []
    for h in rep.hits:
        kind = h.kind + (f", {percent(Fraction(h.fraction))} of the meter" if h.fraction else "")
        by = h.validated_by or ("(note 2)" if h.kind == FIXED_PAY else "NOT RECORDED")
        who = "attendant" if h.paid_by == "attendant" else "table"
        rows.append(
            Row(
                "hit",
                h.kind,
                "",
                [
                    V(TEXT, clock_time(h.ts, tz)),
                    V(TEXT, h.round),
                    V(TEXT, h.seat),
                    V(TEXT, hand_name(h.hand)),
                    V(TEXT, kind),
                    V(TEXT, who),
                    V(USD, h.cents),
                    V(TEXT, by),
                ],
            )
        )
    notes = [f"Note {i}. {n}" for i, n in enumerate(validation_notes(rep), 1)]
    notes.append("Fixed pays are the amount handed to the player, the progressive wager included (paytables 'for 1').")
    return Section("hit", "Progressive hits (meter hits and fixed pays)", HIT_COLUMNS, rows, "", notes)


def hit_totals_section(rep: DayReport) -> Section:
    meter, fixed = rep.hits_of("attendant"), rep.hits_of("table")
    return Section(
        "hit_totals",
        "Progressive hits - totals",
        ["Hits", "Paid"],
        [
            Row(
                "meter_hits",
                "Meter hits, paid by an attendant",
                "§ 605a.7(a)(3)",
                [V(COUNT, len(meter)), V(USD, rep.hits_total("attendant"))],
            ),
            Row(
                "fixed_pays",
                "Fixed pays, paid by the table",
                "§ 605a.7(a)(2)",
                [V(COUNT, len(fixed)), V(USD, rep.hits_total("table"))],
            ),
            Row("hits", "All progressive hits", "§ 605a.7(a)(4)", [V(COUNT, len(rep.hits)), V(USD, rep.hits_total())]),
        ],
    )


def play_section(rep: DayReport, tz: tzinfo | None) -> Section:
    a = rep.activity
    still = ", ".join(f"{n} (opened {clock_time(ts, tz)})" for n, ts in sorted(a.open_rounds.items())) or "none"
    rows = [
        Row("rounds_played", "Rounds played (completed or voided)", "", [V(COUNT, a.played)]),
        Row("rounds_completed", "Rounds completed", "", [V(COUNT, a.completed)]),
        Row("rounds_voided", "Rounds voided", "", [V(COUNT, a.voided)]),
        Row("rounds_opened", "Rounds opened for wagers", "", [V(COUNT, a.opened)]),
        Row("rounds_open", "Rounds still open at the end", "", [V(TEXT, still)]),
        Row("wagers", "Wagers accepted (every spot)", "", [V(COUNT, a.wagers)]),
        Row("wagered", "Amount wagered (every spot)", "", [V(USD, a.wagered_cents)]),
        Row("refused_late", "Late wagers refused (after the lock-out)", "", [V(COUNT, a.refused_late)]),
        Row("refused_other", "Other wagers refused", "", [V(COUNT, a.refused_other)]),
        Row("paid", "Paid to players", "", [V(USD, a.paid_cents)]),
        Row("paid_won", "  of which winnings paid by the table", "", [V(USD, a.won_cents)]),
        Row("paid_meter", "  of which meter hits (attendant)", "", [V(USD, a.meter_paid_cents)]),
        Row("paid_returned", "  of which wagers returned with a win or push", "", [V(USD, a.returned_cents)]),
        Row("void_returned", "Wagers returned by voided rounds", "", [V(COUNT, a.void_returned)]),
        Row("void_returned_amount", "Amount returned by voided rounds", "", [V(USD, a.void_returned_cents)]),
    ]
    notes = []
    if a.open_rounds:
        notes.append(
            "A round still open at the end was opened for wagers and had not ended when the day's records end: "
            "it is counted as opened, not as played."
        )
    return Section("play", "Table play", ["Value"], rows, "", notes)


def voids_section(rep: DayReport, tz: tzinfo | None) -> Section:
    rows = [
        Row("void", "Round voided", "", [V(TEXT, clock_time(v["ts"], tz)), V(TEXT, v["round"]), V(TEXT, v["reason"])])
        for v in rep.voids
    ]
    return Section("void", f"Voided rounds ({len(rep.voids)})", ["Time", "Round", "Reason"], rows)


def faults_section(rep: DayReport, tz: tzinfo | None) -> Section:
    rows = [
        Row(
            "fault",
            f"Tilt {f['what']}",
            "",
            [V(TEXT, clock_time(f["ts"], tz)), V(TEXT, f["what"]), V(TEXT, f["source"]), V(TEXT, f["reason"])],
        )
        for f in rep.faults
    ]
    raised = sum(1 for f in rep.faults if f["what"] == "raised")
    return Section("fault", f"Faults ({raised} raised)", ["Time", "What", "Device", "Reason / by"], rows)


def sections(rep: DayReport, tz: tzinfo | None = None) -> list[Section]:
    """Every section of the report, in the order printed."""
    out = []
    for lv in rep.levels:
        out += [roll_forward_section(rep, lv, tz), meter_section(rep, lv, tz)]
    for level in sorted({*rep.coin_in, *(lv.level for lv in rep.levels)}):
        out.append(coin_in_section(rep, level, tz))
    out += [hits_section(rep, tz), hit_totals_section(rep), play_section(rep, tz)]
    out += [voids_section(rep, tz), faults_section(rep, tz)]
    return out


# ---------------------------------------------------------------------- who, what, when


def software_line(rep: DayReport) -> str:
    i = rep.info
    if not i.version:
        return "not recorded (no power-up record before the day's end)"
    digest = i.digest or "not computed"
    if i.recorded_digest and i.digest and i.recorded_digest == i.digest:
        check = "matches the digest recorded at installation"
    elif i.recorded_digest:
        check = f"recorded at installation: {i.recorded_digest}"
    else:
        check = f"installation record: {i.software_check or 'none'}"
    return f"tablectl {i.version}, SHA-256 {digest} ({check})"


def identity(rep: DayReport, generated: datetime, tz: tzinfo | None = None) -> list[tuple[str, str]]:
    """(label, value) of the header: who, where, what, when."""
    from controller import __version__

    def cfg(key: str, option: str) -> str:
        return rep.info.get(key) or f"not set ([table] {option} in the hardware file)"

    i = rep.info
    paytable = i.get("profile.progressive.paytable")
    begins = (
        [("Records of the day", f"none: the ledger begins {local_time(rep.ledger_begins, tz)}, after this day")]
        if rep.ledger_begins
        else []
    )
    return [
        ("Casino", cfg("casino", "casino")),
        ("Table", rep.table_id or "(no events)"),
        *begins,
        ("Asset number", cfg("asset", "asset")),
        ("Location", cfg("location", "location")),
        ("Game", i.get("profile.name") or i.get("profile.game") or "not recorded"),
        (
            "Progressive paytable",
            (f"{paytable} ({paytable_section(rep)})" if paytable else "none")
            + (f"; linked group {rep.linked}" if rep.linked else ""),
        ),
        (
            "Gaming day",
            f"{rep.day.isoformat()}: {local_time(_iso(rep.start_utc), tz)} to {local_time(_iso(rep.end_utc), tz)}",
        ),
        ("Time zone", zone_name(tz, rep.start_utc)),
        ("Generated", f"{local_time(_iso(generated), tz)} by tablectl {__version__}"),
        ("Software that recorded the day", software_line(rep)),
        (
            "Configuration in effect",
            (f"SHA-256 {i.config_digest}, loaded {local_time(i.config_ts, tz)}" if i.config_ts else "not recorded"),
        ),
        ("Chain head at the day's end", head_line(rep, tz)),
    ]


def head_line(rep: DayReport, tz: tzinfo | None = None) -> str:
    when = f" at {local_time(rep.head_ts, tz)}" if rep.head_ts else ""
    return f"event #{rep.head.count}{when}, MAC {rep.head.mac}"


PROVISIONAL = "PROVISIONAL \u2014 the gaming day has not ended"


# ---------------------------------------------------------------------- CSV


def to_csv(rep: DayReport, tz: tzinfo | None = None, generated: datetime | None = None) -> str:
    """One CSV for spreadsheets (controller/reports/reportcsv.py: the LAP's report has the same
    layout): one row per figure, with the PDF's labels and the rule each answers to."""
    from controller.reports import reportcsv

    return reportcsv.day_csv(rep, tz, generated)
