"""How the simulated players of each game bet and decide (one module per game,
each defining ``STRATEGY``).  They see only what a player sees: their own
cards, the dealer's cards when exposed, the sign."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hil.players.base import Strategy

MODULES = {
    "six-card-fortune": "hil.players.sixcard",
    "fortune-asia": "hil.players.fortune_asia",
    "face-up": "hil.players.faceup",
    "dj-wild": "hil.players.djwild",
    "over-under": "hil.players.overunder",
    "pai-gow-tiles": "hil.players.tiles",
}


def strategy_for(game: str) -> type[Strategy[Any]]:
    strategy: type[Strategy[Any]] = importlib.import_module(MODULES[game]).STRATEGY
    return strategy
