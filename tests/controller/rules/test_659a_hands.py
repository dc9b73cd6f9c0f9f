"""58 Pa. Code § 659a.6(a)-(c), § 659a.11(b), (f): Fortune Asia Poker high/medium/low hands."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.rules.cards import JOKER, CardError, parse_cards
from controller.rules.fortune_asia import (
    HandCat,
    base_outcome,
    compare,
    high_hand,
    low_hand,
    make_setting,
    medium_hand,
)

H = high_hand


def cat(text: str) -> HandCat:
    return H(text).category


# --- § 659a.6(b): the four-card categories and their order ----------------------------
@pytest.mark.parametrize(
    "hand, expected",
    [
        ("As Ad Ah Ac", HandCat.FOUR_ACES),  # (b)(1)
        ("Jk As Ad Ah", HandCat.FOUR_ACES),  # joker ranked as an ace, § 659a.6(a)
        ("Ks Qs Js Ts", HandCat.STRAIGHT_FLUSH),  # (b)(2)
        ("Jk Qs Js 9s", HandCat.STRAIGHT_FLUSH),  # joker completes a straight flush
        ("Ks Kd Kh Kc", HandCat.FOUR_OF_A_KIND),  # (b)(3)
        ("Jk Ks Kd Kh", HandCat.THREE_OF_A_KIND),  # the joker never makes four kings
        ("Ks 9s 5s 2s", HandCat.FLUSH),  # (b)(4)
        ("Jk 9s 5s 2s", HandCat.FLUSH),  # joker completes a flush
        ("Ah 2s 3d 4c", HandCat.STRAIGHT),  # (b)(5) A-2-3-4
        ("Jk Kd Qc Jh", HandCat.STRAIGHT),  # joker completes A-K-Q-J
        ("Qs Kd Ah 2c", HandCat.HIGH_CARD),  # § 659a.6(a): no Q-K-A-2
        ("7s 7d 7h 2c", HandCat.THREE_OF_A_KIND),  # (b)(6)
        ("Jk As Ad 5c", HandCat.THREE_OF_A_KIND),
        ("7s 7d 3h 3c", HandCat.TWO_PAIR),  # (b)(7)
        ("Jk As 3h 3c", HandCat.TWO_PAIR),
        ("7s 7d 3h 2c", HandCat.PAIR),  # (b)(8)
        ("Jk Ad 9h 2c", HandCat.PAIR),
        ("Jk Kd 9h 2c", HandCat.HIGH_CARD),  # joker as an ace kicker
    ],
)
def test_659a_6_b_four_card_categories(hand: str, expected: HandCat) -> None:
    assert cat(hand) == expected


def test_659a_6_b_order_flush_and_straight_beat_trips_and_four_aces_beat_straight_flush() -> None:
    """§ 659a.6(b)(1)-(8) order: four aces > SF > quads > flush > straight > trips > two pair > pair."""
    ladder = [
        "2s 3d 5h 9c",
        "2s 2d 5h 9c",
        "2s 2d 5h 5c",
        "2s 2d 2h 9c",
        "2s 3d 4h 5c",
        "2s 3s 5s 7s",
        "2s 2d 2h 2c",
        "2s 3s 4s 5s",
        "As Ad Ah Ac",
    ]
    keys = [H(h).key for h in ladder]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


def test_659a_6_b_5_straight_order() -> None:
    """A-K-Q-J highest, A-2-3-4 second, then K-Q-J-T ... 2-3-4-5 lowest (§ 659a.6(b)(5))."""
    order = ["2s 3d 4h 5c", "3s 4d 5h 6c", "Ts Jd Qh Kc", "As 2d 3h 4c", "Ks Ad Qh Jc"]
    keys = [H(h).key for h in order]
    assert keys == sorted(keys) and len(set(keys)) == 5


def test_659a_6_b_2_straight_flush_order() -> None:
    """A-K-Q-J highest, A-2-3-4 second highest straight flush (§ 659a.6(b)(2))."""
    assert H("As Ks Qs Js").key > H("Ad 2d 3d 4d").key > H("Kh Qh Jh Th").key > H("2c 3c 4c 5c").key


def test_659a_6_a_joker_prefers_a_2_3_4_over_2_3_4_5() -> None:
    assert H("Jk 2s 3d 4c").key == H("As 2d 3h 4c").key


def test_659a_6_a_joker_in_flush_is_highest_missing_card() -> None:
    """As controller/rules/poker.py: the joker is the highest rank the suit lacks."""
    assert H("Jk 9s 5s 2s").key == H("As 9s 5s 2s").key
    assert H("Jk As 5s 2s").key == H("As Ks 5s 2s").key


def test_659a_6_c_ties_and_copies() -> None:
    """§ 659a.6(c): the highest card decides, then the next; identical = a copy."""
    assert compare(H("As 9d 5h 2c"), H("Ad 9s 5c 2h")) == 0
    assert compare(H("As 9d 5h 3c"), H("Ad 9s 5c 2h")) == 1
    assert compare(H("7s 7d Kh 2c"), H("7h 7c Qh Jc")) == 1  # pair, then kickers
    assert compare(medium_hand("Jk 2c"), medium_hand("As 2d")) == 0  # joker = ace in medium
    assert compare(medium_hand("Jk As"), medium_hand("Kd Kc")) == 1  # a pair of aces
    assert compare(low_hand("Jk"), low_hand("Ad")) == 0
    assert compare(low_hand("Kd"), low_hand("Qd")) == 1


# --- § 659a.11(b): setting; § 659a.11(f)(1)(iii)-(v): fouls ------------------------------
def test_659a_11_b_example_pair_of_sevens_split() -> None:
    """ "if the two-card medium hand contains a pair of sevens, the four-card high hand must
    contain at least a pair of sevens and the two remaining cards" (§ 659a.11(b))."""
    s = make_setting("7h 7d 3s 2c", "7s 7c", "Ad")
    assert s.foul() is None


