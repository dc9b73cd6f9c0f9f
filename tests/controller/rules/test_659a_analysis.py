"""Exact analysis of the Fortune Asia Poker seven-card wagers (controller/analysis/fortune_asia.py).

The Board's preamble to the 659a final rulemaking: the three Insurance paytables (§ 659a.12(c))
range "in hold percentage from 3.91% to 8.05%".  One enumeration of all C(53,7) hands (a few
seconds) serves every test here."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import pytest

from controller.analysis import ANALYZERS, load_all
from controller.analysis.fortune_asia import TOTAL_HANDS, marginal
from tests.controller.rules._payback import payback

#: exhaustive enumerations (one shared, cached per process): the README's tier, not the fast loop
pytestmark = pytest.mark.slow


def run(wager: str, paytable: str | None = None, **options: str):
    load_all()
    return ANALYZERS[("fortune-asia", wager)](paytable, dict(options))


def hold(res) -> Fraction:
    return 1 - payback(res)


@pytest.mark.slow
def test_659a_12_c_insurance_holds_reproduce_the_boards_3_91_to_8_05_percent() -> None:
    holds = {t: hold(run("insurance", f"Fortune Asia Insurance {t}")) for t in "ABC"}
    assert f"{float(min(holds.values())) * 100:.2f}" == "3.91"
    assert f"{float(max(holds.values())) * 100:.2f}" == "8.05"
    assert [f"{float(holds[t]) * 100:.4f}" for t in "ABC"] == ["3.9079", "6.4384", "8.0514"]


@pytest.mark.slow
def test_659a_7_e_2_pairs_only_reading_does_not_reproduce_the_figures() -> None:
    """The rejected reading (straights/flushes do not count as 'pair or better') gives the
    player an edge on every table -- docs/rules-readings/659a.md."""
    for t in "ABC":
        assert hold(run("insurance", f"Fortune Asia Insurance {t}", reading="pairs-only")) < 0
    with pytest.raises(ValueError):
        run("insurance", None, reading="both")


@pytest.mark.slow
def test_exact_counts() -> None:
    """Totals and hand counts that can be counted by hand."""
    assert run("insurance").total == TOTAL_HANDS == comb(53, 7) == 154_143_080
    f = marginal(0)
    assert sum(f.values()) == TOTAL_HANDS
    assert f["five-aces"] == comb(48, 2)  # four aces, the joker, any two
    assert f["seven-card-straight-flush"] == 8 * 4  # 8 seven-card windows (A-7 .. 8-A) x 4 suits
    assert f["seven-card-straight-flush-joker"] == (8 * 7 - 7) * 4  # 6-card subsets of windows, 7 shared
    assert f["royal-flush-royal-match"] == 4 * 3 + 4 * 5 * 3  # natural; joker for one royal card
    assert marginal(2)["royal-flush"] == f["royal-flush"] + f["royal-flush-royal-match"]
    ins = marginal(3)
    # nine-high: exactly 9-8-7-6-4-3-2 or 9-8-7-5-4-3-2 (no straight), no flush: 4^7 - 844 suits each
    assert ins["nine-high"] == 2 * (4**7 - 4 * (comb(7, 5) * 9 + comb(7, 6) * 3 + 1))


def test_fortune_and_progressive_paybacks() -> None:
    """Regression figures (4 decimals) for § 659a.12(b) A-D and § 659a.12(d)(1)."""
    got = {t: f"{float(run('fortune', f'Fortune Asia Fortune {t}').payback) * 100:.4f}" for t in "ABCD"}
    assert got == {"A": "92.2344", "B": "92.1721", "C": "91.9992", "D": "91.5100"}
    assert f"{float(run('progressive').payback) * 100:.4f}" == "46.7141"  # meter $2,000, $1
    hi = run("progressive", None, meter="$100,000")
    lo = run("progressive", None, meter="$2,000")
    # each $1 of meter is worth (228 * 100% + 1128 * 10%) / C(53,7) per $1 wagered
    assert hi.payback - lo.payback == Fraction(98_000 * (228 * 10 + 1128), 10 * TOTAL_HANDS)
