"""Poker evaluator, bug-joker rules (§ 670a.6) and plain 52-card rules.

Unit tests per rule, hypothesis properties against the independent reference
evaluator (controller/rules/_poker_reference.py), and exact category counts of
every 5-card hand from 53 and from 52 cards.
"""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.rules._poker_reference import ref_best_five, ref_eval_five
from controller.rules.cards import JOKER, CardError, cards_str
from controller.rules.poker import Category, best_five, best_five_batch, compare, eval_five
from tests.controller.rules._poker_strategies import JOKER_ONLY, h, hands, permute_suits, sign, suit_permutations

C = Category


def ev(text: str, rules: str = "bug"):
    return best_five(h(text), rules)


def cmp(a: str, b: str, rules: str = "bug") -> int:
    return compare(ev(a, rules), ev(b, rules))


# ---------------------------------------------------------------------------------------------
# API shape
# ---------------------------------------------------------------------------------------------


def test_category_text_names_are_the_paytable_keys():
    assert [c.text for c in C] == [
        "high-card",
        "pair",
        "two-pair",
        "three-of-a-kind",
        "straight",
        "flush",
        "full-house",
        "four-of-a-kind",
        "straight-flush",
        "royal-flush",
        "five-aces",
        "five-of-a-kind",
        "five-wilds",
    ]
    assert C.from_text("five-aces") is C.FIVE_ACES


def test_eval_five_requires_exactly_five_and_best_five_five_to_seven():
    with pytest.raises(CardError):
        eval_five(h("As Kd Qh Jc Ts 9d"))
    with pytest.raises(CardError):
        best_five(h("As Kd Qh Jc"))
    with pytest.raises(CardError):
        best_five(h("As Kd Qh Jc Ts 9d 8d 7d"))
    assert eval_five("As Kd Qh Jc Ts").category is C.STRAIGHT  # text is accepted too


def test_bad_input_is_a_card_error_naming_the_token():
    with pytest.raises(CardError) as e:
        best_five("As Kd Qh Jc Zz")
    assert e.value.token == "Zz"
    with pytest.raises(CardError) as e:
        best_five((51, 51, 1, 2, 3))
    assert e.value.token == "As"
    with pytest.raises(CardError):
        best_five((1, 2, 3, 4, 53))
    with pytest.raises(CardError) as e:  # the natural rules have no joker
        best_five((JOKER, 1, 2, 3, 40), "natural")
    assert e.value.token == "Jk"
    with pytest.raises(ValueError):
        best_five((1, 2, 3, 4, 40), "joker-poker")


# ---------------------------------------------------------------------------------------------
# § 670a.6(b) categories and their order
# ---------------------------------------------------------------------------------------------

LADDER = [  # lowest to highest, § 670a.6(b)(1)-(10), high card below
    ("Ah Kd Jc 7s 5h", C.HIGH_CARD),
    ("2c 2d 3h 4s 5h", C.PAIR),
    ("Ac Ad Kh Ks Qh", C.TWO_PAIR),
    ("2c 2d 2h 4s 5h", C.THREE_OF_A_KIND),
    ("6c 5d 4h 3s 2h", C.STRAIGHT),
    ("Kc Qd Jh Ts 9h", C.STRAIGHT),
    ("Ac 2d 3h 4s 5h", C.STRAIGHT),
    ("Ac Kd Qh Js Th", C.STRAIGHT),
    ("2h 3h 4h 5h 7h", C.FLUSH),
    ("2c 2d 2h 3s 3h", C.FULL_HOUSE),
    ("Ac Ad Ah Ks Kh", C.FULL_HOUSE),
    ("2c 2d 2h 2s 3h", C.FOUR_OF_A_KIND),
    ("Ac Ad Ah As Kh", C.FOUR_OF_A_KIND),
    ("2s 3s 4s 5s 6s", C.STRAIGHT_FLUSH),
    ("9s Ts Js Qs Ks", C.STRAIGHT_FLUSH),
    ("As 2s 3s 4s 5s", C.STRAIGHT_FLUSH),
    ("As Ks Qs Js Ts", C.ROYAL_FLUSH),
    ("As Ah Ad Ac Jk", C.FIVE_ACES),
]


def test_670a_6_b_category_ladder_in_order():
    ranks = [ev(t) for t, _ in LADDER]
    assert [r.category for r in ranks] == [c for _, c in LADDER]
    for lo, hi in zip(ranks, ranks[1:]):
        assert compare(lo, hi) == -1, (lo, hi)


