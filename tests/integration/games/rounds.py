"""A round built by hand for a game procedure's unit tests: the four records the table's
components would write (controller/games/round.py), here written by the test, and the read-only
:class:`~controller.games.round.Round` the procedure is given."""

from __future__ import annotations

from collections.abc import Mapping

from controller.games.base import DecisionState, Entry, Procedure
from controller.games.round import Dealt, Decided, Key, Round, Settled, Wagered


class HandRound:
    def __init__(self, number: int = 1, wagers: Mapping[Key, int] | None = None, proc: Procedure | None = None):
        if proc is not None:
            proc.begin_round()  # a new round: the game's notes start empty, as the table opens it
        self.wagered, self.dealt, self.decided, self.settled = (
            Wagered(dict(wagers or {})),
            Dealt(),
            Decided(),
            Settled(),
        )
        self.round = Round(number, self.wagered, self.dealt, self.decided, self.settled)

    def open(self, proc: Procedure, name: str) -> DecisionState:
        """The decision phase ``name`` opens (as controller/play/deciding.py ``phase_decide``)."""
        ds = self.decided.decisions[name] = proc.decision_state(self.round, name)
        return ds

    def apply(self, proc: Procedure, name: str, text: str) -> Entry:
        """One keypad entry, taken as controller/play/deciding.py takes it: its answer and its late wagers."""
        entry = proc.apply_entry(self.round, name, text)
        self.decided.decisions[name] = self.decided.decisions[name].after(entry)
        self.wagered.wagers.update(entry.late)
        return entry

    def ds(self, name: str) -> DecisionState:
        return self.decided.decisions[name]
