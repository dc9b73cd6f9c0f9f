"""``tablectl lap --report [--day D] [--format csv|pdf]``: the LAP's meters and its last hits.

The progressive controller's own record, as the linked-progressive rules ask of it
(N.J.A.C. 13:69E-1.39A(b); 9 NYCRR 5320.8(b)): for every level the meter and what it is made of
(seed, resets, contributions to the meter and to the hidden reserve, the overflow), the
progressive coin-in, the hits and the amounts won and paid — over the gaming day ``D``
(06:00 to 06:00, the server's local time, as the floor view) and since the group began — and
the last 25 hits with the winning table, its asset number, seat, amount, the hit's order and
its validation (paid, when, by whom).

Every figure is read from the LAP's records in one transaction (REPEATABLE READ: one picture);
money is in exact cents (a fraction of a cent carried shows as such, ``format_exact``).  The
CSV needs nothing beyond the standard library; the PDF is drawn with reportlab (the ``report``
extra, the table's accounting report's style: controller/reports/reportpdf.py).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from datetime import date, datetime
from fractions import Fraction
from typing import Any

from controller.core.money import format_exact

LAST_HITS = 25

_LEVEL_DAY = (
    "SELECT l.level,"
    " (SELECT count(*) FROM {s}.contributions c WHERE c.level = l.level AND c.at >= %(a)s AND c.at < %(b)s) AS n,"
    " (SELECT coalesce(sum(c.wager_cents), 0) FROM {s}.contributions c"
    "   WHERE c.level = l.level AND c.at >= %(a)s AND c.at < %(b)s) AS coin_in,"
    " (SELECT coalesce(sum(c.to_meter / c.den), 0) FROM {s}.contributions c"
    "   WHERE c.level = l.level AND c.at >= %(a)s AND c.at < %(b)s) AS to_meter,"
    " (SELECT coalesce(sum(c.to_reserve / c.den), 0) FROM {s}.contributions c"
    "   WHERE c.level = l.level AND c.at >= %(a)s AND c.at < %(b)s) AS to_reserve,"
    " (SELECT count(*) FROM {s}.voids v WHERE v.level = l.level AND v.at >= %(a)s AND v.at < %(b)s) AS voids,"
    " (SELECT coalesce(sum(v.amount / v.den), 0) FROM {s}.voids v"
    "   WHERE v.level = l.level AND v.at >= %(a)s AND v.at < %(b)s) AS voided,"
    " (SELECT count(*) FROM {s}.hits h WHERE h.level = l.level AND h.decided_at >= %(a)s"
    "   AND h.decided_at < %(b)s) AS hits,"
    " (SELECT coalesce(sum(h.amount_cents), 0) FROM {s}.hits h WHERE h.level = l.level"
    "   AND h.decided_at >= %(a)s AND h.decided_at < %(b)s) AS won,"
    " (SELECT coalesce(sum(p.cents), 0) FROM {s}.payouts p JOIN {s}.hits h"
    "   ON h.table_id = p.table_id AND h.seq = p.hit_seq"
    "   WHERE h.level = l.level AND p.at >= %(a)s AND p.at < %(b)s) AS paid"
    " FROM {s}.levels l"
)
_LEVEL_ALL = (
    "SELECT l.level, l.seed_cents, l.reset_cents, l.rate_num, l.rate_den, l.reserve_num, l.reserve_den,"
    " l.limit_cents, l.rate_version,"
    " (SELECT count(*) FROM {s}.contributions c WHERE c.level = l.level) AS n,"
    " (SELECT coalesce(sum(c.wager_cents), 0) FROM {s}.contributions c WHERE c.level = l.level) AS coin_in,"
    " (SELECT count(*) FROM {s}.hits h WHERE h.level = l.level) AS hits,"
    " (SELECT coalesce(sum(h.amount_cents), 0) FROM {s}.hits h WHERE h.level = l.level) AS won,"
    " (SELECT coalesce(sum(p.cents), 0) FROM {s}.payouts p JOIN {s}.hits h"
    "   ON h.table_id = p.table_id AND h.seq = p.hit_seq WHERE h.level = l.level) AS paid"
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
class LevelMeters:
    level: str
    meter: Fraction
    reserve: Fraction
    overflow: Fraction
    seed_cents: int
    reset_cents: int
    rate: Fraction
    reserve_rate: Fraction
    limit_cents: int | None
    rate_version: int
    day: dict[str, Any]  # the gaming day's figures (counts, cents as Fraction)
    total: dict[str, Any]  # since the group began


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
    levels: list[LevelMeters] = field(default_factory=list)
    hits: list[HitLine] = field(default_factory=list)

    @property
    def provisional(self) -> bool:
        return self.made_at < self.end


def cents(v: int | Fraction) -> str:
    return format_exact(Fraction(v))


def stamp(t: datetime) -> str:
    return t.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def read(store: Any, group: str, day: date) -> LapReport:
    """The report of gaming day ``day`` from the LAP's schema (one REPEATABLE READ picture)."""
    import psycopg

    from controller.lap.floor import gaming_day_of
    from controller.lap.reconcile import level_state

    start, end = gaming_day_of(day)
    conn = store.conn
    was = conn.isolation_level
    conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    try:
        with conn.transaction():
            made = conn.execute("SELECT clock_timestamp()").fetchone()[0]
            state = store.state()
            states = {r["level"]: level_state(r) for r in store._rows("SELECT * FROM {s}.levels")}
            span = {"a": start, "b": end}
            days = {r["level"]: r for r in store._rows(_LEVEL_DAY, span)}
            rows = store._rows(_LEVEL_ALL)
            hits = [HitLine(**_hit(r)) for r in store._rows(_HITS, {"b": end, "n": LAST_HITS})]
    finally:
        conn.isolation_level = was
    levels = [_level(r, states[r["level"]], days[r["level"]]) for r in rows]
    return LapReport(group, store.schema, day, start, end, made, state, levels, hits)


