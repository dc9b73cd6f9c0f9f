"""The base of every game's simulated players."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from controller.games.base import Procedure


@dataclass(frozen=True)
class Bet:
    seat: int
    wager: str
    cents: int
    sensed: bool = False  # a chip on a bet sensor (else the dealer keys it)


P = TypeVar("P", bound=Procedure)


class Strategy(Generic[P]):
    """Chooses the players' wagers and answers the dealer's prompts, from a seeded RNG.
    ``P``: the game's procedure class, whose own attributes (e.g. the tiles bank's
    rotation) a game's players may read; the constructor checks the table plays it."""

    #: the procedure class these players need (a subclass sets its game's)
    procedure: type[Procedure] = Procedure

    def __init__(self, proc: P, rng: random.Random, *, play_probability: float = 0.6):
        if not isinstance(proc, self.procedure):
            raise TypeError(
                f"{type(self).__name__} plays {self.procedure.__name__}, not {proc.game} ({type(proc).__name__})"
            )
        self.proc = proc
        self.rng = rng
        self.play_probability = play_probability

    def sensed(self, seat: int, wager: str) -> Bet:
        """A chip on ``wager``'s bet sensor: a wager of its fixed amount (the table takes the
        sensed spots at ``fixed_cents``, controller/play/wagering.py)."""
        cents = self.proc.wagers[wager].fixed_cents
        if cents is None:
            raise ValueError(f"{self.proc.game}: wager {wager!r} is not sensed at a fixed amount")
        return Bet(seat, wager, cents, sensed=True)

    def bets(self) -> list[Bet]:
        """The round's wagers, before "no more bets"."""
        raise NotImplementedError

    def decide(self, status: Mapping[str, Any]) -> list[tuple[str, dict[tuple[int, str], int]]]:
        """Keypad entries for the current decision phase (``status["decision"]``), each
        with the wagers it makes after the lock-out ((seat, wager) -> cents, for the balance)."""
        return [("DONE", {})]

    def amount(self, lo: int, hi: int, step: int = 500) -> int:
        return self.rng.randrange(lo // step, hi // step + 1) * step
