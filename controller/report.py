"""The accounting report of one gaming day (issue 15; docs/operations.md).

Per table and progressive level: the meters of § 605a.7(a) (SPEC § 5: current amount,
seed/reset, increment rate, hidden remainder, hits, amounts paid by the table and by
an attendant, cumulative paid) at the start and at the end of the gaming day; the
day's contributions; every hit with its amount and who validated it; voids; faults;
and the chain's head at the end of the day (the last event's number and MAC: the
accounting department keeps it, and a later rewrite of the ledger would contradict it).

Everything is computed from the ledger's events alone (meters replayed with
controller/meters.py, exactly), never from the stored meter snapshot.

The *gaming day* runs from ``day_start`` local time (default 06:00) on the given date to
the same time the next day; local means the time zone given (default: the machine's,
the Pi's ``/etc/localtime``).  Event times in the ledger are UTC.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from decimal import Decimal
from fractions import Fraction
from typing import Any

from controller import meters as M
from controller.ledger import GENESIS, Head
from controller.records import Kind

DEFAULT_DAY_START = time(6, 0)


def local_zone() -> tzinfo:
    z = datetime.now().astimezone().tzinfo
    assert z is not None
    return z


def day_bounds(day: date, day_start: time = DEFAULT_DAY_START, tz: tzinfo | None = None) -> tuple[datetime, datetime]:
    """The gaming day ``day`` as [start, end) in UTC."""
    z = tz or local_zone()
    start = datetime.combine(day, day_start).replace(tzinfo=z)
    end = datetime.combine(day + timedelta(days=1), day_start).replace(tzinfo=z)
    return start.astimezone(UTC), end.astimezone(UTC)


def gaming_day_of(ts: str, day_start: time = DEFAULT_DAY_START, tz: tzinfo | None = None) -> date:
    """The gaming day an event's (UTC ISO) time belongs to."""
    local = datetime.fromisoformat(ts).astimezone(tz or local_zone())
    return (local - timedelta(hours=day_start.hour, minutes=day_start.minute)).date()


def _iso(t: datetime) -> str:
    """The ledger's own form (controller/ledger.py): fixed width, so text order is time order."""
    return t.astimezone(UTC).isoformat(timespec="microseconds")


@dataclass
class Hit:
    ts: str
    seq: int
    round: int
    seat: Any
    hand: Any
    cents: int
    paid_by: str  # attendant (a meter pay) | table (a fixed pay)
    validated_by: str  # who validated it (hit.validated), "" for a table-paid fixed pay


@dataclass
class LevelReport:
    level: str
    start: M.Meter | None
    end: M.Meter

    @property
    def contributions(self) -> Fraction:
        return self.end.increments - (self.start.increments if self.start else Fraction(0))

    @property
    def contribution_count(self) -> int:
        return self.end.increment_count - (self.start.increment_count if self.start else 0)

    @property
    def voided(self) -> Fraction:
        return self.end.voided - (self.start.voided if self.start else Fraction(0))


@dataclass
class DayReport:
    table_id: str
    day: date
    start_utc: datetime
    end_utc: datetime
    zone: str
    day_start: time
    levels: list[LevelReport] = field(default_factory=list)
    hits: list[Hit] = field(default_factory=list)
    voids: list[dict[str, Any]] = field(default_factory=list)  # round.void: ts, seq, round, reason
    faults: list[dict[str, Any]] = field(default_factory=list)  # tilt.raised / tilt.cleared
    rounds: int = 0  # rounds opened in the day
    head: Head = field(default_factory=lambda: Head(0, GENESIS))
    head_ts: str = ""
    events: int = 0  # events in the day
    read_from: int = 0  # the events read begin after this one (the checkpoint the meters start from)

    def hits_total(self, paid_by: str | None = None) -> int:
        return sum(h.cents for h in self.hits if paid_by is None or h.paid_by == paid_by)


def _first_at(conn: sqlite3.Connection, since: int, ts: str) -> int:
    """The first event after ``since`` stamped at or after ``ts`` (one past the last when none):
    times only grow along the chain (the ledger refuses an event stamped before the last), so
    this reads only up to it, never every later event (issue 26: a day early in a year's ledger)."""
    q = "SELECT seq FROM events WHERE seq > ? AND ts >= ? ORDER BY seq LIMIT 1"
    row = conn.execute(q, (since, ts)).fetchone()
    if row is not None:
        return int(row[0])
    last = conn.execute("SELECT seq FROM events ORDER BY seq DESC LIMIT 1").fetchone()
    return int(last[0]) + 1 if last else 1


