"""Fortune Asia Poker high (4-card), medium (2-card) and low (1-card) hands.

Pure: no I/O.  Implements 58 Pa. Code § 659a.6(a)-(c) (ranks and rankings),
§ 659a.11(b) (setting the hands) and § 659a.11(f) (the Fortune Asia Poker Wager
against the dealer's three hands).

Rankings, highest first (§ 659a.6(b)) -- note flush and straight rank ABOVE
three of a kind, and four aces above a straight flush:

    four aces > straight flush > four of a kind > flush > straight
    > three of a kind > two pair > pair > (no hand: high card)

* Straights (§ 659a.6(b)(5)): A-K-Q-J highest, A-2-3-4 second, then K-Q-J-T down
  to 2-3-4-5 lowest; straight flushes the same (§ 659a.6(b)(2)).  The ace is
  never in the middle (Q-K-A-2 is no straight, § 659a.6(a)).
* The joker (§ 659a.6(a)) ranks as an ace, or completes a straight, flush or
  straight flush of the four-card hand: three aces and the joker are four aces;
  the joker never makes four kings.  In a flush it is the highest card the suit
  lacks (as in controller/rules/poker.py, docs/rules-readings/poker.md).  In the
  medium and low hands it is an ace: the joker and an ace are a pair of aces.
* The medium hand is a pair or two odd cards; the low hand one card.
* Ties (§ 659a.6(c)): equal rank, then the highest card, then the next ...;
  identical after that = a copy.  A hand compared with a shorter hand (high v.
  medium, medium v. low, § 659a.11(b)) that matches it card for card as far as
  it goes ranks higher: "if the two-card medium hand contains a pair of sevens,
  the four-card high hand must contain at least a pair of sevens and the two
  remaining cards" (§ 659a.11(b)).

A hand's ``key`` is a tuple ``(category, tie-breaks...)``; Python's tuple order is
exactly the order above, including the shorter-hand rule.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from functools import lru_cache

from controller.rules.cards import ACE, JOKER, CardError, card_str, cards_str, parse_cards, rank_of, suit_of


class FortuneAsiaError(ValueError):
    """A request the rules cannot honour (wrong cards, an illegal surrender, ...)."""


class HandCat(IntEnum):
    """§ 659a.6(b) categories; the int value IS the ranking order (higher beats lower)."""

    HIGH_CARD = 0
    PAIR = 1
    TWO_PAIR = 2
    THREE_OF_A_KIND = 3
    STRAIGHT = 4
    FLUSH = 5
    FOUR_OF_A_KIND = 6
    STRAIGHT_FLUSH = 7
    FOUR_ACES = 8

    @property
    def text(self) -> str:
        return self.name.lower().replace("_", "-")


Key = tuple[int, ...]


@dataclass(frozen=True)
class SubHand:
    """One of a player's or the dealer's three hands."""

    cards: tuple[int, ...]
    category: HandCat
    key: Key

    def __str__(self) -> str:
        return f"{cards_str(self.cards)} ({self.category.text})"


def _straight_value(ranks: frozenset[int]) -> int | None:
    """§ 659a.6(b)(5): A-K-Q-J = 15, A-2-3-4 = 14, else the top card (13 .. 5)."""
    if len(ranks) != 4:
        return None
    if ranks == {ACE, 13, 12, 11}:
        return 15
    if ranks == {ACE, 2, 3, 4}:
        return 14
    if ACE not in ranks and max(ranks) - min(ranks) == 3:
        return max(ranks)
    return None


def _natural_key4(cards: tuple[int, ...]) -> Key:
    """Key of four natural cards (distinct card numbers)."""
    ranks = sorted((rank_of(c) for c in cards), reverse=True)
    rs = frozenset(ranks)
    flush = len({suit_of(c) for c in cards}) == 1
    sv = _straight_value(rs)
    if sv is not None and flush:
        return (HandCat.STRAIGHT_FLUSH, sv)
    cnt = Counter(ranks)
    groups = sorted(cnt.items(), key=lambda rc: (-rc[1], -rc[0]))
    if groups[0][1] == 4:
        return (HandCat.FOUR_ACES,) if groups[0][0] == ACE else (HandCat.FOUR_OF_A_KIND, groups[0][0])
    if flush:
        return (HandCat.FLUSH, *ranks)
    if sv is not None:
        return (HandCat.STRAIGHT, sv)
    return _matched_key(ranks)


def _matched_key(ranks: Sequence[int]) -> Key:
    """Key from ranks alone (pairs/trips/quads/high card), for 1 to 4 ranks."""
    cnt = Counter(ranks)
    groups = sorted(cnt.items(), key=lambda rc: (-rc[1], -rc[0]))
    shape = [c for _, c in groups] + [0]
    order = [r for r, _ in groups]
    if shape[0] == 4:
        return (HandCat.FOUR_ACES,) if order[0] == ACE else (HandCat.FOUR_OF_A_KIND, order[0])
    if shape[0] == 3:
        return (HandCat.THREE_OF_A_KIND, *order)
    if shape[0] == 2:
        return (HandCat.TWO_PAIR if shape[1] == 2 else HandCat.PAIR, *order)
    return (HandCat.HIGH_CARD, *sorted(ranks, reverse=True))


@lru_cache(maxsize=1 << 16)
def _key4(cards: tuple[int, ...]) -> Key:
    if JOKER not in cards:
        return _natural_key4(cards)
    nat = tuple(c for c in cards if c != JOKER)
    # the joker as an ace (§ 659a.6(a)): pairs, trips, four aces, high card
    best = _matched_key([rank_of(c) for c in nat] + [ACE])
    # ... or as any card completing a straight, flush or straight flush
    for sub in range(52):
        if sub in nat:
            continue
        k = _natural_key4(nat + (sub,))
        if k[0] in (HandCat.STRAIGHT, HandCat.FLUSH, HandCat.STRAIGHT_FLUSH) and k > best:
            best = k
    return best


def key4(cards: Sequence[int]) -> Key:
    """The high-hand key of four valid, distinct cards (no checks: internal fast path)."""
    return _key4(tuple(sorted(cards)))


@lru_cache(maxsize=2048)
def key2(a: int, b: int) -> Key:
    """The medium-hand key of two valid, distinct cards (no checks)."""
    return _matched_key([_ace_rank(a), _ace_rank(b)])


def key1(c: int) -> Key:
    """The low-hand key of one valid card (no checks)."""
    return (HandCat.HIGH_CARD, _ace_rank(c))


def _check(cards: Iterable[int] | str, n: int, what: str) -> tuple[int, ...]:
    cs = tuple(parse_cards(cards, count=n) if isinstance(cards, str) else cards)
    if len(cs) != n:
        raise CardError(f"a {what} hand has {n} card{'s' if n > 1 else ''} (§ 659a.6(b)), got {len(cs)}")
    for c in cs:
        if not (isinstance(c, int) and 0 <= c <= JOKER):
            raise CardError(f"{c!r} is not a card number (0..52)", str(c))
    if len(set(cs)) != n:
        raise CardError(f"duplicate card in the {what} hand: {cards_str(cs)}")
    return cs


def _ace_rank(c: int) -> int:
    return ACE if c == JOKER else rank_of(c)


def high_hand(cards: Iterable[int] | str) -> SubHand:
    """The four-card high hand (§ 659a.6(b))."""
    cs = _check(cards, 4, "high")
    k = _key4(tuple(sorted(cs)))
    return SubHand(cs, HandCat(k[0]), k)


def medium_hand(cards: Iterable[int] | str) -> SubHand:
    """The two-card medium hand: a pair or two odd cards; the joker is an ace."""
    cs = _check(cards, 2, "medium")
    k = key2(*cs)
    return SubHand(cs, HandCat(k[0]), k)


def low_hand(cards: Iterable[int] | str) -> SubHand:
    """The one-card low hand; the joker is an ace."""
    cs = _check(cards, 1, "low")
    return SubHand(cs, HandCat.HIGH_CARD, (HandCat.HIGH_CARD, _ace_rank(cs[0])))


def compare(a: SubHand, b: SubHand) -> int:
    """-1, 0 (a copy, § 659a.6(c)) or 1; for hands of the same size."""
    return (a.key > b.key) - (a.key < b.key)


@dataclass(frozen=True)
class Setting:
    """A high, medium and low hand set from seven cards (§ 659a.11(b))."""

    high: SubHand
    medium: SubHand
    low: SubHand

    @property
    def cards(self) -> tuple[int, ...]:
        return self.high.cards + self.medium.cards + self.low.cards

    def foul(self) -> str | None:
        """Why the hands are not set correctly (§ 659a.11(f)(1)(iii)-(iv)), or None."""
        if not self.high.key > self.medium.key:
            return "the high hand does not rank higher than the medium hand (§ 659a.11(f)(1)(iii))"
        if not self.medium.key > self.low.key:
            return "the medium hand does not rank higher than the low hand (§ 659a.11(f)(1)(iv))"
        return None

    def __str__(self) -> str:
        return f"high {self.high} | medium {self.medium} | low {self.low}"


def make_setting(
    high: Iterable[int] | str, medium: Iterable[int] | str, low: Iterable[int] | str, seven: Sequence[int] | None = None
) -> Setting:
    """Build a setting; with ``seven`` (the cards dealt) the three hands must use
    exactly those seven cards (§ 659a.11(f)(1)(v): otherwise not set correctly,
    which is a CardError here: the dealer entered the wrong cards)."""
    s = Setting(high_hand(high), medium_hand(medium), low_hand(low))
    used = s.cards
    if len(set(used)) != 7:
        raise CardError(f"a card is used twice in the setting: {cards_str(used)}")
    if seven is not None and set(used) != set(seven):
        extra = sorted(set(used) - set(seven))
        missing = sorted(set(seven) - set(used))
        raise CardError(
            "the three hands do not use the seven cards dealt"
            + (f"; not dealt: {cards_str(extra)}" if extra else "")
            + (f"; left out: {cards_str(missing)}" if missing else ""),
            card_str(extra[0]) if extra else None,
        )
    return s


def settings_of(seven: Sequence[int]) -> Iterable[Setting]:
    """All 105 ways to split seven cards into 4 + 2 + 1 (legal or not)."""
    from itertools import combinations

    cs = tuple(seven)
    for hi in combinations(cs, 4):
        rest = [c for c in cs if c not in hi]
        for lo in rest:
            med = tuple(c for c in rest if c != lo)
            yield Setting(high_hand(hi), medium_hand(med), low_hand((lo,)))


#: per-hand results against the dealer
HandResult = str  # "win" | "copy" | "lose"


def hand_results(player: Setting, dealer: Setting) -> tuple[HandResult, HandResult, HandResult]:
    out = []
    for p, d in ((player.high, dealer.high), (player.medium, dealer.medium), (player.low, dealer.low)):
        c = compare(p, d)
        out.append("win" if c > 0 else "copy" if c == 0 else "lose")
    return out[0], out[1], out[2]


def base_outcome(player: Setting, dealer: Setting) -> tuple[str, str]:
    """("win" | "lose", detail) for the Fortune Asia Poker Wager (§ 659a.11(f)).

    Wins when any two of the player's hands rank higher than the dealer's
    (§ 659a.11(f)(2)); loses when two are identical (copies) or lower
    (§ 659a.11(f)(1)(i)-(ii)) and whenever the player's hands are not set
    correctly (§ 659a.11(f)(1)(iii)-(v)).  There is no push."""
    why = player.foul()
    if why:
        return "lose", f"foul: {why}"
    res = hand_results(player, dealer)
    detail = f"high {res[0]}, medium {res[1]}, low {res[2]}"
    return ("win" if res.count("win") >= 2 else "lose"), detail
