"""The accounting report of one gaming day (docs/operations.md): the figures.

Per table and progressive level: the meters of § 605a.7(a) — the progressive meter ((a)(1)),
the amounts paid by the table ((a)(2)) and by an attendant ((a)(3)), the cumulative paid
((a)(4)) — with the rest of SPEC § 5 (seed/reset, increment rate, hidden remainder, hits) at
the start and at the end of the gaming day; the day's progressive coin-in (wagers counted
and summed) and the check that the contributions equal rate × wagers, exactly; every hit
with its amount and who validated it; voids; faults; the table's play (rounds, wagers,
payouts); who recorded the day (the configuration and software the table ran under, from
its own start-up records); and the chain's head at the end of the day (the last event's
number and MAC: the accounting department keeps it, and a later rewrite of the ledger would
contradict it).

Everything is computed from the ledger's events alone (meters replayed with
controller/books/meters.py, exactly), never from the stored meter snapshot.  How it is shown —
labels, dollars, the CSV and the PDF — is controller/reports/reportview.py and controller/reports/reportpdf.py.

The *gaming day* runs from ``day_start`` local time (default 06:00) on the given date to
the same time the next day; local means the time zone given (default: the machine's,
the Pi's ``/etc/localtime``).  Event times in the ledger are UTC.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from fractions import Fraction
from typing import Any

from controller.books import meters as M
from controller.books.ledger import GENESIS, Head
from controller.core.records import Kind

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
    """The ledger's own form (controller/books/ledger.py): fixed width, so text order is time order."""
    return t.astimezone(UTC).isoformat(timespec="microseconds")


METER_HIT = "meter hit"  # a percentage-of-meter pay: from the meter, by an attendant, after a validation
FIXED_PAY = "fixed pay"  # a fixed progressive pay, from the table inventory


@dataclass
class Hit:
    ts: str
    seq: int
    round: int
    seat: Any
    hand: Any
    cents: int
    paid_by: str  # attendant (a meter hit) | table (a fixed pay)
    validated_by: str  # who validated it (hit.validated), "" for a table-paid fixed pay
    level: str = ""
    fraction: str = ""  # a meter hit's share of the meter ("1/10")

    @property
    def kind(self) -> str:
        return METER_HIT if self.paid_by == "attendant" else FIXED_PAY


@dataclass
class CoinIn:
    """A level's progressive coin-in in the day: the wagers credited at the dealer's count
    (``meter.increment`` / ``link.contribution``) and those a void took back."""

    wagers: int = 0
    cents: int = 0
    voided_wagers: int = 0
    voided_cents: int = 0
    #: net wager cents at each increment rate (credited minus voided), for rate × wagers
    by_rate: dict[Fraction, int] = field(default_factory=dict)

    @property
    def net_wagers(self) -> int:
        return self.wagers - self.voided_wagers

    @property
    def net_cents(self) -> int:
        return self.cents - self.voided_cents

    @property
    def expected(self) -> Fraction:
        """Σ rate × wagers, exact: what the day's net contributions must be."""
        return sum((rate * c for rate, c in self.by_rate.items()), Fraction(0))


@dataclass
class LevelReport:
    level: str
    start: M.Meter | None
    end: M.Meter
    coin_in: CoinIn = field(default_factory=CoinIn)
    #: the level was created during the day (its ``meter.init``): its time and event number;
    #: ``start`` is then the meter as created, not a meter at the day's start
    born_ts: str = ""
    born_seq: int = 0

    @property
    def contributions(self) -> Fraction:
        return self.end.increments - (self.start.increments if self.start else Fraction(0))

    @property
    def contribution_count(self) -> int:
        return self.end.increment_count - (self.start.increment_count if self.start else 0)

    @property
    def voided(self) -> Fraction:
        return self.end.voided - (self.start.voided if self.start else Fraction(0))

    @property
    def net_contributions(self) -> Fraction:
        return self.contributions - self.voided

    @property
    def contributions_agree(self) -> bool:
        """The meter's day contributions equal rate × the wagers counted, exactly."""
        return self.net_contributions == self.coin_in.expected and self.contribution_count == self.coin_in.wagers


