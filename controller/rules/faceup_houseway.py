"""Face Up Pai Gow Poker (ch. 688a): the dealer's house way, pluggable.

§ 688a.11(a): "The certificate holder shall specify in its Rules Submission ... the
manner in which the hands of the dealer shall be set."  The regulations print no
house way, so the table profile names one (option ``house_way``) from the registry
:data:`HOUSE_WAYS`; :func:`register_house_way` adds a casino's own.  A house way is a
function ``(seven cards) -> Setting`` that never fouls (§ 688a.11(c)); the registry
wrapper checks that and raises :class:`HouseWayError` otherwise, so a bad house way is
a clear error and never a wrong settlement.  § 688a.13(h): a dealer hand set another
way is reset to the house way (the settlement always sets it here).

Default: ``"foxwoods"`` — the Foxwoods Resort Casino pai gow poker house way as
published by the Wizard of Odds (wizardofodds.com/games/pai-gow-poker/house-way/foxwoods/);
every rule and the reading of each is in docs/rules-readings/688a.md.  In the rules
below the joker is an ace wherever it does not complete a straight or flush
(§ 688a.6(a)); "front" is the low hand, "back" the high hand.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import NamedTuple

from controller.rules.cards import cards_str
from controller.rules.faceup import (
    ACE,
    FaceUpError,
    Setting,
    all_settings,
    card_rank,
    check_seven,
    high_rank,
    is_foul,
    low_key,
)
from controller.rules.poker import Category

HouseWayFn = Callable[[tuple[int, ...]], Setting]

HOUSE_WAYS: dict[str, HouseWayFn] = {}
DEFAULT_HOUSE_WAY = "foxwoods"

#: "complete hands" for the straight/flush rules
_COMPLETE = frozenset({Category.STRAIGHT, Category.FLUSH, Category.STRAIGHT_FLUSH, Category.ROYAL_FLUSH})
KING = 13


class HouseWayError(FaceUpError):
    """Unknown house way, or a house way that produced a foul or invalid setting."""


def register_house_way(name: str) -> Callable[[HouseWayFn], HouseWayFn]:
    def deco(fn: HouseWayFn) -> HouseWayFn:
        if name in HOUSE_WAYS and HOUSE_WAYS[name] is not fn:
            raise HouseWayError(f"house way {name!r} registered twice")
        HOUSE_WAYS[name] = fn
        return fn

    return deco


def house_way(cards: Sequence[int] | str, name: str = DEFAULT_HOUSE_WAY) -> Setting:
    """Set the dealer's seven cards by the named house way (§ 688a.11(a))."""
    hand = check_seven(cards, "dealer's hand")
    try:
        fn = HOUSE_WAYS[name]
    except KeyError:
        raise HouseWayError(f"no house way named {name!r}; known: {', '.join(sorted(HOUSE_WAYS))}") from None
    s = fn(hand)
    if sorted(s.high + s.low) != sorted(hand) or len(s.high) != 5 or len(s.low) != 2:
        raise HouseWayError(f"house way {name!r} did not split {cards_str(hand)} into 5 + 2 cards")
    if is_foul(s.high, s.low):
        raise HouseWayError(f"house way {name!r} fouled {cards_str(hand)} as {s} (§ 688a.11(c))")
    return s


# ----------------------------------------------------------------------------- helpers
def _by_rank(cards: Sequence[int]) -> list[int]:
    """Cards highest first (joker as ace; ties by card number for determinism)."""
    return sorted(cards, key=lambda c: (card_rank(c), c), reverse=True)


def _groups(cards: Sequence[int]) -> dict[int, list[int]]:
    g: dict[int, list[int]] = defaultdict(list)
    for c in _by_rank(cards):
        g[card_rank(c)].append(c)
    return g


def _split(cards: Sequence[int], front: Sequence[int]) -> Setting:
    rest = [c for c in cards if c not in front]
    return Setting(tuple(_by_rank(rest)), tuple(_by_rank(front)))


def _front_two_highest(cards: Sequence[int], back_keep: Sequence[int]) -> Setting:
    """Keep ``back_keep`` in the back; the two highest other cards in front."""
    others = _by_rank([c for c in cards if c not in back_keep])
    return _split(cards, others[:2])


def _best_keeping_complete(cards: Sequence[int]) -> Setting | None:
    """The highest front that leaves a straight or better in back (ties: best back)."""
    best: tuple[tuple[int, int, int], int] | None = None
    choice = None
    for s in all_settings(cards):
        hr = high_rank(s.high)
        if hr.category not in _COMPLETE:
            continue
        key = (low_key(s.low), hr.score)
        if best is None or key > best:
            best, choice = key, s
    return None if choice is None else Setting(tuple(_by_rank(choice.high)), tuple(_by_rank(choice.low)))


def _has_complete(cards: Sequence[int]) -> bool:
    return any(high_rank(s.high).category in _COMPLETE for s in all_settings(cards))


# -------------------------------------------------------------------- Foxwoods house way
def _fox_two_pair(cards: Sequence[int], hi: int, lo: int, singles: list[int]) -> Setting:
    """Two pair (big pair ``hi``, small pair ``lo``):
    A-K-Q-J big pair: split (small pair in front).
    10-9-8-7: both pairs in back if an ace can go in front, otherwise split.
    6-5-4-3: both pairs in back if a king or higher can go in front, otherwise split."""
    g = _groups(cards)
    top = card_rank(singles[0]) if singles else 0
    keep = (hi <= 10 and hi >= 7 and top == ACE) or (hi <= 6 and top >= KING)
    if keep:  # ace/king and the next highest single in front
        return _split(cards, singles[:2])
    return _split(cards, g[lo][:2])


