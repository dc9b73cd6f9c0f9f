"""Common settlement types shared by every game's rules module.

Pure: no I/O.  All money is integer cents.  A percentage-of-meter progressive
payout is *not* turned into cents here: the amount depends on the meter when
the seat is paid (§ 670a.12(d)(3)), so the result carries ``meter_fraction``
and the meters/ledger layer fixes the cents at payment time.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

Outcome = Literal["win", "lose", "push", "surrender", "returned", "copy"]


@dataclass(frozen=True)
class WagerResult:
    seat: int                 # betting position (1-based seat number at the table)
    wager: str                # wager id: "base", "double-down", "fortune", "progressive", "fortune-envy", ...
    amount: int               # cents wagered (0 for envy bonuses, which need no wager of their own beyond the qualifying one)
    outcome: Outcome
    #: cents the player gains (+) or loses (-) on this wager, excluding the returned wager.
    #: lose -> -amount; push/returned -> 0; surrender -> -(amount forfeited)
    net: int
    hand: str | None = None          # category/hand that decided it ("royal-flush", "king-high", "sum-12" ...)
    paytable: str | None = None      # paytable name used, when one was
    pays: str | None = None          # payout as printed ("250 to 1", "10% of meter", "$50")
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


def table_net(results: list[WagerResult]) -> int:
    """The house's net for a set of results: minus the players' net (meter pays excluded)."""
    return -sum(r.net for r in results)


def whole_cents(x: Fraction, *, rule: str) -> int:
    """Convert an exact payout to cents, refusing to drop a fraction silently.

    ``rule`` names the section that says how to round when the regulations do; if
    the amount is not whole a ValueError explains it (paytables at whole-dollar
    wagers always give whole cents)."""
    if x.denominator != 1:
        raise ValueError(f"payout {x} cents is not a whole number of cents ({rule})")
    return int(x)


def round_up_to(amount_cents: Fraction | int, step_cents: int) -> int:
    """Round up to the next multiple of ``step_cents`` (e.g. 25 for § 621a.11(a) vigorish)."""
    a = Fraction(amount_cents)
    q = -((-a) // step_cents)  # ceiling division on Fractions
    return int(q) * step_cents
