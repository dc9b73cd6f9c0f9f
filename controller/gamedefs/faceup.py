"""Face Up Pai Gow Poker (58 Pa. Code chapter 688a)."""

from controller.gamedefs import GameDecl

GAME = GameDecl(
    id="face-up",
    chapter="688a",
    title="Face Up Pai Gow Poker",
    procedure="controller.games.faceup:FaceUp",
    players="hil.players.faceup:FaceUpPlayers",
    validation=("§ 688a.11(h)(3)(i)(B)(3)", "§ 688a.11(h)(3)(i)(B)(4)"),
)
