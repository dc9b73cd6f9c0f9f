"""§ 688a.6(c): two high hands or two low hands of identical rank: the one holding the highest
card the other lacks ranks higher; identical hands tie."""

from __future__ import annotations

import pytest

from controller.rules.cards import parse_cards
from controller.rules.faceup import compare_high, compare_low


@pytest.mark.parametrize(
    "a,b,want",
    [
        ("Ah Kd 9c 7s 4h", "As Kc 9d 7h 3c", 1),  # no hand of (b): the 4 the other lacks
        ("8h 8d Kc 7s 4h", "8s 8c Qd 7h 4c", 1),  # a pair each: the king kicker
        ("8h 8d Kc 7s 4h", "8s 8c Kd 7h 4c", 0),  # identical rank: a tie
        ("Th 9d 8c 7s 6h", "Ts 9c 8d 7h 6c", 0),
        ("Qh Jd 9c 7s 4h", "Ah 3d 5c 6s 8h", -1),  # the ace
    ],
)
def test_688a_6_c_high_hands_by_the_highest_card_not_in_the_other(a, b, want):
    assert compare_high(parse_cards(a), parse_cards(b)) == want
    assert compare_high(parse_cards(b), parse_cards(a)) == -want


@pytest.mark.parametrize(
    "a,b,want",
    [("Ah 3d", "Kc Qd", 1), ("Ah 3d", "As 2c", 1), ("Ah 3d", "Ac 3c", 0), ("9h 9d", "Ac Kd", 1)],
)
def test_688a_6_c_low_hands_by_the_highest_card_not_in_the_other(a, b, want):
    assert compare_low(parse_cards(a), parse_cards(b)) == want
    assert compare_low(parse_cards(b), parse_cards(a)) == -want