def _replayed(conn: sqlite3.Connection, meters: dict[str, M.Meter], after: int, before: int) -> dict[str, M.Meter]:
    """The meters after the meter events between two events (exclusive)."""
    for seq, rnd, kind, data in conn.execute(
        "SELECT seq, round, kind, data FROM events WHERE seq > ? AND seq < ? AND +kind >= 'meter.' "
        "AND +kind < 'meter/' ORDER BY seq",
        (after, before),
    ):
        meters = M.apply(meters, kind, json.loads(data), round_no=rnd, seq=seq)
    return meters


def _checkpoint_before(conn: sqlite3.Connection, start_iso: str) -> tuple[int, dict[str, M.Meter]]:
    """The meters at the last ledger checkpoint before the day (controller/ledger.py: one every
    2000 events, naming its event by MAC; the report is refused for a ledger whose checkpoints
    fail the audit), so a day late in a long ledger is not replayed from its first event."""
    try:
        row = conn.execute(
            "SELECT c.seq, c.meters FROM checkpoints c JOIN events e ON e.seq = c.seq AND e.hash = c.hash "
            "WHERE e.ts < ? ORDER BY c.seq DESC LIMIT 1",
            (start_iso,),
        ).fetchone()
    except sqlite3.OperationalError:  # a ledger from before checkpoints
        return 0, {}
    if row is None:
        return 0, {}
    return int(row[0]), {lv: M.Meter.from_row(r) for lv, r in json.loads(row[1]).items()}


#: the kinds whose details the report reads (the others are only counted)
_READ = frozenset(
    {Kind.HIT_VALIDATED, Kind.METER_PAYOUT, Kind.METER_FIXED_PAID, Kind.ROUND_VOID, Kind.TILT_RAISED, Kind.TILT_CLEARED}
)


def build(
    conn: sqlite3.Connection, day: date, *, day_start: time = DEFAULT_DAY_START, tz: tzinfo | None = None
) -> DayReport:
    """The report of gaming day ``day`` from a ledger connection (read one snapshot)."""
    z = tz or local_zone()
    start, end = day_bounds(day, day_start, z)
    s_iso, e_iso = _iso(start), _iso(end)
    meters: dict[str, M.Meter] = {}
    table_id = ""
    rep = DayReport("", day, start, end, str(z), day_start)
    validations: dict[tuple[int, Any], str] = {}  # (round, order) -> by
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN")
    try:
        # the meters at each end of the day from the checkpoint before it (the seal's snapshot, issue 26)
        # and the meter events after it; the day's own events are read once, for what it lists
        since, meters = _checkpoint_before(conn, s_iso)
        rep.read_from = since
        first, until = _first_at(conn, since, s_iso), _first_at(conn, since, e_iso)
        at_start = _replayed(conn, meters, since, first)
        end_cp, end_meters = _checkpoint_before(conn, e_iso)
        meters = (
            _replayed(conn, end_meters, end_cp, until)
            if end_cp >= first
            else _replayed(conn, at_start, first - 1, until)
        )
        for seq, ts, rnd, kind, data in conn.execute(
            "SELECT seq, ts, round, kind, data FROM events WHERE seq >= ? AND seq < ? ORDER BY seq", (first, until)
        ):
            rep.events += 1
            if kind == Kind.ROUND_OPEN:
                rep.rounds += 1
            elif kind in _READ:
                _listed(rep, validations, seq, ts, rnd, kind, json.loads(data))
        row = conn.execute(
            "SELECT seq, ts, table_id, hash FROM events WHERE seq < ? ORDER BY seq DESC LIMIT 1", (until,)
        ).fetchone()
        if row is not None:  # the chain's head at the end of the day
            rep.head, rep.head_ts, table_id = Head(int(row[0]), str(row[3])), str(row[1]), str(row[2])
    finally:
        if own:
            conn.execute("ROLLBACK")
    rep.table_id = table_id
    for level in sorted(meters):
        rep.levels.append(LevelReport(level, at_start.get(level), meters[level]))
    return rep


