"""``tablectl lap --report [--day D] [--format csv|pdf]``: the LAP's accounting report of a gaming day.

The progressive controller's own record, as the linked-progressive rules ask of it
(N.J.A.C. 13:69E-1.39A(b); 9 NYCRR 5320.8(b)), laid out as the table's report is
(controller/reports/reportview.py: the same sections, labels and CSV layout, so that a clerk ties
each table's report to its row here):

* who, where, when: the casino (``[link] casino`` in lap.toml), the group, the gaming day (06:00
  to 06:00, the LAP server's local time, as the floor view) and its time zone, when made;
* per level, its **roll-forward** over the day, checked: the level's fund (the meter with its
  hidden reserve and overflow) at the start, plus the contributions, less the voids and the hits,
  plus the reseeds, is the fund at the end — against the LAP's own accounts at the end of the day
  (its running accounts less what came after), exactly; then its progressive coin-in and the
  check that the contributions are wager × the rates of their version, and its parameters and
  meters now;
* **per table**, the day's progressive wagers, coin-in, contributions, voids, hits decided and
  hits paid (what the table's own report shows as its coin-in and its meter hits);
* the last 25 hits up to the end of the day (winning table, asset, seat, hand, amount, the hit's
  order and its validation);
* signature lines.

Every figure is read from the LAP's records in one transaction (REPEATABLE READ: one picture);
money is in exact cents (a fraction of a cent carried shows as such).  The times of the LAP's
records are its own (``at``, ``decided_at``: when it applied them), so a record a table sent
late counts in the day the LAP received it.  The CSV needs nothing beyond the standard library;
the PDF is drawn with reportlab (the ``report`` extra: controller/lap/lapreportpdf.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from fractions import Fraction
from typing import Any

from controller.core.money import format_exact
from controller.reports.reportview import (
    CENT,
    COUNT,
    EXACT,
    RATE,
    TEXT,
    USD,
    Row,
    Section,
    V,
    exact_usd,
    percent,
    roll_forward,
)
from controller.reports.words import game_title, hand_name, zone_name

LAST_HITS = 25

# the sums of a level's records in [a, b) (each its own clock: applied, decided)
_LEVEL_SUMS = (
    "SELECT l.level,"
    " (SELECT count(*) FROM {s}.contributions c WHERE c.level = l.level AND c.at >= %(a)s AND c.at < %(b)s) AS n,"
    " (SELECT coalesce(sum(c.wager_cents), 0) FROM {s}.contributions c"
    "   WHERE c.level = l.level AND c.at >= %(a)s AND c.at < %(b)s) AS wagered,"
    " (SELECT coalesce(sum((c.to_meter + c.to_reserve + c.to_overflow) / c.den), 0) FROM {s}.contributions c"
    "   WHERE c.level = l.level AND c.at >= %(a)s AND c.at < %(b)s) AS contributed,"
    " (SELECT coalesce(sum(c.wager_cents::numeric * (c.rate_num * (c.den / c.rate_den)"
    "   + c.reserve_num * (c.den / c.reserve_den)) / c.den), 0) FROM {s}.contributions c"
    "   WHERE c.level = l.level AND c.at >= %(a)s AND c.at < %(b)s) AS priced,"
    " (SELECT count(*) FROM {s}.voids v WHERE v.level = l.level AND v.at >= %(a)s AND v.at < %(b)s) AS voids,"
    " (SELECT coalesce(sum(c.wager_cents), 0) FROM {s}.voids v JOIN {s}.contributions c"
    "   ON c.table_id = v.table_id AND c.seq = v.of_seq"
    "   WHERE v.level = l.level AND v.at >= %(a)s AND v.at < %(b)s) AS voided_wagers,"
    " (SELECT coalesce(sum(v.amount / v.den), 0) FROM {s}.voids v"
    "   WHERE v.level = l.level AND v.at >= %(a)s AND v.at < %(b)s) AS voided,"
    " (SELECT count(*) FROM {s}.hits h WHERE h.level = l.level AND h.decided_at >= %(a)s"
    "   AND h.decided_at < %(b)s) AS hits,"
    " (SELECT coalesce(sum(h.amount_cents), 0) FROM {s}.hits h WHERE h.level = l.level"
    "   AND h.decided_at >= %(a)s AND h.decided_at < %(b)s) AS won,"
    " (SELECT coalesce(sum(r.reset_cents), 0) FROM {s}.reseeds r JOIN {s}.hits h USING (level, order_no)"
    "   WHERE r.level = l.level AND h.decided_at >= %(a)s AND h.decided_at < %(b)s) AS reset,"
    " (SELECT count(*) FROM {s}.payouts p JOIN {s}.hits h ON h.table_id = p.table_id AND h.seq = p.hit_seq"
    "   WHERE h.level = l.level AND p.at >= %(a)s AND p.at < %(b)s) AS paid_n,"
    " (SELECT coalesce(sum(p.cents), 0) FROM {s}.payouts p JOIN {s}.hits h"
    "   ON h.table_id = p.table_id AND h.seq = p.hit_seq"
    "   WHERE h.level = l.level AND p.at >= %(a)s AND p.at < %(b)s) AS paid"
    " FROM {s}.levels l ORDER BY l.level"
)
# each member table's records in [a, b)
_TABLE_SUMS = (
    "SELECT m.table_id, m.asset, m.game,"
    " (SELECT count(*) FROM {s}.contributions c WHERE c.table_id = m.table_id AND c.at >= %(a)s"
    "   AND c.at < %(b)s) AS n,"
    " (SELECT coalesce(sum(c.wager_cents), 0) FROM {s}.contributions c WHERE c.table_id = m.table_id"
    "   AND c.at >= %(a)s AND c.at < %(b)s) AS wagered,"
    " (SELECT coalesce(sum((c.to_meter + c.to_reserve + c.to_overflow) / c.den), 0) FROM {s}.contributions c"
    "   WHERE c.table_id = m.table_id AND c.at >= %(a)s AND c.at < %(b)s) AS contributed,"
    " (SELECT count(*) FROM {s}.voids v WHERE v.table_id = m.table_id AND v.at >= %(a)s AND v.at < %(b)s) AS voids,"
    " (SELECT coalesce(sum(c.wager_cents), 0) FROM {s}.voids v JOIN {s}.contributions c"
    "   ON c.table_id = v.table_id AND c.seq = v.of_seq"
    "   WHERE v.table_id = m.table_id AND v.at >= %(a)s AND v.at < %(b)s) AS voided_wagers,"
    " (SELECT coalesce(sum(v.amount / v.den), 0) FROM {s}.voids v"
    "   WHERE v.table_id = m.table_id AND v.at >= %(a)s AND v.at < %(b)s) AS voided,"
    " (SELECT count(*) FROM {s}.hits h WHERE h.table_id = m.table_id AND h.decided_at >= %(a)s"
    "   AND h.decided_at < %(b)s) AS hits,"
    " (SELECT coalesce(sum(h.amount_cents), 0) FROM {s}.hits h WHERE h.table_id = m.table_id"
    "   AND h.decided_at >= %(a)s AND h.decided_at < %(b)s) AS won,"
    " (SELECT count(*) FROM {s}.payouts p WHERE p.table_id = m.table_id AND p.at >= %(a)s AND p.at < %(b)s)"
    "   AS paid_n,"
    " (SELECT coalesce(sum(p.cents), 0) FROM {s}.payouts p WHERE p.table_id = m.table_id AND p.at >= %(a)s"
    "   AND p.at < %(b)s) AS paid"
    " FROM {s}.members m ORDER BY m.table_id"
)
_LEVEL_ALL = (
    "SELECT l.*,"
    " (SELECT count(*) FROM {s}.contributions c WHERE c.level = l.level) AS n_all,"
    " (SELECT coalesce(sum(c.wager_cents), 0) FROM {s}.contributions c WHERE c.level = l.level) AS coin_in_all,"
    " (SELECT coalesce(sum(p.cents), 0) FROM {s}.payouts p JOIN {s}.hits h"
    "   ON h.table_id = p.table_id AND h.seq = p.hit_seq WHERE h.level = l.level) AS paid_all,"
    " (SELECT coalesce(sum(h.amount_cents), 0) FROM {s}.hits h WHERE h.level = l.level) AS won_all"
    " FROM {s}.levels l ORDER BY l.level"
)
_HITS = (
    "SELECT h.level, h.order_no, h.table_id, m.asset, h.seat, h.round_no, h.hand, h.amount_cents, h.decided_at,"
    " p.cents AS paid_cents, p.at AS paid_at, e.data ->> 'by' AS paid_by"
    " FROM {s}.hits h LEFT JOIN {s}.members m ON m.table_id = h.table_id"
    " LEFT JOIN {s}.payouts p ON p.table_id = h.table_id AND p.hit_seq = h.seq"
    " LEFT JOIN {s}.events e ON e.table_id = p.table_id AND e.seq = p.seq AND e.kind = 'paid'"
    " WHERE h.decided_at < %(b)s ORDER BY h.decided_at DESC, h.level, h.order_no DESC LIMIT %(n)s"
)


@dataclass(frozen=True)
class Sums:
    """A level's or a table's records in a span of time (counts; cents exact)."""

    contributions: int = 0
    wagered: int = 0  # cents wagered by the contributions
    contributed: Fraction = Fraction(0)  # to the meter, the reserve and the overflow
    priced: Fraction = Fraction(0)  # Σ wager × the rates of each contribution's version
    voids: int = 0
    voided_wagers: int = 0  # the voided contributions' wagers, cents
    voided: Fraction = Fraction(0)  # what the voids took back
    hits: int = 0
    won: int = 0  # the hits' amounts (decided)
    reset: int = 0  # the resets after 100 % hits
    paid_n: int = 0
    paid: int = 0

    @property
    def coin_in(self) -> int:
        return self.wagered - self.voided_wagers


def _sums(r: dict[str, Any]) -> Sums:
    f = Fraction
    return Sums(
        int(r["n"]),
        int(r["wagered"]),
        f(r["contributed"]),
        f(r.get("priced") or 0),
        int(r["voids"]),
        int(r["voided_wagers"]),
        f(r["voided"]),
        int(r["hits"]),
        int(r["won"]),
        int(r.get("reset") or 0),
        int(r["paid_n"]),
        int(r["paid"]),
    )


@dataclass(frozen=True)
class LevelDay:
    level: str
    params: dict[str, Any]  # the level's row (parameters and accounts now) with its totals since it began
    before: Sums  # every record before the day
    day: Sums
    after: Sums  # every record after the day (none while it runs)

    @property
    def den(self) -> int:
        return int(self.params["den"])

    def _acc(self, k: str) -> Fraction:
        return Fraction(int(self.params[k]), self.den)

    @property
    def meter(self) -> Fraction:
        return self._acc("value_num")

    @property
    def reserve(self) -> Fraction:
        return self._acc("reserve_acc")

    @property
    def overflow(self) -> Fraction:
        return self._acc("overflow_acc")

    @property
    def start(self) -> Fraction:
        """The fund (meter, reserve, overflow) at the day's start, from the records before it:
        seed + resets + contributions − voids − hits (the LAP's identity, docs/linked.md)."""
        b = self.before
        return int(self.params["seed_cents"]) + b.reset + b.contributed - b.voided - b.won

    @property
    def recorded_end(self) -> Fraction:
        """The fund at the day's end by the LAP's running accounts: now, less what came after."""
        a = self.after
        return self.meter + self.reserve + self.overflow - a.contributed + a.voided + a.won - a.reset


@dataclass(frozen=True)
class MemberDay:
    table: str
    asset: str
    game: str
    day: Sums


@dataclass(frozen=True)
class HitLine:
    level: str
    order: int
    table: str
    asset: str
    seat: int
    round_no: int
    hand: str
    amount_cents: int
    decided_at: datetime
    paid_cents: int | None
    paid_at: datetime | None
    paid_by: str | None

    @property
    def validation(self) -> str:
        if self.paid_at is None:
            return "awaiting floor validation"
        by = f" by {self.paid_by}" if self.paid_by else ""
        return f"validated{by}, paid {cents(self.paid_cents or 0)} at {stamp(self.paid_at)}"


@dataclass
class LapReport:
    group: str
    schema: str
    day: date
    start: datetime
    end: datetime
    made_at: datetime
    state: str
    casino: str = ""
    levels: list[LevelDay] = field(default_factory=list)
    tables: list[MemberDay] = field(default_factory=list)
    hits: list[HitLine] = field(default_factory=list)

    @property
    def provisional(self) -> bool:
        return self.made_at < self.end


def cents(v: int | Fraction) -> str:
    return format_exact(Fraction(v))


def stamp(t: datetime) -> str:
    """A time as the report prints it: date with year, time, zone (the LAP server's)."""
    return t.astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")


def read(store: Any, group: str, day: date, casino: str = "") -> LapReport:
    """The report of gaming day ``day`` from the LAP's schema (one REPEATABLE READ picture)."""
    import psycopg

    from controller.lap.floor import gaming_day_of

    start, end = gaming_day_of(day)
    conn = store.conn
    was = conn.isolation_level
    conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    try:
        with conn.transaction():
            made = conn.execute("SELECT clock_timestamp()").fetchone()[0]
            state = store.state()
            sums = {k: _level_sums(store, a, b) for k, (a, b) in _spans(start, end).items()}
            levels = [
                LevelDay(r["level"], r, sums["before"][r["level"]], sums["day"][r["level"]], sums["after"][r["level"]])
                for r in store._rows(_LEVEL_ALL)
            ]
            tables = [
                MemberDay(r["table_id"], r["asset"] or "", r["game"] or "", _sums(r))
                for r in store._rows(_TABLE_SUMS, {"a": start, "b": end})
            ]
            hits = [HitLine(**_hit(r)) for r in store._rows(_HITS, {"b": end, "n": LAST_HITS})]
    finally:
        conn.isolation_level = was
    return LapReport(group, store.schema, day, start, end, made, state, casino, levels, tables, hits)


def _spans(start: datetime, end: datetime) -> dict[str, tuple[datetime, datetime]]:
    """Before the day, the day, after it (the LAP's records are all after 1970)."""
    return {"before": (_EPOCH, start), "day": (start, end), "after": (end, _FAR)}


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_FAR = datetime(9999, 1, 1, tzinfo=UTC)


def _level_sums(store: Any, a: datetime, b: datetime) -> dict[str, Sums]:
    return {r["level"]: _sums(r) for r in store._rows(_LEVEL_SUMS, {"a": a, "b": b})}


def _hit(r: dict[str, Any]) -> dict[str, Any]:
    return {
        "level": r["level"],
        "order": int(r["order_no"]),
        "table": r["table_id"],
        "asset": r["asset"] or "",
        "seat": int(r["seat"]),
        "round_no": int(r["round_no"]),
        "hand": r["hand"],
        "amount_cents": int(r["amount_cents"]),
        "decided_at": r["decided_at"],
        "paid_cents": None if r["paid_cents"] is None else int(r["paid_cents"]),
        "paid_at": r["paid_at"],
        "paid_by": r["paid_by"],
    }


# ---------------------------------------------------------------- the content, shared by CSV and PDF
def heading(r: LapReport) -> list[tuple[str, str]]:
    """(label, value) of the header: who, where, what, when."""
    from controller import __version__

    return [
        ("Casino", r.casino or "not set ([link] casino in lap.toml)"),
        ("Linked group", r.group),
        ("LAP schema", r.schema),
        ("Member tables", ", ".join(t.table for t in r.tables) or "none"),
        ("Gaming day", f"{r.day.isoformat()}: {stamp(r.start)} to {stamp(r.end)}"),
        ("Time zone", zone_name(None, r.start) + ": the LAP server's"),
        ("Generated", f"{stamp(r.made_at)} by tablectl {__version__}"),
        ("Link state", r.state),
    ]


def roll_forward_section(lv: LevelDay, r: LapReport) -> Section:
    d = lv.day
    figures = [
        ("start", lv.start),
        ("contributions", d.contributed),
        ("voided", d.voided),
        ("hits", Fraction(d.won)),
        ("reseeds", Fraction(d.reset)),
    ]
    end = lv.start + d.contributed - d.voided - d.won + d.reset
    rows, _ok = roll_forward(figures, end, lv.recorded_end, "The LAP's accounts at the end of the gaming day")
    notes = [
        "The meter here is the level's whole fund: the meter shown, its hidden reserve and its overflow. "
        "The start is from the LAP's records before the day (seed + resets + contributions - voids - hits); the "
        "accounts at the end are its running accounts less what came after the day."
    ]
    if r.provisional:
        notes.append(
            f"Now: meter {exact_usd(lv.meter)}, hidden reserve {exact_usd(lv.reserve)}, overflow "
            f"{exact_usd(lv.overflow)}."
        )
    return Section("rollforward", f"Roll-forward - level {lv.level}", ["Amount"], rows, lv.level, notes)


def coin_in_section(lv: LevelDay) -> Section:
    d = lv.day
    check = (
        "agrees, exactly"
        if d.contributed == d.priced
        else f"DOES NOT AGREE: credited {exact_usd(d.contributed)}, wagers × rates {exact_usd(d.priced)}"
    )
    rows = [
        Row("wagers_counted", "Progressive wagers counted", "", [V(COUNT, d.contributions), V(USD, d.wagered)]),
        Row("wagers_voided", "Taken back by voided rounds", "", [V(COUNT, d.voids), V(USD, d.voided_wagers)]),
        Row("coin_in", "Progressive coin-in", "", [V(COUNT, d.contributions - d.voids), V(USD, d.coin_in)]),
        Row(
            "contributions_day",
            "Contributions credited in the day",
            "",
            [V(COUNT, d.contributions), V(EXACT, d.contributed)],
        ),
        Row("voided_day", "Contributions taken back by voids", "", [V(TEXT, ""), V(EXACT, d.voided)]),
        Row("net_contributions", "Net contributions", "", [V(TEXT, ""), V(EXACT, d.contributed - d.voided)]),
        Row("check", "Contributions = rate × wagers", "", [V(TEXT, ""), V(TEXT, check)]),
    ]
    notes = ["Contributions go to the meter, the hidden reserve and (above the limit) the overflow, each "
             "at the rates of the version the table took the wager under."]  # fmt: skip
    return Section("coin_in", f"Progressive coin-in and contributions - level {lv.level}", ["Wagers", "Amount"], rows,
                   lv.level, notes)  # fmt: skip


def level_section(lv: LevelDay) -> Section:
    p = lv.params
    rate = Fraction(int(p["rate_num"]), int(p["rate_den"]))
    reserve = Fraction(int(p["reserve_num"]), int(p["reserve_den"]))
    limit = p["limit_cents"]
    pays = ", ".join(percent(Fraction(x)) for x in p["meter_pays"])
    rows = [
        Row("meter_shown", "Progressive meter, as shown to players", "§ 605a.7(a)(1)", [V(USD, math.floor(lv.meter))]),
        Row(
            "remainder",
            "Fraction of a cent carried (hidden remainder)",
            "SPEC § 5",
            [V(CENT, lv.meter - math.floor(lv.meter))],
        ),
        Row("reserve", "Hidden reserve (funds the next reset)", "", [V(EXACT, lv.reserve)]),
        Row("overflow", "Overflow (above the limit)", "", [V(EXACT, lv.overflow)]),
        Row("seed", "Seed", "", [V(USD, int(p["seed_cents"]))]),
        Row("reset", "Reset after a 100% meter hit", "", [V(USD, int(p["reset_cents"]))]),
        Row("rate", "Increment rate (share of each wager to the meter)", "", [V(RATE, rate)]),
        Row("reserve_rate", "Reserve rate (share of each wager to the reserve)", "", [V(RATE, reserve)]),
        Row("rate_version", "Rate version", "", [V(COUNT, int(p["rate_version"]))]),
        Row("limit", "Limit", "", [V(USD, int(limit)) if limit is not None else V(TEXT, "none")]),
        Row(
            "max_wager",
            "Largest progressive wager taken",
            "N.J.A.C. 13:69E-1.39A(a)",
            [V(USD, int(p["max_wager_cents"]))],
        ),
        Row("meter_pays", "Percentage-of-meter pays", "", [V(TEXT, pays)]),
        Row("contribution_count", "Wagers contributing, since the level began", "", [V(COUNT, int(p["n_all"]))]),
        Row("coin_in_all", "Progressive coin-in, since the level began", "", [V(USD, int(p["coin_in_all"]))]),
        Row("meter_hits", "Meter hits, since the level began", "", [V(COUNT, int(p["hits"]))]),
        Row("won_all", "Meter hits decided, since the level began", "", [V(USD, int(p["won_all"]))]),
        Row("paid_cumulative", "Cumulative progressive paid", "§ 605a.7(a)(4)", [V(USD, int(p["paid_all"]))]),
    ]
    return Section("level", f"Level {lv.level}: parameters and meters now", ["Value"], rows, lv.level)


def table_sections(r: LapReport) -> list[Section]:
    """Each member table's day, in the words of the table's own report (its coin-in section and its
    hit totals), so that a clerk ties the two figure by figure (the CSV: the same items and labels)."""
    out = []
    for t in r.tables:
        d = t.day
        coin = [
            Row("wagers_counted", "Progressive wagers counted", "", [V(COUNT, d.contributions), V(USD, d.wagered)]),
            Row("wagers_voided", "Taken back by voided rounds", "", [V(COUNT, d.voids), V(USD, d.voided_wagers)]),
            Row("coin_in", "Progressive coin-in", "", [V(COUNT, d.contributions - d.voids), V(USD, d.coin_in)]),
            Row(
                "contributions_day",
                "Contributions credited in the day",
                "",
                [V(COUNT, d.contributions), V(EXACT, d.contributed)],
            ),  # fmt: skip
            Row("voided_day", "Contributions taken back by voids", "", [V(TEXT, ""), V(EXACT, d.voided)]),
        ]
        decided = [Row("hits_decided", "Meter hits decided by the LAP", "", [V(COUNT, d.hits), V(USD, d.won)])]
        paid = [
            Row(
                "meter_hits", "Meter hits, paid by an attendant", "§ 605a.7(a)(3)", [V(COUNT, d.paid_n), V(USD, d.paid)]
            )
        ]
        title = f"Table {t.table}"
        out.append(Section("coin_in", title, ["Wagers", "Amount"], coin, table=t.table))
        out.append(Section("lap_hits", title, ["Hits", "Amount"], decided, table=t.table))
        out.append(Section("hit_totals", title, ["Hits", "Paid"], paid, table=t.table))
    return out


TABLE_COLUMNS = ["Table", "Asset", "Game", "Wagers", "Coin-in", "Contributions", "Voided", "Hits", "Won", "Paid"]


def table_row(t: MemberDay) -> list[V]:
    d = t.day
    return [
        V(TEXT, t.table),
        V(TEXT, t.asset),
        V(TEXT, game_title(t.game)),
        V(COUNT, d.contributions - d.voids),
        V(USD, d.coin_in),
        V(EXACT, d.contributed - d.voided),
        V(COUNT, d.voids),
        V(COUNT, d.hits),
        V(USD, d.won),
        V(USD, d.paid),
    ]


HIT_COLUMNS = ["Time", "Level", "Hit #", "Table", "Round", "Seat", "Hand", "Amount", "Validated by", "Paid at"]


def hits_section(r: LapReport) -> Section:
    """The last hits up to the day's end (the level's column only when the group has several)."""
    many = len(r.levels) > 1
    cols = [c for c in HIT_COLUMNS if many or c != "Level"]
    rows = [Row("hit", "meter hit", "", _hit_values(h, many)) for h in r.hits]
    notes = [
        "Newest first; times are the LAP's (decided, and when the table's payment reached it). Pending: the hit "
        "awaits the floorperson's validation at the table. Each is paid the amount decided (the LAP refuses "
        "any other)."
    ]
    return Section("hit", f"Last {LAST_HITS} hits (up to the end of the day)", cols, rows, notes=notes)


def _hit_values(h: HitLine, many: bool) -> list[V]:
    paid = h.paid_at is not None
    return [
        V(TEXT, stamp(h.decided_at)),
        *([V(TEXT, h.level)] if many else []),
        V(TEXT, h.order),
        V(TEXT, h.table),
        V(TEXT, h.round_no),
        V(TEXT, h.seat),
        V(TEXT, hand_name(h.hand)),
        V(USD, h.amount_cents),
        V(TEXT, h.paid_by or ("NOT RECORDED" if paid else "pending")),
        V(TEXT, stamp(h.paid_at) if h.paid_at is not None else ""),
    ]


def sections(r: LapReport) -> list[Section]:
    """Every section but the per-table ones, in the order printed."""
    out: list[Section] = []
    for lv in r.levels:
        out += [roll_forward_section(lv, r), coin_in_section(lv), level_section(lv)]
    return [*out, hits_section(r)]


def to_csv(r: LapReport) -> str:
    """The CSV: the table's report's layout (controller/reports/reportcsv.py), one row per figure."""
    from controller.reports import reportcsv

    rows = [*reportcsv.identity_rows(heading(r), r.provisional)]
    secs = sections(r)
    rows += reportcsv.all_rows(secs[:-1])
    rows += reportcsv.all_rows(table_sections(r))
    rows += reportcsv.all_rows(secs[-1:])
    return reportcsv.write({"table": "", "gaming_day": r.day.isoformat()}, rows)