def test_670a_6_b_1_five_aces_is_four_aces_and_the_joker():
    r = ev("As Ah Ad Ac Jk")
    assert r.category is C.FIVE_ACES and not r.natural
    assert cards_str(r.best) == "As Ah Ad Ac Jk"
    assert cmp("As Ah Ad Ac Jk", "Ks Qs Js Ts Jk") == 1


def test_670a_6_b_2_royal_flush_natural_or_with_joker_in_any_position():
    assert ev("Ks Qs Js Ts Jk").category is C.ROYAL_FLUSH
    for missing in "AKQJT":
        cards = " ".join(f"{r}h" for r in "AKQJT" if r != missing) + " Jk"
        r = ev(cards)
        assert r.category is C.ROYAL_FLUSH and not r.natural, cards
    assert cmp("Ks Qs Js Ts Jk", "Ad Kd Qd Jd Td") == 0


def test_670a_6_b_3_wheel_is_the_highest_straight_flush():
    assert cmp("As 2s 3s 4s 5s", "9h Th Jh Qh Kh") == 1
    assert cmp("9h Th Jh Qh Kh", "8h 9h Th Jh Qh") == 1
    assert cmp("2d 3d 4d 5d 6d", "2s 3s 4s 5s 6s") == 0
    # the joker completes the wheel as its ace, beating the 6-high it could also make
    r = ev("2s 3s 4s 5s Jk")
    assert r.category is C.STRAIGHT_FLUSH and cmp("2s 3s 4s 5s Jk", "As 2s 3s 4s 5s") == 0


def test_670a_6_b_7_straight_order_ace_high_then_wheel_then_king_high():
    assert cmp("Ac Kd Qh Js Th", "Ac 2d 3h 4s 5h") == 1
    assert cmp("Ac 2d 3h 4s 5h", "Kc Qd Jh Ts 9h") == 1
    assert cmp("Kc Qd Jh Ts 9h", "6c 5d 4h 3s 2h") == 1
    # with the joker, 2-3-4-5 becomes the wheel (joker = ace), not 6-high
    assert cmp("2c 3d 4h 5s Jk", "Ac 2d 3h 4s 5h") == 0
    assert cmp("9c Td Jh Qs Jk", "9c Td Jh Qs Kd") == 0  # joker as the king


def test_670a_6_a_ace_does_not_wrap():
    assert ev("Qs Kd Ah 2c 3d").category is C.HIGH_CARD
    assert ev("Qs Ks As 2s 3s").category is C.FLUSH
    r = ev("Qs Kd 2c 3d Jk")  # no Q-K-A-2-3: the joker is just an ace (ace high)
    assert r.category is C.HIGH_CARD and cmp("Qs Kd 2c 3d Jk", "Qs Kd 2c 3d Ah") == 0


def test_670a_6_a_joker_is_an_ace_in_pair_type_hands():
    r = ev("Ah Kd Jk 7c 5s")
    assert r.category is C.PAIR and not r.natural
    assert cmp("Ah Kd Jk 7c 5s", "Ah Ac Kd 7c 5s") == 0
    # joker with a pair of kings: K-K with an ace kicker, not three kings
    r = ev("Kh Kd Jk 7c 5s")
    assert r.category is C.PAIR and r.natural
    assert cmp("Kh Kd Jk 7c 5s", "Kh Kd As 7c 5s") == 0
    assert cmp("Kh Kd Jk 7c 5s", "Kc Ks Qd 7h 5c") == 1
    assert cards_str(r.best) == "Kh Kd Jk 7c 5s"
    assert ev("Ah Ad Jk 7c 5s").category is C.THREE_OF_A_KIND
    assert ev("Ah Ad Ac Jk 5s").category is C.FOUR_OF_A_KIND
    assert ev("Kh Kd Kc Jk 5s").category is C.THREE_OF_A_KIND
    assert ev("Kh Kd Ac Jk 5s").category is C.TWO_PAIR
    assert ev("Kh Kd Kc Ac Jk").category is C.FULL_HOUSE
    assert ev("Kh Kd Kc Ks Jk").category is C.FOUR_OF_A_KIND  # K-K-K-K with an ace kicker
    assert cmp("Kh Kd Kc Ks Jk", "Kh Kd Kc Ks Ad") == 0


