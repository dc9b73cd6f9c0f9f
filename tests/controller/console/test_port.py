"""The console reaches the table and the service only through its Protocols
(controller/console/port.py): nothing in it is typed ``Any``, and "between rounds" is one guard,
the table's own (controller/play/machine.py ``between_rounds``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from controller.play.machine import BETWEEN_ROUNDS, TableState, between_rounds

CONSOLE = Path(__file__).resolve().parents[3] / "controller" / "console"


def test_nothing_in_the_console_is_typed_any():
    found = [
        f"{p.name}:{i}: {line.strip()}"
        for p in sorted(CONSOLE.glob("*.py"))
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bAny\b", line)
    ]
    assert not found, "\n".join(found)


def test_the_console_keeps_no_state_names_of_its_own():
    """The console compares with the table's TableState, never a spelt-out state."""
    states = {s.value for s in TableState}
    found = [
        f"{p.name}: {m.group(0)}"
        for p in sorted(CONSOLE.glob("*.py"))
        for m in re.finditer(r"[\"']([a-z_]+)[\"']", p.read_text(encoding="utf-8"))
        if m.group(1) in states and m.group(1) not in ("tilt",)  # "tilt" is also a record's word
    ]
    assert not found, found


@pytest.mark.parametrize("state", list(BETWEEN_ROUNDS))
def test_between_rounds_lets_through_only_between_rounds(state):
    between_rounds(state, "a reshuffle is ordered")
    with pytest.raises(ValueError, match=r"a reshuffle is ordered between rounds only \(wagers are taken\)"):
        between_rounds(state, "a reshuffle is ordered", wagers_taken=True)


@pytest.mark.parametrize("state", ["no_more_bets", "hand_entry", "floor_validation", "dispensing"])
def test_between_rounds_refuses_a_round_in_play_naming_the_state(state):
    with pytest.raises(ValueError, match=rf"a new dealer is recorded between rounds only \(state {state}\)"):
        between_rounds(state, "a new dealer is recorded")
