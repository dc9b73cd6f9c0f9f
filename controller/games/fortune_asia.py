"""Fortune Asia Poker at the table (58 Pa. Code 659a).

The round: lock-out ("no more bets", § 659a.7(c), § 659a.10(a)); the starting
position from the shaker or the RNG, counted from the dealer as one
counterclockwise over the 7 positions (§ 659a.5(g), § 659a.10(b)); 7 stacks of 7
from the 53-card deck clockwise from it (§ 659a.10(b),(c)); 4 cards left
(§ 659a.10(c),(d)); the players set their 4-card high, 2-card medium and 1-card
low hands (§ 659a.11(a),(b)); the dealer's cards are turned over and set by the
house way (§ 659a.11(c)) and a player with no optional wager may surrender
before his hands are exposed (§ 659a.11(d)); then every wager settles in the
chapter's order (§ 659a.11(e),(f),(h),(i), § 659a.12) through
controller/rules/fortune_asia.py (``settle_round``).

Wagers: the Fortune Asia Poker Wager (``base``, keyed, § 659a.7(d)); the optional
Fortune Bonus (``fortune``, keyed, § 659a.7(e)(1), Paytables A-D with the Envy
Bonus) and Insurance (``insurance``, keyed, § 659a.7(e)(2), Paytables A-C); and the
Progressive Payout Wager (``progressive``, on its sensor, feeding the meter,
§ 659a.7(e)(3), § 659a.2(d)).  Every optional wager needs the base wager
(§ 659a.7(e): offered "to each player who placed a Fortune Asia Poker Wager").

Dealer keypad:

* ``setting_hands`` (§ 659a.11(a),(b)): ``SET <seat> <medium> <medium> <low>`` -- the
  player's two medium cards and his low card; the other four are the high hand.
  A seat the dealer keys no setting for is set by the house way (the player asked
  how the house sets its hands, § 659a.11(a)(1)).  A setting that fouls is taken
  as the player set it, and loses (§ 659a.11(f)(1)(iii)-(v)).  Once set the hands
  may not be changed (§ 659a.11(a)(3)).  ``SAME <seat> <seat>``: one player on two
  adjacent betting areas (§ 659a.7(f), only if the profile allows it) -- he gets
  no Envy Bonus for his own other hand.  ``DONE``.
* ``surrender`` (§ 659a.11(c),(d)): the keypad shows the dealer's hands as set;
  ``SUR <seat>`` for a player without an optional wager; ``DONE``.  The phase is
  skipped when no player may surrender.
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
from controller.rules.fortune_asia import (
    GAME,
    HOUSE_WAYS,
    MIN_PROGRESSIVE_RESET,
    FortuneAsiaRules,
    SeatPlay,
    make_setting,
    set_house_way,
    settle_round,
)
from controller.rules.paytables import all_paytables, get_paytable, parse_money
from controller.rules.settlement import WagerResult
from controller.settings.config import ConfigError

if TYPE_CHECKING:
    from controller.games.round import Round
    from controller.settings.config import ProgressiveConfig, TableProfile

OPTIONAL = ("fortune", "insurance", "progressive")
#: [game.options] keys and what they mean (anything else is a configuration error)
OPTIONS = {
    "house_way": "the dealer's house way (§ 659a.11(c)); one of the registered names",
    "fortune_paytable": "Fortune Bonus paytable, 'Fortune Asia Fortune A'..'D' (§ 659a.12(b)); absent: not offered",
    "insurance_paytable": "Insurance paytable, 'Fortune Asia Insurance A'..'C' (§ 659a.12(c)); absent: not offered",
    "adjacent_areas": "true if a player may wager on two adjacent betting areas (§ 659a.7(f))",
    "base_min_cents": "table minimum of the Fortune Asia Poker Wager",
    "base_max_cents": "table maximum of the Fortune Asia Poker Wager",
    "fortune_max_cents": "maximum Fortune Bonus Wager",
    "insurance_max_cents": "maximum Insurance Wager",
}


def _check_options(profile: TableProfile, opts: Mapping[str, Any]) -> tuple[str, bool]:
    """The options known, the seats and positions; the house way and whether adjacent areas are played."""
    file = profile.file
    unknown = sorted(set(opts) - set(OPTIONS))
    if unknown:
        raise ConfigError(
            file, "game.options", unknown[0], f"not a Fortune Asia Poker option (options: {', '.join(OPTIONS)})"
        )
    if profile.seats > 6:
        raise ConfigError(file, "game", "seats", "no more than six players (§ 659a.2(a))")
    if profile.positions != profile.seats + 1:
        raise ConfigError(
            file,
            "game",
            "positions",
            f"must be seats + 1 = {profile.seats + 1}: every betting position and the dealer "
            "are counted for the start (§ 659a.5(g)(1)(iii))",
        )
    house_way = opts.get("house_way", "tablectl-standard")
    if not isinstance(house_way, str) or house_way not in HOUSE_WAYS:
        raise ConfigError(
            file,
            "game.options",
            "house_way",
            f"no house way {house_way!r} (registered: {', '.join(sorted(HOUSE_WAYS))})",
        )
    adjacent = opts.get("adjacent_areas", False)
    if not isinstance(adjacent, bool):
        raise ConfigError(file, "game.options", "adjacent_areas", f"must be true or false, got {adjacent!r}")
    return house_way, adjacent


def _progressive(profile: TableProfile) -> ProgressiveConfig:
    """The [progressive] section: required, a Fortune Asia progressive paytable, a seed at or
    above the minimum reset (§ 659a.12(d))."""
    file = profile.file
    prog = profile.progressive
    if prog is None:
        raise ConfigError(
            file, "progressive", None, "fortune-asia at the table needs a [progressive] section (§ 659a.2(d))"
        )
    pt = get_paytable(prog.paytable)
    if pt.game != GAME or pt.wager != "progressive":
        raise ConfigError(
            file,
            "progressive",
            "paytable",
            f"{prog.paytable!r} is not a Fortune Asia Poker progressive paytable (§ 659a.12(d)(1))",
        )
    floor = parse_money(str(pt.options["min_reset"])) if "min_reset" in pt.options else MIN_PROGRESSIVE_RESET
    floor = max(floor, MIN_PROGRESSIVE_RESET)
    if prog.seed_cents < floor:
        raise ConfigError(
            file,
            "progressive",
            "seed",
            f"the initial and reset amount ${prog.seed_cents / 100:,.2f} is below the "
            f"${floor / 100:,.2f} minimum (§ 659a.12(d)(2))",
        )
    return prog


def _side_paytables(file: str, opts: Mapping[str, Any]) -> dict[str, str]:
    """The Fortune Bonus and Insurance paytables named, each one of the game's."""
    out: dict[str, str] = {}
    tables = all_paytables()
    for k, wager, section in (
        ("fortune_paytable", "fortune", "§ 659a.12(b)"),
        ("insurance_paytable", "insurance", "§ 659a.12(c)"),
    ):
        if k not in opts:
            continue
        names = sorted(n for n, t in tables.items() if t.game == GAME and t.wager == wager)
        if opts[k] not in names:
            raise ConfigError(
                file,
                "game.options",
                k,
                f"{opts[k]!r} is not a Fortune Asia Poker {wager} paytable ({section}: "
                f"{', '.join(repr(n) for n in names)})",
            )
        out[k] = str(opts[k])
    return out


