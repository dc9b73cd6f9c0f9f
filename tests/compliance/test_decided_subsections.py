"""Subsections the controller decides whose rule had code but no test citing it: each test here
checks the rule on its edge, so a broken rule fails it (tools/compliance_mutate.py alters the
code the matrix names and runs these)."""

from __future__ import annotations

import pytest

from controller.rules.djwild import DJSeat
from tests.controller.rules.test_687a_rules import _round, by_wager


@pytest.mark.parametrize(
    "hand,outcome,net",
    [
        ("Ah Ac Ad 6s 5h", "win", 900),  # three of a kind, the lowest eligible hand: 9 to 1
        ("9h 8s 7d 6c 5h", "win", 3000),  # a straight: 30 to 1
        ("Ah Ac Qd Qs 5h", "lose", -100),  # two pair: not eligible
        ("Ah Ac 9d 6s 5h", "lose", -100),  # a pair: not eligible
    ],
)
def test_687a_6_d_progressive_pays_the_eligible_hands_only(hand, outcome, net):
    """§ 687a.6(d): the Progressive Bonus Wager pays three of a kind or better (Progressive
    Paytable 1), and loses on any lower hand."""
    res = by_wager(_round(DJSeat(1, 500, hand, raised=True, progressive=100)))
    assert (res["progressive"].outcome, res["progressive"].net) == (outcome, net)


@pytest.mark.parametrize(
    "hand,dealer,outcome",
    [
        ("Ah Ac Ad 6s 5h", "Kh Kd Kc Ks 3s", "win"),  # trips beaten by four of a kind: a bad beat
        ("Ah Ac 9d 9s 5h", "Kh Kd Kc 8s 3s", "lose"),  # two pair beaten: below three of a kind
        ("Ah Ac Ad 6s 5h", "Kh Kd 8c 4d 3s", "lose"),  # trips that win: no bad beat
    ],
)
def test_687a_6_f_bad_beat_pays_three_of_a_kind_or_better_beaten(hand, dealer, outcome):
    """§ 687a.6(f): the Two-Way Bad Beat Bonus Wager pays a player's three of a kind or better
    that loses to the dealer's higher hand; a lower hand, or a hand that wins, does not."""
    res = by_wager(_round(DJSeat(1, 500, hand, raised=True, bad_beat=100), dealer=dealer))
    assert res["bad-beat"].outcome == outcome
    assert (res["bad-beat"].net > 0) is (outcome == "win")


def test_687a_1_raise_wager_is_two_times_the_ante():
    """§ 687a.1 "Raise Wager": two times the Ante, the same cents whatever the Ante."""
    assert [DJSeat(1, ante, "Ah Ac Ad 6s 5h", True).raise_amount for ante in (500, 2500, 1)] == [1000, 5000, 2]
    res = by_wager(_round(DJSeat(1, 700, "9h 8s 7d 6s 5h", raised=True)))
    assert res["raise"].amount == 1400
