"""Simulated players at Over/Under (58 Pa. Code 686a).

Each player keys an Ante (§ 686a.6(d)) and sometimes a Bonus Wager (§ 686a.6(e)).
After the first card they mostly play the best decision (docs/rules-readings/686a.md,
686a-3: Under 18 on a first card of 2-5, Over 23 on 6 to ace), sometimes the other
side, and now and then surrender (§ 686a.7(g)(3)), so every path is exercised."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from controller.games.base import Procedure
from controller.rules.overunder import card_points
from hil.players.base import Bet, Strategy


class OverUnderPlayers(Strategy[Procedure]):
    def bets(self) -> list[Bet]:
        out: list[Bet] = []
        ante = self.proc.wagers["ante"]
        bonus = self.proc.wagers.get("bonus")
        for seat in range(1, self.proc.seats + 1):
            if self.rng.random() >= self.play_probability:
                continue
            out.append(Bet(seat, "ante", self.amount(ante.min_cents, min(ante.max_cents, 10_000))))
            if bonus is not None and self.rng.random() < 0.35:
                out.append(Bet(seat, "bonus", self.rng.choice((bonus.min_cents, 500, 500, 1_000))))
        return out

    def decide(self, status: Mapping[str, Any]) -> list[tuple[str, dict[tuple[int, str], int]]]:
        out: list[tuple[str, dict[tuple[int, str], int]]] = []
        dec = status.get("decision") or {}
        wagers = status.get("wagers", {})
        for seat in dec.get("required", []):  # in the dealing order (§ 686a.7(f))
            cards = status.get("cards", {}).get(f"seat:{seat}", [])
            ante = wagers.get(f"{seat}:ante", 0)
            r = self.rng.random()
            if r < 0.05:
                out.append((f"SURRENDER {seat}", {}))
                continue
            best = _guess(cards, contrary=r < 0.15)
            out.append((f"{'OVER' if best == 'over-23' else 'UNDER'} {seat}", {(seat, best): ante}))
        return out


def _guess(cards: list[int], contrary: bool) -> str:
    """Under 18 on a low first card (when read), else over 23; the other way when ``contrary``."""
    low = bool(cards) and cards[0] != 0xFF and card_points(cards[0]) <= 5
    return "under-18" if low != contrary else "over-23"