def _listed(
    rep: DayReport, validations: dict[tuple[int, Any], str], seq: int, ts: str, rnd: int, kind: str, d: dict[str, Any]
) -> None:
    """A hit, its validation, a void or a fault of the day, into the report."""
    if kind == Kind.HIT_VALIDATED:
        validations[(rnd, d.get("order"))] = str(d.get("by", ""))
    elif kind in (Kind.METER_PAYOUT, Kind.METER_FIXED_PAID):
        attendant = kind == Kind.METER_PAYOUT
        by = validations.get((rnd, d.get("order")), "") if attendant else ""
        paid_by = "attendant" if attendant else "table"
        rep.hits.append(Hit(ts, seq, rnd, d.get("seat"), d.get("hand"), int(d["cents"]), paid_by, by))
    elif kind == Kind.ROUND_VOID:
        rep.voids.append({"ts": ts, "seq": seq, "round": rnd, "reason": d.get("reason", "")})
    else:
        what = "raised" if kind == Kind.TILT_RAISED else "cleared"
        reason = d.get("reason", d.get("by", ""))
        rep.faults.append(
            {"ts": ts, "seq": seq, "round": rnd, "what": what, "source": d.get("source", ""), "reason": reason}
        )


# ---------------------------------------------------------------------- presentation


def dollars(cents: int) -> str:
    """Exact: integer cents as dollars with two decimals (no float)."""
    sign = "-" if cents < 0 else ""
    c = abs(cents)
    return f"{sign}{c // 100}.{c % 100:02d}"


def whole_and_rest(x: Fraction) -> tuple[int, Fraction]:
    whole = x.numerator // x.denominator
    return whole, x - whole


def exact_text(x: Fraction) -> str:
    """Dollars of the whole cents, and the fraction of a cent below it in words (kept as text
    by a spreadsheet): ``5019.53 + 3/8 cent``."""
    whole, rest = whole_and_rest(x)
    return dollars(whole) + (f" + {rest} cent" if rest else "")


def percent(rate: Fraction) -> str:
    """A rate as a percentage, for reading (``3/200`` -> ``1.5%``)."""
    q = rate * 100
    if q.denominator == 1:
        return f"{q.numerator}%"
    return f"{(Decimal(q.numerator) / Decimal(q.denominator)).normalize()}%"


def local_time(ts: str, tz: tzinfo | None = None) -> str:
    return datetime.fromisoformat(ts).astimezone(tz or local_zone()).strftime("%Y-%m-%d %H:%M:%S %Z")


#: the § 605a.7(a) meters (SPEC § 5), in the order printed: (name, how to read it off a Meter)
METER_FIELDS: list[tuple[str, Any]] = [
    ("amount", lambda m: exact_text(m.value)),
    ("seed_reset", lambda m: dollars(m.seed_cents)),
    ("increment_rate", lambda m: percent(m.rate)),
    ("hidden_remainder", lambda m: f"{m.remainder} cent"),
    ("contributions", lambda m: exact_text(m.increments)),
    ("contribution_count", lambda m: str(m.increment_count)),
    ("hits_attendant", lambda m: str(m.hits)),
    ("hits_table", lambda m: str(m.fixed_hits)),
    ("paid_table", lambda m: dollars(m.paid_table)),
    ("paid_attendant", lambda m: dollars(m.paid_attendant)),
    ("paid_cumulative", lambda m: dollars(m.paid_total)),
    ("reseeds", lambda m: dollars(m.reseeds)),
    ("voided", lambda m: exact_text(m.voided)),
    ("hidden_reserve", lambda m: exact_text(m.reserve)),
]

CSV_COLUMNS = [
    "section",
    "table",
    "gaming_day",
    "level",
    "item",
    "start",
    "end",
    "time_local",
    "seq",
    "round",
    "seat",
    "hand",
    "amount",
    "paid_by",
    "validated_by",
    "detail",
]


