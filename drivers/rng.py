"""The computerized random number generator for the starting position
(§ 670a.5(i)(2): "select and display a number from 1 to 7"; 1..8 for the eight
positions of Pai Gow tiles, § 621a.6(c)), and its statistical self-test.

* Numbers come from the operating system's CSPRNG through :func:`secrets.randbelow`,
  which draws by rejection sampling: every value of ``1..n`` is exactly equally
  likely (no modulo bias, unlike ``randbits(3) % 7``).
* :func:`self_test` runs three tests at the 99% confidence level on each range the
  table uses (1..7 and 1..8): a chi-square goodness-of-fit test of the counts, a
  runs test (runs above/below the median, Wald-Wolfowitz), and a lag-1 serial
  correlation test.  It runs at start-up (before the RNG may be used) and on demand
  from the console, and returns the problems found (an empty list when it passes).

Reading of "99% confidence" (docs/protocols.md, "RNG"): each statistic is rejected
when its p-value is below 0.01.  A true random source fails one statistic 1% of the
time, and the self-test runs six; a table that refused to start 6% of the time would
be unusable, so a statistic that fails is re-run once on a fresh sample and reported
only if it fails again (a sound source then fails about 6 times in 10,000 start-ups,
while a biased source fails both runs).  The chi-square critical values are computed
here (regularised incomplete gamma function, no scipy) and checked against the
published tables by tests/drivers/test_rng.py.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable, Sequence
from functools import partial
from statistics import NormalDist
from typing import Protocol

import numpy as np

ALPHA = 0.01  # 99% confidence
Z_CRIT = NormalDist().inv_cdf(1 - ALPHA / 2)  # two-sided normal critical value, 2.5758...
DEFAULT_SAMPLES = 20_000
DEFAULT_SIDES = (7, 8)  # § 670a.5(i)(2) positions 1..7; § 621a.6(c) 1..8 (tiles)


class Rng(Protocol):
    def draw(self, n: int) -> int:
        """A uniform integer in 1..n."""


class SecretsRng:
    """The table's RNG: the OS CSPRNG (``secrets``), rejection-sampled, no modulo bias."""

    def __init__(self, randbelow: Callable[[int], int] = secrets.randbelow):
        self._randbelow = randbelow

    def draw(self, n: int) -> int:
        """A uniform integer in ``1..n`` (§ 670a.5(i)(2): 1 to 7)."""
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 255:
            raise ValueError(f"RNG range 1..{n!r} is not a whole number of positions 1..255")
        return 1 + self._randbelow(n)

    def self_test(
        self, rng: Rng | None = None, samples: int = DEFAULT_SAMPLES, sides: Sequence[int] = DEFAULT_SIDES
    ) -> list[str]:
        """Run :func:`self_test` on ``rng`` (default: this generator)."""
        return self_test(rng if rng is not None else self, samples=samples, sides=sides)


# --------------------------------------------------------------------------- statistics


def _gamma_q(a: float, x: float) -> float:
    """Regularised upper incomplete gamma function Q(a, x) (Numerical Recipes 6.2)."""
    if x < 0 or a <= 0:
        raise ValueError("Q(a, x) needs a > 0 and x >= 0")
    if x == 0:
        return 1.0
    gln = math.lgamma(a)
    if x < a + 1:  # series for P(a, x)
        term = total = 1.0 / a
        ap = a
        for _ in range(10_000):
            ap += 1
            term *= x / ap
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return max(0.0, 1.0 - total * math.exp(-x + a * math.log(x) - gln))
    # continued fraction for Q(a, x) (modified Lentz)
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return math.exp(-x + a * math.log(x) - gln) * h


def chi2_sf(x: float, df: int) -> float:
    """P(X >= x) for a chi-square variable with ``df`` degrees of freedom."""
    return _gamma_q(df / 2, x / 2)


