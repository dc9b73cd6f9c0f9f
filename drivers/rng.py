"""The computerized random number generator for the starting position
(§ 670a.5(i)(2): "select and display a number from 1 to 7"; 1..8 for the eight
positions of Pai Gow tiles, § 621a.6(c)), and its statistical self-test.

* Numbers come from the operating system's CSPRNG (``os.urandom``, the kernel's
  ``getrandom``) by the simple discard method (NIST SP 800-90A Rev. 1, Appendix
  A.5.1): a random byte ``b`` is kept only when ``b < 256 - 256 % n`` and then
  gives ``1 + b % n``, so every value of ``1..n`` is exactly equally likely (no
  modulo bias, unlike ``randbits(3) % 7``).  :meth:`SecretsRng.draw` and the
  bulk :meth:`SecretsRng.draw_many` are the same code (one draw is a bulk draw
  of one), so the self-test tests exactly the generator the table uses.
* :func:`self_test` runs three tests at the 99% confidence level on each range the
  table uses (1..7 and 1..8), 20,000 draws each:

  - a chi-square goodness-of-fit test of the counts (the frequency test, Knuth,
    TAOCP vol. 2, 3.3.1 A and 3.3.2 A) — catches a biased source (modulo bias);
  - a runs test, runs above/below the median (Wald and Wolfowitz, Ann. Math. Stat.
    11 (1940) 147-162; NIST/SEMATECH e-Handbook 1.3.5.13) — catches a source that
    alternates or clusters although its counts are flat;
  - a lag-1 serial correlation test (Knuth 3.3.2 K: r is about N(-1/N, 1/N) for a
    random sequence) — catches a source whose next value leans on the last.

  It runs at start-up (before the RNG may be used) and on demand from the console,
  and returns the problems found (an empty list when it passes).  The draws are
  taken in bulk (one ``os.urandom`` call per range, ``bytes.translate`` for the
  discard and the reduction) and counted with C-level ``bytes``/``map``
  operations: no numpy, and no 40,000 Python-level calls at start-up.  A source
  without ``draw_many`` (the tests' deliberately bad ones) is sampled one draw at
  a time.

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
import os
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from operator import mul
from typing import Protocol, runtime_checkable

ALPHA = 0.01  # 99% confidence
#: two-sided normal critical value at 99%, ``statistics.NormalDist().inv_cdf(0.995)`` (checked by the tests;
#: a constant so that start-up does not import ``statistics``)
Z_CRIT = 2.5758293035489004
DEFAULT_SAMPLES = 20_000
DEFAULT_SIDES = (7, 8)  # § 670a.5(i)(2) positions 1..7; § 621a.6(c) 1..8 (tiles)
MAX_SIDES = 255

#: a sample of draws: ``bytes`` from the bulk path, a list of ints from a draw-at-a-time source
Draws = bytes | Sequence[int]


class Rng(Protocol):
    def draw(self, n: int) -> int:
        """A uniform integer in 1..n."""


@runtime_checkable
class SelfTestingRng(Rng, Protocol):
    """An RNG with its own statistical self-test (``SecretsRng``, the HIL rig's ``ScriptedRng``):
    ``self_test(samples=n)`` -> problems."""

    def self_test(self, *, samples: int) -> Iterable[str]: ...


def _check_range(n: int) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_SIDES:
        raise ValueError(f"RNG range 1..{n!r} is not a whole number of positions 1..{MAX_SIDES}")


def _discard_tables(n: int) -> tuple[bytes, bytes]:
    """``bytes.translate`` arguments for 1..n: the bytes at or above ``256 - 256 % n`` are
    deleted (discarded), every other byte ``b`` becomes ``1 + b % n``."""
    limit = 256 - 256 % n
    return bytes(1 + b % n if b < limit else 0 for b in range(256)), bytes(range(limit, 256))


class SecretsRng:
    """The table's RNG: the OS CSPRNG, simple discard method, no modulo bias."""

    def __init__(self, randbytes: Callable[[int], bytes] = os.urandom):
        self._randbytes = randbytes
        self._tables: dict[int, tuple[bytes, bytes]] = {}

    def draw(self, n: int) -> int:
        """A uniform integer in ``1..n`` (§ 670a.5(i)(2): 1 to 7)."""
        return self.draw_many(n, 1)[0]

    def draw_many(self, n: int, count: int) -> bytes:
        """``count`` independent uniform integers in ``1..n``, one per byte."""
        _check_range(n)
        table = self._tables.get(n)
        if table is None:
            table = self._tables[n] = _discard_tables(n)
        keep = 256 - 256 % n
        out = b""
        while len(out) < count:
            need = count - len(out)
            # ask for enough that one call nearly always suffices (a discard is rare for 7 and 8)
            out += self._randbytes(need * 256 // keep + 8 + need // 64).translate(*table)
        return out[:count]

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
        return max(0.0, 1.0 - _p_series(a, x) * math.exp(-x + a * math.log(x) - gln))
    return math.exp(-x + a * math.log(x) - gln) * _q_fraction(a, x)


def _p_series(a: float, x: float) -> float:
    """The series of P(a, x), less its factor exp(-x) x^a / Gamma(a)."""
    term = total = 1.0 / a
    ap = a
    for _ in range(10_000):
        ap += 1
        term *= x / ap
        total += term
        if abs(term) < abs(total) * 1e-15:
            break
    return total


def _q_fraction(a: float, x: float) -> float:
    """The continued fraction of Q(a, x) (modified Lentz), less its factor exp(-x) x^a / Gamma(a)."""
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
    return h


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


def _normal_p(z: float) -> float:
    """Two-sided p-value of a standard normal statistic: 2 (1 - Phi(|z|))."""
    return math.erfc(abs(z) / math.sqrt(2))


def chi_square_uniform(xs: Draws, n: int) -> tuple[float, float]:
    """Chi-square goodness of fit of values 1..n to the uniform distribution: (statistic, p)."""
    counts = [xs.count(v) for v in range(1, n + 1)]
    expected = len(xs) / n
    stat = sum((c - expected) ** 2 for c in counts) / expected
    return stat, chi2_sf(stat, n - 1)


def runs_test(xs: Draws, n: int) -> tuple[float, float]:
    """Wald-Wolfowitz runs above/below the median (values equal to it are dropped): (z, p)."""
    median = (n + 1) / 2
    table = bytes(ord("+") if v > median else ord("-") for v in range(256))
    signs = bytes(xs).translate(table, bytes([int(median)]) if median == int(median) else b"")
    n1, n2 = signs.count(b"+"), signs.count(b"-")
    m = n1 + n2
    if n1 == 0 or n2 == 0:
        return math.inf, 0.0
    # "+-" cannot overlap itself, so count() finds every change of sign
    runs = 1 + signs.count(b"+-") + signs.count(b"-+")
    mu = 2 * n1 * n2 / m + 1
    var = 2 * n1 * n2 * (2 * n1 * n2 - m) / (m * m * (m - 1))
    z = (runs - mu) / math.sqrt(var)
    return z, _normal_p(z)


def serial_correlation(xs: Draws) -> tuple[float, float]:
    """Lag-1 serial correlation r and its p-value (r is about N(-1/N, 1/N) for a random
    sequence), from exact integer sums."""
    N = len(xs)
    s1 = sum(xs)
    s2 = sum(map(mul, xs, xs))
    lag = sum(map(mul, xs, xs[1:]))
    mean = s1 / N
    den = s2 - s1 * mean  # sum of (x - mean)^2
    if den <= 0:
        return 1.0, 0.0
    # sum over i < N-1 of (x_i - mean)(x_{i+1} - mean)
    num = lag - mean * (2 * s1 - xs[0] - xs[-1]) + (N - 1) * mean * mean
    r = num / den
    z = (r + 1 / N) * math.sqrt(N)
    return r, _normal_p(z)


def _sample(rng: Rng, n: int, samples: int) -> Draws:
    many = getattr(rng, "draw_many", None)
    xs: Draws = many(n, samples) if many is not None else [rng.draw(n) for _ in range(samples)]
    if len(xs) != samples:
        raise ValueError(f"RNG gave {len(xs)} draws, asked for {samples}")
    lo, hi = min(xs), max(xs)
    if lo < 1 or hi > n:
        raise ValueError(f"RNG drew {lo if lo < 1 else hi}, outside 1..{n}")
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
        checks: tuple[tuple[str, Callable[[Draws], tuple[float, float]], str], ...] = (
            ("chi-square", partial(chi_square_uniform, n=n), f"df={n - 1}"),
            ("runs", partial(runs_test, n=n), "z"),
            ("serial correlation", serial_correlation, "r"),
        )
        for name, fn, label in checks:
            failed = _failed(fn, first, partial(_sample, rng, n, samples) if retry else None)
            if failed is not None:
                stat, p = failed
                problems.append(
                    f"1..{n}: {name} test failed at 99% ({label} statistic {stat:.4f}, p={p:.2e}, {samples} draws)"
                )
    return problems


def _failed(
    fn: Callable[[Draws], tuple[float, float]], first: Draws, again: Callable[[], Draws] | None
) -> tuple[float, float] | None:
    """A statistic failing at 99% on ``first`` and, when ``again`` gives a fresh sample, on that
    one too: the (statistic, p) that failed last; None when it passes."""
    stat, p = fn(first)
    if p >= ALPHA:
        return None
    if again is None:
        return stat, p
    stat, p = fn(again())
    return None if p >= ALPHA else (stat, p)
