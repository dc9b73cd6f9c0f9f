"""The one place a paytable row becomes a WagerResult (controller/rules/settlement.py),
shared by the 670a, 659a and 688a settlements."""

from fractions import Fraction

import pytest

from controller.rules.paytables import Payout, Paytable, get_paytable
from controller.rules.settlement import Stake, paytable_result

_TABLE = Paytable(
    "Test",
    "test",
    "test",
    "§ 0",
    pays=(
        ("straight", Payout("odds", Fraction(4), text="4 to 1")),
        ("flush", Payout("for", Fraction(6), text="6 for 1")),
        ("pair", Payout("push", text="push")),
        ("high-card", Payout("lose", text="lose")),
        ("royal", Payout("meter", Fraction(1, 10), text="10% of meter")),
    ),
)


def test_odds_for_push_lose_and_unlisted():
    r = paytable_result(Stake(1, "fortune", 500), "straight", _TABLE, _TABLE.payout("straight"), "rule")
    assert (r.outcome, r.net, r.pays) == ("win", 2000, "4 to 1")
    r = paytable_result(Stake(1, "fortune", 500), "flush", _TABLE, _TABLE.payout("flush"), "rule")
    assert (r.outcome, r.net) == ("win", 2500)  # 6 for 1: the wager is not returned on top
    r = paytable_result(Stake(1, "fortune", 500), "pair", _TABLE, _TABLE.payout("pair"), "rule")
    assert (r.outcome, r.net) == ("push", 0)
    for hand in ("high-card", "nothing"):
        r = paytable_result(Stake(1, "fortune", 500), hand, _TABLE, _TABLE.payout(hand), "rule")
        assert (r.outcome, r.net, r.pays) == ("lose", -500, None)


def test_meter_row_needs_a_reason_and_collects_the_wager():
    with pytest.raises(ValueError, match="not paid from a meter"):
        paytable_result(Stake(2, "ace-high", 100), "royal", _TABLE, _TABLE.payout("royal"), "rule")
    r = paytable_result(
        Stake(2, "progressive", 100),
        "royal",
        _TABLE,
        _TABLE.payout("royal"),
        "§ 670a.11(h)(3)(i)",
        meter_note="paid from the meter, § 670a.12(d)(3)",
    )
    assert (r.outcome, r.net, r.meter_fraction) == ("win", -100, Fraction(1, 10))
    assert r.detail.endswith("§ 670a.12(d)(3)")


def test_fixed_envy_pays_the_printed_sum_for_its_wager():
    # § 670a.12(b)(2): the $5 envy table pays fixed sums printed per $5 wager
    pt = get_paytable("Six-Card Fortune Envy $5")
    hand, payout = pt.pays[0]
    r = paytable_result(Stake(3, "fortune-envy", 500), hand, pt, payout, "rule")
    assert r.net == payout.cents and r.outcome == "win"


def test_a_fraction_of_a_cent_is_refused_not_dropped():
    pt = Paytable("Odd", "test", "test", "§ 0", pays=(("straight", Payout("odds", Fraction(3, 2), text="3 to 2")),))
    with pytest.raises(ValueError, match="not a whole number of cents"):
        paytable_result(Stake(1, "fortune", 1), "straight", pt, pt.payout("straight"), "rule")
