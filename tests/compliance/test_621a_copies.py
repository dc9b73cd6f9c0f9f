"""§ 621a.3(d)-(g), (i): who wins when two Pai Gow hands are compared; a copy (identical rank)
and a zero-zero hand go to the dealer or the bank."""

from __future__ import annotations

import pytest

from controller.rules.tiles import beats, compare, hand


@pytest.mark.parametrize(
    "player,banker,wins",
    [
        ("6-6 4-5", "6-6 3-6", False),  # § 621a.3(d): the same pair rank (Twelve + a nine): a copy
        ("6-6 3-4", "6-6 2-5", False),  # (d),(i): same value, the highest tiles of identical rank
        ("4-5 3-4", "3-6 2-5", False),  # (i): 6 points, a Nine the highest tile in both: a copy
        ("5-5 4-6", "3-6 5-6", False),  # (g): zero and zero ("equally bad"): to the banker
        ("3-6 5-6", "5-5 4-6", False),  # ... whichever holds which
        ("6-6 1-2", "5-5 1-1", True),  # (e): 8 points beats 2 points
        ("4-6 1-6", "6-6 1-1", True),  # (e): 7 points (17, the units) beats 4 points (16)
        ("5-5 3-3", "4-6 1-6", False),  # (e): 6 points loses to 7
    ],
)
def test_621a_3_d_e_g_i_who_wins(player, banker, wins):
    p, b = hand(player), hand(banker)
    assert beats(p, b) is wins
    if compare(p, b) == 0:
        assert not beats(b, p)  # a copy goes to the banker whichever side holds it
    elif wins:
        assert not beats(b, p)
