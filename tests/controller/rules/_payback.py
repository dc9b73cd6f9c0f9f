"""The payback of an analysis that has a wager (``AnalysisResult.payback`` is None only for
the deck's distribution, which has none), and a paytable's line that must be there."""

from __future__ import annotations

from fractions import Fraction

from controller.analysis import AnalysisResult
from controller.rules.paytables import Payout, Paytable


def payback(res: AnalysisResult) -> Fraction:
    assert res.payback is not None, f"{res.title}: no payback (no wager)"
    return res.payback


def pay_line(table: Paytable, hand: str) -> Payout:
    """The paytable's line for ``hand`` (the test fails here when it has none)."""
    line = table.payout(hand)
    assert line is not None, f"{table.name}: no line for {hand!r}"
    return line