def to_csv(rep: DayReport, tz: tzinfo | None = None) -> str:
    """One CSV for spreadsheets: a ``section`` column (meter, contributions, hit, void, fault,
    total, head), amounts in dollars with exactly two decimals."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, CSV_COLUMNS, lineterminator="\n")
    w.writeheader()
    base = {"table": rep.table_id, "gaming_day": rep.day.isoformat()}
    w.writerow(
        {
            **base,
            "section": "day",
            "item": "gaming_day",
            "start": local_time(_iso(rep.start_utc), tz),
            "end": local_time(_iso(rep.end_utc), tz),
            "detail": f"gaming day starts {rep.day_start:%H:%M} {rep.zone}",
        }
    )
    for lv in rep.levels:
        for name, get in METER_FIELDS:
            w.writerow(
                {
                    **base,
                    "section": "meter",
                    "level": lv.level,
                    "item": name,
                    "start": get(lv.start) if lv.start else "",
                    "end": get(lv.end),
                }
            )
        w.writerow(
            {
                **base,
                "section": "contributions",
                "level": lv.level,
                "item": "day",
                "amount": exact_text(lv.contributions),
                "detail": f"{lv.contribution_count} contributions; voided {exact_text(lv.voided)}",
            }
        )
    for h in rep.hits:
        w.writerow(
            {
                **base,
                "section": "hit",
                "time_local": local_time(h.ts, tz),
                "seq": h.seq,
                "round": h.round,
                "seat": h.seat,
                "hand": h.hand,
                "amount": dollars(h.cents),
                "paid_by": h.paid_by,
                "validated_by": h.validated_by,
            }
        )
    for v in rep.voids:
        w.writerow(
            {
                **base,
                "section": "void",
                "time_local": local_time(v["ts"], tz),
                "seq": v["seq"],
                "round": v["round"],
                "detail": v["reason"],
            }
        )
    for f in rep.faults:
        w.writerow(
            {
                **base,
                "section": "fault",
                "item": f["what"],
                "time_local": local_time(f["ts"], tz),
                "seq": f["seq"],
                "round": f["round"],
                "detail": f"{f['source']}: {f['reason']}",
            }
        )
    totals = [
        ("rounds", str(rep.rounds)),
        ("hits", str(len(rep.hits))),
        ("hits_paid_attendant", dollars(rep.hits_total("attendant"))),
        ("hits_paid_table", dollars(rep.hits_total("table"))),
        ("hits_paid", dollars(rep.hits_total())),
        ("voids", str(len(rep.voids))),
        ("faults", str(sum(1 for f in rep.faults if f["what"] == "raised"))),
        ("events", str(rep.events)),
    ]
    for item, amount in totals:
        w.writerow({**base, "section": "total", "item": item, "amount": amount})
    w.writerow(
        {
            **base,
            "section": "head",
            "item": "chain_head",
            "seq": rep.head.count,
            "time_local": local_time(rep.head_ts, tz) if rep.head_ts else "",
            "detail": rep.head.mac,
        }
    )
    return buf.getvalue()


def to_lines(rep: DayReport, tz: tzinfo | None = None) -> list[str]:
    """The report as text lines (the PDF's content; at most ~110 characters wide)."""
    out = [
        f"tablectl accounting report - table {rep.table_id or '(no events)'} - gaming day {rep.day.isoformat()}",
        f"gaming day: {local_time(_iso(rep.start_utc), tz)} to {local_time(_iso(rep.end_utc), tz)} "
        f"(starts {rep.day_start:%H:%M} {rep.zone})",
        f"rounds {rep.rounds}, events {rep.events}; amounts in US dollars",
        "",
    ]
    for lv in rep.levels:
        out.append(f"Progressive level {lv.level}: meters (\u00a7 605a.7(a))")
        out.append(f"  {'meter':<22}{'start of day':>30}{'end of day':>30}")
        for name, get in METER_FIELDS:
            out.append(f"  {name:<22}{get(lv.start) if lv.start else '-':>30}{get(lv.end):>30}")
        out.append(
            f"  contributions in the day: {lv.contribution_count}, {exact_text(lv.contributions)}; "
            f"voided {exact_text(lv.voided)}"
        )
        out.append("")
    out.append(f"Hits ({len(rep.hits)})")
    if rep.hits:
        out.append(
            f"  {'time':<24}{'seq':>8}{'round':>7}{'seat':>5}  {'hand':<18}{'amount':>12}  paid by    validated by"
        )
    for h in rep.hits:
        out.append(
            f"  {local_time(h.ts, tz):<24}{h.seq:>8}{h.round:>7}{h.seat!s:>5}  {h.hand!s:<18}"
            f"{dollars(h.cents):>12}  {h.paid_by:<10} {h.validated_by or '-'}"
        )
    out.append(
        f"  total paid {dollars(rep.hits_total())} (attendant {dollars(rep.hits_total('attendant'))}, "
        f"table {dollars(rep.hits_total('table'))})"
    )
    out.append("")
    out.append(f"Voids ({len(rep.voids)})")
    for v in rep.voids:
        out.append(f"  {local_time(v['ts'], tz):<24} round {v['round']}: {v['reason']}")
    out.append("")
    out.append(f"Faults ({sum(1 for f in rep.faults if f['what'] == 'raised')} raised)")
    for f in rep.faults:
        out.append(f"  {local_time(f['ts'], tz):<24} {f['what']:<8} {f['source']}: {f['reason']}"[:110])
    out.append("")
    out.append("Chain head at the end of the day (keep it: a later rewrite of the ledger would contradict it)")
    out.append(f"  event {rep.head.count}" + (f" at {local_time(rep.head_ts, tz)}" if rep.head_ts else ""))
    out.append(f"  MAC {rep.head.mac}")
    return out
