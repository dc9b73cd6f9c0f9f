"""The dealer's house way, § 670a.11(d)(1)-(6); readings in docs/rules-readings/670a.md."""

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from controller.rules.cards import JOKER, cards_str, parse_cards
from controller.rules.poker import Category, best_five, eval_five
from controller.rules.sixcard import SixCardError, house_way, house_way_detail, is_foul, low_rank
from tests.controller.rules._bug_reference_670a import ref_category


def HW(text):
    hw = house_way_detail(parse_cards(text))
    return cards_str(sorted(hw.high)), cards_str([hw.low]), hw.high_rank.category.text, hw.paragraph


def high_of(text):
    return cards_str(sorted(parse_cards(text)))


@pytest.mark.parametrize(
    "cards,high,low,cat,para",
    [
        # (1) never break a set; the highest remaining card goes low
        ("Qc Qd 9h 6s 4c 2d", "2d 4c 6s Qc Qd", "9h", "pair", "(d)(1)"),
        ("Kc Kd 4h 4s 9c 2d", "2d 4h 4s Kc Kd", "9c", "two-pair", "(d)(1)"),
        ("7c 7d 7h Ks 4c 2d", "2d 4c 7c 7d 7h", "Ks", "three-of-a-kind", "(d)(1)"),
        ("7c 7d 7h Ks Kc Ad", "7c 7d 7h Kc Ks", "Ad", "full-house", "(d)(1)"),
        ("8c 8d 8h 8s Kc 2d", "2d 8c 8d 8h 8s", "Kc", "four-of-a-kind", "(d)(1)"),
        # four of a kind and a pair: the quads are the set kept; a card of the pair goes low
        ("8c 8d 8h 8s Kc Kd", "8c 8d 8h 8s Kc", "Kd", "four-of-a-kind", "(d)(1)"),
        ("Ac Ad Ah As Jk 3c", "Ac Ad Ah As Jk", "3c", "five-aces", "(d)(1)"),
        # (1)(i) two three-of-a-kinds: the lower as trips, the higher as a pair, its third card low
        ("Kc Kd Kh 2c 2d 2h", "2c 2d 2h Kc Kd", "Kh", "full-house", "(d)(1)(i)"),
        # (1)(ii) three pairs: the two lower pairs high, a card of the top pair low
        ("2c 2d 3c 3d 9h 9s", "2c 2d 3c 3d 9h", "9s", "two-pair", "(d)(1)(ii)"),
        # (6) no pair, straight or flush: highest card high, second highest low
        ("Kc 9d 7h 5s 3c 2d", "2d 3c 5s 7h Kc", "9d", "high-card", "(d)(6)"),
    ],
)
def test_house_way_sets_and_no_pair_670a_11_d_1_and_6(cards, high, low, cat, para):
    h, lo, c, p = HW(cards)
    assert (h, lo, c) == (high_of(high), low, cat)
    assert p.endswith(para)


@pytest.mark.parametrize(
    "cards,high,low,cat",
    [
        # (2) the lowest possible straight, the highest card low
        ("4c 5d 6h 7s 8c 9d", "4c 5d 6h 7s 8c", "9d", "straight"),
        ("Ac 2d 3h 4s 5c 6d", "2d 3h 4s 5c 6d", "Ac", "straight"),  # 2-6 is lower than the wheel (§ 670a.6(b)(7))
        ("9c Td Jh Qs Kc Ad", "9c Td Jh Qs Kc", "Ad", "straight"),
        ("5c 5d 6h 7s 8c 9d", "5c 6h 7s 8c 9d", "5d", "straight"),  # a straight outranks the pair
        # (2) flushes
        ("2c 5c 7c 9c Jc Kc", "2c 5c 7c 9c Jc", "Kc", "flush"),
        ("2c 5c 7c 9c Jc Kd", "2c 5c 7c 9c Jc", "Kd", "flush"),
        # (3) both a straight and a flush: the flush
        ("4c 5c 6c 7d 8c Kc", "4c 5c 6c 8c Kc", "7d", "flush"),
        # (4) both a straight and a straight flush: the straight flush
        ("4c 5c 6c 7c 8c 9d", "4c 5c 6c 7c 8c", "9d", "straight-flush"),
        # (5) a six-card flush holding a straight flush: the straight flush, the other card low
        ("4c 5c 6c 7c 8c Kc", "4c 5c 6c 7c 8c", "Kc", "straight-flush"),
        ("4c 5c 6c 7c 8c 9c", "4c 5c 6c 7c 8c", "9c", "straight-flush"),
        ("Ac 2c 3c 4c 5c 6c", "2c 3c 4c 5c 6c", "Ac", "straight-flush"),  # not the (higher) A-5 straight flush
    ],
)
def test_house_way_straights_and_flushes_670a_11_d_2_to_5(cards, high, low, cat):
    h, lo, c, p = HW(cards)
    assert (h, lo, c) == (high_of(high), low, cat)
    assert p == "§ 670a.11(d)(2)-(5)"


