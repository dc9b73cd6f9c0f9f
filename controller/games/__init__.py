"""Game procedures at the table (controller/games/base.py): one module per game, its
:class:`~controller.games.base.Procedure` subclass named by the game's declaration
(controller/gamedefs/).  Every wager decision is delegated to the pure rules engine in
controller/rules/."""

from __future__ import annotations

from collections.abc import ItemsView
from typing import TYPE_CHECKING

from controller.gamedefs import game, games, resolve

if TYPE_CHECKING:
    from controller.games.base import Procedure
    from controller.settings.config import TableProfile


def procedure_class(game_id: str) -> type[Procedure]:
    decl = game(game_id)
    if not decl.procedure:
        raise ValueError(f"game {game_id!r} is not yet playable at the table (rules engine only)")
    cls = resolve(decl.procedure)
    if not isinstance(cls, type):
        raise TypeError(f"{decl.procedure} (game {game_id!r}) is not a class")
    return cls


def procedure_for(game_id: str, profile: TableProfile) -> Procedure:
    return procedure_class(game_id)(profile)


def available() -> dict[str, type[Procedure]]:
    """The procedure class of every game the table can play."""
    return {g: procedure_class(g) for g, decl in games().items() if decl.procedure}


class _Procedures:
    """``PROCEDURES``: a live view of :func:`available` for the diagram."""

    def items(self) -> ItemsView[str, type[Procedure]]:
        return available().items()


PROCEDURES = _Procedures()
