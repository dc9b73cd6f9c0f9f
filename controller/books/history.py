"""Round recall and hit history from the ledger (SPEC § 5; § 670a.11(j)).

Everything here reads the event log only, and only the chain's events (numbered from 1: a row
below is no event, and the audit reports it): a round is reconstructed hand by
hand from its events (wagers, dice, starting position, cards, outcomes,
payouts), never from a separate summary that could disagree with it.

Safe from any thread: :func:`open_readonly` gives a read-only SQLite connection
of its own (WAL lets readers run beside the writer).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.books.meters import HIT_HISTORY
from controller.core.money import format_cents
from controller.core.records import Kind

ROUNDS_KEPT = 10


def open_readonly(path: str | Path) -> sqlite3.Connection:
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"no ledger at {p}")
    from controller.books.ledgerfile import connect_ro

    return connect_ro(p)


@dataclass
class RoundRecord:
    number: int
    status: str = "open"  # open | complete | void
    opened: str = ""
    closed: str = ""
    accepted: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)
    returned: list[dict[str, Any]] = field(default_factory=list)
    dice: list[dict[str, Any]] = field(default_factory=list)  # every roll, no-rolls included
    rng: list[dict[str, Any]] = field(default_factory=list)
    start: int | None = None
    deal: dict[str, Any] = field(default_factory=dict)
    burned: list[dict[str, Any]] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)
    payouts: list[dict[str, Any]] = field(default_factory=list)  # table-paid
    meter_payouts: list[dict[str, Any]] = field(default_factory=list)
    increments: int = 0
    void_reason: str | None = None
    faults: list[str] = field(default_factory=list)

    def apply(self, kind: str, data: dict[str, Any], ts: str) -> None:
        listed = _LISTED.get(kind)
        if listed is not None:
            getattr(self, listed).append(data)
            return
        handler = _APPLY.get(kind)
        if handler is not None:
            handler(self, kind, data, ts)

    def _opened(self, kind: str, data: dict[str, Any], ts: str) -> None:
        self.opened = ts

    def _dice(self, kind: str, data: dict[str, Any], ts: str) -> None:
        self.dice.append({"no_roll": kind == Kind.DICE_NO_ROLL, **data})
        if kind == Kind.DICE:
            self.start = data.get("start")

    def _rng(self, kind: str, data: dict[str, Any], ts: str) -> None:
        self.rng.append(data)
        self.start = data.get("start", self.start)

    def _deal(self, kind: str, data: dict[str, Any], ts: str) -> None:
        self.deal = data

    def _increment(self, kind: str, data: dict[str, Any], ts: str) -> None:
        self.increments += 1

    def _complete(self, kind: str, data: dict[str, Any], ts: str) -> None:
        self.status, self.closed = "complete", ts

    def _void(self, kind: str, data: dict[str, Any], ts: str) -> None:
        self.status, self.closed, self.void_reason = "void", ts, data.get("reason")

    def _fault(self, kind: str, data: dict[str, Any], ts: str) -> None:
        self.faults.append(f"{data.get('source')}: {data.get('reason')}")


#: the kinds a round's record keeps as they are, and the list of :class:`RoundRecord` they go to
_LISTED: dict[str, str] = {
    Kind.WAGER_ACCEPTED: "accepted",
    Kind.WAGER_REJECTED: "rejected",
    Kind.WAGER_RETURNED: "returned",
    Kind.CARD_BURNED: "burned",
    Kind.WAGER_RESULT: "results",
    Kind.PAYOUT: "payouts",
    Kind.METER_PAYOUT: "meter_payouts",
}
_APPLY: dict[str, Callable[[RoundRecord, str, dict[str, Any], str], None]] = {
    Kind.ROUND_OPEN: RoundRecord._opened,
    Kind.DICE: RoundRecord._dice,
    Kind.DICE_NO_ROLL: RoundRecord._dice,
    Kind.RNG_DRAW: RoundRecord._rng,
    Kind.DEAL: RoundRecord._deal,
    Kind.METER_INCREMENT: RoundRecord._increment,
    Kind.ROUND_COMPLETE: RoundRecord._complete,
    Kind.ROUND_VOID: RoundRecord._void,
    Kind.TILT_RAISED: RoundRecord._fault,
}


def _rows(conn: sqlite3.Connection, sql: str, args: Iterable[Any]) -> Iterator[tuple[Any, ...]]:
    yield from conn.execute(sql, tuple(args))


def round_numbers(conn: sqlite3.Connection, last: int = ROUNDS_KEPT) -> list[int]:
    # ``+kind``: down the round index from the newest round, never through every round.open of a
    # year (the kind index) to sort them
    rows = conn.execute(
        "SELECT DISTINCT round FROM events WHERE round > 0 AND +kind = ? AND seq > 0 ORDER BY round DESC LIMIT ?",
        (Kind.ROUND_OPEN, last),
    ).fetchall()
    return sorted(r[0] for r in rows)


def round_detail(conn: sqlite3.Connection, number: int) -> RoundRecord | None:
    rec = RoundRecord(number)
    found = False
    for kind, data, ts in _rows(
        conn, "SELECT kind, data, ts FROM events WHERE round = ? AND seq > 0 ORDER BY seq", (number,)
    ):
        found = True
        rec.apply(kind, json.loads(data), ts)
    return rec if found else None


def spans(conn: sqlite3.Connection, numbers: Iterable[int]) -> list[tuple[int, int]]:
    """The events of these rounds, as (first, last) event numbers: what was read to recall them."""
    nums = sorted(set(numbers))
    if not nums:
        return []
    q = "SELECT MIN(seq), MAX(seq) FROM events WHERE round BETWEEN ? AND ? AND seq > 0"
    row = conn.execute(q, (nums[0], nums[-1])).fetchone()
    return [] if row is None or row[0] is None else [(int(row[0]), int(row[1]))]


def rounds(conn: sqlite3.Connection, last: int = ROUNDS_KEPT) -> list[RoundRecord]:
    """The last ``last`` rounds, oldest first, each in full."""
    out = []
    for n in round_numbers(conn, last):
        r = round_detail(conn, n)
        if r is not None:
            out.append(r)
    return out


def hits(conn: sqlite3.Connection, level: str = "primary", last: int = HIT_HISTORY) -> list[dict[str, Any]]:
    """The last ``last`` progressive hits of a level, oldest first: meter pays
    (attendant-paid) and fixed progressive pays (table-paid).  Each kind is read newest first
    down its index and the two merged: never every hit of a year sorted."""
    q = (
        "SELECT seq, ts, round, kind, data FROM events WHERE kind = ? "
        "AND json_extract(data, '$.level') = ? AND seq > 0 ORDER BY seq DESC LIMIT ?"
    )
    rows = [r for k in (Kind.METER_PAYOUT, Kind.METER_FIXED_PAID) for r in conn.execute(q, (k, level, last))]
    rows = sorted(rows, reverse=True)[:last]
    out = []
    for seq, ts, rnd, kind, data in reversed(rows):
        d = json.loads(data)
        out.append(
            {
                "seq": seq,
                "ts": ts,
                "round": rnd,
                "seat": d.get("seat"),
                "hand": d.get("hand"),
                "cents": d.get("cents"),
                "paid_by": "attendant" if kind == Kind.METER_PAYOUT else "table",
                "order": d.get("order"),
            }
        )
    return out


# --------------------------------------------------------------------------- text


def format_summary(r: RoundRecord) -> str:
    """One line per round, in the words of every output: the wagers counted, the seats that
    made a Progressive Payout Wager (labelled), what was paid to players (the wagers handed
    back with a win or a push included, as the accounting report counts it)."""
    seats = ",".join(str(a["seat"]) for a in r.accepted if a.get("spot", "progressive") == "progressive")
    dice = _last_roll(r.dice)
    won = sum(p["cents"] for p in [*r.payouts, *r.meter_payouts])
    extra = f" void: {r.void_reason}" if r.status == "void" else ""
    n = len(r.accepted)
    return (
        f"round {r.number:>5} {r.status:<8} {n} wager{'' if n == 1 else 's'} "
        f"(progressive at seats {seats or 'none'}) dice {dice} "
        f"start {r.start if r.start is not None else '-'} paid to players {format_cents(won)} "
        f"(wagers returned included){extra}"
    )


def _last_roll(dice: list[dict[str, Any]]) -> str:
    """The dice of the round's last roll (``3-5-6``), a no-roll left out; ``-`` with none."""
    rolls = [d for d in dice if not d["no_roll"]]
    return "-".join(map(str, rolls[-1]["dice"])) if rolls else "-"


