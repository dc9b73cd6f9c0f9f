"""Simulated players at Six-Card Fortune Pai Gow Poker (58 Pa. Code 670a)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from controller.games.base import Procedure
from controller.games.sixcard import SixCardFortune
from controller.rules.cards import card_str
from hil.players.base import Bet, Strategy


class SixCardPlayers(Strategy[Procedure]):
    def bets(self) -> list[Bet]:
        out: list[Bet] = []
        full = isinstance(self.proc, SixCardFortune) and self.proc.full  # keyed wagers too (§ 670a.7)
        for seat in range(1, self.proc.seats + 1):
            if self.rng.random() >= self.play_probability:
                continue
            if full:
                out += self._keyed_bets(seat)
            if self.rng.random() < (0.6 if full else 0.9):
                out.append(self.sensed(seat, "progressive"))
        return out

    def _keyed_bets(self, seat: int) -> list[Bet]:
        """The wagers the dealer keys at a full Six-Card Fortune table: the wager, perhaps Fortune
        and Insurance."""
        out = [Bet(seat, "base", self.amount(500, 10_000))]  # § 670a.7(d)
        if self.rng.random() < 0.4:
            out.append(Bet(seat, "fortune", self.rng.choice((100, 500, 500, 1000))))  # § 670a.7(e)(2)
        if self.rng.random() < 0.2:
            out.append(Bet(seat, "insurance", self.rng.choice((100, 500))))  # § 670a.7(e)(3)
        return out

    def decide(self, status: Mapping[str, Any]) -> list[tuple[str, dict[tuple[int, str], int]]]:
        out: list[tuple[str, dict[tuple[int, str], int]]] = []
        for key, cents in sorted(status.get("wagers", {}).items()):
            seat, wager = key.split(":")
            if wager != "base":
                continue
            out += self._seat_decisions(int(seat), cents, status.get("cards", {}).get(f"seat:{seat}", []))
        out.append(("DONE", {}))
        return out

    def _seat_decisions(self, n: int, cents: int, cards: list[int]) -> list[tuple[str, dict[tuple[int, str], int]]]:
        """Now and then a Double Down; now and then the player's own setting (sometimes a foul)."""
        out: list[tuple[str, dict[tuple[int, str], int]]] = []
        if self.rng.random() < 0.15 and "double-down" in self.proc.wagers:  # § 670a.11(c)
            out.append((f"DD {n}", {(n, "double-down"): cents}))
        if self.rng.random() < 0.1 and cards:  # a player sets his own hand (sometimes a foul, § 670a.11(f)(1)(v))
            out.append((f"SET {n} {card_str(self.rng.choice(cards))}", {}))
        return out
