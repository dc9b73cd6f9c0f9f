"""Phase.after_entry: after the dealer keyed the hands (shoe out of order or not reading,
§ 670a.13(n)) the round resumes at that decide phase (DJ Wild's raise or fold,
§ 687a.11(b)) instead of going straight to settlement; every other game is unchanged."""

from __future__ import annotations

import pytest

from controller.core.records import PhaseKind
from controller.games import available
from controller.games.base import Phase
from controller.play.machine import build

PHASES = (
    Phase("dispensing", PhaseKind.DEAL, "§ x", "main"),
    Phase("deciding", PhaseKind.DECIDE, "§ y", "d", after_entry=True),
    Phase("settlement", PhaseKind.SETTLE, "§ z"),
)


def test_after_entry_adds_the_resume_transition():
    _states, t = build(PHASES)
    assert {"trigger": "resume_after_entry", "source": "hand_entry", "dest": "deciding"} in t
    assert {"trigger": "hands_entered", "source": "hand_entry", "dest": "settlement"} in t


def test_without_after_entry_no_resume_transition():
    plain = tuple(Phase(p.state, p.kind, p.section, p.name) for p in PHASES)
    _states, t = build(plain)
    assert not [x for x in t if x["trigger"] == "resume_after_entry"]


def test_after_entry_only_on_one_decide_phase():
    with pytest.raises(ValueError, match="only a decide phase"):
        Phase("dispensing", PhaseKind.DEAL, "§ x", "main", after_entry=True)
    two = PHASES[:2] + (Phase("more", PhaseKind.DECIDE, "§ y", "e", after_entry=True),) + PHASES[2:]
    with pytest.raises(ValueError, match="at most one phase"):
        build(two)


def test_dj_wild_resumes_after_entry_six_card_fortune_does_not():
    games = {g for g, cls in available().items() if any(p.after_entry for p in cls.phases)}
    assert "dj-wild" in games and "six-card-fortune" not in games
