"""Face Up Pai Gow Poker at the table (58 Pa. Code 688a).

The round: lock-out ("no more bets", § 688a.10(a)(2); the sensed Progressive
Payout Wagers frozen and counted, (a)(2)(ii)), the starting position from the
shaker or the RNG (§ 688a.5(i), § 688a.10(b)), seven stacks of seven from 53
cards clockwise from it, the dealer's face up (§ 688a.10(c)), four cards left
(§ 688a.10(d),(e)).  The dealer's seven cards are set by the house way of the
profile (§ 688a.11(a); § 688a.13(h): the table always sets them that way) and
shown on the keypad; the players then set their own hands or surrender
(§ 688a.11(b)-(d)); every wager settles through
:func:`controller.rules.faceup_settle.settle_round` (§ 688a.11(e)-(h),
§ 688a.12) — the dealer's Ace High Pai Gow pushes every Face Up Pai Gow Poker
Wager (§ 688a.11(f)(2)(iii)).

Wagers: the Face Up Pai Gow Poker Wager (``base``, § 688a.7(d)) and the Ace High
Bonus and Fortune Bonus Wagers (``ace-high``, ``fortune``, § 688a.7(e)(1),(2)) are
keyed by the dealer (``BET <seat> <wager> <amount>``) while wagers are open; the
Progressive Payout Wager (``progressive``, § 688a.7(e)(3)) is sensed, at the
paytable's fixed amount, and feeds the meter.  Every optional wager needs the
base wager (§ 688a.7(e)); none may be made after "no more bets" (§ 688a.7(c)).

Dealer keypad, in the ``setting_hands`` phase (after the dealer's hands are set
face up, § 688a.11(b)):

* ``SET <seat> <card> <card>`` — the two cards the player set as his low hand; the
  other five are the high hand (§ 688a.11(c); a foul setting loses,
  § 688a.11(f)(1)(iii)).  A player who sets nothing is set by the house way (the
  player asked the dealer how the house sets them, § 688a.11(b)(1)).
* ``SUR <seat>`` — the player surrenders (§ 688a.11(d)): only without an optional
  wager; the base wager is collected at settlement, the cards stay for the envy.
* ``VOID <seat>`` — the dealer exposed one of the player's cards and the player
  voids his hand (§ 688a.13(d)): every wager of the seat is returned.
* ``DONE`` — every hand is set; the round settles.

When the shoe cannot read the cards (or is out of order), the dealer keys the
hands (``<seat> <7 cards>``, ``DEALER <7 cards>``); a seat's cards are keyed as the
player set them — the five-card high hand, then the two-card low hand.

Profile (``config/tables/face-up.toml``), ``[game.options]``: ``ace_high_paytable``
and ``fortune_paytable`` (a paytable name offers the wager; absent = not offered),
``house_way`` (controller/rules/faceup_houseway.py), ``envy_receivers`` and
``bonus_reading`` (docs/rules-readings/688a.md 688a-8, 688a-7), ``adjacent_areas``
(§ 688a.7(f): ``SAME <seat> <seat>``), ``base_min_cents``, ``base_max_cents``,
``ace_high_max_cents``, ``fortune_max_cents``.  ``[progressive]`` (optional): a
"Face Up Progressive N" paytable; its wager, seed, increment rate and reserve rate
must be the paytable's (§ 688a.12(d)).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
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
from controller.rules.cards import CardError, card_str, cards_str, parse_cards
from controller.rules.faceup import Setting, make_setting
from controller.rules.faceup_bonus import BONUS_READINGS, ace_high_kind
from controller.rules.faceup_houseway import DEFAULT_HOUSE_WAY, HOUSE_WAYS, house_way
from controller.rules.faceup_settle import ENVY_RECEIVERS, FaceUpOptions, SeatWagers, settle_round
from controller.rules.paytables import get_paytable, parse_money
from controller.rules.settlement import WagerResult

if TYPE_CHECKING:
    from controller.games.round import Round
    from controller.settings.config import ProgressiveConfig, TableProfile

OPTIONS = (
    "ace_high_paytable",
    "fortune_paytable",
    "house_way",
    "envy_receivers",
    "bonus_reading",
    "adjacent_areas",
    "base_min_cents",
    "base_max_cents",
    "ace_high_max_cents",
    "fortune_max_cents",
)
OPTIONAL = ("ace-high", "fortune", "progressive")  # § 688a.7(e)(1)-(3)


def _percent(text: Any) -> Fraction:
    t = str(text).strip()
    if not t.endswith("%"):
        raise ValueError(f"{text!r} is not a percentage")
    return Fraction(t[:-1]) / 100


@dataclass(frozen=True)
class DealerShown:
    """The dealer's hands as set by the house way and shown on the keypad (§ 688a.11(a),(b))."""

    high: str
    low: str
    ace_high_pai_gow: bool


