"""Face Up Pai Gow Poker hands, setting, foul, comparison and house way (§§ 688a.6, 688a.11)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.rules.cards import JOKER, parse_cards
from controller.rules.faceup import (
    FaceUpError,
    Setting,
    SettingError,
    base_outcome,
    card_rank,
    compare_high,
    dealer_ace_high,
    is_foul,
    low_key,
    make_setting,
)
from controller.rules.faceup_houseway import (
    DEFAULT_HOUSE_WAY,
    HOUSE_WAYS,
    HouseWayError,
    house_way,
    register_house_way,
)
from controller.rules.poker import eval_five


def P(text: str) -> tuple[int, ...]:
    return parse_cards(text)


def S(high: str, low: str) -> Setting:
    return Setting(P(high), P(low))


seven = st.lists(st.integers(0, 52), min_size=7, max_size=7, unique=True)


# ----------------------------------------------------------------------- low hand
def test_688a_6_b_11_low_hand_ranking():
    """§ 688a.6(b)(11), (c): any pair beats two unpaired cards; pairs by rank; otherwise the
    highest card, then the other; the joker is an ace in the low hand."""
    assert low_key(P("2c 2d")) > low_key(P("Ac Kd"))
    assert low_key(P("Ac Ad")) > low_key(P("Kc Kd"))
    assert low_key(P("Ac 3d")) > low_key(P("Kc Qd"))
    assert low_key(P("Ac 3d")) < low_key(P("Ah 4d"))
    assert low_key(P("Jk Kd")) == low_key(P("As Kc"))
    assert low_key(P("Jk Ad")) == low_key(P("As Ac"))  # a pair of aces
    with pytest.raises(FaceUpError):
        low_key(P("As Kd Qh"))


# --------------------------------------------------------------------------- foul
@pytest.mark.parametrize(
    "high,low,foul",
    [
        ("7c 7d 5h 4s 2c", "7h 7s", False),  # § 688a.11(c) example: a pair of sevens behind two sevens
        ("6c 6d 5h 4s 2c", "7h 7s", True),
        ("Kc Qd 9h 4s 2c", "7h 7s", True),
        ("Kc Kd 5h 5s 2c", "Ah As", False),  # two pair beats any pair
        ("Kc Qd 9h 4s 2c", "Ah 3s", True),  # unpaired: the highest card decides
        ("Ac 9d 8h 4s 2c", "Ah Js", True),
        ("Ac Qd 9h 4s 2c", "Kh Js", False),
        ("Ac Qd 9h 4s 2c", "Ah Qs", False),  # A-Q equals A-Q, and the five cards have more
        ("Jk 9d 8h 4s 2c", "Ah Js", True),  # the joker is an ace
        ("2c 3d 4h 5s Jk", "Ah As", False),  # a straight beats any low hand
    ],
)
def test_688a_11_c_foul(high, low, foul):
    assert is_foul(P(high), P(low)) is foul
    assert S(high, low).foul is foul


def test_688a_make_setting_checks_the_split():
    dealt = "As Kd Qh Jc 9s 8d 2c"
    s = make_setting(dealt, "As Kd Qh Jc 9s", "8d 2c")
    assert s.high == P("As Kd Qh Jc 9s")
    with pytest.raises(SettingError) as e:
        make_setting(dealt, "As Kd Qh Jc 7s", "8d 2c")
    assert e.value.token == "7s"
    with pytest.raises(FaceUpError):
        make_setting(dealt, "As Kd Qh Jc", "8d 2c 9s")
    with pytest.raises(FaceUpError):
        make_setting("As Kd Qh Jc 9s 8d", "As Kd Qh Jc 9s", "8d 2c")
    with pytest.raises(FaceUpError) as e2:
        make_setting("As Kd Qh Jc 9s 8d Xx", "As Kd Qh Jc 9s", "8d 2c")
    assert "Xx" in str(e2.value)


# --------------------------------------------------------------- § 688a.11(f) outcome
D = S("Kc Kd 9h 5s 2c", "Qh Jd")  # dealer: pair of kings / Q-J


@pytest.mark.parametrize(
    "player,outcome,section",
    [
        (S("Ac Ad 9c 5d 2d", "Kh Qs"), "win", "(f)(3)"),
        (S("Ac Ad 9c 5d 2d", "Qs Jc"), "push", "(f)(2)(i)"),  # low identical -> not higher
        (S("Ac Ad 9c 5d 2d", "Ts 8c"), "push", "(f)(2)(i)"),
        (S("Qc Qs 9c 5d 2d", "Kh 3s"), "push", "(f)(2)(ii)"),
        (S("Ks Kh 9s 5c 2h", "Ah 3s"), "push", "(f)(2)(ii)"),  # high identical, low higher
        (S("Ks Kh 9s 5c 2h", "Qc Js"), "lose", "(f)(1)(ii)"),  # both identical
        (S("Ks Kh 9s 5c 2h", "Tc 8s"), "lose", "(f)(1)(ii)"),
        (S("Qc Qs 9c 5d 2d", "Tc 8s"), "lose", "(f)(1)(i)"),
        (S("Qc Js 9c 5d 2d", "Ac As"), "lose", "(f)(1)(iii)"),  # foul
    ],
)
def test_688a_11_f_base_outcome(player, outcome, section):
    r = base_outcome(player, D, dealer_ace_high=False)
    assert r.outcome == outcome
    assert r.section == "§ 688a.11" + section


def test_688a_11_f_2_iii_dealer_ace_high_pushes_every_wager_even_a_foul():
    """§ 688a.11(f)(2)(iii), § 688a.2(b)(8): the dealer's Ace High Pai Gow pushes."""
    dealer = P("Ac Kd 9h 7s 5c 3d 2h")
    assert dealer_ace_high(dealer)
    ds = house_way(dealer)
    for player in (S("Ac Ad 9c 5d 2d", "Kh Qs"), S("Qc Js 9c 5d 2d", "Ac As")):
        r = base_outcome(player, ds, dealer_ace_high=True)
        assert (r.outcome, r.section) == ("push", "§ 688a.11(f)(2)(iii)")
    assert not dealer_ace_high(P("Kc Qd 9h 7s 5c 3d 2h"))


