"""§ 686a.5(c): the cut is offered by where the cover card appeared in the last round."""

from __future__ import annotations

from tests.integration.games.test_overunder import _bets, _harness, _key, _round


def test_686a_5_c_2_the_cover_card_is_noted_with_the_betting_area_it_appeared_on(tmp_path):
    """§ 686a.5(c)(2): the cut goes to the player on whose betting area the cover card appeared,
    so the controller notes that area when the shoe reports the cover card; between deals
    (no area to deal to) it notes none, (c)(3)/(4)."""
    h, shoe = _harness(tmp_path)
    shoe.shuffled(cover=10)
    _round(h, shoe, ["7d", "9h"], ["Kd As"])
    _bets(h, "BET 2 ante 10")
    shoe.n = 0
    shoe.deal("5c")
    _key(h, "UNDER 2")
    h.post("shoe", "shoe", msg="COVER", stack=2, dealt=1, remaining=shoe.left - 1)
    cover = h.table.proc.play.cover  # type: ignore[attr-defined]  # an OverUnderRound
    assert cover is not None and cover.stack == 2 and cover.to == "seat:2"
    shoe.deal("2c 3c")
    h.close()
