"""Over/Under rules, 58 Pa. Code Chapter 686a (controller/rules/overunder.py)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.rules.cards import DECK_52, JOKER, CardError, parse_card
from controller.rules.overunder import (
    SHOE_CARDS,
    Decision,
    OverUnderError,
    SeatPlay,
    Shoe,
    ShoeExhausted,
    bonus_hand,
    card_points,
    cards_for_round,
    dead_hand,
    decision_wins,
    max_cover_position,
    point_total,
    settle_bonus,
    settle_round,
    settle_seat,
)
from controller.rules.settlement import table_net

# ---------------------------------------------------------------- § 686a.3(d) card values


@pytest.mark.parametrize(
    "token,points",
    [
        ("2c", 2),
        ("3d", 3),
        ("4h", 4),
        ("5s", 5),
        ("6c", 6),
        ("7d", 7),
        ("8h", 8),
        ("9s", 9),
        ("Tc", 10),
        ("Jd", 10),
        ("Qh", 10),
        ("Ks", 10),
        ("Ac", 11),
    ],
)
def test_686a_3_d_card_points(token, points):
    """§ 686a.3(d)(1)-(3): 2-10 face value, J/Q/K 10, ace always 11."""
    assert card_points(parse_card(token)) == points


def test_686a_3_a_no_joker():
    """§ 686a.3(a): six 52-card decks — no joker."""
    with pytest.raises(CardError):
        card_points(JOKER)
    with pytest.raises(CardError):
        point_total("As Jk 2c")


def test_686a_3_a_duplicates_allowed_six_deck_shoe():
    """§ 686a.3(a): a six-deck shoe can deal the same card twice in one hand."""
    assert point_total("As As As") == 33
    assert point_total("2c 2c 2c") == 6


@pytest.mark.parametrize("bad", ["As Kd", "As Kd Qh Jc", "As Kx 2c", "Zs 2c 3c", ""])
def test_686a_1_hand_is_three_cards(bad):
    """§ 686a.1 "Hand": exactly three cards; a bad token is a CardError naming it."""
    with pytest.raises(CardError):
        point_total(bad)


def test_686a_point_total_range_matches_all_value_triples():
    """Totals run 6 (2-2-2) to 33 (A-A-A), every value in between reachable."""
    totals = {
        card_points(a) + card_points(b) + card_points(c)
        for a in DECK_52[::4]
        for b in DECK_52[::4]
        for c in DECK_52[::4]
    }
    assert totals == set(range(6, 34))


# ---------------------------------------------------------------- § 686a.7(i)-(k) outcomes


@pytest.mark.parametrize("total", range(6, 34))
def test_686a_7_over_23(total):
    """§ 686a.7(i)(1): Over 23 wins on 24-33; § 686a.7(k): loses on 18-23; reading 686a-1: loses on 6-17."""
    assert decision_wins(Decision.OVER_23, total) is (24 <= total <= 33)


@pytest.mark.parametrize("total", range(6, 34))
def test_686a_7_under_18(total):
    """§ 686a.7(i)(2): Under 18 wins on 6-17; § 686a.7(k): loses on 18-23; reading 686a-1: loses on 24-33."""
    assert decision_wins(Decision.UNDER_18, total) is (6 <= total <= 17)


def test_686a_7_g_3_surrender_has_no_decision_outcome():
    assert decision_wins("surrender", 20) is None


@pytest.mark.parametrize("total", [5, 34, 0, "20"])
def test_686a_impossible_totals_rejected(total):
    with pytest.raises(OverUnderError):
        decision_wins(Decision.OVER_23, total)
    with pytest.raises(OverUnderError):
        bonus_hand(total)


def test_686a_decision_parse():
    assert Decision.parse("Over 23") is Decision.OVER_23
    assert Decision.parse("under") is Decision.UNDER_18
    assert Decision.parse("SURRENDER") is Decision.SURRENDER
    with pytest.raises(OverUnderError, match="sideways"):
        Decision.parse("sideways")


# ---------------------------------------------------------------- settlement § 686a.7(j)-(l), § 686a.8


def test_686a_8_a_over_23_wins_even_money():
    """§ 686a.7(i)(1), § 686a.8(a): Ante and Over 23 both paid 1 to 1 on 24."""
    res = settle_seat(SeatPlay(1, 500, "over-23", "As Kd 3c"))
    assert [(r.wager, r.outcome, r.net, r.amount) for r in res] == [
        ("ante", "win", 500, 500),
        ("over-23", "win", 500, 500),
    ]
    assert res[0].hand == "total-24"


def test_686a_7_k_house_band_loses_both():
    """§ 686a.7(k): 18-23 — the Ante and the Under 18 Wager lose."""
    res = settle_seat(SeatPlay(2, 1000, "under-18", "Ts 5d 3c"))  # 18
    assert [(r.wager, r.outcome, r.net) for r in res] == [("ante", "lose", -1000), ("under-18", "lose", -1000)]


def test_686a_reading_1_over_23_on_low_total_loses():
    """Reading 686a-1 (docs/rules-readings/686a.md): Over 23 on a total of 6-17 loses both wagers."""
    res = settle_seat(SeatPlay(1, 500, "over-23", "Ts 5d 2c"))  # 17
    assert [r.net for r in res] == [-500, -500]


def test_686a_7_h_surrender_keeps_bonus():
    """§ 686a.7(g)(3),(h): surrender forfeits the Ante only; the Bonus is still settled (50 to 1 on 6)."""
    res = settle_seat(SeatPlay(3, 500, "surrender", "2s 2d 2h", bonus=100))
    assert [(r.wager, r.outcome, r.net) for r in res] == [("ante", "surrender", -500), ("bonus", "win", 5000)]


@pytest.mark.parametrize(
    "total,odds",
    [
        (6, 50),
        (33, 50),
        (7, 10),
        (32, 10),
        (8, 5),
        (31, 5),
        (9, 4),
        (30, 4),
        (10, 3),
        (29, 3),
        (11, 2),
        (28, 2),
        (12, 1),
        (27, 1),
    ],
)
def test_686a_8_b_bonus_paytable(total, odds):
    """§ 686a.7(l), § 686a.8(b): the Bonus paytable, each total."""
    r = settle_bonus(1, 200, total)
    assert (r.outcome, r.net, r.pays) == ("win", 200 * odds, f"{odds} to 1")


@pytest.mark.parametrize("total", range(13, 27))
def test_686a_7_l_bonus_loses_13_to_26(total):
    r = settle_bonus(1, 200, total)
    assert (r.outcome, r.net) == ("lose", -200)


@pytest.mark.parametrize(
    "kw", [dict(ante=0), dict(ante=-5), dict(ante=2.5), dict(bonus=-1), dict(seat=0), dict(ante=True)]
)
def test_686a_6_bad_amounts_rejected(kw):
    base: dict[str, Any] = dict(seat=1, ante=500, decision="over-23", cards="As Kd 3c", bonus=0)
    base.update(kw)
    with pytest.raises(OverUnderError):
        settle_seat(SeatPlay(**base))


def test_686a_round_rejects_duplicate_seat():
    with pytest.raises(OverUnderError, match="seat 1"):
        settle_round([SeatPlay(1, 500, "over", "As Kd 3c"), SeatPlay(1, 500, "under", "2c 3d 4h")])


def test_686a_round_settles_in_dealing_order():
    """§ 686a.7(e),(j): positions settled one at a time in the order dealt."""
    res = settle_round([SeatPlay(4, 500, "over", "As Kd 3c", 100), SeatPlay(2, 500, "under", "2c 3d 4h")])
    assert [(r.seat, r.wager) for r in res] == [(4, "ante"), (4, "over-23"), (4, "bonus"), (2, "ante"), (2, "under-18")]
    assert table_net(res) == -(500 + 500 - 100 + 500 + 500)


def test_686a_9_c_dead_hand_returns_wagers():
    """§ 686a.9(c): a dead hand returns the Ante (reading 686a-4: and the decision and Bonus wagers)."""
    res = dead_hand(1, 500, "over-23", bonus=100)
    assert [(r.wager, r.outcome, r.net) for r in res] == [
        ("ante", "returned", 0),
        ("over-23", "returned", 0),
        ("bonus", "returned", 0),
    ]
    assert table_net(res) == 0


# ---------------------------------------------------------------- hypothesis: money

_card = st.sampled_from(DECK_52)
_play = st.builds(
    SeatPlay,
    seat=st.integers(1, 6),
    ante=st.integers(1, 10**7),
    decision=st.sampled_from(list(Decision)),
    cards=st.tuples(_card, _card, _card),
    bonus=st.integers(0, 10**6),
)


@settings(max_examples=300, deadline=None)
@given(_play)
def test_686a_settlement_money_properties(play):
    """Nets are whole cents; the table's net is minus the player's; each wager's net is
    -amount or a whole multiple (1x, bonus odds) of it; the closed form matches § 686a.7-686a.8."""
    res = settle_seat(play)
    assert all(isinstance(r.net, int) for r in res)
    assert table_net(res) == -sum(r.net for r in res)
    total = point_total(play.cards)
    d = Decision.parse(play.decision)
    expected = 0
    if d is Decision.SURRENDER:
        expected -= play.ante
    else:
        expected += 2 * play.ante if decision_wins(d, total) else -2 * play.ante
    odds = {6: 50, 33: 50, 7: 10, 32: 10, 8: 5, 31: 5, 9: 4, 30: 4, 10: 3, 29: 3, 11: 2, 28: 2, 12: 1, 27: 1}
    if play.bonus:
        expected += play.bonus * odds[total] if total in odds else -play.bonus
    assert sum(r.net for r in res) == expected
    for r in res:
        assert r.net == -r.amount or (r.net >= 0 and r.net % r.amount == 0)


# ---------------------------------------------------------------- the shoe


def _stack(seed: int = 1) -> list[int]:
    s = [c for c in DECK_52 for _ in range(6)]
    random.Random(seed).shuffle(s)
    return s


def test_686a_3_a_shoe_is_six_decks():
    """§ 686a.3(a): the batch is exactly six 52-card decks."""
    s = _stack()
    assert len(s) == SHOE_CARDS == 312
    Shoe.load(s, 100)
    with pytest.raises(OverUnderError, match="312"):
        Shoe.load(s[:-1], 100)
    bad = s[:-1] + [s[0]] if s[-1] != s[0] else s[:-1] + [s[1]]
    with pytest.raises(OverUnderError, match="expected 6"):
        Shoe.load(bad, 100)
    with pytest.raises(CardError):
        Shoe.load(s[:-1] + [JOKER], 100)


def test_686a_5_d_cover_card_at_least_quarter_from_bottom():
    """§ 686a.5(d): the cover card sits at least 1/4 of the way in from the bottom (>= 78 of 312 below it)."""
    assert max_cover_position(312) == 234
    assert max_cover_position(10) == 7  # ceil(10/4) = 3 below
    Shoe.load(_stack(), 234)
    with pytest.raises(OverUnderError, match="1/4"):
        Shoe.load(_stack(), 235)
    with pytest.raises(OverUnderError):
        Shoe.load(_stack(), -1)


def test_686a_7_c_burn_then_deal_in_order():
    """§ 686a.7(c): the first card of a new batch is burned; cards then come off the top in order."""
    s = _stack(2)
    shoe = Shoe.load(s, 200)
    burned, shoe = shoe.burn()
    assert burned == s[0]
    c1, shoe = shoe.draw()
    c2, shoe = shoe.draw()
    assert (c1, c2) == (s[1], s[2]) and shoe.remaining == 309 and not shoe.reshuffle_due


def test_686a_7_d_cover_card_completes_round_then_reshuffle():
    """§ 686a.7(d): when the cover card appears it is set aside, the round is completed, then reshuffle."""
    s = _stack(3)
    shoe = Shoe.load(s, 5)
    drawn = []
    for _ in range(5):
        c, shoe = shoe.draw()
        drawn.append(c)
    assert not shoe.reshuffle_due
    c, shoe = shoe.draw()  # the cover card comes out first, then this card
    assert c == s[5] and shoe.reshuffle_due
    c, shoe = shoe.draw()  # the round continues
    assert c == s[6] and shoe.reshuffle_due


def test_686a_7_d_cover_card_first_card_of_round():
    """§ 686a.7(d): cover card as the first card at the start of a round — set aside, round played, then reshuffle."""
    shoe = Shoe.load(_stack(4), 0)
    c, shoe = shoe.draw()
    assert shoe.reshuffle_due and c == shoe.cards[0]


def test_686a_9_b_exhausted_shoe():
    """§ 686a.9(b): insufficient cards is signalled so the table reshuffles the discards mid-round."""
    shoe = Shoe.load([parse_card("As"), parse_card("Kd")], 1, full_batch=False)
    assert shoe.can_deal(2) and not shoe.can_deal(3)
    _, shoe = shoe.draw()
    _, shoe = shoe.draw()
    with pytest.raises(ShoeExhausted, match="686a.9"):
        shoe.draw()
    assert cards_for_round(6) == 18
    with pytest.raises(OverUnderError):
        cards_for_round(-1)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 234), st.integers(0, 2**32))
def test_686a_shoe_deals_every_card_once_and_flags_cover(cover_at, seed):
    """Property: the shoe deals its stack in order, exactly once, and flags the cover card exactly after
    cover_at cards."""
    s = _stack(seed)
    shoe = Shoe.load(s, cover_at)
    out = []
    for i in range(SHOE_CARDS):
        assert shoe.reshuffle_due == (i > cover_at)
        c, shoe = shoe.draw()
        out.append(c)
        assert shoe.reshuffle_due == (i >= cover_at)
    assert out == s
    with pytest.raises(ShoeExhausted):
        shoe.draw()
