"""The base of every game's simulated players."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from controller.games.base import Procedure


@dataclass(frozen=True)
class Bet:
    seat: int
    wager: str
    cents: int
    sensed: bool = False  # a chip on a bet sensor (else the dealer keys it)


class Strategy:
    """Chooses the players' wagers and answers the dealer's prompts, from a seeded RNG."""

    def __init__(self, proc: Procedure, rng: random.Random, *, play_probability: float = 0.6):
        self.proc = proc
        self.rng = rng
        self.play_probability = play_probability

    def bets(self) -> list[Bet]:
        """The round's wagers, before "no more bets"."""
        raise NotImplementedError

    def decide(self, status: Mapping[str, Any]) -> list[tuple[str, dict[tuple[int, str], int]]]:
        """Keypad entries for the current decision phase (``status["decision"]``), each
        with the wagers it makes after the lock-out ((seat, wager) -> cents, for the balance)."""
        return [("DONE", {})]

    def amount(self, lo: int, hi: int, step: int = 500) -> int:
        return self.rng.randrange(lo // step, hi // step + 1) * step
