"""Common settlement types shared by every game's rules module.

Pure: no I/O.  All money is integer cents.  A percentage-of-meter progressive
payout is *not* turned into cents here: the amount depends on the meter when
the seat is paid (§ 670a.12(d)(3)), so the result carries ``meter_fraction``
and the meters/ledger layer fixes the cents at payment time.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # only for annotations: paytables imports nothing from here either
    from .paytables import Payout, Paytable

Outcome = Literal["win", "lose", "push", "surrender", "returned", "copy"]


@dataclass(frozen=True)
class WagerResult:
    seat: int  # betting position (1-based seat number at the table)
    wager: str  # wager id: "base", "double-down", "fortune", "progressive", "fortune-envy", ...
    amount: int  # cents wagered (0 for envy bonuses, which need no wager of their own beyond the qualifying one)
    outcome: Outcome
    #: cents the player gains (+) or loses (-) on this wager, excluding the returned wager.
    #: lose -> -amount; push/returned -> 0; surrender -> -(amount forfeited)
    net: int
    hand: str | None = None  # category/hand that decided it ("royal-flush", "king-high", "sum-12" ...)
    paytable: str | None = None  # paytable name used, when one was
    pays: str | None = None  # payout as printed ("250 to 1", "10% of meter", "$50")
    #: for percentage-of-meter pays: the fraction of the meter owed.  ``net`` then holds only
    #: what is settled apart from the meter: -amount when the wager was collected and the meter
    #: amount is the whole pay (670a, 659a), 0 when the paytable returns the original wager (688a)
    meter_fraction: Fraction | None = None
    #: the vigorish (commission) collected on a win, cents (§ 621a.11(a)); already deducted from net
    commission: int = 0
    detail: str = ""

    @property
    def is_meter_pay(self) -> bool:
        return self.meter_fraction is not None


@dataclass(frozen=True, slots=True)
class Stake:
    """A wager as a settlement is given it: its betting position, which wager, the cents wagered
    (what a :class:`WagerResult` starts with)."""

    seat: int
    wager: str
    amount: int


def table_net(results: list[WagerResult]) -> int:
    """The house's net for a set of results: minus the players' net (meter pays excluded)."""
    return -sum(r.net for r in results)


def wager_cents(seat: int, what: str, v: object, error: type[ValueError] = ValueError) -> int:
    """A wager amount as given to a settlement: a whole, non-negative number of cents (an
    ``int``, not a bool or float); otherwise ``error`` naming the seat and the wager."""
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise error(f"seat {seat}: {what} wager {v!r} is not a whole, non-negative number of cents")
    return v


def whole_cents(x: Fraction, *, rule: str) -> int:
    """Convert an exact payout to cents, refusing to drop a fraction silently.

    ``rule`` names the section that says how to round when the regulations do; if
    the amount is not whole a ValueError explains it (paytables at whole-dollar
    wagers always give whole cents)."""
    if x.denominator != 1:
        raise ValueError(f"payout {x} cents is not a whole number of cents ({rule})")
    return int(x)


@dataclass(frozen=True)
class EvenMoney:
    """How a game's main wager is paid by its paytable's ``win`` row (1 to 1 where the chapter
    prints it: § 670a.12(a), § 688a.12(a)): the win, a push, or the wager lost."""

    pt: Paytable
    win: Payout
    section: str  # where the chapter prints the pay

    def result(self, seat: int, wager: str, amount: int, outcome: str, hand: str, detail: str) -> WagerResult:
        if outcome == "win":
            net = whole_cents(self.win.net_win(amount), rule=self.section)
            return WagerResult(seat, wager, amount, "win", net, hand, self.pt.name, self.win.text, detail=detail)
        if outcome == "push":
            return WagerResult(seat, wager, amount, "push", 0, hand, detail=detail)
        return WagerResult(seat, wager, amount, "lose", -amount, hand, detail=detail)


def round_up_to(amount_cents: Fraction | int, step_cents: int) -> int:
    """Round up to the next multiple of ``step_cents`` (e.g. 25 for § 621a.11(a) vigorish)."""
    a = Fraction(amount_cents)
    q = -((-a) // step_cents)  # ceiling division on Fractions
    return int(q) * step_cents


def paytable_result(
    stake: Stake, hand: str | None, pt: Paytable, payout: Payout | None, rule: str, *, meter_note: str | None = None
) -> WagerResult:
    """Settle ``stake`` on ``hand`` by ``payout``, the row of paytable ``pt`` it won
    (None: the hand is not in the table, and the wager loses).

    ``lose`` loses the wager; ``push`` returns it; odds, "N for 1" and fixed pays are
    exact and must come to whole cents.  A ``meter`` pay is only for a wager collected
    at lock-out whose meter share is the whole pay (§ 670a.12(d)(3), § 659a.11(h)(3)):
    ``net`` is then -amount and ``meter_fraction`` what the meter owes when the seat
    is paid; ``meter_note`` says why, and without one a meter row is an error."""
    seat, wager, amount = stake.seat, stake.wager, stake.amount
    if payout is None or payout.kind == "lose":
        return WagerResult(seat, wager, amount, "lose", -amount, hand, pt.name, None, detail=rule)
    if payout.kind == "push":
        return WagerResult(seat, wager, amount, "push", 0, hand, pt.name, payout.text, detail=rule)
    if payout.kind == "meter":
        if meter_note is None:
            raise ValueError(
                f"{pt.name}: {hand} pays {payout.text!r} from the meter; "
                f"the {wager} wager is not paid from a meter ({pt.section})"
            )
        return WagerResult(
            seat,
            wager,
            amount,
            "win",
            -amount,
            hand,
            pt.name,
            payout.text,
            meter_fraction=payout.ratio,
            detail=f"{rule}; {meter_note}",
        )
    net = whole_cents(payout.net_win(amount, per_wager_cents=pt.per_wager_cents), rule=f"{pt.section} {hand}")
    return WagerResult(seat, wager, amount, "win", net, hand, pt.name, payout.text, detail=rule)