class _Shape(NamedTuple):
    """A hand's rank groups for the Foxwoods house way."""

    g: dict[int, list[int]]  # rank -> its cards
    singles: list[int]  # the unpaired cards, highest first
    pairs: list[int]  # ranks held twice, highest first
    trips: list[int]  # ranks held three times, highest first
    big: int  # the size of the largest group
    big_rank: int  # and its rank


def _shape(cards: tuple[int, ...]) -> _Shape:
    g = _groups(cards)
    sizes = sorted(((len(v), r) for r, v in g.items()), reverse=True)
    singles = _by_rank([c for r, v in g.items() if len(v) == 1 for c in v])
    pairs = sorted((r for r, v in g.items() if len(v) == 2), reverse=True)
    trips = sorted((r for r, v in g.items() if len(v) == 3), reverse=True)
    return _Shape(g, singles, pairs, trips, sizes[0][0], sizes[0][1])


def _fox(cards: tuple[int, ...]) -> Setting:
    h = _shape(cards)
    if h.big == 5:
        return _fox_five_aces(cards, h)
    if h.big == 4:
        return _fox_four(cards, h)
    # Two sets: the pair from the higher set in front.
    if len(h.trips) == 2:
        return _split(cards, h.g[h.trips[0]][:2])
    # Full house: the highest pair in front (a pair of the hand, not one taken from the set).
    if h.trips and h.pairs:
        return _split(cards, h.g[h.pairs[0]])
    # Straight, flush, straight flush (and royal flush).
    if _has_complete(cards):
        return _fox_complete(cards, h)
    return _fox_sets(cards, h)


def _fox_five_aces(cards: tuple[int, ...], h: _Shape) -> Setting:
    """Five aces: a pair of aces in front, unless a pair of kings can be played in front."""
    if h.pairs == [KING]:
        return _split(cards, h.g[KING])
    return _split(cards, h.g[ACE][:2])


def _fox_four(cards: tuple[int, ...], h: _Shape) -> Setting:
    """Four of a kind (four of a rank, or three aces and the joker)."""
    # ... with a pair (or three of a kind): the pair in front.
    if h.trips:
        return _split(cards, h.g[h.trips[0]][:2])
    if h.pairs:
        return _split(cards, h.g[h.pairs[0]])
    if h.big_rank >= 11:  # aces, kings, queens, jacks: always split
        return _split(cards, h.g[h.big_rank][:2])
    if h.big_rank >= 7:  # 10s-7s: in back if at least a king goes in front, else split
        if card_rank(h.singles[0]) >= KING:
            return _split(cards, h.singles[:2])
        return _split(cards, h.g[h.big_rank][:2])
    return _split(cards, h.singles[:2])  # 6s and below: never split


def _fox_complete(cards: tuple[int, ...], h: _Shape) -> Setting:
    """A straight, flush, straight flush or royal flush among the seven cards."""
    pairs, singles = h.pairs, h.singles
    if len(pairs) == 2:  # with two pair: the two-pair rule
        return _fox_two_pair(cards, pairs[0], pairs[1], singles)
    keep = _best_keeping_complete(cards)
    assert keep is not None
    if len(pairs) == 1 and 10 <= pairs[0] <= KING and singles and card_rank(singles[0]) == ACE:
        # exception: an ace and a pair of kings..10s: ace in front, pair in back,
        # if that front beats the one the straight/flush leaves
        alt = _split(cards, [singles[0], singles[1]])
        if low_key(alt.low) > low_key(keep.low):
            return alt
    # no pair / one pair / three of a kind: the highest front that keeps a complete hand
    return keep


def _fox_sets(cards: tuple[int, ...], h: _Shape) -> Setting:
    """Three pair, three of a kind, two pair, one pair, no pair."""
    pairs, singles = h.pairs, h.singles
    # Three pair: the high pair in front.
    if len(pairs) == 3:
        return _split(cards, h.g[pairs[0]])
    # Three of a kind: aces -> an ace and the next highest card in front;
    # kings and below -> the set in back, the two highest cards in front.
    if h.trips:
        if h.trips[0] == ACE:
            return _split(cards, [h.g[ACE][0], singles[0]])
        return _split(cards, singles[:2])
    if len(pairs) == 2:
        return _fox_two_pair(cards, pairs[0], pairs[1], singles)
    # One pair: the pair in back, the two highest other cards in front.
    if len(pairs) == 1:
        return _split(cards, singles[:2])
    # No pair: the highest card in back, the second and third highest in front.
    return _split(cards, singles[1:3])


register_house_way("foxwoods")(_fox)


def _best_low(cards: tuple[int, ...]) -> Setting:
    """A simple alternative for tables that submit it: the highest low hand that does
    not foul (ties: the best high hand)."""
    best = max((s for s in all_settings(cards) if not s.foul), key=lambda s: (low_key(s.low), high_rank(s.high).score))
    return Setting(tuple(_by_rank(best.high)), tuple(_by_rank(best.low)))


register_house_way("highest-low")(_best_low)

__all__ = ["DEFAULT_HOUSE_WAY", "HOUSE_WAYS", "HouseWayError", "house_way", "register_house_way"]
