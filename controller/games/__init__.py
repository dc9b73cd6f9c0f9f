"""Game procedures at the table (controller/games/base.py): one module per
game, each defining ``PROCEDURE``, its :class:`~controller.games.base.Procedure`
subclass.  Every wager decision is delegated to the pure rules engine in
controller/rules/."""

from __future__ import annotations

import importlib
from collections.abc import ItemsView
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from controller.games.base import Procedure
    from controller.settings.config import TableProfile

GAME_MODULES = {
    "six-card-fortune": "controller.games.sixcard",
    "fortune-asia": "controller.games.fortune_asia",
    "face-up": "controller.games.faceup",
    "dj-wild": "controller.games.djwild",
    "over-under": "controller.games.overunder",
    "pai-gow-tiles": "controller.games.tiles",
}


def procedure_class(game: str) -> type[Procedure]:
    name = GAME_MODULES.get(game)
    if name is None:
        raise ValueError(f"no game {game!r}; games: {', '.join(GAME_MODULES)}")
    try:
        mod = importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name == name:
            raise ValueError(f"game {game!r} is not yet playable at the table (rules engine only)") from None
        raise
    cls: type[Procedure] = mod.PROCEDURE
    return cls


def procedure_for(game: str, profile: TableProfile) -> Procedure:
    return procedure_class(game)(profile)


def available() -> dict[str, type[Procedure]]:
    """The procedure class of every game the table can play."""
    out: dict[str, type[Procedure]] = {}
    for game in GAME_MODULES:
        try:
            out[game] = procedure_class(game)
        except ValueError:
            continue
    return out


class _Procedures:
    """``PROCEDURES``: a live view of :func:`available` for the diagram."""

    def items(self) -> ItemsView[str, type[Procedure]]:
        return available().items()


PROCEDURES = _Procedures()