def test_royal_flush_counts_as_a_straight_flush_for_the_lowest_one_670a_11_d_2():
    """Reading 670a-HW-2: a royal flush with the suited nine plays the king-high straight flush, ace low."""
    assert HW("Ac Kc Qc Jc Tc 9c")[:3] == (high_of("Kc Qc Jc Tc 9c"), "Ac", "straight-flush")
    # with no lower straight flush available the royal flush stays
    assert HW("Ac Kc Qc Jc Tc 2d")[:3] == (high_of("Ac Kc Qc Jc Tc"), "2d", "royal-flush")


@pytest.mark.parametrize(
    "cards,high,low,cat",
    [
        ("Jk 4c 5d 6h 7s 8c", "4c 5d 6h 7s 8c", "Jk", "straight"),  # the joker (an ace) goes low
        ("Jk 4c 5d 6h 7s Kc", "Jk 4c 5d 6h 7s", "Kc", "straight"),
        ("Jk 5c 5d 9h 8s 2c", "2c 5c 5d 8s 9h", "Jk", "pair"),  # a lone joker is the highest card: low
        ("Jk Kd 9h 7s 5c 3d", "Jk 3d 5c 7s 9h", "Kd", "high-card"),  # (6): joker is the highest card
        ("Ac Ad Ah Jk 9c 2d", "Ac Ad Ah Jk 2d", "9c", "four-of-a-kind"),
        ("As Ad Jk 5c 5d 5h", "5c 5d 5h Ad Jk", "As", "full-house"),  # (1)(i) with the joker in the aces
        ("As Jk 2c 2d 3c 3d", "2c 2d 3c 3d Jk", "As", "two-pair"),  # (1)(ii): joker+ace the top pair
        ("Ah Ad Jk 9h 6h 3h", "Ah 3h 6h 9h Jk", "Ad", "flush"),  # flush with the joker beats aces
    ],
)
def test_house_way_with_the_joker_670a_6_a_and_11_d(cards, high, low, cat):
    assert HW(cards)[:3] == (high_of(high), low, cat)


def test_lowest_straight_versus_highest_low_card_reading_670a_11_d_2():
    """Reading 670a-HW-1: Jk 2 3 4 5 7 -- the joker can make the wheel (ranked second-highest,
    § 670a.6(b)(7)) or 3-4-5-6-7.  The dealer puts the highest card it can in the low hand (the 7),
    playing Jk-2-3-4-5, which as cards is the lowest straight (joker as 6)."""
    assert HW("Jk 2c 3d 4h 5s 7c")[:3] == (high_of("Jk 2c 3d 4h 5s"), "7c", "straight")
    assert HW("Jk 2c 3c 4c 5c 7c")[:3] == (high_of("Jk 2c 3c 4c 5c"), "7c", "straight-flush")


def test_house_way_bad_input_raises():
    with pytest.raises(SixCardError, match="5 cards"):
        house_way(parse_cards("2c 3d 4h 5s 7c"))
    with pytest.raises(SixCardError, match="duplicate"):
        house_way((0, 0, 1, 2, 3, 4))


# ---------------------------------------------------------------- properties

six_cards = st.lists(st.integers(0, 52), min_size=6, max_size=6, unique=True)
GROUP = {Category.ROYAL_FLUSH: Category.STRAIGHT_FLUSH}


@hsettings(max_examples=400, deadline=None)
@given(six_cards)
def test_house_way_never_fouls_670a_11_b(cards):
    high, low = house_way(cards)
    assert sorted(high + (low,)) == sorted(cards)
    assert len(high) == 5 and not is_foul(high, low)


@hsettings(max_examples=300, deadline=None)
@given(six_cards)
def test_house_way_keeps_the_best_kind_of_hand_and_the_highest_low_card_670a_11_d(cards):
    """The readings: the best category of the six cards is kept (royal = straight flush for (2)-(5)),
    and no split keeping it puts a higher card in the low hand."""
    hw = house_way_detail(cards)
    best = best_five(cards).category
    assert GROUP.get(hw.high_rank.category, hw.high_rank.category) == GROUP.get(best, best)
    for i, lo in enumerate(cards):
        hi = tuple(cards[:i] + cards[i + 1 :])
        cat = eval_five(hi).category
        if GROUP.get(cat, cat) == GROUP.get(best, best) and not is_foul(hi, lo):
            assert low_rank(lo) <= low_rank(hw.low)


@hsettings(max_examples=150, deadline=None)
@given(six_cards, st.permutations(range(4)), st.randoms(use_true_random=False))
def test_house_way_ignores_suit_names_and_card_order(cards, perm, rnd):
    def relabel(c):
        return c if c == JOKER else c - c % 4 + perm[c % 4]

    a = house_way_detail(cards)
    shuffled = [relabel(c) for c in cards]
    rnd.shuffle(shuffled)
    b = house_way_detail(shuffled)
    assert a.high_rank.score == b.high_rank.score
    assert low_rank(a.low) == low_rank(b.low) and (a.low == JOKER) == (b.low == JOKER)


@hsettings(max_examples=100, deadline=None)
@given(six_cards)
def test_house_way_high_hand_category_matches_reference(cards):
    high, _ = house_way(cards)
    assert eval_five(high).category.text == ref_category(high)
