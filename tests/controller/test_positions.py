"""Starting position and dealing order (§ 670a.5(i), § 670a.10(c), § 670a.11(e))."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.rules.positions import (
    delivery_order,
    position_to_seat,
    seat_to_position,
    settlement_order,
    start_position,
)


@pytest.mark.parametrize("total,expected", [(3, 3), (7, 7), (8, 1), (9, 2), (14, 7), (15, 1), (18, 4)])
def test_670a_5_i_1_iii_count_from_dealer_as_one(total, expected):
    assert start_position(total, 7) == expected


def test_670a_5_i_2_rng_1_to_7_is_the_position():
    assert [start_position(n, 7) for n in range(1, 8)] == list(range(1, 8))


def test_positions_counterclockwise_from_dealer_map_to_seats():
    # position 2 is the seat on the dealer's far right (seat 6), position 7 is seat 1
    assert [position_to_seat(p, 6) for p in range(1, 8)] == [None, 6, 5, 4, 3, 2, 1]


def test_670a_10_c_stacks_delivered_clockwise_from_start():
    assert delivery_order(2, 7) == [2, 1, 7, 6, 5, 4, 3]
    assert delivery_order(1, 7) == [1, 7, 6, 5, 4, 3, 2]


def test_670a_11_e_settle_from_dealers_right_counterclockwise():
    assert settlement_order(6) == [6, 5, 4, 3, 2, 1]


@given(st.integers(1, 7), st.integers(2, 8))
def test_delivery_order_is_a_permutation(start, n):
    if start > n:
        return
    assert sorted(delivery_order(start, n)) == list(range(1, n + 1))


@given(st.integers(1, 7))
def test_seat_position_roundtrip(seat):
    assert position_to_seat(seat_to_position(seat, 7), 7) == seat


def test_bad_arguments_are_errors():
    with pytest.raises(ValueError):
        start_position(0, 7)
    with pytest.raises(ValueError):
        position_to_seat(9, 6)
