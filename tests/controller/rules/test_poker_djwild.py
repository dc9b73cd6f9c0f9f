"""Poker evaluator, DJ Wild Stud Poker rules (§ 687a.6: deuces and the joker fully wild).

Unit tests per rule, hypothesis properties against the independent reference
evaluator, and exact category counts of every 5-card hand from 53 cards.
"""

from __future__ import annotations

from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.rules._poker_reference import ref_best_five, ref_eval_five
from controller.rules.cards import JOKER, cards_str
from controller.rules.poker import Category, best_five, best_five_batch, compare, eval_five
from tests.controller.rules._poker_strategies import DJ_WILDS, h, hands, permute_suits, suit_permutations

C = Category
DJ = "dj-wild"


def ev(text: str):
    return best_five(h(text), DJ)


def cmp(a: str, b: str) -> int:
    return compare(ev(a), ev(b))


# § 687a.6(c)(1)-(11), with five of a kind placed as the § 687a.12 paytables place it
LADDER = [  # lowest to highest
    ("Ah Kd Jc 7s 5h", C.HIGH_CARD),
    ("3c 3d 4h 5s 7h", C.PAIR),
    ("Ac Ad Kh Ks Qh", C.TWO_PAIR),
    ("Ac Ad Ah Ks Qh", C.THREE_OF_A_KIND),
    ("Ac 2d 3h 4s 5h", C.STRAIGHT),  # the wheel, lowest straight (deuce wild as a 2)
    ("7c 6d 5h 4s 3h", C.STRAIGHT),
    ("Ac Kd Qh Js Th", C.STRAIGHT),
    ("3h 4h 5h 6h 8h", C.FLUSH),
    ("Ac Ad Ah Ks Kh", C.FULL_HOUSE),
    ("Ac Ad Ah As Kh", C.FOUR_OF_A_KIND),
    ("3s 4s 5s 6s 7s", C.STRAIGHT_FLUSH),
    ("9s Ts Js Qs Ks", C.STRAIGHT_FLUSH),
    ("3c 3d 3h 3s Jk", C.FIVE_OF_A_KIND),
    ("Ac Ad Ah As 2s", C.FIVE_OF_A_KIND),
    ("As Ks Qs Js Ts", C.ROYAL_FLUSH),
    ("2c 2d 2h 2s Jk", C.FIVE_WILDS),
]


def test_687a_6_c_category_ladder_in_order():
    ranks = [ev(t) for t, _ in LADDER]
    assert [r.category for r in ranks] == [c for _, c in LADDER]
    for lo, hi in zip(ranks, ranks[1:]):
        assert compare(lo, hi) == -1, (lo, hi)


def test_687a_6_b_deuces_and_joker_are_wild():
    assert ev("Kc Kd 2h 7s 5h").category is C.THREE_OF_A_KIND
    assert ev("Kc Kd Jk 7s 5h").category is C.THREE_OF_A_KIND
    assert cmp("Kc Kd 2h 7s 5h", "Kc Kd Jk 7s 5h") == 0
    assert ev("Kc 9d 2h 7s 5h").category is C.PAIR  # one wild: at least a pair
    assert cmp("Kc 9d 2h 7s 5h", "Kc Kd 9h 7s 5h") == 0
    assert ev("Kc Kd 7h 7s 2c").category is C.FULL_HOUSE  # two pair + wild
    assert ev("Kc Kd Kh 7s 2c").category is C.FOUR_OF_A_KIND


def test_687a_6_c_1_five_wilds_beats_a_natural_royal():
    r = ev("2c 2d 2h 2s Jk")
    assert r.category is C.FIVE_WILDS and not r.natural
    assert cmp("2c 2d 2h 2s Jk", "As Ks Qs Js Ts") == 1
    assert ev("2c 2d 2h 2s Jk 9d Ah").category is C.FIVE_WILDS


def test_687a_6_c_2_natural_and_wild_royal_flush():
    nat, wild = ev("As Ks Qs Js Ts"), ev("As Ks Qs Js 2d")
    assert nat.category is wild.category is C.ROYAL_FLUSH
    assert nat.natural and not wild.natural
    # § 687a.6(c) ranks them as one hand; § 687a.11(e)(2): equal hands push
    assert compare(nat, wild) == 0
    assert ev("Ts 2d 2c 2h Jk").category is C.ROYAL_FLUSH  # four wilds + a ten: royal
    assert cmp("As Ks Qs 2d Jk", "Ac Ad Ah 2c Jk") == 1  # royal over five aces


def test_five_of_a_kind_between_royal_and_straight_flush_per_687a_12_paytables():
    assert ev("9s 2d 2c 2h Jk").category is C.FIVE_OF_A_KIND  # four wilds + a nine
    assert cmp("9s 2d 2c 2h Jk", "9h Th Jh Qh Kh") == 1
    assert cmp("Ac Ad 2h 2s Jk", "Kc Kd 2h 2s Jk") == 1  # five aces over five kings
    r = ev("Kc Kd 2h 2s Jk")
    assert r.category is C.FIVE_OF_A_KIND and not r.natural
    assert cards_str(r.best) == "Kd Kc 2h 2s Jk"


