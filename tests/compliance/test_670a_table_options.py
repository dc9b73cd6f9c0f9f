"""Settlement follows the wagers the table offers, not the defaults: § 670a.7(e)(4) (the
Progressive Payout Wager at the amount offered, § 670a.12(d)(2)) and § 670a.7(f) (one player on
two adjacent areas, settled in the table's order, no Envy Bonus for his own other hand)."""

from __future__ import annotations

import pytest

from controller.rules.cards import parse_cards
from controller.rules.sixcard import SixCardError, house_way
from controller.rules.sixcard_settle import SeatWagers, SixCardOptions, settle_progressive, settle_round

DEALER = tuple(parse_cards("6c 6d Kh 4s 3h 2d"))
QUADS = tuple(parse_cards("9c 9d 9h 9s 4d 3s"))


def _round(options: SixCardOptions | None, progressive: int) -> list[tuple[int, str, str, int]]:
    seats = {1: SeatWagers(cards=QUADS, base=1000, progressive=progressive)}
    res = settle_round(DEALER, seats, {1: house_way(QUADS)}, options)
    return [(r.seat, r.wager, r.outcome, r.net) for r in res]


def test_670a_7_e_the_progressive_wager_offered_is_the_one_settled():
    # the defaults: the paytable's $1 wager; four of a kind pays and a $5 chip is refused
    assert (1, "progressive", "win") == _round(None, 100)[-1][:3]
    with pytest.raises(SixCardError):
        _round(None, 500)
    # a table offering the $5 Progressive Payout Wager settles a $5 chip and refuses a $1 one
    five = SixCardOptions(progressive_wager_cents=500)
    assert (1, "progressive", "win") == _round(five, 500)[-1][:3]
    with pytest.raises(SixCardError):
        _round(five, 100)


def test_670a_7_f_one_player_two_areas_settled_in_the_tables_order_without_own_envy():
    keys = {4: "four-of-a-kind", 5: "high-card", 6: "high-card"}
    wagers = {4: 100, 5: 100, 6: 100}
    players = {4: "A", 5: "A"}
    ascending = SixCardOptions(seat_order=(1, 2, 3, 4, 5, 6))
    res = settle_progressive(keys, wagers, ascending, None, players)
    assert [r.seat for r in res if r.wager == "progressive"] == [4, 5, 6]
    assert [(r.seat, r.wager) for r in res if r.wager.endswith("envy")] == [(6, "progressive-envy")]
    res = settle_progressive(keys, wagers, None, None, players)  # § 670a.11(e): the default, 6 first
    assert [r.seat for r in res if r.wager == "progressive"] == [6, 5, 4]
