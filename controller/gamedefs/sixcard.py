"""Six-Card Fortune Pai Gow Poker (58 Pa. Code chapter 670a)."""

from controller.gamedefs import GameDecl

GAME = GameDecl(
    id="six-card-fortune",
    chapter="670a",
    title="Six-Card Fortune Pai Gow Poker",
    procedure="controller.games.sixcard:SixCardFortune",
    players="hil.players.sixcard:SixCardPlayers",
    validation=("§ 670a.11(h)(3)(i)(B)(III)", "§ 670a.11(h)(3)(i)(B)(IV)"),
)