def _frac(v: Any) -> Fraction:
    return Fraction(v) if v is not None else Fraction(0)


def _level(r: dict[str, Any], st: Any, d: dict[str, Any]) -> LevelMeters:
    day = {
        "contributions": int(d["n"]),
        "coin_in": Fraction(int(d["coin_in"])),
        "to_meter": _frac(d["to_meter"]),
        "to_reserve": _frac(d["to_reserve"]),
        "voids": int(d["voids"]),
        "voided": _frac(d["voided"]),
        "hits": int(d["hits"]),
        "won": Fraction(int(d["won"])),
        "paid": Fraction(int(d["paid"])),
    }
    total = {
        "contributions": int(r["n"]),
        "coin_in": Fraction(int(r["coin_in"])),
        "hits": int(r["hits"]),
        "won": Fraction(int(r["won"])),
        "paid": Fraction(int(r["paid"])),
    }
    return LevelMeters(
        level=r["level"],
        meter=st.value,
        reserve=st.reserve,
        overflow=st.overflow,
        seed_cents=int(r["seed_cents"]),
        reset_cents=int(r["reset_cents"]),
        rate=Fraction(int(r["rate_num"]), int(r["rate_den"])),
        reserve_rate=Fraction(int(r["reserve_num"]), int(r["reserve_den"])),
        limit_cents=None if r["limit_cents"] is None else int(r["limit_cents"]),
        rate_version=int(r["rate_version"]),
        day=day,
        total=total,
    )


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


def _pct(f: Fraction) -> str:
    p = f * 100
    return f"{p.numerator}%" if p.denominator == 1 else f"{float(p):.4f}%"


# ---------------------------------------------------------------- the content, shared by CSV and PDF
def level_rows(lv: LevelMeters) -> list[tuple[str, str]]:
    """(label, value) of one level's meters, in the report's words."""
    d, t = lv.day, lv.total
    return [
        ("Meter (amount shown)", cents(lv.meter)),
        ("Hidden reserve", cents(lv.reserve)),
        ("Overflow (above the limit)", cents(lv.overflow)),
        ("Seed", cents(lv.seed_cents)),
        ("Reset after a hit", cents(lv.reset_cents)),
        ("Increment rate (meter / reserve)", f"{_pct(lv.rate)} / {_pct(lv.reserve_rate)} (version {lv.rate_version})"),
        ("Limit", "none" if lv.limit_cents is None else cents(lv.limit_cents)),
        ("Day: progressive wagers", str(d["contributions"])),
        ("Day: progressive coin-in", cents(d["coin_in"])),
        ("Day: to the meter", cents(d["to_meter"])),
        ("Day: to the hidden reserve", cents(d["to_reserve"])),
        ("Day: voided wagers", f"{d['voids']} ({cents(d['voided'])} taken back)"),
        ("Day: hits", str(d["hits"])),
        ("Day: amount won", cents(d["won"])),
        ("Day: amount paid", cents(d["paid"])),
        ("Since start: progressive wagers", str(t["contributions"])),
        ("Since start: progressive coin-in", cents(t["coin_in"])),
        ("Since start: hits", str(t["hits"])),
        ("Since start: amount won", cents(t["won"])),
        ("Since start: amount paid", cents(t["paid"])),
    ]


HIT_COLUMNS = ("Decided", "Level", "Order", "Table", "Asset", "Seat", "Round", "Hand", "Amount", "Validation")


def hit_row(h: HitLine) -> tuple[str, ...]:
    return (
        stamp(h.decided_at),
        h.level,
        str(h.order),
        h.table,
        h.asset,
        str(h.seat),
        str(h.round_no),
        h.hand,
        cents(h.amount_cents),
        h.validation,
    )


def heading(r: LapReport) -> list[tuple[str, str]]:
    return [
        ("Linked group", r.group),
        ("Schema", r.schema),
        ("Gaming day", f"{r.day.isoformat()} ({stamp(r.start)} to {stamp(r.end)})"),
        ("Made at", stamp(r.made_at) + (" (PROVISIONAL: the day has not ended)" if r.provisional else "")),
        ("Link state", r.state),
    ]


def _safe(v: str) -> str:
    """A cell a spreadsheet would take for a formula is quoted with ``'`` (as the floor's CSV)."""
    from controller.lap.floor_history import _cell

    return _cell(v)


def to_csv(r: LapReport) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["section", "level", "item", "value"])
    for k, v in heading(r):
        w.writerow(["report", "", k, _safe(v)])
    for lv in r.levels:
        for k, v in level_rows(lv):
            w.writerow(["meters", lv.level, k, v])
    w.writerow([])
    w.writerow(["last hits", *HIT_COLUMNS])
    for h in r.hits:
        w.writerow(["hit", *(_safe(c) for c in hit_row(h))])
    if not r.hits:
        w.writerow(["hit", "none up to the end of this gaming day"])
    return out.getvalue()