def test_687a_6_a_ace_low_only_in_the_wheel_and_no_wrap():
    assert ev("Qs Kd Ah 2c 3d").category is C.PAIR  # no Q-K-A-2-3: wild = ace
    assert cmp("Ac 2d 3h 4s 5h", "7c 6d 5h 4s 3h") == -1  # wheel is the lowest straight
    assert cmp("3c 4d 5h 6s 2c", "3c 4d 5h 6s 7h") == 0  # the wild is a 7, not a 2
    assert ev("3c 4d 5h 7s Jk").category is C.STRAIGHT
    assert ev("As 2s 3s 4s 5s").category is C.STRAIGHT_FLUSH


def test_wild_cards_complete_a_flush_with_the_highest_missing_ranks():
    assert cmp("Ks 9s 7s 4s 2d", "As Ks 9s 7s 4s") == 0
    assert cmp("9s 7s 4s 2d Jk", "As Ks 9s 7s 4s") == 0
    assert cmp("9s 7s 4s 2d Jk", "As Ks 9s 7s 3s") == 1


def test_natural_flag_distinguishes_the_paytable_columns_687a_12_d():
    """§ 687a.12(d) "Natural" vs "With Wild"; reading 687a-1: no joker, and the same
    category with every deuce played as a plain deuce (reproduces the printed Trips figures)."""
    assert ev("Kc Kd Kh 9s 5h").natural
    assert not ev("Kc Kd 2h 9s 5h").natural
    assert cmp("Kc Kd Kh 9s 5h", "Kc Kd 2h 9s 5h") == 0  # same rank, different pay
    assert ev("3h 4h 5h 6h 7h").natural and not ev("3h 4h 5h 6h Jk").natural
    # a deuce that is not needed as a wild card counts at face value
    assert ev("2c 5c 8c Jc Kc").natural and ev("2c 5c 8c Jc Kc").category is C.FLUSH
    assert ev("2h 3c 4d 5s 6c").natural and ev("2h 3c 4d 5s 6c").category is C.STRAIGHT
    r = ev("2c 3c 4c 5c 6c")  # wild deuce makes 3-7: still a straight flush
    assert r.category is C.STRAIGHT_FLUSH and r.natural
    assert not ev("2c 3d 4h 5s 7c").natural  # the deuce is needed as the 6
    assert not ev("As Ks Qs Js 2s").natural  # needed as the ten
    assert not ev("Kc 2d 2h 2s 2c").natural and not ev("2c 2d 2h 2s Jk").natural
    # six or seven cards: natural when the category is made without wild play
    assert ev("As Ks Qs Js Ts 2d 9c").natural
    assert not ev("Ks Qs Js Ts 2d 9c 3h").natural


def test_best_five_prefers_natural_cards_among_equal_fives():
    r = ev("As Ks Qs Js Ts 2d Jk")
    assert r.category is C.ROYAL_FLUSH and r.natural
    assert cards_str(r.best) == "As Ks Qs Js Ts"


# ---------------------------------------------------------------------------------------------
# properties
# ---------------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(hands(5, force=DJ_WILDS))
def test_property_eval_five_matches_reference(cards):
    r = eval_five(cards, DJ)
    name, _ = ref_eval_five(cards, DJ)
    assert r.category.text == name
    # reading 687a-1: natural = no joker and the same category with deuces at face value
    assert r.natural == (JOKER not in cards and ref_eval_five(cards, "natural")[0] == name)


@pytest.mark.slow  # over 1.5 s on a quiet 2-core machine
@settings(max_examples=100, deadline=None)
@given(st.sampled_from([6, 7]).flatmap(lambda n: hands(n, force=DJ_WILDS)))
def test_property_best_five_is_the_reference_max_over_subsets(cards):
    r = best_five(cards, DJ)
    name, value = ref_best_five(cards, DJ)
    assert r.category.text == name
    assert set(r.best) <= set(cards) and len(set(r.best)) == 5
    assert ref_eval_five(r.best, DJ)[1] == value


@settings(max_examples=200, deadline=None)
@given(hands(5, force=DJ_WILDS), hands(5, force=DJ_WILDS))
def test_property_compare_agrees_with_reference_order(a, b):
    va, vb = ref_eval_five(a, DJ)[1], ref_eval_five(b, DJ)[1]
    assert compare(eval_five(a, DJ), eval_five(b, DJ)) == (va > vb) - (va < vb)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([5, 6, 7]).flatmap(lambda n: hands(n, force=DJ_WILDS)), suit_permutations())
