"""Fortune Asia Poker house ways: how the dealer's hands are set.

Pure: no I/O.  § 659a.11(c): "The certificate holder shall specify in its Rules
Submission under § 601a.2 the manner in which the hands of the dealer shall be
set"; § 659a.11(a)(1): a player who asks for help is told that manner.  The
regulations print no house way, so house ways are pluggable: a registry of
named functions, one selected by the table profile (option ``house_way``).

Registered here (every rule is written out in docs/rules-readings/659a.md):

``"tablectl-standard"`` (the default)
    A decision list in the form casinos publish house ways (by what the seven
    cards hold: four of a kind, two trips, trips with pairs, trips, three pair,
    two pair, one pair, no pair), following the principles public rule cards
    state for Asia Poker: never foul; play a four-card straight or flush in the
    high hand when it frees a pair for the medium hand; split two pair;
    otherwise keep the pair high and the best odd cards in the medium and low
    hands.
``"highest-high"``
    The strongest possible high hand, then the strongest medium hand from the
    rest.  Simple, and provably never fouls.

Both are tested never to foul (property tests); the table refuses an unknown
name.  To run a casino's own Rules Submission house way, register it here with
:func:`register_house_way` and name it in the table profile.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from itertools import combinations

from controller.rules.cards import ACE, JOKER, rank_of
from controller.rules.fortune_asia_hands import (
    FortuneAsiaError,
    HandCat,
    Setting,
    high_hand,
    key1,
    key2,
    key4,
    low_hand,
    medium_hand,
)
from controller.rules.fortune_asia_seven import seven_facts

HouseWay = Callable[[Sequence[int]], Setting]
HOUSE_WAYS: dict[str, HouseWay] = {}
DEFAULT_HOUSE_WAY = "tablectl-standard"


def register_house_way(name: str) -> Callable[[HouseWay], HouseWay]:
    def deco(fn: HouseWay) -> HouseWay:
        if name in HOUSE_WAYS and HOUSE_WAYS[name] is not fn:
            raise RuntimeError(f"house way {name!r} registered twice")
        HOUSE_WAYS[name] = fn
        return fn

    return deco


def get_house_way(name: str | None = None) -> HouseWay:
    key = name or DEFAULT_HOUSE_WAY
    try:
        return HOUSE_WAYS[key]
    except KeyError:
        raise FortuneAsiaError(f"no house way named {key!r}; known: {', '.join(sorted(HOUSE_WAYS))}") from None


def set_house_way(seven: Sequence[int], name: str | None = None) -> Setting:
    """Set seven cards the named house way (§ 659a.11(c)); refuses bad cards."""
    seven_facts(seven)  # validates count, duplicates, card numbers
    setting = get_house_way(name)(tuple(seven))
    why = setting.foul()
    if why:  # pragma: no cover - the property tests say this never happens
        raise AssertionError(f"house way {name or DEFAULT_HOUSE_WAY!r} fouled {setting}: {why}")
    return setting


def _pr(c: int) -> int:
    """Rank for pairing and for odd cards: the joker is an ace (§ 659a.6(a))."""
    return ACE if c == JOKER else rank_of(c)


def _desc(cards: Sequence[int]) -> list[int]:
    """Highest first; of equal ranks the natural card before the joker, then by card number."""
    return sorted(cards, key=lambda c: (_pr(c), c != JOKER, c), reverse=True)


def _make(high: Sequence[int], medium: Sequence[int], low: Sequence[int]) -> Setting:
    return Setting(high_hand(tuple(high)), medium_hand(tuple(medium)), low_hand(tuple(low)))


def _best_sf_high(cards: Sequence[int]) -> tuple[int, ...] | None:
    """Among ``cards``, the four forming the best straight, flush or straight
    flush (joker completing it), preferring the choice that leaves the highest
    cards out; None if there is none."""
    best: tuple[tuple[object, ...], tuple[int, ...]] | None = None
    for four in combinations(cards, 4):
        k = key4(four)
        if k[0] not in (HandCat.STRAIGHT, HandCat.FLUSH, HandCat.STRAIGHT_FLUSH):
            continue
        rest = tuple(_pr(c) for c in _desc([c for c in cards if c not in four]))
        score = (k[0], rest, k)
        if best is None or score > best[0]:
            best = (score, four)
    return best[1] if best else None


def _groups(seven: Sequence[int]) -> list[list[int]]:
    """Cards grouped by pairing rank (joker with the aces), biggest group first,
    then higher rank first."""
    by: dict[int, list[int]] = defaultdict(list)
    for c in seven:
        by[_pr(c)].append(c)
    return sorted((_desc(g) for g in by.values()), key=lambda g: (len(g), _pr(g[0])), reverse=True)


@register_house_way("tablectl-standard")
def standard(seven: Sequence[int]) -> Setting:
    """The default house way; rule numbers refer to docs/rules-readings/659a.md."""
    g = _groups(seven)
    shape = [len(x) for x in g]
    singles = _desc([c for x in g if len(x) == 1 for c in x])
    for applies, rule in _STANDARD_RULES:  # the first that applies to the hand's shape
        if applies(shape):
            return rule(g, singles)
    raise AssertionError(f"no house way rule for the shape {shape}")  # pragma: no cover - HW-8 takes any


def _hw1_quads(g: list[list[int]], singles: list[int]) -> Setting:
    """HW-1 four of a kind (four aces with the joker; five aces keep four): the four high;
    a pair among the other three goes medium, else the two highest; the last card low."""
    quad, extra = g[0][:4], g[0][4:]
    rest = _desc(extra + [c for x in g[1:] for c in x])
    pair = _pair_in(rest)
    if pair:
        return _make(quad, pair, [c for c in rest if c not in pair])
    return _make(quad, rest[:2], rest[2:])


def _hw2_two_trips(g: list[list[int]], singles: list[int]) -> Setting:
    """HW-2 two three-of-a-kinds: the higher trips high with the lower leftover of
    (third card of the lower trips, the odd card); a pair of the lower trips medium;
    the higher leftover low."""
    t1, t2 = g[0], g[1]
    left = _desc([t2[2]] + singles)
    return _make(t1 + [left[1]], t2[:2], [left[0]])


def _hw3_trips_and_pair(g: list[list[int]], singles: list[int]) -> Setting:
    """HW-3 three of a kind and a pair (or two pairs): trips high; the highest pair medium;
    the higher remaining card low, the other completes the high hand."""
    trips, pair = g[0], g[1]
    left = _desc([c for x in g[2:] for c in x])
    return _make(trips + [left[1]], pair, [left[0]])


def _hw4_trips(g: list[list[int]], singles: list[int]) -> Setting:
    """HW-4 three of a kind alone: if the four odd cards make a straight or flush, play it
    high, a pair of the trips medium, the third low; else trips and the lowest odd card
    high, the two highest odd cards medium, the next low."""
    trips = g[0]
    sf = _best_sf_high(singles)
    if sf is not None:
        return _make(sf, trips[:2], trips[2:])
    return _make(trips + [singles[3]], singles[:2], [singles[2]])


def _hw5_three_pair(g: list[list[int]], singles: list[int]) -> Setting:
    """HW-5 three pair: the two lower pairs high, the highest pair medium, the odd card low."""
    return _make(g[1] + g[2], g[0], g[3])


def _hw6_two_pair(g: list[list[int]], singles: list[int]) -> Setting:
    """HW-6 two pair: split -- the higher pair and the two lowest odd cards high, the lower
    pair medium, the highest odd card low."""
    return _make(g[0] + singles[1:], g[1], [singles[0]])


def _hw7_one_pair(g: list[list[int]], singles: list[int]) -> Setting:
    """HW-7 one pair: if four of the five odd cards make a straight or flush, play it high,
    the pair medium, the odd card left low; else the pair and the two lowest odd cards
    high, the two highest odd cards medium, the third low."""
    pair = g[0]
    sf = _best_sf_high(singles)
    if sf is not None:
        return _make(sf, pair, [c for c in singles if c not in sf])
    return _make(pair + singles[3:], singles[:2], [singles[2]])


def _hw8_no_pair(g: list[list[int]], singles: list[int]) -> Setting:
    """HW-8 no pair: the best straight or flush high (keeping the highest cards out of it),
    the two highest other cards medium, the last low; else the highest card with the three
    lowest high, the 2nd and 3rd highest medium, the 4th highest low."""
    sf = _best_sf_high(singles)
    if sf is not None:
        rest = _desc([c for c in singles if c not in sf])
        return _make(sf, rest[:2], rest[2:])
    return _make([singles[0]] + singles[4:], singles[1:3], [singles[3]])


#: (applies to the group sizes, largest first; the rule), in the order the rules are tried
_STANDARD_RULES: tuple[tuple[Callable[[list[int]], bool], Callable[[list[list[int]], list[int]], Setting]], ...] = (
    (lambda shape: shape[0] >= 4, _hw1_quads),
    (lambda shape: shape[:2] == [3, 3], _hw2_two_trips),
    (lambda shape: shape[0] == 3 and shape[1] == 2, _hw3_trips_and_pair),
    (lambda shape: shape[0] == 3, _hw4_trips),
    (lambda shape: shape[:3] == [2, 2, 2], _hw5_three_pair),
    (lambda shape: shape[:2] == [2, 2], _hw6_two_pair),
    (lambda shape: shape[0] == 2, _hw7_one_pair),
    (lambda shape: True, _hw8_no_pair),
)


def _pair_in(cards: Sequence[int]) -> list[int] | None:
    by: dict[int, list[int]] = defaultdict(list)
    for c in cards:
        by[_pr(c)].append(c)
    pairs = [g for g in by.values() if len(g) >= 2]
    return _desc(max(pairs, key=lambda g: _pr(g[0])))[:2] if pairs else None


@register_house_way("highest-high")
def highest_high(seven: Sequence[int]) -> Setting:
    """The best high hand (ties: the one leaving the best medium, then low hand),
    the best medium hand from the other three, the last card low.

    Never fouls: the best four-card hand outranks any four-card hand holding the
    medium's two cards, which outranks the medium (§ 659a.11(b)); the medium holds
    the higher of its three cards, so it outranks the low."""
    best: tuple[tuple[object, ...], tuple[int, ...], tuple[int, int], int] | None = None
    for four in combinations(seven, 4):
        a, b, c = (x for x in seven if x not in four)
        hk = key4(four)
        for med, lo in (((a, b), c), ((a, c), b), ((b, c), a)):
            score = (hk, key2(*med), key1(lo))
            if best is None or score > best[0]:
                best = (score, four, med, lo)
    assert best is not None
    return _make(best[1], best[2], [best[3]])
