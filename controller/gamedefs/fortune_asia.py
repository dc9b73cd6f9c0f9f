"""Fortune Asia Poker (58 Pa. Code chapter 659a)."""

from controller.gamedefs import GameDecl

GAME = GameDecl(
    id="fortune-asia",
    chapter="659a",
    title="Fortune Asia Poker",
    procedure="controller.games.fortune_asia:FortuneAsia",
    players="hil.players.fortune_asia:FortuneAsiaPlayers",
    validation=("§ 659a.11(h)(3)(ii)(C)", "§ 659a.11(h)(3)(ii)(D)"),
)
