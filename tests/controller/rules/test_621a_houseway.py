"""The dealer's house way, § 621a.8(d), and its documented tie-breaks (docs/rules-readings/621a.md)."""

from collections import Counter
from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from controller.rules.tiles import FULL_SET, GEE_JOON, KINDS, settings, tiles_str
from controller.rules.tiles_houseway import HOUSE_WAYS, get_house_way, house_way, house_way_step


def _desc(s):
    return (tiles_str(s.high.tiles), tiles_str(s.low.tiles))


def test_step1_supreme_pair_played_as_supreme_pair_621a_8_d_1():
    step, s = house_way_step("2-4 6-6 1-2 6-6")
    assert step == 1 and s.high.pair_rank == 1 and s.low.pair_rank == 2
    # even when splitting the Gee Joon would make an 8 (6-6 + 1-2 counted as 6)
    step, s = house_way_step("2-4 1-2 6-6 1-6")
    assert step == 1 and s.high.pair_rank == 1 and s.low.value == 9


def test_step2_always_a_pair_wong_or_gong_621a_8_d_2():
    step, s = house_way_step("1-1 1-1 6-6 1-6")  # pair of Twos over Twelve + Seven = 9
    assert step == 2 and s.high.pair_rank == 3 and s.low.value == 9
    step, s = house_way_step("6-6 4-5 2-3 3-3")  # wong
    assert step == 2 and s.high.pair_rank == 17 and s.low.value == 1
    step, s = house_way_step("1-1 4-4 5-6 2-3")  # gong (1-1 with 4-4)
    assert step == 2 and s.high.pair_rank == 20 and s.low.value == 6


def test_step2_tie_break_best_qualifying_hand_then_other_hand():
    # Twelve, Two and both Nines: a mixed pair of nines outranks the wongs (§ 621a.3(c) order)
    step, s = house_way_step("6-6 1-1 4-5 3-6")
    assert step == 2 and s.high.pair_rank == 13 and s.low.value == 4
    # Twelve, Twelve, mixed eights: the pair of Twelves and the mixed eights, not two gongs
    step, s = house_way_step("6-6 6-6 2-6 3-5")
    assert (s.high.pair_rank, s.low.pair_rank) == (2, 14)
    # Twelve, Two, Nine, Eight: wong (17) with the gong of the Two, rather than the Twelve's gong
    step, s = house_way_step("6-6 1-1 4-5 2-6")
    assert (s.high.pair_rank, s.low.pair_rank) == (17, 20)


def test_step3_nine_eight_or_seven_621a_8_d_3():
    step, s = house_way_step("6-6 3-4 5-5 1-2")  # 6-6+3-4 = 9 (Twelve high) preferred over an 8/7 split
    assert step == 3 and s.high.value == 9 and s.high.top_rank == 1 and s.low.value == 6
    step, s = house_way_step("5-6 4-6 1-4 2-5")  # 5-6 + 2-5 = 8 is the only 7-9
    assert step == 3 and _desc(s) == ("5-6 2-5", "4-6 1-4")
    step, s = house_way_step("1-2 3-3 5-5 4-6")  # 1-2 + 3-3 = 9 (1-2 counted as 3, § 621a.3(f))
    assert step == 3 and s.high.value == 9


def test_step4_highest_with_lowest_621a_8_d_4():
    # no pair, wong or gong and no split makes 7, 8 or 9: Twelve (first) with Four 2-2 (seventh)
    step, s = house_way_step("6-6 1-1 5-5 2-2")
    assert step == 4
    assert _desc(s) == ("6-6 2-2", "1-1 5-5") and (s.high.value, s.low.value) == (6, 2)


def _check(tiles):
    step, s = house_way_step(tiles)
    assert Counter(s.tiles) == Counter(tiles)
    assert s.high.score >= s.low.score  # never fouls (§ 621a.1 high hand)
    splits = settings(tiles)
    if GEE_JOON <= set(tiles):
        assert step == 1 and s.high.pair_rank == 1
    elif any(h.pair_rank for x in splits for h in (x.high, x.low)):
        assert step == 2 and (s.high.pair_rank or s.low.pair_rank)
    elif any(h.value in (7, 8, 9) for x in splits for h in (x.high, x.low)):
        assert step == 3 and (s.high.value in (7, 8, 9) or s.low.value in (7, 8, 9))
    else:
        assert step == 4
        ranks = sorted(KINDS[t].rank for t in tiles)
        pair_ranks = sorted(KINDS[t].rank for t in s.high.tiles), sorted(KINDS[t].rank for t in s.low.tiles)
        assert [ranks[0], ranks[3]] in pair_ranks
    # the choice is the best qualifying hand, then the best other hand, among that step's splits
    if step in (2, 3):
        ok = (lambda h: h.pair_rank is not None) if step == 2 else (lambda h: h.value in (7, 8, 9))

        def key(x):
            q = max((h for h in (x.high, x.low) if ok(h)), key=lambda h: h.score)
            return q.score, (x.low if q is x.high else x.high).score

        assert key(s) == max(key(x) for x in splits if ok(x.high) or ok(x.low))
    return step, s


four_tiles = st.lists(st.integers(0, 31), min_size=4, max_size=4, unique=True).map(lambda ix: [FULL_SET[i] for i in ix])


@hsettings(max_examples=400)
@given(four_tiles)
def test_house_way_never_fouls_property(tiles):
    _check(tiles)


def test_house_way_exhaustive_over_every_four_tile_set():
    distinct = {tuple(sorted(c)) for c in combinations(FULL_SET, 4)}
    assert len(distinct) == 8130  # x^4 in (1+x+x^2)^11 (1+x)^10: four-tile multisets
    steps = Counter(_check(list(t))[0] for t in distinct)
    assert sum(steps.values()) == 8130 and set(steps) == {1, 2, 3, 4}


def test_registry():
    assert get_house_way() is house_way and "621a.8(d)" in HOUSE_WAYS
    with pytest.raises(ValueError):
        get_house_way("nope")