def test_property_rank_invariant_under_suit_permutation(cards, perm):
    a = best_five(cards, DJ)
    b = best_five(permute_suits(cards, perm), DJ)
    assert (a.category, a.score, a.natural) == (b.category, b.score, b.natural)


@settings(max_examples=200, deadline=None)
@given(hands(5, force=DJ_WILDS), hands(5, force=DJ_WILDS), hands(7, force=DJ_WILDS))
def test_property_compare_is_a_total_preorder(a, b, c):
    ra, rb, rc = (best_five(x, DJ) for x in (a, b, c))
    assert compare(ra, ra) == 0
    assert compare(ra, rb) == -compare(rb, ra)
    for x, y, z in ((ra, rb, rc), (rb, rc, ra), (rc, ra, rb), (ra, rc, rb)):
        if compare(x, y) >= 0 and compare(y, z) >= 0:
            assert compare(x, z) >= 0


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([5, 6, 7]), st.integers(0, 2**32 - 1))
def test_property_batch_equals_single_hand(n, seed):
    """The batch evaluator (the analysis's) ranks every hand as the single-hand one does, the
    four deuces and the joker wild (§ 687a.6(b))."""
    rng = np.random.default_rng(seed)
    hs = np.argsort(rng.random((64, 53)), axis=1)[:, :n]
    cat, score, nat = best_five_batch(hs, DJ)
    for i, row in enumerate(hs.tolist()):
        r = best_five(row, DJ)
        assert (int(cat[i]), int(score[i]), bool(nat[i])) == (int(r.category), r.score, r.natural)


# ---------------------------------------------------------------------------------------------
# exact counts: every five-card hand from 53
# ---------------------------------------------------------------------------------------------

#: C(53,5) DJ Wild hands by category: exhaustive enumeration with the independent
#: reference evaluator; the top three re-derived by hand below.
DJ_53_5 = {
    C.FIVE_WILDS: 1,
    C.ROYAL_FLUSH: 1004,
    C.FIVE_OF_A_KIND: 1400,
    C.STRAIGHT_FLUSH: 3648,
    C.FOUR_OF_A_KIND: 51688,
    C.FULL_HOUSE: 15048,
    C.FLUSH: 18956,
    C.STRAIGHT: 84000,
    C.THREE_OF_A_KIND: 458040,
    C.TWO_PAIR: 95040,
    C.PAIR: 1341180,
    C.HIGH_CARD: 799680,
}


def test_djwild_five_card_figures_rederived_by_hand():
    assert sum(DJ_53_5.values()) == comb(53, 5)
    # w of the 5 wild cards and 5-w royal cards of one suit (w = 0 is the natural royal)
    assert DJ_53_5[C.ROYAL_FLUSH] == 4 * sum(comb(5, w) * comb(5, 5 - w) for w in range(0, 5))
    # w wilds + (5-w) naturals of one of 12 ranks (3..A), less 4 wilds + T..A (a royal)
    assert DJ_53_5[C.FIVE_OF_A_KIND] == sum(comb(5, w) * 12 * comb(4, 5 - w) for w in range(1, 5)) - 5 * 5 * 4
    # no wild card and no pair, straight or flush among ranks 3..A
    no_pair = comb(12, 5) - 8  # 8 straights 3-7 .. T-A within 3..A (the wheel needs a deuce)
    assert DJ_53_5[C.HIGH_CARD] == no_pair * (4**5 - 4)


@pytest.mark.slow
def test_exact_count_every_five_card_hand_from_53_djwild():
    from controller.analysis.deck import enumerated_counts

    counts = enumerated_counts(5, DJ)
    assert counts == DJ_53_5
    # the natural flag over every hand: no joker, and the bug/plain category of the same five
    # cards at face value equals the DJ Wild category (reading 687a-1)
    from controller.analysis.deck import iter_hands
    from controller.rules.poker_batch import _level_to_category, score_columns

    naturals = 0
    for cols in iter_hands(53, 5, chunk=1 << 18):
        s, nat = score_columns(cols, DJ)
        s_bug, _ = score_columns(cols, "bug", want_natural=False)
        assert nat is not None
        has_joker = np.zeros(len(nat), dtype=np.bool_)
        for col in cols:
            has_joker |= col == JOKER
        same = _level_to_category("bug")[s_bug >> 20] == _level_to_category(DJ)[s >> 20]
        assert np.array_equal(nat, ~has_joker & same)
        naturals += int(nat.sum())
    # every hand with no wild card is natural, plus those whose deuces play at face value
    assert naturals > comb(48, 5)


@pytest.mark.slow
def test_analyze_command_djwild_option():
    from controller.analysis import load_all

    res = load_all()[("deck", "53")](None, {"cards": "5", "rules": "dj-wild"})
    assert {r.outcome: r.count for r in res.rows} == {c.text: n for c, n in DJ_53_5.items()}
    with pytest.raises(ValueError):
        load_all()[("deck", "53")](None, {"cards": "5", "rules": "dj-wild", "method": "exact"})
