"""58 Pa. Code § 659a.11(d)-(f),(h),(i), § 659a.12: settling every Fortune Asia Poker wager."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.rules.cards import parse_cards
from controller.rules.fortune_asia import (
    FortuneAsiaError,
    FortuneAsiaRules,
    SeatPlay,
    make_setting,
    set_house_way,
    settle_round,
    void_round,
)
from controller.rules.settlement import table_net

ALL = FortuneAsiaRules(
    fortune_paytable="Fortune Asia Fortune A",
    insurance_paytable="Fortune Asia Insurance A",
    progressive_paytable="Fortune Asia Progressive",
    progressive_reset=250_000,
)
DEALER = parse_cards("Ks Kd 9h 2c Qs Jd 8h")  # house way (HW-7): K K 8 2 | Q J | 9
DEALER2 = parse_cards("Qs Qh 2h 2s Qc Jd 7c")  # house way (HW-3): Q Q Q 7 | 2 2 | J


def seat(n: int, cards: str, high: str, medium: str, low: str, base: int = 1000, **kw) -> SeatPlay:
    c = parse_cards(cards, count=7)
    return SeatPlay(n, c, base, make_setting(high, medium, low, seven=c), **kw)


def by(results, seat_no, wager):
    return [r for r in results if r.seat == seat_no and r.wager == wager]


def test_659a_11_f_base_wins_1_to_1_and_loses() -> None:
    """§ 659a.11(f)(2), § 659a.12(a): 1 to 1; two copies or lower hands lose."""
    win = seat(1, "As Ad 3h 2d Qh Kc 7s", "As Ad 3h 2d", "Qh Kc", "7s")
    lose = seat(2, "Kh Tc 9s 3d Qc Jc 9d", "9s 9d Kh 3d", "Qc Jc", "Tc")  # high loses, copy, low wins
    res = settle_round([win, lose], DEALER, ALL)
    assert [(r.seat, r.outcome, r.net) for r in res if r.wager == "base"] == [(2, "lose", -1000), (1, "win", 1000)]


def test_659a_11_f_1_foul_loses() -> None:
    s = seat(1, "Kc 9d 5h 2d As Ad 3h", "Kc 9d 5h 2d", "As Ad", "3h")
    r = by(settle_round([s], DEALER, ALL), 1, "base")[0]
    assert r.outcome == "lose" and "foul" in r.detail


def test_659a_11_d_surrender_collects_the_wager_and_is_refused_with_an_optional_wager() -> None:
    c = parse_cards("Kh Kc 9s 3d Qc Jc 9d")
    res = settle_round([SeatPlay(3, c, 1000, surrender=True)], DEALER, ALL)
    assert [(r.outcome, r.net) for r in res] == [("surrender", -1000)]
    with pytest.raises(FortuneAsiaError, match="659a.11"):
        SeatPlay(3, c, 1000, surrender=True, insurance=500)
    with pytest.raises(FortuneAsiaError):
        SeatPlay(3, c, 1000)  # neither set nor surrendered


def test_659a_11_h_1_fortune_and_envy() -> None:
    """Fortune Bonus paid on the seven cards; each Qualifying Wager (>= $5, § 659a.1) gets an
    Envy Bonus for every OTHER player's four of a kind or better, never its own
    (§ 659a.11(h)(1)(ii)); a player with no Fortune Bonus Wager still makes others' envy."""
    quads = seat(1, "9h 9d 9s 9c 5d 2c 3d", "9h 9d 9s 9c", "5d 3d", "2c", fortune=500)
    sflush = seat(2, "8h 7h 6h 5h 4h Ac Ad", "8h 7h 6h 4h", "Ac Ad", "5h")  # no fortune wager; straight flush
    small = seat(3, "Kh Kd Ks 3c 4d Jh Tc", "Kh Kd Ks 3c", "Jh Tc", "4d", fortune=100)  # $1: not qualifying
    res = settle_round([quads, sflush, small], DEALER2, ALL)
    f1 = by(res, 1, "fortune")[0]
    assert (f1.outcome, f1.net, f1.hand) == ("win", 25 * 500, "four-of-a-kind")
    assert by(res, 3, "fortune")[0].net == 3 * 100  # three of a kind 3 to 1
    envy1 = by(res, 1, "fortune-envy")
    assert [(e.net, e.hand) for e in envy1] == [(2000, "straight-flush")]  # $20 for seat 2; none for own quads
    assert by(res, 3, "fortune-envy") == []  # $1 is not a Qualifying Wager
    assert by(res, 2, "fortune-envy") == []  # no Qualifying Wager
    # envy after all Fortune Bonus Wagers (§ 659a.11(h)(1)(ii))
    kinds = [r.wager for r in res]
    assert kinds.index("fortune-envy") > max(i for i, k in enumerate(kinds) if k == "fortune")