def _recipient_order(who: str) -> tuple[int, int]:
    """Dealer first, then seats in number order, then anything else (dead hand, burn)."""
    if who == "dealer":
        return (0, 0)
    if who.startswith("seat:") and who[5:].isdigit():
        return (1, int(who[5:]))
    if who.isdigit():  # ledgers written before recipients were named
        return (1, int(who))
    return (2, 0)


def format_detail(r: RoundRecord) -> str:
    lines = [f"round {r.number}: {r.status}  opened {r.opened}  closed {r.closed or '-'}"]
    lines += _item_lines(r, _BEFORE_THE_DEAL)
    lines += _deal_lines(r.deal)
    lines += _item_lines(r, _AFTER_THE_DEAL)
    if r.void_reason:
        lines.append(f"  void      {r.void_reason}")
    lines += [f"  fault     {f}" for f in r.faults]
    return "\n".join(lines)


def _item_lines(r: RoundRecord, parts: tuple[tuple[str, Callable[[Any], str]], ...]) -> list[str]:
    """One line per item of each of the round's ``parts`` (an attribute, its line), in that order."""
    return [line(x) for attr, line in parts for x in getattr(r, attr)]


def _rejected_line(x: dict[str, Any]) -> str:
    return f"  rejected  seat {x['seat']} {x.get('spot', 'progressive')}: {x.get('reason')}"


