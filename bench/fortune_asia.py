"""Fortune Asia Poker (58 Pa. Code 659a) timings.

Figures:

``analysis_s``
    one exact enumeration of all C(53,7) = 154,143,080 seven-card hands by rank
    multiset and flush suit (controller/analysis/fortune_asia.py), feeding every
    Fortune Bonus, Insurance and Progressive paytable.
``analysis_classes``
    the number of (rank multiset, flush-suit ranks, Royal Match) classes classified.
``house_way_us_<name>``
    median cost of setting one random dealer hand with each registered house way.
``settle_round_us``
    median cost of settling a full table (6 seats with every optional wager + envy).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from bench import Emit

NAME = "fortune-asia"
HELP = "Fortune Asia Poker: exact seven-card analysis time, house-way and round-settlement latency"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--hands", type=int, default=2000, help="random hands for the latency figures (default 2,000)")
    p.add_argument("--seed", type=int, default=659)


def run(args: argparse.Namespace, emit: Emit) -> int:
    from controller.analysis import fortune_asia as A
    from controller.rules import fortune_asia as R

    A.distribution.cache_clear()
    t = time.perf_counter()
    A.distribution()
    emit("analysis_s", f"{time.perf_counter() - t:.2f}")
    emit("analysis_classes", sum(1 for _ in A.enumerate_facts()))

    rng = random.Random(args.seed)
    deck = list(range(53))
    deals = []
    for _ in range(args.hands):
        rng.shuffle(deck)
        deals.append(tuple(deck))
    for name, fn in sorted(R.HOUSE_WAYS.items()):
        times = []
        for d in deals:
            t = time.perf_counter()
            fn(d[:7])
            times.append(time.perf_counter() - t)
        emit(f"house_way_us_{name}", f"{statistics.median(times) * 1e6:.0f}")

    rules = R.FortuneAsiaRules(
        fortune_paytable="Fortune Asia Fortune A",
        insurance_paytable="Fortune Asia Insurance A",
        progressive_paytable="Fortune Asia Progressive",
    )
    times = []
    for d in deals[: max(1, args.hands // 10)]:
        seats = [
            R.SeatPlay(
                i + 1,
                d[7 * i : 7 * i + 7],
                1000,
                R.set_house_way(d[7 * i : 7 * i + 7]),
                fortune=500,
                insurance=500,
                progressive=100,
            )
            for i in range(6)
        ]
        t = time.perf_counter()
        R.settle_round(seats, d[42:49], rules)
        times.append(time.perf_counter() - t)
    emit("settle_round_us", f"{statistics.median(times) * 1e6:.0f}")
    return 0
