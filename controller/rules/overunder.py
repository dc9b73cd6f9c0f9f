"""Over/Under — 58 Pa. Code Chapter 686a.  Pure rules: card points, the round's
decision, settlement of every wager in integer cents, and the shoe with its
cover card.

The round (§ 686a.7):

1. Each player places an Ante Wager (required, § 686a.6(d)) and optionally a
   Bonus Wager (§ 686a.6(e)); then one card face up to each ante (§ 686a.7(e)).
2. After the first card each player chooses (§ 686a.7(g)): an Over 23 Wager or an
   Under 18 Wager equal to the Ante, or surrender (the Ante is forfeited; the Bonus
   Wager stays in play, § 686a.7(h)).
3. Two more cards face up, even after a surrender (§ 686a.7(i)); then settlement:
   Ante and Over 23 win on a point total of 24–33, Ante and Under 18 win on 6–17
   (§ 686a.7(i)(1),(2) — printed as a second "(i)", read here as (j)(1),(2)); both
   lose on 18–23 (§ 686a.7(k)) and — by this project's reading, see
   ``docs/rules-readings/686a.md`` — on a total on the other side of the house band
   (Over 23 with 6–17, Under 18 with 24–33).  Even money (§ 686a.8(a)).
4. The Bonus Wager wins on 6–12 and 27–33 and loses on 13–26 (§ 686a.7(l)), paid
   from the ``Over/Under Bonus`` paytable (§ 686a.8(b)).

Card points (§ 686a.3(d)): 2–10 face value, jack/queen/king 10, ace always 11.

The shoe (§ 686a.3(a), § 686a.5(d),(f), § 686a.7(c),(d), § 686a.9(b)) is modelled
by the immutable :class:`Shoe`; see its docstring.

Nothing here does I/O.  Money is integer cents.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import cast

from controller.rules.cards import DECK_52, JOKER, CardError, card_str, parse_cards, rank_of
from controller.rules.paytables import Paytable, get_paytable
from controller.rules.settlement import WagerResult, whole_cents

GAME = "over-under"
DECKS = 6  # § 686a.3(a): a six-deck batch of 52-card decks
SHOE_CARDS = DECKS * 52  # 312
HAND_CARDS = 3  # § 686a.1 "Hand—The three cards dealt to the player"
MIN_TOTAL, MAX_TOTAL = 6, 33  # 2+2+2 .. A+A+A
HOUSE_BAND = range(18, 24)  # § 686a.7(k): 18–23 lose ("House wins on 18—23", § 686a.2(b)(4)(ii))
OVER_WINS = range(24, 34)  # § 686a.7(i)(1)
UNDER_WINS = range(6, 18)  # § 686a.7(i)(2)
BONUS_WINS = frozenset([*range(6, 13), *range(27, 34)])  # § 686a.7(l)

ANTE_PAYTABLE = "Over/Under Ante"
OVER_PAYTABLE = "Over/Under Over 23"
UNDER_PAYTABLE = "Over/Under Under 18"
BONUS_PAYTABLE = "Over/Under Bonus"

RULE_EVEN_MONEY = "§ 686a.8(a)"


class OverUnderError(ValueError):
    """An impossible Over/Under play (bad amount, missing decision, wrong card count ...)."""


class ShoeExhausted(OverUnderError):
    """No card left in the shoe: § 686a.9(b) — shuffle the discards, burn one, finish the round."""


class Decision(StrEnum):
    """The player's choice after the first card (§ 686a.7(g))."""

    OVER_23 = "over-23"  # § 686a.7(g)(1)
    UNDER_18 = "under-18"  # § 686a.7(g)(2)
    SURRENDER = "surrender"  # § 686a.7(g)(3)

    @classmethod
    def parse(cls, text: str | Decision) -> Decision:
        if isinstance(text, Decision):
            return text
        t = str(text).strip().lower().replace("_", "-").replace(" ", "-")
        aliases = {"over": "over-23", "over23": "over-23", "under": "under-18", "under18": "under-18"}
        t = aliases.get(t, t)
        for d in cls:
            if d.value == t:
                return d
        raise OverUnderError(f"{text!r} is not an Over/Under decision (over-23, under-18, surrender)")


# --------------------------------------------------------------------------- points


