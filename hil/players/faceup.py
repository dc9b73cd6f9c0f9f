"""Simulated players at Face Up Pai Gow Poker (58 Pa. Code 688a).

Each playing seat keys a Face Up Pai Gow Poker Wager (§ 688a.7(d)) and sometimes
the optional wagers the table offers (§ 688a.7(e)): an Ace High Bonus, a Fortune
Bonus (often $5 or more: a Qualifying Wager for the envy, § 688a.1), the sensed
Progressive Payout Wager.  Now and then a player asks for a wager the table must
refuse (an amount under the minimum).  Once the dealer's hands are face up the
players mostly let the house way set their hands (§ 688a.11(b)(1)); some set their
own (a few of them foul, § 688a.11(f)(1)(iii)), some surrender — or try to with an
optional wager, which the table refuses (§ 688a.11(d)) — and rarely a player voids
a hand whose card the dealer exposed (§ 688a.13(d)).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from controller.games.base import Procedure
from controller.rules.cards import card_str
from controller.rules.faceup_houseway import house_way
from hil.players.base import Bet, Strategy


class FaceUpPlayers(Strategy[Procedure]):
    def bets(self) -> list[Bet]:
        out: list[Bet] = []
        offered = self.proc.wagers
        for seat in range(1, self.proc.seats + 1):
            if self.rng.random() >= self.play_probability:
                continue
            out.append(Bet(seat, "base", self.amount(500, 10_000)))  # § 688a.7(d)
            out += self._optional_bets(seat)
            if self.rng.random() < 0.03:  # under the table minimum: refused
                out.append(Bet(seat, "fortune" if "fortune" in offered else "base", 50))
        return out

    def _optional_bets(self, seat: int) -> list[Bet]:
        """Some of the optional wagers the table offers."""
        offered = self.proc.wagers
        out: list[Bet] = []
        if "ace-high" in offered and self.rng.random() < 0.3:  # § 688a.7(e)(1)
            out.append(Bet(seat, "ace-high", self.rng.choice((100, 500, 1000, 2500))))
        if "fortune" in offered and self.rng.random() < 0.35:  # § 688a.7(e)(2)
            out.append(Bet(seat, "fortune", self.rng.choice((100, 500, 500, 1000, 2500))))
        if "progressive" in offered and self.rng.random() < 0.5:  # § 688a.7(e)(3)
            out.append(self.sensed(seat, "progressive"))
        return out

    def decide(self, status: Mapping[str, Any]) -> list[tuple[str, dict[tuple[int, str], int]]]:
        out: list[tuple[str, dict[tuple[int, str], int]]] = []
        wagers = {tuple(k.split(":")) for k in status.get("wagers", {})}
        for seat, wager in sorted(wagers):
            if wager != "base":
                continue
            cards = status.get("cards", {}).get(f"seat:{seat}", [])
            r = self.rng.random()
            if r < 0.02:
                out.append((f"VOID {seat}", {}))  # § 688a.13(d)
            elif r < 0.10:
                out.append((f"SUR {seat}", {}))  # refused with an optional wager (§ 688a.11(d))
            elif r < 0.25 and len(cards) == 7:
                low = self._low_pair(cards)
                out.append((f"SET {seat} {card_str(low[0])} {card_str(low[1])}", {}))
        out.append(("DONE", {}))
        return out

    def _low_pair(self, cards: list[int]) -> list[int]:
        """The two cards a player sets low: his own idea (perhaps a foul), or the highest low hand."""
        if self.rng.random() < 0.3:
            return self.rng.sample(list(cards), 2)
        return list(house_way(tuple(cards), "highest-low").low)
