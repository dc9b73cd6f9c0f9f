"""The payout slip of a progressive hit: what a casino files, signed by the dealer and the
floorperson, for a jackpot paid at the table (the floorperson's validation of the payout,
§ 670a.11(h)(3)(i)(B)(III) and its peers; the casino's internal controls keep the paper).

A :class:`Slip` holds what the slip prints: the casino, the table (id, asset, location), the game,
the round, seat and hand, the kind of pay and its amount, the meter before and after it, who
validated it, the dealer's line, when it was decided and paid, and where its figures come from.
It is made from the table's ledger (``tablectl slip ROUND SEAT``: :func:`from_ledger`) or from the
LAP's records (the floor view's hit row: controller/lap/floor_slip.py); the PDF is
controller/reports/slippdf.py.

From the table's ledger: a meter hit's meter before and after are replayed exactly from its events
(the meter as it stood when the hit was paid, and after it, a reseed included); a fixed pay does not
move the meter (paid from the table inventory); a linked table's meter is the LAP's, so its slip says
to take the meter's figures from the LAP's slip (the floor view).  The table records no dealer's
name (only that a new dealer came): the slip leaves the line to write it on.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from datetime import tzinfo
from fractions import Fraction
from typing import Any

from controller.books import meters as M
from controller.core.money import format_exact
from controller.core.records import Kind
from controller.reports.report import _checkpoint_before, _replayed, table_info
from controller.reports.reportview import local_time, percent
from controller.reports.words import game_title, hand_name


class SlipError(LookupError):
    """No progressive hit at that round and seat (the message says what the round has)."""


@dataclass
class SlipMeter:
    """The meter on a slip: before and after the hit (None: not known here) and a note on them."""

    before: Fraction | int | None = None
    after: Fraction | int | None = None
    note: str = ""  # why the meter's figures are what they are (or where to find them)


@dataclass
class Slip:
    casino: str
    table: str
    asset: str
    location: str
    game: str
    level: str
    round_no: int
    seat: int
    hand: str
    kind: str  # "meter hit, 10% of the meter" | "fixed pay, from the table inventory"
    amount_cents: int | None  # None: a meter hit not yet validated (its amount is decided then)
    meter: SlipMeter  # the meter before and after the hit, and why they are what they are
    validated_by: str
    dealer: str
    decided_at: str  # when the hit was decided (settlement; for a linked hit the LAP's decision)
    paid_at: str
    source: str  # where these figures come from
    order: str = ""  # "hit #3 of level primary" and, linked, the LAP's order
    pending: bool = False  # not yet validated: the slip is printed to be completed
    extra: list[tuple[str, str]] = field(default_factory=list)

    def lines(self) -> list[tuple[str, str]]:
        """(label, value) of the slip's body, in the order printed."""
        return [*self._where(), *self._pay(), *self._who(), *self.extra, ("From", self.source)]

    def _where(self) -> list[tuple[str, str]]:
        amount = _money(self.amount_cents) if self.amount_cents is not None else "decided at the validation"
        return [
            ("Amount", amount),
            ("Casino", self.casino or "not set"),
            ("Table", self.table + (f" (asset {self.asset})" if self.asset else "")),
            ("Location", self.location or "not set"),
            ("Game", self.game),
            ("Round", str(self.round_no)),
            ("Seat", str(self.seat)),
            ("Hand", self.hand),
        ]

    def _pay(self) -> list[tuple[str, str]]:
        return [
            ("Pay", self.kind),
            ("Progressive", ", ".join(x for x in (self.level, self.order) if x) or "-"),
            ("Meter before the hit", _money(self.meter.before)),
            ("Meter after the hit", _money(self.meter.after)),
            ("About the meter", self.meter.note),
        ]

    def _who(self) -> list[tuple[str, str]]:
        return [
            ("Decided", self.decided_at or "-"),
            ("Paid", self.paid_at or self._not_yet("NOT YET: awaiting the floorperson's validation", "-")),
            ("Validated by (floorperson)", self.validated_by or self._not_yet("not yet", "not recorded")),
            ("Dealer", self.dealer),
        ]

    def _not_yet(self, pending: str, otherwise: str) -> str:
        return pending if self.pending else otherwise