def _rng_line(x: dict[str, Any]) -> str:
    return f"  rng       drew {x.get('value')} -> start position {x.get('start')}"


def _burned_line(b: dict[str, Any]) -> str:
    return f"  burned    stack {b['stack']} card {b['card']} (§ 670a.13(f))"


def _paid_line(p: dict[str, Any]) -> str:
    return f"  paid      seat {p['seat']} {p['wager']} {format_cents(p['cents'])} (by the table, wager included)"


def _returned_line(x: dict[str, Any]) -> str:
    return f"  returned  seat {x['seat']} {format_cents(x['cents'])}"


def _accepted_line(a: dict[str, Any]) -> str:
    amt = format_cents(a["cents"]) if a.get("cents") is not None else "sensed"
    return f"  accepted  seat {a['seat']} {a.get('spot', 'progressive')} {amt}"


def _dice_line(d: dict[str, Any]) -> str:
    if d["no_roll"]:
        return f"  no roll   reason {d.get('reason')} (reshake, § 670a.13(a),(b))"
    return (
        f"  dice      {'-'.join(map(str, d['dice']))} = {d['total']} (red die #{d['red'] + 1}) "
        f"-> start position {d['start']}"
    )


def _deal_lines(deal: dict[str, Any]) -> list[str]:
    if not deal:
        return []
    lines = []
    for who, cards in sorted(deal.get("hands", {}).items(), key=lambda kv: _recipient_order(kv[0])):
        label = f"seat {who[5:]:>2}" if who.startswith("seat:") else who
        lines.append(f"  {label:<9} {cards}")
    return lines


def _result_line(x: dict[str, Any]) -> str:
    return f"  result    seat {x['seat']} {x['wager']} {x.get('hand')} {x['outcome']} {format_cents(x['net'])}" + (
        f" ({x['pays']})" if x.get("pays") else ""
    )


def _meter_hit_line(p: dict[str, Any]) -> str:
    return (
        f"  meter hit seat {p['seat']} {p['hand']} {format_cents(p['cents'])} (hit #{p.get('order')}, "
        "paid by an attendant)"
    )


#: what a round's detail shows before its deal and after it, in order: (its attribute, a line of each)
_BEFORE_THE_DEAL: tuple[tuple[str, Callable[[Any], str]], ...] = (
    ("accepted", _accepted_line),
    ("rejected", _rejected_line),
    ("dice", _dice_line),
    ("rng", _rng_line),
)
_AFTER_THE_DEAL: tuple[tuple[str, Callable[[Any], str]], ...] = (
    ("burned", _burned_line),
    ("results", _result_line),
    ("payouts", _paid_line),
    ("meter_payouts", _meter_hit_line),
    ("returned", _returned_line),
)