def test_659a_7_f_no_envy_for_the_same_players_other_hand() -> None:
    a = seat(1, "9h 9d 9s 9c 5h 2c 3d", "9h 9d 9s 9c", "5h 3d", "2c", fortune=500, player="P")
    b = seat(2, "Th Td Ts Tc 6h 4c 7d", "Th Td Ts Tc", "7d 6h", "4c", fortune=500, player="P")
    res = settle_round([a, b], DEALER2, ALL)
    assert [r for r in res if r.wager == "fortune-envy"] == []


def test_659a_11_d_surrendered_hand_still_makes_envy() -> None:
    """ "If any Qualifying Wagers have been placed, the cards of the player must remain on the
    table" (§ 659a.11(d)); the dealer rearranges all players' cards (§ 659a.11(h))."""
    q = seat(1, "Kh Kd Ks 3c 4d Jh Tc", "Kh Kd Ks 3c", "Jh Tc", "4d", fortune=500)
    s = SeatPlay(2, parse_cards("9h 9d 9s 9c 5h 2c 3d"), 1000, surrender=True)
    res = settle_round([q, s], DEALER2, ALL)
    assert [(e.seat, e.net) for e in res if e.wager == "fortune-envy"] == [(1, 500)]


def test_659a_12_b_paytable_c_three_pair_pushes() -> None:
    rules = FortuneAsiaRules(fortune_paytable="Fortune Asia Fortune C")
    s = seat(1, "Kh Kd 9s 9c 4h 4c Qd", "9s 9c 4h 4c", "Kh Kd", "Qd", fortune=500)
    r = by(settle_round([s], DEALER2, rules), 1, "fortune")[0]
    assert (r.outcome, r.net, r.hand) == ("push", 0, "three-pair")
    r = by(settle_round([s], DEALER2, FortuneAsiaRules(fortune_paytable="Fortune Asia Fortune B")), 1, "fortune")[0]
    assert (r.outcome, r.net) == ("lose", -500)


def test_659a_11_h_2_insurance() -> None:
    s = seat(1, "Th 8d 7s 6c 4h 3c 2d", "Th 3c 2d 4h", "8d 7s", "6c", insurance=500)
    r = by(settle_round([s], DEALER, ALL), 1, "insurance")[0]
    assert (r.outcome, r.net, r.hand) == ("win", 40 * 500, "ten-high")


def test_659a_11_h_3_progressive_fixed_and_meter_pays() -> None:
    fh = seat(1, "9h 9d 9s 5c 5h 2c 3d", "9h 9d 9s 3d", "5c 5h", "2c", progressive=100)
    r = by(settle_round([fh], DEALER2, ALL), 1, "progressive")[0]
    assert (r.outcome, r.net, r.pays) == ("win", 300, "4 for 1")  # 4 for 1: net 3 units
    five = seat(1, "As Ad Ah Ac Jk 2c 7d", "As Ad Ah Ac", "Jk 7d", "2c", progressive=100)
    r = by(settle_round([five], DEALER2, ALL), 1, "progressive")[0]
    assert r.meter_fraction == Fraction(1, 10) and r.net == -100 and r.hand == "five-aces"


