"""The settlement readings an audit disputed, each named after its section.

Each test here failed on the code before these readings (see the commit that adds it)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from controller.rules import faceup_bonus
from controller.rules.cards import parse_cards
from controller.rules.faceup_houseway import house_way
from controller.rules.faceup_settle import FaceUpOptions, settle_round
from controller.rules.faceup_settle import SeatWagers as FaceUpSeat
from controller.rules.sixcard import house_way as six_house_way
from controller.rules.sixcard_settle import SeatWagers as SixSeat
from controller.rules.sixcard_settle import settle_round as six_settle

P = parse_cards
STRAIGHT_TRIPS = P("5c 6d 7h 8s 9c 9d 9h")  # the audit's hand
JOKER_STRAIGHT_ACES = P("Jk As Ad 2c 3h 4s Td")  # A-2-3-4-(5) with the joker, or three aces
DEALER = P("Kd Ts 4c 3s 2s Jh Qh")  # king high, no Ace High Pai Gow
QUADS = P("9c 9h 9d 9s 8d 6c 4d")


def _hw(seats):
    return {s: house_way(w.cards) for s, w in seats.items() if not w.surrender}


# ------------------------------------------------------------------ finding 1 (688a-7)


def test_688a_12_c_straight_and_trips_pays_three_of_a_kind():
    """§ 688a.12(c) (and § 659a.6(d)(10)-(11) for the same paytables) ranks three of a kind
    above a straight: 5-6-7-8-9 with three nines, $5 Fortune, Paytable 1 pays 3 to 1 (+$15),
    not the straight's 2 to 1 (+$10) the old code paid."""
    assert faceup_bonus.bonus_categories(STRAIGHT_TRIPS) == ("straight", "three-of-a-kind")
    seats = {1: FaceUpSeat(STRAIGHT_TRIPS, 1000, fortune=500)}
    r = [x for x in settle_round(DEALER, seats, _hw(seats)) if x.wager == "fortune"][0]
    assert (r.hand, r.pays, r.net) == ("three-of-a-kind", "3 to 1", 1500)
    assert "688a-7" in r.detail
    ranking = settle_round(DEALER, seats, _hw(seats), FaceUpOptions(bonus_reading="ranking"))
    assert [(x.hand, x.net) for x in ranking if x.wager == "fortune"] == [("straight", 1000)]


def test_688a_6_a_joker_is_the_straight_or_the_third_ace():
    """§ 688a.6(a): the bug joker completes the straight A-2-3-4-5 or is an ace; the seven
    cards can form three aces, which pays more."""
    assert faceup_bonus.bonus_categories(JOKER_STRAIGHT_ACES) == ("straight", "three-of-a-kind")
    assert faceup_bonus.bonus_categories(P("Jk Ks Kd 2c 3h 4s 5d")) == ("straight",)  # the joker is never a king
    seats = {1: FaceUpSeat(JOKER_STRAIGHT_ACES, 1000, fortune=100)}
    r = [x for x in settle_round(DEALER, seats, _hw(seats)) if x.wager == "fortune"][0]
    assert (r.hand, r.net) == ("three-of-a-kind", 300)


def test_688a_12_d_progressive_paytable_4_straight_and_trips_pays_15():
    """Progressive Paytable 4 ($5, original wager returned): three of a kind $15, straight $7.50."""
    seats = {1: FaceUpSeat(STRAIGHT_TRIPS, 1000, progressive=500)}
    opt = FaceUpOptions(progressive_paytable="Face Up Progressive 4")
    r = [x for x in settle_round(DEALER, seats, _hw(seats), opt) if x.wager == "progressive"][0]
    assert (r.hand, r.net, r.meter_fraction) == ("three-of-a-kind", 1500, None)
    assert "688a-7" in r.detail  # the higher of the two rows, and the record says why
    seats = {1: FaceUpSeat(P("9c 9d 9h Kc 6d 4h 2c"), 1000, progressive=500)}  # three nines, no straight
    r = [x for x in settle_round(DEALER, seats, _hw(seats), opt) if x.wager == "progressive"][0]
    assert (r.hand, r.net) == ("three-of-a-kind", 1500) and "688a-7" not in r.detail


def test_688a_12_c_bonus_reading_is_checked():
    seats = {1: FaceUpSeat(STRAIGHT_TRIPS, 1000, fortune=500)}
    with pytest.raises(ValueError, match="bonus_reading"):
        settle_round(DEALER, seats, _hw(seats), FaceUpOptions(bonus_reading="highest"))


# ------------------------------------------------------------------ finding 4: one player, two areas


