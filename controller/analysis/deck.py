"""Exact best-five-card category frequencies of N cards dealt from the deck.

``tablectl analyze --deck 53 --cards N`` (N = 5, 6, 7): every N-card hand from
the 53-card deck (§ 670a.3(a): 52 cards + one joker), classified by its best
five-card hand with the joker as a bug (§ 670a.6).  ``--deck 52`` does the same
for the plain 52-card deck.  Options:

``-o method=exact`` (default)
    Exact combinatorics: the best hand ignoring suits depends only on the rank
    multiset (plus the joker), and a flush needs five cards of one suit (four
    plus the joker).  With N <= 7 at most one suit can hold that many, so every
    hand is either "no flush possible" (counted per rank multiset as the product
    of C(4, count) suit choices, less the flush-capable ones) or has exactly one
    flush suit, enumerated as (suit, that suit's rank set, the other cards'
    ranks with C(3, count) suit choices each).  A few seconds for N = 7.
``-o method=enumerate``
    Evaluates every one of the C(53, N) hands with the vectorised evaluator
    (controller/rules/poker_batch.py): an independent count of the same
    figures (C(53, 7) = 154,143,080 hands take about a minute).
``-o rules=dj-wild``
    DJ Wild rankings (§ 687a.6, deuces and joker wild); enumeration only.

There is no wager, hence no payback: the table ends with the total (``payback`` is None).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from itertools import combinations
from math import comb, prod
from typing import Any

from controller.analysis import AnalysisResult, AnalysisRow, analyzer
from controller.rules import poker as P
from controller.rules.poker import Category

_METHODS = ("exact", "enumerate")


def _nonflush_memo(rules: str) -> Callable[[list[int], int], int]:
    memo: dict[tuple[int, ...], int] = {}

    def score(counts: list[int], joker: int) -> int:
        key = (*counts, joker)
        s = memo.get(key)
        if s is None:
            s = memo[key] = P._nonflush_score(counts, joker, rules)
        return s

    return score


def _rank_multisets(size: int, cap: int) -> Iterator[list[int]]:
    """Rank-count lists (index 2..14) of ``size`` cards with at most ``cap`` per rank."""
    from controller.rules.poker_batch import multisets

    yield from multisets(tuple(range(2, 15)), size, cap)


def exact_counts(cards: int, rules: str = "bug") -> dict[Category, int]:
    """Exact category counts over all ``cards``-card hands from 53 (bug) or 52 (natural)
    cards, by rank-multiset and suit-pattern combinatorics (see the module docstring)."""
    if rules not in ("bug", "natural"):
        raise ValueError(f"exact combinatorics support the bug and natural rules, not {rules!r}")
    if not 5 <= cards <= 7:
        raise ValueError(f"cards must be 5, 6 or 7, not {cards}")
    nonflush = _nonflush_memo(rules)
    levels = P.category_levels(rules)
    by_level = [0] * len(levels)
    for joker in (0, 1) if rules == "bug" else (0,):
        _count_with_joker(by_level, cards - joker, joker, rules, nonflush)
    return {levels[i]: n for i, n in enumerate(by_level)}


def _count_with_joker(
    by_level: list[int], m: int, joker: int, rules: str, nonflush: Callable[[list[int], int], int]
) -> None:
    """Add to ``by_level`` the hands of ``m`` natural cards (plus ``joker`` jokers): the flush-capable
    ones by their flush suit, then every other rank multiset with its non-flush suit choices."""
    shift = P._SHIFT
    flush_capable = _count_flush_capable(by_level, m, joker, rules, nonflush)
    for counts in _rank_multisets(m, 4):
        ways = prod(comb(4, c) for c in counts if c) - flush_capable.get(tuple(counts), 0)
        if ways:
            by_level[nonflush(counts, joker) >> shift] += ways


def _count_flush_capable(
    by_level: list[int], m: int, joker: int, rules: str, nonflush: Callable[[list[int], int], int]
) -> dict[tuple[int, ...], int]:
    """Add to ``by_level`` the hands holding a flush suit; return how many there are per rank multiset."""
    shift = P._SHIFT
    need = 5 - joker  # natural cards of one suit for a flush
    assert 2 * need > m  # so at most one suit can hold a flush
    flush_capable: dict[tuple[int, ...], int] = defaultdict(int)
    for k in range(need, m + 1):  # k cards of the flush suit
        for suit_ranks in combinations(range(2, 15), k):
            fs = P._flush_score(sum(1 << r for r in suit_ranks), joker, rules)
            for rest in _rank_multisets(m - k, 3):  # the others, from the other 3 suits
                ways = 4 * prod(comb(3, c) for c in rest if c)
                counts = list(rest)
                for r in suit_ranks:
                    counts[r] += 1
                flush_capable[tuple(counts)] += ways
                by_level[max(fs, nonflush(counts, joker)) >> shift] += ways
    return flush_capable


def iter_hands(n: int, k: int, chunk: int = 1 << 16) -> Iterator[list[Any]]:
    """Every k-card hand (k = 5, 6, 7) from cards 0..n-1, as lists of k card columns
    (ints for the fixed leading cards, numpy arrays for the rest), chunk rows at a time."""
    import numpy as np

    tail = np.fromiter(
        (c for combo in combinations(range(n), 5) for c in combo), dtype=np.int16, count=5 * comb(n, 5)
    ).reshape(-1, 5)
    first = tail[:, 0]
    for prefix in combinations(range(n), k - 5):
        start = int(np.searchsorted(first, prefix[-1], side="right")) if prefix else 0
        for a in range(start, len(tail), chunk):
            t = tail[a : a + chunk]
            yield [*prefix, *(t[:, j] for j in range(5))]


def enumerated_counts(cards: int, rules: str = "bug") -> dict[Category, int]:
    """Category counts by evaluating every hand (vectorised)."""
    import numpy as np

    from controller.rules.poker_batch import score_columns

    if not 5 <= cards <= 7:
        raise ValueError(f"cards must be 5, 6 or 7, not {cards}")
    levels = P.category_levels(rules)
    total = np.zeros(len(levels), dtype=np.int64)
    n = 52 if rules == "natural" else 53
    for cols in iter_hands(n, cards):
        s, _ = score_columns(cols, rules, want_natural=False)
        total += np.bincount(s >> P._SHIFT, minlength=len(levels))
    return {levels[i]: int(c) for i, c in enumerate(total)}


def _deck_options(deck: int, options: dict[str, str]) -> tuple[int, str, str]:
    """(cards, rules, method) of ``-o``, checked: 5-7 cards, a method known, rules of this deck."""
    try:
        cards = int(options.get("cards", "5"))
    except ValueError:
        raise ValueError(f"cards must be 5, 6 or 7, not {options.get('cards')!r}") from None
    rules = options.get("rules", "bug" if deck == 53 else "natural")
    method = options.get("method", "exact" if rules != "dj-wild" else "enumerate")
    if cards not in (5, 6, 7):
        raise ValueError(f"cards must be 5, 6 or 7, not {cards}")
    if method not in _METHODS:
        raise ValueError(f"method must be one of {', '.join(_METHODS)}, not {method!r}")
    if (deck == 52) != (rules == "natural"):
        raise ValueError(f"rules {rules!r} do not apply to a {deck}-card deck")
    return cards, rules, method


def _result(deck: int, options: dict[str, str]) -> AnalysisResult:
    cards, rules, method = _deck_options(deck, options)
    counts = exact_counts(cards, rules) if method == "exact" else enumerated_counts(cards, rules)
    total = sum(counts.values())
    if total != comb(deck, cards):
        raise ArithmeticError(f"counted {total} hands, expected C({deck},{cards}) = {comb(deck, cards)}")
    rows = [AnalysisRow(cat.text, counts[cat]) for cat in reversed(P.category_levels(rules))]
    section = {
        "bug": "§ 670a.6 (joker as a bug)",
        "natural": "plain poker",
        "dj-wild": "§ 687a.6 (deuces and joker wild)",
    }[rules]
    return AnalysisResult(
        title=f"best five of {cards} cards from {deck}: {section}, {method} count",
        rows=rows,
        total=total,
        payback=None,
        notes=[
            f"C({deck},{cards}) = {comb(deck, cards)} hands; categories ranked highest first",
            "no wager is analysed, so there is no payback line",
        ],
    )


@analyzer("deck", "53")
def deck_53(paytable: str | None, options: dict[str, str]) -> AnalysisResult:
    """Best-five categories of N cards from the 53-card Pai Gow deck (§ 670a.3(a), § 670a.6)."""
    return _result(53, options)


@analyzer("deck", "52")
def deck_52(paytable: str | None, options: dict[str, str]) -> AnalysisResult:
    """Best-five categories of N cards from a plain 52-card deck."""
    return _result(52, options)
