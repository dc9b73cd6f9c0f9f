"""Exact Over/Under analysis reproduces the regulator's figures (preamble to Chapter 686a)."""

from __future__ import annotations

from fractions import Fraction

from controller.analysis import load_all
from controller.analysis.overunder import analyze_ante, analyze_bonus, best_decision, total_distribution
from controller.rules.overunder import Decision


def _pct(f: Fraction | None, places: int) -> str:
    assert f is not None, "no payback: no wager"
    return f"{float(f) * 100:.{places}f}"


def test_686a_required_wagers_payback_98_95():
    """Preamble: "In Over/Under, the expected payback would be 98.95% on the required wagers" —
    six decks without replacement, best decision after the first card, reading 686a-1; the Ante
    and the decision wager each paid at 1 to 1 (§ 686a.8(a))."""
    res = analyze_ante(None, {})
    assert _pct(res.payback, 2) == "98.95"
    assert _pct(res.payback, 4) == "98.9502"
    assert res.total == 312 * 311 * 310
    assert sum(r.count for r in res.rows) == res.total
    assert res.wagered == 2  # never surrender: the Ante and the decision wager are always both in


def test_686a_bonus_payback_94_39():
    """Preamble: Bonus Wager 94.393% (printed); exact six-deck enumeration 94.3948% (to 2 decimals 94.39)."""
    res = analyze_bonus(None, {})
    assert _pct(res.payback, 2) == "94.39"
    assert _pct(res.payback, 4) == "94.3948"
    assert res.total == 312 * 311 * 310


def test_686a_reading_1_push_reading_does_not_reproduce():
    """Reading 686a-1: if Over 23 pushed on 6-17 (Under 18 on 24-33) the game would pay back over 100%."""
    assert _pct(analyze_ante(None, {"other_side": "push"}).payback, 4) == "108.9689"


def test_686a_reading_2_infinite_deck_does_not_reproduce():
    """Reading 686a-2: an infinite deck gives 99.23% / 95.68%, not the published figures; six decks do."""
    assert _pct(analyze_ante(None, {"decks": "infinite"}).payback, 2) == "99.23"
    assert _pct(analyze_bonus(None, {"decks": "infinite"}).payback, 2) == "95.68"


def test_686a_best_strategy():
    """Best decision after the first card (§ 686a.7(g)): under 18 on 2-5, over 23 on 6-11; never surrender."""
    assert [best_decision(v) for v in range(2, 12)] == [Decision.UNDER_18] * 4 + [Decision.OVER_23] * 6


def test_686a_total_distribution_exact_counts():
    """First card an ace (11): the next two cards are 311*310 ordered pairs; A-A-A needs two of the 23 aces left."""
    d = total_distribution(11)
    assert sum(d.values()) == 311 * 310
    assert d[33] == 23 * 22
    assert min(d) == 15 and max(d) == 33


def test_686a_analyzers_registered():
    reg = load_all()
    assert ("over-under", "ante") in reg and ("over-under", "bonus") in reg


def test_686a_surrender_never_best():
    """Reading 686a-3: every first card has a wager better than surrender's -1 (worst: a 6, -0.8589 with Over 23)."""
    from controller.analysis.overunder import decision_ev

    best = {v: max(decision_ev(v, d) for d in Decision) for v in range(2, 12)}
    assert min(best, key=lambda v: best[v]) == 6
    assert f"{float(best[6]):.4f}" == "-0.8589"
    assert all(b > -1 for b in best.values())
