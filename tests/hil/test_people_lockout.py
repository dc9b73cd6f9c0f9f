"""The simulated dealer presses the procedure's "no more bets" button
(``Procedure.lockout_button``): the lock-out, or DJ Wild's Start Game (§ 687a.8(c))."""

from __future__ import annotations

import random
from types import SimpleNamespace

from controller.games.base import Procedure
from hil.people import People
from hil.players.base import Strategy


class _NoBets(Strategy[Procedure]):
    def bets(self):
        return []


class _FakeTable:
    def __init__(self, proc):
        self.proc = proc
        self.seats = 6
        self._statuses = [
            {"state": "open_for_wagers", "deck_ready": True, "round": 1},
            {"state": "no_more_bets", "count_shown": True, "wagers": {}},
            {"state": "open_for_wagers", "deck_ready": True, "round": 2},
        ]

    def wait_for(self, pred, timeout):
        return self._statuses.pop(0)


class _FakeRig:
    def __init__(self, proc):
        self.table = _FakeTable(proc)
        self.pressed: list[str] = []
        self.keypad = None
        self.clock = SimpleNamespace(sleep=lambda s: None)

    def press(self, button):
        self.pressed.append(button)


def _presses(button: str | None) -> list[str]:
    proc = Procedure.__new__(Procedure)
    proc.wagers = {}
    if button is not None:
        proc.lockout_button = button
    rig = _FakeRig(proc)
    people = People(rig, random.Random(1), strategy=_NoBets(proc, random.Random(1)))  # type: ignore[arg-type]
    assert people.play_round() == 1
    return rig.pressed


def test_default_lockout_button_is_the_lockout():
    assert Procedure.lockout_button == "lockout"
    assert _presses(None) == ["lockout", "confirm"]


def test_people_press_the_procedures_lockout_button_687a_8_c():
    assert _presses("start_game") == ["start_game", "confirm"]
