"""Six-Card Fortune Pai Gow Poker (58 Pa. Code chapter 670a): hands, setting, house way.

Pure: no I/O, no hardware imports.

* The six cards dealt to a hand are set as a five-card **high hand** and a one-card
  **low hand** (§ 670a.1, § 670a.11(b)); the high hand must rank at least as high as
  the low hand or the Six-Card Fortune Pai Gow Poker Wager loses (§ 670a.11(f)(1)(v)).
* Low hands rank by § 670a.6(a): ace high, 2 low; the joker in a low hand is an ace
  (§ 670a.6(a)), and a *player's* joker low hand beats the dealer's low hand
  (§ 670a.6(c), § 670a.11(f)(2)(ii), (f)(3)).  Otherwise identical ranks go to the
  dealer (§ 670a.6(c)).
* High hands rank with the shared bug-joker evaluator (``controller.rules.poker``,
  rules ``"bug"``, § 670a.6(a)-(c)).
* :func:`house_way` sets the dealer's hands per § 670a.11(d); the readings chosen
  where the text is silent are in ``docs/rules-readings/670a.md``.

Settlement of the wagers is in :mod:`controller.rules.sixcard_settle`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from controller.rules.cards import ACE, JOKER, CardError, card_str, cards_str, parse_cards, rank_of
from controller.rules.poker import Category, HandRank, best_five, compare, eval_five

RULES = "bug"  # § 670a.6(a): the joker is an ace or completes a straight, flush or straight flush
HAND_SIZE = 6
HIGH_SIZE = 5

RANK_WORDS = {
    2: "two",
    3: "three",
    4: "four",
    5: "five",
    6: "six",
    7: "seven",
    8: "eight",
    9: "nine",
    10: "ten",
    11: "jack",
    12: "queen",
    13: "king",
    14: "ace",
}


class SixCardError(ValueError):
    """Bad input to the 670a rules: wrong count, duplicate, not a card, not a split."""

    def __init__(self, message: str, token: str | None = None):
        super().__init__(message)
        self.token = token


class SettingError(SixCardError):
    """A player's high/low hands are not a five/one split of the six cards dealt."""


# --------------------------------------------------------------------------- cards


def _as_cards(cards: Iterable[int] | str, what: str) -> tuple[int, ...]:
    if isinstance(cards, str):
        try:
            return parse_cards(cards)
        except CardError as e:
            raise SixCardError(f"{what}: {e}", e.token) from None
    out = tuple(cards)
    for c in out:
        if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c <= JOKER:
            raise SixCardError(f"{what}: {c!r} is not a card number (0..52)", str(c))
    return out


def check_six(cards: Iterable[int] | str, what: str = "hand") -> tuple[int, ...]:
    """The six cards dealt to one hand (§ 670a.8(d)): exactly six, no duplicate.

    Raises :class:`SixCardError` naming the offending card."""
    out = _as_cards(cards, what)
    if len(out) != HAND_SIZE:
        raise SixCardError(f"{what}: got {len(out)} cards, a Six-Card Fortune hand has {HAND_SIZE} (§ 670a.8(d))")
    seen: set[int] = set()
    for c in out:
        if c in seen:
            raise SixCardError(f"{what}: duplicate card {card_str(c)}", card_str(c))
        seen.add(c)
    return out


def low_rank(card: int) -> int:
    """Rank of a card played alone (a low hand, or the top of a no-pair high hand).

    § 670a.6(a): ace (14) high, 2 low; the joker "shall be used and ranked as an ace"."""
    return ACE if card == JOKER else rank_of(card)


def high_rank(cards: Sequence[int]) -> HandRank:
    """Rank of a five-card high hand, § 670a.6(b)-(c) (bug joker)."""
    if len(cards) != HIGH_SIZE:
        raise SixCardError(f"a high hand has {HIGH_SIZE} cards, got {len(cards)}: {cards_str(cards)}")
    return eval_five(cards, RULES)


def six_card_rank(cards: Sequence[int]) -> HandRank:
    """The highest ranking five-card hand formed from six cards, as the dealer
    rearranges them for the optional wagers (§ 670a.11(h), § 670a.7(e)(2)-(4))."""
    return best_five(check_six(cards), RULES)


def hand_key(rank: HandRank) -> str:
    """Paytable key of a hand: the category (``"royal-flush"``), or for a hand with no
    pair, straight or flush its top card (``"king-high"``, § 670a.12(c)).

    A no-pair hand holding the joker is *ace-high*: the joker not completing a
    straight or flush is an ace (§ 670a.6(a)); see docs/rules-readings/670a.md."""
    if rank.category == Category.HIGH_CARD:
        return f"{RANK_WORDS[max(low_rank(c) for c in rank.best)]}-high"
    return rank.category.text


# --------------------------------------------------------------------------- setting


@dataclass(frozen=True)
class Setting:
    """A five-card high hand and a one-card low hand (§ 670a.1 "Setting the hands")."""

    high: tuple[int, ...]
    low: int

    @property
    def cards(self) -> tuple[int, ...]:
        return self.high + (self.low,)

    def __str__(self) -> str:
        return f"{cards_str(self.high)} / {card_str(self.low)}"