def test_670a_6_a_joker_completes_a_flush_as_the_highest_missing_card():
    assert cmp("Ks 9s 5s 3s Jk", "Ah Kh 9h 5h 3h") == 0  # joker = ace
    assert cmp("As Ks 9s 5s Jk", "Ah Kh Qh 9h 5h") == 0  # ace present: joker = queen
    assert ev("As Ks 9s 5s Jk").category is C.FLUSH


def test_670a_6_c_highest_card_not_in_the_other_hand():
    assert cmp("Ah Kd Jc 7s 5h", "Ac Kh Jd 7c 4h") == 1
    assert cmp("Ah Kd Jc 7s 5h", "As Kc Jh 7d 5c") == 0
    assert cmp("Kh Kd 9c 7s 5h", "Kc Ks 9d 7c 4h") == 1
    assert cmp("Ac Ad 3h 3s 2h", "Kc Kd Qh Qs Jh") == 1  # § 670a.6(b)(9): aces up first
    assert cmp("9h 7h 5h 3h 2h", "9s 7s 5s 3s 2s") == 0
    assert cmp("Ah Qh 5h 3h 2h", "Ks Qs Js 9s 8s") == 1


def test_best_five_of_seven_chooses_the_joker_use():
    r = ev("As Kd Qh Jc Ts 9d Jk")
    assert r.category is C.STRAIGHT and r.natural
    assert cards_str(r.best) == "As Kd Qh Jc Ts"
    r = ev("9s Ts Js Qs Ks 2d Jk")  # joker makes the royal from 9-K
    assert r.category is C.ROYAL_FLUSH and not r.natural
    assert set(r.best) == set(h("Ts Js Qs Ks Jk"))
    r = ev("As Ah Ad Ac Kd Qd Jk")
    assert r.category is C.FIVE_ACES
    assert cmp("Kc Kd Kh 7c 7d 7h 7s", "7c 7d 7h 7s Kd") == 0  # quads beat the higher trips
    assert cmp("Kc Kd Kh Ac Ad Ah Jk", "As Ac Ad Ah Kd") == 0  # joker = fourth ace
    assert ev("Kc Kd Kh Qc Qd Qh 2s").category is C.FULL_HOUSE
    r = ev("7c 7d 3h 3s 2c 9d Jk")  # two pair, joker = ace kicker
    assert r.category is C.TWO_PAIR and r.natural and JOKER in r.best


def test_natural_rules_plain_poker_wheel_is_lowest():
    assert cmp("Ac 2d 3h 4s 5h", "6c 5d 4h 3s 2h", "natural") == -1
    assert ev("As Ks Qs Js Ts", "natural").category is C.ROYAL_FLUSH
    assert ev("As 2s 3s 4s 5s", "natural").category is C.STRAIGHT_FLUSH
    assert all(ev(t, "natural").natural for t, _ in LADDER[:-1])


# ---------------------------------------------------------------------------------------------
# properties
# ---------------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(hands(5, force=JOKER_ONLY))
def test_property_eval_five_matches_reference(cards):
    r = eval_five(cards, "bug")
    name, _ = ref_eval_five(cards, "bug")
    assert r.category.text == name
    assert sorted(r.best) == sorted(cards)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([6, 7]).flatmap(lambda n: hands(n, force=JOKER_ONLY)))
def test_property_best_five_is_the_reference_max_over_subsets(cards):
    r = best_five(cards, "bug")
    name, value = ref_best_five(cards, "bug")
    assert r.category.text == name
    assert set(r.best) <= set(cards) and len(set(r.best)) == 5
    assert ref_eval_five(r.best, "bug")[1] == value  # the five reported are a best five


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(hands(7, force=JOKER_ONLY), hands(7, force=JOKER_ONLY))
def test_property_compare_agrees_with_reference_order(a, b):
    ra, rb = best_five(a, "bug"), best_five(b, "bug")
    assert compare(ra, rb) == sign(
        (ref_best_five(a, "bug")[1] > ref_best_five(b, "bug")[1])
        - (ref_best_five(a, "bug")[1] < ref_best_five(b, "bug")[1])
    )


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["bug", "natural"]),
    st.sampled_from([5, 6, 7]).flatmap(lambda n: hands(n, deck=52)),
    st.booleans(),
    suit_permutations(),
)
def test_property_rank_invariant_under_suit_permutation(rules, cards, joker, perm):
    if joker and rules == "bug":
        cards = (JOKER,) + cards[1:]
    a = best_five(cards, rules)
    b = best_five(permute_suits(cards, perm), rules)
    assert (a.category, a.score, a.natural) == (b.category, b.score, b.natural)


