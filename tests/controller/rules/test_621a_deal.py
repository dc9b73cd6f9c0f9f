"""Starting position, dealing styles and the cut (§ 621a.6(c)-(d), § 621a.7, § 621a.9(g), (j))."""

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from controller.rules.tiles import FULL_SET, TileError
from controller.rules.tiles_deal import (
    DEAD_HAND,
    DEALER,
    STYLES,
    cut_stacks,
    deal,
    dealing_order,
    dealing_plan,
    position_name,
    starting_position,
)


def test_examples_621a_6_c():
    assert starting_position(9) == DEALER  # (c)(1)
    assert starting_position(15) == 6  # (c)(2): the sixth wagering position
    assert starting_position(8) == DEAD_HAND  # the Dead Hand is counted (after seat 6)
    assert starting_position(3) == 2 and starting_position(16) == DEAD_HAND and starting_position(17) == DEALER
    assert starting_position(1) == DEALER  # an RNG number 1 (§ 621a.6(a)(1))


def test_bank_counts_as_number_one_621a_9_j():
    assert starting_position(1, first=4) == 4
    assert starting_position(4, first=4) == DEAD_HAND  # seat 4, 5, 6, Dead Hand
    assert starting_position(5, first=4) == DEALER  # ... then the dealer
    assert starting_position(6, first=4) == 1
    with pytest.raises(ValueError):
        starting_position(5, first=DEAD_HAND)
    with pytest.raises(ValueError):
        starting_position(0)


@hsettings(max_examples=100)
@given(st.integers(3, 18), st.integers(0, 6))
def test_start_cycles_over_eight_positions(total, first):
    assert starting_position(total + 8, first) == starting_position(total, first)
    order = dealing_order(starting_position(total, first))
    assert sorted(order) == list(range(8))


def test_dealing_order_counterclockwise_621a_6_d():
    assert dealing_order(6) == (6, 7, 0, 1, 2, 3, 4, 5)
    assert position_name(7) == "dead-hand" and position_name(0) == "dealer"


@pytest.mark.parametrize("style", list(STYLES))
def test_every_style_delivers_each_tile_once(style):
    plan = dealing_plan(style)
    assert len(plan) == 8 and all(len(p) == 4 for p in plan)
    assert Counter(x for p in plan for x in p) == Counter((s, lv) for s in range(8) for lv in range(4))


def _stack_sets(style):
    return [sorted({s for s, _ in p}) for p in dealing_plan(style)]


def test_style_layouts_621a_6_d_and_7():
    assert _stack_sets("standard") == [[k] for k in range(8)]  # § 621a.6(d): from the right
    assert _stack_sets("house-way-left") == [[k] for k in range(7, -1, -1)]  # § 621a.7(1)
    assert _stack_sets("cup-say-right")[:4] == [[0, 1], [0, 1], [2, 3], [2, 3]]  # § 621a.7(2)
    assert dealing_plan("cup-say-right")[0] == ((0, 0), (0, 1), (1, 0), (1, 1))  # top two of each
    assert _stack_sets("cup-say-left")[:2] == [[6, 7], [6, 7]]  # § 621a.7(3)
    assert _stack_sets("jung-quat")[::2] == [[3, 4], [2, 5], [1, 6], [0, 7]]  # § 621a.7(4): centre out
    assert _stack_sets("chee-yee")[::2] == [[0, 7], [1, 6], [2, 5], [3, 4]]  # § 621a.7(5): ears in
    ps = dealing_plan("pin-say-right")  # § 621a.7(6)
    assert ps[0] == ((0, 0), (1, 0), (2, 0), (3, 0)) and ps[1] == ((7, 0), (6, 0), (5, 0), (4, 0))
    assert ps[2] == ((0, 1), (1, 1), (2, 1), (3, 1)) and ps[7] == ((7, 3), (6, 3), (5, 3), (4, 3))
    assert dealing_plan("pin-say-left")[0] == ((7, 0), (6, 0), (5, 0), (4, 0))  # § 621a.7(7)
    dp = dealing_plan("dragon-phoenix-right")  # § 621a.7(8)
    assert dp[0] == ((0, 0), (0, 1), (1, 0), (1, 1))  # dragon head: top two of each 8-tile stack
    assert dp[1] == ((4, 0), (5, 0), (6, 0), (7, 0))  # phoenix tail: top tile of the four left stacks
    assert dp[2] == ((0, 2), (0, 3), (1, 2), (1, 3))
    assert dp[4] == ((2, 0), (2, 1), (3, 0), (3, 1))  # then the stacks they were placed on
    assert dp[7] == ((4, 3), (5, 3), (6, 3), (7, 3))
    assert dealing_plan("dragon-phoenix-left")[1] == ((3, 0), (2, 0), (1, 0), (0, 0))  # § 621a.7(9)
    with pytest.raises(ValueError):
        dealing_plan("shuffle")


def _stacks():
    return [list(FULL_SET[4 * k : 4 * k + 4]) for k in range(8)]


def test_deal_gives_each_position_its_stack():
    stacks = _stacks()
    hands = deal(stacks, start=6)
    assert hands[6] == tuple(stacks[0]) and hands[DEAD_HAND] == tuple(stacks[1]) and hands[5] == tuple(stacks[7])
    assert Counter(t for h in hands.values() for t in h) == Counter(FULL_SET)
    hands = deal(stacks, start=0, style="chee-yee")
    assert hands[0] == (stacks[0][0], stacks[0][1], stacks[7][0], stacks[7][1])


def test_deal_refuses_bad_stacks():
    s = _stacks()
    s[0][0] = s[7][3]  # a second Three (1-2): the set has one
    with pytest.raises(TileError):
        deal(s, 0)
    with pytest.raises(TileError):
        deal(_stacks()[:7], 0)


def test_cut_621a_9_g():
    order = tuple("ABCDEFGH")  # A is the stack on the dealer's right
    assert cut_stacks(order, to_left=(0, 2)) == tuple("CDEFGHAB")  # (g)(1)
    assert cut_stacks(order, to_right=(5, 8)) == tuple("FGHABCDE")  # (g)(1)
    assert cut_stacks(order, to_right=(3, 4), to_left=(4, 6)) == tuple("DABCGHEF")  # (g)(2)
    with pytest.raises(ValueError):
        cut_stacks(order, to_right=(1, 2), to_left=(4, 5))  # not adjacent
    with pytest.raises(ValueError):
        cut_stacks(order)