def make_setting(dealt: Iterable[int] | str, high: Iterable[int] | str, low: int | str) -> Setting:
    """Validate that ``high`` (5 cards) and ``low`` (1 card) split the six cards ``dealt``.

    Raises :class:`SettingError` (a ``ValueError``) naming the card that is wrong.
    A foul (§ 670a.11(f)(1)(v)) is *not* an error here: it is a legal setting that
    loses; see :func:`is_foul`."""
    six = check_six(dealt, "dealt hand")
    hi = _as_cards(high, "high hand")
    if isinstance(low, str):
        lo_t = _as_cards(low, "low hand")
        if len(lo_t) != 1:
            raise SettingError(f"low hand: got {len(lo_t)} cards, the low hand is one card (§ 670a.1)")
        lo = lo_t[0]
    else:
        lo_t = _as_cards((low,), "low hand")
        lo = lo_t[0]
    if len(hi) != HIGH_SIZE:
        raise SettingError(f"high hand: got {len(hi)} cards, the high hand is five cards (§ 670a.1): {cards_str(hi)}")
    seen: set[int] = set()
    for c in hi + (lo,):
        if c in seen:
            raise SettingError(f"setting uses {card_str(c)} twice", card_str(c))
        seen.add(c)
        if c not in six:
            raise SettingError(f"{card_str(c)} was not dealt to this hand ({cards_str(six)})", card_str(c))
    return Setting(hi, lo)


def is_foul(high: Sequence[int], low: int) -> bool:
    """True when the high hand does not rank equal to or higher than the low hand,
    § 670a.11(b), (f)(1)(v).

    Any pair or better outranks a single card.  A five-card hand with no pair,
    straight or flush is compared with the single card by § 670a.6(c): the top card
    decides; on equal top ranks (only possible with the joker and an ace) the high
    hand still holds cards the low hand lacks, so it ranks higher."""
    if high_rank(high).category != Category.HIGH_CARD:
        return False
    return max(low_rank(c) for c in high) < low_rank(low)


# --------------------------------------------------------------------------- comparison


def compare_low(player_low: int, dealer_low: int) -> int:
    """+1 when the player's low hand wins, -1 when the dealer's does (never 0).

    § 670a.6(a): joker = ace.  § 670a.6(c): "If a player uses a joker as the low hand,
    the player's hand shall be considered the higher ranking hand" (also
    § 670a.11(f)(2)(ii), (f)(3): "the low hand of the player is a joker or is higher
    in rank"); otherwise identical ranks go to the dealer."""
    if player_low == JOKER:
        return 1
    return 1 if low_rank(player_low) > low_rank(dealer_low) else -1


def compare_high(player_high: Sequence[int], dealer_high: Sequence[int]) -> int:
    """+1 when the player's high hand wins, -1 when the dealer's does (never 0):
    identical hands go to the dealer, § 670a.6(c)."""
    return 1 if compare(high_rank(player_high), high_rank(dealer_high)) > 0 else -1


@dataclass(frozen=True)
class HandsResult:
    """Outcome of the Six-Card Fortune Pai Gow Poker Wager, § 670a.11(f)."""

    outcome: str  # "win", "lose" or "push" (a tie, returned to the player)
    high: int  # +1 player's high hand wins, -1 dealer's (0 when fouled)
    low: int  # +1 / -1 likewise
    foul: bool
    section: str

    @property
    def both_win(self) -> bool:
        return self.high > 0 and self.low > 0


def compare_hands(player: Setting, dealer: Setting) -> HandsResult:
    """§ 670a.11(f): both hands higher wins, both lower/identical loses, one each ties;
    a player's foul loses (§ 670a.11(f)(1)(v))."""
    if is_foul(player.high, player.low):
        return HandsResult("lose", 0, 0, True, "§ 670a.11(f)(1)(v)")
    hi = compare_high(player.high, dealer.high)
    lo = compare_low(player.low, dealer.low)
    if hi > 0 and lo > 0:
        return HandsResult("win", hi, lo, False, "§ 670a.11(f)(3)")
    if hi < 0 and lo < 0:
        return HandsResult("lose", hi, lo, False, "§ 670a.11(f)(1)(i)-(iv)")
    return HandsResult("push", hi, lo, False, "§ 670a.11(f)(2)")


@lru_cache(maxsize=1)
def _pair_of_eights() -> HandRank:
    # the lowest hand that is "a pair of eights": 8-8-4-3-2
    return eval_five(parse_cards("8c 8d 4h 3s 2c"), RULES)


def dealer_qualifies_double_down(dealer: Setting) -> bool:
    """§ 670a.11(g)(1): "the dealer's hand contains a pair of eights or better, as
    described in § 670a.6(b)".  Read as: the dealer's high hand, set by the house way,
    ranks at least as high as the lowest pair of eights (8-8-4-3-2).  For a hand set by
    the house way this is the same as "the dealer's six cards contain a pair of eights
    or better" (the house way never breaks a pair into the low hand except the top pair
    of three pairs, whose high hand is then two pair); docs/rules-readings/670a.md."""
    return compare(high_rank(dealer.high), _pair_of_eights()) >= 0


