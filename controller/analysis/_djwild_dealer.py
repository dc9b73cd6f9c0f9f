"""Exact player-versus-dealer counts for five-card stud games (used by the DJ Wild
analysis, § 687a.11(e)).  Generic over the deck size so tests can check it against
brute force on a small deck.

For a player hand P (score s) the dealer holds one of the C(deck-5, 5) hands of the
remaining cards.  By inclusion–exclusion over the subsets T of P,

    #{D disjoint from P : score(D) < s} = sum_{T ⊆ P} (-1)^|T| #{H ⊇ T : score(H) < s}

(likewise with <=).  For each subset size k the pairs (T, score(H)) over all hands
H ⊇ T are sorted once.  The pairs the player hands query are the same multiset —
P asks about each of its own subsets T with its own score — so each count is a
position in the sorted array: no per-hand loop, no sampling.

Memory (issue 15: a Pi with 1-2 GB must run ``tablectl analyze``): the pairs of one
size k are sorted in place (no ``argsort`` permutation beside them) and the hands ask
one subset position at a time, so besides the sorted pairs (n x C(5, k) int64, 230 MB
for k = 2 and 3 on the 53-card deck) only arrays of n entries are alive.  The counts
are the same positions in the same sorted array as before, so the figures are identical.
"""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np


def subset_index(cols: list[np.ndarray], deck: int) -> np.ndarray:
    """Combinatorial-number-system index of the sorted k-subsets given column-wise."""
    table = np.array([[comb(n, k) for k in range(6)] for n in range(deck + 1)], dtype=np.int64)
    idx = np.zeros(cols[0].shape, dtype=np.int64)
    for j, c in enumerate(cols, start=1):
        idx += table[c.astype(np.int64), j]
    return idx


#: player hands per block of questions (8 MB per int64 array of a block)
_BLOCK = 1 << 20


def _keys(hands: np.ndarray, pos: tuple[int, ...], deck: int, shift: np.int64, s: np.ndarray) -> np.ndarray:
    """``index(T) * shift + score`` for the subset T at positions ``pos`` of every hand."""
    key: np.ndarray = subset_index([hands[:, p] for p in pos], deck) * shift + s
    return key


def _sorted_pairs(
    hands: np.ndarray, subsets: list[tuple[int, ...]], deck: int, shift: np.int64, s: np.ndarray
) -> np.ndarray:
    """Every (T, score(H)) pair of the subsets' size, as one int64 key, sorted in place: the only
    array of n x C(5, k) entries (28.7M for the 53-card deck: 230 MB) alive at a time."""
    n = len(hands)
    sf = np.empty(n * len(subsets), dtype=np.int64)
    for j, pos in enumerate(subsets):
        for lo in range(0, n, _BLOCK):
            hi = min(n, lo + _BLOCK)
            sf[j * n + lo : j * n + hi] = _keys(hands[lo:hi], pos, deck, shift, s[lo:hi])
    sf.sort()
    return sf


def _count_block(
    sf: np.ndarray,
    hands: np.ndarray,
    pos: tuple[int, ...],
    deck: int,
    shift: np.int64,
    s: np.ndarray,
    rows: slice,
    sign: int,
    lt: np.ndarray,
    le: np.ndarray,
) -> None:
    """For the hands of ``rows``, the pairs of their subset at ``pos`` that score lower (into
    ``lt``) and not higher (into ``le``), added or taken away by ``sign``."""
    key = _keys(hands[rows], pos, deck, shift, s[rows])
    order = np.argsort(key)
    key = key[order]
    start = np.searchsorted(sf, key - s[rows][order], "left")  # T's group: score 0
    below = np.searchsorted(sf, key, "left")
    below -= start
    upto = np.searchsorted(sf, key, "right")
    upto -= start
    idx = order + rows.start
    if sign > 0:
        lt[idx] += below
        le[idx] += upto
    else:
        lt[idx] -= below
        le[idx] -= upto


def _checked_scores(hands: np.ndarray, scores: np.ndarray, deck: int) -> np.ndarray:
    """The scores as int64, once ``hands`` are all the deck's five-card hands and no score is negative."""
    if len(hands) != comb(deck, 5) or hands.shape[1] != 5:
        raise ValueError(f"need all C({deck},5) = {comb(deck, 5)} hands, got {hands.shape}")
    s = scores.astype(np.int64)
    if s.min() < 0:
        raise ValueError("scores must be non-negative")
    return s


def dealer_counts(hands: np.ndarray, scores: np.ndarray, deck: int) -> tuple[np.ndarray, np.ndarray, int]:
    """``(lt, tie, n_dealer)``: for each hand of ``hands`` (every 5-subset of range(deck),
    each row sorted), how many of the ``n_dealer = C(deck-5, 5)`` dealer hands disjoint
    from it score lower, and how many score the same."""
    n = len(hands)
    s = _checked_scores(hands, scores, deck)
    shift = np.int64(1) << np.int64(int(s.max()).bit_length())
    lt = np.zeros(n, dtype=np.int64)
    le = np.zeros(n, dtype=np.int64)
    srt = np.sort(s)  # k = 0: every hand of the deck
    lt += np.searchsorted(srt, s, "left")
    le += np.searchsorted(srt, s, "right")
    del srt
    for k in range(1, 5):
        sign = -1 if k % 2 else 1
        subsets = list(combinations(range(5), k))
        sf = _sorted_pairs(hands, subsets, deck, shift, s)
        # each hand asks, for each of its own subsets T, where its key falls among the pairs of T:
        # pairs before it in T's group score lower (left), or not higher (right).  The questions
        # go in blocks, each sorted first: a binary search for sorted keys starts where the last
        # one ended (numpy's searchsorted), far kinder to the cache than keys in hand order
        for pos in subsets:
            for lo in range(0, n, _BLOCK):
                _count_block(sf, hands, pos, deck, shift, s, slice(lo, min(n, lo + _BLOCK)), sign, lt, le)
        del sf
    le -= 1  # k = 5: T = P itself, whose score is not below s but equals it
    tie = le - lt
    n_dealer = comb(deck - 5, 5)
    if lt.min() < 0 or tie.min() < 0 or le.max() > n_dealer:
        raise AssertionError("inclusion-exclusion produced an impossible count")
    return lt, tie, n_dealer
