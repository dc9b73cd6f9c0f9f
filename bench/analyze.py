"""Exact-analysis timings (Face Up Pai Gow Poker, 58 Pa. Code 688a).

Figures (caches cleared before each timed step):

``fortune_analysis_s``
    the full C(53,7) = 154,143,080-hand seven-card distribution (bug joker) by rank
    multisets and flush-suit patterns, plus the Fortune Bonus payback
    (controller/analysis/faceup.py).  Goal: <= 60 s.
``fortune_payback_<n>``
    Fortune Bonus Paytable n, % (ranking reading).
``fully_wild_distribution_s``
    the same distribution with a fully wild joker (Progressive Paytables 2, 5-7).
``progressive_payback_<n>``
    Progressive Paytable n, % (long-run: fixed + rate + reseed).
``ace_high_analysis_s``
    the joint dealer/player Ace High Pai Gow count over C(53,7) x C(46,7) deals.
``ace_high_payback_<n>``
    Ace High Bonus Paytable n, %.
``house_way_us`` / ``settle_round_us``
    median cost of setting a dealer hand by the default house way, and of settling a
    six-seat round with every optional wager.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from fractions import Fraction

from bench import Emit

NAME = "analyze"
HELP = "exact-analysis times: Face Up Fortune (C(53,7) hands), Ace High, Progressive; house way/settle latency"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--hands", type=int, default=500, help="random rounds for the latency figures (default 500)")
    p.add_argument("--seed", type=int, default=688)


def _pct(x: Fraction | None) -> str:
    return "none" if x is None else f"{float(x) * 100:.4f}"


def run(args: argparse.Namespace, emit: Emit) -> int:
    from controller.analysis import faceup as A

    A._distribution.cache_clear()
    t = time.perf_counter()
    res = A.analyze_fortune("Face Up Fortune 1", {})
    emit("fortune_analysis_s", f"{time.perf_counter() - t:.2f}")
    emit("fortune_hands", res.total)
    for n in range(1, 7):
        emit(f"fortune_payback_{n}", _pct(A.analyze_fortune(f"Face Up Fortune {n}", {}).payback))

    t = time.perf_counter()
    A.seven_card_distribution("fully-wild")
    emit("fully_wild_distribution_s", f"{time.perf_counter() - t:.2f}")
    for n in range(1, 8):
        emit(f"progressive_payback_{n}", _pct(A.analyze_progressive(f"Face Up Progressive {n}", {}).payback))

    for f in (A.ace_high_counts, A.ace_high_rank_sets, A.suit_pairs, A._assignments):
        f.cache_clear()
    t = time.perf_counter()
    A.analyze_ace_high("Ace High 1", {})
    emit("ace_high_analysis_s", f"{time.perf_counter() - t:.2f}")
    for n in range(1, 6):
        emit(f"ace_high_payback_{n}", _pct(A.analyze_ace_high(f"Ace High {n}", {}).payback))

    from controller.rules.faceup_houseway import house_way
    from controller.rules.faceup_settle import FaceUpOptions, SeatWagers, settle_round

    rng = random.Random(args.seed)
    deck = list(range(53))
    hw, st = [], []
    for _ in range(args.hands):
        rng.shuffle(deck)
        t = time.perf_counter()
        house_way(deck[:7])
        hw.append(time.perf_counter() - t)
        seats = {
            s: SeatWagers(tuple(deck[7 * s : 7 * s + 7]), 1000, ace_high=500, fortune=500, progressive=500)
            for s in range(1, 7)
        }
        t = time.perf_counter()
        settings = {s: house_way(w.cards) for s, w in seats.items()}
        settle_round(deck[:7], seats, settings, FaceUpOptions(progressive_paytable="Face Up Progressive 4"))
        st.append(time.perf_counter() - t)
    emit("house_way_us", f"{statistics.median(hw) * 1e6:.0f}")
    emit("settle_round_us", f"{statistics.median(st) * 1e6:.0f}")
    return 0
