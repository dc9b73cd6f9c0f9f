"""58 Pa. Code § 659a.11(c): the dealer's hands are set the house way of the Rules Submission;
the house ways here never foul (§ 659a.11(b), (f)(1)(iii)-(iv))."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.rules.cards import JOKER, CardError, cards_str, parse_cards
from controller.rules.fortune_asia import (
    DEFAULT_HOUSE_WAY,
    HOUSE_WAYS,
    FortuneAsiaError,
    get_house_way,
    set_house_way,
)

seven = st.lists(st.integers(0, JOKER), min_size=7, max_size=7, unique=True)


@pytest.mark.slow  # over 2 s on a quiet 2-core machine
@settings(max_examples=500, deadline=None)
@given(seven)
def test_659a_11_c_house_ways_never_foul(cards: list[int]) -> None:
    for name, fn in HOUSE_WAYS.items():
        s = fn(tuple(cards))
        assert sorted(s.cards) == sorted(cards), name
        assert s.foul() is None, f"{name}: {cards_str(cards)} -> {s}"


@pytest.mark.slow
def test_659a_11_c_house_ways_never_foul_seeded_sweep() -> None:
    """A fixed sweep of 1,000 deals (every rank pattern class shows up), besides hypothesis."""
    rng = random.Random(659)
    deck = list(range(53))
    for _ in range(1000):
        rng.shuffle(deck)
        for name, fn in HOUSE_WAYS.items():
            s = fn(tuple(deck[:7]))
            assert s.foul() is None, f"{name}: {cards_str(deck[:7])} -> {s}"


def hw(text: str) -> tuple[str, str, str]:
    s = set_house_way(parse_cards(text, count=7))
    return (cards_str(sorted(s.high.cards)), cards_str(sorted(s.medium.cards)), cards_str(s.low.cards))


def srt(text: str) -> str:
    return cards_str(sorted(parse_cards(text)))


@pytest.mark.parametrize(
    "hand, high, medium, low",
    [
        # HW-1 four of a kind high; a pair among the rest medium
        ("9s 9d 9h 9c Kd Kc 2s", "9s 9d 9h 9c", "Kd Kc", "2s"),
        ("9s 9d 9h 9c Kd 5c 2s", "9s 9d 9h 9c", "Kd 5c", "2s"),
        ("As Ad Ah Ac Jk 5c 2s", "As Ad Ah Ac", "Jk 5c", "2s"),  # five aces
        # HW-2 two trips
        ("Ks Kd Kh 9c 9d 9h 2s", "Ks Kd Kh 2s", "9h 9d", "9c"),
        # HW-3 trips and a pair
        ("Ks Kd Kh 9c 9d 5h 2s", "Ks Kd Kh 2s", "9c 9d", "5h"),
        # HW-4 trips; the four odd cards a straight
        ("Ks Kd Kh 5c 6d 7h 8s", "5c 6d 7h 8s", "Ks Kh", "Kd"),
        ("Ks Kd Kh 5c 6d 7h Ts", "Ks Kd Kh 5c", "Ts 7h", "6d"),
        # HW-5 three pair
        ("Ks Kd 9h 9c 4d 4h 2s", "9h 9c 4d 4h", "Ks Kd", "2s"),
        # HW-6 two pair split
        ("Ks Kd 9h 9c Ad 4h 2s", "Ks Kd 4h 2s", "9h 9c", "Ad"),
        # HW-7 one pair; four odd cards a flush
        ("Ks Kd 9h 7h 4h 2h Qs", "9h 7h 4h 2h", "Ks Kd", "Qs"),
        ("Ks Kd 9h 7c 4h 2h Qs", "Ks Kd 4h 2h", "Qs 9h", "7c"),
        # HW-8 no pair
        ("As Kd 9h 7c 5h 3h 2s", "As 5h 3h 2s", "Kd 9h", "7c"),
        ("As Kd Qh Jc 5h 3h 2s", "As Kd Qh Jc", "5h 3h", "2s"),  # the straight high
        ("Jk Kd Th 8c 6h 3d 2s", "Jk 6h 3d 2s", "Kd Th", "8c"),  # the joker an ace
        ("Jk Kd 9h 7c 6h 3h 2s", "Jk 9h 6h 3h", "Kd 7c", "2s"),  # the joker makes a flush
    ],
)
def test_659a_11_c_default_house_way_rules(hand: str, high: str, medium: str, low: str) -> None:
    """The documented decision list (docs/rules-readings/659a.md, HW-1 .. HW-8)."""
    assert hw(hand) == (srt(high), srt(medium), srt(low))


def test_659a_11_c_registry() -> None:
    assert DEFAULT_HOUSE_WAY in HOUSE_WAYS and "highest-high" in HOUSE_WAYS
    with pytest.raises(FortuneAsiaError):
        get_house_way("no-such-way")
    with pytest.raises(CardError):
        set_house_way(parse_cards("As Kd Qh Jc 5h 3h"))
