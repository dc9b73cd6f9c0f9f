"""Poker evaluator throughput (controller/rules/poker.py, § 670a.6 bug / § 687a.6 dj-wild).

Figures:

``evals_per_second``
    best five of random 7-card hands from 53 under the bug rules, through the
    batch API ``best_five_batch`` (category, score and natural flag for every hand).
``evals_per_second_5card``, ``evals_per_second_djwild_7card``, ``evals_per_second_djwild_5card``
    the same for 5-card bug hands and 7/5-card DJ Wild hands.
``single_hand_us`` / ``single_hand_us_5card``
    median cost of one ``best_five`` call (7 / 5 cards, bug, with ``best`` cards and
    the natural flag), i.e. what one round at the table pays per hand.
``table_build_s``
    one-time cost of building the 7-card bug lookup tables in a fresh process's first
    batch call (hand generation and table building are excluded from the rates).

How the speed is achieved: the batch path is numpy vectorisation over lookup
tables (controller/rules/poker_batch.py): per hand, two per-card gathers summed
over the hand give a perfect index into a table of suit-blind scores per rank
multiset and four 13-bit suit masks for a flush table, so there is no per-hand
Python and no 5-subset loop.  The single-hand path scores rank counts and suit
masks directly in Python (no tables to build).  No compiled code.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

from bench import Emit

NAME = "eval"
HELP = "poker evaluator throughput: batch best-five of 7/5-card hands (bug, dj-wild) and single-hand latency"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--hands", type=int, default=1_000_000, help="hands per batch figure (default 1,000,000)")
    p.add_argument("--single", type=int, default=5_000, help="hands for the single-hand figure (default 5,000)")
    p.add_argument("--repeat", type=int, default=3, help="best of this many timed batch runs (default 3)")
    p.add_argument("--seed", type=int, default=20240601)


def _random_hands(rng: np.random.Generator, n_hands: int, k: int, deck: int = 53) -> npt.NDArray[np.intp]:
    import numpy as np

    out = np.empty((n_hands, k), dtype=np.intp)
    step = 100_000
    for a in range(0, n_hands, step):
        b = min(n_hands, a + step)
        out[a:b] = np.argpartition(rng.random((b - a, deck)), k, axis=1)[:, :k]
    return out


def run(args: argparse.Namespace, emit: Emit) -> int:
    import numpy as np

    from controller.rules import poker_batch as B
    from controller.rules.poker import best_five

    rng = np.random.default_rng(args.seed)
    t = time.perf_counter()
    B.multiset_table("bug", 7)
    B.flush_table("bug")
    emit("table_build_s", f"{time.perf_counter() - t:.2f}")

    def rate(rules: str, k: int) -> float:
        hands = _random_hands(rng, args.hands, k)
        B.best_five_batch(hands[:16], rules)  # tables built outside the timing
        best = float("inf")
        for _ in range(max(1, args.repeat)):
            t0 = time.perf_counter()
            B.best_five_batch(hands, rules)
            best = min(best, time.perf_counter() - t0)
        hands_n: int = args.hands
        return hands_n / best

    emit("evals_per_second", f"{rate('bug', 7):.0f}")
    emit("evals_per_second_5card", f"{rate('bug', 5):.0f}")
    emit("evals_per_second_djwild_7card", f"{rate('dj-wild', 7):.0f}")
    emit("evals_per_second_djwild_5card", f"{rate('dj-wild', 5):.0f}")

    def single(k: int) -> float:
        hands = [tuple(h) for h in _random_hands(rng, args.single, k).tolist()]
        times = []
        for h in hands:
            t0 = time.perf_counter()
            best_five(h, "bug")
            times.append(time.perf_counter() - t0)
        return statistics.median(times) * 1e6

    emit("single_hand_us", f"{single(7):.1f}")
    emit("single_hand_us_5card", f"{single(5):.1f}")
    emit("hands", args.hands)
    return 0