def card_points(card: int) -> int:
    """Point value of one card, § 686a.3(d): 2–10 face value, J/Q/K 10, ace 11."""
    if card == JOKER:
        raise CardError("Over/Under is dealt without a joker (§ 686a.3(a))", "Jk")
    if not isinstance(card, int) or not 0 <= card < 52:
        raise CardError(f"{card!r} is not a card number (0..51)")
    r = rank_of(card)
    if r == 14:
        return 11  # § 686a.3(d)(3) "An ace shall have a value of 11"
    return min(r, 10)  # § 686a.3(d)(1),(2)


def parse_hand(text: str | Sequence[str], count: int | Sequence[int] = HAND_CARDS) -> tuple[int, ...]:
    """Cards from a six-deck shoe: duplicates allowed, no joker (§ 686a.3(a))."""
    return parse_cards(text, count=count, allow_duplicates=True, allow_joker=False)


def _cards(cards: str | Sequence[int] | Sequence[str], count: int = HAND_CARDS) -> tuple[int, ...]:
    if isinstance(cards, str) or (cards and isinstance(next(iter(cards)), str)):
        return parse_hand(cast("str | Sequence[str]", cards), count)
    out = tuple(cast("Sequence[int]", cards))
    for c in out:
        card_points(c)  # validates
    if len(out) != count:
        raise CardError(f"wrong number of cards: got {len(out)}, expected {count}")
    return out


def point_total(cards: str | Sequence[int] | Sequence[str]) -> int:
    """Total point count of the three-card hand (§ 686a.1 "Hand", § 686a.3(d))."""
    return sum(card_points(c) for c in _cards(cards))


# --------------------------------------------------------------------------- outcomes


def decision_wins(decision: Decision | str, total: int) -> bool | None:
    """Does the Ante (with the Over 23 / Under 18 Wager) win on ``total``?

    True: win (§ 686a.7(i)(1),(2)); False: lose (§ 686a.7(k), and the other side of
    the house band by this project's reading); None: surrendered (§ 686a.7(g)(3)).
    """
    d = Decision.parse(decision)
    _check_total(total)
    if d is Decision.SURRENDER:
        return None
    if total in HOUSE_BAND:
        return False  # § 686a.7(k)
    if d is Decision.OVER_23:
        return total in OVER_WINS  # § 686a.7(i)(1); 6–17 loses (reading 686a-1)
    return total in UNDER_WINS  # § 686a.7(i)(2); 24–33 loses (reading 686a-1)


def bonus_hand(total: int) -> str:
    """Paytable key for the Bonus Wager on ``total`` (``"total-6"`` ...), § 686a.7(l), § 686a.8(b)."""
    _check_total(total)
    return f"total-{total}"


def _check_total(total: int) -> None:
    if not isinstance(total, int) or not MIN_TOTAL <= total <= MAX_TOTAL:
        raise OverUnderError(f"{total!r} is not a possible three-card point total ({MIN_TOTAL}..{MAX_TOTAL})")


# --------------------------------------------------------------------------- settlement


@dataclass(frozen=True)
class SeatPlay:
    """One betting position's round: wagers, the decision and the three cards (first card first)."""

    seat: int
    ante: int  # cents, § 686a.6(d) required
    decision: Decision | str
    cards: Sequence[int] | str
    bonus: int = 0  # cents, optional § 686a.6(e)

    def validated(self) -> SeatPlay:
        if not isinstance(self.seat, int) or self.seat < 1:
            raise OverUnderError(f"seat {self.seat!r} is not a betting position (1, 2, ...)")
        for name, amt, minimum in (("ante", self.ante, 1), ("bonus", self.bonus, 0)):
            if not isinstance(amt, int) or isinstance(amt, bool) or amt < minimum:
                raise OverUnderError(
                    f"seat {self.seat}: {name} wager {amt!r} must be a whole number of cents >= {minimum}"
                )
        return replace(self, decision=Decision.parse(self.decision), cards=_cards(self.cards))


def _even_money(seat: int, wager: str, amount: int, won: bool, total: int, table: Paytable) -> WagerResult:
    hand = f"total-{total}"
    if won:
        pay = table.payout("win")
        if pay is None:
            raise OverUnderError(f"paytable {table.name!r} has no 'win' row")
        net = whole_cents(pay.net_win(amount), rule=RULE_EVEN_MONEY)
        return WagerResult(seat, wager, amount, "win", net, hand=hand, paytable=table.name, pays=pay.text)
    return WagerResult(seat, wager, amount, "lose", -amount, hand=hand, paytable=table.name)


