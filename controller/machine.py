"""The round state machine's shape, built from a game's procedure: the common
states around the procedure's own phases (each named after the regulation's
step), and the transitions between them.  Used by controller/table.py (the live
machine, a plain ``transitions.Machine`` owned by the reactor thread with
``queued=True``) and by ``tablectl diagram`` (transitions' own mermaid output).

Common states:

=====================  ========================================================
``self_test``          power-up self-checks; no device or link traffic until they pass
``open_for_wagers``    wagers may be placed (§ 670a.7(c)); bet lights follow the sensors
``no_more_bets``       lock-out pressed (or DJ Wild's Start Game, § 687a.8(c)): accepted
                       wagers frozen (§ 670a.2(c)(2)); the accepted count is shown and the
                       dealer confirms it equals the chips collected (§ 670a.10(a)(2)(ii))
*the game's phases*    e.g. ``starting_position`` (§ 670a.5(i)), ``dispensing``
                       (§ 670a.10(c)), ``stub_check`` (§ 670a.10(d)), ``raise_or_fold``
                       (§ 687a.11(b)) ... ``settlement`` (§ 670a.11(e)-(h))
``hand_entry``         the shoe is out of order or did not read the cards: the dealer
                       enters the winning hands on the keypad (§ 670a.11(h)(3)(i)(B)(I);
                       § 670a.13(n))
``floor_validation``   a progressive hit waits for a floorperson (§ 670a.11(h)(3)(i)(B)(III))
``round_complete``     the round is closed in the ledger (§ 670a.11(j))
``round_void``         every wager of the round returned (§ 670a.13(c)-(m))
``tilt``               a latched fault: no new round until a technician clears it
=====================  ========================================================

Every phase is entered by the trigger ``advance`` once the records of the step
before it are durable; a ``start`` phase loops on ``no_roll`` (§ 670a.13(a),(b)).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Any, Literal, get_args

from controller.games.base import Phase
from controller.records import PhaseKind


class TableState(StrEnum):
    """The common states of the round machine (a game's own phases are named by its
    procedure, controller/games/).  A ``StrEnum``: the machine, the status and the ledger
    keep the plain names."""

    SELF_TEST = "self_test"
    OPEN = "open_for_wagers"
    NO_MORE_BETS = "no_more_bets"
    HAND_ENTRY = "hand_entry"
    FLOOR_VALIDATION = "floor_validation"
    ROUND_COMPLETE = "round_complete"
    ROUND_VOID = "round_void"
    TILT = "tilt"


S = TableState
HEAD: list[str] = [S.SELF_TEST.value, S.OPEN.value, S.NO_MORE_BETS.value]
TAIL: list[str] = [s.value for s in (S.HAND_ENTRY, S.FLOOR_VALIDATION, S.ROUND_COMPLETE, S.ROUND_VOID, S.TILT)]
#: states in which a round is not in play: a device marked out of order, a reshuffle, a new dealer
BETWEEN_ROUNDS: tuple[str, ...] = (S.OPEN.value, S.TILT.value, S.SELF_TEST.value)

#: every trigger of the round machine (``Table.trigger(name)``); a misspelt one is a type error
Trigger = Literal[
    "self_test_passed",
    "lock_out",
    "advance",
    "no_roll",
    "enter_hands",
    "resume_after_entry",
    "hands_entered",
    "hit_needs_validation",
    "hit_validated",
    "settled",
    "void_round",
    "next_round",
    "resume_validation",
    "fault",
    "clear",
    "clear_to_validation",
]
TRIGGERS: tuple[str, ...] = get_args(Trigger)


def build(phases: Sequence[Phase]) -> tuple[list[str], list[dict[str, Any]]]:
    """States and transitions for a procedure's phases."""
    names = [p.state for p in phases]
    if len(set(names)) != len(names) or set(names) & set(HEAD + TAIL):
        raise ValueError(f"phase states must be distinct and not common states: {names}")
    settle = next(p.state for p in phases if p.kind == PhaseKind.SETTLE)
    states = HEAD + names + TAIL
    chain = ["no_more_bets"] + names
    in_round = ["no_more_bets"] + [p.state for p in phases if p.kind != PhaseKind.SETTLE] + ["hand_entry"]
    t: list[dict[str, Any]] = [
        {"trigger": "self_test_passed", "source": "self_test", "dest": "open_for_wagers"},
        {"trigger": "lock_out", "source": "open_for_wagers", "dest": "no_more_bets"},
    ]
    for a, b in zip(chain, chain[1:]):
        t.append({"trigger": "advance", "source": a, "dest": b})
    for p in phases:
        if p.kind == PhaseKind.START:
            t.append({"trigger": "no_roll", "source": p.state, "dest": p.state})
        if p.kind in (PhaseKind.DEAL, PhaseKind.STUB):
            t.append({"trigger": "enter_hands", "source": p.state, "dest": "hand_entry"})
    resume = [p.state for p in phases if p.after_entry]
    if len(resume) > 1:
        raise ValueError(f"at most one phase resumes after the hand entry: {resume}")
    for state in resume:  # the players still decide after the dealer keyed the hands
        t.append({"trigger": "resume_after_entry", "source": "hand_entry", "dest": state})
    t += [
        {"trigger": "hands_entered", "source": "hand_entry", "dest": settle},
        {"trigger": "hit_needs_validation", "source": settle, "dest": "floor_validation"},
        {"trigger": "hit_validated", "source": "floor_validation", "dest": settle},
        {"trigger": "settled", "source": settle, "dest": "round_complete"},
        {"trigger": "void_round", "source": in_round, "dest": "round_void"},
        {"trigger": "next_round", "source": ["round_complete", "round_void"], "dest": "open_for_wagers"},
        {"trigger": "resume_validation", "source": "self_test", "dest": "floor_validation"},
        {"trigger": "fault", "source": "*", "dest": "tilt"},
        {"trigger": "clear", "source": "tilt", "dest": "open_for_wagers"},
        {"trigger": "clear_to_validation", "source": "tilt", "dest": "floor_validation"},
    ]
    return states, t


