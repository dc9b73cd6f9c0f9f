"""Face Up Pai Gow Poker seven-card hands: Fortune (§ 688a.6(e)), Progressive (§ 688a.6(f)),
Ace High Pai Gow (§ 688a.1, § 688a.6(d))."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.rules.cards import JOKER, parse_cards
from controller.rules.faceup_bonus import (
    BONUS_ORDER,
    BonusHandError,
    ace_high_kind,
    ace_high_pai_gow,
    bonus_hand,
    paytable_keys,
)
from controller.rules.poker import best_five

seven = st.lists(st.integers(0, 52), min_size=7, max_size=7, unique=True)


def cat(text: str, mode: str = "bug") -> str:
    return bonus_hand(parse_cards(text, count=7), mode).category  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "hand,expected",
    [
        # § 688a.6(e)(1): seven suited in a run, no joker; the ace high or low (A-2-..-7)
        ("8h 9h Th Jh Qh Kh Ah", "seven-card-natural-straight-flush"),
        ("Ah 2h 3h 4h 5h 6h 7h", "seven-card-natural-straight-flush"),
        # no wrap-around (§ 688a.6(a): Q-K-A-2-3 is no straight)
        ("Qh Kh Ah 2h 3h 4h 5h", "straight-flush"),
        # § 688a.6(e)(2): royal flush + a suited K-Q of another suit, with or without the joker
        ("As Ks Qs Js Ts Kh Qh", "royal-flush-royal-match"),
        ("As Ks Qs Jk Ts Kd Qd", "royal-flush-royal-match"),
        ("As Ks Qs Js Ts Kh Qd", "royal-flush"),  # K and Q not of one suit
        # § 688a.6(e)(3): the joker completes seven in a run
        ("2c 3c 4c Jk 6c 7c 8c", "seven-card-wild-straight-flush"),
        ("Jk 2c 3c 4c 5c 6c 7c", "seven-card-wild-straight-flush"),
        # § 688a.6(b)(1): five aces = four aces and the joker
        ("As Ah Ad Ac Jk 2c 3d", "five-aces"),
        # § 688a.6(b)(2): royal flush, natural or with the joker
        ("As Ks Qs Js Jk 2c 3d", "royal-flush"),
        # § 688a.6(b)(3): the joker completes a straight flush
        ("5d 6d 7d Jk 9d 2c 2h", "straight-flush"),
        # § 688a.6(b)(4): four of a kind; three aces and the joker are four aces
        ("9s 9h 9d 9c Kd 2c 3d", "four-of-a-kind"),
        ("As Ah Ad Jk Kd 2c 3d", "four-of-a-kind"),
        ("Ks Kh Kd Jk 9d 2c 3d", "three-of-a-kind"),  # the joker is no king (bug)
        # § 688a.6(b)(5): full house; the joker as an ace fills one
        ("9s 9h 9d 2c 2d Kd 3h", "full-house"),
        ("As Ah Jk 2c 2d Kd 3h", "full-house"),
        ("Ks Kh Kd Qs Qh Qd 3h", "full-house"),
        # § 688a.6(b)(6): flush, with the joker
        ("2h 5h 9h Jh Jk 3c 3d", "flush"),
        # § 688a.6(b)(7): straight, the wheel, with the joker; straight outranks trips
        ("5c 6d 7h 8s Jk Kc Kd", "straight"),
        ("Ac 2d 3h 4s 5c 5d 5h", "straight"),
        ("Ac Kd Qh Js Tc 2d 2h", "straight"),
        # § 688a.6(b)(8)-(10): trips, three pair (Fortune only), two pair
        ("7c 7d 7h Ks 2c 4d 9h", "three-of-a-kind"),
        ("Kc Kd Qh Qs 2c 2d 3h", "three-pair"),
        ("Kc Kd Qh Qs Jk 2d 2h", "three-pair"),  # the joker is an ace singleton
        ("Kc Kd Qh Qs Ac Jk 3h", "three-pair"),  # A + joker: a pair of aces
        ("Kc Kd Qh Qs 9c 2d 3h", "two-pair"),
        ("Kc Kd 9h 7s 5c 3d 2h", "pair"),
        ("Jk Kc Qh 9s 8c 2d 3h", "high-card"),
    ],
)
def test_688a_6_fortune_categories(hand, expected):
    assert cat(hand) == expected


@pytest.mark.parametrize(
    "hand,expected",
    [
        # § 688a.12(d) "Fully wild joker": the joker is any card
        ("Ks Kh Kd Kc Jk 2c 3d", "five-of-a-kind"),  # § 688a.6(f)(6)
        ("As Ah Ad Ac Jk 2c 3d", "five-aces"),  # § 688a.6(f)(5)
        ("Ks Kh Kd Jk 9d 2c 3d", "four-of-a-kind"),
        ("Ks Kh Qd Qc Jk 2c 3d", "full-house"),
        ("Ks Kh Jk 9d 7c 2c 3d", "three-of-a-kind"),
        ("Jk 2c 3c 4c 5c 6c 7c", "seven-card-wild-straight-flush"),  # § 688a.6(f)(3)
    ],
)
def test_688a_12_d_fully_wild_joker(hand, expected):
    assert cat(hand, "fully-wild") == expected


def test_688a_6_f_paytable_keys():
    """§ 688a.6(f)(1): "seven-card straight flush" is natural or wild."""
    assert paytable_keys("seven-card-wild-straight-flush") == (
        "seven-card-wild-straight-flush",
        "seven-card-straight-flush",
    )
    assert paytable_keys("five-aces") == ("five-aces", "five-of-a-kind")
    assert paytable_keys("flush") == ("flush",)


@pytest.mark.parametrize(
    "hand,kind",
    [
        ("Ac Kd 9h 7s 5c 3d 2h", "natural"),  # § 688a.1: seven cards ranking ace high
        ("Jk Kd 9h 7s 5c 3d 2h", "joker"),  # the joker plays the ace
        ("Kc Qd 9h 7s 5c 3d 2h", None),  # king high
        ("Ac Ad 9h 7s 5c 3d 2h", None),  # a pair
        ("Ac Jk 9h 7s 5c 3d 2h", None),  # the joker pairs the ace
        ("Ac 2d 3h 4s 5c 9d Jh", None),  # the wheel
        ("Jk 2d 3h 4s 5c Td Kh", None),  # the joker completes A-2-3-4-5
        ("Jk Td Jh Qs 2c 4d Kh", None),  # ... or T-J-Q-K-A
        ("Ac Kc 9c 7c 5d 3d 2h", "natural"),  # four clubs: no flush without the joker
        ("Jk Kc 9c 7c 5c 3d 2h", None),  # four clubs and the joker: a flush
    ],
)
def test_688a_1_ace_high_pai_gow(hand, kind):
    cards = parse_cards(hand, count=7)
    assert ace_high_kind(cards) == kind
    assert ace_high_pai_gow(cards) == (kind is not None)


def test_688a_bonus_hand_rejects_bad_input():
    with pytest.raises(BonusHandError):
        bonus_hand((1, 2, 3, 4, 5, 6))
    with pytest.raises(BonusHandError) as e:
        bonus_hand((1, 1, 3, 4, 5, 6, 7))
    assert e.value.token == "2d"
    with pytest.raises(BonusHandError):
        bonus_hand((1, 2, 3, 4, 5, 6, 53))
    with pytest.raises(ValueError):
        ace_high_kind((1, 2, 3))


_TO_FIVE = {
    "seven-card-natural-straight-flush": {"straight-flush", "royal-flush"},
    "seven-card-wild-straight-flush": {"straight-flush", "royal-flush"},
    "royal-flush-royal-match": {"royal-flush"},
    "three-pair": {"two-pair"},
}


@settings(max_examples=400, deadline=None)
@given(seven)
def test_688a_6_b_standard_categories_agree_with_the_poker_evaluator(cards):
    """Below the seven-card specials, the best seven-card hand is the best five-card hand
    of the shared evaluator (§ 688a.6(b) = the bug family)."""
    c = bonus_hand(cards).category
    five = best_five(cards, "bug").category.text
    assert five in _TO_FIVE.get(c, {c})


def _permute(cards, perm):
    return [c if c == JOKER else (c // 4) * 4 + perm[c % 4] for c in cards]


@settings(max_examples=300, deadline=None)
@given(seven, st.permutations(range(4)))
def test_688a_classifications_are_suit_permutation_invariant(cards, perm):
    p = _permute(cards, perm)
    for mode in ("bug", "fully-wild"):
        assert bonus_hand(cards, mode) == bonus_hand(p, mode)
    assert ace_high_kind(cards) == ace_high_kind(p)


@settings(max_examples=300, deadline=None)
@given(seven)
def test_688a_fully_wild_is_never_worse_than_bug(cards):
    """A fully wild joker can do all a bug can (§ 688a.6(a) vs § 688a.12(d))."""
    assert bonus_hand(cards, "fully-wild").order <= bonus_hand(cards, "bug").order


def test_688a_bonus_order_is_the_rank_order():
    """§ 688a.6(e): the seven-card specials rank above five aces; (b)(9) three pair between
    three-of-a-kind and two pair; (f)(5)-(7) five aces > five of a kind > royal flush."""
    o = BONUS_ORDER
    assert (
        o.index("seven-card-natural-straight-flush")
        < o.index("royal-flush-royal-match")
        < o.index("seven-card-wild-straight-flush")
        < o.index("five-aces")
        < o.index("five-of-a-kind")
        < o.index("royal-flush")
    )
    assert o.index("three-of-a-kind") < o.index("three-pair") < o.index("two-pair")
