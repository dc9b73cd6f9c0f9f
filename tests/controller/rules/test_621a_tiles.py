"""Pai Gow tiles: the tile set, hand ranks and comparison (58 Pa. Code § 621a.1, § 621a.3, § 621a.8(g)-(i))."""

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from controller.rules.tiles import (
    FULL_SET,
    KINDS,
    T11,
    T12,
    T13,
    T16,
    T24,
    T26,
    T35,
    T36,
    T44,
    T45,
    T66,
    SettingError,
    TileError,
    classify_pair_fortunes,
    compare,
    eval_hand,
    hand,
    make_setting,
    parse_tile,
    parse_tiles,
    resolve,
    setting_of,
    settings,
    tile_str,
)


def test_set_has_32_tiles_and_the_printed_multiplicities_621a_3_h():
    assert len(FULL_SET) == 32
    c = Counter(tile_str(t) for t in FULL_SET)
    doubles = {"6-6", "1-1", "4-4", "1-3", "5-5", "3-3", "2-2", "5-6", "4-6", "1-6", "1-5"}
    assert {k for k, n in c.items() if n == 2} == doubles
    assert {k for k, n in c.items() if n == 1} == {"3-6", "4-5", "2-6", "3-5", "2-5", "3-4", "2-4", "1-4", "2-3", "1-2"}
    # all 21 two-half combinations of 1..6 spots exist
    assert len(c) == 21


def test_individual_ranks_621a_3_h():
    ranks = {k.text: k.rank for k in KINDS}
    assert ranks["6-6"] == 1 and ranks["1-1"] == 2 and ranks["4-4"] == 3 and ranks["1-3"] == 4
    assert ranks["1-5"] == 11
    assert ranks["3-6"] == ranks["4-5"] == 12
    assert ranks["2-6"] == ranks["3-5"] == 13
    assert ranks["2-5"] == ranks["3-4"] == 14
    assert ranks["2-4"] == 15 and ranks["1-4"] == ranks["2-3"] == 16 and ranks["1-2"] == 17
    assert KINDS[T66].name == "Twelve" and KINDS[T13].name == "Four"


@pytest.mark.parametrize("tok", ["6-6", "4-2", " 2/4 ", "3-1"])
def test_parse_accepts_either_order(tok):
    t = parse_tile(tok)
    assert tile_str(t) == "-".join(sorted(tok.strip().replace("/", "-").split("-")))


@pytest.mark.parametrize("tok", ["0-3", "7-1", "66", "x", "1-2-3", "", "6-"])
def test_parse_error_names_token(tok):
    with pytest.raises(TileError) as e:
        parse_tile(tok)
    assert e.value.token == tok


def test_duplicates_beyond_multiplicity_621a_3_h():
    assert parse_tiles("6-6 6-6 1-2 2-4") == (T66, T66, T12, T24)
    with pytest.raises(TileError, match="only 2") as e:
        parse_tiles("6-6 6-6 6-6 1-2")
    assert e.value.token == "6-6"
    with pytest.raises(TileError, match="only 1"):
        parse_tiles("3-6 6-3 1-1 1-1")
    with pytest.raises(TileError, match="wrong number"):
        parse_tiles("6-6 1-1 1-2", count=4)
    with pytest.raises(TileError):
        eval_hand(T36, T36)


def test_supreme_pair_is_highest_621a_3_c():
    sp = hand("2-4 1-2")
    assert sp.pair_rank == 1 and sp.label == "supreme-pair"
    for a in range(21):
        for b in range(a, 21):
            if (a == b and KINDS[a].count == 1) or {a, b} == {T24, T12}:
                continue
            assert compare(sp, eval_hand(a, b)) == 1


@pytest.mark.parametrize(
    "text,rank",
    [
        ("6-6 6-6", 2),
        ("1-1 1-1", 3),
        ("4-4 4-4", 4),
        ("1-3 1-3", 5),
        ("5-5 5-5", 6),
        ("3-3 3-3", 7),
        ("2-2 2-2", 8),
        ("5-6 5-6", 9),
        ("4-6 4-6", 10),
        ("1-6 1-6", 11),
        ("1-5 1-5", 12),
        ("3-6 4-5", 13),
        ("3-5 2-6", 14),
        ("3-4 2-5", 15),
        ("1-4 2-3", 16),
        ("6-6 4-5", 17),
        ("6-6 3-6", 17),
        ("1-1 4-5", 18),
        ("1-1 3-6", 18),
        ("6-6 2-6", 19),
        ("6-6 3-5", 19),
        ("6-6 4-4", 19),
        ("1-1 2-6", 20),
        ("1-1 3-5", 20),
        ("1-1 4-4", 20),
    ],
)
def test_pair_wong_gong_ranks_621a_3_c(text, rank):
    h = hand(text)
    assert h.pair_rank == rank
    assert h.kind == ("pair" if rank <= 16 else "wong" if rank <= 18 else "gong")