def test_688a_6_a_wheel_is_second_highest_straight():
    """§ 688a.6(b)(7): A-K-Q-J-T, then A-2-3-4-5, then K-high."""
    assert compare_high(P("Ac 2d 3h 4s 5c"), P("Kc Qd Jh Ts 9c")) > 0
    assert compare_high(P("Ac 2d 3h 4s 5c"), P("Ac Kd Qh Js Tc")) < 0


# --------------------------------------------------------------------- house way
@pytest.mark.parametrize(
    "hand,high,low",
    [
        # no pair: highest back, second and third in front
        ("Ks Qd 9h 7c 5s 3d 2c", "Ks 7c 5s 3d 2c", "Qd 9h"),
        ("Jk Kd 9h 5c 3s 2d 7c", "Jk 7c 5c 3s 2d", "Kd 9h"),
        # one pair: pair back, two highest others in front
        ("9s 9d Ah Kc 5s 3d 2c", "9s 9d 5s 3d 2c", "Ah Kc"),
        # two pair, big pair A-K-Q-J: split
        ("Ks Kd 5h 5c Ad 3h 2c", "Ad Ks Kd 3h 2c", "5h 5c"),
        # two pair, big pair 10-7: together with an ace in front, otherwise split
        ("9s 9d 5h 5c Ad 3h 2c", "9s 9d 5h 5c 2c", "Ad 3h"),
        ("9s 9d 5h 5c Kd 3h 2c", "Kd 9s 9d 3h 2c", "5h 5c"),
        ("9s 9d 5h 5c Jk 3h 2c", "9s 9d 5h 5c 2c", "Jk 3h"),  # the joker is the ace
        # two pair, big pair 6-3: together with a king or better in front
        ("6s 6d 3h 3c Kd 8h 2c", "6s 6d 3h 3c 2c", "Kd 8h"),
        ("6s 6d 3h 3c Qd 8h 2c", "Qd 6s 6d 8h 2c", "3h 3c"),
        # three pair: the high pair in front
        ("Ks Kd 5h 5c 3d 3h 2c", "5h 5c 3h 3d 2c", "Ks Kd"),
        # three of a kind: aces split (an ace and the next card in front); else set behind
        ("As Ad Ah 9c 7d 4h 2c", "As Ah 7d 4h 2c", "Ad 9c"),
        ("8s 8d 8h Kc 7d 4h 2c", "8s 8h 8d 4h 2c", "Kc 7d"),
        # two sets: the pair from the higher set in front
        ("8s 8d 8h 4c 4d 4h 2c", "8h 4h 4d 4c 2c", "8s 8d"),
        # full house: the highest pair in front
        ("8s 8d 8h Kc Kd 4h 4c", "8s 8h 8d 4h 4c", "Kc Kd"),
        # straight: the highest front that keeps a complete hand
        ("As Kd Qh Jc Td 3h 3c", "As Kd Qh Jc Td", "3h 3c"),
        ("9s 8d 7h 6c 5d Ah Kc", "9s 8d 7h 6c 5d", "Ah Kc"),
    ],
)
def test_688a_house_way_foxwoods(hand, high, low):
    s = house_way(P(hand))

    def ranks(cs):  # which of equal-rank cards goes where is immaterial
        return sorted(card_rank(c) for c in cs)

    assert ranks(s.high) == ranks(P(high)) and ranks(s.low) == ranks(P(low)), str(s)


