"""A deliberately plain reference poker evaluator, used only by tests and cross-checks.

Written independently of controller/rules/poker.py (no shared code beyond the
card numbering): it substitutes every joker/wild card by concrete cards, ranks
each resulting ordinary five-card hand by counting ranks and suits, and keeps
the best.  Slow (up to milliseconds per hand) and obviously correct is the point.

* bug (§ 670a.6(a)): the joker is an ace of no suit (pairs etc.), or any
  card not in the hand when that makes a straight, flush or straight flush.
* dj-wild (§ 687a.6(b)): each deuce and the joker becomes any rank (suits do
  not matter off a flush), or, when every natural card has one suit, any
  distinct card of that suit; five wild cards are "five wilds".
* natural: no substitution.

A hand's value is ``(level, tiebreak tuple)``; larger tuples rank higher.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations, combinations_with_replacement

JOKER = 52
NO_SUIT = -1

# level names, lowest first
ORDER = {
    "bug": [
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
    ],
    "dj-wild": [
        "high-card",
        "pair",
        "two-pair",
        "three-of-a-kind",
        "straight",
        "flush",
        "full-house",
        "four-of-a-kind",
        "straight-flush",
        "five-of-a-kind",
        "royal-flush",
        "five-wilds",
    ],
    "natural": [
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
    ],
}


def _plain(rank_suits: list[tuple[int, int]], rules: str) -> tuple[str, tuple[int, ...]]:
    """Name and tie-break of five concrete (rank, suit) cards; suit -1 never makes a flush."""
    ranks = sorted((r for r, _ in rank_suits), reverse=True)
    suits = {s for _, s in rank_suits}
    flush = len(suits) == 1 and NO_SUIT not in suits
    straight_top = _straight_top(ranks)
    if straight_top is not None:
        return _straight(straight_top, flush, rules)
    if flush:
        return "flush", tuple(ranks)
    return _groups(ranks, rules)


def _straight_top(ranks: list[int]) -> int | None:
    """The top rank of five distinct ranks (highest first) in a run, the wheel's 5; None: no straight."""
    if len(set(ranks)) != 5:
        return None
    if ranks[0] - ranks[4] == 4:
        return ranks[0]
    return 5 if ranks == [14, 5, 4, 3, 2] else None


def _straight(straight_top: int, flush: bool, rules: str) -> tuple[str, tuple[int, ...]]:
    """A straight, straight flush or royal flush topped by ``straight_top``."""
    if rules == "bug":  # § 670a.6(b)(3),(7): wheel just below A-high
        order_val = {14: 15, 5: 14}.get(straight_top, straight_top)
    else:
        order_val = straight_top
    if flush:
        return ("royal-flush", ()) if straight_top == 14 else ("straight-flush", (order_val,))
    return "straight", (order_val,)


#: the hands of matched ranks by their shape (the group sizes, largest first)
_SHAPES = {
    (4, 1): "four-of-a-kind",
    (3, 2): "full-house",
    (3, 1, 1): "three-of-a-kind",
    (2, 2, 1): "two-pair",
    (2, 1, 1, 1): "pair",
    (1, 1, 1, 1, 1): "high-card",
}


def _groups(ranks: list[int], rules: str) -> tuple[str, tuple[int, ...]]:
    """A hand of five ranks by its groups, the larger (then higher) groups first."""
    groups = sorted(Counter(ranks).items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    shape = tuple(n for _, n in groups)
    tb = tuple(r for r, _ in groups)
    if shape == (5,):
        if rules == "bug":
            return ("five-aces", tb) if tb == (14,) else ("invalid", ())
        return "five-of-a-kind", tb
    return _SHAPES[shape], tb


def _value(name: str, tb: tuple[int, ...], rules: str) -> tuple[int, tuple[int, ...]]:
    return ORDER[rules].index(name), tb


def ref_eval_five(cards: tuple[int, ...], rules: str) -> tuple[str, tuple[int, tuple[int, ...]]]:
    """(category name, comparable value) of exactly five distinct cards."""
    assert len(cards) == 5 and len(set(cards)) == 5
    wild = [c for c in cards if c == JOKER or (rules == "dj-wild" and c < 4)]
    nat = [((c // 4) + 2, c % 4) for c in cards if c not in wild]
    if not wild:
        name, tb = _plain(nat, rules)
        return name, _value(name, tb, rules)
    return _best_with_wilds(nat, len(wild), rules)


def _best_with_wilds(nat: list[tuple[int, int]], wilds: int, rules: str) -> tuple[str, tuple[int, tuple[int, ...]]]:
    """The best hand the ``wilds`` joker/wild cards make with the natural cards ``nat``."""
    if rules == "natural":
        raise ValueError("joker in natural rules")
    if rules == "dj-wild" and wilds == 5:
        return "five-wilds", _value("five-wilds", (), rules)
    cands = _bug_candidates(nat, rules) if rules == "bug" else _wild_candidates(nat, wilds, rules)
    best = max((_value(n, tb, rules), n) for n, tb in cands if n != "invalid")
    return best[1], best[0]


def _bug_candidates(nat: list[tuple[int, int]], rules: str) -> list[tuple[str, tuple[int, ...]]]:
    """Every hand the joker may make: an ace, or any card absent from the hand for straights and flushes."""
    # the joker as an ace (no suit, so no flush)
    cands = [_plain(nat + [(14, NO_SUIT)], rules)]
    # the joker as any card absent from the hand, only for straights and flushes
    present = set(nat)
    for r in range(2, 15):
        for s in range(4):
            if (r, s) in present:
                continue
            name, tb = _plain(nat + [(r, s)], rules)
            if name in ("straight", "flush", "straight-flush", "royal-flush"):
                cands.append((name, tb))
    return cands


def _wild_candidates(nat: list[tuple[int, int]], wilds: int, rules: str) -> list[tuple[str, tuple[int, ...]]]:
    """dj-wild: every hand the wild cards may make (any ranks; any cards of the suit for a flush)."""
    cands = [
        _plain(nat + [(r, NO_SUIT) for r in rs], rules) for rs in combinations_with_replacement(range(2, 15), wilds)
    ]
    suits = {s for _, s in nat}
    if len(suits) == 1:
        (s,) = suits
        used = {r for r, _ in nat}
        free = [r for r in range(2, 15) if r not in used]
        cands += [_plain(nat + [(r, s) for r in rs], rules) for rs in combinations(free, wilds)]
    return cands


def ref_best_five(cards: tuple[int, ...], rules: str) -> tuple[str, tuple[int, tuple[int, ...]]]:
    """Best over every five-card subset (5, 6 or 7 cards)."""
    return max((ref_eval_five(sub, rules) for sub in combinations(cards, 5)), key=lambda nv: nv[1])
