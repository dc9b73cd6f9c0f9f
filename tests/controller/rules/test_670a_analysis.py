"""Exact analysis of the Six-Card Fortune optional wagers (§ 670a.11(h), § 670a.12(b)-(d))."""

from fractions import Fraction
from itertools import product
from math import comb, prod
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from controller.analysis import format_result, load_all
from controller.analysis.sixcard import (
    TOTAL_HANDS,
    analyze_fortune,
    analyze_insurance,
    analyze_progressive,
    class_representative,
    flush_subsets,
    rank_multisets,
    six_card_distribution,
)
from controller.rules.poker import best_five
from controller.rules.sixcard import hand_key
from tests.controller.rules._bug_reference_670a import ref_category
from tests.controller.rules._payback import payback


def dist():
    return dict(six_card_distribution()[0])


def test_counts_every_six_card_hand_once_670a_3_a():
    d = dist()
    assert sum(d.values()) == TOTAL_HANDS == comb(53, 6) == 22_957_480


def test_exact_counts_derived_by_hand_670a_6_b():
    """Five aces: the four aces, the joker and any of the 48 other cards.  Royal flush: a natural royal
    plus any of 48 cards (4 x 48), or four of the five royal cards of a suit with the joker and any card
    but the fifth (4 x 5 x 47).  Eight-high (the lowest no-pair hand of six cards): ranks 8-7-5-4-3-2 or
    8-7-6-4-3-2 ... -- the six ranks from 2..8 without a 5-card run, 3 sets -- in any suits but a flush."""
    d = dist()
    assert d["five-aces"] == 48
    assert d["royal-flush"] == 4 * 48 + 4 * 5 * 47
    # 6 distinct ranks from 2..8 containing 8 and no five in a row: {2,3,4,5,7,8}, {2,3,4,6,7,8}, {2,3,5,6,7,8}
    # ({2,4,5,6,7,8} holds 4-8, {3,4,5,6,7,8} holds 3-7); suits: 4^6 less the flushes (4 x (6 x 3 + 1))
    assert d["eight-high"] == 3 * (4**6 - 4 * (6 * 3 + 1))


def test_class_weights_match_brute_force_suit_assignments():
    """The flush-class weights, checked against enumerating every suit assignment for sample multisets."""
    for joker, n in ((False, 6), (True, 5)):
        for counts in rank_multisets(n)[::97]:
            ranks = [r for r, c in zip(range(2, 15), counts) for _ in range(c)]
            choices = [[s for s in product(range(4), repeat=c) if list(s) == sorted(set(s))] for c in counts if c]
            total = prod(len(ch) for ch in choices)
            assert total == prod(comb(4, c) for c in counts)
            want: dict[frozenset[Any], int] = {}
            for combo in product(*choices):
                suits = [s for grp in combo for s in grp]
                for s in range(4):
                    f = frozenset(r for r, x in zip(ranks, suits) if x == s)
                    if len(f) >= (4 if joker else 5):
                        want[f] = want.get(f, 0) + 1
            got = {f: 4 * w for f, w in flush_subsets(counts, joker)}
            assert got == want


@hsettings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 52), min_size=6, max_size=6, unique=True))
def test_every_hand_ranks_like_its_class_representative(cards):
    rep = class_representative(tuple(cards))
    assert sorted(x // 4 for x in rep if x != 52) == sorted(x // 4 for x in cards if x != 52)
    assert hand_key(best_five(rep)) == hand_key(best_five(cards))


@hsettings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 52), min_size=6, max_size=6, unique=True))
def test_shared_evaluator_category_matches_test_reference(cards):
    assert best_five(cards).category.text == ref_category(cards)


@pytest.mark.slow
@pytest.mark.soak
def test_full_enumeration_agrees_with_the_classes():
    """All 22,957,480 hands evaluated one by one (batch evaluator, ~15 s) give the same counts."""
    assert six_card_distribution("enumerate")[0] == six_card_distribution("classes")[0]