@settings(max_examples=300, deadline=None)
@given(hands(7, force=JOKER_ONLY), hands(6, force=JOKER_ONLY), hands(5, force=JOKER_ONLY))
def test_property_compare_is_a_total_preorder(a, b, c):
    ra, rb, rc = (best_five(x, "bug") for x in (a, b, c))
    assert compare(ra, ra) == 0  # reflexive
    assert compare(ra, rb) == -compare(rb, ra)  # total and consistent
    for x, y, z in ((ra, rb, rc), (rb, rc, ra), (rc, ra, rb), (ra, rc, rb)):
        if compare(x, y) >= 0 and compare(y, z) >= 0:  # transitive
            assert compare(x, z) >= 0


@settings(max_examples=50, deadline=None)
@given(
    st.sampled_from(["bug", "natural"]),
    st.sampled_from([5, 6, 7]),
    st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=1),
)
@pytest.mark.slow  # over 2 s on a quiet 2-core machine
def test_property_batch_equals_single_hand(rules, n, seed):
    rng = np.random.default_rng(seed[0])
    deck = 52 if rules == "natural" else 53
    hs = np.argsort(rng.random((64, deck)), axis=1)[:, :n]
    cat, score, nat = best_five_batch(hs, rules)
    for i, row in enumerate(hs.tolist()):
        r = best_five(row, rules)
        assert (int(cat[i]), int(score[i]), bool(nat[i])) == (int(r.category), r.score, r.natural)


def test_batch_rejects_duplicates_and_bad_shapes():
    with pytest.raises(ValueError):
        best_five_batch(np.array([[5, 5, 9, 13, 40]]), "bug")
    with pytest.raises(ValueError):
        best_five_batch(np.array([[JOKER, 5, 9, 13, 40]]), "natural")
    with pytest.raises(ValueError):
        best_five_batch(np.array([[1, 2, 3, 4]]), "bug")
    with pytest.raises(ValueError):
        best_five_batch(np.array([[1, 2, 3, 4, 60]]), "bug")


def test_every_joker_flush_draw_matches_reference():
    """All 2,860 hands of the joker with four cards of one suit (§ 670a.6(a): the joker
    completes a flush, straight flush or royal flush), exhaustively against the reference."""
    for suit in range(4):
        for ranks in combinations(range(13), 4):
            cards = tuple(r * 4 + suit for r in ranks) + (JOKER,)
            assert eval_five(cards, "bug").category.text == ref_eval_five(cards, "bug")[0], cards_str(cards)


# ---------------------------------------------------------------------------------------------
# exact counts: every five-card hand
# ---------------------------------------------------------------------------------------------

#: C(53,5) hands by best category with the joker as a bug.  Obtained by exhaustive
#: enumeration with the independent reference evaluator (2,869,685 hands) and equal to
#: the 53-card Pai Gow poker figures; several are re-derived by hand below.
BUG_53_5 = {
    C.FIVE_ACES: 1,
    C.ROYAL_FLUSH: 24,
    C.STRAIGHT_FLUSH: 180,
    C.FOUR_OF_A_KIND: 828,
    C.FULL_HOUSE: 4368,
    C.FLUSH: 7804,
    C.STRAIGHT: 20532,
    C.THREE_OF_A_KIND: 63360,
    C.TWO_PAIR: 138600,
    C.PAIR: 1215024,
    C.HIGH_CARD: 1418964,
}
NATURAL_52_5 = {
    C.ROYAL_FLUSH: 4,
    C.STRAIGHT_FLUSH: 36,
    C.FOUR_OF_A_KIND: 624,
    C.FULL_HOUSE: 3744,
    C.FLUSH: 5108,
    C.STRAIGHT: 10200,
    C.THREE_OF_A_KIND: 54912,
    C.TWO_PAIR: 123552,
    C.PAIR: 1098240,
    C.HIGH_CARD: 1302540,
}