@dataclass
class FaceUpRound(GameRound):
    low: dict[int, tuple[int, int]] = field(default_factory=dict)  # seat -> the two low cards keyed
    surrender: list[int] = field(default_factory=list)  # § 688a.11(d)
    voided: list[int] = field(default_factory=list)  # § 688a.13(d)
    dealer: DealerShown | None = None


class FaceUp(Procedure):
    play: FaceUpRound
    game = "face-up"
    chapter = "58 Pa. Code 688a"
    deck = 53
    stack_size = 7  # § 688a.10(d): 7 cards to each of 7 positions, 4 left
    returned_reverses_meter = True  # § 688a.13(d): a voided hand's progressive wager is returned
    adjacent_section = "§ 688a.7(f)"
    phases = (
        Phase("starting_position", PhaseKind.START, "§ 688a.5(i), § 688a.10(b)"),
        Phase("dispensing", PhaseKind.DEAL, "§ 688a.10(c)", "main"),
        Phase("stub_check", PhaseKind.STUB, "§ 688a.10(d),(e)"),
        # after_entry: when the dealer keyed the cards (shoe not reading / out of order) the
        # players still set their hands, surrender or void on the hands as keyed
        Phase("setting_hands", PhaseKind.DECIDE, "§ 688a.11(a)-(d), § 688a.13(d)", "settings", after_entry=True),
        Phase("settlement", PhaseKind.SETTLE, "§ 688a.11(e)-(h), § 688a.12"),
    )

    def __init__(self, profile: TableProfile):
        super().__init__(profile)
        if profile.seats > 6:
            raise ValueError(
                f"{profile.file}"
                f": [game] seats = {profile.seats}: Face Up Pai Gow Poker has no more than six betting positions"
                " (§ 688a.2(a))"
            )
        opts = dict(profile.options)
        where = f"{profile.file}: [game.options]"
        bad = [k for k in opts if k not in OPTIONS]
        if bad:
            raise ValueError(f"{where} {bad[0]!r} is not an option of face-up ({', '.join(OPTIONS)})")

        hw, envy, reading = (_choice(opts, where, *c) for c in _CHOICES)
        adjacent = opts.get("adjacent_areas", False)
        if not isinstance(adjacent, bool):
            raise ValueError(f"{where} adjacent_areas = {adjacent!r}: true or false (§ 688a.7(f))")
        self.adjacent_areas = adjacent
        base_min, base_max = _cents(opts, where, "base_min_cents", 500), _cents(opts, where, "base_max_cents", 100_000)
        if base_min > base_max:
            raise ValueError(f"{where} base_min_cents = {base_min}: above base_max_cents ({base_max})")
        w: dict[str, WagerSpec] = {"base": WagerSpec("base", "§ 688a.7(d)", min_cents=base_min, max_cents=base_max)}
        tables: dict[str, str] = {}
        for wager, key, sec in (
            ("ace-high", "ace_high_paytable", "§ 688a.7(e)(1)"),
            ("fortune", "fortune_paytable", "§ 688a.7(e)(2)"),
        ):
            if key in opts:
                tables[wager], w[wager] = self._optional_wager(opts, where, wager, key, sec)
        prog = profile.progressive
        if prog is not None:
            pt = self._check_progressive(profile.file, prog)
            w["progressive"] = WagerSpec(
                "progressive",
                "§ 688a.7(e)(3)",
                sensed=True,
                fixed_cents=prog.wager_cents,
                progressive=True,
                needs="base",
            )
            tables["progressive"] = pt
        self.wagers = w
        self.house_way = hw
        # the paytables of the wagers offered (FaceUpOptions' own defaults for the others)
        kw: dict[str, Any] = {f"{wager.replace('-', '_')}_paytable": name for wager, name in tables.items()}
        self.options = FaceUpOptions(
            house_way=hw,
            envy_receivers=envy,
            bonus_reading=reading,
            fortune_offered="fortune" in tables,
            seat_order=tuple(self.settlement_order()),
            **kw,
        )

    def _optional_wager(
        self, opts: Mapping[str, Any], where: str, wager: str, key: str, sec: str
    ) -> tuple[str, WagerSpec]:
        """An optional wager the table offers: its paytable (``opts[key]``) and its limits."""
        name = str(opts[key])
        self._check_paytable(where, key, name, wager)
        max_cents = _cents(opts, where, f"{wager.replace('-', '_')}_max_cents", 10_000)
        return name, WagerSpec(wager, sec, needs="base", min_cents=100, max_cents=max_cents)

    @staticmethod
    def _check_paytable(where: str, key: str, name: str, wager: str) -> Any:
        try:
            pt = get_paytable(name)
        except ValueError:
            raise ValueError(f"{where} {key} = {name!r}: no such paytable in config/paytables") from None
        if pt.game != "face-up" or pt.wager != wager:
            raise ValueError(
                f"{where} {key} = {name!r} is a {pt.game} {pt.wager} paytable, not a face-up {wager} one (§ 688a.12)"
            )
        return pt

    def _check_progressive(self, file: str, prog: ProgressiveConfig) -> str:
        """§ 688a.12(d): the Progressive Payout Wager's amount, seed, rate of progression
        and reserve rate are those printed with the chosen paytable."""
        where = f"{file}: [progressive]"
        pt = self._check_paytable(where, "paytable", prog.paytable, "progressive")
        o = pt.options
        want: dict[str, tuple[int | Fraction, int | Fraction | None]] = {
            "wager": (prog.wager_cents, pt.per_wager_cents),
            "seed": (prog.seed_cents, parse_money(str(o["seed"])) if "seed" in o else None),
            "increment_rate": (
                prog.increment_rate,
                _percent(o["rate_of_progression"]) if "rate_of_progression" in o else None,
            ),
            "reserve_rate": (prog.reserve_rate, _percent(o.get("reserve_rate", "0%"))),
        }
        for key, (have, need) in want.items():
            if need is not None and have != need:
                raise ValueError(
                    f"{where} {key} = {_shown(have)}, but {prog.paytable} fixes {_shown(need)} (§ 688a.12(d))"
                )
        envy = pt.options.get("envy_paytable")
        if prog.envy_paytable is not None and prog.envy_paytable != envy:
            raise ValueError(
                f"{where} envy_paytable = {prog.envy_paytable!r}: {prog.paytable} has "
                f"{envy or 'no envy'} (§ 688a.12(d))"
            )
        return prog.paytable

    # ---- the players of a round --------------------------------------------------------
    @staticmethod
    def _players(rnd: Round) -> list[int]:
        return sorted({s for (s, w) in rnd.wagers if w == "base"})

    def _dealer_setting(self, dealer: Sequence[int]) -> Setting:
        return house_way(tuple(dealer), self.house_way)  # § 688a.11(a), § 688a.13(h)

    def new_play(self) -> FaceUpRound:
        return FaceUpRound()

    # ---- decisions: setting hands, surrender, a player's void ----------------------------
    def decision_state(self, rnd: Round, name: str) -> DecisionState:
        if not self._players(rnd):
            return DecisionState(done=True)
        dealer = self.hand_of(rnd, 0) or ()
        if len(dealer) == 7:
            s = self._dealer_setting(dealer)
            self.play.dealer = DealerShown(cards_str(s.high), cards_str(s.low), ace_high_kind(dealer) is not None)
        return DecisionState()

    def decision_prompt(self, rnd: Round, name: str) -> str:
        d = self.play.dealer
        shown = f"DEALER {d.high} / {d.low}{' ACE HIGH PAI GOW' if d.ace_high_pai_gow else ''}: " if d else ""
        same = ", SAME <seat> <seat>" if self.adjacent_areas else ""
        return f"{shown}SET <seat> <2 low cards>, SUR <seat>, VOID <seat>{same}, DONE"

    def apply_entry(self, rnd: Round, name: str, text: str) -> Entry:
        """One keypad entry of the ``setting_hands`` phase; raises :class:`EntryError`
        naming the problem and changing nothing when it is not valid."""
        verb, parts = entry_verb(text)
        if verb == "DONE" and len(parts) == 1:
            return Entry("HANDS SET - SETTLING", {"decision": "done"}, done=True)
        if verb == "SAME":  # § 688a.7(f): one player on two adjacent areas
            return self.same_player(rnd, parts)
        if (verb, len(parts)) not in (("SET", 4), ("SUR", 2), ("VOID", 2)):
            same = ", SAME <seat> <seat>" if self.adjacent_areas else ""
            raise EntryError(f"enter SET <seat> <card> <card>, SUR <seat>, VOID <seat>{same} or DONE")
        seat = seat_arg(parts[1], self._players(rnd))
        if seat in self.play.voided:
            raise EntryError(f"seat {seat} has voided the hand (§ 688a.13(d))")
        decisions: dict[str, Callable[[], Entry]] = {
            "SET": lambda: self._set(rnd, seat, parts[2:]),
            "SUR": lambda: self._surrender(rnd, seat),
            "VOID": lambda: self._void(seat),
        }
        return decisions[verb]()

    def _set(self, rnd: Round, seat: int, low_cards: Sequence[str]) -> Entry:
        if seat in self.play.surrender:
            raise EntryError(f"seat {seat} has surrendered (§ 688a.11(d))")
        hand = self.hand_of(rnd, seat) or ()
        pair = _low_pair(low_cards, hand, seat)
        setting = make_setting(hand, [c for c in hand if c not in pair], pair)
        self.play.low[seat] = (pair[0], pair[1])
        foul = " FOUL" if setting.foul else ""
        return Entry(
            f"SEAT {seat} {cards_str(setting.high)} / {cards_str(setting.low)}{foul}",
            {"seat": seat, "decision": "setting", "low": cards_str(pair), "foul": setting.foul},
            answer=(seat, "set"),
        )

    def _surrender(self, rnd: Round, seat: int) -> Entry:
        opt = [w for w in OPTIONAL if (seat, w) in rnd.wagers]
        if opt:
            raise EntryError(f"seat {seat} has a {opt[0]} wager and may not surrender (§ 688a.11(d))")
        if seat in self.play.surrender:
            raise EntryError(f"seat {seat} has already surrendered")
        self.play.surrender.append(seat)
        self.play.low.pop(seat, None)
        return Entry(f"SEAT {seat} SURRENDERS", {"seat": seat, "decision": "surrender"}, answer=(seat, "surrender"))

    def _void(self, seat: int) -> Entry:
        if seat in self.play.surrender:
            raise EntryError(f"seat {seat} has surrendered (§ 688a.11(d))")
        self.play.voided.append(seat)
        self.play.low.pop(seat, None)
        return Entry(
            f"SEAT {seat} HAND VOID - WAGERS RETURNED", {"seat": seat, "decision": "void"}, answer=(seat, "void")
        )

    # ---- settlement ---------------------------------------------------------------------
    def settle(self, rnd: Round) -> list[WagerResult]:
        players = self._players(rnd)
        hands = {s: tuple(rnd.cards[f"seat:{s}"]) for s in players}
        settings: dict[int, Any] = {}
        for s, (a, b) in self.play.low.items():
            settings[s] = ([c for c in hands[s] if c not in (a, b)], (a, b))
        return self._settle(rnd, hands, tuple(rnd.cards["dealer"]), settings)

    def settle_entered(self, rnd: Round) -> list[WagerResult]:
        """Settlement from the hands the dealer keyed (shoe out of order or not reading):
        each seat's seven cards as the player set them, high hand first (five), then the
        low hand (two) — unless the setting step that follows the entry (Phase.after_entry)
        recorded another setting (SET), a surrender or a void for the seat."""
        missing = self.hand_entry_complete(rnd)
        if missing:
            raise EntryError(missing)
        players = self._players(rnd)
        hands = {s: tuple(rnd.entered[s]) for s in players}
        settings: dict[int, Any] = {s: (h[:5], h[5:]) for s, h in hands.items()}
        for s, (a, b) in self.play.low.items():
            settings[s] = ([c for c in hands[s] if c not in (a, b)], (a, b))
        return self._settle(rnd, hands, tuple(rnd.entered[0]), settings)

    def hand_entry_complete(self, rnd: Round) -> str | None:
        missing = [str(s) for s in self._players(rnd) if s not in rnd.entered]
        if 0 not in rnd.entered:
            missing.append("dealer")
        return f"enter the hands of: {', '.join(missing)}" if missing else None

    def _settle(
        self, rnd: Round, hands: Mapping[int, tuple[int, ...]], dealer: tuple[int, ...], given: Mapping[int, Any]
    ) -> list[WagerResult]:
        ws = by_seat(rnd.wagers)
        voided = set(self.play.voided)
        surrendered = set(self.play.surrender)
        same = self.play.player
        out: list[WagerResult] = []
        for s in (s for s in self.settlement_order() if s in voided and s in ws):
            out += _voided(s, ws[s])
        seats = {
            s: SeatWagers(
                cards=hands[s],
                base=ws[s]["base"],
                ace_high=ws[s].get("ace-high", 0),
                fortune=ws[s].get("fortune", 0),
                progressive=ws[s].get("progressive", 0),
                surrender=s in surrendered,
                player=same.get(s),
            )
            for s in hands
            if s not in voided
        }
        settings = {s: given[s] if s in given else self._house(hands[s]) for s in seats if s not in surrendered}
        if seats:
            out += settle_round(dealer, seats, settings, self.options)
        return out

    def _house(self, cards: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        s = house_way(cards, self.house_way)  # § 688a.11(b)(1)
        return s.high, s.low

    def describe(self, rnd: Round) -> str:
        d = self.play.dealer
        return f"dealer {d.high} / {d.low}" if d else ""


def _low_pair(low_cards: Sequence[str], hand: Sequence[int], seat: int) -> tuple[int, ...]:
    """The two cards ``SET`` names for the low hand: cards of the seat's hand."""
    try:
        pair = parse_cards(" ".join(low_cards), count=2)
    except CardError as e:
        raise EntryError(str(e)) from None
    for c in pair:
        if c not in hand:
            raise EntryError(f"{card_str(c)} is not one of seat {seat}'s cards ({cards_str(hand)})")
    return pair


def _shown(v: int | Fraction) -> str:
    """A rate as a percentage, an amount (cents) in dollars."""
    return f"{float(v) * 100:g}%" if isinstance(v, Fraction) else f"${v / 100:,.2f}"


def _voided(s: int, wagers: Mapping[str, int]) -> list[WagerResult]:
    """§ 688a.13(d): a card exposed, the player voided the hand: every wager returned."""
    return [
        WagerResult(
            s, w, c, "returned", 0, "hand-voided", detail="§ 688a.13(d): a card exposed; the player voided the hand"
        )
        for w, c in sorted(wagers.items())
    ]


#: the [game.options] that choose a reading: (key, default, choices, where the choice is made)
_CHOICES = (
    ("house_way", DEFAULT_HOUSE_WAY, HOUSE_WAYS, "§ 688a.11(a)"),
    ("envy_receivers", "lammer", ENVY_RECEIVERS, "688a-8"),
    ("bonus_reading", "best-pay", BONUS_READINGS, "688a-7"),
)


def _choice(opts: Mapping[str, Any], where: str, key: str, default: str, choices: Collection[str], cite: str) -> str:
    """The option ``key``, one of ``choices``."""
    v = str(opts.get(key, default))
    if v not in choices:
        raise ValueError(f"{where} {key} = {v!r}: one of {', '.join(choices)} ({cite})")
    return v


def _cents(opts: Mapping[str, Any], where: str, key: str, default: int) -> int:
    """The option ``key``: a whole number of cents, at least 1."""
    v = opts.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ValueError(f"{where} {key} = {v!r}: a whole number of cents, at least 1")
    return v