def chi2_critical(df: int, alpha: float = ALPHA) -> float:
    """The value exceeded with probability ``alpha`` (by bisection on :func:`chi2_sf`)."""
    lo, hi = 0.0, float(df) + 50 * math.sqrt(2 * df) + 50
    for _ in range(200):
        mid = (lo + hi) / 2
        if chi2_sf(mid, df) > alpha:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def chi_square_uniform(xs: np.ndarray, n: int) -> tuple[float, float]:
    """Chi-square goodness of fit of values 1..n to the uniform distribution: (statistic, p)."""
    counts = np.bincount(xs - 1, minlength=n)[:n]
    expected = len(xs) / n
    stat = float(((counts - expected) ** 2).sum() / expected)
    return stat, chi2_sf(stat, n - 1)


def runs_test(xs: np.ndarray, n: int) -> tuple[float, float]:
    """Wald-Wolfowitz runs above/below the median (values equal to it are dropped): (z, p)."""
    median = (n + 1) / 2
    signs = np.sign(xs.astype(float) - median)
    signs = signs[signs != 0]
    n1 = int((signs > 0).sum())
    n2 = int((signs < 0).sum())
    m = n1 + n2
    if n1 == 0 or n2 == 0:
        return math.inf, 0.0
    runs = 1 + int((signs[1:] != signs[:-1]).sum())
    mu = 2 * n1 * n2 / m + 1
    var = 2 * n1 * n2 * (2 * n1 * n2 - m) / (m * m * (m - 1))
    z = (runs - mu) / math.sqrt(var)
    return z, 2 * (1 - NormalDist().cdf(abs(z)))


def serial_correlation(xs: np.ndarray) -> tuple[float, float]:
    """Lag-1 serial correlation r and its p-value (r is about N(-1/N, 1/N) for a random
    sequence)."""
    x = xs.astype(float)
    d = x - x.mean()
    den = float((d * d).sum())
    if den == 0:
        return 1.0, 0.0
    r = float((d[:-1] * d[1:]).sum()) / den
    N = len(x)
    z = (r + 1 / N) * math.sqrt(N)
    return r, 2 * (1 - NormalDist().cdf(abs(z)))


def _sample(rng: Rng, n: int, samples: int) -> np.ndarray:
    xs = np.fromiter((rng.draw(n) for _ in range(samples)), dtype=np.int64, count=samples)
    bad = xs[(xs < 1) | (xs > n)]
    if bad.size:
        raise ValueError(f"RNG drew {int(bad[0])}, outside 1..{n}")
    return xs


def self_test(
    rng: Rng | None = None, samples: int = DEFAULT_SAMPLES, sides: Sequence[int] = DEFAULT_SIDES, retry: bool = True
) -> list[str]:
    """Chi-square, runs and serial-correlation tests at 99% on each range in ``sides``.

    Returns the problems found, one line each (empty when the generator passes).
    A statistic that fails is re-run once on a fresh sample (see the module docstring).
    """
    if samples < 1000:
        raise ValueError(f"the self-test needs at least 1000 samples, got {samples}")
    rng = rng if rng is not None else SecretsRng()
    problems: list[str] = []
    for n in sides:
        try:
            first = _sample(rng, n, samples)
        except ValueError as e:
            problems.append(f"1..{n}: {e}")
            continue
        checks: tuple[tuple[str, Callable[[np.ndarray], tuple[float, float]], str], ...] = (
            ("chi-square", partial(chi_square_uniform, n=n), f"df={n - 1}"),
            ("runs", partial(runs_test, n=n), "z"),
            ("serial correlation", serial_correlation, "r"),
        )
        for name, fn, label in checks:
            stat, p = fn(first)
            if p >= ALPHA:
                continue
            if retry:
                stat2, p2 = fn(_sample(rng, n, samples))
                if p2 >= ALPHA:
                    continue
                stat, p = stat2, p2
            problems.append(
                f"1..{n}: {name} test failed at 99% ({label} statistic {stat:.4f}, p={p:.2e}, {samples} draws)"
            )
    return problems
