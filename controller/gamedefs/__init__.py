"""The games, each declared once in a module of this package (the file is the registry, as a
Klipper module is: found by the loader, listed nowhere).  A module here holds one
:class:`GameDecl` named ``GAME``; every list of games (the paytable check, the profile's
choices, the procedures, the simulated players, the simulation bench, the report's
citations) is read from :func:`games`.

A declaration is data only: it names the procedure and the players by dotted path
(``"package.module:Name"``) and imports nothing, so the rules engine may read the ids
without knowing a table, a driver or a simulator (tests/controller/test_layers.py).
Adding a game: docs/architecture.md "Adding a game / a device".
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from drivers.discovery import discover, resolve

__all__ = ["GameDecl", "game", "game_ids", "games", "rescan", "resolve"]


@dataclass(frozen=True, slots=True)
class GameDecl:
    """One game as the table knows it."""

    id: str  # the profile's ``[game] id``, the paytables' ``game``
    chapter: str  # 58 Pa. Code chapter (``670a``)
    title: str  # the game's name in its chapter
    #: the procedure at the table (controller/games/), ``"module:Class"``; empty: rules engine only
    procedure: str = ""
    #: the simulated players (hil/players/), ``"module:Class"``
    players: str = ""
    #: the paytable file: a name under config/paytables/ (default ``<chapter>.toml``) or an absolute path
    paytables: str = ""
    #: where the chapter asks a floorperson to validate a meter payout and says it is not paid
    #: from the table inventory; empty: the chapter asks for no validation
    validation: tuple[str, ...] = ()

    @property
    def paytable_file(self) -> str:
        return self.paytables or f"{self.chapter}.toml"


@cache
def games() -> dict[str, GameDecl]:
    """Every declared game by id, in the order of their modules' names."""
    return discover(__name__, __path__, "GAME", GameDecl, lambda d: d.id)


def game_ids() -> tuple[str, ...]:
    return tuple(games())


def game(game_id: str) -> GameDecl:
    """The declaration of ``game_id``; an unknown id names the known ones."""
    decl = games().get(game_id)
    if decl is None:
        raise ValueError(f"no game {game_id!r}; games: {', '.join(games())}")
    return decl


def rescan() -> None:
    """Forget what was found (a test that adds a module to the package)."""
    games.cache_clear()