def settle_seat(play: SeatPlay, *, bonus_paytable: str = BONUS_PAYTABLE) -> list[WagerResult]:
    """Settle one position (§ 686a.7(j)–(l), § 686a.8): ante, over-23/under-18, bonus — in that order.

    Returns WagerResults with wager ids ``"ante"``, ``"over-23"`` / ``"under-18"``
    (absent after a surrender) and ``"bonus"`` (when one was placed).
    """
    p = play.validated()
    d = Decision.parse(p.decision)
    total = point_total(p.cards)
    out: list[WagerResult] = []
    if d is Decision.SURRENDER:
        # § 686a.7(g)(3): the Ante is forfeited and collected.
        out.append(
            WagerResult(
                p.seat,
                "ante",
                p.ante,
                "surrender",
                -p.ante,
                hand=f"total-{total}",
                detail="surrendered after the first card (§ 686a.7(g)(3))",
            )
        )
    else:
        won = bool(decision_wins(d, total))
        out.append(_even_money(p.seat, "ante", p.ante, won, total, get_paytable(ANTE_PAYTABLE)))
        # § 686a.7(g)(1),(2): the Over 23 / Under 18 Wager equals the Ante.
        table = get_paytable(OVER_PAYTABLE if d is Decision.OVER_23 else UNDER_PAYTABLE)
        out.append(_even_money(p.seat, d.value, p.ante, won, total, table))
    if p.bonus:
        out.append(settle_bonus(p.seat, p.bonus, total, paytable=bonus_paytable))
    return out


def settle_bonus(seat: int, amount: int, total: int, *, paytable: str = BONUS_PAYTABLE) -> WagerResult:
    """The Bonus Wager (§ 686a.7(l), § 686a.8(b)); unaffected by a surrender (§ 686a.7(h))."""
    if not isinstance(amount, int) or isinstance(amount, bool) or amount < 1:
        raise OverUnderError(f"seat {seat}: bonus wager {amount!r} must be a whole number of cents >= 1")
    table = get_paytable(paytable)
    key = bonus_hand(total)
    pay = table.payout(key)
    if total in BONUS_WINS and pay is not None:
        net = whole_cents(pay.net_win(amount), rule="§ 686a.8(b)")
        return WagerResult(seat, "bonus", amount, "win", net, hand=key, paytable=table.name, pays=pay.text)
    return WagerResult(seat, "bonus", amount, "lose", -amount, hand=key, paytable=table.name)


def settle_round(plays: Iterable[SeatPlay], *, bonus_paytable: str = BONUS_PAYTABLE) -> list[WagerResult]:
    """Settle every position, in the order given — the dealing order, from the player
    farthest to the dealer's left clockwise (§ 686a.7(e),(j)).  Seats must be distinct."""
    plays = list(plays)
    seen: set[int] = set()
    for p in plays:
        if p.seat in seen:
            raise OverUnderError(f"seat {p.seat} appears twice in one round")
        seen.add(p.seat)
    out: list[WagerResult] = []
    for p in plays:
        out.extend(settle_seat(p, bonus_paytable=bonus_paytable))
    return out


def dead_hand(seat: int, ante: int, decision: Decision | str | None = None, bonus: int = 0) -> list[WagerResult]:
    """§ 686a.9(c): the dealer failed to deal the two additional cards and the player
    chose to have the hand called dead: the initial Ante Wager is returned.  Reading
    (docs/rules-readings/686a.md, 686a-4): the Over 23 / Under 18 Wager and the Bonus
    Wager, which cannot be decided without the three cards, are returned as well."""
    if not isinstance(ante, int) or ante < 1:
        raise OverUnderError(f"seat {seat}: ante {ante!r} must be a whole number of cents >= 1")
    out = [WagerResult(seat, "ante", ante, "returned", 0, detail="dead hand (§ 686a.9(c))")]
    if decision is not None:
        d = Decision.parse(decision)
        if d is not Decision.SURRENDER:
            out.append(WagerResult(seat, d.value, ante, "returned", 0, detail="dead hand (§ 686a.9(c))"))
    if bonus:
        out.append(WagerResult(seat, "bonus", bonus, "returned", 0, detail="dead hand (§ 686a.9(c))"))
    return out


