"""A tiny, slow, test-only reference for the bug-joker five-card ranking of § 670a.6.

Not product code: the product uses ``controller.rules.poker``.  Tests use this to
cross-check categories (and obvious comparisons) by brute force: the joker is tried
as an ace (§ 670a.6(a)) and as every card that would complete a straight, flush or
straight flush, and the best reading is kept.

Score tuples: (category order, tie-break ranks...).  Category order follows
§ 670a.6(b): five aces > royal flush > straight flush (A-2-3-4-5 highest, then
K-high ... 6-high) > four of a kind > full house > flush > straight (A-K-Q-J-T,
then A-2-3-4-5, then K-high ... 6-high) > three of a kind > two pair > pair > high card.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations

JOKER = 52
ORDER = [
    "high-card",
    "pair",
    "two-pair",
    "three-of-a-kind",
    "straight",
    "flush",
    "full-house",
    "four-of-a-kind",
    "straight-flush",
    "royal-flush",
    "five-aces",
]
CAT = {name: i for i, name in enumerate(ORDER)}


def _straight_value(ranks: list[int]) -> int | None:
    """2 x the straight's position: broadway 28, wheel 27, K-high 26 ... 6-high 12."""
    s = sorted(set(ranks))
    if len(s) != 5:
        return None
    if s == [2, 3, 4, 5, 14]:
        return 27
    if s[4] - s[0] == 4:
        return 28 if s[4] == 14 else 2 * s[4]
    return None


def _natural(cards: list[tuple[int, int | None]]) -> tuple[int, ...]:
    ranks = [r for r, _ in cards]
    suits = [s for _, s in cards]
    flush = None not in suits and len(set(suits)) == 1
    st = _straight_value(ranks)
    cnt = Counter(ranks)
    if cnt.get(14) == 5:
        return (CAT["five-aces"],)
    if flush and st is not None:
        if st == 28:
            return (CAT["royal-flush"],)
        return (CAT["straight-flush"], 30 if st == 27 else st)  # wheel SF is the highest SF
    groups = sorted(((n, r) for r, n in cnt.items()), reverse=True)
    shape = [n for n, _ in groups]
    tb = tuple(r for _, r in groups)
    if shape[0] == 4:
        return (CAT["four-of-a-kind"],) + tb
    if shape == [3, 2]:
        return (CAT["full-house"],) + tb
    if flush:
        return (CAT["flush"],) + tuple(sorted(ranks, reverse=True))
    if st is not None:
        return (CAT["straight"], st)
    if shape[0] == 3:
        return (CAT["three-of-a-kind"],) + tb
    if shape[:2] == [2, 2]:
        return (CAT["two-pair"],) + tb
    if shape[0] == 2:
        return (CAT["pair"],) + tb
    return (CAT["high-card"],) + tuple(sorted(ranks, reverse=True))


def ref_five(cards) -> tuple[int, ...]:
    cards = list(cards)
    assert len(cards) == 5
    nat = [(c // 4 + 2, c % 4) for c in cards if c != JOKER]
    if len(nat) == 5:
        return _natural(nat)
    best = _natural(nat + [(14, None)])  # the joker as an ace
    for r in range(2, 15):
        for s in range(4):
            sc = _natural(nat + [(r, s)])
            if sc[0] in (CAT["straight"], CAT["flush"], CAT["straight-flush"], CAT["royal-flush"]):
                best = max(best, sc)
    return best


def ref_best(cards) -> tuple[int, ...]:
    return max(ref_five(h) for h in combinations(cards, 5))


def ref_category(cards) -> str:
    sc = ref_five(cards) if len(cards) == 5 else ref_best(cards)
    return ORDER[sc[0]]
