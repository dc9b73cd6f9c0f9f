"""DJ Wild Stud Poker (58 Pa. Code chapter 687a)."""

from controller.gamedefs import GameDecl

GAME = GameDecl(
    id="dj-wild",
    chapter="687a",
    title="DJ Wild Stud Poker",
    procedure="controller.games.djwild:DJWild",
    players="hil.players.djwild:DJWildPlayers",
)
