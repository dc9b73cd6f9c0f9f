"""Pai Gow (tiles) at the table (58 Pa. Code 621a).

The round after "no more bets" (the lock-out, § 621a.5(c), § 621a.6(a)):

1. ``bank_selection`` — when the profile offers a player bank (§ 621a.9(a)) and
   this is not the start of the game (§ 621a.9(b)), the dealer keys who accepted
   the bank as it was offered around the table (§ 621a.9(c)), after checking
   § 621a.9(d); the bank may co-bank (§ 621a.9(e)), direct the dealer's wager
   against it (§ 621a.9(h)), cut the stacks (§ 621a.9(g)) and choose the dealing
   style (§ 621a.9(i), § 621a.7; the dealer chooses it when nobody banks).  The bank's
   rotation from round to round and these entries: controller/games/tiles_rotation.py.
2. ``starting_position`` — the player-activated shaker (§ 621a.2(f), § 621a.6(a)(3)):
   armed for the bank's activation button (§ 621a.9(i)) or, when nobody banks, for
   the next player with a Pai Gow Wager counterclockwise; shaken at least 5 s; the
   count runs over the eight positions, Dead Hand included, from the dealer
   (§ 621a.6(c)) or from the bank (§ 621a.9(j)).
3. ``dice_wagers`` — Sum, Match and Beat It settled right after the roll (§ 621a.6(b)).
4. ``dealing_tiles`` — the automated shoe dispenses the eight stacks of four
   (§ 621a.4(d)), numbered from the dealer's right, the first tile of each the top
   one; the style (§ 621a.6(d), § 621a.7) and the cut say which position receives
   which tiles (controller/rules/tiles_deal.py).
5. ``counting_tiles`` — every one of the 32 tiles was dealt (§ 621a.6(d)).
6. ``setting_hands`` — players set a high and a low hand (§ 621a.8(a)); the dealer
   keys ``SET <seat> <tile> <tile>`` (the high hand) for a player who sets his own,
   the house way otherwise; ``SURRENDER <seat>`` (§ 621a.8(e)); ``VOID <seat>``
   when a player voids his hand after a tile of it was exposed (§ 621a.10(d));
   ``BANKSET <tile> <tile>``, the high hand the dealer or bank placed, reset to the
   house way when it is not (§ 621a.10(f)); ``DONE``.
7. ``settlement`` — the Pai Gow Wager against the dealer (§ 621a.8(f)-(i)) or the
   bank (§ 621a.9(n)-(r)), with the 5% vigorish rounded up to 25 cents
   (§ 621a.11(a)), then Pair Fortunes (§ 621a.8(j), § 621a.9(s)), through
   controller/rules/tiles_settle.py.

Card bytes from the shoe are tile ids ``0..31``; :data:`~controller.rules.tiles.FULL_SET`
maps an id to its kind (identical tiles have two ids).  Positions: the table's
position numbers (1 = the dealer, 2 = seat 6 at the dealer's far right, ...,
7 = seat 1, 8 = the Dead Hand) are controller/rules/tiles_deal.py's positions + 1.
Readings: docs/rules-readings/621a.md ("At the table").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from controller.core.records import PhaseKind
from controller.games.base import (
    DecisionState,
    Entry,
    EntryError,
    Phase,
    Procedure,
    Stack,
    WagerSpec,
    by_seat,
    entry_verb,
    seat_arg,
)
from controller.games.tiles_options import TilesOptions, parse_options
from controller.games.tiles_rotation import BankSet, Rotation, TilesRound, position, seat_at
from controller.rules.dice import Dice
from controller.rules.paytables import get_paytable
from controller.rules.settlement import WagerResult
from controller.rules.tiles import FULL_SET, Setting, TileError, parse_tiles, setting_of, tile_str
from controller.rules.tiles_deal import DEAD_HAND, DEALER, dealing_order, dealing_plan
from controller.rules.tiles_deal import starting_position as tiles_start
from controller.rules.tiles_dice import settle_beat_it, settle_match, settle_sum
from controller.rules.tiles_houseway import get_house_way
from controller.rules.tiles_settle import (
    CoBankSplitError,
    DealerWager,
    PlayerWager,
    settle_bank,
    settle_pai_gow,
    settle_pair_fortunes,
)

if TYPE_CHECKING:
    from controller.games.round import Round
    from controller.settings.config import TableProfile

UNREAD = 0xFF
MATCHES = tuple(f"match-{n}" for n in range(1, 7))  # six Match areas per seat, § 621a.2(b)(5)(ii)
DICE_WAGERS = ("sum",) + MATCHES + ("beat-it",)


def kinds(ids: Sequence[int]) -> tuple[int, ...]:
    """Tile kinds (controller/rules/tiles.py) of tile ids 0..31."""
    return tuple(FULL_SET[i] for i in ids)


class PaiGowTiles(Procedure):
    play: TilesRound
    game = "pai-gow-tiles"
    chapter = "58 Pa. Code 621a"
    deck = 32  # § 621a.3(h): 32 tiles
    stack_size = 4  # § 621a.4(d): eight stacks of four
    burn_limit = 0  # every tile is dealt: an exposed tile voids (§ 621a.10(e))
    player_activated_shaker = True  # § 621a.2(f), § 621a.6(a)(3): a player shakes (shaker_activator)
    phases = (
        Phase("bank_selection", PhaseKind.DECIDE, "§ 621a.9(b)-(i), § 621a.7", "bank"),
        Phase("starting_position", PhaseKind.START, "§ 621a.2(f), § 621a.6(a)(3),(c), § 621a.9(i),(j)"),
        Phase("dice_wagers", PhaseKind.DICE_WAGERS, "§ 621a.6(b), § 621a.11(c)-(e)"),
        Phase("dealing_tiles", PhaseKind.DEAL, "§ 621a.6(d), § 621a.7, § 621a.9(g),(k)", "main"),
        Phase("counting_tiles", PhaseKind.STUB, "§ 621a.6(d): all 32 tiles dealt"),
        # after_entry: when the dealer keyed the tiles (shoe not reading / out of order) the
        # players still set their hands, surrender or void, and the bank's hand is checked
        Phase("setting_hands", PhaseKind.DECIDE, "§ 621a.8(a)-(e), § 621a.10(d),(f)", "settings", after_entry=True),
        Phase("settlement", PhaseKind.SETTLE, "§ 621a.8(f)-(j), § 621a.9(n)-(s), § 621a.11"),
    )

    def __init__(self, profile: TableProfile):
        super().__init__(profile)
        if profile.seats != 6 or profile.positions != 8:
            raise ValueError(
                f"{profile.file}: Pai Gow tiles has six betting positions (§ 621a.2(a)) and counts eight "
                "positions, the dealer and the Dead Hand included (§ 621a.6(c)): seats = 6, positions = 8"
            )
        if profile.progressive is not None:
            raise ValueError(f"{profile.file}: chapter 621a has no progressive wager; remove [progressive]")
        self.opts: TilesOptions = parse_options(profile.file, dict(profile.options), start_method=profile.start_method)
        self.house_way = get_house_way(self.opts.house_way)
        o = self.opts
        w: dict[str, WagerSpec] = {
            "base": WagerSpec("base", "§ 621a.5(d)", min_cents=o.base_min_cents, max_cents=o.base_max_cents)
        }
        for option, section, names in _SIDE_WAGERS:
            if getattr(o, option):  # the option names the wager's paytable: the table offers it
                for m in names:
                    w[m] = WagerSpec(m, section, min_cents=o.side_min_cents, max_cents=o.side_max_cents, needs="base")
        self.wagers = w
        self.paytables = {
            "pair-fortunes": o.pair_fortunes,
            "sum": o.sum,
            "beat-it": o.beat_it,
            **{m: o.match for m in MATCHES},
        }
        # who banks and who shoots, round by round (controller/games/tiles_rotation.py)
        self.rotation = Rotation(o, self.seats)

    def needs_keypad(self) -> bool:
        return True

    def new_play(self) -> TilesRound:
        return TilesRound()

    # ---- positions (tiles_deal's: 1 = the dealer's far right = seat 6) ---------------------
    def recipient(self, pos: int) -> str:
        return "dealer" if pos == DEALER else "dead" if pos == DEAD_HAND else f"seat:{seat_at(self.seats, pos)}"

    def starting_position(self, rnd: Round, count: int) -> int:
        """§ 621a.6(c): counted from the dealer as one; § 621a.9(j): from the bank."""
        bank = self.play.bank
        return tiles_start(count, DEALER if bank is None else position(self.seats, bank)) + 1

    # ---- wagers -----------------------------------------------------------------------
    def keyed_wager(self, seat: int, wager: str, cents: int, *, late: bool = False) -> None:
        super().keyed_wager(seat, wager, cents, late=late)
        name = self.paytables.get(wager)
        if name and cents:
            pt = get_paytable(name)
            for hand in pt.hands:
                p = pt.payout(hand)
                if p is not None and p.net_win(cents).denominator != 1:
                    raise EntryError(
                        f"{wager} ${cents / 100:,.2f} would pay {p.text} in a fraction of a cent "
                        f"({pt.section}); wager a multiple of {p.net_win(1).denominator} cents"
                    )

    def _players(self, rnd: Round) -> list[int]:
        """Seats with a Pai Gow Wager, in the order hands are revealed (§ 621a.8(f))."""
        return [s for s in self.settlement_order() if (s, "base") in rnd.wagers]

    def decision_state(self, rnd: Round, name: str) -> DecisionState:
        if name == "bank":
            self.play.bank_opened(self.opts.dealing_style)
            if self.rotation.bank_offered(self._players(rnd)) or len(self.opts.styles) > 1:
                return DecisionState()
            return DecisionState(done=True)
        self.play.settings_opened()
        return DecisionState() if self._players(rnd) else DecisionState(done=True)

    def decision_prompt(self, rnd: Round, name: str) -> str:
        if name == "bank":
            return "BANK <seat> <chips>|COBANK|DEALER <amt>|STYLE <style>|CUT R a-b [L c-d]; DONE"
        return "SET <seat> <t> <t>|SURRENDER <seat>|VOID <seat>|BANKSET <t> <t>; DONE (house way otherwise)"

    def apply_entry(self, rnd: Round, name: str, text: str) -> Entry:
        verb, parts = entry_verb(text)
        args = parts[1:]
        if verb == "DONE" and not args:
            if name == "bank":
                self.rotation.bank_done(self.play, self._players(rnd))
            return Entry("DONE", {"decision": "done"}, done=True)
        if name == "bank":
            return self.rotation.entry(self.play, rnd, self._players(rnd), verb, args)
        return self._setting_entry(rnd, verb, args)

    # ---- setting the hands (§ 621a.8(a)-(e), § 621a.10(d),(f)) ---------------------------
    def _pick(self, hand: Sequence[int], text: Sequence[str]) -> tuple[int, int]:
        try:
            want = parse_tiles(list(text), count=2)
        except TileError as e:
            raise EntryError(str(e)) from None
        rest = list(kinds(hand))
        for k in want:
            if k not in rest:
                raise EntryError(f"{tile_str(k)} is not among the tiles {self.show_cards(hand)}")
            rest.remove(k)
        return want[0], want[1]

    def _setting_entry(self, rnd: Round, verb: str, args: list[str]) -> Entry:
        if verb in ("SET", "SURRENDER", "VOID") and args:
            entry = self._seat_entry(rnd, verb, args)
            if entry is not None:
                return entry
        if verb == "BANKSET" and len(args) == 2:  # § 621a.10(f)
            return self._bankset(rnd, args)
        raise EntryError("enter SET <seat> <tile> <tile>, SURRENDER <seat>, VOID <seat>, BANKSET <tile> <tile> or DONE")

    def _seat_entry(self, rnd: Round, verb: str, args: list[str]) -> Entry | None:
        x = self.play
        seat = seat_arg(args[0], self._players(rnd))
        if seat in x.voided or seat in x.surrendered:
            raise EntryError(f"seat {seat} has already {'voided' if seat in x.voided else 'surrendered'}")
        if verb == "SET" and len(args) == 3:
            return self._set_hand(rnd, seat, args[1:])
        if verb == "SURRENDER" and len(args) == 1:  # § 621a.8(e)
            x.surrendered.append(seat)
            return Entry(f"SEAT {seat} SURRENDERS", {"seat": seat, "decision": "surrender"}, answer=(seat, "surrender"))
        if verb == "VOID" and len(args) == 1:  # § 621a.10(d)
            x.voided.append(seat)
            return Entry(
                f"SEAT {seat} VOIDS THE HAND - WAGERS RETURNED",
                {"seat": seat, "decision": "void"},
                answer=(seat, "void"),
            )
        return None

    def _set_hand(self, rnd: Round, seat: int, tiles: list[str]) -> Entry:
        """``SET <seat> <tile> <tile>``: the player's high hand (the other two tiles the low)."""
        hand = self.hand_of(rnd, seat) or ()
        high = self._pick(hand, tiles)
        s = setting_of(kinds(hand), high)
        self.play.settings[seat] = high
        return Entry(
            f"SEAT {seat} {s}"[:120],
            {"seat": seat, "decision": "setting", "high": s.high.label, "low": s.low.label},
        )

    def _bankset(self, rnd: Round, args: list[str]) -> Entry:
        who, hand = self._banker(rnd)
        placed = setting_of(kinds(hand), self._pick(hand, args))
        house = self.house_way(kinds(hand))
        reset = (placed.high.score, placed.low.score) != (house.high.score, house.low.score)
        self.play.bankset = BankSet(str(placed), reset)
        reply = f"{who.upper()} {'RESET TO HOUSE WAY: ' if reset else 'SET '}{house}"
        return Entry(
            reply[:120],
            {"decision": "bank-setting", "who": who, "placed": str(placed), "house_way": str(house), "reset": reset},
        )

    def _banker(self, rnd: Round, hands: Mapping[int, Sequence[int]] | None = None) -> tuple[str, tuple[int, ...]]:
        bank = self.play.bank
        if hands is not None:
            return ("bank", tuple(hands[bank])) if bank else ("dealer", tuple(hands[0]))
        return ("bank", tuple(self.hand_of(rnd, bank) or ())) if bank else ("dealer", tuple(self.hand_of(rnd, 0) or ()))

    # ---- the shaker, the dice wagers -----------------------------------------------------
    def shaker_activator(self, rnd: Round) -> int:
        """§ 621a.9(i), § 621a.6(a)(3): who activates the shaker (:meth:`Rotation.shaker_activator`)."""
        return self.rotation.shaker_activator(self.play, self._players(rnd))

    def after_roll(self, rnd: Round) -> list[WagerResult]:
        """§ 621a.6(b): Sum, Match and Beat It, in the order hands are settled."""
        out: list[WagerResult] = []
        dice = Dice(tuple(rnd.dice), red=rnd.red) if rnd.dice else None  # type: ignore[arg-type]
        for seat in self.settlement_order():
            for w in DICE_WAGERS:
                amount = rnd.wagers.get((seat, w))
                if amount:
                    out.append(self._dice_result(seat, w, amount, dice))
        return out

    def _dice_result(self, seat: int, w: str, amount: int, dice: Dice | None) -> WagerResult:
        """One Sum, Match or Beat It wager (§ 621a.6(b)); returned when no dice were rolled."""
        if dice is None:  # no roll (RNG start, the shaker out of order): nothing to settle on
            return WagerResult(seat, w, amount, "returned", 0, hand="no-dice", detail="no dice rolled (§ 621a.2(b)(5))")
        if w == "sum":
            return settle_sum(seat, amount, dice, self.opts.sum or "")
        if w == "beat-it":
            return settle_beat_it(seat, amount, dice, self.opts.beat_it or "")
        return settle_match(seat, amount, dice, int(w[6:]), self.opts.match or "")

    # ---- the shoe as the tile dealer ---------------------------------------------------
    def deck_card_limit(self) -> int:
        return self.deck

    def show_cards(self, cards: Sequence[int]) -> str:
        return " ".join("??" if c == UNREAD else tile_str(FULL_SET[c]) if 0 <= c < 32 else f"#{c}" for c in cards)

    def plan(self, rnd: Round, name: str) -> list[Stack]:
        """The eight stacks of four (§ 621a.4(d)), from the dealer's right; :meth:`dealt` delivers them."""
        return [Stack(f"stack:{k}", self.stack_size) for k in range(1, 9)]

    def dealt(self, rnd: Round, name: str) -> dict[str, tuple[int, ...]]:
        """§ 621a.6(d), § 621a.7, § 621a.9(g),(k): each position's four tiles, by the style and the cut."""
        order = self.play.cut or tuple(range(8))
        stacks = [rnd.stacks[i] for i in order]
        plan = dealing_plan(self.play.style or self.opts.dealing_style)
        return {
            self.recipient(pos): tuple(stacks[s][lv] for s, lv in places)
            for pos, places in zip(dealing_order(rnd.start_position - 1), plan)
        }

    # ---- hand entry (shoe out of order or not reading, § 670a.13(n) practice) ---------------
    def hand_entry_seats(self, rnd: Round) -> set[int]:
        bank = self.play.bank
        return set(self._players(rnd)) | ({bank} if bank else set())

    def parse_hand(self, rnd: Round, seat: int, text: str) -> tuple[int, ...]:
        try:
            ks = parse_tiles(text, count=4)
        except TileError as e:
            raise EntryError(str(e)) from None
        used = {c for s, cs in rnd.entered.items() if s != seat for c in cs}
        out: list[int] = []
        for k in ks:
            out.append(_free_tile(k, used, out))
        return tuple(out)

    def _needs_dealer(self, rnd: Round) -> bool:
        return self.play.bank is None or self.play.dealer_wager > 0

    def hand_entry_complete(self, rnd: Round) -> str | None:
        missing = [str(s) for s in sorted(self.hand_entry_seats(rnd)) if s not in rnd.entered]
        if self._needs_dealer(rnd) and 0 not in rnd.entered:
            missing.append("dealer")
        return f"enter the tiles of: {', '.join(missing)}" if missing else None

    # ---- settlement -------------------------------------------------------------------
    def settle(self, rnd: Round) -> list[WagerResult]:
        return self._settle(
            rnd, {**{s: rnd.cards[f"seat:{s}"] for s in self.hand_entry_seats(rnd)}, 0: rnd.cards["dealer"]}
        )

    def settle_entered(self, rnd: Round) -> list[WagerResult]:
        missing = self.hand_entry_complete(rnd)
        if missing:
            raise EntryError(missing)
        return self._settle(rnd, rnd.entered)

    def _setting(self, rnd: Round, seat: int, hand: Sequence[int]) -> Setting:
        high = self.play.settings.get(seat)
        return self.house_way(kinds(hand)) if high is None else setting_of(kinds(hand), high)

    def _settle(self, rnd: Round, hands: Mapping[int, Sequence[int]]) -> list[WagerResult]:
        x = self.play
        ws = by_seat(rnd.wagers)
        voided, surrendered = set(x.voided), set(x.surrendered)
        players = self._players(rnd)
        settings = {
            s: (None if s in surrendered else self._setting(rnd, s, hands[s])) for s in players if s not in voided
        }
        dealer = self.house_way(kinds(hands[0])) if self._needs_dealer(rnd) else None
        if x.bank is None:
            assert dealer is not None
            # § 621a.8(g)-(i), § 621a.11(a)
            base = {s: settle_pai_gow(s, ws[s]["base"], st, dealer) for s, st in settings.items()}
            tail: list[WagerResult] = []
        else:
            base, tail = self._against_bank(x.bank, hands, ws, settings, dealer)
        out: list[WagerResult] = []
        for s in players:
            out += _voided(s, ws[s]) if s in voided else self._seat_results(s, base[s], ws[s], hands[s])
        return out + tail

    def _seat_results(
        self, s: int, base: WagerResult, wagers: Mapping[str, int], hand: Sequence[int]
    ) -> list[WagerResult]:
        """A seat's Pai Gow Wager, then its Pair Fortunes wager (§ 621a.8(j), § 621a.9(s))."""
        if "pair-fortunes" not in wagers:
            return [base]
        return [base, settle_pair_fortunes(s, wagers["pair-fortunes"], kinds(hand), self.opts.pair_fortunes or "")]

    def _against_bank(
        self,
        bank: int,
        hands: Mapping[int, Sequence[int]],
        ws: Mapping[int, Mapping[str, int]],
        settings: Mapping[int, Setting | None],
        dealer: Setting | None,
    ) -> tuple[dict[int, WagerResult], list[WagerResult]]:
        """The Pai Gow Wagers against a player bank (§ 621a.9(n)-(r)): each player's result,
        and the bank's (and the dealer's wager against it) after them."""
        x = self.play
        banker = self.house_way(kinds(hands[bank]))  # § 621a.9(e), § 621a.10(f)
        try:
            bs = settle_bank(
                bank,
                banker,
                [PlayerWager(s, ws[s]["base"], st) for s, st in settings.items()],
                # the dealer's hands are entered only for a wager against the bank (``_needs_dealer``)
                dealer=None if dealer is None else DealerWager(x.dealer_wager, dealer),
                cobank=x.cobank,
            )
        except CoBankSplitError as e:  # cannot happen: COBANK refuses odd wagers
            raise EntryError(str(e)) from None
        house = f"; house: dealer {bs.dealer_net:+d}, share {bs.house_share:+d}, vigorish {bs.commission}"
        if bs.dealer is not None:
            house += f"; dealer's wager {bs.dealer.amount} vs the bank: {bs.dealer.outcome}"
        base = {r.seat: r for r in bs.results if r.wager == "base"}
        tail = [
            WagerResult(
                r.seat,
                r.wager,
                r.amount,
                r.outcome,
                r.net,
                r.hand,
                r.paytable,
                r.pays,
                commission=r.commission,
                detail=r.detail + house,
            )
            for r in bs.results
            if r.wager != "base"
        ]
        return base, tail

    def round_ended(self, rnd: Round, void: bool) -> None:
        """A round played (not void) moves the bank's rotation on (§ 621a.9(b)-(d))."""
        if not void:
            self.rotation.round_ended(self.play, rnd)

    def carry(self) -> dict[str, Any]:
        """The bank's rotation and the last shooter survive a restart (:meth:`Rotation.carry`)."""
        return self.rotation.carry()

    def restore(self, state: Mapping[str, Any]) -> None:
        self.rotation.restore(state)

    def describe(self, rnd: Round) -> str:
        x = self.play
        bank = f"bank s{x.bank}{' co' if x.cobank else ''}" if x.bank else "dealer banks"
        return f"{bank}, style {x.style or self.opts.dealing_style}"


#: the side wagers, in the order offered: (the option naming its paytable, its section, its wagers)
_SIDE_WAGERS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("pair_fortunes", "§ 621a.5(e)(1)", ("pair-fortunes",)),
    ("sum", "§ 621a.5(e)(2)", ("sum",)),
    ("match", "§ 621a.5(e)(3)", MATCHES),
    ("beat_it", "§ 621a.5(e)(4)", ("beat-it",)),
)


def _free_tile(k: int, used: set[int], taken: list[int]) -> int:
    """The first tile of the set of kind ``k`` not entered for another seat (``used``) nor this one."""
    free = [i for i, kk in enumerate(FULL_SET) if kk == k and i not in used and i not in taken]
    if not free:
        raise EntryError(f"every {tile_str(k)} tile is already entered for another seat")
    return free[0]


def _voided(s: int, wagers: Mapping[str, int]) -> list[WagerResult]:
    """A player who voided the hand (§ 621a.10(d)): the Pai Gow and Pair Fortunes wagers returned."""
    return [
        WagerResult(s, w, c, "returned", 0, hand="void", detail="player voided the hand (§ 621a.10(d))")
        for w, c in wagers.items()
        if w in ("base", "pair-fortunes")
    ]
