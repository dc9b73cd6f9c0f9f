"""One player on two adjacent betting areas at the table (§ 688a.7(f), § 670a.7(f)):
the dealer records it on the keypad (``SAME <seat> <seat>``) or from the console
(``Table.same_player``), the ledger holds it with the round, and settlement pays him no Envy
Bonus for his own hand (§ 688a.11(h)(2)(ii))."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.games.test_faceup import doc, key, play, results
from tests.integration.harness import Harness, records

HANDS = {
    "dealer": "9c 9d Kh Qc 7s 5d 3h",  # pair of nines, no Ace High Pai Gow
    "2": "6c 6d 6h 6s 2c 8h Jd",  # four of a kind: an Envy Bonus Qualifying Hand
    "3": "Ks 7d 5h 3c 2d Qd 8c",  # king high
    "5": "As Js 8d 4s 3s Tc 2h",  # ace high
}
BETS = ["BET 2 base 10", "BET 2 fortune 5", "BET 3 base 10", "BET 3 fortune 5", "BET 5 base 10", "BET 5 fortune 5"]


def _doc(adjacent: bool = True) -> dict[str, Any]:
    d = doc()
    d["game"]["options"]["adjacent_areas"] = adjacent
    return d


def _envy(h: Harness) -> list[tuple[int, int]]:
    rnd = h.table.round_no - 1
    return [(s, net) for s, w, _o, net in results(h, rnd) if w == "fortune-envy"]


def test_688a_7_f_keypad_same_player_no_envy_on_his_own_hand(tmp_path):
    h = Harness(tmp_path / "l.db", _doc())
    play(h, BETS, sensed=[], dice=(1, 2, 3), hands=HANDS, entries=["SAME 3 2", "DONE"])
    assert h.state == "open_for_wagers"
    # seats 2 and 3 are one player: seat 3 gets nothing for seat 2's quads; seat 5 gets $5
    assert _envy(h) == [(5, 500)]
    (rec,) = [e for e in records(h, "decision") if e.data.get("decision") == "adjacent"]
    assert rec.data["seats"] == [2, 3] and rec.data["text"] == "SAME 3 2" and rec.round == h.table.round_no - 1


def test_688a_7_f_without_the_record_every_other_seat_is_paid(tmp_path):
    """The same round with no SAME entry pays seat 3 the envy too (the test above can fail)."""
    h = Harness(tmp_path / "l.db", _doc())
    play(h, BETS, sensed=[], dice=(1, 2, 3), hands=HANDS, entries=["DONE"])
    assert sorted(_envy(h)) == [(3, 500), (5, 500)]


def test_688a_7_f_keypad_refusals_change_nothing(tmp_path):
    h = Harness(tmp_path / "l.db", _doc())
    play(h, BETS, sensed=[], dice=(1, 2, 3), hands=HANDS, entries=[])
    assert key(h, "SAME 2 5") == "ERROR: seats 2 and 5 are not adjacent betting areas (§ 688a.7(f))"
    assert key(h, "SAME 1 2").startswith("ERROR: seat 1 is not playing this round")
    assert key(h, "SAME 2 3") == "SEATS 2 AND 3 ONE PLAYER"
    assert key(h, "SAME 3 4").startswith("ERROR: seat 4 is not playing")
    assert key(h, "SAME 2 3") == "ERROR: seat 2 is already one player's second betting area"
    h2 = Harness(tmp_path / "m.db", _doc(adjacent=False))
    play(h2, BETS, sensed=[], dice=(1, 2, 3), hands=HANDS, entries=[])
    assert key(h2, "SAME 2 3").startswith("ERROR: this table does not permit wagers on two adjacent")


def test_688a_7_f_console_records_the_same_player(tmp_path):
    h = Harness(tmp_path / "l.db", _doc())
    play(h, BETS, sensed=[], dice=(1, 2, 3), hands=HANDS, entries=[])
    assert h.table.same_player(2, 3, "console:floor") == "SEATS 2 AND 3 ONE PLAYER"
    with pytest.raises(ValueError, match="already one player's"):
        h.table.same_player(3, 2, "console:floor")
    assert not key(h, "DONE").startswith("ERROR")
    assert _envy(h) == [(5, 500)]
    (rec,) = [e for e in records(h, "decision") if e.data.get("decision") == "adjacent"]
    assert rec.data["by"] == "console:floor"
    # between rounds the console is refused and nothing is written
    with pytest.raises(ValueError, match="during a round"):
        h.table.same_player(2, 3, "console:floor")
    assert len([e for e in records(h, "decision") if e.data.get("decision") == "adjacent"]) == 1


def test_670a_7_f_progressive_table_console_same_player_no_envy_on_his_own_hand(tmp_path):
    """A progressive-only Six-Card table (no keypad): the console records seats 2 and 3 as one
    player after "no more bets"; seat 2's four of a kind (§ 670a.12(d)(4) envy hand) pays the
    Progressive Envy to seat 5, not to seat 3 (§ 670a.11(h)(3)(ii))."""
    from tests.integration.harness import profile_doc, stacks_for

    doc = profile_doc()
    doc["game"]["options"] = {"adjacent_areas": True}
    h = Harness(tmp_path / "l.db", doc)
    h.shuffled()
    for s in (2, 3, 5):
        h.edge(f"bet.progressive.{s}", True)
    h.press("lockout")
    for s in (2, 3, 5):
        h.edge(f"bet.progressive.{s}", False)
    assert h.table.same_player(3, 2, "console:floorperson") == "SEATS 2 AND 3 ONE PLAYER"
    h.press("confirm")
    h.dice((2, 3, 4))
    h.deal(stacks_for(2, {2: "9c 9d 9h 9s 4d 3s", 3: "Ac Qd Th 8s 7c 3c", 5: "Ad Qh Tc 8d 7h 2c"}))
    rnd = h.table.round_no - 1
    envy = [
        (e.data["seat"], e.data["net"]) for e in records(h, "wager.result") if e.data["wager"] == "progressive-envy"
    ]
    assert envy == [(5, envy[0][1])] and envy[0][1] > 0
    (rec,) = [e for e in records(h, "decision") if e.data.get("decision") == "adjacent"]
    assert rec.round == rnd and rec.data["seats"] == [2, 3]
