"""Pai Gow (tiles): what goes round the table from round to round (58 Pa. Code 621a).

- The player bank (§ 621a.9): offered only when the profile has it (§ 621a.9(a)) and not at
  the start of the game (§ 621a.9(b)), around the table from the first offer, never to the
  last round's bank, only to a player who wagered against the dealer in the last round no
  player banked and covers the other wagers (§ 621a.9(c),(d)).  At the ``bank_selection``
  decision the dealer keys BANK, COBANK (§ 621a.9(e)), DEALER (the dealer's wager against
  the bank, § 621a.9(h)), STYLE (§ 621a.9(i), § 621a.7) and CUT (§ 621a.9(g)).
- The shaker (§ 621a.9(i), § 621a.6(a)(3)): the bank shakes; otherwise the next player with
  a Pai Gow Wager counterclockwise after the last shooter.

:class:`Rotation` is a part of :class:`controller.games.tiles.PaiGowTiles` and owns what
carries across rounds: the rounds played, the first offer, the last bank, the Pai Gow Wagers
of the last round no player banked, the last shooter.  A round played moves it on
(:meth:`Rotation.round_ended`); it is written with each round's close and given back at
start-up (:meth:`Rotation.carry`, :meth:`Rotation.restore`): a power loss is not a new game.
Seats are the table's (1..6); controller/rules/tiles_deal.py and tiles_settle.py count
positions from the dealer's right (:func:`position`, :func:`seat_at`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from controller.games.base import Entry, EntryError, GameRound, parse_cents, seat_arg
from controller.games.tiles_options import TilesOptions
from controller.rules.tiles_deal import STYLES, cut_stacks
from controller.rules.tiles_settle import can_bank, dealer_wager_against_bank, select_bank

if TYPE_CHECKING:
    from controller.games.round import Round


def position(seats: int, seat: int) -> int:
    """The tiles_deal position of a seat (1 = the dealer's far right = the last seat)."""
    return seats + 1 - seat


def seat_at(seats: int, pos: int) -> int:
    """The seat at a tiles_deal position (the inverse of :func:`position`)."""
    return seats + 1 - pos


@dataclass(frozen=True)
class BankSet:
    """The high hand the dealer or the bank placed, and whether it was reset to the house way (§ 621a.10(f))."""

    placed: str
    reset: bool


@dataclass
class TilesRound(GameRound):
    """A Pai Gow (tiles) round as the procedure notes it (controller/games/tiles.py and this
    module write it; nobody else)."""

    # the bank_selection decision (§ 621a.9)
    bank: int | None = None  # the seat that banks, None: the dealer banks
    chips: int | None = None  # the bank's chips (§ 621a.9(d)(2))
    offered: list[int] = field(default_factory=list)  # the seats the bank was offered to, in turn
    next_offer: int | None = None  # who is offered the bank first next round (§ 621a.9(c))
    cobank: bool = False  # § 621a.9(e)
    dealer_wager: int = 0  # the dealer's wager against the bank (§ 621a.9(h))
    style: str | None = None  # the dealing style chosen (§ 621a.7), None: the profile's
    cut: tuple[int, ...] | None = None  # the stacks' order after the bank's cut (§ 621a.9(g))
    shooter: int | None = None  # who activates the shaker (§ 621a.9(i), § 621a.6(a)(3))
    # the setting_hands decision (§ 621a.8, § 621a.10)
    settings: dict[int, tuple[int, int]] = field(default_factory=dict)  # seat -> the high hand keyed
    surrendered: list[int] = field(default_factory=list)
    voided: list[int] = field(default_factory=list)
    bankset: BankSet | None = None

    def bank_opened(self, style: str) -> None:
        """The bank_selection decision opens: nobody banks yet, the profile's style."""
        self.bank, self.cobank, self.dealer_wager, self.style, self.cut = None, False, 0, style, None

    def settings_opened(self) -> None:
        """The setting_hands decision opens: nothing keyed yet."""
        self.settings, self.surrendered, self.voided, self.bankset = {}, [], [], None


def _cut_end(side: str, rng: str, ends: Mapping[str, tuple[int, int]]) -> tuple[str, tuple[int, int]]:
    """``R a-b`` or ``L a-b`` (``a`` alone: one stack): the end, and the half-open range of stacks
    (0-based) moved to it; each end once."""
    a, _, b = rng.partition("-")
    if side not in ("R", "L") or side in ends or not a.isdigit() or not (b or a).isdigit():
        raise EntryError(f"{side} {rng!r}: enter R or L and a range of stacks like 2-3")
    return side, (int(a) - 1, int(b or a))


class Rotation:
    def __init__(self, opts: TilesOptions, seats: int):
        self.opts = opts
        self.seats = seats
        # across rounds (§ 621a.9(b)-(d)): a new procedure is the start of the game
        self.rounds_played = 0
        self.first_offer = seats  # the player farthest to the dealer's right (§ 621a.9(c))
        self.previous_bank: int | None = None
        self.last_dealer_round: dict[int, int] = {}  # seat -> Pai Gow Wager, last round no player banked
        self.shooter: int | None = None  # the last player who activated the shaker

    def _pos(self, seat: int) -> int:
        return position(self.seats, seat)

    def _seat(self, pos: int) -> int:
        return seat_at(self.seats, pos)

    # ---- the bank (§ 621a.9) -----------------------------------------------------------------
    def bank_offered(self, players: Sequence[int]) -> bool:
        return self.opts.player_bank and self.rounds_played > 0 and bool(players)

    def _select(self, players: Sequence[int], bank: int | None) -> Any:
        occupied = {self._pos(s) for s in players} | ({self._pos(bank)} if bank else set())
        return select_bank(
            self._pos(self.first_offer),
            sorted(occupied),
            {self._pos(bank): True} if bank else {},
            eligible=[self._pos(s) for s in self.last_dealer_round],
            previous_bank=None if self.previous_bank is None else self._pos(self.previous_bank),
            start_of_game=self.rounds_played == 0,
        )

    def bank_done(self, x: TilesRound, players: Sequence[int]) -> None:
        """DONE at the ``bank_selection`` decision: when the bank was offered and nobody
        accepted (§ 621a.9(c)), who is offered it first next round."""
        if x.bank is None and self.bank_offered(players):
            sel = self._select(players, None)
            x.next_offer = None if sel.next_first_offer is None else self._seat(sel.next_first_offer)

    def entry(self, x: TilesRound, rnd: Round, players: Sequence[int], verb: str, args: list[str]) -> Entry:
        """One of the dealer's entries at the ``bank_selection`` decision but DONE:
        BANK, COBANK, DEALER, STYLE, CUT."""
        if verb == "BANK" and len(args) == 2:
            return self._bank(x, rnd, players, args)
        if verb == "COBANK" and not args:
            return self._cobank(x, rnd)
        if verb == "DEALER" and len(args) == 1:
            return self._dealer_wager(x, args[0])
        if verb == "STYLE" and len(args) == 1:
            return self._style(x, args[0])
        if verb == "CUT" and args:
            return self._cut_entry(x, args)
        raise EntryError("enter BANK <seat> <chips>, COBANK, DEALER <amount>, STYLE <style>, CUT R a-b [L c-d] or DONE")

    def _bank(self, x: TilesRound, rnd: Round, players: Sequence[int], args: list[str]) -> Entry:
        """BANK <seat> <chips>: the player who accepted the bank (§ 621a.9(c),(d))."""
        if not self.bank_offered(players):
            why = (
                "the table does not offer a player bank (§ 621a.9(a))"
                if not self.opts.player_bank
                else "no player may bank at the start of the game (§ 621a.9(b))"
            )
            raise EntryError(why)
        if x.bank is not None:
            raise EntryError(f"seat {x.bank} is already the bank")
        seat = seat_arg(args[0], range(1, self.seats + 1))
        chips = parse_cents(args[1])
        self._check_bank(rnd, seat, chips)
        sel = self._select(players, seat)
        if sel.bank is None or self._seat(sel.bank) != seat:
            raise EntryError(
                f"seat {seat} banked the last round; a player may not bank two consecutive rounds (§ 621a.9(c))"
            )
        x.bank, x.chips = seat, chips
        x.offered = [self._seat(p) for p in sel.offered]
        x.next_offer = None if sel.next_first_offer is None else self._seat(sel.next_first_offer)
        x.dealer_wager = dealer_wager_against_bank(
            self.last_dealer_round[seat], rules_submission_amount=self.opts.dealer_wager_cents
        )
        return Entry(
            f"SEAT {seat} BANKS; DEALER WAGERS {x.dealer_wager / 100:,.2f}",
            {"seat": seat, "decision": "bank", "chips": chips, "offered": x.offered, "dealer_wager": x.dealer_wager},
        )

    def _check_bank(self, rnd: Round, seat: int, chips: int) -> None:
        """§ 621a.9(d),(f): who may bank, with enough chips to cover the Pai Gow Wagers."""
        if any(s == seat for (s, _w) in rnd.wagers):
            raise EntryError(
                f"seat {seat} has wagers against the dealer this round; the bank wagers on "
                "its own area only (§ 621a.9(f))"
            )
        others = sum(c for (s, w), c in rnd.wagers.items() if w == "base")
        if seat not in self.last_dealer_round:
            raise EntryError(
                f"seat {seat} placed no wager against the dealer in the last round no player banked (§ 621a.9(d)(1))"
            )
        if not can_bank(wagered_last_dealer_round=True, chips_cents=chips, others_wagers_cents=others):
            raise EntryError(
                f"${chips / 100:,.2f} does not cover the Pai Gow Wagers of ${others / 100:,.2f} (§ 621a.9(d)(2))"
            )

    def _cobank(self, x: TilesRound, rnd: Round) -> Entry:
        if not self.opts.co_banking:
            raise EntryError("the table does not offer co-banking (§ 621a.9(e))")
        if x.bank is None:
            raise EntryError("no player banks this round (key BANK first)")
        odd = [s for (s, w), c in rnd.wagers.items() if w == "base" and c % 2]
        if odd:
            raise EntryError(
                f"seat {odd[0]}'s wager is an odd number of cents: the co-bank's half would not "
                "be whole cents (§ 621a.9(r))"
            )
        x.cobank, x.dealer_wager = True, 0  # § 621a.9(e),(h): no dealer wager when co-banking
        return Entry(f"SEAT {x.bank} CO-BANKS WITH THE DEALER", {"seat": x.bank, "decision": "co-bank"})

    def _dealer_wager(self, x: TilesRound, text: str) -> Entry:
        if x.bank is None or x.cobank:
            raise EntryError("the dealer wagers against a player bank only, never when co-banking (§ 621a.9(h))")
        try:
            amount = dealer_wager_against_bank(
                self.last_dealer_round[x.bank],
                directed=parse_cents(text),
                rules_submission_amount=self.opts.dealer_wager_cents,
            )
        except ValueError as e:
            raise EntryError(str(e)) from None
        x.dealer_wager = amount
        return Entry(f"DEALER WAGERS {amount / 100:,.2f}", {"decision": "dealer-wager", "cents": amount})

    def _style(self, x: TilesRound, text: str) -> Entry:
        style = text.lower()
        if style not in self.opts.styles:
            raise EntryError(f"{style!r} is not a dealing style offered here ({', '.join(self.opts.styles)}; § 621a.7)")
        x.style = style
        return Entry(
            f"STYLE {style.upper()} ({STYLES[style][0]})",
            {"decision": "style", "style": style, "by": "bank" if x.bank else "dealer"},
        )

    def _cut_entry(self, x: TilesRound, args: list[str]) -> Entry:
        """``CUT R a-b [L c-d]``: the bank cuts the tiles, once (§ 621a.9(g))."""
        if x.bank is None:
            raise EntryError("only a player bank may cut the tiles (§ 621a.9(g))")
        if x.cut is not None:
            raise EntryError("the tiles are cut one time only (§ 621a.9(g))")
        cut = x.cut = self._cut(args)
        return Entry(
            f"CUT: STACKS {' '.join(str(i + 1) for i in cut)}", {"decision": "cut", "order": [i + 1 for i in cut]}
        )

    @staticmethod
    def _cut(args: list[str]) -> tuple[int, ...]:
        """``R a-b`` / ``L a-b`` (stacks 1..8 from the dealer's right) moved to that end, § 621a.9(g)."""
        if len(args) not in (2, 4):
            raise EntryError("enter CUT R a-b, CUT L a-b or CUT R a-b L c-d (stacks 1..8 from the dealer's right)")
        ends: dict[str, tuple[int, int]] = {}
        for side, rng in zip(args[0::2], args[1::2]):
            end, stacks = _cut_end(side.upper(), rng, ends)
            ends[end] = stacks
        try:
            return cut_stacks(range(8), to_right=ends.get("R"), to_left=ends.get("L"))
        except ValueError as e:
            raise EntryError(str(e)) from None

    # ---- the shaker -------------------------------------------------------------------
    def shaker_activator(self, x: TilesRound, players: Sequence[int]) -> int:
        """§ 621a.9(i): the bank shakes; otherwise § 621a.6(a)(3) "instruct a player": the next
        player with a Pai Gow Wager counterclockwise after the last one (the dealer if none)."""
        bank = x.bank
        if bank:
            who = bank
        else:
            order = list(players)
            if not order:
                return 0
            last = self.shooter
            later = [s for s in order if last is not None and self._pos(s) > self._pos(last)]
            who = later[0] if later else order[0]
        x.shooter = who
        return who

    # ---- across rounds ----------------------------------------------------------------
    def round_ended(self, x: TilesRound, rnd: Round) -> None:
        """A round played (not void) moves the bank's rotation on (§ 621a.9(b)-(d))."""
        self.rounds_played += 1
        self.previous_bank = x.bank
        if x.bank is None:
            self.last_dealer_round = {s: c for (s, w), c in rnd.wagers.items() if w == "base"}
        if x.next_offer:
            self.first_offer = x.next_offer
        if x.shooter:
            self.shooter = x.shooter

    def carry(self) -> dict[str, Any]:
        """The bank's rotation (§ 621a.9(b)-(d)) and the last shooter survive a restart:
        a power loss is not a new game."""
        return {
            "rounds_played": self.rounds_played,
            "first_offer": self.first_offer,
            "previous_bank": self.previous_bank,
            "shooter": self.shooter,
            "last_dealer_round": sorted([s, c] for s, c in self.last_dealer_round.items()),
        }

    def restore(self, state: Mapping[str, Any]) -> None:
        def seat(v: Any) -> int | None:
            if v is None:
                return None
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= self.seats:
                raise ValueError(f"pai-gow-tiles carried state: {v!r} is not a seat of this table (1..{self.seats})")
            return v

        rounds, first = state["rounds_played"], seat(state["first_offer"])
        if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 0 or first is None:
            raise ValueError(f"pai-gow-tiles carried state is not valid: {dict(state)!r}")
        last = {seat(s): int(c) for s, c in state["last_dealer_round"]}
        previous, shooter = seat(state["previous_bank"]), seat(state["shooter"])
        # every value checked before any is taken: a state that does not fit changes nothing
        self.rounds_played, self.first_offer = rounds, first
        self.previous_bank, self.shooter = previous, shooter
        self.last_dealer_round = last  # type: ignore[assignment]
