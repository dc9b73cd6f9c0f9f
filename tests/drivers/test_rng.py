"""The starting-position RNG (drivers/rng.py; § 670a.5(i)(2), § 621a.6(c)): uniform
1..n from the OS CSPRNG without modulo bias, and a self-test (chi-square, runs,
serial correlation at 99%) that passes a sound source and fails biased ones."""

from __future__ import annotations

import itertools
import os
import random
from functools import partial

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
    from statistics import NormalDist

    assert R.Z_CRIT == pytest.approx(2.5758, abs=1e-4)
    assert R.Z_CRIT == pytest.approx(NormalDist().inv_cdf(1 - R.ALPHA / 2), rel=1e-12)


@pytest.mark.parametrize("n", [7, 8])
def test_draw_covers_exactly_1_to_n(n):
    rng = R.SecretsRng()
    seen = {rng.draw(n) for _ in range(2000)}
    assert seen == set(range(1, n + 1))


def test_draw_discards_the_bytes_that_would_bias_the_modulo():
    # NIST SP 800-90A Rev. 1, A.5.1 (simple discard): for 1..7 the bytes 252..255 are thrown
    # away (keeping them would make 1..4 more likely than 5..7), the others give 1 + b % 7
    feed = iter([bytes([252, 253, 254, 255, 3]) + bytes(64)])
    rng = R.SecretsRng(randbytes=lambda k: next(feed))
    assert rng.draw(7) == 4
    rng = R.SecretsRng(randbytes=lambda k: bytes([255] * k))  # 1..8 keeps every byte: 255 % 8 = 7
    assert rng.draw(8) == 8


def test_draw_many_asks_again_when_too_much_was_discarded():
    calls = []

    def randbytes(k):
        calls.append(k)
        return bytes([254] * (k - 1) + [13]) if len(calls) == 1 else bytes([6] * k)

    xs = R.SecretsRng(randbytes=randbytes).draw_many(7, 100)
    assert len(xs) == 100 and xs[0] == 13 % 7 + 1 and set(xs[1:]) == {7} and len(calls) == 2


def test_draw_and_draw_many_are_uniform_over_every_byte():
    # every byte value 0..255 once: the discard method keeps 252 of them for 1..7, 36 of each value
    rng = R.SecretsRng(randbytes=lambda k: bytes(range(256)))
    xs = rng.draw_many(7, 252)
    assert [xs.count(v) for v in range(1, 8)] == [36] * 7


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
    xs = [c.draw(7) for _ in range(7000)]
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


class BiasedBytes:
    """A bulk source like the table's own (``draw_many``) whose bytes lean to zero 5% of the
    time: the discard method then yields 1 too often — what a failing entropy source or a
    broken driver would look like at start-up."""

    def __init__(self, seed: int):
        self.r = random.Random(seed)

    def randbytes(self, k: int) -> bytes:
        return bytes(0 if self.r.random() < 0.05 else self.r.getrandbits(8) for _ in range(k))


def test_self_test_samples_in_bulk_and_passes_the_bulk_csprng():
    calls: list[int] = []

    def randbytes(k: int) -> bytes:
        calls.append(k)
        return os.urandom(k)

    rng = R.SecretsRng(randbytes=randbytes)
    assert R.self_test(rng) == []
    assert len(calls) <= 4 * 2  # a call or two per range per sample, not 20,000


def test_self_test_fails_a_biased_bulk_source():
    problems = R.self_test(R.SecretsRng(randbytes=BiasedBytes(3).randbytes))
    assert any("chi-square" in p for p in problems), problems


def test_statistics_agree_on_bytes_and_lists():
    r = random.Random(5)
    xs = [r.randrange(8) + 1 for _ in range(5000)]
    for fn in (partial(R.chi_square_uniform, n=8), partial(R.runs_test, n=8), R.serial_correlation):
        assert fn(bytes(xs)) == pytest.approx(fn(xs))


def test_runs_and_serial_statistics_match_their_textbook_forms():
    # the byte-string forms against the direct definitions, on a fixed sequence
    r = random.Random(9)
    xs = [r.randrange(7) + 1 for _ in range(3000)]
    signs = [1 if x > 4 else -1 for x in xs if x != 4]
    runs = 1 + sum(a != b for a, b in zip(signs, signs[1:]))
    n1, n2 = signs.count(1), signs.count(-1)
    mu = 2 * n1 * n2 / (n1 + n2) + 1
    var = 2 * n1 * n2 * (2 * n1 * n2 - n1 - n2) / ((n1 + n2) ** 2 * (n1 + n2 - 1))
    assert R.runs_test(xs, 7)[0] == pytest.approx((runs - mu) / var**0.5)
    m = sum(xs) / len(xs)
    d = [x - m for x in xs]
    r_direct = sum(a * b for a, b in zip(d, d[1:])) / sum(a * a for a in d)
    assert R.serial_correlation(xs)[0] == pytest.approx(r_direct)