@dataclass
class Activity:
    """The table's play in the day, from its round and wager records."""

    opened: int = 0  # round.open in the day
    completed: int = 0  # round.complete in the day
    voided: int = 0  # round.void in the day
    open_rounds: dict[int, str] = field(default_factory=dict)  # opened in the day, not ended in it: round -> ts
    wagers: int = 0  # wager.accepted, every spot
    wagered_cents: int = 0
    refused_late: int = 0  # wager.rejected: chips placed after the lock-out
    refused_other: int = 0  # wager.rejected for another reason (not offered, link closed)
    won_cents: int = 0  # players' winnings paid by the table (positive net of wager.result)
    returned_cents: int = 0  # wagers handed back with a win or a push
    meter_paid_cents: int = 0  # meter hits, paid by an attendant
    void_returned: int = 0  # wager.returned by a void
    void_returned_cents: int = 0

    @property
    def played(self) -> int:
        """Rounds that ended in the day: completed or voided."""
        return self.completed + self.voided

    @property
    def paid_cents(self) -> int:
        """Everything handed to players at settlement: winnings, meter hits, wagers returned."""
        return self.won_cents + self.meter_paid_cents + self.returned_cents


@dataclass
class TableInfo:
    """Who and what recorded the day: the configuration in effect (its ``config.loaded``
    record), the software (``power.up``, ``selfcheck``), as the table recorded them."""

    values: dict[str, str] = field(default_factory=dict)  # the configuration, flattened
    config_ts: str = ""
    config_digest: str = ""
    version: str = ""
    version_ts: str = ""
    digest: str = ""
    recorded_digest: str | None = None
    software_check: str = ""  # the self-check's software result ("pass", "not recorded", ...)
    selfcheck_ts: str = ""

    def get(self, key: str) -> str:
        v = self.values.get(key, "")
        return "" if v in ("None", "") else v


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
    rounds: int = 0  # rounds opened in the day (activity.opened)
    head: Head = field(default_factory=lambda: Head(0, GENESIS))
    head_ts: str = ""
    events: int = 0  # events in the day
    activity: Activity = field(default_factory=Activity)
    coin_in: dict[str, CoinIn] = field(default_factory=dict)  # by level (a linked table's too)
    info: TableInfo = field(default_factory=TableInfo)
    read_from: int = 0  # the events read begin after this one (the checkpoint the meters start from)
    #: the ledger's first event's time when it begins after this day ("" otherwise): the table's
    #: identity is then the one it first recorded
    ledger_begins: str = ""

    def hits_total(self, paid_by: str | None = None) -> int:
        return sum(h.cents for h in self.hits if paid_by is None or h.paid_by == paid_by)

    def hits_of(self, paid_by: str) -> list[Hit]:
        return [h for h in self.hits if h.paid_by == paid_by]

    @property
    def linked(self) -> str:
        """The linked group whose LAP holds this table's meter, "" for a local meter."""
        return self.info.get("profile.progressive.linked")

    def provisional(self, now: datetime | None = None) -> bool:
        """The gaming day has not ended yet (today or a future day): its figures may still change."""
        return (now or datetime.now(UTC)) < self.end_utc


