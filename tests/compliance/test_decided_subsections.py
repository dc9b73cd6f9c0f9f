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


@pytest.mark.parametrize(
    "hand,dealer,paytable,net",
    [
        # the player's four 9s lose to the dealer's four kings: paid by the player's hand
        ("9h 9c 9d 9s 5h", "Kh Kd Kc Ks 3s", "DJWBB-01", 500 * 100),
        # the player's trips lose to a full house: 9 to 1 on both paytables
        ("Ah Ac Ad 6s 5h", "Kh Kd Kc 8s 8d", "DJWBB-02", 9 * 100),
        # the player's straight flush loses to five of a kind: 500 to 1 (01), 5,000 to 1 (02)
        ("9h 8h 7h 6h 5h", "Kh Kd Kc Ks 2s", "DJWBB-01", 500 * 100),
        ("9h 8h 7h 6h 5h", "Kh Kd Kc Ks 2s", "DJWBB-02", 5000 * 100),
    ],
)
def test_687a_12_e_bad_beat_paid_by_the_beaten_hand_on_the_tables_paytable(hand, dealer, paytable, net):
    """§ 687a.12(e): a winning Two-Way Bad Beat Bonus Wager is paid by the paytable the table
    offers, at the row of the player's beaten hand."""
    res = by_wager(_round(DJSeat(1, 500, hand, raised=True, bad_beat=100), dealer=dealer, bad_beat_paytable=paytable))
    r = res["bad-beat"]
    assert (r.outcome, r.net, r.paytable) == ("win", net, paytable)


def test_687a_6_f_a_one_cent_bad_beat_wager_is_settled():
    """§ 687a.6(f), § 687a.12(e): any whole amount of cents may be wagered (the table's limits
    are the profile's); one cent on three of a kind beaten pays 9 cents, nothing less is a wager."""
    res = by_wager(_round(DJSeat(1, 500, "Ah Ac Ad 6s 5h", raised=True, bad_beat=1), dealer="Kh Kd Kc Ks 3s"))
    assert (res["bad-beat"].outcome, res["bad-beat"].net) == ("win", 9)


def test_687a_12_e_the_analysis_takes_only_a_bad_beat_paytable():
    """§ 687a.12(e): the Two-Way Bad Beat's analysis is of one of its paytables (DJWBB-01..04);
    another wager's paytable is refused by name."""
    from controller.analysis.djwild import analyze_bad_beat

    with pytest.raises(ValueError, match="'DJWT-05' is not a DJ Wild Two-Way Bad Beat paytable"):
        analyze_bad_beat("DJWT-05", {})
