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

Memory (a Pi with 1-2 GB must run ``tablectl analyze``): the pairs of one
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


class _Questions:
    """The deck's hands and their scores, keyed as (subset, score) pairs, and the counts being
    built: for each hand, the dealer hands below it (``lt``) and not above it (``le``)."""

    def __init__(self, hands: np.ndarray, s: np.ndarray, deck: int):
        self.hands, self.s, self.deck = hands, s, deck
        self.shift = np.int64(1) << np.int64(int(s.max()).bit_length())
        srt = np.sort(s)  # k = 0: every hand of the deck
        self.lt = np.searchsorted(srt, s, "left").astype(np.int64)
        self.le = np.searchsorted(srt, s, "right").astype(np.int64)

    def keys(self, rows: slice, pos: tuple[int, ...]) -> np.ndarray:
        """``index(T) * shift + score`` for the subset T at positions ``pos`` of the hands of ``rows``."""
        key: np.ndarray = subset_index([self.hands[rows, p] for p in pos], self.deck) * self.shift + self.s[rows]
        return key

    def blocks(self) -> list[slice]:
        n = len(self.hands)
        return [slice(lo, min(n, lo + _BLOCK)) for lo in range(0, n, _BLOCK)]

    def sorted_pairs(self, subsets: list[tuple[int, ...]]) -> np.ndarray:
        """Every (T, score(H)) pair of the subsets' size, as one int64 key, sorted in place: the only
        array of n x C(5, k) entries (28.7M for the 53-card deck: 230 MB) alive at a time."""
        n = len(self.hands)
        sf = np.empty(n * len(subsets), dtype=np.int64)
        for j, pos in enumerate(subsets):
            for rows in self.blocks():
                sf[j * n + rows.start : j * n + rows.stop] = self.keys(rows, pos)
        sf.sort()
        return sf

    def count(self, sf: np.ndarray, pos: tuple[int, ...], rows: slice, sign: int) -> None:
        """For the hands of ``rows``, the pairs of their subset at ``pos`` that score lower (into
        ``lt``) and not higher (into ``le``), added or taken away by ``sign``."""
        key = self.keys(rows, pos)
        order = np.argsort(key)
        key = key[order]
        start = np.searchsorted(sf, key - self.s[rows][order], "left")  # T's group: score 0
        below = np.searchsorted(sf, key, "left")
        below -= start
        upto = np.searchsorted(sf, key, "right")
        upto -= start
        idx = order + rows.start
        self.lt[idx] += sign * below
        self.le[idx] += sign * upto


def dealer_counts(hands: np.ndarray, scores: np.ndarray, deck: int) -> tuple[np.ndarray, np.ndarray, int]:
    """``(lt, tie, n_dealer)``: for each hand of ``hands`` (every 5-subset of range(deck),
    each row sorted), how many of the ``n_dealer = C(deck-5, 5)`` dealer hands disjoint
    from it score lower, and how many score the same."""
    if len(hands) != comb(deck, 5) or hands.shape[1] != 5:
        raise ValueError(f"need all C({deck},5) = {comb(deck, 5)} hands, got {hands.shape}")
    s = scores.astype(np.int64)
    if s.min() < 0:
        raise ValueError("scores must be non-negative")
    q = _Questions(hands, s, deck)
    for k in range(1, 5):
        sign = -1 if k % 2 else 1
        subsets = list(combinations(range(5), k))
        sf = q.sorted_pairs(subsets)
        # each hand asks, for each of its own subsets T, where its key falls among the pairs of T:
        # pairs before it in T's group score lower (left), or not higher (right).  The questions
        # go in blocks, each sorted first: a binary search for sorted keys starts where the last
        # one ended (numpy's searchsorted), far kinder to the cache than keys in hand order
        for pos in subsets:
            for rows in q.blocks():
                q.count(sf, pos, rows, sign)
        del sf
    lt, le = q.lt, q.le
    le -= 1  # k = 5: T = P itself, whose score is not below s but equals it
    tie = le - lt
    n_dealer = comb(deck - 5, 5)
    if lt.min() < 0 or tie.min() < 0 or le.max() > n_dealer:
        raise AssertionError("inclusion-exclusion produced an impossible count")
    return lt, tie, n_dealer
