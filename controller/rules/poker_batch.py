"""Vectorised best-five evaluation over numpy batches (throughput path of controller.rules.poker).

Pure: no I/O.  Implements exactly the rankings of poker.py (§ 670a.6 bug joker,
§ 687a.6 deuces and joker wild, plain poker) by splitting every hand into

* a **rank multiset** of its natural cards plus its number ``w`` of joker/wild
  cards: the best hand that ignores suits (pairs ... five of a kind, straights)
  depends on nothing else, and is looked up in a table built once per
  (rules, hand size) by poker.py's own scoring function over every multiset;
* one **13-bit rank mask per suit**: the best flush / straight flush / royal
  that suit can make with ``w`` wild cards is a second table (2^15 masks x w).

The hand's score is the larger of the two (the category levels are encoded in
the score's top bits, so ``max`` is the ranking).  Lookups are dense, with no
search: per card one gather gives a key whose sum over the hand holds the
base-5 multiset of the low seven natural ranks, that of the high ranks, and
w; two small tables turn each half into (size, rank among multisets of that
size), and an offset table makes that a perfect index into the score table.
A second gather puts each card's rank bit in its suit's 16-bit lane, so one
int64 sum holds all four suit masks (and its popcount proves the cards are
distinct).  Everything runs column by column over chunks of hands, so the cost
per hand is a few dozen vectorised operations, not Python bytecode.

The bug tables' joker-free blocks also answer "which category do the cards other
than the joker make at face value", which gives the ``natural`` flag (see poker.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import cache
from itertools import combinations
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from controller.rules import poker as P
from controller.rules.cards import JOKER

IntArray = npt.NDArray[np.integer[Any]]
BoolArray = npt.NDArray[np.bool_]
#: (category int8, score int64, natural bool) per hand
BatchResult = tuple[IntArray, IntArray, BoolArray]
ArrayLike = npt.ArrayLike

_CHUNK = 1 << 14
_MASK_SPACE = 1 << 15  # rank bits 2..14


def _natural_ranks(rules: str) -> tuple[int, ...]:
    # § 687a.6(b): deuces are wild, so DJ Wild's natural ranks are 3..A
    return tuple(range(3, 15)) if rules == "dj-wild" else tuple(range(2, 15))


def _max_wilds(rules: str) -> int:
    return {"bug": 1, "dj-wild": 5, "natural": 0}[rules]


def multisets(ranks: tuple[int, ...], size: int, cap: int = 4) -> Iterator[list[int]]:
    """Yield every rank-count list (index 0..14) with ``size`` cards, at most ``cap`` per rank."""
    counts = [0] * 15

    def rec(i: int, left: int) -> Iterator[list[int]]:
        if left == 0:
            yield counts
            return
        if i == len(ranks):
            return
        r = ranks[i]
        for k in range(min(cap, left), -1, -1):
            counts[r] = k
            yield from rec(i + 1, left - k)
        counts[r] = 0

    yield from rec(0, size)


def multiset_key(counts: Sequence[int]) -> int:
    return sum(c * 5 ** (r - 2) for r, c in enumerate(counts) if c)


#: per-card key layout: low-rank multiset (base 5) | high-rank multiset << 20 | wild << 40
_HI_SHIFT = 20
_W_SHIFT = 40
_FIELD = (1 << 20) - 1


def _split(rules: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    ranks = _natural_ranks(rules)
    return ranks[:7], ranks[7:]


@cache
def card_tables(rules: str) -> tuple[np.ndarray, np.ndarray]:
    """Per card 0..52: ``key`` and ``lane``.

    ``key``: 5**i in the low field for the i-th low rank, 5**j << 20 for the j-th high
    rank, 1 << 40 for a wild card; summed over a hand it is (low multiset, high
    multiset, w).  ``lane``: the card's rank bit in its suit's 16-bit lane; wild cards
    get a bit below the natural ranks (deuce: bit 2 of its suit, joker: bit 1 of lane
    0) that the flush lookup masks off, so that the popcount of the summed lanes equals
    the number of cards exactly when the cards are distinct (no carries)."""
    lo, hi = _split(rules)
    key = np.zeros(53, dtype=np.int64)
    lane = np.zeros(53, dtype=np.int64)
    for c in range(53):
        r, s = (c // 4 + 2, c % 4) if c != JOKER else (0, 0)
        if P._is_wild(c, rules):
            key[c] = 1 << _W_SHIFT
            lane[c] = (1 << 1) if c == JOKER else (1 << 2) << (16 * s)
        elif c == JOKER:  # natural rules: a joker is not a card
            key[c] = 7 << _W_SHIFT
            lane[c] = 1 << 1
        else:
            key[c] = 5 ** lo.index(r) if r in lo else 5 ** hi.index(r) << _HI_SHIFT
            lane[c] = (1 << r) << (16 * s)
    return key, lane


def _lane_mask(rules: str) -> int:
    return 0x7FF8 if rules == "dj-wild" else 0x7FFC


@cache
def flush_table(rules: str) -> np.ndarray:
    """``F[w * 2**15 + mask]`` = best flush-family score of one suit's natural rank ``mask``
    plus w wild cards (0 when no flush can be made)."""
    W = _max_wilds(rules)
    F = np.zeros((W + 1) * _MASK_SPACE, dtype=np.int64)
    ranks = _natural_ranks(rules)
    for w in range(W + 1):
        for k in range(max(5 - w, 0), len(ranks) + 1):
            for combo in combinations(ranks, k):
                m = 0
                for r in combo:
                    m |= 1 << r
                F[w * _MASK_SPACE + m] = P._flush_score(m, w, rules)
    return F


@cache
def _half_index(ranks: tuple[int, ...]) -> tuple[np.ndarray, list[int], list[list[int]]]:
    """For the multisets (at most 4 per rank, at most 7 cards) over ``ranks``: a table
    base-5 key -> rank_within_its_size * 8 + size (-1 if none), the count per size,
    and the keys in order per size."""
    table = np.full(5 ** len(ranks), -1, dtype=np.int64)
    per_size: list[list[int]] = []
    for size in range(8):
        keys: list[int] = []
        for counts in multisets(ranks, size):
            k = sum(counts[r] * 5**i for i, r in enumerate(ranks))
            table[k] = len(keys) * 8 + size
            keys.append(k)
        per_size.append(keys)
    return table, [len(k) for k in per_size], per_size


@cache
def multiset_table(rules: str, n: int) -> tuple[IntArray, IntArray, IntArray, IntArray, IntArray]:
    """Dense suit-blind score table for hands of ``n`` cards.

    Returns ``(LO, HI, OFF, NHI, VAL)``: the index of (natural multiset, w) is
    ``OFF[w*64 + a*8 + b] + lo_rank * NHI[b] + hi_rank`` where ``a``/``b`` are the
    sizes of its low/high halves.  Blocks exist for a + b + w = n (the hand's best
    suit-blind score) and, with w = 0, for a + b = n - w' (the natural cards alone,
    for the ``natural`` flag; below five cards the value is the category level only)."""
    lo, hi = _split(rules)
    LO, nlo, lo_keys = _half_index(lo)
    HI, nhi, hi_keys = _half_index(hi)
    W = _max_wilds(rules)
    OFF = np.zeros(64 * (W + 1), dtype=np.int64)
    vals: list[int] = []
    blocks = [(w, n - w) for w in range(min(W, n) + 1)] + [(0, n - w) for w in range(1, min(W, n) + 1)]
    for w, m in blocks:
        for a in range(0, min(m, 7) + 1):
            b = m - a
            if b > 7 or not nlo[a] or not nhi[b]:
                continue
            OFF[w * 64 + a * 8 + b] = len(vals)
            vals += _block_values(_Half(lo, lo_keys[a]), _Half(hi, hi_keys[b]), w, m, rules)
    return LO, HI, OFF, np.array(nhi + [0], dtype=np.int64), np.array(vals, dtype=np.int64)


class _Half(NamedTuple):
    """One half of the ranks (low or high), and the keys of its multisets of one size."""

    ranks: tuple[int, ...]
    keys: list[int]


def _block_values(lo: _Half, hi: _Half, w: int, m: int, rules: str) -> list[int]:
    """The suit-blind score of every (low half, high half) multiset pair with ``w`` wild cards
    (``m`` natural cards); below five cards, the category level only."""
    lv = P._LEVEL[rules]
    vals: list[int] = []
    for kl in lo.keys:
        cl = _counts(lo.ranks, kl)
        for kh in hi.keys:
            counts = cl.copy()
            for i, r in enumerate(hi.ranks):
                counts[r] = kh // 5**i % 5
            if m + w >= 5:
                vals.append(P._nonflush_score(counts, w, rules))
            else:
                vals.append(lv[P._partial_category(counts)] << P._SHIFT)
    return vals


def _counts(ranks: tuple[int, ...], key: int) -> list[int]:
    counts = [0] * 15
    for i, r in enumerate(ranks):
        counts[r] = key // 5**i % 5
    return counts


@cache
def _level_to_category(rules: str) -> np.ndarray:
    return np.array([int(c) for c in P._ORDER[rules]], dtype=np.int8)


def _flush_best(F: IntArray, packed: IntArray, wbase: IntArray | int, lmask: int) -> IntArray:
    best: IntArray = F[wbase + (packed & lmask)]
    for s in (1, 2, 3):
        np.maximum(best, F[wbase + ((packed >> (16 * s)) & lmask)], out=best)
    return best


def score_columns(
    cols: Sequence[IntArray | int], rules: str, want_natural: bool = True
) -> tuple[IntArray, BoolArray | None]:
    """Scores and natural flags of hands given as ``len(cols)`` card columns (1-D arrays of
    equal length, or ints broadcast to every hand).  One chunk; see :func:`scores_batch`."""
    key, lane = card_tables(rules)
    n = len(cols)
    LO, HI, OFF, NHI, VAL = multiset_table(rules, n)
    F = flush_table(rules)
    lmask = _lane_mask(rules)
    W = _max_wilds(rules)
    k = key[cols[0]]
    packed = lane[cols[0]]
    for col in cols[1:]:
        k = k + key[col]
        packed = packed + lane[col]
    w = k >> _W_SHIFT
    if not (np.all(np.bitwise_count(packed) == n) and np.all(w <= W)):
        raise ValueError("a hand in the batch repeats a card, or holds a joker these rules do not use")
    L = LO[k & _FIELD]
    H = HI[(k >> _HI_SHIFT) & _FIELD]
    ab = (L & 7) * 8 + (H & 7)
    within = (L >> 3) * NHI[H & 7] + (H >> 3)
    s = VAL[OFF[w * 64 + ab] + within]
    np.maximum(s, _flush_best(F, packed, w * _MASK_SPACE, lmask), out=s)
    if not want_natural:
        return s, None
    if not W:
        return s, np.ones(s.shape, dtype=bool)
    # natural flag: the category of the cards other than the joker at face value (deuces as
    # deuces) -- the bug tables' w = 0 blocks hold exactly that (below five cards: the level)
    if rules == "bug":
        kb, pb, Lb, Hb, ab_b, within_b = k, packed, L, H, ab, within
        OFFb, VALb, Fb = OFF, VAL, F
    else:
        keyb, laneb = card_tables("bug")
        LOb, HIb, OFFb, NHIb, VALb = multiset_table("bug", n)
        Fb = flush_table("bug")
        kb = keyb[cols[0]]
        pb = laneb[cols[0]]
        for col in cols[1:]:
            kb = kb + keyb[col]
            pb = pb + laneb[col]
        Lb = LOb[kb & _FIELD]
        Hb = HIb[(kb >> _HI_SHIFT) & _FIELD]
        ab_b = (Lb & 7) * 8 + (Hb & 7)
        within_b = (Lb >> 3) * NHIb[Hb & 7] + (Hb >> 3)
    s0 = VALb[OFFb[ab_b] + within_b]
    np.maximum(s0, _flush_best(Fb, pb, 0, _lane_mask("bug")), out=s0)
    cat0 = _level_to_category("bug")[s0 >> P._SHIFT]
    return s, cat0 == _level_to_category(rules)[s >> P._SHIFT]


def scores_batch(hands: IntArray, rules: str, want_natural: bool = True) -> tuple[IntArray, BoolArray | None]:
    """Scores (int64) and natural flags (bool array, or None) of an (N, n) card array.

    Raises ValueError if a row repeats a card or holds a joker under "natural" rules."""
    N, n = hands.shape
    score = np.empty(N, dtype=np.int64)
    natural = np.empty(N, dtype=bool) if want_natural else None
    for a0 in range(0, N, _CHUNK):
        h = hands[a0 : a0 + _CHUNK]
        s, nat = score_columns([h[:, j] for j in range(n)], rules, want_natural)
        score[a0 : a0 + len(h)] = s
        if natural is not None:
            natural[a0 : a0 + len(h)] = nat
    return score, natural


def best_five_batch(hands: ArrayLike, rules: str = "bug") -> BatchResult:
    """``(category int8, score int64, natural bool)`` arrays for an (N, k) array of hands,
    k = 5, 6 or 7 card numbers (0..52) per row, each row distinct cards."""
    P._check_rules(rules)
    h = np.asarray(hands)
    if h.ndim != 2 or h.shape[1] not in (5, 6, 7):
        raise ValueError(f"hands must be an (N, 5|6|7) array, got shape {h.shape}")
    if h.size and (h.min() < 0 or h.max() > 52):
        raise ValueError("card numbers must be 0..52")
    h = h.astype(np.intp, copy=False)
    score, natural = scores_batch(h, rules)
    assert natural is not None  # asked for (want_natural)
    cat = _level_to_category(rules)[score >> P._SHIFT]
    return cat, score, natural
