"""§ 621a.4(d): after the mix the tiles are set in eight stacks of four; a deal of anything else
is refused, naming what was wrong."""

from __future__ import annotations

import pytest

from controller.rules.tiles import FULL_SET, TileError
from controller.rules.tiles_deal import deal

WHOLE_SET = [list(FULL_SET[i : i + 4]) for i in range(0, 32, 4)]


def test_621a_4_d_eight_stacks_of_four_are_dealt():
    hands = deal(WHOLE_SET, 1)
    assert len(hands) == 8 and all(len(t) == 4 for t in hands.values())
    assert sorted(t for ts in hands.values() for t in ts) == sorted(FULL_SET)


@pytest.mark.parametrize(
    "stacks",
    [WHOLE_SET[:7], [*WHOLE_SET[:7], WHOLE_SET[7][:3]], [*WHOLE_SET, []], [s[:3] for s in WHOLE_SET]],
)
def test_621a_4_d_other_stacks_are_refused(stacks):
    with pytest.raises(TileError, match="eight stacks of four"):
        deal(stacks, 1)