def test_pairs_outrank_any_point_hand_621a_3_c():
    worst_pair = hand("1-1 4-4")  # twentieth (gong)
    nine = hand("6-6 1-6")  # 19 -> 9, Twelve high: the best point hand
    assert nine.value == 9
    assert compare(worst_pair, nine) == 1


def test_not_permissible_pairs_are_point_hands():
    # two Tens (5-5, 4-6) and two Sixes (3-3, 1-5) are not listed in § 621a.3(c)
    assert hand("5-5 4-6").pair_rank is None and hand("5-5 4-6").value == 0
    assert hand("3-3 1-5").pair_rank is None and hand("3-3 1-5").value == 2
    # Twelve with Gee Joon counted as 6 is 8 points, not a gong (§ 621a.3(c), (f))
    h = hand("6-6 1-2")
    assert h.pair_rank is None and h.value == 8


def test_value_examples_621a_3_e():
    assert hand("1-1 3-3").value == 8  # (e)(1)
    assert hand("5-6 1-6").value == 8  # (e)(2): 18 -> 8


def test_gee_joon_three_or_six_621a_3_f():
    assert hand("2-4 5-5").value == 6  # 2-4 as 6
    assert hand("2-4 1-4").value == 8  # 6 + 5 = 11 -> 1, or 3 + 5 = 8
    assert hand("1-2 1-4").value == 8  # 3 + 5
    assert hand("1-2 2-2").value == 7  # 3 + 4; 6 + 4 = 10 -> 0
    assert hand("1-2 1-5").value == 9  # 3 + 6
    assert hand("1-2 3-4").value == 3  # 3 + 7 = 0 or 6 + 7 = 13 -> 3


def test_gee_joon_rank_follows_its_count_621a_3_f():
    # 1-2 counted as 6 ranks fifteenth: beats a same-value hand whose best tile ranks sixteenth
    a = hand("1-2 1-4")  # 1-2 as 3 (rank 17): 8 points, top tile 1-4 (16)
    assert a.top_rank == 16
    b = hand("1-2 2-2")  # 7 points; top tile 2-2 (7)
    assert b.top_rank == 7
    c = hand("2-4 1-4")  # 2-4 as 3 (rank 17): 3 + 5 = 8, top tile 1-4; as 6 it would be 1 point
    assert c.value == 8 and c.top_rank == 16
    assert compare(c, a) == 0  # the same 8 with the same top tile: a copy
    e = hand("1-2 5-6")  # 1-2 as 6 (rank 15): 6 + 11 = 7; top tile 5-6
    assert e.value == 7 and e.top_rank == 8
    f = hand("2-4 2-3")  # 2-4 as 3 gives 8 with top tile 2-3 (16); as 6 gives 1
    assert f.value == 8 and f.top_rank == 16
    g = hand("2-4 4-4")  # pairs are not formed by Gee Joon: 6 + 8 = 4 or 3 + 8 = 1 -> 4, top 4-4
    assert g.value == 4 and g.top_rank == 3
    d = hand("2-4 5-6")  # 6+11=17 -> 7 (top 5-6 rank 8) or 3+11=14 -> 4
    assert d.value == 7 and d.top_rank == 8


def test_same_value_decided_by_highest_tile_621a_3_g():
    a = hand("6-6 3-4")  # 9, Twelve
    b = hand("1-1 5-2")  # 9, Two
    assert a.value == b.value == 9
    assert compare(a, b) == 1
    # 6 points each (1-2 counted as 6), Ten (4-6) highest in both: a copy
    assert compare(hand("4-6 1-2"), hand("1-5 4-6")) == 0


def test_copy_hands_621a_3_d_and_i():
    """§ 621a.3(d), (i): hands of identical rank, highest tiles of identical rank: a copy (compare == 0)."""
    # identical permissible pair rank: copy
    assert compare(hand("6-6 4-5"), hand("6-6 3-6")) == 0
    # same value, highest tiles of identical rank: copy (second tile irrelevant)
    assert compare(hand("6-6 3-4"), hand("6-6 2-5")) == 0
    assert compare(hand("4-5 3-4"), hand("3-6 2-5")) == 0  # 6 points, a Nine (12th) the highest tile in both
    a, b = make_setting("6-6 3-4", "4-4 2-3"), make_setting("6-6 2-5", "1-3 4-4")
    c = resolve(a, b)
    assert c.high == 0 and c.outcome != "win"


