"""Simulated players at Pai Gow (tiles) (58 Pa. Code 621a).

Each round, from the seeded RNG: some seats key a Pai Gow Wager (§ 621a.5(d)) and
sometimes Pair Fortunes, Sum, a Match on a value, Beat It (§ 621a.5(e)); when the
bank may be offered, a player who wagered against the dealer in the last round no
player banked sometimes sits out the wagers to accept the bank (§ 621a.9(c),(d)),
sometimes co-banks (§ 621a.9(e)), directs the dealer's wager (§ 621a.9(h)), cuts
(§ 621a.9(g)) or picks a dealing style (§ 621a.7).  When the hands are set, a few
players set their own (any split, sometimes placed the wrong way round), surrender
(§ 621a.8(e)) or void an exposed hand (§ 621a.10(d)); the dealer or bank sometimes
places a hand that is not the house way and has it reset (§ 621a.10(f)).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from controller.games.tiles import PaiGowTiles
from controller.rules.tiles import FULL_SET, tile_str
from hil.players.base import Bet, Strategy

Entries = list[tuple[str, dict[tuple[int, str], int]]]


class TilesPlayers(Strategy[PaiGowTiles]):
    procedure = PaiGowTiles  # they read the bank's rotation and the game's options
    bank_seat: int | None = None

    def bets(self) -> list[Bet]:
        p, rng = self.proc, self.rng
        self.bank_seat = self._pick_bank()
        out: list[Bet] = []
        for seat in range(1, p.seats + 1):
            if seat == self.bank_seat or rng.random() >= self.play_probability:
                continue
            out += self._seat_bets(seat)
        return out

    def _pick_bank(self) -> int | None:
        """A player who banks this round (sometimes, when the rotation allows one), else None."""
        p, rng = self.proc, self.rng
        rot = p.rotation  # who may bank (controller/games/tiles_rotation.py)
        if p.opts.player_bank and rot.rounds_played > 0 and rng.random() < 0.35:
            able = sorted(s for s in rot.last_dealer_round if s != rot.previous_bank)
            if able:
                return rng.choice(able)
        return None

    def _seat_bets(self, seat: int) -> list[Bet]:
        """A playing seat's base wager and the side wagers it adds."""
        p, rng = self.proc, self.rng
        out = [Bet(seat, "base", self.amount(500, 10_000))]
        for w, prob in (("pair-fortunes", 0.4), ("sum", 0.25), ("beat-it", 0.2)):
            if w in p.wagers and rng.random() < prob:
                out.append(Bet(seat, w, rng.choice((100, 500, 1000))))
        if "match-1" in p.wagers and rng.random() < 0.2:
            out.append(Bet(seat, f"match-{rng.randint(1, 6)}", rng.choice((100, 500))))
        return out

    def _tiles(self, ids: list[int], n: int = 2) -> str:
        return " ".join(tile_str(FULL_SET[i]) for i in self.rng.sample(ids, n))

    def decide(self, status: Mapping[str, Any]) -> Entries:
        phase = status["decision"]["phase"]
        wagers = {tuple(k.split(":")): c for k, c in status.get("wagers", {}).items()}
        base = {int(s): c for (s, w), c in wagers.items() if w == "base"}
        return self._bank(base) if phase == "bank" else self._settings(status, base)

    def _bank(self, base: Mapping[int, int]) -> Entries:
        p, rng = self.proc, self.rng
        out: Entries = []
        b = self.bank_seat
        if b is not None and base:
            out += self._player_bank(b, base)
        if len(p.opts.styles) > 1 and rng.random() < 0.5:
            out.append((f"STYLE {rng.choice(p.opts.styles)}", {}))
        out.append(("DONE", {}))
        return out

    def _player_bank(self, b: int, base: Mapping[int, int]) -> Entries:
        """Seat ``b`` takes the bank (now and then short of chips: refused, § 621a.9(d)(2)), perhaps
        co-banked or against a dealer's wager, perhaps with a cut."""
        p, rng = self.proc, self.rng
        short = rng.random() < 0.05
        chips = sum(base.values()) + (-100 if short else rng.choice((0, 5_000)))
        out: Entries = [(f"BANK {b} {chips / 100:.2f}", {})]
        if p.opts.co_banking and rng.random() < 0.3:
            out.append(("COBANK", {}))
        elif rng.random() < 0.3:
            last = p.rotation.last_dealer_round.get(b, 0)
            out.append((f"DEALER {rng.choice((0, last // 200 * 100, last)) / 100:.2f}", {}))
        if rng.random() < 0.25:
            out.append((rng.choice(("CUT R 1-2", "CUT L 7-8", "CUT R 3-3", "CUT R 1-1 L 2-3")), {}))
        return out

    def _settings(self, status: Mapping[str, Any], base: Mapping[int, int]) -> Entries:
        rng = self.rng
        cards = status.get("cards", {})
        out: Entries = []
        for seat in sorted(base):
            entry = self._seat_decision(seat, rng.random(), cards.get(f"seat:{seat}"))
            if entry:
                out.append((entry, {}))
        if rng.random() < 0.15:
            banker = [int(k[5:]) for k in cards if k.startswith("seat:") and int(k[5:]) not in base]
            mine = cards.get(f"seat:{self.bank_seat}") if self.bank_seat in banker else cards.get("dealer")
            if mine:
                out.append((f"BANKSET {self._tiles(mine)}", {}))
        out.append(("DONE", {}))
        return out

    def _seat_decision(self, seat: int, r: float, tiles: list[int] | None) -> str | None:
        """By the draw ``r``: void, surrender, set the hand (when its tiles are known), or the house way."""
        if r < 0.03:
            return f"VOID {seat}"  # § 621a.10(d)
        if r < 0.08:
            return f"SURRENDER {seat}"  # § 621a.8(e)
        if r < 0.3 and tiles:
            return f"SET {seat} {self._tiles(tiles)}"
        return None