# --------------------------------------------------------------------------- house way


@dataclass(frozen=True)
class HouseWay:
    """The dealer's hands as § 670a.11(d) sets them, and the paragraph that set them."""

    high: tuple[int, ...]
    low: int
    high_rank: HandRank
    paragraph: str

    @property
    def setting(self) -> Setting:
        return Setting(self.high, self.low)


_STRAIGHT_FLUSHES = frozenset({Category.STRAIGHT_FLUSH, Category.ROYAL_FLUSH})
_PARA_2_TO_5 = frozenset({Category.STRAIGHT, Category.FLUSH}) | _STRAIGHT_FLUSHES


def _group(cat: Category) -> frozenset[Category]:
    # A royal flush is the ace-high straight flush (§ 670a.6(b)(2)-(3)); for "the
    # lowest possible ... straight flush" of § 670a.11(d)(2), (4), (5) they are one group.
    return _STRAIGHT_FLUSHES if cat in _STRAIGHT_FLUSHES else frozenset({cat})


def _paragraph(cards: Sequence[int], cat: Category) -> str:
    if cat in _PARA_2_TO_5:
        return "§ 670a.11(d)(2)-(5)"
    if cat == Category.HIGH_CARD:
        return "§ 670a.11(d)(6)"
    counts = Counter(low_rank(c) for c in cards)  # the joker counts as an ace here
    if sum(1 for n in counts.values() if n >= 3) == 2:
        return "§ 670a.11(d)(1)(i)"
    if sum(1 for n in counts.values() if n == 2) == 3:
        return "§ 670a.11(d)(1)(ii)"
    return "§ 670a.11(d)(1)"


def _order_high(high: Sequence[int]) -> tuple[int, ...]:
    return tuple(sorted(high, key=lambda c: (low_rank(c), c), reverse=True))


def house_way_detail(cards: Iterable[int] | str) -> HouseWay:
    """Set the dealer's six cards per § 670a.11(d)(1)-(6).

    The paragraphs all keep the best kind of five-card hand the six cards make and
    then put the highest card they can in the low hand:

    * (1) pairs, two pair, trips, full house, four of a kind, five aces (the joker
      counting as an ace): never break the set; the highest remaining card goes low.
      (1)(i) two trips: lower trips + pair of the higher, third card of the higher low;
      (1)(ii) three pairs: the two lower pairs high, the top pair's card low.  Both are
      "highest card low among the splits that keep the full house / two pair".
    * (2)-(5) straight, flush, straight flush (a royal flush counts as the ace-high
      straight flush): a flush beats a straight (3), a straight flush beats both (4),
      (5); play the straight/flush/straight flush that leaves the highest ranking card
      in the low hand, and of those the lowest ranking one.
    * (6) no pair, straight or flush: highest card in the high hand, second highest low.

    Among splits that leave low cards of equal rank (the joker and an ace, or two
    cards of one rank) the lowest (2)-(5) or highest (1) high hand is played, then
    the joker stays in the high hand; these ties never change an outcome.
    """
    six = check_six(cards, "dealer's hand")
    splits: list[tuple[tuple[int, ...], int, HandRank]] = []
    for i, lo in enumerate(six):
        hi = six[:i] + six[i + 1 :]
        splits.append((hi, lo, eval_five(hi, RULES)))
    best = max(splits, key=lambda s: s[2].score)[2]
    group = _group(best.category)
    lowest_high = best.category in _PARA_2_TO_5

    def key(s: tuple[tuple[int, ...], int, HandRank]) -> tuple[int, int, int, int]:
        _, lo, r = s
        # last: any fixed order between two cards of one rank, so the result does not
        # depend on the order the cards were given in
        return (low_rank(lo), -r.score if lowest_high else r.score, 0 if lo == JOKER else 1, lo)

    cands = [s for s in splits if s[2].category in group and not is_foul(s[0], s[1])]
    hi, lo, r = max(cands, key=key)
    return HouseWay(_order_high(hi), lo, r, _paragraph(six, best.category))


def house_way(cards: Iterable[int] | str) -> tuple[tuple[int, ...], int]:
    """``(high5, low1)`` for the dealer's six cards, § 670a.11(d)."""
    hw = house_way_detail(cards)
    return hw.high, hw.low


# The round's settlement lives in its own module (size); re-exported here so that
# ``from controller.rules.sixcard import settle_round`` works.
from controller.rules.sixcard_settle import SeatWagers, SixCardOptions, settle_round  # noqa: E402

__all__ = [
    "HandsResult",
    "HouseWay",
    "SeatWagers",
    "Setting",
    "SettingError",
    "SixCardError",
    "SixCardOptions",
    "check_six",
    "compare_hands",
    "compare_high",
    "compare_low",
    "dealer_qualifies_double_down",
    "hand_key",
    "high_rank",
    "house_way",
    "house_way_detail",
    "is_foul",
    "low_rank",
    "make_setting",
    "settle_round",
    "six_card_rank",
]
