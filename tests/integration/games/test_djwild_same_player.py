"""One player on adjacent DJ Wild boxes at the table (§ 687a.7(e)): the dealer keys
``SAME <seat> <seat>`` while the players raise or fold, or the console records it
(``Table.same_player``); the ledger holds it with the round, and settlement pays him no Envy
Bonus for his own hand (§ 670a.11(h)(3)(ii), reading 687a-5)."""

from __future__ import annotations

import pytest

from controller.games.base import EntryError
from tests.integration.games.test_djwild import _deal, _key, _round, doc, proc
from tests.integration.harness import Harness, records

#: the audit's round: seat 1 a royal flush without a Progressive, seats 2 and 3 a $1 Progressive
STACKS = ["As Ks Qs Js Ts", "Ah 9c 7d 5h 3h", "Qh 9d 7c 5d 3c", "Kd Kc 8h 6c 4d", "6d"]
BETS = ["BET 1 ante 10", "BET 1 blind 10", "BET 2 ante 5", "BET 2 blind 5", "BET 3 ante 5", "BET 3 blind 5"]


def _play_to_raise(tmp_path, **options) -> Harness:
    h = Harness(tmp_path / "ledger.db", doc(**options))
    h.table.debounce.add("start_game", False)
    h.shuffled()
    for text in BETS:
        assert not _key(h, text).startswith("ERROR"), text
    for seat in (2, 3):
        h.edge(f"bet.progressive.{seat}", True)
    h.press("start_game")
    for seat in (2, 3):
        h.edge(f"bet.progressive.{seat}", False)
    h.press("confirm")
    _deal(h, STACKS, remaining=53 - 21)
    assert h.state == "raise_or_fold"
    return h


def _finish(h: Harness) -> list[tuple[int, int]]:
    for text in ("RAISE 1", "FOLD 2", "FOLD 3"):
        assert not _key(h, text).startswith("ERROR"), text
    assert h.state == "open_for_wagers"
    return [
        (e.data["seat"], e.data["net"]) for e in records(h, "wager.result") if e.data["wager"] == "progressive-envy"
    ]


def test_687a_7_e_keypad_same_player_no_envy_on_his_own_hand(tmp_path):
    h = _play_to_raise(tmp_path)
    assert "SAME <seat> <seat>" in h.keypad.calls[-1][1][0]
    assert _key(h, "SAME 2 1") == "SEATS 1 AND 2 ONE PLAYER"
    assert _finish(h) == [(3, 100_000)]  # seat 2 is seat 1's player: nothing for his own royal
    (rec,) = [e for e in records(h, "decision") if e.data.get("decision") == "adjacent"]
    assert rec.data["seats"] == [1, 2] and rec.data["text"] == "SAME 2 1" and rec.round == 1
    h.close()


def test_687a_7_e_without_the_record_seat_2_is_paid(tmp_path):
    """The audit's finding: with nothing recorded, seat 2 is paid $1,000 (the test above can fail)."""
    h = _play_to_raise(tmp_path)
    assert sorted(_finish(h)) == [(2, 100_000), (3, 100_000)]
    h.close()


def test_687a_7_e_console_records_the_same_player(tmp_path):
    h = _play_to_raise(tmp_path)
    assert h.table.same_player(1, 2, "console:floor") == "SEATS 1 AND 2 ONE PLAYER"
    with pytest.raises(ValueError, match="already one player's boxes"):
        h.table.same_player(2, 1, "console:floor")
    assert _finish(h) == [(3, 100_000)]
    (rec,) = [e for e in records(h, "decision") if e.data.get("decision") == "adjacent"]
    assert rec.data["by"] == "console:floor" and rec.round == 1
    with pytest.raises(ValueError, match="during a round"):  # between rounds: refused, nothing written
        h.table.same_player(1, 2, "console:floor")
    assert len([e for e in records(h, "decision") if e.data.get("decision") == "adjacent"]) == 1
    h.close()


def test_687a_7_e_keypad_refusals_change_nothing(tmp_path):
    h = _play_to_raise(tmp_path)
    n = len(records(h, "decision"))
    assert _key(h, "SAME 1 3") == "ERROR: seats 1 and 3 are not adjacent boxes (§ 687a.7(e))"
    assert _key(h, "SAME 3 4").startswith("ERROR: seat 4 is not playing")
    assert _key(h, "SAME 1").startswith("ERROR: enter SAME <seat> <seat>")
    assert h.table.proc.play.player == {}
    assert _key(h, "SAME 1 2") == "SEATS 1 AND 2 ONE PLAYER"
    assert _key(h, "SAME 2 3") == (
        "ERROR: a player may wager on at most 2 adjacent boxes (§ 687a.7(e), the Rules Submission)"
    )
    assert h.table.proc.play.player == {1: "seats 1+2", 2: "seats 1+2"}
    assert len(records(h, "decision")) == n + 1
    h.close()


def test_687a_7_e_one_box_tables_refuse_same(tmp_path):
    h = _play_to_raise(tmp_path, adjacent_boxes=1)
    assert "SAME" not in h.keypad.calls[-1][1][0]
    assert _key(h, "SAME 1 2").startswith("ERROR: this table permits a player one box (§ 687a.7(e)")
    with pytest.raises(ValueError, match="one box"):
        h.table.same_player(1, 2, "console:floor")
    assert sorted(_finish(h)) == [(2, 100_000), (3, 100_000)]
    h.close()


def test_687a_7_e_three_boxes_when_the_rules_submission_allows():
    p = proc(adjacent_boxes=3)
    wagers = {(s, w): 500 for s in (1, 2, 3, 4) for w in ("ante", "blind")}
    hr = _round(p, wagers)
    assert hr.apply(p, "raise", "SAME 3 2").reply == "SEATS 2 AND 3 ONE PLAYER"
    assert hr.apply(p, "raise", "SAME 1 2").reply == "SEATS 1, 2 AND 3 ONE PLAYER"
    with pytest.raises(EntryError, match="at most 3 adjacent boxes"):
        hr.apply(p, "raise", "SAME 3 4")
    with pytest.raises(EntryError, match="already one player's"):
        hr.apply(p, "raise", "SAME 1 2")
    assert p.play.player == {1: "seats 1+2+3", 2: "seats 1+2+3", 3: "seats 1+2+3"}


@pytest.mark.parametrize(
    "value, error",
    [(0, "adjacent_boxes: 0 must be a whole number >= 1"), (7, "more than the 6 seats"), ("two", "whole number")],
)
def test_687a_7_e_adjacent_boxes_option_validated(value, error):
    with pytest.raises(ValueError, match=error):
        proc(adjacent_boxes=value)
