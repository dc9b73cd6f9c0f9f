"""Fortune Asia Poker (58 Pa. Code chapter 659a): rules and settlement.

Pure: no I/O, no hardware imports.  Money is integer cents.

The pieces (re-exported here):

* ``fortune_asia_hands``   -- the 4-card high, 2-card medium and 1-card low hands,
  their rankings (§ 659a.6(a)-(c)), setting and fouls (§ 659a.11(b), (f)(1)(iii)-(v)),
  and the Fortune Asia Poker Wager against the dealer (§ 659a.11(f)).
* ``fortune_asia_seven``   -- the seven-card hands of the Fortune Bonus (§ 659a.6(d)),
  the Progressive (§ 659a.6(e)) and the Insurance (§ 659a.7(e)(2)).
* ``fortune_asia_houseway`` -- the pluggable dealer house way (§ 659a.11(c)).

This module settles a round (:func:`settle_round`) in the chapter's order:
for each player, from the dealer's right counterclockwise (§ 659a.11(e)), the
Fortune Asia Poker Wager (or its surrender, § 659a.11(d)), then that player's
optional wagers -- Fortune Bonus, Insurance, Progressive (§ 659a.11(h), (i));
then, after all Fortune Bonus Wagers, the Envy Bonuses (§ 659a.11(h)(1)(ii)).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from controller.rules.cards import cards_str
from controller.rules.fortune_asia_hands import (
    FortuneAsiaError,
    HandCat,
    Setting,
    SubHand,
    base_outcome,
    compare,
    hand_results,
    high_hand,
    low_hand,
    make_setting,
    medium_hand,
    settings_of,
)
from controller.rules.fortune_asia_houseway import (
    DEFAULT_HOUSE_WAY,
    HOUSE_WAYS,
    get_house_way,
    register_house_way,
    set_house_way,
)
from controller.rules.fortune_asia_seven import (
    ENVY_HANDS,
    FORTUNE_ORDER,
    PROGRESSIVE_ORDER,
    SevenFacts,
    fortune_hand,
    insurance_hand,
    is_envy_qualifying,
    progressive_hand,
    seven_facts,
)
from controller.rules.paytables import Paytable, get_paytable, parse_money
from controller.rules.settlement import Stake, WagerResult, paytable_result

__all__ = [
    "FortuneAsiaError",
    "HandCat",
    "Setting",
    "SubHand",
    "base_outcome",
    "compare",
    "hand_results",
    "high_hand",
    "medium_hand",
    "low_hand",
    "make_setting",
    "settings_of",
    "DEFAULT_HOUSE_WAY",
    "HOUSE_WAYS",
    "get_house_way",
    "register_house_way",
    "set_house_way",
    "ENVY_HANDS",
    "FORTUNE_ORDER",
    "PROGRESSIVE_ORDER",
    "SevenFacts",
    "seven_facts",
    "fortune_hand",
    "insurance_hand",
    "progressive_hand",
    "is_envy_qualifying",
    "QUALIFYING_WAGER",
    "MIN_PROGRESSIVE_RESET",
    "FortuneAsiaRules",
    "SeatPlay",
    "settle_round",
    "void_round",
]

GAME = "fortune-asia"
#: § 659a.1 "Qualifying Wager -- A Fortune Bonus Wager of at least $5"
QUALIFYING_WAGER = 500
#: § 659a.12(d)(2): the initial and reset amount "be at least $2,000"
MIN_PROGRESSIVE_RESET = 200_000
BASE_PAYTABLE = "Fortune Asia Base"


@dataclass(frozen=True)
class FortuneAsiaRules:
    """The table's Rules Submission choices (from the table profile).

    ``None`` for an optional wager's paytable means the wager is not offered
    (§ 659a.7(e): "If specified in its Rules Submission")."""

    house_way: str = DEFAULT_HOUSE_WAY
    fortune_paytable: str | None = None
    insurance_paytable: str | None = None
    progressive_paytable: str | None = None
    progressive_reset: int = MIN_PROGRESSIVE_RESET

    def __post_init__(self) -> None:
        get_house_way(self.house_way)
        for name, wager in (
            (self.fortune_paytable, "fortune"),
            (self.insurance_paytable, "insurance"),
            (self.progressive_paytable, "progressive"),
        ):
            if name is not None:
                pt = get_paytable(name)
                if pt.game != GAME or pt.wager != wager:
                    raise FortuneAsiaError(f"paytable {name!r} is not a Fortune Asia Poker {wager} paytable")
        if self.progressive_paytable and self.progressive_reset < MIN_PROGRESSIVE_RESET:
            raise FortuneAsiaError(
                f"progressive reset ${self.progressive_reset / 100:,.2f} is below the $2,000 minimum (§ 659a.12(d)(2))"
            )

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> FortuneAsiaRules:
        """From table-profile strings: ``house_way``, ``fortune_paytable``,
        ``insurance_paytable``, ``progressive_paytable``, ``progressive_reset`` ("$2,000")."""
        known = {"house_way", "fortune_paytable", "insurance_paytable", "progressive_paytable", "progressive_reset"}
        unknown = set(options) - known
        if unknown:
            raise FortuneAsiaError(f"unknown Fortune Asia Poker option(s): {', '.join(sorted(unknown))}")
        reset = options.get("progressive_reset")
        return cls(
            house_way=options.get("house_way", DEFAULT_HOUSE_WAY),
            fortune_paytable=options.get("fortune_paytable"),
            insurance_paytable=options.get("insurance_paytable"),
            progressive_paytable=options.get("progressive_paytable"),
            progressive_reset=parse_money(reset) if reset else MIN_PROGRESSIVE_RESET,
        )

    def envy_paytable(self) -> Paytable:
        assert self.fortune_paytable
        return get_paytable(str(get_paytable(self.fortune_paytable).options["envy_paytable"]))


@dataclass(frozen=True)
class SeatPlay:
    """One betting position's wagers and cards for a round.

    ``setting`` is how the player set his hands; None only when he surrendered.
    ``player`` identifies the person (default: the seat) so that a player on two
    adjacent betting areas (§ 659a.7(f)) gets no Envy Bonus for his other hand.
    """

    seat: int
    cards: tuple[int, ...]
    base: int
    setting: Setting | None = None
    surrender: bool = False
    fortune: int = 0
    insurance: int = 0
    progressive: int = 0
    player: str | None = None
    facts: SevenFacts = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "facts", seven_facts(self.cards))
        for name in ("base", "fortune", "insurance", "progressive"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise FortuneAsiaError(f"seat {self.seat}: {name} wager must be whole cents >= 0, got {v!r}")
        if self.base <= 0:
            raise FortuneAsiaError(
                f"seat {self.seat}: a Fortune Asia Poker Wager is required to play (§ 659a.7(d), (e))"
            )
        self._check_decision()

    def _check_decision(self) -> None:
        """Surrendered (only without optional wagers, § 659a.11(d)), or hands set from the cards
        dealt (§ 659a.11(b))."""
        if self.surrender:
            if self.fortune or self.insurance or self.progressive:
                raise FortuneAsiaError(
                    f"seat {self.seat}: a player who placed an optional wager may not surrender (§ 659a.11(d))"
                )
        elif self.setting is None:
            raise FortuneAsiaError(f"seat {self.seat}: the player's hands are not set (§ 659a.11(b))")
        if self.setting is not None and set(self.setting.cards) != set(self.cards):
            raise FortuneAsiaError(
                f"seat {self.seat}: the set hands {cards_str(self.setting.cards)} are not the cards dealt "
                f"{cards_str(self.cards)}"
            )

    @property
    def who(self) -> str:
        return self.player if self.player is not None else f"seat {self.seat}"


def _pay(seat: int, wager: str, amount: int, hand: str | None, pt: Paytable, rule: str) -> WagerResult:
    """A paytable wager: ``hand`` None (or not in the table) loses.  A meter pay is made
    from the progressive, not the table inventory (§ 659a.11(h)(3)(ii)(D)); the wager, collected
    at the lock-out, is not returned on top of the meter share."""
    return paytable_result(
        Stake(seat, wager, amount),
        hand,
        pt,
        pt.payout(hand) if hand else None,
        rule,
        meter_note="meter share is the whole pay",
    )


def _offered(amount: int, paytable: str | None, seat: int, what: str, section: str) -> str | None:
    if amount and paytable is None:
        raise FortuneAsiaError(f"seat {seat}: the {what} is not offered at this table ({section})")
    return paytable if amount else None


def settle_round(
    seats: Sequence[SeatPlay], dealer_cards: Sequence[int], rules: FortuneAsiaRules, order: Sequence[int] | None = None
) -> list[WagerResult]:
    """Settle every wager of a round, in settlement order.

    ``order`` is the seat numbers from the dealer's right counterclockwise
    (§ 659a.11(e)); by default descending seat numbers (seat 1 at the dealer's
    far left).  The dealer's hands are set by ``rules.house_way`` (§ 659a.11(c)).
    """
    by_seat = {s.seat: s for s in seats}
    seq = _checked_round(seats, by_seat, dealer_cards, order)
    dealer = set_house_way(dealer_cards, rules.house_way)
    base_pt = get_paytable(BASE_PAYTABLE)

    out: list[WagerResult] = []
    for n in seq:
        s = by_seat[n]
        out.append(_base_result(n, s, dealer, base_pt))
        out += _optional_results(n, s, rules)
    # Envy Bonuses, after all Fortune Bonus Wagers (§ 659a.11(h)(1)(ii))
    qualifiers = [by_seat[n] for n in seq if by_seat[n].fortune >= QUALIFYING_WAGER]
    if qualifiers:
        holders = [(by_seat[n], fortune_hand(by_seat[n].facts)) for n in seq if is_envy_qualifying(by_seat[n].facts)]
        out += _envy_results(qualifiers, holders, rules.envy_paytable())
    return out


def _checked_round(
    seats: Sequence[SeatPlay], by_seat: Mapping[int, SeatPlay], dealer_cards: Sequence[int], order: Sequence[int] | None
) -> list[int]:
    """The settlement order, once the seats (each once), the cards (one deck) and ``order`` are checked."""
    if len(by_seat) != len(seats):
        raise FortuneAsiaError("a seat is listed twice")
    seven_facts(dealer_cards)  # validates the dealer's seven cards
    all_cards = [c for s in seats for c in s.cards] + list(dealer_cards)
    if len(set(all_cards)) != len(all_cards):
        raise FortuneAsiaError("a card was dealt twice in the round (one deck, § 659a.3(a))")
    seq = list(order) if order is not None else sorted(by_seat, reverse=True)
    if sorted(seq) != sorted(by_seat):
        raise FortuneAsiaError(f"settlement order {seq} does not list exactly the seats {sorted(by_seat)}")
    return seq


def _base_result(n: int, s: SeatPlay, dealer: Setting, base_pt: Paytable) -> WagerResult:
    """The Fortune Asia Poker Wager (§ 659a.11(d)-(f), § 659a.12(a))."""
    if s.surrender:
        return WagerResult(
            n,
            "base",
            s.base,
            "surrender",
            -s.base,
            None,
            base_pt.name,
            None,
            detail="surrendered before exposure: the wager is collected (§ 659a.11(d))",
        )
    assert s.setting is not None
    outcome, detail = base_outcome(s.setting, dealer)
    detail += f"; dealer {dealer}"
    if outcome == "win":
        return WagerResult(
            n, "base", s.base, "win", s.base, None, base_pt.name, "1 to 1", detail=f"§ 659a.11(f)(2): {detail}"
        )
    return WagerResult(
        n, "base", s.base, "lose", -s.base, None, base_pt.name, None, detail=f"§ 659a.11(f)(1): {detail}"
    )


def _optional_results(n: int, s: SeatPlay, rules: FortuneAsiaRules) -> list[WagerResult]:
    """The player's optional wagers (§ 659a.11(h), (i))."""
    out = []
    f_pt = _offered(s.fortune, rules.fortune_paytable, n, "Fortune Bonus Wager", "§ 659a.7(e)(1)")
    if f_pt:
        pt = get_paytable(f_pt)
        q = str(pt.options.get("qualifier", "straight"))
        out.append(_pay(n, "fortune", s.fortune, fortune_hand(s.facts, q), pt, "§ 659a.11(h)(1)(i)"))
    i_pt = _offered(s.insurance, rules.insurance_paytable, n, "Insurance Wager", "§ 659a.7(e)(2)")
    if i_pt:
        out.append(_pay(n, "insurance", s.insurance, insurance_hand(s.facts), get_paytable(i_pt), "§ 659a.11(h)(2)"))
    p_pt = _offered(s.progressive, rules.progressive_paytable, n, "Progressive Payout Wager", "§ 659a.7(e)(3)")
    if p_pt:
        out.append(
            _pay(n, "progressive", s.progressive, progressive_hand(s.facts), get_paytable(p_pt), "§ 659a.11(h)(3)")
        )
    return out