def _row(res, outcome):
    return next(r for r in res.rows if r.outcome == outcome)


def test_fortune_bonus_payback_670a_12_b_1():
    res = analyze_fortune(None, {})
    d = dist()
    pays = {
        "five-aces": 1000,
        "royal-flush": 250,
        "straight-flush": 100,
        "four-of-a-kind": 50,
        "full-house": 15,
        "flush": 10,
        "straight": 8,
        "three-of-a-kind": 5,
    }
    win = sum(d[k] * (p + 1) for k, p in pays.items())
    assert res.payback == Fraction(win, TOTAL_HANDS)
    assert f"{float(res.payback) * 100:.4f}" == "87.8709"
    assert _row(res, "lose").count == TOTAL_HANDS - sum(d[k] for k in pays)


def test_fortune_envy_expectation_is_linear_670a_12_b_2():
    base = analyze_fortune(None, {"wager": "$5"})
    two = analyze_fortune(None, {"wager": "$5", "envy_players": "2"})
    d = dist()
    envy = Fraction(
        2
        * (
            d["five-aces"] * 5000
            + d["royal-flush"] * 1000
            + d["straight-flush"] * 250
            + d["four-of-a-kind"] * 75
            + d["full-house"] * 25
        ),
        5 * TOTAL_HANDS,
    )
    assert payback(two) - payback(base) == envy
    # a $1 wager is not a Qualifying Fortune Bonus Wager (§ 670a.1): no envy
    assert analyze_fortune(None, {"wager": "$1", "envy_players": "2"}).payback == base.payback


def test_insurance_payback_and_joker_is_ace_high_670a_12_c():
    res = analyze_insurance(None, {})
    d = dist()
    pays = {"eight-high": 100, "nine-high": 30, "ten-high": 10, "jack-high": 7, "queen-high": 4, "king-high": 3}
    assert res.payback == Fraction(sum(d[k] * (p + 1) for k, p in pays.items()), TOTAL_HANDS)
    assert f"{float(res.payback) * 100:.4f}" == "92.3686"


def test_progressive_payback_at_seed_and_meter_option_670a_12_d():
    d = dist()
    res = analyze_progressive(None, {})
    fixed = {"straight-flush": 300, "four-of-a-kind": 150, "full-house": 15, "flush": 6, "straight": 3}
    returned = sum(d[k] * n for k, n in fixed.items()) + d["five-aces"] * 5000 + d["royal-flush"] * 500
    assert res.payback == Fraction(returned, TOTAL_HANDS)
    assert f"{float(res.payback) * 100:.4f}" == "57.3887"
    big = analyze_progressive(None, {"meter": "$20,000"})
    # $15,000 more on the meter: +15,000 units per five aces, +1,500 (10%) per royal flush
    assert payback(big) - payback(res) == Fraction(d["five-aces"] * 15000 + d["royal-flush"] * 1500, TOTAL_HANDS)
    envy = analyze_progressive(None, {"envy_players": "5"})
    assert payback(envy) - payback(res) == Fraction(
        5 * (d["five-aces"] * 100 + d["royal-flush"] * 50 + d["straight-flush"] * 10 + d["four-of-a-kind"] * 5),
        TOTAL_HANDS,
    )


def test_analyzers_registered_and_bad_options_rejected():
    a = load_all()
    for w in ("fortune", "insurance", "progressive"):
        assert ("six-card-fortune", w) in a
    with pytest.raises(ValueError, match="unknown option"):
        analyze_insurance(None, {"meter": "$1"})
    with pytest.raises(ValueError, match="amount"):
        analyze_progressive(None, {"meter": "lots"})
    with pytest.raises(ValueError, match="other players"):
        analyze_progressive(None, {"envy_players": "9"})
    assert format_result(analyze_insurance(None, {})).splitlines()[-1] == "payback: 92.3686%"