def test_zero_zero_tie_goes_to_dealer_621a_3_g():
    z1 = hand("5-5 4-6")  # 0 points with a Ten (fifth) high
    z2 = hand("2-2 3-3")  # 0 points with a Six (sixth) high
    z3 = hand("2-5 1-2")  # 7 + 3 = 0 or 7 + 6 = 3: 3 points, not zero
    assert z1.value == z2.value == 0 and z3.value == 3
    assert compare(z1, z2) == 0 and z1.score == z2.score == 0
    assert resolve(make_setting("6-6 6-6", "5-5 4-6"), make_setting("1-1 1-1", "2-2 3-3")).outcome == "push"


def test_resolve_621a_8_g_h_i():
    dealer = make_setting("6-6 1-6", "2-2 3-3")  # 9 / 0
    assert resolve(make_setting("1-1 1-1", "4-4 1-5"), dealer).outcome == "win"  # pair / 4 > 0
    assert resolve(make_setting("1-1 1-1", "4-6 5-5"), dealer).outcome == "push"  # (h)(1): low 0-0 to dealer
    assert resolve(make_setting("6-6 2-5", "4-6 5-5"), dealer).outcome == "lose"  # (g): copy high, low 0
    assert resolve(make_setting("1-3 2-2", "4-4 1-5"), dealer).outcome == "push"  # (h)(2)


def test_setting_reversed_is_relabelled_or_refused_621a_1():
    s = make_setting("2-2 3-3", "6-6 6-6")
    assert s.high.pair_rank == 2 and s.low.value == 0
    with pytest.raises(SettingError):
        make_setting("2-2 3-3", "6-6 6-6", on_reversed="error")
    with pytest.raises(TileError):
        make_setting("6-6 6-6", "6-6 1-1")
    s = setting_of("6-6 6-6 1-2 2-4", "1-2 2-4")
    assert s.high.pair_rank == 1 and s.low.pair_rank == 2
    with pytest.raises(SettingError):
        setting_of("6-6 6-6 1-2 2-4", "1-1 2-4")


def test_three_settings():
    ss = settings("6-6 1-1 4-5 3-6")
    assert sorted((s.high.pair_rank, s.low.pair_rank or s.low.value) for s in ss) == [(13, 4), (17, 18), (17, 18)]


@pytest.mark.parametrize(
    "text,expect",
    [
        ("2-4 1-2 6-6 6-6", "gee-joon-and-heaven"),
        ("2-4 1-2 1-1 1-1", "two-pair"),
        ("6-6 6-6 3-6 4-5", "two-pair"),
        ("2-4 1-2 6-6 1-1", "gee-joon-pair"),
        ("3-5 2-6 6-6 1-1", "mixed-pair"),
        ("6-6 6-6 1-1 2-4", "identical-pair"),  # the Heaven Pair alone is an Identical Pair
        ("6-6 1-1 4-5 2-6", "no-pair"),  # wongs and gongs are not Pair Fortunes pairs
        ("4-4 2-6 5-5 4-6", "no-pair"),  # same spots but not a § 621a.3(c) pair
    ],
)
def test_pair_fortunes_621a_8_j_and_11_b(text, expect):
    assert classify_pair_fortunes(text) == expect


tile_ids = st.sampled_from(range(21))


def _hand(draw):
    a = draw(tile_ids)
    b = draw(tile_ids.filter(lambda t: t != a or KINDS[a].count == 2))
    return eval_hand(a, b)


hands = st.composite(_hand)()


@hsettings(max_examples=300)
@given(hands, hands, hands)
def test_comparison_is_a_total_preorder(a, b, c):
    assert compare(a, b) == -compare(b, a)
    assert compare(a, a) == 0
    if compare(a, b) >= 0 and compare(b, c) >= 0:
        assert compare(a, c) >= 0
    if compare(a, b) == 0:
        assert compare(a, c) == compare(b, c)


def test_every_hand_is_scored_consistently():
    # exhaustive over the 21*21 ordered tile pairs: the score sorts pairs above points, by value, then top tile
    for a in range(21):
        for b in range(21):
            if a == b and KINDS[a].count == 1:
                continue
            h = eval_hand(a, b)
            assert h == eval_hand(b, a)
            if h.pair_rank is None:
                assert h.value is not None and 0 <= h.value <= 9
                assert (h.score == 0) == (h.value == 0)
            else:
                assert h.score > 1000


def test_copies_and_known_hands():
    assert compare(hand("6-6 2-6"), hand("6-6 3-5")) == 0  # gongs of the same rank
    assert compare(hand("6-6 2-6"), hand("1-1 4-4")) == 1
    assert eval_hand(T66, T44).pair_rank == 19 and eval_hand(T11, T36).pair_rank == 18
    assert eval_hand(T45, T36).pair_rank == 13 and eval_hand(T26, T35).pair_rank == 14
    assert eval_hand(T16, T16).pair_rank == 11
