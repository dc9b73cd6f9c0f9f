"""The round state machine's shape, built from a game's procedure: the common
states around the procedure's own phases (each named after the regulation's
step), and the transitions between them.  Used by controller/play/table.py (the live
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

from controller.core.records import PhaseKind
from controller.games.base import Phase


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


def between_rounds(state: str, what: str, *, wagers_taken: bool = False) -> None:
    """The one guard of what is done only between rounds (the floor's marks, a reshuffle, a new
    dealer, a changed profile, the console's diagnostics): raises ValueError naming ``what`` and
    the state.  ``wagers_taken``: wagers already accepted for the coming round also refuse."""
    if state not in BETWEEN_ROUNDS or wagers_taken:
        held = "wagers are taken" if state in BETWEEN_ROUNDS else f"state {state}"
        raise ValueError(f"{what} between rounds only ({held})")


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
    chain = [S.NO_MORE_BETS.value] + names
    in_round = [S.NO_MORE_BETS.value] + [p.state for p in phases if p.kind != PhaseKind.SETTLE] + [S.HAND_ENTRY.value]
    t: list[dict[str, Any]] = [
        _t("self_test_passed", S.SELF_TEST, S.OPEN),
        _t("lock_out", S.OPEN, S.NO_MORE_BETS),
    ]
    t += [_t("advance", a, b) for a, b in zip(chain, chain[1:])]
    t += _phase_transitions(phases)
    t += [
        _t("hands_entered", S.HAND_ENTRY, settle),
        _t("hit_needs_validation", settle, S.FLOOR_VALIDATION),
        _t("hit_validated", S.FLOOR_VALIDATION, settle),
        _t("settled", settle, S.ROUND_COMPLETE),
        _t("void_round", in_round, S.ROUND_VOID),
        _t("next_round", [S.ROUND_COMPLETE.value, S.ROUND_VOID.value], S.OPEN),
        _t("resume_validation", S.SELF_TEST, S.FLOOR_VALIDATION),
        _t("fault", "*", S.TILT),
        _t("clear", S.TILT, S.OPEN),
        _t("clear_to_validation", S.TILT, S.FLOOR_VALIDATION),
    ]
    return states, t


def _t(trigger: Trigger, source: str | list[str], dest: str) -> dict[str, Any]:
    """One transition, the states by their plain names."""
    src = [str(s) for s in source] if isinstance(source, list) else str(source)
    return {"trigger": trigger, "source": src, "dest": str(dest)}


def _phase_transitions(phases: Sequence[Phase]) -> list[dict[str, Any]]:
    """A start phase's reshake, a deal's or a count's hand entry, and the decision the
    round resumes at after the dealer keyed the hands."""
    t: list[dict[str, Any]] = []
    for p in phases:
        if p.kind == PhaseKind.START:
            t.append(_t("no_roll", p.state, p.state))
        if p.kind in (PhaseKind.DEAL, PhaseKind.STUB):
            t.append(_t("enter_hands", p.state, S.HAND_ENTRY))
    resume = [p.state for p in phases if p.after_entry]
    if len(resume) > 1:
        raise ValueError(f"at most one phase resumes after the hand entry: {resume}")
    for state in resume:  # the players still decide after the dealer keyed the hands
        t.append(_t("resume_after_entry", S.HAND_ENTRY, state))
    return t


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
        "controller/play/machine.py, with transitions' mermaid support; a test fails when this file",
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
