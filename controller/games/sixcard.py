"""Six-Card Fortune Pai Gow Poker at the table (58 Pa. Code 670a).

The round: lock-out ("no more bets", § 670a.10(a)(2)), the starting position
from the shaker or the RNG (§ 670a.5(i), § 670a.10(b)), 7 stacks of 6 from 53
cards clockwise from it (§ 670a.10(c)), 11 cards left (§ 670a.10(d)), the players
set their hands and may double down (§ 670a.11(a)-(c)), then everything settles
(§ 670a.11(d)-(h), § 670a.12) through controller/rules/sixcard_settle.py.

Two ways to run the table, chosen by the profile's ``[game.options] keyed``:

* a **progressive system** only (``keyed = []``, the default): the Progressive
  Payout Wagers on their sensors are the only wagers the table knows; it settles
  them and their envy bonuses (§ 670a.11(h)(3));
* a **full table** (``keyed = ["base", "double-down", "fortune", "insurance"]``):
  the dealer also keys the Six-Card Fortune Pai Gow Poker Wager and the optional
  wagers, and every wager of the round settles here.  A player who does not set
  his hands through the dealer is set by the house way (§ 670a.11(a)(1): the
  player asked how the house sets them).

Dealer keypad, in the ``setting_hands`` phase: ``DD <seat>`` (Double Down equal to
the wager, § 670a.11(c)), ``SET <seat> <low card>`` (the player's low hand; the other
five are the high hand), ``VOID <seat>`` (the dealer exposed one of the player's cards
and the player, without looking at the others, voids the hand, § 670a.13(d): every
wager of the seat is returned, its progressive contribution taken back, and the hand
takes no part in the round — no Envy Bonus from it), ``DONE``.

A progressive system alone (``keyed = []``) has no keypad and takes no decisions: a
player's void of the hand is then the casino's table game's, outside the controller.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from controller.core.records import PhaseKind
from controller.games.base import (
    DecisionState,
    Entry,
    EntryError,
    GameRound,
    Phase,
    Procedure,
    WagerSpec,
    by_seat,
    entry_verb,
    seat_arg,
)
from controller.rules.cards import CardError, card_str, cards_str, parse_card
from controller.rules.settlement import WagerResult
from controller.rules.sixcard import hand_key, house_way, six_card_rank
from controller.rules.sixcard_settle import SeatWagers, SixCardOptions, settle_progressive, settle_round
from controller.settings.config import ConfigError

if TYPE_CHECKING:
    from controller.games.round import Round
    from controller.settings.config import TableProfile

#: the hand of a seat whose cards the dealer did not enter as a winning hand (keypad entry)
NOT_ENTERED = "no-winning-hand-entered"
KEYABLE = ("base", "double-down", "fortune", "insurance")


#: ``[game.options]`` of a six-card-fortune profile (anything else is a configuration error)
OPTIONS = (
    "keyed",
    "base_min_cents",
    "base_max_cents",
    "fortune_max_cents",
    "insurance_max_cents",
    "adjacent_areas",  # § 670a.7(f): SAME <seat> <seat>
)


def _cents(file: str, opts: Mapping[str, Any], key: str, default: int, lowest: int = 1) -> int:
    v = opts.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or not lowest <= v <= 100_000_000:
        raise ConfigError(file, "game.options", key, f"must be a whole number of cents, {lowest} or more, got {v!r}")
    return v


@dataclass
class SixCardRound(GameRound):
    """The players' low cards as keyed (``SET <seat> <low card>``): seat -> card; the
    seats whose player voided the hand (``VOID <seat>``, § 670a.13(d))."""

    low: dict[int, int] = field(default_factory=dict)
    voided: list[int] = field(default_factory=list)


def _keyed(profile: TableProfile, opts: Mapping[str, Any]) -> tuple[str, ...]:
    """The options known; the wagers the dealer keys (the others are sensed)."""
    f = profile.file
    unknown = sorted(k for k in opts if k not in OPTIONS)
    if unknown:
        raise ConfigError(f, "game.options", unknown[0], f"not a six-card-fortune option ({', '.join(OPTIONS)})")
    return _keyed_wagers(f, opts.get("keyed", []))


def _keyed_wagers(f: str, keyed_raw: Any) -> tuple[str, ...]:
    """``keyed``: a list of the wagers a dealer may key."""
    if not isinstance(keyed_raw, list) or not all(isinstance(k, str) for k in keyed_raw):
        raise ConfigError(f, "game.options", "keyed", f"must be a list of wager ids, got {keyed_raw!r}")
    keyed = tuple(keyed_raw)
    bad = [k for k in keyed if k not in KEYABLE]
    if bad:
        raise ValueError(f"{f}: [game.options] keyed: {bad[0]!r} is not one of {', '.join(KEYABLE)}")
    return keyed


def _check_entered(players: list[int], entered: Mapping[int, Any]) -> None:
    """Every player's hand and the dealer's keyed (an EntryError names those missing)."""
    missing = [s for s in players if s not in entered]
    if missing or 0 not in entered:
        raise EntryError(
            f"hands not entered: {', '.join(map(str, missing)) or ''} {'dealer' if 0 not in entered else ''}".strip()
        )


def _wagers(f: str, opts: Mapping[str, Any], keyed: tuple[str, ...], progressive_cents: int) -> dict[str, WagerSpec]:
    """The Progressive Payout Wager (sensed), and the wagers keyed with their limits."""
    w: dict[str, WagerSpec] = {
        "progressive": WagerSpec(
            "progressive",
            "§ 670a.7(e)(4)",
            sensed=True,
            fixed_cents=progressive_cents,
            progressive=True,
            needs="base" if "base" in keyed else None,
        ),
    }
    base_min, base_max = _cents(f, opts, "base_min_cents", 500), _cents(f, opts, "base_max_cents", 100_000)
    if base_min > base_max:
        raise ConfigError(f, "game.options", "base_min_cents", f"{base_min} is above base_max_cents ({base_max})")
    if "base" in keyed:
        w["base"] = WagerSpec("base", "§ 670a.7(d)", min_cents=base_min, max_cents=base_max)
    if "double-down" in keyed:
        w["double-down"] = WagerSpec(
            "double-down", "§ 670a.7(e)(1)", needs="base", late=True, min_cents=1, max_cents=100_000
        )
    for k, sec in (("fortune", "§ 670a.7(e)(2)"), ("insurance", "§ 670a.7(e)(3)")):
        top = _cents(f, opts, f"{k}_max_cents", 10_000, lowest=100)
        if k in keyed:
            w[k] = WagerSpec(k, sec, needs="base", min_cents=100, max_cents=top)
    return w


class SixCardFortune(Procedure):
    play: SixCardRound
    game = "six-card-fortune"
    chapter = "58 Pa. Code 670a"
    deck = 53
    stack_size = 6  # § 670a.10(d): 6 cards to each of 7 positions, 11 left
    returned_reverses_meter = True  # § 670a.13(d): a voided hand's progressive wager is returned
    adjacent_section = "§ 670a.7(f)"
    phases = (
        Phase("starting_position", PhaseKind.START, "§ 670a.5(i), § 670a.10(b)"),
        Phase("dispensing", PhaseKind.DEAL, "§ 670a.10(c)", "main"),
        Phase("stub_check", PhaseKind.STUB, "§ 670a.10(d),(e)"),
        Phase("setting_hands", PhaseKind.DECIDE, "§ 670a.11(a)-(c), § 670a.13(d)", "settings"),
        Phase("settlement", PhaseKind.SETTLE, "§ 670a.11(d)-(h), § 670a.12"),
    )

    def __init__(self, profile: TableProfile):
        super().__init__(profile)
        if profile.seats > 6:
            raise ValueError(
                f"{profile.file}: [game] seats = {profile.seats}: Six-Card Fortune Pai Gow Poker has no more than"
                " six betting positions (§ 670a.2(a))"
            )
        prog = profile.progressive
        if prog is None:
            raise ValueError(f"{profile.file}: six-card-fortune at the table needs a [progressive] section")
        opts = dict(profile.options)
        f = profile.file
        keyed = _keyed(profile, opts)
        self.full = "base" in keyed
        adjacent = opts.get("adjacent_areas", False)
        if not isinstance(adjacent, bool):
            raise ValueError(f"{profile.file}: [game.options] adjacent_areas: true or false, got {adjacent!r}")
        self.adjacent_areas = adjacent
        w = _wagers(f, opts, keyed, prog.wager_cents)
        self.wagers = w
        envy = (prog.envy_paytable,) if prog.envy_paytable else ()
        self.options = SixCardOptions(
            progressive_paytable=prog.paytable,
            progressive_envy_paytables=envy,
            progressive_wager_cents=prog.wager_cents,
            seat_order=tuple(self.settlement_order()),
        )

    def needs_keypad(self) -> bool:
        return self.full  # a progressive system alone needs no keyed entries

    def new_play(self) -> SixCardRound:
        return SixCardRound()

    # ---- decisions: setting hands, Double Down (§ 670a.11(a)-(c)) -----------------------------
    def decision_state(self, rnd: Round, name: str) -> DecisionState:
        if not self.full or not any(w == "base" for (_s, w) in rnd.wagers):
            return DecisionState(done=True)
        return DecisionState()

    def decision_prompt(self, rnd: Round, name: str) -> str:
        same = ", 'SAME <seat> <seat>'" if self.adjacent_areas else ""
        return f"SET HANDS: 'DD <seat>', 'SET <seat> <low card>', 'VOID <seat>'{same}; DONE (house way otherwise)"

    def apply_entry(self, rnd: Round, name: str, text: str) -> Entry:
        verb, parts = entry_verb(text)
        players = sorted(s for (s, w) in rnd.wagers if w == "base")
        if verb == "DONE" and len(parts) == 1:
            return Entry("HANDS SET - SETTLING", {"decision": "done"}, done=True)
        if verb == "SAME":  # § 670a.7(f): one player on two adjacent areas
            return self.same_player(rnd, parts)
        if (verb, len(parts)) not in (("DD", 2), ("SET", 3), ("VOID", 2)):
            same = ", SAME <seat> <seat>" if self.adjacent_areas else ""
            raise EntryError(f"enter DD <seat>, SET <seat> <low card>, VOID <seat>{same} or DONE")
        seat = seat_arg(parts[1], players)
        if seat in self.play.voided:
            raise EntryError(f"seat {seat} has voided the hand (§ 670a.13(d))")
        if verb == "DD":
            return self._double_down(rnd, seat)
        if verb == "SET":
            return self._set_low(rnd, seat, parts[2])
        return self._void(seat)

    def _void(self, seat: int) -> Entry:
        """``VOID <seat>``: a card of the player's exposed by the dealer, the player voids
        the hand (§ 670a.13(d)); its setting, if keyed, no longer counts."""
        self.play.voided.append(seat)
        self.play.low.pop(seat, None)
        return Entry(
            f"SEAT {seat} HAND VOID - WAGERS RETURNED", {"seat": seat, "decision": "void"}, answer=(seat, "void")
        )

    def _double_down(self, rnd: Round, seat: int) -> Entry:
        """``DD <seat>``: a Double Down Wager equal to the wager (§ 670a.11(c), § 670a.7(e)(1))."""
        if (seat, "double-down") in rnd.wagers:
            raise EntryError(f"seat {seat} has already doubled down")
        if "double-down" not in self.wagers:
            raise EntryError("this table does not offer the Double Down Wager (§ 670a.7(e)(1))")
        amount = rnd.wagers[(seat, "base")]  # equal to the wager, § 670a.7(e)(1)
        return Entry(
            f"SEAT {seat} DOUBLE DOWN {amount / 100:,.2f}",
            {"seat": seat, "decision": "double-down"},
            late={(seat, "double-down"): amount},
            answer=(seat, "double-down"),
        )

    def _set_low(self, rnd: Round, seat: int, text: str) -> Entry:
        """``SET <seat> <low card>``: the player's low hand; the other five are the high hand."""
        try:
            low = parse_card(text)
        except CardError as e:
            raise EntryError(str(e)) from None
        hand = rnd.cards.get(f"seat:{seat}", ())
        if low not in hand:
            raise EntryError(f"{card_str(low)} is not one of seat {seat}'s cards ({cards_str(hand)})")
        self.play.low[seat] = low
        return Entry(f"SEAT {seat} LOW {card_str(low)}", {"seat": seat, "decision": "setting", "low": card_str(low)})

    # ---- settlement -------------------------------------------------------------------
    def _keys(self, hands: Mapping[int, Sequence[int] | None]) -> dict[int, str]:
        return {s: (hand_key(six_card_rank(c)) if c is not None else NOT_ENTERED) for s, c in hands.items()}

    def settle_progressive(
        self,
        hands: Mapping[int, Sequence[int] | None],
        wagers: Mapping[int, int],
        players: Mapping[int, str] | None = None,
    ) -> list[WagerResult]:
        """The Progressive Payout Wagers alone (§ 670a.11(h)(3)) in settlement order, then
        the envy bonuses ((h)(3)(ii)); ``hands`` are the seats in play (possible holders of
        an Envy Bonus Qualifying Hand).  A seat whose cards are None (the dealer entered no
        winning hand for it) has no straight or better and loses (§ 670a.11(h)(3)(i)(A))."""
        return settle_progressive(self._keys(hands), wagers, self.options, self.settlement_order(), players)

    def settle(self, rnd: Round) -> list[WagerResult]:
        if not self.full:
            hands = {s: rnd.cards[f"seat:{s}"] for s in rnd.accepted}
            return self.settle_progressive(hands, rnd.accepted, self.play.player)
        return self._settle_full(rnd, {s: rnd.cards[f"seat:{s}"] for s in self._players(rnd)}, rnd.cards["dealer"])

    def settle_entered(self, rnd: Round) -> list[WagerResult]:
        """Settlement from the hands the dealer keyed (shoe out of order or not reading)."""
        if not self.full:
            hands = {s: rnd.entered.get(s) for s in rnd.accepted}
            return self.settle_progressive(hands, rnd.accepted, self.play.player)
        _check_entered(self._players(rnd), rnd.entered)
        return self._settle_full(rnd, {s: rnd.entered[s] for s in self._players(rnd)}, rnd.entered[0])

    def _players(self, rnd: Round) -> list[int]:
        return sorted({s for (s, w) in rnd.wagers if w == "base"})

    def _settle_full(self, rnd: Round, hands: Mapping[int, Sequence[int]], dealer: Sequence[int]) -> list[WagerResult]:
        ws = by_seat(rnd.wagers)
        voided = set(self.play.voided)
        out = [r for s in self.settlement_order() if s in voided and s in ws for r in _voided(s, ws[s])]
        hands = {s: c for s, c in hands.items() if s not in voided}
        same = self.play.player
        seats = {
            s: SeatWagers(
                cards=tuple(hands[s]),
                player=same.get(s),
                base=ws[s]["base"],
                double_down=ws[s].get("double-down", 0),
                fortune=ws[s].get("fortune", 0),
                insurance=ws[s].get("insurance", 0),
                progressive=ws[s].get("progressive", 0),
            )
            for s in hands
        }
        settings: dict[int, Any] = {}
        for s, cards in hands.items():
            low = self.play.low.get(s)
            if low is None:
                settings[s] = house_way(cards)  # § 670a.11(a)(1)
            else:
                settings[s] = (tuple(c for c in cards if c != low), low)
        if seats:
            out += settle_round(tuple(dealer), seats, settings, self.options)
        return out

    def hand_entry_complete(self, rnd: Round) -> str | None:
        if not self.full:
            return None
        missing = [str(s) for s in self._players(rnd) if s not in rnd.entered]
        if 0 not in rnd.entered:
            missing.append("dealer")
        return f"enter the hands of: {', '.join(missing)}" if missing else None


def _voided(s: int, wagers: Mapping[str, int]) -> list[WagerResult]:
    """§ 670a.13(d): a card exposed, the player voided the hand: every wager of the seat returned."""
    return [
        WagerResult(
            s, w, c, "returned", 0, "hand-voided", detail="§ 670a.13(d): a card exposed; the player voided the hand"
        )
        for w, c in sorted(wagers.items())
    ]