def _envy_results(
    qualifiers: Sequence[SeatPlay], holders: Sequence[tuple[SeatPlay, str | None]], envy_pt: Paytable
) -> list[WagerResult]:
    """§ 659a.11(h)(1)(ii): each qualifying wager's Envy Bonus for every other player's hand."""
    out = []
    for qualifier in qualifiers:
        for h, hand in holders:
            if h.who == qualifier.who:
                continue  # "not entitled to an Envy Bonus for his own hand"
            payout = envy_pt.payout(hand) if hand else None
            assert payout is not None and payout.kind == "fixed"
            out.append(
                WagerResult(
                    qualifier.seat,
                    "fortune-envy",
                    0,
                    "win",
                    payout.cents,
                    hand,
                    envy_pt.name,
                    payout.text,
                    detail=f"Envy Bonus for seat {h.seat}'s {hand} (§ 659a.11(h)(1)(ii))",
                )
            )
    return out


def void_round(wagers: Mapping[int, Mapping[str, int]]) -> list[WagerResult]:
    """A misdeal or a wrong count of cards left: "all hands shall be void and all wagers
    shall be returned to the players" (§ 659a.8(e), § 659a.9(d)); the table's void of a misdeal goes
    through controller/play/wagering.py.
    ``wagers`` maps seat -> {"base": cents, "fortune": ..., "insurance": ..., "progressive": ...}."""
    out = []
    for seat in sorted(wagers, reverse=True):
        for wager, amt in wagers[seat].items():
            if wager not in ("base", "fortune", "insurance", "progressive"):
                raise FortuneAsiaError(f"seat {seat}: unknown wager {wager!r}")
            if not isinstance(amt, int) or amt < 0:
                raise FortuneAsiaError(f"seat {seat}: {wager} wager must be whole cents >= 0, got {amt!r}")
            if amt:
                out.append(WagerResult(seat, wager, amt, "returned", 0, detail="void: misdeal (§ 659a.8(e))"))
    return out