def _first_at(conn: sqlite3.Connection, since: int, ts: str) -> int:
    """The first event after ``since`` stamped at or after ``ts`` (one past the last when none):
    times only grow along the chain (the ledger refuses an event stamped before the last), so
    this reads only up to it, never every later event (a day early in a year's ledger)."""
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
    """The meters at the last ledger checkpoint before the day (controller/books/ledger.py: one every
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


def _last_of(
    conn: sqlite3.Connection, kind: str, upto: str, want: Callable[[dict[str, Any]], bool], earliest: bool = False
) -> tuple[str, Any]:
    """(time, data) of the last ``kind`` record before ``upto`` whose data ``want`` accepts
    (``earliest``: the first one in the ledger, whenever it was)."""
    q = (
        "SELECT ts, data FROM events WHERE kind = ? ORDER BY seq"
        if earliest
        else "SELECT ts, data FROM events WHERE kind = ? AND ts < ? ORDER BY seq DESC"
    )
    for ts, data in conn.execute(q, (kind,) if earliest else (kind, upto)):
        d = json.loads(data)
        if isinstance(d, dict) and want(d):
            return str(ts), d
    return "", {}


def table_info(conn: sqlite3.Connection, upto: str, earliest: bool = False) -> TableInfo:
    """The configuration and software in effect at ``upto``, from the table's own start-up
    records (a ``config.loaded`` with only a digest means "unchanged": the last one with
    values is the configuration); ``earliest``: the first the ledger recorded (a day before
    the ledger began: who the table is, as it first said)."""
    info = TableInfo()
    info.config_ts, cfg = _last_of(
        conn, Kind.CONFIG_LOADED, upto, lambda d: isinstance(d.get("values"), dict), earliest
    )
    info.values = {str(k): str(v) for k, v in cfg.get("values", {}).items()}
    info.config_digest = str(cfg.get("digest", ""))
    info.version_ts, up = _last_of(conn, Kind.POWER_UP, upto, lambda d: True, earliest)
    info.version = str(up.get("version", ""))
    info.selfcheck_ts, sc = _last_of(conn, Kind.SELFCHECK, upto, lambda d: True, earliest)
    info.digest = str(sc.get("digest") or "")
    rd = sc.get("recorded_digest")
    info.recorded_digest = str(rd) if rd else None
    results = sc.get("results")
    info.software_check = str(results.get("software", "")) if isinstance(results, dict) else ""
    return info


class _Day:
    """Reads the day's events into a :class:`DayReport` (one method per kind of event)."""

    def __init__(self, rep: DayReport):
        self.rep = rep
        self.validations: dict[tuple[int, Any], str] = {}  # (round, order) -> by
        self.born: dict[str, tuple[str, int, M.Meter]] = {}
        self.handlers: dict[str, Callable[[str, int, int, dict[str, Any]], None]] = {
            Kind.ROUND_OPEN: self._round_open,
            Kind.ROUND_COMPLETE: self._round_end,
            Kind.ROUND_VOID: self._round_void,
            Kind.HIT_VALIDATED: self._validated,
            Kind.METER_PAYOUT: self._hit,
            Kind.METER_FIXED_PAID: self._hit,
            Kind.LINK_PAID: self._hit,
            Kind.METER_INCREMENT: self._contribution,
            Kind.LINK_CONTRIBUTION: self._contribution,
            Kind.METER_VOID: self._contribution_void,
            Kind.LINK_VOID: self._contribution_void,
            Kind.TILT_RAISED: self._fault,
            Kind.TILT_CLEARED: self._fault,
            Kind.WAGER_ACCEPTED: self._accepted,
            Kind.WAGER_REJECTED: self._rejected,
            Kind.WAGER_RETURNED: self._returned,
            Kind.WAGER_RESULT: self._result,
        }
        self.kind = ""

    def take(self, ts: str, seq: int, rnd: int, kind: str, d: dict[str, Any]) -> None:
        self.rep.events += 1
        handler = self.handlers.get(kind)
        if handler is not None:
            self.kind = kind
            handler(ts, seq, rnd, d)

    def _round_open(self, ts: str, seq: int, rnd: int, d: dict[str, Any]) -> None:
        self.rep.rounds += 1
        self.rep.activity.opened += 1
        self.rep.activity.open_rounds[rnd] = ts

    def _round_end(self, ts: str, seq: int, rnd: int, d: dict[str, Any]) -> None:
        self.rep.activity.completed += 1
        self.rep.activity.open_rounds.pop(rnd, None)

    def _round_void(self, ts: str, seq: int, rnd: int, d: dict[str, Any]) -> None:
        self.rep.activity.voided += 1
        self.rep.activity.open_rounds.pop(rnd, None)
        self.rep.voids.append({"ts": ts, "seq": seq, "round": rnd, "reason": d.get("reason", "")})

    def _validated(self, ts: str, seq: int, rnd: int, d: dict[str, Any]) -> None:
        self.validations[(rnd, d.get("order"))] = str(d.get("by", ""))

    def _hit(self, ts: str, seq: int, rnd: int, d: dict[str, Any]) -> None:
        fixed = self.kind == Kind.METER_FIXED_PAID
        if self.kind == Kind.LINK_PAID:
            by = str(d.get("by") or self.validations.get((rnd, d.get("order")), ""))
        else:
            by = "" if fixed else self.validations.get((rnd, d.get("order")), "")
        cents = int(d["cents"])
        hit = Hit(ts, seq, rnd, d.get("seat"), d.get("hand"), cents, "table" if fixed else "attendant", by)
        hit.level, hit.fraction = str(d.get("level", "")), str(d.get("fraction") or "")
        self.rep.hits.append(hit)
        if not fixed:
            self.rep.activity.meter_paid_cents += cents

    def _coin(self, d: dict[str, Any]) -> tuple[CoinIn, int, Fraction | None]:
        ci = self.rep.coin_in.setdefault(str(d.get("level", "")), CoinIn())
        rate = Fraction(str(d["rate"])) if "rate" in d else None
        return ci, int(d["wager"]), rate

    def _contribution(self, ts: str, seq: int, rnd: int, d: dict[str, Any]) -> None:
        ci, cents, rate = self._coin(d)
        ci.wagers, ci.cents = ci.wagers + 1, ci.cents + cents
        if rate is not None:
            ci.by_rate[rate] = ci.by_rate.get(rate, 0) + cents

    def _contribution_void(self, ts: str, seq: int, rnd: int, d: dict[str, Any]) -> None:
        ci, cents, rate = self._coin(d)
        ci.voided_wagers, ci.voided_cents = ci.voided_wagers + 1, ci.voided_cents + cents
        if rate is not None:
            ci.by_rate[rate] = ci.by_rate.get(rate, 0) - cents

    def _fault(self, ts: str, seq: int, rnd: int, d: dict[str, Any]) -> None:
        what = "raised" if self.kind == Kind.TILT_RAISED else "cleared"
        reason = d.get("reason", d.get("by", ""))
        self.rep.faults.append(
            {"ts": ts, "seq": seq, "round": rnd, "what": what, "source": d.get("source", ""), "reason": reason}
        )

    def _accepted(self, ts: str, seq: int, rnd: int, d: dict[str, Any]) -> None:
        a = self.rep.activity
        a.wagers += 1
        a.wagered_cents += int(d.get("cents") or 0)

    def _rejected(self, ts: str, seq: int, rnd: int, d: dict[str, Any]) -> None:
        if "lock-out" in str(d.get("reason", "")):
            self.rep.activity.refused_late += 1
        else:
            self.rep.activity.refused_other += 1

    def _returned(self, ts: str, seq: int, rnd: int, d: dict[str, Any]) -> None:
        a = self.rep.activity
        a.void_returned += 1
        a.void_returned_cents += int(d.get("cents") or 0)

    def _result(self, ts: str, seq: int, rnd: int, d: dict[str, Any]) -> None:
        amount, net = int(d.get("cents") or 0), int(d.get("net") or 0)
        paid = max(amount + net, 0)
        won = max(net, 0)
        self.rep.activity.won_cents += won
        self.rep.activity.returned_cents += paid - won

    def levels(self, at_start: dict[str, M.Meter], meters: dict[str, M.Meter]) -> list[LevelReport]:
        out = []
        for level in sorted(meters):
            lv = LevelReport(level, at_start.get(level), meters[level], self.rep.coin_in.get(level, CoinIn()))
            if level in self.born:
                lv.born_ts, lv.born_seq, lv.start = self.born[level]
            out.append(lv)
        return out


