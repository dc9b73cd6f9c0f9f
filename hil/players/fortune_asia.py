"""Simulated players at Fortune Asia Poker (58 Pa. Code 659a).

Each player bets the Fortune Asia Poker Wager (§ 659a.7(d)) and sometimes the
Fortune Bonus (often a Qualifying Wager of $5 or more, § 659a.1), the Insurance
and the Progressive (§ 659a.7(e)).  Most leave the setting to the house way;
some set their own hands (the strongest high hand, or now and then a careless
setting that fouls, § 659a.11(f)(1)(iii)-(v)); now and then two adjacent seats
are one player (§ 659a.7(f)); a player without an optional wager sometimes
surrenders once the dealer's hands are set (§ 659a.11(d)).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from controller.games.base import Procedure
from controller.games.fortune_asia import FortuneAsia
from controller.rules.cards import card_str
from controller.rules.fortune_asia import get_house_way
from hil.players.base import Bet, Strategy

Entries = list[tuple[str, dict[tuple[int, str], int]]]


class FortuneAsiaPlayers(Strategy[Procedure]):
    def bets(self) -> list[Bet]:
        out: list[Bet] = []
        for seat in range(1, self.proc.seats + 1):
            if self.rng.random() >= self.play_probability:
                continue
            out += self._seat_bets(seat)
        if self.rng.random() < 0.03:
            out += self._refused_bet(out)
        return out

    def _refused_bet(self, placed: list[Bet]) -> list[Bet]:
        """A wager the table refuses at the lock-out: an optional wager with no Fortune Asia Poker
        Wager (§ 659a.7(e)), at a seat with none."""
        idle = [s for s in range(1, self.proc.seats + 1) if not any(b.seat == s for b in placed)]
        if not idle or "fortune" not in self.proc.wagers:
            return []
        return [Bet(self.rng.choice(idle), "fortune", 500)]

    def _seat_bets(self, seat: int) -> list[Bet]:
        """A playing seat's Fortune Asia Poker Wager and the optional wagers it adds."""
        w = self.proc.wagers
        out = [Bet(seat, "base", self.amount(500, 10_000))]  # § 659a.7(d)
        if "fortune" in w and self.rng.random() < 0.4:
            out.append(Bet(seat, "fortune", self.rng.choice((100, 300, 500, 500, 1000))))  # § 659a.7(e)(1)
        if "insurance" in w and self.rng.random() < 0.2:
            out.append(Bet(seat, "insurance", self.rng.choice((100, 500))))  # § 659a.7(e)(2)
        if self.rng.random() < 0.5:
            out.append(self.sensed(seat, "progressive"))
        return out

    def decide(self, status: Mapping[str, Any]) -> Entries:
        phase = (status.get("decision") or {}).get("phase")
        wagers = status.get("wagers", {})
        players = sorted(int(k.split(":")[0]) for k in wagers if k.endswith(":base"))
        out: Entries = []
        if phase == "settings":
            out += self._settings(status.get("cards", {}), players)
        elif phase == "surrender":
            out += self._surrenders(wagers, players)
        out.append(("DONE", {}))
        return out

    def _surrenders(self, wagers: Mapping[str, Any], players: list[int]) -> Entries:
        """Now and then a player without an optional wager surrenders (§ 659a.11(d))."""
        optional = {int(k.split(":")[0]) for k in wagers if not k.endswith(":base")}
        return [(f"SUR {n}", {}) for n in players if n not in optional and self.rng.random() < 0.15]

    def _settings(self, cards: Mapping[str, Any], players: list[int]) -> Entries:
        """Some players set their own hands; two adjacent areas sometimes played by one player."""
        out: Entries = []
        for n in players:
            entry = self._setting(n, cards.get(f"seat:{n}", []))
            if entry is not None:
                out.append(entry)
        if isinstance(self.proc, FortuneAsia) and self.proc.adjacent_areas and self.rng.random() < 0.1:
            out += self._same_player(players)
        return out

    def _same_player(self, players: list[int]) -> Entries:
        """Two adjacent areas played by one player (§ 659a.7(f)), when two players sit side by side."""
        pairs = [(a, a + 1) for a in players if a + 1 in players]
        if not pairs:
            return []
        a, b = self.rng.choice(pairs)
        return [(f"SAME {a} {b}", {})]

    def _setting(self, n: int, mine: list[int]) -> tuple[str, dict[tuple[int, str], int]] | None:
        r = self.rng.random()
        if len(mine) != 7 or r >= 0.3:
            return None  # the house way (§ 659a.11(a)(1))
        if r < 0.05:  # careless: any three cards (may foul)
            m1, m2, low = self.rng.sample(mine, 3)
        else:  # the strongest high hand
            s = get_house_way("highest-high")(mine)
            (m1, m2), (low,) = s.medium.cards, s.low.cards
        return (f"SET {n} {card_str(m1)} {card_str(m2)} {card_str(low)}", {})