def _money(v: Fraction | int | None) -> str:
    return format_exact(Fraction(v)) if v is not None else "-"


def _events(conn: sqlite3.Connection, round_no: int) -> list[tuple[int, str, str, dict[str, Any]]]:
    rows = conn.execute("SELECT seq, ts, kind, data FROM events WHERE round = ? ORDER BY seq", (round_no,)).fetchall()
    return [(int(seq), str(ts), str(kind), json.loads(data)) for seq, ts, kind, data in rows]


_PAID = (Kind.METER_PAYOUT, Kind.METER_FIXED_PAID, Kind.LINK_PAID)


#: what each of a round's records is to the slip of a seat's hit
_ROLE: dict[str, str] = {
    Kind.METER_PAYOUT: "paid",
    Kind.METER_FIXED_PAID: "paid",
    Kind.LINK_PAID: "paid",
    Kind.HIT_PENDING: "pending",
    Kind.HIT_VALIDATED: "validated",
    Kind.LINK_HIT: "claim",
}


def _find(evs: list[tuple[int, str, str, dict[str, Any]]], round_no: int, seat: int) -> dict[str, Any]:
    """The round's records of the hit at ``seat``: the pay (or the pending hit), its validation,
    a linked claim; SlipError when there is none."""
    found = {_ROLE[kind]: (seq, ts, kind, d) for seq, ts, kind, d in evs if kind in _ROLE and d.get("seat") == seat}
    if "paid" in found or "pending" in found:
        return found
    if not evs:
        raise SlipError(f"there is no round {round_no} in the ledger")
    hits = sorted({str(d.get("seat")) for _s, _t, k, d in evs if _ROLE.get(k) in ("paid", "pending")})
    others = f" (its progressive hits: seat {', '.join(hits)})" if hits else " (it has none)"
    raise SlipError(f"round {round_no} has no progressive hit at seat {seat}{others}")


def from_ledger(conn: sqlite3.Connection, round_no: int, seat: int, tz: tzinfo | None = None) -> Slip:
    """The slip of the progressive hit at (round, seat) from a table's ledger."""
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN")
    try:
        evs = _events(conn, round_no)
        found = _find(evs, round_no, seat)
        seq, ts, kind, d = found.get("paid") or found["pending"]
        info = table_info(conn, ts)  # the configuration the round was played under
        table = str(conn.execute("SELECT table_id FROM events WHERE seq = ?", (seq,)).fetchone()[0])
        slip = Slip(
            casino=info.get("casino"),
            table=table,
            asset=info.get("asset"),
            location=info.get("location"),
            game=game_title(info.get("profile.game")) if info.get("profile.game") else "not recorded",
            level=str(d.get("level") or ""),
            round_no=round_no,
            seat=seat,
            hand=hand_name(d.get("hand")),
            kind="",
            amount_cents=None,
            meter=SlipMeter(),
            validated_by="",
            dealer=_dealer(conn, evs[0][0] if evs else seq, tz),
            decided_at=local_time(found["pending"][1], tz) if "pending" in found else local_time(ts, tz),
            paid_at="",
            source=f"the table's ledger, event #{seq}",
        )
        _fill(conn, slip, found, info.get("profile.progressive.linked"), tz)
    finally:
        if own:
            conn.execute("ROLLBACK")
    return slip


def _fill(conn: sqlite3.Connection, slip: Slip, found: dict[str, Any], linked: str, tz: tzinfo | None) -> None:
    """The pay's kind, amount, meter and validation, by how it was paid."""
    validated = found.get("validated")
    if validated is not None:
        slip.validated_by = str(validated[3].get("by", ""))
    if "paid" not in found:
        _fill_pending(slip, found["pending"][3], linked)
        return
    seq, ts, kind, d = found["paid"]
    slip.amount_cents = int(d["cents"])
    slip.paid_at = local_time(ts, tz)
    if kind == Kind.METER_FIXED_PAID:
        _fill_fixed(conn, slip, seq)
    elif kind == Kind.LINK_PAID:
        _fill_linked(slip, d, linked)
    else:
        _fill_meter(conn, slip, seq, kind, d)


