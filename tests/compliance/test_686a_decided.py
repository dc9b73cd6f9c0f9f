"""Over/Under rules the controller decides, each on its edge: the Ante is required
(§ 686a.6(d)), the shoe holds a full batch before its burn (§ 686a.7(c)), three cards to each
Ante position (§ 686a.7(e))."""

from __future__ import annotations

import random

import pytest

from controller.rules.cards import DECK_52
from controller.rules.overunder import SHOE_CARDS, OverUnderError, SeatPlay, Shoe, cards_for_round, settle_round


def _batch() -> list[int]:
    s = [c for c in DECK_52 for _ in range(6)]
    random.Random(686).shuffle(s)
    return s


def test_686a_6_d_no_ante_no_play_and_no_bonus_unless_wagered():
    with pytest.raises(OverUnderError, match="ante"):
        settle_round([SeatPlay(1, 0, "over", "Kc Qd 5h")])
    res = settle_round([SeatPlay(1, 1, "over", "Kc Qd 5h")])  # one cent is an Ante
    assert [(r.wager, r.outcome, r.net) for r in res] == [("ante", "win", 1), ("over-23", "win", 1)]


def test_686a_7_c_a_full_batch_is_loaded_then_burned():
    s = _batch()
    with pytest.raises(OverUnderError, match=str(SHOE_CARDS)):
        Shoe.load(s[:-1], 100)  # a full batch is exactly six decks
    shoe = Shoe.load(s[:-1], 100, full_batch=False)  # the discards of § 686a.9(b): any count
    assert shoe.remaining == SHOE_CARDS - 1
    burned, shoe = Shoe.load(s, 100).burn()
    assert burned == s[0] and shoe.remaining == SHOE_CARDS - 1


def test_686a_7_e_three_cards_to_each_ante_position():
    assert [cards_for_round(n) for n in (0, 1, 6)] == [0, 3, 18]
    for bad in (-1, 1.5, "2"):
        with pytest.raises(OverUnderError, match="number of positions"):
            cards_for_round(bad)  # type: ignore[arg-type]
