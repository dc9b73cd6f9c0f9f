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


def dealer_counts(hands: np.ndarray, scores: np.ndarray, deck: int) -> tuple[np.ndarray, np.ndarray, int]:
    """``(lt, tie, n_dealer)``: for each hand of ``hands`` (every 5-subset of range(deck),
    each row sorted), how many of the ``n_dealer = C(deck-5, 5)`` dealer hands disjoint
    from it score lower, and how many score the same."""
    n = len(hands)
    if n != comb(deck, 5) or hands.shape[1] != 5:
        raise ValueError(f"need all C({deck},5) = {comb(deck, 5)} hands, got {hands.shape}")
    s = scores.astype(np.int64)
    if s.min() < 0:
        raise ValueError("scores must be non-negative")
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
        key = np.empty((n, len(subsets)), dtype=np.int64)
        for j, pos in enumerate(subsets):
            key[:, j] = subset_index([hands[:, p] for p in pos], deck) * shift + s
        flat = key.ravel()
        del key
        order = np.argsort(flat, kind="stable")
        sf = flat[order]
        del flat
        group = np.searchsorted(sf, (sf // shift) * shift, "left")
        lt_k = np.empty_like(sf)
        lt_k[order] = np.searchsorted(sf, sf, "left") - group
        lt += sign * lt_k.reshape(n, len(subsets)).sum(axis=1)
        del lt_k
        le_k = np.empty_like(sf)
        le_k[order] = np.searchsorted(sf, sf, "right") - group
        le += sign * le_k.reshape(n, len(subsets)).sum(axis=1)
        del le_k, sf, group, order
    le -= 1  # k = 5: T = P itself, whose score is not below s but equals it
    tie = le - lt
    n_dealer = comb(deck - 5, 5)
    if lt.min() < 0 or tie.min() < 0 or le.max() > n_dealer:
        raise AssertionError("inclusion-exclusion produced an impossible count")
    return lt, tie, n_dealer
