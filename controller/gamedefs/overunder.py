"""Over/Under (58 Pa. Code chapter 686a)."""

from controller.gamedefs import GameDecl

GAME = GameDecl(
    id="over-under",
    chapter="686a",
    title="Over/Under",
    procedure="controller.games.overunder:OverUnder",
    players="hil.players.overunder:OverUnderPlayers",
)