def test_659a_12_d_2_reset_at_least_2000_and_options() -> None:
    with pytest.raises(FortuneAsiaError, match="2,000"):
        FortuneAsiaRules(progressive_paytable="Fortune Asia Progressive", progressive_reset=199_999)
    r = FortuneAsiaRules.from_options(
        {"progressive_paytable": "Fortune Asia Progressive", "progressive_reset": "$2,500", "house_way": "highest-high"}
    )
    assert r.progressive_reset == 250_000
    with pytest.raises(FortuneAsiaError):
        FortuneAsiaRules.from_options({"fortune_paytable": "Fortune Asia Insurance A"})
    with pytest.raises(FortuneAsiaError):
        FortuneAsiaRules.from_options({"house_way": "nope"})
    with pytest.raises(FortuneAsiaError):
        FortuneAsiaRules.from_options({"colour": "red"})


def test_659a_7_e_wager_not_offered_is_refused() -> None:
    s = seat(1, "Th 8d 7s 6c 4h 3c 2d", "Th 3c 2d 4h", "8d 7s", "6c", insurance=500)
    with pytest.raises(FortuneAsiaError, match="not offered"):
        settle_round([s], DEALER, FortuneAsiaRules())


def test_bad_rounds_are_refused() -> None:
    """§ 659a.3(a): one deck, so a card dealt to both the dealer and a seat is refused."""
    s = seat(1, "Th 8d 7s 6c 4h 3c 2d", "Th 3c 2d 4h", "8d 7s", "6c")
    with pytest.raises(FortuneAsiaError, match="twice"):
        settle_round([s], parse_cards("Th Kd 9h 2c Qs Jd 8h"), ALL)
    with pytest.raises(FortuneAsiaError):
        settle_round([s], DEALER, ALL, order=[2])
    with pytest.raises(FortuneAsiaError):
        SeatPlay(1, s.cards, 0, s.setting)  # § 659a.7(d): a Fortune Asia Poker Wager is required
    with pytest.raises(FortuneAsiaError):
        SeatPlay(1, s.cards, 1000, make_setting("Th 3c 2d 4h", "8d 7s", "5c"))


def test_659a_8_e_void_returns_every_wager() -> None:
    """§ 659a.9(d): a misdeal voids the round and every wager is returned."""
    res = void_round({1: {"base": 1000, "progressive": 100}, 2: {"base": 500}})
    assert {(r.seat, r.wager, r.outcome, r.net) for r in res} == {
        (1, "base", "returned", 0),
        (1, "progressive", "returned", 0),
        (2, "base", "returned", 0),
    }


# --- property: settlement conserves money ------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32), st.integers(1, 6))
def test_settlement_conserves_money(seed: int, n_seats: int) -> None:
    """table_net = -(sum of players' nets); each result is consistent with its outcome; every
    seat gets exactly one base result; meter pays carry a fraction and lose the wager."""
    rng = random.Random(seed)
    deck = list(range(53))
    rng.shuffle(deck)
    seats = []
    for i in range(n_seats):
        cards = tuple(deck[7 * i : 7 * i + 7])
        surrender = rng.random() < 0.2
        opt: dict[str, Any] = (
            {} if surrender else {k: rng.choice([0, 100, 500, 2500]) for k in ("fortune", "insurance", "progressive")}
        )
        setting = None if surrender else set_house_way(cards, rng.choice(["tablectl-standard", "highest-high"]))
        seats.append(SeatPlay(i + 1, cards, rng.choice([500, 1000, 2500]), setting, surrender, **opt))
    res = settle_round(seats, deck[42:49], ALL)
    assert table_net(res) == -sum(r.net for r in res)
    assert sorted(r.seat for r in res if r.wager == "base") == list(range(1, n_seats + 1))
    for r in res:
        if r.outcome == "lose" or r.outcome == "surrender":
            assert r.net == -r.amount
        elif r.outcome == "push":
            assert r.net == 0
        elif r.meter_fraction is not None:
            assert r.net == -r.amount and 0 < r.meter_fraction <= 1
        else:
            assert r.outcome == "win" and r.net > 0
        assert isinstance(r.net, int)