@pytest.mark.parametrize(
    "high, medium, low, clause",
    [
        ("Ks 9d 5h 2c", "Qs Qd", "3h", "(iii)"),  # medium pair over a high-card high hand
        ("Ks Kd 5h 2c", "As Ad", "3h", "(iii)"),  # higher pair in the medium hand
        ("Qs 9d 5h 2c", "Ks 3d", "4h", "(iii)"),  # medium's top card over the high's
        ("As 9d 5h 2c", "Ks 3d", "Ah", "(iv)"),  # low over the medium
        ("As 9d 5h 2c", "Ts 3d", "Kh", "(iv)"),  # low's king over the medium's ten
    ],
)
def test_659a_11_f_1_fouls(high: str, medium: str, low: str, clause: str) -> None:
    why = make_setting(high, medium, low).foul()
    assert why is not None and clause in why


def test_659a_11_b_same_top_card_the_longer_hand_ranks_higher() -> None:
    """K-3 medium over a K low: same top card, and the medium has a further card (§ 659a.6(c))."""
    assert make_setting("As 9d 5h 2c", "Ks 3d", "Kh").foul() is None


def test_659a_11_f_1_iii_foul_loses_even_if_it_would_beat_the_dealer() -> None:
    player = make_setting("Ks 9d 5h 2c", "As Ad", "3h")
    dealer = make_setting("4s 5d 6h 8c", "3d 2d", "2h")  # weak dealer
    outcome, detail = base_outcome(player, dealer)
    assert outcome == "lose" and "foul" in detail


def test_659a_11_f_win_needs_two_hands_higher_copies_go_to_the_dealer() -> None:
    dealer = make_setting("Ks Kd 9h 2c", "Qs Jd", "8h")
    # high wins, medium wins, low loses -> win (§ 659a.11(f)(2))
    assert base_outcome(make_setting("As Ad 3h 2d", "Qh Kc", "7s"), dealer)[0] == "win"
    # high wins, medium copy, low loses -> lose (§ 659a.11(f)(1)(ii))
    assert base_outcome(make_setting("As Ad 3h 2d", "Qh Jc", "7s"), dealer)[0] == "lose"
    # high wins, medium copy, low wins -> win
    assert base_outcome(make_setting("As Ad 3h 2d", "Qh Jc", "9s"), dealer)[0] == "win"
    # high copy, medium copy, low wins -> lose (§ 659a.11(f)(1)(i))
    assert base_outcome(make_setting("Kh Kc 9s 2d", "Qh Jc", "9d"), dealer)[0] == "lose"


def test_bad_input_is_a_clear_error() -> None:
    with pytest.raises(CardError):
        high_hand("As Kd Qh")
    with pytest.raises(CardError):
        high_hand("As As Qh Jd")
    with pytest.raises(CardError) as e:
        high_hand("As Kd Qh Zz")
    assert e.value.token == "Zz"
    with pytest.raises(CardError):
        make_setting("As Kd Qh Jd", "As 2c", "3d")  # As used twice
    with pytest.raises(CardError):
        make_setting("As Kd Qh Jd", "2s 2c", "3d", seven=parse_cards("As Kd Qh Jd 2s 2c 4d"))


# --- properties: rankings are a total preorder; suits do not matter -----------------------
cards4 = st.lists(st.integers(0, JOKER), min_size=4, max_size=4, unique=True)
PERMS = st.permutations([0, 1, 2, 3])


def _permute(cards: list[int], perm: list[int]) -> list[int]:
    return [c if c == JOKER else (c // 4) * 4 + perm[c % 4] for c in cards]


@settings(max_examples=300, deadline=None)
@given(cards4, cards4, cards4)
def test_659a_6_ranking_is_a_total_preorder(a: list[int], b: list[int], c: list[int]) -> None:
    x, y, z = H(a), H(b), H(c)
    assert compare(x, y) == -compare(y, x)
    if compare(x, y) >= 0 and compare(y, z) >= 0:
        assert compare(x, z) >= 0
    assert compare(x, x) == 0


@settings(max_examples=300, deadline=None)
@given(cards4, PERMS)
def test_659a_6_suit_permutation_invariance(a: list[int], perm: list[int]) -> None:
    assert H(a).key == H(_permute(a, perm)).key


@settings(max_examples=300, deadline=None)
@given(cards4)
def test_659a_6_a_joker_is_at_least_an_ace(a: list[int]) -> None:
    """Whatever the joker completes, it is never worse than an ace (§ 659a.6(a))."""
    if JOKER not in a:
        return
    for ace in (48, 49, 50, 51):
        if ace not in a:
            assert H(a).key >= H([ace if c == JOKER else c for c in a]).key
