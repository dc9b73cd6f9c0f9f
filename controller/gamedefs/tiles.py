"""Pai Gow (tiles) (58 Pa. Code chapter 621a)."""

from controller.gamedefs import GameDecl

GAME = GameDecl(
    id="pai-gow-tiles",
    chapter="621a",
    title="Pai Gow (tiles)",
    procedure="controller.games.tiles:PaiGowTiles",
    players="hil.players.tiles:TilesPlayers",
)
