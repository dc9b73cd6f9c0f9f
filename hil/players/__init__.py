"""How the simulated players of each game bet and decide (one module per game, its
strategy class named by the game's declaration, controller/gamedefs/).  They see only what a
player sees: their own cards, the dealer's cards when exposed, the sign."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from controller.gamedefs import game, resolve

if TYPE_CHECKING:
    from hil.players.base import Strategy


def strategy_for(game_id: str) -> type[Strategy[Any]]:
    decl = game(game_id)
    if not decl.players:
        raise ValueError(f"game {game_id!r} has no simulated players")
    strategy = resolve(decl.players)
    if not isinstance(strategy, type):
        raise TypeError(f"{decl.players} (game {game_id!r}) is not a class")
    return strategy