def _wagers(
    file: str, opts: Mapping[str, Any], rules: FortuneAsiaRules, progressive_cents: int
) -> dict[str, WagerSpec]:
    base_min, base_max = (
        _int_option(opts, "base_min_cents", 500, file),
        _int_option(opts, "base_max_cents", 100_000, file),
    )
    if base_min > base_max:
        raise ConfigError(file, "game.options", "base_min_cents", f"{base_min} is above base_max_cents ({base_max})")
    w: dict[str, WagerSpec] = {"base": WagerSpec("base", "§ 659a.7(d)", min_cents=base_min, max_cents=base_max)}
    if rules.fortune_paytable:
        w["fortune"] = WagerSpec(
            "fortune",
            "§ 659a.7(e)(1)",
            needs="base",
            min_cents=100,
            max_cents=_int_option(opts, "fortune_max_cents", 10_000, file),
        )
    if rules.insurance_paytable:
        w["insurance"] = WagerSpec(
            "insurance",
            "§ 659a.7(e)(2)",
            needs="base",
            min_cents=100,
            max_cents=_int_option(opts, "insurance_max_cents", 10_000, file),
        )
    w["progressive"] = WagerSpec(
        "progressive", "§ 659a.7(e)(3)", sensed=True, fixed_cents=progressive_cents, progressive=True, needs="base"
    )
    return w


