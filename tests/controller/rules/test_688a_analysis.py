"""Exact Face Up Pai Gow Poker analyses (58 Pa. Code ch. 688a) and the regulator's figures.

The preamble to Chapters 686a-688a prints the paybacks: Ace High Bonus 96.425, 95.233,
94.169, 93.141, 92.647%; Fortune Bonus "maximum payback" 93.94, 94.15, 94.10, 93.41,
92.62, 94.10%; Progressive 75.751, 78.073, 75.568, 91.937, 80.962, 75.349, 75.746%.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from itertools import combinations, product
from math import comb
from typing import Literal

import pytest

from controller.analysis import load_all
from controller.analysis.faceup import (
    FLUSH_AT,
    ace_high_counts,
    ace_high_rank_sets,
    analyze_ace_high,
    analyze_fortune,
    analyze_progressive,
    seven_card_distribution,
    suit_pairs,
)
from controller.rules.cards import JOKER
from controller.rules.faceup_bonus import BONUS_ORDER, HIGH_CARD, bonus_hand
from tests.controller.rules._payback import payback

#: exhaustive enumerations (one shared, cached per process): the README's tier, not the fast loop
pytestmark = pytest.mark.slow


def _pct(f: Fraction | None) -> float:
    assert f is not None, "no payback: no wager"
    return float(f) * 100


def test_688a_analyzers_registered():
    a = load_all()
    for w in ("ace-high", "fortune", "progressive"):
        assert ("face-up", w) in a


# ----------------------------------------------------------------- seven-card counts
@pytest.mark.slow
def test_688a_seven_card_distribution_is_every_hand_once():
    """§ 688a.3(a): one 53-card deck; the distribution weighs each of C(53,7) hands once."""
    for mode in ("bug", "fully-wild"):
        d = seven_card_distribution(mode)
        assert d.total == comb(53, 7) == 154_143_080
        assert sum(d.joker_counts.values()) == comb(52, 6)


@pytest.mark.slow
def test_688a_seven_card_exact_counts_bug():
    """§ 688a.6(b), (e): the exact counts of the best seven-card hand (bug joker)."""
    d = seven_card_distribution("bug")
    got = {BONUS_ORDER[k]: v for k, v in d.counts.items()}
    assert got == {
        "seven-card-natural-straight-flush": 32,  # A-7 .. 8-A, 4 suits (§ 688a.6(a) ace rule)
        "royal-flush-royal-match": 72,
        "seven-card-wild-straight-flush": 196,
        "five-aces": 1128,  # C(47,2) + ... : 4 aces + joker + any 2 = C(48,2)
        "royal-flush": 26020,
        "straight-flush": 184644,
        "four-of-a-kind": 307472,
        "full-house": 4188528,
        "flush": 6172088,
        "straight": 11236028,
        "three-of-a-kind": 7470676,
        "three-pair": 2862000,
        "two-pair": 32691816,
        "pair": 64221960,
        "high-card": 24780420,
    }
    assert got["five-aces"] == comb(48, 2)
    assert got["seven-card-natural-straight-flush"] == 8 * 4


@pytest.mark.slow
def test_688a_seven_card_exact_counts_fully_wild():
    """§ 688a.12(d) Paytables 2, 5-7 "Fully wild joker": five of a kind = four of a rank + joker."""
    d = seven_card_distribution("fully-wild")
    got = {BONUS_ORDER[k]: v for k, v in d.counts.items()}
    assert got["five-of-a-kind"] == 12 * comb(48, 2)
    assert got["five-aces"] == comb(48, 2)
    assert got["four-of-a-kind"] == 1121024
    assert got["full-house"] == 5997144
    assert got["three-of-a-kind"] == 13315300
    assert sum(got.values()) == comb(53, 7)


@pytest.mark.slow
@pytest.mark.parametrize(
    "ranks", [(10, 11, 12, 13, 14), (2, 3, 4, 5, 14), pytest.param((2, 3, 4, 5, 6, 14), marks=pytest.mark.slow)]
)
def test_688a_combinatorics_equal_brute_force_on_a_small_deck(ranks):
    """The rank-multiset/suit-pattern enumeration equals classifying every hand one by one,
    on decks of a few ranks x 4 suits + joker (royal match, wheel, 7-card wild straight flush)."""
    deck = [(r - 2) * 4 + s for r in ranks for s in range(4)] + [JOKER]
    modes: tuple[Literal["bug", "fully-wild"], ...] = ("bug", "fully-wild") if len(ranks) == 5 else ("bug",)
    for mode in modes:
        brute: Counter[int] = Counter()
        for hand in combinations(deck, 7):
            brute[bonus_hand(hand, mode).order] += 1
        d = seven_card_distribution(mode, ranks)
        assert d.counts == dict(brute)
        assert d.total == comb(len(deck), 7)


# --------------------------------------------------------------------------- Fortune
#: reading 688a-7 best-pay (the default); the § 688a.6(b) ranking reading gave 91.8683, 92.1035,
#: 92.0412, 91.3790, 86.4254, 92.0412
FORTUNE_EXACT = {1: "91.9992", 2: "92.2344", 3: "92.1721", 4: "91.5100", 5: "86.5563", 6: "92.1721"}


@pytest.mark.slow
@pytest.mark.parametrize("n", range(1, 7))
def test_688a_fortune_exact_paybacks(n):
    """§ 688a.12(c) Fortune Bonus 1-6, a straight with trips paid as trips (reading 688a-7).
    The printed "maximum payback" figures are not reproducible (docs/rules-readings/688a.md)."""
    res = analyze_fortune(f"Face Up Fortune {n}", {})
    assert f"{_pct(res.payback):.4f}" == FORTUNE_EXACT[n]
    assert sum(r.count for r in res.rows) == res.total == comb(53, 7)


def test_688a_12_c_fortune_default_is_best_pay():
    """§ 688a.12(c) ranks trips above a straight; the default analysis pays the
    201,824 straights holding trips 3 to 1, the ranking reading 2 to 1."""
    d = seven_card_distribution("bug")
    a = payback(analyze_fortune("Face Up Fortune 2", {"reading": "ranking"}))
    b = payback(analyze_fortune("Face Up Fortune 2", {}))
    assert b - a == Fraction(d.straight_with_trips, d.total)  # 3 to 1 instead of 2 to 1
    assert d.straight_with_trips == 201824
    with pytest.raises(ValueError):
        analyze_fortune("Face Up Fortune 2", {"reading": "nonsense"})


def test_688a_fortune_paytable_1_three_pair_pushes():
    res = analyze_fortune("Face Up Fortune 1", {})
    row = next(r for r in res.rows if r.outcome == "three-pair")
    assert row.net == 0 and row.count == 2862000


# ------------------------------------------------------------------------- Ace High
ACE_HIGH_PRINTED = {1: 96.425, 2: 95.233, 3: 94.169, 4: 93.141, 5: 92.647}


def test_688a_ace_high_reproduces_regulator_within_0_03_pp():
    """Preamble: Ace High Bonus 96.425, 95.233, 94.169, 93.141, 92.647% (simulated figures);
    the exact values lie within 0.03 percentage points (§ 688a.6(d), § 688a.12(b))."""
    for n, printed in ACE_HIGH_PRINTED.items():
        got = _pct(analyze_ace_high(f"Ace High {n}", {}).payback)
        assert abs(got - printed) < 0.03, (n, got, printed)


def test_688a_ace_high_exact_figures():
    got = [f"{_pct(analyze_ace_high(f'Ace High {n}', {}).payback):.4f}" for n in range(1, 6)]
    assert got == ["96.4102", "95.2095", "94.1498", "93.1247", "92.6231"]


def test_688a_ace_high_dealer_counts_match_the_seven_card_distribution():
    """Two independent counts of Ace High Pai Gow hands (§ 688a.1): the rank-set/suit
    count used by the Ace High analysis, and the full seven-card distribution (every
    high-card hand with the joker is ace high; without it, those holding an ace)."""
    a = ace_high_counts()
    d = seven_card_distribution("bug")
    assert a.dealer_hands[True] == d.joker_counts[HIGH_CARD] == 1485960
    assert a.dealer_hands[False] == 12944820
    sets = ace_high_rank_sets()
    # independently: 7 distinct ranks with an ace and no five in a run (A low only in A-5);
    # 6 distinct non-ace ranks with no four of any run (the joker would fill the fifth)
    runs = [{14, 2, 3, 4, 5}] + [set(range(lo, lo + 5)) for lo in range(2, 11)]
    nat = [rs for rs in combinations(range(2, 15), 7) if 14 in rs and all(len(w & set(rs)) < 5 for w in runs)]
    jk = [rs for rs in combinations(range(2, 14), 6) if all(len(w & set(rs)) < 4 for w in runs)]
    assert len(sets[False]) == len(nat) == 833
    assert len(sets[True]) == len(jk) == 427
    assert a.total == comb(53, 7) * comb(46, 7)


def _brute_pairs(nd: int, ld: int, np_: int, lp: int, k: int) -> int:
    n = 0
    for sd in product(range(4), repeat=nd):
        if max(sd.count(s) for s in range(4)) >= ld:
            continue
        for sp in product(range(4), repeat=np_):
            if max(sp.count(s) for s in range(4)) >= lp:
                continue
            if all(sd[i] != sp[i] for i in range(k)):
                n += 1
    return n


@pytest.mark.parametrize("args", [(3, 2, 3, 2, 2), (4, 3, 3, 3, 3), (4, 2, 4, 3, 1), (5, 3, 4, 2, 0), (4, 4, 4, 4, 4)])
def test_688a_suit_pair_counting_equals_brute_force(args):
    """The shared-rank suit-pair count of the Ace High analysis, against brute force."""
    assert suit_pairs(*args) == _brute_pairs(*args)


def test_688a_flush_thresholds():
    """§ 688a.6(a): five natural suited cards, or four and the joker, make a flush."""
    assert FLUSH_AT == {False: 5, True: 4}


# ---------------------------------------------------------------------- Progressive
PROG_PRINTED = {1: "75.751", 2: "78.073", 3: "75.568", 5: "80.962"}


@pytest.mark.slow
@pytest.mark.parametrize("n", sorted(PROG_PRINTED))
def test_688a_progressive_reproduces_regulator(n):
    """Preamble: Progressive 75.751, 78.073, 75.568, ..., 80.962% — fixed pays + rate of
    progression + P(100% pay) x seed / wager (§ 688a.12(d))."""
    res = analyze_progressive(f"Face Up Progressive {n}", {})
    assert f"{_pct(res.payback):.3f}" == PROG_PRINTED[n]


def test_688a_progressive_unreproduced_tables_exact_values():
    """Paytables 4, 6, 7: printed 91.937, 75.349, 75.746%; the tables as printed give
    these exact values (docs/rules-readings/688a.md)."""
    got = {n: f"{_pct(analyze_progressive(f'Face Up Progressive {n}', {}).payback):.4f}" for n in (4, 6, 7)}
    assert got == {4: "86.5386", 6: "47.3485", 7: "56.2006"}


def test_688a_12_d_progressive_4_straight_with_trips_paid_15():
    """Paytable 4 pays three of a kind $15, a straight $7.50 (wager $5,
    returned): best-pay (688a-7) adds 201,824 x $7.50 / $5 per hand; ranking gave 86.3422%."""
    d = seven_card_distribution("bug")
    a = payback(analyze_progressive("Face Up Progressive 4", {"reading": "ranking"}))
    b = payback(analyze_progressive("Face Up Progressive 4", {}))
    assert f"{_pct(a):.4f}" == "86.3422"
    assert b - a == Fraction(d.straight_with_trips * 750, d.total * 500)


def test_688a_analyzers_reject_wrong_paytables():
    with pytest.raises(ValueError):
        analyze_fortune("Ace High 1", {})
    with pytest.raises(ValueError):
        analyze_ace_high("Face Up Fortune 1", {})
    with pytest.raises(ValueError):
        analyze_progressive("Face Up Fortune 1", {})
