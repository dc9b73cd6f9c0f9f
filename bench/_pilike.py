"""``--pi-like``: measure on about a Raspberry Pi 4's share of a CPU.

A Pi 4's Cortex-A72 core runs this Python code about 3x slower than one core of
the build machine.  To see the start-up and the lock-out path at that speed, the
code under test is pinned to one core (``os.sched_setaffinity``, what ``taskset``
does) beside ``loaders`` busy processes pinned to the same core: the scheduler
gives each runnable process an equal share, so with two loaders the code gets
about a third of the core.  :func:`measure_slowdown` times a fixed pure-Python
workload alone and beside the loaders, on the same core, so the factor actually
reached is printed with every figure.  On a machine already busy with other work the
core is shared with it too and the factor overshoots (10x seen with a load average of
8 on two cores): read the figures beside ``pi_like_slowdown``, and compare runs made
at about the same factor.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

DEFAULT_LOADERS = 2  # two busy neighbours: a third of the core, ~3x slower

_BUSY = "while True:\n    pass\n"


def pick_core() -> int:
    """The highest-numbered core this process may run on."""
    return max(os.sched_getaffinity(0))


@contextmanager
def busy_neighbours(core: int, loaders: int = DEFAULT_LOADERS) -> Iterator[list[int]]:
    """``loaders`` busy-looping processes pinned to ``core`` for the block; their pids."""
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(loaders):
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-S", "-c", _BUSY],
                    preexec_fn=lambda: os.sched_setaffinity(0, {core}),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                )
            )
        time.sleep(0.05)  # let them reach the loop
        yield [p.pid for p in procs]
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def pin_to(core: int) -> None:
    """``preexec_fn`` / in-process: run on ``core`` only."""
    os.sched_setaffinity(0, {core})


_WORK = """import time
t = time.perf_counter()
x = 0
for i in range(3_000_000):
    x += i % 7
print(time.perf_counter() - t)
"""


def _timed_work(core: int) -> float:
    out = subprocess.run(
        [sys.executable, "-S", "-c", _WORK],
        preexec_fn=lambda: pin_to(core),
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout)


def measure_slowdown(core: int, loaders: int = DEFAULT_LOADERS) -> tuple[float, float]:
    """(seconds of the fixed workload alone on ``core``, the ratio beside ``loaders`` busy
    neighbours on it).  Best of three alone (the core's speed); median of three loaded."""
    alone = min(_timed_work(core) for _ in range(3))
    with busy_neighbours(core, loaders):
        loaded = sorted(_timed_work(core) for _ in range(3))[1]
    return alone, loaded / alone
