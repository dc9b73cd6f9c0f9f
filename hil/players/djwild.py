"""Simulated players at DJ Wild Stud Poker (58 Pa. Code 687a).

Each seat plays with an Ante and an equal Blind (§ 687a.7(d)(1)), sometimes the Trips
Bonus, the Two-Way Bad Beat and the Progressive Bonus (§ 687a.7(d)(2)-(4)); now and
then a dealer's slip (a Blind unequal to the Ante, a Progressive chip with no Ante) that
the table must refuse.  Raise or fold (§ 687a.11(b)): raise with a pair or better
(one wild card always makes a pair), fold the rest — with a few deviations so that
every path is played; rarely the dealer reports a card exposed before the raises
(§ 687a.13(d))."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from controller.games.base import Procedure
from controller.rules import poker
from hil.players.base import Bet, Strategy


class DJWildPlayers(Strategy[Procedure]):
    exposed_probability = 0.02

    def bets(self) -> list[Bet]:
        out: list[Bet] = []
        w = self.proc.wagers
        lo, hi = w["ante"].min_cents, min(w["ante"].max_cents, 5_000)
        for seat in range(1, self.proc.seats + 1):
            if self.rng.random() >= self.play_probability:
                if "progressive" in w and self.rng.random() < 0.03:  # a chip with no Ante: refused
                    out.append(self.sensed(seat, "progressive"))
                continue
            out += self._seat_bets(seat, lo, hi)
        return out

    def _seat_bets(self, seat: int, lo: int, hi: int) -> list[Bet]:
        """A player's Ante and Blind (now and then unequal), and some of the optional wagers offered."""
        w = self.proc.wagers
        ante = self.amount(lo, hi)
        out = [Bet(seat, "ante", ante)]  # § 687a.7(d)(1)
        blind = ante if self.rng.random() >= 0.03 else ante + 500  # unequal: refused
        out.append(Bet(seat, "blind", blind))
        if "trips" in w and self.rng.random() < 0.4:
            out.append(Bet(seat, "trips", self.rng.choice((100, 500, 500, 1000))))  # § 687a.7(d)(3)
        if "bad-beat" in w and self.rng.random() < 0.25:
            out.append(Bet(seat, "bad-beat", self.rng.choice((100, 500))))  # § 687a.7(d)(4)
        if "progressive" in w and self.rng.random() < 0.6:
            out.append(self.sensed(seat, "progressive"))  # § 687a.7(d)(2)
        return out

    def raises(self, cards: list[int]) -> bool:
        if len(cards) != 5 or any(c > 52 for c in cards):  # not read: a coin toss
            return self.rng.random() < 0.5
        made = poker.eval_five(cards, rules="dj-wild").category != poker.Category.HIGH_CARD
        return made != (self.rng.random() < 0.08)  # 8 % of decisions the other way

    def decide(self, status: Mapping[str, Any]) -> list[tuple[str, dict[tuple[int, str], int]]]:
        wagers = status.get("wagers", {})
        seats = sorted(int(k.split(":")[0]) for k in wagers if k.endswith(":ante"))
        exposed_after = (
            self.rng.randrange(len(seats)) if seats and self.rng.random() < self.exposed_probability else None
        )
        out: list[tuple[str, dict[tuple[int, str], int]]] = []
        for i, seat in enumerate(seats):  # from the dealer's far left, clockwise
            if exposed_after == i:
                out.append(("EXPOSED", {}))
                return out
            cards = list(status.get("cards", {}).get(f"seat:{seat}", []))
            if self.raises(cards):
                out.append((f"RAISE {seat}", {(seat, "raise"): 2 * wagers[f"{seat}:ante"]}))
            else:
                out.append((f"FOLD {seat}", {}))
        return out
