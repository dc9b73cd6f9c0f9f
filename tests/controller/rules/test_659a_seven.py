"""58 Pa. Code § 659a.6(d) (Fortune Bonus), § 659a.6(e) (Progressive), § 659a.7(e)(2) and
§ 659a.11(h)(2) (Insurance): the seven-card hands."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.analysis.fortune_asia import facts_of_multiset
from controller.rules import poker
from controller.rules.cards import JOKER, CardError, make_card, parse_cards
from controller.rules.fortune_asia_seven import (
    FORTUNE_ORDER,
    fortune_hand,
    insurance_hand,
    is_envy_qualifying,
    progressive_hand,
    seven_facts,
)


def F(text: str, q: str = "straight") -> str | None:
    return fortune_hand(seven_facts(parse_cards(text, count=7)), q)


def P(text: str) -> str | None:
    return progressive_hand(seven_facts(parse_cards(text, count=7)))


def I(text: str) -> str | None:  # noqa: E743 - reads like the regulation's Insurance column
    return insurance_hand(seven_facts(parse_cards(text, count=7)))


@pytest.mark.parametrize(
    "hand, fortune, progressive",
    [
        ("8s 9s Ts Js Qs Ks As", "seven-card-straight-flush", "seven-card-straight-flush"),  # (d)(1), (e)(1)
        ("As 2s 3s 4s 5s 6s 7s", "seven-card-straight-flush", "seven-card-straight-flush"),  # ace low
        ("As Ks Qs Js Ts Kh Qh", "royal-flush-royal-match", "royal-flush"),  # (d)(2)
        ("Jk Ks Qs Js Ts Kh Qh", "royal-flush-royal-match", "royal-flush"),  # "with or without a joker"
        ("As Ks Qs Js Ts Kh Qd", "royal-flush", "royal-flush"),  # K and Q not suited
        ("2s 3s 4s 6s 7s 8s Jk", "seven-card-straight-flush-joker", "seven-card-straight-flush"),  # (d)(3), (e)(1)
        ("As Ad Ah Ac Jk 2c 7d", "five-aces", "five-aces"),  # (d)(4), (e)(2)
        ("Ks Qs Js Ts Jk 2c 7d", "royal-flush", "royal-flush"),  # (e)(3) joker royal
        ("9h 8h 7h 6h 5h 2c 2d", "straight-flush", "straight-flush"),  # (d)(6)
        ("As 2s 3s 4s Jk Kd Kc", "straight-flush", "straight-flush"),  # joker A-2-3-4-5
        ("9h 9d 9s 9c 5h 2c 3d", "four-of-a-kind", "four-of-a-kind"),  # (d)(7)
        ("Jk As Ad Ah 5h 2c 3d", "four-of-a-kind", "four-of-a-kind"),  # joker as the 4th ace
        ("9h 9d 9s 5c 5h 2c 3d", "full-house", "full-house"),  # (d)(8)
        ("9h 9d 9s 5c 5h 5d 3d", "full-house", "full-house"),  # two trips
        ("Jk Ad 9s 9c 9h 2c 3d", "full-house", "full-house"),
        ("Kh 9h 7h 5h 2h 2c 3d", "flush", None),  # (d)(9)
        ("9h 9d 9s 5c 6h 7c 8d", "three-of-a-kind", None),  # (d)(10) above (d)(11)
        ("Jk 9d 9s 5c 4h 3c 2d", "straight", None),  # (d)(11), joker the 6 (or A)
        ("Jk Ad 9s 7c 4h 2c Qd", None, None),  # a pair of aces only
        ("Kh Kd 9s 9c 4h 4c Qd", None, None),  # three pair: A/B/D lose
    ],
)
def test_659a_6_d_e_seven_card_hands(hand: str, fortune: str | None, progressive: str | None) -> None:
    assert F(hand) == fortune
    assert P(hand) == progressive


def test_659a_11_h_1_three_pair_pushes_only_on_paytable_c() -> None:
    """Paytable C: "Three pair  Push" (§ 659a.12(b)); three pair or higher (§ 659a.11(h)(1)(i))."""
    assert F("Kh Kd 9s 9c 4h 4c Qd", "three-pair") == "three-pair"
    assert F("Jk Ad 9s 9c 4h 4c Qd", "three-pair") == "three-pair"  # joker pairs the ace
    assert F("Kh Kd 9s 9c 4h 4c Qd") is None
    with pytest.raises(ValueError):
        F("Kh Kd 9s 9c 4h 4c Qd", "two-pair")


def test_659a_1_envy_qualifying_hand_is_four_of_a_kind_or_better() -> None:
    assert is_envy_qualifying(seven_facts(parse_cards("9h 9d 9s 9c 5h 2c 3d")))
    assert is_envy_qualifying(seven_facts(parse_cards("9h 8h 7h 6h 5h 2c 2d")))
    assert not is_envy_qualifying(seven_facts(parse_cards("9h 9d 9s 5c 5h 2c 3d")))


@pytest.mark.parametrize(
    "hand, expected",
    [
        ("9h 8d 7s 6c 4h 3c 2d", "nine-high"),  # no straight: the old "9-high" hand
        ("9h 8d 7s 5c 4h 3c 2d", "nine-high"),
        ("9h 8d 7s 6c 5h 3c 2d", None),  # 5-6-7-8-9 straight: better than a pair
        ("Th 8d 7s 6c 4h 3c 2d", "ten-high"),
        ("Ah Jd 9s 7c 5h 3c 2d", "ace-high"),
        ("Ah Jh 9h 7h 5h 3c 2d", None),  # a flush
        ("Jk Kd 9s 7c 5h 3c 2d", "ace-high"),  # joker = ace (§ 659a.6(a))
        ("Jk Kd 9s 7c 5h 4c 3d", None),  # joker completes 3-4-5-6-7
        ("Jk Kd 9s 7c 5h 4c 2d", "ace-high"),  # two gaps: no straight; the joker is an ace
        ("Jk Kh 9h 7h 5d 4c 2h", None),  # joker completes a flush
        ("Jk Ad 9s 7c 5h 3c Qd", None),  # joker + ace = a pair of aces
        ("Kh Kd 9s 7c 5h 3c 2d", None),  # a pair
    ],
)
def test_659a_11_h_2_insurance(hand: str, expected: str | None) -> None:
    assert I(hand) == expected


def test_bad_input_is_a_clear_error() -> None:
    with pytest.raises(CardError):
        seven_facts(parse_cards("As Kd Qh Jd Ts 9c"))
    with pytest.raises(CardError):
        seven_facts([1, 2, 3, 4, 5, 6, 6])
    with pytest.raises(CardError):
        seven_facts([1, 2, 3, 4, 5, 6, 99])


# --- cross-check with the shared evaluator (controller/rules/poker.py) --------------------
_FIVE_CARD = {
    poker.Category.FIVE_ACES: "five-aces",
    poker.Category.ROYAL_FLUSH: "royal-flush",
    poker.Category.STRAIGHT_FLUSH: "straight-flush",
    poker.Category.FOUR_OF_A_KIND: "four-of-a-kind",
    poker.Category.FULL_HOUSE: "full-house",
    poker.Category.FLUSH: "flush",
    poker.Category.THREE_OF_A_KIND: "three-of-a-kind",
    poker.Category.STRAIGHT: "straight",
}
_DOWN = {
    "seven-card-straight-flush": ("royal-flush", "straight-flush"),
    "seven-card-straight-flush-joker": ("royal-flush", "straight-flush"),
    "royal-flush-royal-match": ("royal-flush",),
}

seven = st.lists(st.integers(0, JOKER), min_size=7, max_size=7, unique=True)


@settings(max_examples=400, deadline=None)
@given(seven)
def test_659a_6_d_agrees_with_the_shared_evaluator(cards: list[int]) -> None:
    """The best § 659a.6(d) hand = the best, in the (d) order, of the categories the bug-joker
    evaluator gives the 21 five-card subsets (the 7-card hands aside, which hold a royal or SF)."""
    found = {_FIVE_CARD.get(poker.eval_five(five).category) for five in itertools.combinations(cards, 5)} - {None}
    expect = min(found, key=FORTUNE_ORDER.index) if found else None
    got = fortune_hand(seven_facts(cards))
    assert got in _DOWN and expect in _DOWN[got] or got == expect


@settings(max_examples=200, deadline=None)
@given(seven, st.permutations([0, 1, 2, 3]))
def test_659a_6_suit_permutation_invariance(cards: list[int], perm: list[int]) -> None:
    other = [c if c == JOKER else (c // 4) * 4 + perm[c % 4] for c in cards]
    a, b = seven_facts(cards), seven_facts(other)
    assert (fortune_hand(a, "three-pair"), progressive_hand(a), insurance_hand(a)) == (
        fortune_hand(b, "three-pair"),
        progressive_hand(b),
        insurance_hand(b),
    )


# --- the analysis' combinatorial weights against brute force over the suits -------------
@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(2, 14), min_size=6, max_size=7).filter(lambda r: max(Counter(r).values()) <= 4), st.booleans()
)
def test_analysis_weights_match_brute_force_over_suits(ranks: list[int], joker: bool) -> None:
    """For one rank multiset, every way to give the cards suits, classified card by card,
    matches the analysis' closed-form class counts (controller/analysis/fortune_asia.py)."""
    ranks = ranks[:6] if joker else (ranks + [2])[:7] if len(ranks) == 6 else ranks
    if max(Counter(ranks).values()) > 4:
        return
    cnt = Counter(ranks)
    counts = tuple(cnt.get(r, 0) for r in range(15))
    per_rank = [
        [tuple(make_card(r, s) for s in suits) for suits in itertools.combinations(range(4), c)]
        for r, c in sorted(cnt.items())
    ]
    brute: Counter[Any] = Counter()
    for choice in itertools.product(*per_rank):
        cards = [c for group in choice for c in group] + ([JOKER] if joker else [])
        brute[seven_facts(cards)] += 1
    assert brute == Counter(dict(facts_of_multiset(counts, joker)))


def test_analysis_weights_royal_match_shape() -> None:
    counts = [0] * 15
    for r in (14, 13, 13, 12, 12, 11, 10):
        counts[r] += 1
    got = Counter(dict(facts_of_multiset(tuple(counts), False)))
    assert sum(w for f, w in got.items() if f.royal_match) == 12  # 4 royal suits x 3 K-Q suits
