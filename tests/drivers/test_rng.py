"""The starting-position RNG (drivers/rng.py; § 670a.5(i)(2), § 621a.6(c)): uniform
1..n from the OS CSPRNG without modulo bias, and a self-test (chi-square, runs,
serial correlation at 99%) that passes a sound source and fails biased ones."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from drivers import rng as R


class Seeded:
    """A sound (if not cryptographic) source, seeded so the test is deterministic."""

    def __init__(self, seed: int):
        self.r = random.Random(seed)

    def draw(self, n: int) -> int:
        return self.r.randrange(n) + 1


class ModuloBiased:
    """The classic mistake § 670a.5(i)(2) forbids in spirit: 3 random bits mod 7."""

    def __init__(self, seed: int):
        self.r = random.Random(seed)

    def draw(self, n: int) -> int:
        bits = max(1, (n - 1).bit_length())
        return self.r.getrandbits(bits) % n + 1


class Alternating:
    """Uniform counts but strongly anti-correlated: low, high, low, high ..."""

    def __init__(self, seed: int):
        self.r = random.Random(seed)
        self.flip = itertools.cycle((0, 1))

    def draw(self, n: int) -> int:
        half = n // 2
        return self.r.randrange(half) + 1 if next(self.flip) == 0 else n - self.r.randrange(half)


class Sticky:
    """Repeats its last value half of the time: uniform counts, positive serial correlation."""

    def __init__(self, seed: int):
        self.r = random.Random(seed)
        self.last: dict[int, int] = {}

    def draw(self, n: int) -> int:
        if n in self.last and self.r.random() < 0.5:
            return self.last[n]
        self.last[n] = self.r.randrange(n) + 1
        return self.last[n]


class Cycle:
    """1, 2, ..., n, 1, 2, ... : perfectly flat counts, not random at all."""

    def __init__(self):
        self.i: dict[int, int] = {}

    def draw(self, n: int) -> int:
        self.i[n] = self.i.get(n, -1) + 1
        return self.i[n] % n + 1


@pytest.mark.parametrize("df, published", [(6, 16.812), (7, 18.475), (1, 6.635), (48, 73.683), (63, 92.010)])
def test_chi_square_critical_values_match_published_tables(df, published):
    # upper 1% points of the chi-square distribution (e.g. NIST/SEMATECH handbook table 1.3.6.7.4)
    assert R.chi2_critical(df) == pytest.approx(published, abs=0.001)


def test_z_critical_is_the_two_sided_99_percent_point():
    assert R.Z_CRIT == pytest.approx(2.5758, abs=1e-4)


@pytest.mark.parametrize("n", [7, 8])
def test_draw_covers_exactly_1_to_n(n):
    rng = R.SecretsRng()
    seen = {rng.draw(n) for _ in range(2000)}
    assert seen == set(range(1, n + 1))


def test_draw_uses_randbelow_so_every_value_is_equally_likely():
    # rejection sampling lives in secrets.randbelow; draw adds 1 and nothing else
    calls = []
    rng = R.SecretsRng(randbelow=lambda n: calls.append(n) or n - 1)
    assert rng.draw(7) == 7 and calls == [7]
    rng = R.SecretsRng(randbelow=lambda n: 0)
    assert rng.draw(8) == 1


@pytest.mark.parametrize("bad", [0, -1, 256, 7.0, "7", True])
def test_draw_refuses_a_bad_range(bad):
    with pytest.raises(ValueError):
        R.SecretsRng().draw(bad)


def test_self_test_passes_the_os_csprng():
    # a sound source fails here about 6 times in 10,000 runs (one retry per statistic)
    assert R.SecretsRng().self_test() == []
    assert R.self_test() == []


def test_self_test_passes_a_seeded_sound_source():
    assert R.self_test(Seeded(2024)) == []


@pytest.mark.parametrize(
    "source, failing",
    [
        (ModuloBiased(1), "chi-square"),
        (Alternating(1), "runs"),
        (Sticky(1), "serial correlation"),
        (Cycle(), "serial correlation"),
    ],
)
def test_self_test_fails_bad_sources(source, failing):
    problems = R.self_test(source)
    assert problems, "a bad source passed the self-test"
    assert any(failing in p for p in problems), problems


def test_cycle_has_flat_counts_so_the_frequency_test_alone_would_pass_it():
    c = Cycle()
    xs = np.array([c.draw(7) for _ in range(7000)])
    stat, p = R.chi_square_uniform(xs, 7)
    assert stat == 0 and p == 1.0
    assert R.serial_correlation(xs)[1] < R.ALPHA


def test_self_test_reports_out_of_range_values():
    class Broken:
        def draw(self, n):
            return n + 1

    assert any("outside" in p for p in R.self_test(Broken()))


def test_self_test_needs_enough_samples():
    with pytest.raises(ValueError):
        R.self_test(samples=10)