def _int_option(opts: Mapping[str, Any], key: str, default: int, file: str) -> int:
    v = opts.get(key, default)
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise ConfigError(file, "game.options", key, f"must be a whole number of cents >= 1, got {v!r}")
    return v


@dataclass(frozen=True)
class KeyedSetting:
    """A player's hands as the dealer keyed them (§ 659a.11(a),(b))."""

    high: tuple[int, ...]
    medium: tuple[int, int]
    low: tuple[int]

    @property
    def cards(self) -> set[int]:
        return {*self.high, *self.medium, *self.low}


@dataclass
class FortuneAsiaRound(GameRound):
    settings: dict[int, KeyedSetting] = field(default_factory=dict)  # seat -> keyed hands
    surrender: list[int] = field(default_factory=list)  # seats that surrendered (§ 659a.11(d))
    dealer_setting: str | None = None  # the dealer's hands as shown at the surrender step


class FortuneAsia(Procedure):
    play: FortuneAsiaRound
    game = GAME
    adjacent_section = "§ 659a.7(f)"
    chapter = "58 Pa. Code 659a"
    deck = 53  # § 659a.3(a): one deck of 52 cards and a joker
    stack_size = 7  # § 659a.10(c): 7 cards to each of 7 positions, 4 left
    phases = (
        Phase("starting_position", PhaseKind.START, "§ 659a.5(g), § 659a.10(b)"),
        Phase("dispensing", PhaseKind.DEAL, "§ 659a.10(b),(c)", "main"),
        Phase("stub_check", PhaseKind.STUB, "§ 659a.10(c)-(e)"),
        # after_entry: when the dealer keyed the cards (shoe not reading / out of order) the
        # players still set their hands and may surrender
        Phase("setting_hands", PhaseKind.DECIDE, "§ 659a.11(a),(b), § 659a.7(f)", "settings", after_entry=True),
        Phase("dealer_sets_surrender", PhaseKind.DECIDE, "§ 659a.11(c),(d)", "surrender"),
        Phase("settlement", PhaseKind.SETTLE, "§ 659a.11(e),(f),(h),(i), § 659a.12"),
    )

    def __init__(self, profile: TableProfile):
        super().__init__(profile)
        file = profile.file
        opts = dict(profile.options)
        house_way, self.adjacent_areas = _check_options(profile, opts)
        prog = _progressive(profile)
        rules_opts = {
            "house_way": house_way,
            "progressive_paytable": prog.paytable,
            "progressive_reset": f"${prog.seed_cents / 100:.2f}",
        }
        rules_opts.update(_side_paytables(file, opts))
        self.rules = FortuneAsiaRules.from_options(rules_opts)
        self.wagers = _wagers(file, opts, self.rules, prog.wager_cents)

    def new_play(self) -> FortuneAsiaRound:
        return FortuneAsiaRound()

    # ---- who plays ------------------------------------------------------------------
    @staticmethod
    def players(rnd: Round) -> list[int]:
        """Seats with a Fortune Asia Poker Wager (§ 659a.7(d))."""
        return sorted(s for (s, w) in rnd.wagers if w == "base")

    @staticmethod
    def may_surrender(rnd: Round) -> list[int]:
        """Players with no optional wager (§ 659a.11(d))."""
        return [s for s in FortuneAsia.players(rnd) if not any((s, w) in rnd.wagers for w in OPTIONAL)]

    @staticmethod
    def seven(rnd: Round, seat: int) -> tuple[int, ...]:
        """A seat's seven cards (seat 0: the dealer's), as read by the shoe or as keyed
        by the dealer when the shoe did not read them."""
        if rnd.entered:
            return tuple(rnd.entered.get(seat, ()))
        return tuple(rnd.cards.get("dealer" if seat == 0 else f"seat:{seat}", ()))

    def dealer_setting(self, rnd: Round) -> Any:
        """The dealer's hands set by the house way (§ 659a.11(c))."""
        cards = self.seven(rnd, 0)
        if len(cards) != 7 or any(c > 52 for c in cards):
            return None
        return set_house_way(cards, self.rules.house_way)

    # ---- decisions ------------------------------------------------------------------
    def decision_state(self, rnd: Round, name: str) -> DecisionState:
        if not self.players(rnd):
            return DecisionState(done=True)
        if name == "surrender":
            if not self.may_surrender(rnd):
                return DecisionState(done=True)  # nobody may surrender: the phase is skipped
            self.play.dealer_setting = str(self.dealer_setting(rnd))
            return DecisionState()
        return DecisionState()

    def decision_prompt(self, rnd: Round, name: str) -> str:
        if name == "surrender":
            d = self.dealer_setting(rnd)
            shown = (
                f"DEALER {cards_str(d.high.cards)} | {cards_str(d.medium.cards)} | {cards_str(d.low.cards)}"
                if d is not None
                else "DEALER SET"
            )
            seats = ",".join(map(str, self.may_surrender(rnd)))
            return f"{shown} - SURRENDER: 'SUR <seat>' (seats {seats}); DONE"
        same = ", 'SAME <seat> <seat>'" if self.adjacent_areas else ""
        return f"SET HANDS: 'SET <seat> <medium> <medium> <low>'{same}; DONE (house way otherwise)"

    def apply_entry(self, rnd: Round, name: str, text: str) -> Entry:
        verb, parts = entry_verb(text)
        if verb == "DONE" and len(parts) == 1:
            reply = "HANDS SET - DEALER SETS" if name == "settings" else "SETTLING"
            return Entry(reply, {"decision": "done"}, done=True)
        if name == "settings":
            return self._setting_entry(rnd, verb, parts)
        if verb == "SUR" and len(parts) == 2:
            return self._surrender(rnd, seat_arg(parts[1], self.players(rnd)))
        raise EntryError("enter SUR <seat> or DONE")

    def _setting_entry(self, rnd: Round, verb: str, parts: Sequence[str]) -> Entry:
        """A line of the players' settings: ``SET``, ``SAME`` (adjacent areas); no surrender yet."""
        if verb == "SET" and len(parts) == 5:
            return self._set(rnd, parts)
        if verb == "SAME" and len(parts) == 3:
            return self._same(rnd, parts)
        if verb == "SUR":
            raise EntryError("a player surrenders after the dealer's hands are set (§ 659a.11(d))")
        raise EntryError(
            f"enter SET <seat> <medium> <medium> <low>{', SAME <seat> <seat>' if self.adjacent_areas else ''} or DONE"
        )

    def _surrender(self, rnd: Round, seat: int) -> Entry:
        """``SUR <seat>``: a player without an optional wager surrenders (§ 659a.11(d))."""
        if seat not in self.may_surrender(rnd):
            raise EntryError(f"seat {seat} placed an optional wager and may not surrender (§ 659a.11(d))")
        if seat in self.play.surrender:
            raise EntryError(f"seat {seat} has already surrendered")
        self.play.surrender.append(seat)
        cents = rnd.wagers[(seat, "base")]
        return Entry(
            f"SEAT {seat} SURRENDERS {cents / 100:,.2f}",
            {"seat": seat, "decision": "surrender"},
            answer=(seat, "surrender"),
        )

    def _set(self, rnd: Round, parts: Sequence[str]) -> Entry:
        seat = seat_arg(parts[1], self.players(rnd))
        if seat in self.play.settings:
            raise EntryError(f"seat {seat}'s hands are already set and may not be changed (§ 659a.11(a)(3))")
        hand = self.seven(rnd, seat)
        m1, m2, low = _named_cards(parts[2:5], hand, seat)
        high = tuple(c for c in hand if c not in (m1, m2, low))
        setting = make_setting(high, (m1, m2), (low,), seven=hand)
        foul = setting.foul()
        self.play.settings[seat] = KeyedSetting(high, (m1, m2), (low,))
        reply = f"SEAT {seat} {cards_str(high)} | {card_str(m1)} {card_str(m2)} | {card_str(low)}"
        if foul:
            reply += " - FOUL, LOSES"
        rec = {
            "seat": seat,
            "decision": "setting",
            "high": cards_str(high),
            "medium": cards_str((m1, m2)),
            "low": card_str(low),
        }
        if foul:
            rec["foul"] = foul
        return Entry(reply, rec, answer=(seat, "set"))

    def _same(self, rnd: Round, parts: Sequence[str]) -> Entry:
        return self.same_player(rnd, parts)  # § 659a.7(f), Procedure.same_player

    # ---- settlement -----------------------------------------------------------------
    def settle(self, rnd: Round) -> list[WagerResult]:
        return self._settle(
            rnd, {s: tuple(rnd.cards[f"seat:{s}"]) for s in self.players(rnd)}, tuple(rnd.cards["dealer"])
        )

    def settle_entered(self, rnd: Round) -> list[WagerResult]:
        """Settlement from the seven cards the dealer keyed for every player and the
        dealer (the shoe did not read them or is out of order), after the setting and
        surrender steps were played on those cards."""
        missing = self.hand_entry_complete(rnd)
        if missing:
            raise EntryError(missing)
        return self._settle(rnd, {s: tuple(rnd.entered[s]) for s in self.players(rnd)}, tuple(rnd.entered[0]))

    def hand_entry_complete(self, rnd: Round) -> str | None:
        missing = [str(s) for s in self.players(rnd) if s not in rnd.entered]
        if 0 not in rnd.entered:
            missing.append("dealer")
        return f"enter the seven cards of: {', '.join(missing)}" if missing else None

    def _settle(self, rnd: Round, hands: Mapping[int, tuple[int, ...]], dealer: tuple[int, ...]) -> list[WagerResult]:
        ws = by_seat(rnd.wagers)
        keyed = self.play.settings
        surrendered = set(self.play.surrender)
        players = self.play.player
        seats = []
        for s, cards in hands.items():
            if s in surrendered:
                setting = None  # § 659a.11(d): collected unexposed
            elif s in keyed and keyed[s].cards == set(cards):
                k = keyed[s]
                setting = make_setting(k.high, k.medium, k.low, seven=cards)
            else:
                setting = set_house_way(cards, self.rules.house_way)  # § 659a.11(a)(1)
            seats.append(
                SeatPlay(
                    seat=s,
                    cards=cards,
                    base=ws[s]["base"],
                    setting=setting,
                    surrender=s in surrendered,
                    fortune=ws[s].get("fortune", 0),
                    insurance=ws[s].get("insurance", 0),
                    progressive=ws[s].get("progressive", 0),
                    player=players.get(s),
                )
            )
        return settle_round(seats, dealer, self.rules, order=[s for s in self.settlement_order() if s in hands])

    def describe(self, rnd: Round) -> str:
        """The dealer's hands as set by the house way, and the seats that set their own."""
        d = self.dealer_setting(rnd)
        if d is None:
            return ""
        own = sorted(self.play.settings)
        keyed = f"; set by players: {','.join(map(str, own))}" if own else ""
        return f"dealer {cards_str(d.high.cards)} / {cards_str(d.medium.cards)} / {cards_str(d.low.cards)}{keyed}"


def _named_cards(tokens: Sequence[str], hand: Sequence[int], seat: int) -> tuple[int, int, int]:
    """The three cards a ``SET`` names (two medium, one low): distinct cards of the seat's hand."""
    try:
        m1, m2, low = (parse_card(t) for t in tokens)
    except CardError as e:
        raise EntryError(str(e)) from None
    for c in (m1, m2, low):
        if c not in hand:
            raise EntryError(f"{card_str(c)} is not one of seat {seat}'s cards ({cards_str(hand)})")
    if len({m1, m2, low}) != 3:
        raise EntryError(f"a card is named twice: {cards_str((m1, m2, low))}")
    return m1, m2, low