def mermaid_for(title: str, phases: Sequence[Phase]) -> str:
    """One game's diagram as mermaid, from transitions' own diagram support."""
    from transitions.extensions import GraphMachine

    class _Model:
        pass

    states, transitions = build(phases)
    model = _Model()
    gm = GraphMachine(
        model=model,
        states=states,
        transitions=transitions,
        initial="self_test",
        auto_transitions=False,
        graph_engine="mermaid",
        title=title,
    )
    body = model.get_graph().draw(None)  # type: ignore[attr-defined]
    del gm
    # transitions 0.9.3 writes the bare title between the front-matter fences;
    # mermaid's front matter is YAML and wants "title: ..."
    lines = body.splitlines()
    if len(lines) > 2 and lines[0] == "---" and lines[2] == "---" and not lines[1].startswith("title:"):
        lines[1] = f"title: {lines[1]}"
    return "\n".join(lines)


def mermaid() -> str:
    """docs/state-machine.md: one diagram per game the table plays."""
    from controller.games import PROCEDURES

    out = [
        "# Round state machines\n",
        "Generated by `tablectl diagram` from each game's procedure (controller/games/) and",
        "controller/machine.py, with transitions' mermaid support; a test fails when this file",
        "is out of date. The states between `no_more_bets` and `settlement` are the game's own",
        "steps, named after its chapter; each row of the table gives the section it implements.\n",
    ]
    for game, cls in PROCEDURES.items():
        phases = cls.phases
        out.append(f"## {game} ({cls.chapter})\n")
        out.append("| state | section |\n|---|---|")
        for p in phases:
            out.append(f"| `{p.state}` | {p.section} |")
        out.append("")
        out.append("```mermaid")
        out.append(mermaid_for(f"tablectl round: {game}", phases).rstrip())
        out.append("```\n")
    return "\n".join(out)
