"""§ 670a.13(d): the dealer exposed a card dealt to a player; the player may void the hand.
The dealer keys it (``VOID <seat>``) at the decision step: every wager of that seat is returned,
the Progressive Payout Wager's meter contribution is taken back, and the voided hand takes no
part in the round (it earns no Envy Bonus for the others)."""

from __future__ import annotations

from typing import Any

import pytest

from controller.games.base import EntryError
from controller.games.sixcard import SixCardFortune
from controller.settings.config import parse_profile
from tests.integration.games.rounds import HandRound
from tests.integration.harness import Harness, profile_doc, records, stacks_for

KEYED = ["base", "double-down", "fortune", "insurance"]
# Dice 2+3+4 = 9: the first stack to position 2 (§ 670a.5(i)); seat 5 holds four sixes (an Envy
# Bonus Qualifying Hand, § 670a.1), seat 2 no pair.
HANDS = {5: "6c 6d 6h 6s Jd 8c", 2: "Ks Qh 8s 5h 3s 2h"}


def _full() -> dict[str, Any]:
    doc = profile_doc()
    doc["game"]["options"] = {"keyed": KEYED}
    return doc


def _to_decisions(tmp_path) -> Harness:
    h = Harness(tmp_path / "l.db", _full())
    h.shuffled()
    for text in ("BET 2 base 25", "BET 5 base 10", "BET 5 fortune 5"):
        h.post("keypad", "keypad", msg="ENTRY", text=text)
    for s in (2, 5):
        h.edge(f"bet.progressive.{s}", True)
    h.press("lockout")
    h.press("confirm")
    h.dice((2, 3, 4))
    h.deal(stacks_for((2 + 3 + 4 - 1) % 7 + 1, HANDS))
    return h


def _key(h: Harness, text: str) -> str:
    h.post("keypad", "keypad", msg="ENTRY", text=text)
    return str(h.keypad.calls[-1][1][0])


def test_670a_13_d_a_player_voids_the_hand_every_wager_returned(tmp_path):
    h = _to_decisions(tmp_path)
    meter_after_count = h.table.meters["primary"].value
    assert _key(h, "VOID 5") == "SEAT 5 HAND VOID - WAGERS RETURNED"
    assert "voided the hand" in _key(h, "SET 5 6c")  # the voided hand is not set afterwards
    _key(h, "DONE")
    assert h.state == "open_for_wagers"
    res = {(e.data["seat"], e.data["wager"]): e.data for e in records(h, "wager.result")}
    for wager, cents in (("base", 1000), ("fortune", 500), ("progressive", 100)):
        r = res[(5, wager)]
        assert (r["outcome"], r["cents"], r["net"]) == ("returned", cents, 0), wager
    # four sixes would pay seat 2 an Envy Bonus ($5, § 670a.12(d)(4)); a voided hand does not
    assert (2, "progressive-envy") not in res
    assert res[(2, "progressive")]["outcome"] == "lose"
    # the returned progressive wager's contribution (21% of $1) leaves the meter again
    assert h.table.meters["primary"].value == meter_after_count - 21
    assert {w for (s, w) in res if s == 5} == {"base", "fortune", "progressive"}
    h.close()


def test_670a_13_d_without_the_void_the_hand_plays(tmp_path):
    """The same round, no void: seat 5's four sixes are in play (its wagers settle, seat 2
    receives the Envy Bonus) — what the void changes above."""
    h = _to_decisions(tmp_path)
    meter_after_count = h.table.meters["primary"].value
    _key(h, "DONE")
    res = {(e.data["seat"], e.data["wager"]): e.data for e in records(h, "wager.result")}
    assert all(r["outcome"] != "returned" for (s, _w), r in res.items() if s == 5)
    assert res[(2, "progressive-envy")]["outcome"] == "win"
    assert h.table.meters["primary"].value == meter_after_count
    h.close()


@pytest.mark.parametrize(
    ("text", "match"),
    [("VOID 9", "seat"), ("VOID", "enter DD"), ("VOID 5 6c", "enter DD")],
)
def test_670a_13_d_a_void_entry_that_is_not_valid_changes_nothing(text, match):
    proc = SixCardFortune(parse_profile(_full(), "<test>"))
    hr = HandRound(1, {(2, "base"): 2500, (5, "base"): 1000}, proc=proc)
    hr.open(proc, "settings")
    with pytest.raises(EntryError, match=match):
        hr.apply(proc, "settings", text)
    assert proc.play.voided == []
    hr.apply(proc, "settings", "VOID 5")
    with pytest.raises(EntryError, match="voided the hand"):
        hr.apply(proc, "settings", "VOID 5")
    assert proc.play.voided == [5]