def test_688a_11_h_2_ii_no_envy_for_own_hand_on_the_adjacent_area():
    """§ 688a.7(f): a player may wager on two adjacent areas; § 688a.11(h)(2)(ii): "A player is
    not entitled to an Envy Bonus for his own hand" — his other area's quads pay him nothing,
    while seat 3 (another player) is paid."""
    seats = {
        1: FaceUpSeat(QUADS, 1000, fortune=500, player="seats 1+2"),
        2: FaceUpSeat(P("As Kh Js 7d 5h 3d 2h"), 1000, fortune=500, player="seats 1+2"),
        3: FaceUpSeat(P("Ac Ks Th 7c 5s 3h 2d"), 1000, fortune=500),
    }
    r = settle_round(DEALER, seats, _hw(seats))
    assert [(x.seat, x.hand, x.net) for x in r if x.wager == "fortune-envy"] == [(3, "four-of-a-kind", 500)]


def test_670a_11_h_1_ii_no_envy_for_own_hand_on_the_adjacent_area():
    """§ 670a.7(f), § 670a.11(h)(1)(ii) and (h)(3)(ii): neither the Fortune nor the Progressive
    envy is paid to a player for the hand on his other betting area."""
    quads = "9c 9d 9h 9s 4d 3s"
    other = "Ac Qd Th 8s 7c 3c"
    third = "Ad Qh Tc 8d 7h 2c"
    seats = {
        4: SixSeat(P(quads), 1000, fortune=500, progressive=100, player="A"),
        5: SixSeat(P(other), 1000, fortune=500, progressive=100, player="A"),
        6: SixSeat(P(third), 1000, fortune=500, progressive=100),
    }
    sets = {s: six_house_way(w.cards) for s, w in seats.items()}
    r = six_settle(P("6c 6d Kh 4s 3h 2d"), seats, sets)
    envy = sorted((x.seat, x.wager) for x in r if x.wager.endswith("envy"))
    assert envy == [(6, "fortune-envy"), (6, "progressive-envy")]


# ------------------------------------------------------------------ finding 5: seat order


def test_688a_11_e_two_meter_hits_paid_from_the_dealers_right():
    """§ 688a.11(e): settlement begins with the player farthest to the dealer's right — seat 6
    in tablectl's numbering (controller/rules/positions.py) — so of two 10%-of-meter hits
    (five aces, Progressive Paytable 1) seat 5's comes before seat 2's.  The old default
    order (ascending seats) paid seat 2 first."""
    seats = {
        2: FaceUpSeat(P("As Ah Ac Ad Jk 8c 4c"), 1000, progressive=100),  # five aces: 10% of meter
        3: FaceUpSeat(P("Kd Kh Kc Ks Th 9c 5h"), 1000, progressive=100),  # four of a kind: $75
        5: FaceUpSeat(P("2d 3d 4d 5d 6d 7d 8d"), 1000, progressive=100),  # 7-card straight flush: 100%
    }
    dealer = P("Qc Jc 9s 7s 6s 5c 3c")
    r = [x for x in settle_round(dealer, seats, _hw(seats)) if x.wager == "progressive"]
    assert [(x.seat, x.meter_fraction) for x in r] == [(5, Fraction(1)), (3, None), (2, Fraction(1, 10))]


# ------------------------------------------------------------------ finding 3 (687a-5)


def test_670a_11_h_3_i_C_dj_wild_envy_holder_needs_no_progressive_wager():
    """Reading 687a-5 follows § 670a: "Has an Envy Bonus Qualifying Hand and any player at the
    table placed a Progressive Payout Wager" (§ 670a.11(h)(3)(i)(C)) — the holder needs no
    wager.  Seat 1's royal flush (no Progressive) earns seat 2's $1 Progressive the $1,000
    envy; the old code counted only hands that bet and won the Progressive."""
    from controller.rules.djwild import DJRound, DJSeat
    from controller.rules.djwild import settle_round as dj_settle

    rnd = DJRound(
        (
            DJSeat(1, 500, "As Ks Qs Js Ts", raised=True),
            DJSeat(2, 500, "Ah 9c 7d 5h 3h", raised=True, progressive=100),
            DJSeat(3, 500, "Qh 9d 7c 5d 3c", raised=True),
        ),
        "Kd Kc 8h 6c 4d",
    )
    envy = [(r.seat, r.net) for r in dj_settle(rnd) if r.wager == "progressive-envy"]
    assert envy == [(2, 100_000)]
    # nobody bet the Progressive: no envy at all
    plain = DJRound(tuple(DJSeat(s.seat, s.ante, s.cards, s.raised) for s in rnd.seats), rnd.dealer)
    assert not [r for r in dj_settle(plain) if r.wager == "progressive-envy"]