def test_688a_house_way_six_card_straight_keeps_highest_front():
    """T-9-8-7-6-5: the straight 9-8-7-6-5 stays behind with T-2 in front; the straight
    T-9-8-7-6 would leave only 5-2."""
    s = house_way(P("Ts 9d 8h 7c 6d 5h 2c"))
    assert eval_five(s.high).category.text == "straight"
    assert low_key(s.low) == low_key(P("Ts 2c"))


def test_688a_house_way_ace_and_pair_exception():
    """Straight with an ace and a pair of 10s-kings: ace in front and pair behind when that
    front beats the one the straight leaves."""
    s = house_way(P("As Kd Kh Jc Td Qh 3c"))
    assert sorted(s.low) == sorted(P("As Qh"))


def test_688a_house_way_four_of_a_kind_and_five_aces():
    s = house_way(P("7s 7d 7h 7c Kd 3h 2c"))  # 10s-7s: behind if a king goes in front
    assert sorted(s.low) == sorted(P("Kd 3h"))
    s = house_way(P("7s 7d 7h 7c Qd 3h 2c"))  # ... otherwise split
    assert low_key(s.low) == low_key(P("7s 7d"))
    s = house_way(P("Js Jd Jh Jc Ad 3h 2c"))  # jacks and up: always split
    assert low_key(s.low) == low_key(P("Js Jd"))
    s = house_way(P("5s 5d 5h 5c Ad Kh 2c"))  # 6s and below: never split
    assert sorted(s.low) == sorted(P("Ad Kh"))
    s = house_way(P("5s 5d 5h 5c 9d 9h 2c"))  # with a pair: the pair in front
    assert sorted(s.low) == sorted(P("9d 9h"))
    s = house_way(P("As Ad Ah Ac Jk Kd Kh"))  # five aces and kings: kings in front
    assert sorted(s.low) == sorted(P("Kd Kh"))
    s = house_way(P("As Ad Ah Ac Jk Qd 2h"))  # otherwise a pair of aces in front
    assert low_key(s.low) == low_key(P("As Ad"))


@settings(max_examples=250, deadline=None)
@given(seven)
def test_688a_house_ways_never_foul(cards):
    """§ 688a.11(c): every registered house way sets every hand legally (house_way() raises
    HouseWayError on a foul, so a pass means a legal split of the seven cards)."""
    for name in HOUSE_WAYS:
        s = house_way(cards, name)
        assert not is_foul(s.high, s.low)
        assert sorted(s.high + s.low) == sorted(cards)


def test_688a_house_way_never_fouls_on_hard_hands():
    hard = [
        "As Ad Ah Ac Jk Kd Kh",
        "2s 2d 2h 2c 3d 3h 3c",
        "As Ad Jk Kc Kd Qh Qs",
        "Jk 2c 3c 4c 5c 6c 7c",
        "Ac Ad 2h 2s 3c 3d Jk",
        "Ks Kd Kh Qs Qh Qd Jk",
        "Ah 2h 3h 4h 5h 5d 5c",
    ]
    for h in hard:
        for name in HOUSE_WAYS:
            s = house_way(P(h), name)
            assert not s.foul


def _permute(cards, perm):
    return [c if c == JOKER else (c // 4) * 4 + perm[c % 4] for c in cards]


@settings(max_examples=150, deadline=None)
@given(seven, st.permutations(range(4)))
def test_688a_house_way_suit_permutation_invariant(cards, perm):
    """Relabelling suits does not change how the hands rank after setting."""
    a, b = house_way(cards), house_way(_permute(cards, perm))
    assert eval_five(a.high).score == eval_five(b.high).score
    assert low_key(a.low) == low_key(b.low)


@settings(max_examples=150, deadline=None)
@given(st.lists(seven, min_size=3, max_size=3))
def test_688a_high_and_low_rankings_are_total_preorders(hands):
    highs = [h[:5] for h in hands]
    lows = [h[5:] for h in hands]
    for cmp, xs in ((compare_high, highs), (lambda a, b: (low_key(a) > low_key(b)) - (low_key(a) < low_key(b)), lows)):
        for x in xs:
            assert cmp(x, x) == 0
        for x in xs:
            for y in xs:
                assert cmp(x, y) == -cmp(y, x)
                for z in xs:
                    if cmp(x, y) >= 0 and cmp(y, z) >= 0:
                        assert cmp(x, z) >= 0


def test_688a_11_a_house_way_registry():
    assert DEFAULT_HOUSE_WAY == "foxwoods" and "foxwoods" in HOUSE_WAYS
    with pytest.raises(HouseWayError):
        house_way(P("As Kd Qh Jc 9s 8d 2c"), "no-such-way")

    @register_house_way("test-688a-foul")
    def _bad(cards):  # the last two cards in front
        return Setting(tuple(cards[:5]), tuple(cards[5:]))

    try:
        with pytest.raises(HouseWayError):
            house_way(P("2c 3d 9h Jc Ks Ad Ah"), "test-688a-foul")  # A-A in front of king high
    finally:
        del HOUSE_WAYS["test-688a-foul"]