def test_bug_five_card_figures_rederived_by_hand():
    """Closed forms for the joker hands (§ 670a.6(a),(b)), independent of any evaluator."""
    assert sum(BUG_53_5.values()) == comb(53, 5)
    assert BUG_53_5[C.FIVE_ACES] == 1
    assert BUG_53_5[C.ROYAL_FLUSH] == 4 + 4 * 5  # natural + joker for any one card
    # joker + 4 cards of one suit inside one of the 10 straight-flush windows: 10*5 subsets
    # per suit, less 9 shared by two adjacent windows, less the 5 that make a royal
    assert BUG_53_5[C.STRAIGHT_FLUSH] == 36 + 4 * (10 * 5 - 9 - 5)
    # natural quads; A-A-A + joker + x; non-ace quads + joker (ace kicker)
    assert BUG_53_5[C.FOUR_OF_A_KIND] == 624 + comb(4, 3) * 48 + 12
    # natural; A-A-x-x + joker; x-x-x-A + joker
    assert BUG_53_5[C.FULL_HOUSE] == 3744 + comb(4, 2) * 12 * comb(4, 2) + 12 * 4 * 4


@pytest.mark.slow
def test_exact_count_every_five_card_hand_from_53_bug():
    from controller.analysis.deck import enumerated_counts, exact_counts

    counts = enumerated_counts(5, "bug")
    assert sum(counts.values()) == comb(53, 5) == 2_869_685
    assert counts == BUG_53_5
    assert exact_counts(5, "bug") == BUG_53_5


@pytest.mark.slow
def test_exact_count_every_five_card_hand_from_52_natural():
    from controller.analysis.deck import enumerated_counts, exact_counts

    counts = enumerated_counts(5, "natural")
    assert sum(counts.values()) == comb(52, 5) == 2_598_960
    assert counts == NATURAL_52_5
    assert exact_counts(5, "natural") == NATURAL_52_5


#: C(53,6) and C(53,7) hands by best five-card category, joker as a bug: the exact
#: combinatorial count (controller/analysis/deck.py), equal to a full enumeration of every
#: hand with the vectorised evaluator (tablectl analyze --deck 53 --cards N -o method=enumerate).
BUG_53_6 = {
    C.FIVE_ACES: 48,
    C.ROYAL_FLUSH: 1132,
    C.STRAIGHT_FLUSH: 8248,
    C.FOUR_OF_A_KIND: 19752,
    C.FULL_HOUSE: 196896,
    C.FLUSH: 314944,
    C.STRAIGHT: 696228,
    C.THREE_OF_A_KIND: 853264,
    C.TWO_PAIR: 2873952,
    C.PAIR: 10809876,
    C.HIGH_CARD: 7183140,
}
BUG_53_7 = {
    C.FIVE_ACES: 1128,
    C.ROYAL_FLUSH: 26132,
    C.STRAIGHT_FLUSH: 184832,
    C.FOUR_OF_A_KIND: 307472,
    C.FULL_HOUSE: 4188528,
    C.FLUSH: 6172088,
    C.STRAIGHT: 11236028,
    C.THREE_OF_A_KIND: 7470676,
    C.TWO_PAIR: 35553816,
    C.PAIR: 64221960,
    C.HIGH_CARD: 24780420,
}


@pytest.mark.slow
@pytest.mark.parametrize("n, expected", [(6, BUG_53_6), (7, BUG_53_7)])
def test_exact_counts_six_and_seven_cards_from_53(n, expected):
    from controller.analysis.deck import exact_counts

    counts = exact_counts(n, "bug")
    assert sum(counts.values()) == comb(53, n)
    assert counts == expected
    # independent closed forms (§ 670a.6(b)(1),(2)): five aces = the 4 aces and the joker
    # plus any n-5 others; a royal = one suit's A-K-Q-J-T, or four of them and the joker
    # (two royals, or a royal with five aces, need more than 7 cards)
    assert counts[C.FIVE_ACES] == comb(48, n - 5)
    assert counts[C.ROYAL_FLUSH] == 4 * (comb(48, n - 5) + 5 * comb(47, n - 5))


@pytest.mark.slow
def test_exact_six_card_count_equals_full_enumeration():
    from controller.analysis.deck import enumerated_counts

    assert enumerated_counts(6, "bug") == BUG_53_6


# many cards of few ranks: quads + trips, two trips, three pairs, joker with all of them
_FEW_RANKS = st.lists(
    st.sampled_from([r * 4 + s for r in (0, 5, 11, 12) for s in range(4)] + [JOKER]),
    min_size=7,
    max_size=7,
    unique=True,
).map(tuple)


@settings(max_examples=200, deadline=None)
@given(_FEW_RANKS)
def test_property_multi_group_hands_match_reference(cards):
    r = best_five(cards, "bug")
    name, value = ref_best_five(cards, "bug")
    assert r.category.text == name
    assert ref_eval_five(r.best, "bug")[1] == value