# --------------------------------------------------------------------------- the shoe


def max_cover_position(n_cards: int = SHOE_CARDS) -> int:
    """Most cards that may sit above the cover card: it goes "at least 1/4 of the way in
    from the bottom of the stack" (§ 686a.5(d)), i.e. at least ceil(n/4) cards below it."""
    return n_cards - -(-n_cards // 4)


@dataclass(frozen=True)
class Shoe:
    """The dealing shoe as a value (§ 686a.3(a), § 686a.5(d),(f), § 686a.7(c),(d)).

    ``cards`` is the stack as placed in the shoe, next card first, *without* the cover
    card; ``cover_at`` is how many cards lie above the cover card.  Drawing past that
    point brings the cover card out: it is set aside and play continues, the round in
    progress is completed, and the cards are reshuffled before the next round
    (§ 686a.7(d), § 686a.5(f)) — :attr:`reshuffle_due`.  The same holds when the cover
    card is the very first card of a round.  Every operation returns a new Shoe.
    """

    cards: tuple[int, ...]
    cover_at: int
    dealt: int = 0
    cover_out: bool = False

    @classmethod
    def load(cls, stack: Sequence[int], cover_at: int, *, full_batch: bool = True) -> Shoe:
        """Validate a shuffled, cut stack and the cover card's place (§ 686a.5(d)).

        With ``full_batch`` the stack must be exactly the six-deck batch: 312 cards,
        six of each (§ 686a.3(a)).  Call :meth:`burn` next (§ 686a.7(c))."""
        stack = tuple(stack)
        for c in stack:
            card_points(c)
        if full_batch:
            if len(stack) != SHOE_CARDS:
                raise OverUnderError(f"a shoe holds {SHOE_CARDS} cards (§ 686a.3(a)), got {len(stack)}")
            counts = Counter(stack)
            for c in DECK_52:
                if counts[c] != DECKS:
                    raise OverUnderError(f"{card_str(c)}: {counts[c]} in the batch, expected {DECKS} (§ 686a.3(a))")
        limit = max_cover_position(len(stack))
        if not isinstance(cover_at, int) or not 0 <= cover_at <= limit:
            raise OverUnderError(
                f"cover card after {cover_at!r} cards: it must be at least 1/4 of the way in from the bottom, "
                f"i.e. 0..{limit} cards above it (§ 686a.5(d))"
            )
        return cls(stack, cover_at)

    @property
    def remaining(self) -> int:
        return len(self.cards) - self.dealt

    @property
    def reshuffle_due(self) -> bool:
        """The cover card has come out: finish the round, then reshuffle (§ 686a.7(d))."""
        return self.cover_out

    def _take(self) -> tuple[int, Shoe]:
        cover_out = self.cover_out or self.dealt >= self.cover_at  # § 686a.7(d): set aside, keep dealing
        if self.dealt >= len(self.cards):
            raise ShoeExhausted(
                "no cards left in the shoe (§ 686a.9(b): shuffle the discards, burn one, complete the round)"
            )
        return self.cards[self.dealt], replace(self, dealt=self.dealt + 1, cover_out=cover_out)

    def draw(self) -> tuple[int, Shoe]:
        """Deal the next card (§ 686a.7(b)); passes the cover card when it comes (§ 686a.7(d))."""
        return self._take()

    def burn(self) -> tuple[int, Shoe]:
        """Discard one card unseen: after a full batch is placed in the shoe, and for
        each new dealer (§ 686a.7(c)); also after a § 686a.9(b) reshuffle."""
        return self._take()

    def can_deal(self, n_cards: int) -> bool:
        """Enough cards for ``n_cards`` more (otherwise § 686a.9(b) applies mid-round)."""
        return self.remaining >= n_cards


def cards_for_round(n_positions: int) -> int:
    """Cards a round needs: three per ante position (§ 686a.7(e),(i))."""
    if not isinstance(n_positions, int) or n_positions < 0:
        raise OverUnderError(f"{n_positions!r} is not a number of positions")
    return HAND_CARDS * n_positions