def build(
    conn: sqlite3.Connection, day: date, *, day_start: time = DEFAULT_DAY_START, tz: tzinfo | None = None
) -> DayReport:
    """The report of gaming day ``day`` from a ledger connection (read one snapshot)."""
    z = tz or local_zone()
    start, end = day_bounds(day, day_start, z)
    s_iso, e_iso = _iso(start), _iso(end)
    rep = DayReport("", day, start, end, str(z), day_start)
    col = _Day(rep)
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN")
    try:
        # the meters at each end of the day from the checkpoint before it (the seal's snapshot)
        # and the meter events after it; the day's own events are read once, for what the report lists
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
        _read_day(conn, col, first, until)
        row = conn.execute(
            "SELECT seq, ts, table_id, hash FROM events WHERE seq < ? ORDER BY seq DESC LIMIT 1", (until,)
        ).fetchone()
        if row is not None:  # the chain's head at the end of the day
            rep.head, rep.head_ts, rep.table_id = Head(int(row[0]), str(row[3])), str(row[1]), str(row[2])
            rep.info = table_info(conn, e_iso)
        else:  # a day before the ledger began: the table is the one the ledger names
            _identity_from_first(conn, rep)
    finally:
        if own:
            conn.execute("ROLLBACK")
    rep.levels = col.levels(at_start, meters)
    return rep


def _identity_from_first(conn: sqlite3.Connection, rep: DayReport) -> None:
    """A day before the ledger's first event: the table's id and configuration as the ledger first
    recorded them (a report of a day without play still names the table it is of)."""
    first = conn.execute("SELECT ts, table_id FROM events ORDER BY seq LIMIT 1").fetchone()
    if first is None:
        return
    rep.ledger_begins, rep.table_id = str(first[0]), str(first[1])
    rep.info = table_info(conn, "", earliest=True)


def _read_day(conn: sqlite3.Connection, col: _Day, first: int, until: int) -> None:
    """The day's events, each to the handler of its kind (a level created in the day noted with
    its meter as created)."""
    for seq, ts, rnd, kind, data in conn.execute(
        "SELECT seq, ts, round, kind, data FROM events WHERE seq >= ? AND seq < ? ORDER BY seq", (first, until)
    ):
        d = json.loads(data) if kind in col.handlers or kind == Kind.METER_INIT else {}
        if kind == Kind.METER_INIT:
            col.born[d["level"]] = (ts, seq, M.apply({}, kind, d, round_no=rnd, seq=seq)[d["level"]])
        col.take(ts, seq, rnd, kind, d)