def _share(d: dict[str, Any]) -> str:
    frac = d.get("fraction")
    return f", {percent(Fraction(frac))} of the meter" if frac and frac != "None" else ""


def _fill_pending(slip: Slip, d: dict[str, Any], linked: str) -> None:
    """Held for the floorperson: the amount is decided at the validation (the meter as it then stands)."""
    slip.pending = True
    slip.kind = "meter hit" + _share(d)
    slip.meter.note = "the meter is read when the floorperson validates the hit"
    slip.level = slip.level or str(linked or "")


def _fill_fixed(conn: sqlite3.Connection, slip: Slip, seq: int) -> None:
    slip.kind = "fixed pay, from the table inventory"
    slip.meter.note = "a fixed pay does not move the meter"
    slip.validated_by = slip.validated_by or "on paper (the table holds no fixed pay for a validation)"
    slip.meter.before = slip.meter.after = _meter_at(conn, slip.level, seq).cents


def _fill_linked(slip: Slip, d: dict[str, Any], linked: str) -> None:
    slip.kind = f"meter hit{_share(d)}, paid by an attendant"
    slip.order = f"hit #{d.get('order', '?')} of the round; the LAP's hit #{d.get('lap_order', '?')}"
    slip.validated_by = str(d.get("by") or slip.validated_by)
    slip.meter.note = (
        f"the linked meter is the LAP's (group {linked or '?'}): its slip, on the floor view's hit row, "
        "shows the meter before and after the hit"
    )


def _fill_meter(conn: sqlite3.Connection, slip: Slip, seq: int, kind: str, d: dict[str, Any]) -> None:
    """A local meter hit: the meter before and after, replayed exactly (a reseed included)."""
    slip.kind = f"meter hit{_share(d)}, paid by an attendant"
    slip.order = f"hit #{d.get('order', '?')} of the round"
    before = _meter_at(conn, slip.level, seq)
    after = M.apply({slip.level: before}, kind, d, seq=seq)[slip.level]
    reseed = conn.execute(
        "SELECT seq, data FROM events WHERE seq > ? AND round = ? AND kind = ? ORDER BY seq LIMIT 1",
        (seq, slip.round_no, Kind.METER_RESEED),
    ).fetchone()
    reset = reseed is not None and json.loads(reseed[1]).get("level") == slip.level
    if reset:
        after = M.apply({slip.level: after}, Kind.METER_RESEED, json.loads(reseed[1]), seq=int(reseed[0]))[slip.level]
    slip.meter.before, slip.meter.after = before.value, after.value
    slip.meter.note = "replayed from the ledger: the meter as it stood when the hit was paid, and after it" + (
        " (reset to its seed)" if reset else ""
    )


def _meter_at(conn: sqlite3.Connection, level: str, seq: int) -> M.Meter:
    """The meter of ``level`` just before event ``seq`` (from the last checkpoint before it)."""
    row = conn.execute("SELECT ts FROM events WHERE seq = ?", (seq,)).fetchone()
    since, meters = _checkpoint_before(conn, str(row[0]))
    if since >= seq:
        since, meters = 0, {}
    meters = _replayed(conn, meters, since, seq)
    if level not in meters:
        raise SlipError(f"the ledger has no meter {level!r} before event #{seq}")
    return meters[level]


def _dealer(conn: sqlite3.Connection, first_seq: int, tz: tzinfo | None) -> str:
    """What the table knows of the dealer: when a new dealer was last recorded before the round."""
    row = conn.execute(
        "SELECT ts, data FROM events WHERE kind = ? AND seq < ? ORDER BY seq DESC LIMIT 1",
        (Kind.DEALER_CHANGED, first_seq),
    ).fetchone()
    if row is None:
        return "write the name below (the table records no dealer's name)"
    by = json.loads(row[1]).get("by", "")
    return f"write the name below (a new dealer was recorded at {local_time(str(row[0]), tz)}" + (
        f" by {by})" if by else ")"
    )
